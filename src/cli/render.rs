//! `bpc render`: the Terraform and Flux inputs of a context, written to a directory
//! (replaced as a whole) or compared with it (`--check`).

use super::compose::{compose_full, ComposeArgs, Format, ProjectArgs};
use super::report;
use crate::render::{self, ManifestFormat};
use crate::source::{Diagnostic, SourceMap};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
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

impl RenderArgs {
    fn compose_args(&self) -> ComposeArgs {
        ComposeArgs {
            project: self.project.clone(),
            format: Format::Yaml,
            out: None,
            terraform_outputs: self.terraform_outputs.clone(),
            provenance: false,
        }
    }
}

/// Composes and renders as `bpc render` does when run in `cwd`.
pub fn render_in(
    cwd: &std::path::Path,
    args: &RenderArgs,
    env_context: Option<String>,
    sources: &Arc<SourceMap>,
) -> Result<render::Rendered, Vec<Diagnostic>> {
    let (template, composition) = compose_full(cwd, &args.compose_args(), env_context, sources)?;
    let format = match args.format {
        Format::Yaml => ManifestFormat::Yaml,
        Format::Json => ManifestFormat::Json,
    };
    let mut rendered = render::render(&composition, &template, format)?;
    let mut warnings = composition.warnings.clone();
    warnings.append(&mut rendered.warnings);
    rendered.warnings = warnings;
    Ok(rendered)
}

pub fn run(args: RenderArgs) -> ExitCode {
    let sources = Arc::new(SourceMap::new());
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return ExitCode::from(1);
        }
    };
    let rendered = match render_in(&cwd, &args, std::env::var("WINDSOR_CONTEXT").ok(), &sources) {
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
