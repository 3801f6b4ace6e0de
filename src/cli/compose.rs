//! `bpc compose`: the blueprint of one context.

use super::args::{env_context, ContextsArgs, Format, ProjectArgs, WatchArgs};
use super::contexts;
use super::output::emit;
use super::terminal::report;
use crate::all_contexts::{Counts, Done, Selection};
use crate::compose::{face::Composition, model::for_explain::ForExplain};
use crate::emit::Pieces;
use crate::files::out_path::write_parts_atomically;
use crate::files::{Diagnostic, FileMap};
use crate::session::{OneShot, Options, Session};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc compose                                  # the project around here, context `local`
  bpc compose --context prod --format json --out blueprint.json
  bpc compose --set provider=aws --provenance")]
pub struct ComposeArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
    /// Write the blueprint to FILE (atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Terraform outputs (YAML/JSON: component → output → value) to resolve
    /// `terraform_output()` with; without it those expressions stay as written.
    #[arg(long, value_name = "FILE")]
    pub terraform_outputs: Option<PathBuf>,
    /// Annotate every value with where it came from (a trailing comment in YAML; with
    /// --format json, a provenance document next to the blueprint).
    #[arg(long)]
    pub provenance: bool,
    #[command(flatten)]
    pub contexts: ContextsArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

pub fn run(args: ComposeArgs) -> ExitCode {
    if let Some(selection) = args.contexts.selection(&args.project) {
        return run_contexts(&args, &selection);
    }
    // One composition, then exit: facet texts are read again only for a message that
    // shows them; `--provenance` names a line for every value, so it keeps them.
    let sources = Arc::new(if args.provenance {
        FileMap::new()
    } else {
        FileMap::letting_go_of_texts()
    });
    match compose_text(&args, &sources) {
        Ok((text, warnings)) => {
            report(&warnings, &sources);
            if let Some(error) = args.project.strict_failure(&warnings, 0) {
                eprintln!("error: {}", error.message);
                return ExitCode::from(1);
            }
            match emit(args.out.as_deref(), &text.as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    report(&[Diagnostic::error(e)], &sources);
                    ExitCode::from(1)
                }
            }
        }
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            ExitCode::from(1)
        }
    }
}

/// Several contexts: each composed in parallel to `DIR/<context>.yaml` (or `.json`).
fn run_contexts(args: &ComposeArgs, selection: &Selection) -> ExitCode {
    let extension = match args.format {
        Format::Yaml => "yaml",
        Format::Json => "json",
    };
    contexts::run_each(
        &args.project,
        args.terraform_outputs.clone(),
        args.out.as_deref(),
        selection,
        |session, name, dir| {
            compose_context_to(
                session,
                args,
                name,
                &dir.join(format!("{name}.{extension}")),
            )
        },
    )
}

/// One context of a multi-context run, written atomically to `path` (or not at all).
fn compose_context_to(session: &Session, args: &ComposeArgs, name: &str, path: &Path) -> Done {
    let composition = match session.compose_context(name) {
        Ok(composition) => composition,
        Err(errors) => return Done::failed(errors),
    };
    let mut done = Done {
        warnings: composition.warnings.clone(),
        notes: composition.messages.clone(),
        ..Done::default()
    };
    if let Some(error) = args.project.strict_failure(&done.warnings, 0) {
        done.errors.push(error);
        return done;
    }
    let written =
        blueprint_text(session, &composition, args.format, args.provenance).and_then(|text| {
            write_parts_atomically(path, &text.as_bytes()).map_err(|e| {
                vec![Diagnostic::error(format!(
                    "cannot write {}: {e}",
                    path.display()
                ))]
            })
        });
    match written {
        Ok(()) => done.counts = Some(Counts::of(&composition)),
        Err(errors) => done.errors = errors,
    }
    done
}

fn compose_text(
    args: &ComposeArgs,
    files: &Arc<FileMap>,
) -> Result<(Pieces, Vec<Diagnostic>), Vec<Diagnostic>> {
    let options = Options {
        // Written and forgotten: nothing will explain it.
        for_explain: ForExplain::Dropped,
        ..args
            .project
            .session_options(env_context(), args.terraform_outputs.clone())?
    };
    if args.provenance {
        // `--provenance` reads the template as a whole, the component lists and the
        // origins.
        let session = Session::open(options, files.clone())?;
        let composition = session.compose()?;
        let text = blueprint_text(&session, &composition, args.format, args.provenance)?;
        let done = (
            text,
            composition.messages.clone(),
            composition.warnings.clone(),
        );
        // The process exits next: freeing a large template's trees node by node would
        // only delay that (about a tenth of the run at 10 000 facets).
        std::mem::forget((session, composition));
        return Ok(noted(done));
    }
    let once = OneShot::open(options, files.clone())?;
    let alone = once.compose_blueprint()?;
    let text = crate::emit::blueprint_alone_text(&alone, once.output_bytes(), args.format.text())?;
    let done = (text, alone.messages().to_vec(), alone.warnings().to_vec());
    std::mem::forget((once, alone));
    Ok(noted(done))
}

/// The text and warnings of a composition, its facets' messages shown.
fn noted(
    (text, messages, warnings): (Pieces, Vec<String>, Vec<Diagnostic>),
) -> (Pieces, Vec<Diagnostic>) {
    for m in &messages {
        eprintln!("note: {m}");
    }
    (text, warnings)
}

/// The composed blueprint as text: YAML or JSON, with or without provenance.
pub fn blueprint_text(
    session: &Session,
    composition: &Composition,
    format: Format,
    provenance: bool,
) -> Result<Pieces, Vec<Diagnostic>> {
    crate::emit::blueprint_text(
        &session.template,
        composition,
        &session.files,
        session.options.limits.output_bytes,
        format.text(),
        provenance,
    )
}
