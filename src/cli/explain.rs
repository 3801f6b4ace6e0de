//! `bpc explain PATH` / `bpc explain --facet NAME`: how composition arrived at a value.

use super::compose::{ComposeArgs, Format, ProjectArgs};
use super::report;
use crate::explain::Explainer;
use crate::source::{Diagnostic, SourceMap};
use clap::Args;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
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
    let sources = Arc::new(SourceMap::new());
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            report(
                &[Diagnostic::error(format!(
                    "cannot read the current directory: {e}"
                ))],
                &sources,
            );
            return ExitCode::from(1);
        }
    };
    let compose_args = ComposeArgs {
        project: args.project.clone(),
        format: Format::Yaml,
        out: None,
        terraform_outputs: args.terraform_outputs.clone(),
        provenance: false,
    };
    let env_context = std::env::var("WINDSOR_CONTEXT").ok();
    let (template, composition) =
        match super::compose::compose_full(&cwd, &compose_args, env_context, &sources) {
            Ok(r) => r,
            Err(d) => {
                report(&d, &sources);
                return ExitCode::from(1);
            }
        };
    let explainer = Explainer {
        template: &template,
        composition: &composition,
        sources: &sources,
    };
    let result = match (&args.facet, &args.path) {
        (Some(f), _) => explainer.facet(f),
        (None, Some(p)) => explainer.explain(p),
        (None, None) => Err("give a PATH or --facet NAME".to_string()),
    };
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            report(&[Diagnostic::error(message)], &sources);
            ExitCode::from(1)
        }
    }
}
