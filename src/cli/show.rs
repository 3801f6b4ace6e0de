//! `bpc show values`: the effective values of a context, as Windsor's `show values`
//! prints them — schema defaults under the value layers, plus the typed fields
//! Windsor materialises — with each schema `description` as a comment above its key
//! and `sensitive: true` values masked (the text is the library's:
//! [`crate::session::Session::values_text`]).

use super::args::{env_context, Format, ProjectArgs};
use super::terminal::report;
use crate::files::FileMap;
use crate::session::Session;
use clap::{Args, Subcommand};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc show values --context prod
  bpc show values --format json > values.json")]
pub struct ShowArgs {
    #[command(subcommand)]
    pub what: ShowCommand,
}

#[derive(Subcommand, Debug)]
pub enum ShowCommand {
    /// The effective values of the context (schema defaults merged with the value
    /// layers), with schema descriptions as comments and sensitive values masked.
    Values(ValuesArgs),
}

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc show values                              # the context `local` of the project here
  bpc show values --context prod --format json
  bpc show values --set cluster.workers.count=3")]
pub struct ValuesArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format (YAML carries the descriptions as comments).
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
}

pub fn run(args: ShowArgs) -> ExitCode {
    match args.what {
        ShowCommand::Values(args) => run_values(args),
    }
}

fn run_values(args: ValuesArgs) -> ExitCode {
    let sources = Arc::new(FileMap::new());
    let options = args.project.session_options(env_context(), None);
    let text = options
        .and_then(|mut options| {
            // Only this template's schema matters here, not its upstream sources.
            options.upstream = false;
            Session::open(options, sources.clone())
        })
        .and_then(|session| {
            let text = session.values_text(args.format.text())?;
            let mut warnings = session.project.warnings.clone();
            warnings.extend(session.value_warnings()?);
            Ok((text, warnings))
        });
    match text {
        Ok((text, warnings)) => {
            report(&warnings, &sources);
            if let Some(error) = args.project.strict_failure(&warnings, 0) {
                eprintln!("error: {}", error.message);
                return ExitCode::from(1);
            }
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(d) => {
            report(&d, &sources);
            ExitCode::from(1)
        }
    }
}
