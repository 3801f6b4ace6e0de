//! `bpc render`: the Terraform and Flux inputs of a context, written to a directory
//! (replaced as a whole) or compared with it (`--check`); with several contexts, one
//! directory per context under `--out`.

use super::args::{env_context, ContextsArgs, Format, ProjectArgs, WatchArgs};
use super::contexts;
use super::terminal::report;
use crate::all_contexts::{Counts, Done, Selection};
use crate::compose::model::for_explain::ForExplain;
use crate::files::{Diagnostic, FileMap};
use crate::render::{self, ManifestFormat, Rendered};
use crate::session::{OneShot, Options, Session};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:
  bpc render --context prod --out .bpc/render
  bpc render --context prod --out gitops/render --check   # in CI: is the render current?
  bpc render --terraform-outputs outputs.yaml             # resolve deferred inputs")]
pub struct RenderArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output directory, replaced as a whole on each render (with several contexts,
    /// `DIR/<context>/` each).
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
    #[command(flatten)]
    pub contexts: ContextsArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

impl RenderArgs {
    pub fn manifest_format(&self) -> ManifestFormat {
        match self.format {
            Format::Yaml => ManifestFormat::Yaml,
            Format::Json => ManifestFormat::Json,
        }
    }
}

pub fn run(args: RenderArgs) -> ExitCode {
    if let Some(selection) = args.contexts.selection(&args.project) {
        return run_contexts(&args, &selection);
    }
    // One render, then exit: facet texts are read again only for a message.
    let sources = Arc::new(FileMap::letting_go_of_texts());
    let session = args
        .project
        .session_options(env_context(), args.terraform_outputs.clone())
        .and_then(|options| {
            let options = Options {
                for_explain: ForExplain::Dropped,
                ..options
            };
            OneShot::open(options, sources.clone())
        });
    let rendered =
        session.and_then(|s| s.render_to(s.compose()?, args.manifest_format(), &args.out));
    let rendered = match rendered {
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
    for note in &rendered.notes {
        eprintln!("note: {note}");
    }
    if let Some(error) = args
        .project
        .strict_failure(&rendered.warnings, rendered.deferred.len())
    {
        eprintln!("error: {}", error.message);
        return ExitCode::from(1);
    }
    match deliver(&args, &rendered, &args.out) {
        Ok(Delivered::Written) => {
            eprintln!(
                "rendered {} file(s) to {}{}",
                rendered.files.len(),
                args.out.display(),
                deferred_note(rendered.deferred.len())
            );
            ExitCode::SUCCESS
        }
        Ok(Delivered::UpToDate) => {
            if !rendered.deferred.is_empty() {
                eprintln!(
                    "{} is up to date{}",
                    args.out.display(),
                    deferred_note(rendered.deferred.len())
                );
            }
            ExitCode::SUCCESS
        }
        Err(Undelivered::Differs(diff)) => {
            print!("{diff}");
            eprintln!("error: {} is not up to date", args.out.display());
            ExitCode::from(1)
        }
        Err(Undelivered::Failed(error)) => {
            report(&[error], &sources);
            ExitCode::from(1)
        }
    }
}

/// `, N value(s) deferred …` for a summary line: what the tree still leaves out until
/// Terraform has run (docs/render.md, Applying the tree); empty when nothing is.
fn deferred_note(count: usize) -> String {
    if count == 0 {
        return String::new();
    }
    format!(
        "; {count} value(s) deferred until terraform outputs exist (listed in deferred.json; \
         render again with --terraform-outputs)"
    )
}

/// What became of a render.
enum Delivered {
    Written,
    /// `--check` found `dir` as it would be written.
    UpToDate,
}

enum Undelivered {
    /// `--check` found a difference: the unified diff.
    Differs(String),
    Failed(Diagnostic),
}

/// Writes `rendered` to `dir`, or compares it with `dir` under `--check`.
fn deliver(args: &RenderArgs, rendered: &Rendered, dir: &Path) -> Result<Delivered, Undelivered> {
    if args.check {
        return match render::write::check(dir, rendered) {
            Ok(diff) if diff.is_empty() => Ok(Delivered::UpToDate),
            Ok(diff) => Err(Undelivered::Differs(diff)),
            Err(e) => Err(Undelivered::Failed(Diagnostic::error(e))),
        };
    }
    render::write::write_tree(dir, rendered, args.force)
        .map(|()| Delivered::Written)
        .map_err(|e| Undelivered::Failed(Diagnostic::error(e)))
}

/// Several contexts: each rendered in parallel to (or checked against) `DIR/<context>/`.
fn run_contexts(args: &RenderArgs, selection: &Selection) -> ExitCode {
    contexts::run_each(
        &args.project,
        args.terraform_outputs.clone(),
        Some(&args.out),
        selection,
        |session, name, dir| render_context_to(session, args, name, &dir.join(name)),
    )
}

/// One context of a multi-context run, delivered to `dir` as a single run would be.
fn render_context_to(session: &Session, args: &RenderArgs, name: &str, dir: &Path) -> Done {
    let composed = session.compose_context(name).and_then(|composition| {
        let counts = Counts::of(&composition);
        Ok((
            counts,
            session.render_composition_to(composition, args.manifest_format(), dir)?,
        ))
    });
    let (counts, rendered) = match composed {
        Ok(composed) => composed,
        Err(errors) => return Done::failed(errors),
    };
    let mut done = Done {
        warnings: rendered.warnings.clone(),
        notes: rendered
            .deferred
            .iter()
            .map(|d| format!("deferred: {d}"))
            .chain(rendered.notes.iter().cloned())
            .collect(),
        ..Done::default()
    };
    let strict = args
        .project
        .strict_failure(&rendered.warnings, rendered.deferred.len());
    if let Some(error) = strict {
        done.errors.push(error);
        return done;
    }
    match deliver(args, &rendered, dir) {
        Ok(_) => done.counts = Some(counts),
        Err(Undelivered::Differs(diff)) => {
            done.output = diff;
            done.errors.push(Diagnostic::error(format!(
                "{} is not up to date",
                dir.display()
            )));
        }
        Err(Undelivered::Failed(error)) => done.errors.push(error),
    }
    done
}
