//! `--watch` for `compose`, `render` and `test`: each command as a watch [`Job`], and
//! the loop's events printed. Options (the current directory, `$WINDSOR_CONTEXT`) are
//! read once at the start; everything else is read anew every round.

use super::args::env_context;
use super::compose::{blueprint_text, ComposeArgs};
use super::output::emit;
use super::render::RenderArgs;
use super::terminal::{color_stderr, report};
use super::test::TestArgs;
use crate::emit::Pieces;
use crate::files::{Diagnostic, FileMap};
use crate::session::{self, Session};
use crate::watch::changes::{summary, Shape};
use crate::watch::{Event, Inputs, Job, Outcome, Round, Settings};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// A command run under `--watch`.
#[derive(Debug)]
pub enum Watched {
    Compose(ComposeArgs),
    Render(RenderArgs),
    Test(TestArgs),
}

/// The errors (or warnings) of a round as text, as the command would print them.
fn text_of(diagnostics: &[Diagnostic], sources: &FileMap, color: bool) -> String {
    diagnostics
        .iter()
        .map(|d| format!("{}\n", crate::files::render(d, sources, color)))
        .collect()
}

/// The summary of a written round, and the shape kept for the next one.
fn settle(last: &mut Option<Shape>, shape: Shape, target: &str) -> String {
    let line = match last.as_ref() {
        None => format!("wrote {target}: {}", shape.counts()),
        Some(old) => format!("wrote {target}: {}", summary(old, &shape)),
    };
    *last = Some(shape);
    line
}

/// The watch job of a `compose`, `render` or `test` command, its options read now from
/// the process (current directory, `$WINDSOR_CONTEXT`); `color` paints the
/// diagnostics of its reports.
pub fn job(command: Watched, color: bool) -> Result<Box<dyn Job + Send>, Vec<Diagnostic>> {
    match command {
        Watched::Compose(args) => {
            if args.contexts.selection(&args.project).is_some() {
                return Err(vec![Diagnostic::error("--watch composes one context")]);
            }
            let options = args
                .project
                .session_options(env_context(), args.terraform_outputs.clone())?;
            Ok(Box::new(ComposeJob::new(args, options, color)))
        }
        Watched::Render(args) => {
            if args.contexts.selection(&args.project).is_some() {
                return Err(vec![Diagnostic::error("--watch renders one context")]);
            }
            if args.check {
                return Err(vec![Diagnostic::error(
                    "--watch writes the render; it does not combine with --check",
                )]);
            }
            let options = args
                .project
                .session_options(env_context(), args.terraform_outputs.clone())?;
            Ok(Box::new(RenderJob::new(args, options, color)))
        }
        Watched::Test(args) => {
            if args.update || args.explain.is_some() || args.show {
                return Err(vec![Diagnostic::error(
                    "--watch runs the cases; it does not combine with --update, --explain or --show",
                )]);
            }
            // Cases compose in isolation (S11): WINDSOR_CONTEXT plays no part.
            let options = args.project.session_options(None, None)?;
            Ok(Box::new(TestJob {
                args,
                options,
                color,
            }))
        }
    }
}

/// `bpc compose --watch`.
struct ComposeJob {
    args: ComposeArgs,
    options: session::Options,
    /// Parses only changed facet files and collects only facets whose inputs changed.
    engine: session::Recomposer,
    color: bool,
    last: Option<Shape>,
    written: Option<Pieces>,
}

impl ComposeJob {
    fn new(args: ComposeArgs, options: session::Options, color: bool) -> ComposeJob {
        let mut engine = session::Recomposer::new(options.clone());
        // The watcher names every change: a round reads only the facet files changed.
        engine.tell_changes(true);
        ComposeJob {
            args,
            engine,
            options,
            color,
            last: None,
            written: None,
        }
    }

    fn outputs(&self) -> Vec<PathBuf> {
        self.args
            .out
            .iter()
            .filter(|p| p.as_os_str() != "-")
            .cloned()
            .collect()
    }
}

impl Job for ComposeJob {
    fn changes(&mut self, paths: &[PathBuf], unknown: bool) {
        if unknown {
            self.engine.unknown_changes();
        }
        self.engine.changed(paths.iter().map(PathBuf::as_path));
    }

    fn round(&mut self) -> Round {
        let session = self.engine.open();
        let sources = self.engine.sources().clone();
        let inputs = Inputs::of(&self.options, session.as_ref().ok(), &self.outputs());
        let composed = session.and_then(|session| {
            let composition = self.engine.compose(&session)?;
            let text = blueprint_text(
                &session,
                &composition,
                self.args.format,
                self.args.provenance,
            )?;
            Ok((text, composition))
        });
        let outcome = match composed {
            Err(errors) => Outcome::Failed {
                report: text_of(&errors, &sources, self.color),
            },
            Ok((text, composition)) => {
                let mut report = text_of(&composition.warnings, &sources, self.color);
                for note in &composition.messages {
                    report.push_str(&format!("note: {note}\n"));
                }
                let target = match self.outputs().first() {
                    Some(path) => path.display().to_string(),
                    None => "stdout".to_string(),
                };
                if let Some(error) = self.args.project.strict_failure(&composition.warnings, 0) {
                    report.push_str(&text_of(&[error], &sources, self.color));
                    Outcome::Failed { report }
                } else if self.written.as_ref() == Some(&text) {
                    // The same text again: not rewritten, so the file keeps its time.
                    Outcome::Done {
                        summary: format!("{target}: no change"),
                        report,
                    }
                } else {
                    match emit(self.args.out.as_deref(), &text.as_bytes()) {
                        Ok(()) => {
                            self.written = Some(text);
                            let shape = Shape::of(&composition.blueprint);
                            Outcome::Done {
                                summary: settle(&mut self.last, shape, &target),
                                report,
                            }
                        }
                        Err(e) => {
                            report.push_str(&text_of(
                                &[Diagnostic::error(e)],
                                &sources,
                                self.color,
                            ));
                            Outcome::Failed { report }
                        }
                    }
                }
            }
        };
        Round { outcome, inputs }
    }
}

