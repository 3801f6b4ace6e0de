//! Every context at once (`--all-contexts`, `--context a --context b`): which contexts
//! a run covers, one job per context over one loaded template on all cores, and the
//! summary table. A context's failure is its own: the others still run.

use crate::compose::face::Composition;
use crate::files::Diagnostic;
use crate::session::Session;
use std::path::Path;
use std::time::{Duration, Instant};

/// The contexts a run asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Every context the project defines.
    All,
    /// These, in this order (repeats dropped).
    Named(Vec<String>),
}

/// The context names `selection` stands for in the session's project. With
/// [`Selection::All`], a `contexts/<name>/` directory that is the run's output
/// directory `out` (or lies inside it) is output, not a context.
pub fn select(
    session: &Session,
    selection: &Selection,
    out: Option<&Path>,
) -> Result<Vec<String>, Diagnostic> {
    let names = match selection {
        Selection::All => {
            let out = out.and_then(|o| o.canonicalize().ok());
            let contexts = session.project.root.join("contexts");
            session
                .contexts()
                .into_iter()
                .filter(|name| {
                    let Some(out) = &out else { return true };
                    contexts
                        .join(name)
                        .canonicalize()
                        .map_or(true, |dir| !dir.starts_with(out) && !out.starts_with(&dir))
                })
                .collect()
        }
        Selection::Named(names) => {
            let mut unique: Vec<String> = Vec::new();
            for name in names {
                crate::project::check_context_name(name)?;
                if !unique.contains(name) {
                    unique.push(name.clone());
                }
            }
            unique
        }
    };
    if names.is_empty() {
        return Err(Diagnostic::error(format!(
            "the project at {} defines no context",
            session.project.root.display()
        ))
        .with_help("a context is a directory contexts/<name>/ or an entry `contexts.<name>` in windsor.yaml"));
    }
    Ok(names)
}

/// What a successful context produced, for the summary table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Terraform components.
    pub components: usize,
    /// Flux Kustomizations (plain ones and each Flux system's tiers).
    pub kustomizations: usize,
}

impl Counts {
    pub fn of(composition: &Composition) -> Counts {
        Counts {
            components: composition.terraform.components.len(),
            kustomizations: composition.kustomizations.components.len(),
        }
    }
}

/// A context's job done: its counts, or the errors that stopped it; warnings and
/// facet `messages:` either way.
#[derive(Debug, Default)]
pub struct Done {
    pub counts: Option<Counts>,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub notes: Vec<String>,
    /// What the job has to show on stdout (a `render --check` diff).
    pub output: String,
}

impl Done {
    /// A failure: `errors` (the first fatal diagnostics), nothing written.
    pub fn failed(errors: Vec<Diagnostic>) -> Done {
        Done {
            errors,
            ..Done::default()
        }
    }

    pub fn ok(&self) -> bool {
        self.errors.is_empty() && self.counts.is_some()
    }
}

/// One context's run.
#[derive(Debug)]
pub struct ContextRun {
    pub context: String,
    pub elapsed: Duration,
    pub done: Done,
}

/// Runs `job` for every context in `contexts` on up to `threads` threads; results in
/// the order of `contexts`.
pub fn run(
    contexts: &[String],
    threads: usize,
    job: impl Fn(&str) -> Done + Sync,
) -> Vec<ContextRun> {
    crate::parallel::map(contexts, threads, |context| {
        let start = Instant::now();
        let done = job(context);
        ContextRun {
            context: context.clone(),
            elapsed: start.elapsed(),
            done,
        }
    })
}

/// The summary: one row a context (components, kustomizations, time, status), then a
/// count line.
pub fn table(runs: &[ContextRun]) -> String {
    let header = ["context", "components", "kustomizations", "time", "status"];
    let rows: Vec<[String; 5]> = runs
        .iter()
        .map(|run| {
            let (components, kustomizations) = match run.done.counts {
                Some(c) if run.done.ok() => {
                    (c.components.to_string(), c.kustomizations.to_string())
                }
                _ => ("-".to_string(), "-".to_string()),
            };
            let status = if run.done.ok() {
                "ok".to_string()
            } else {
                format!("failed ({} error(s))", run.done.errors.len())
            };
            [
                run.context.clone(),
                components,
                kustomizations,
                format!("{:.1} ms", run.elapsed.as_secs_f64() * 1000.0),
                status,
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            // Names and status read left-aligned, numbers right-aligned.
            if i == 0 || i == 4 {
                text.push_str(&format!("{cell:<width$}"));
            } else {
                text.push_str(&format!("{cell:>width$}"));
            }
            text.push_str(if i < 4 { "  " } else { "\n" });
        }
        text.trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for row in &rows {
        out.push_str(&line(row.each_ref().map(String::as_str)));
    }
    let failed = failures(runs);
    out.push_str(&format!(
        "{} context(s): {} ok, {failed} failed\n",
        runs.len(),
        runs.len() - failed
    ));
    out
}

/// How many contexts failed.
pub fn failures(runs: &[ContextRun]) -> usize {
    runs.iter().filter(|run| !run.done.ok()).count()
}
