//! The command-line side of several contexts at once, shared by `compose` and
//! `render`: opening the session they share, running each context, and the report at
//! the end.

use super::args::ProjectArgs;
use super::terminal::report;
use crate::all_contexts::{ContextRun, Done, Selection};
use crate::compose::model::for_explain::ForExplain;
use crate::files::{Diagnostic, FileMap};
use crate::session::{Options, Session};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `job` (session, context, output directory) for every context `selection`
/// names, in parallel over one session, then reports as [`finish`] does.
pub fn run_each(
    project: &ProjectArgs,
    terraform_outputs: Option<PathBuf>,
    out: Option<&Path>,
    selection: &Selection,
    job: impl Fn(&Session, &str, &Path) -> Done + Sync,
) -> ExitCode {
    // One run over the contexts, then exit: facet texts are read again only for a
    // message (or, under `--provenance`, once each for the lines it names).
    let sources = Arc::new(FileMap::letting_go_of_texts());
    let prepared = output_dir(out).map_err(|d| vec![d]).and_then(|dir| {
        let session = open_session(project, terraform_outputs, &sources)?;
        let names =
            crate::all_contexts::select(&session, selection, Some(&dir)).map_err(|d| vec![d])?;
        Ok((dir, session, names))
    });
    let (dir, session, names) = match prepared {
        Ok(prepared) => prepared,
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            return ExitCode::from(1);
        }
    };
    let runs = crate::all_contexts::run(&names, crate::parallel::cores(), |name| {
        job(&session, name, &dir)
    });
    finish(&runs, &sources)
}

/// The session every context of the run composes from: the project and template
/// loaded once. The contexts are chosen later, so discovery runs without them.
fn open_session(
    project: &ProjectArgs,
    terraform_outputs: Option<PathBuf>,
    files: &Arc<FileMap>,
) -> Result<Session, Vec<Diagnostic>> {
    let shared = ProjectArgs {
        context: Vec::new(),
        ..project.clone()
    };
    let options = Options {
        // Each composition is written and forgotten: nothing will explain it.
        for_explain: ForExplain::Dropped,
        ..shared.session_options(None, terraform_outputs)?
    };
    Session::open(options, files.clone())
}

/// `--out DIR` for a run over several contexts: required, never stdout; created if
/// missing.
fn output_dir(out: Option<&Path>) -> Result<PathBuf, Diagnostic> {
    let dir = match out {
        Some(dir) if dir.as_os_str() != "-" => dir,
        _ => {
            return Err(Diagnostic::error(
                "several contexts are written one output per context: give --out DIR",
            ))
        }
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Diagnostic::error(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir.to_path_buf())
}

/// Prints each context's diagnostics and notes under its name (stderr), then the
/// summary table (stdout); exit code 1 when any context failed.
pub fn finish(runs: &[ContextRun], files: &FileMap) -> ExitCode {
    for run in runs {
        let done = &run.done;
        print!("{}", done.output);
        if done.warnings.is_empty() && done.errors.is_empty() && done.notes.is_empty() {
            continue;
        }
        eprintln!("== context `{}` ==", run.context);
        report(&done.warnings, files);
        for note in &done.notes {
            eprintln!("note: {note}");
        }
        report(&done.errors, files);
    }
    print!("{}", crate::all_contexts::table(runs));
    if crate::all_contexts::failures(runs) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
