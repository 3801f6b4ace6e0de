//! `bpc explain PATH` / `bpc explain --facet NAME`: how composition arrived at a value.

use super::args::{env_context, ProjectArgs};
use super::terminal::report;
use crate::explain::Explainer;
use crate::files::{Diagnostic, FileMap};
use crate::session::Session;
use clap::Args;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc explain terraform.cluster.inputs.endpoints
  bpc explain nodes.total                      # a value of the scope (a config block)
  bpc explain --facet aws")]
pub struct ExplainArgs {
    /// A path of the blueprint (`terraform.cluster.inputs.cluster_name`,
    /// `kustomize.ingress.components`) or of the scope (`talos.version`,
    /// `cluster.workers.count`).
    #[arg(required_unless_present = "facet")]
    pub path: Option<String>,
    /// Explain a facet instead: is it active, why, and what did it contribute.
    #[arg(long, value_name = "NAME", conflicts_with = "path")]
    pub facet: Option<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Terraform outputs file, as for `bpc compose`.
    #[arg(long, value_name = "FILE")]
    pub terraform_outputs: Option<std::path::PathBuf>,
}

pub fn run(args: ExplainArgs) -> ExitCode {
    let sources = Arc::new(FileMap::new());
    match explain(&args, &sources) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            ExitCode::from(1)
        }
    }
}

fn explain(args: &ExplainArgs, sources: &Arc<FileMap>) -> Result<String, Vec<Diagnostic>> {
    let options = args
        .project
        .session_options(env_context(), args.terraform_outputs.clone())?;
    let session = Session::open(options, sources.clone())?;
    let composition = session.compose()?;
    let explainer = Explainer {
        template: &session.template,
        composition: &composition,
        files: sources,
    };
    match (&args.facet, &args.path) {
        (Some(f), _) => explainer.facet(f),
        (None, Some(p)) => explainer.explain(p),
        (None, None) => Err("give a PATH or --facet NAME".to_string()),
    }
    .map_err(|message| vec![Diagnostic::error(message)])
}
