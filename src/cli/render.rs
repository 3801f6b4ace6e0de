//! `bpc render`: the Terraform and Flux inputs of a context, written to a directory
//! (replaced as a whole) or compared with it (`--check`).

use super::compose::{env_context, Format, ProjectArgs};
use super::report;
use crate::render::{self, ManifestFormat};
use crate::session::Session;
use crate::source::{Diagnostic, SourceMap};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc render --context prod --out .bpc/render
  bpc render --context prod --out gitops/render --check   # in CI: is the render current?
  bpc render --terraform-outputs outputs.yaml             # resolve deferred inputs")]
pub struct RenderArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output directory, replaced as a whole on each render.
    #[arg(long, short = 'o', value_name = "DIR", default_value = ".bpc/render")]
    pub out: PathBuf,
    /// Compare the render with DIR, print a unified diff and exit 1 if they differ;
    /// writes nothing.
    #[arg(long)]
    pub check: bool,
    /// Replace DIR even when bpc did not write it (its files are deleted).
    #[arg(long)]
    pub force: bool,
    /// Format of the Flux manifests (Terraform files are always JSON).
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
    /// Terraform outputs (YAML/JSON: component → output → value) that resolve
    /// `terraform_output()` now; without it such inputs are listed as deferred.
    #[arg(long, value_name = "FILE")]
    pub terraform_outputs: Option<PathBuf>,
}

pub fn run(args: RenderArgs) -> ExitCode {
    let sources = Arc::new(SourceMap::new());
    let session = args
        .project
        .session_options(env_context(), args.terraform_outputs.clone())
        .and_then(|options| Session::open(options, sources.clone()));
    let format = match args.format {
        Format::Yaml => ManifestFormat::Yaml,
        Format::Json => ManifestFormat::Json,
    };
    let rendered = match session.and_then(|s| s.render(format)) {
        Ok(r) => r,
        Err(d) => {
            report(&d, &sources);
            return ExitCode::from(1);
        }
    };
    report(&rendered.warnings, &sources);
    for d in &rendered.deferred {
        eprintln!("note: deferred: {d}");
    }
    if args.project.strict && (!rendered.warnings.is_empty() || !rendered.deferred.is_empty()) {
        eprintln!(
            "error: {} warning(s) and {} deferred value(s) with --strict; nothing written",
            rendered.warnings.len(),
            rendered.deferred.len()
        );
        return ExitCode::from(1);
    }
    if args.check {
        return match render::write::check(&args.out, &rendered) {
            Ok(diff) if diff.is_empty() => ExitCode::SUCCESS,
            Ok(diff) => {
                print!("{diff}");
                eprintln!("error: {} is not up to date", args.out.display());
                ExitCode::from(1)
            }
            Err(e) => {
                report(&[Diagnostic::error(e)], &sources);
                ExitCode::from(1)
            }
        };
    }
    match render::write::write_tree(&args.out, &rendered, args.force) {
        Ok(()) => {
            eprintln!(
                "rendered {} file(s) to {}",
                rendered.files.len(),
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            report(&[Diagnostic::error(e)], &sources);
            ExitCode::from(1)
        }
    }
}
