//! `bpc verify`: builds, substitutes and validates what a context's render applies, as
//! Flux would, offline (see docs/verify.md). Exit 0 when no error is found, 1 otherwise.

use super::args::{env_context, ContextsArgs, ProjectArgs};
use super::terminal::{color_stdout, report};
use crate::compose::model::for_explain::ForExplain;
use crate::files::{Diagnostic, FileMap};
use crate::render::ManifestFormat;
use crate::session::{Options, Session};
use crate::verify::report::{ContextReport, Report};
use crate::verify::schema::Crds;
use crate::verify::{Input, Run, Tool};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum VerifyFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc verify --context prod
  bpc verify --all-contexts --format json > verify.json
  bpc verify --policy policies/                # Rego rules on every object built

Needs `kubectl` (for `kubectl kustomize`) or `kustomize` on PATH.")]
pub struct VerifyArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub contexts: ContextsArgs,
    /// Findings as diagnostics with a summary table, or one JSON document (for CI).
    #[arg(long, value_enum, default_value_t = VerifyFormat::Text)]
    pub format: VerifyFormat,
    /// Rego policies (a file or directory, as `bpc check --policy`) run on every object
    /// each context applies, the built ones included; may be given several times.
    #[arg(long, value_name = "PATH")]
    pub policy: Vec<std::path::PathBuf>,
    /// The policy package whose rules are findings (default `main`).
    #[arg(long, value_name = "PACKAGE", requires = "policy")]
    pub namespace: Vec<String>,
    /// CRD manifests (a file, or a directory of YAML and JSON files) for kinds no
    /// kustomization of a context defines, such as Flux's own in
    /// `flux-system/gotk-components.yaml`; may be given several times.
    #[arg(long, value_name = "PATH")]
    pub crds: Vec<std::path::PathBuf>,
}

/// What the user gives besides the project: the policies (`--policy`) and the CRDs
/// (`--crds`), loaded before anything is composed.
fn given(
    args: &VerifyArgs,
    sources: &FileMap,
) -> Result<(Option<crate::policy::Policies>, Crds), Vec<Diagnostic>> {
    let namespaces = super::policy::namespaces_or_main(&args.namespace);
    let policies = match args.policy.is_empty() {
        true => None,
        false => Some(crate::policy::load(&args.policy, &namespaces, sources)?),
    };
    let crds = match args.crds.is_empty() {
        true => Crds::default(),
        false => crate::verify::given_crds::load(&args.crds, sources)?,
    };
    Ok((policies, crds))
}

pub fn run(args: VerifyArgs) -> ExitCode {
    let sources = Arc::new(FileMap::letting_go_of_texts());
    let tool = match Tool::find() {
        Ok(tool) => tool,
        Err(e) => {
            report(&[Diagnostic::error(e).with_help(
                "install kubectl (it embeds kustomize) or kustomize; verify builds each Flux Kustomization with it",
            )], &sources);
            return ExitCode::from(1);
        }
    };
    let opened = open(&args, &sources);
    let (session, names) = match opened {
        Ok(opened) => opened,
        Err(d) => {
            report(&d, &sources);
            return ExitCode::from(1);
        }
    };
    let (policies, crds) = match given(&args, &sources) {
        Ok(given) => given,
        Err(d) => {
            report(&d, &sources);
            return ExitCode::from(1);
        }
    };
    let composed = compose_all(&session, &names);
    let mut failed: Vec<ContextReport> = Vec::new();
    let mut inputs = Vec::new();
    for (name, result) in names.iter().zip(&composed) {
        match result {
            Ok((composition, rendered)) => inputs.push(Input {
                name: name.clone(),
                composition,
                template: &session.template,
                rendered,
            }),
            Err(errors) => failed.push(ContextReport {
                name: name.clone(),
                failed: errors.clone(),
                ..ContextReport::default()
            }),
        }
    }
    let on_terminal = std::io::stderr().is_terminal();
    let progress = move |done: usize, total: usize| {
        if on_terminal {
            let mut err = std::io::stderr();
            let _ = write!(err, "\rverify: kustomize build {done}/{total}");
            if done == total {
                let _ = write!(err, "\r\x1b[K");
            }
            let _ = err.flush();
        }
    };
    let run = Run {
        root: &session.project.root,
        tool: &tool,
        files: &sources,
        threads: crate::parallel::cores(),
        progress: &progress,
        policies: policies.as_ref().map(|loaded| crate::verify::Policies {
            loaded,
            budget: crate::policy::Budget::default(),
            schema: session.schema.as_ref(),
        }),
        crds: &crds,
    };
    let mut result = match crate::verify::verify(&run, &inputs) {
        Ok(r) => r,
        Err(e) => {
            report(&[Diagnostic::error(e)], &sources);
            return ExitCode::from(1);
        }
    };
    merge_failed(&mut result, failed, &names);
    let strict = args.project.strict;
    match args.format {
        VerifyFormat::Text => print!("{}", result.text(&sources, color_stdout(), strict)),
        VerifyFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&result.json(&sources, strict)).unwrap_or_default()
        ),
    }
    if result.errors(strict) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

type Composed =
    Result<(crate::compose::face::Composition, crate::render::Rendered), Vec<Diagnostic>>;

/// Each context composed and rendered on its own thread; the compositions are kept
/// for the findings' provenance.
fn compose_all(session: &Session, names: &[String]) -> Vec<Composed> {
    let origin = crate::render::git_origin::origin(&session.project.root);
    crate::parallel::map(names, crate::parallel::cores(), |name| {
        let composition = session.compose_context(name)?;
        let rendered = crate::render::render_with_origin(
            &composition,
            &session.template,
            ManifestFormat::Json,
            origin.as_deref(),
        )?;
        Ok((composition, rendered))
    })
}

/// The contexts that did not compose, in the run's order among the others.
fn merge_failed(result: &mut Report, failed: Vec<ContextReport>, names: &[String]) {
    result.contexts.extend(failed);
    result
        .contexts
        .sort_by_key(|c| names.iter().position(|n| *n == c.name));
}

/// The session and the contexts the run covers.
fn open(
    args: &VerifyArgs,
    sources: &Arc<FileMap>,
) -> Result<(Session, Vec<String>), Vec<Diagnostic>> {
    match args.contexts.selection(&args.project) {
        Some(selection) => {
            let shared = ProjectArgs {
                context: Vec::new(),
                ..args.project.clone()
            };
            let options = Options {
                for_explain: ForExplain::Dropped,
                ..shared.session_options(None, None)?
            };
            let session = Session::open(options, sources.clone())?;
            let names =
                crate::all_contexts::select(&session, &selection, None).map_err(|d| vec![d])?;
            Ok((session, names))
        }
        None => {
            let options = Options {
                for_explain: ForExplain::Dropped,
                ..args.project.session_options(env_context(), None)?
            };
            let session = Session::open(options, sources.clone())?;
            let name = session.project.context.clone();
            Ok((session, vec![name]))
        }
    }
}