/// `bpc render --watch`.
struct RenderJob {
    args: RenderArgs,
    options: session::Options,
    color: bool,
    last: Option<Shape>,
}

impl RenderJob {
    fn new(args: RenderArgs, options: session::Options, color: bool) -> RenderJob {
        RenderJob {
            args,
            options,
            color,
            last: None,
        }
    }
}

impl Job for RenderJob {
    fn round(&mut self) -> Round {
        let sources = Arc::new(FileMap::new());
        let session = Session::open(self.options.clone(), sources.clone());
        let inputs = Inputs::of(
            &self.options,
            session.as_ref().ok(),
            std::slice::from_ref(&self.args.out),
        );
        let rendered = session.and_then(|session| {
            let composition = session.compose()?;
            let shape = Shape::of(&composition.blueprint);
            let rendered = session.render_composition_to(
                composition,
                self.args.manifest_format(),
                &self.args.out,
            )?;
            Ok((shape, rendered))
        });
        let outcome = match rendered {
            Err(errors) => Outcome::Failed {
                report: text_of(&errors, &sources, self.color),
            },
            Ok((shape, rendered)) => {
                let mut report = text_of(&rendered.warnings, &sources, self.color);
                for deferred in &rendered.deferred {
                    report.push_str(&format!("note: deferred: {deferred}\n"));
                }
                for note in &rendered.notes {
                    report.push_str(&format!("note: {note}\n"));
                }
                let target = self.args.out.display().to_string();
                let strict = self
                    .args
                    .project
                    .strict_failure(&rendered.warnings, rendered.deferred.len());
                let written = match strict {
                    Some(error) => Err(error),
                    None => {
                        crate::render::write::write_tree(&self.args.out, &rendered, self.args.force)
                            .map_err(Diagnostic::error)
                    }
                };
                match written {
                    Ok(()) => Outcome::Done {
                        summary: settle(&mut self.last, shape, &target),
                        report,
                    },
                    Err(error) => {
                        report.push_str(&text_of(&[error], &sources, self.color));
                        Outcome::Failed { report }
                    }
                }
            }
        };
        Round { outcome, inputs }
    }
}

/// `bpc test --watch`: the suite again on every change; its report is printed by the
/// run itself.
struct TestJob {
    args: TestArgs,
    options: session::Options,
    color: bool,
}

impl Job for TestJob {
    fn round(&mut self) -> Round {
        let sources = Arc::new(FileMap::new());
        let session = Session::open(self.options.clone(), sources.clone());
        let inputs = Inputs::of(&self.options, session.as_ref().ok(), &[]);
        let tally =
            session.and_then(|session| super::test::run_tests(&self.args, &session, &sources));
        let outcome = match tally {
            Ok(tally) => Outcome::Done {
                summary: format!("{} passed, {} failed", tally.passed, tally.failed),
                report: String::new(),
            },
            Err(errors) => Outcome::Failed {
                report: text_of(&errors, &sources, self.color),
            },
        };
        Round { outcome, inputs }
    }
}

/// A changed path as the user would write it: relative to the working directory when
/// it lies inside (the watcher reports absolute paths).
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let bases = cwd
        .iter()
        .flat_map(|c| [c.clone(), c.canonicalize().unwrap_or_default()]);
    let inside = bases
        .filter(|base| !base.as_os_str().is_empty())
        .find_map(|base| path.strip_prefix(base).ok().map(Path::to_path_buf));
    inside.as_deref().unwrap_or(path).display().to_string()
}

/// Prints one event of the loop to stderr.
pub fn print(event: Event) {
    match event {
        Event::Round {
            number,
            changed,
            outcome,
        } => {
            let cause = match changed.as_slice() {
                [] if number == 1 => String::new(),
                [] => "change: ".to_string(),
                [one] => format!("{} changed: ", shown(one)),
                [first, rest @ ..] => {
                    format!("{} and {} more changed: ", shown(first), rest.len())
                }
            };
            match outcome {
                Outcome::Done { summary, report } => {
                    eprint!("{report}");
                    eprintln!("watch: {cause}{summary}");
                }
                Outcome::Failed { report } => {
                    eprint!("{report}");
                    eprintln!("watch: {cause}failed; the previous output is kept");
                }
            }
        }
        Event::Trouble(message) => eprintln!("watch: {message}"),
    }
}

/// `bpc compose|render|test --watch`: runs the command's job until the process is
/// interrupted.
pub fn run(command: Watched) -> ExitCode {
    let mut job = match job(command, color_stderr()) {
        Ok(job) => job,
        Err(errors) => {
            report(&errors, &FileMap::new());
            return ExitCode::from(2);
        }
    };
    let signals = crate::watch::signals();
    eprintln!("watch: watching for changes (Ctrl-C to stop)");
    match crate::watch::watch(job.as_mut(), Settings::default(), signals, print) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
