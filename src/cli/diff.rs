//! `bpc diff`: which contexts a change affects, and how, between two versions of the
//! project (see docs/diff.md).

use super::args::{env_context, ProjectArgs};
use super::terminal::report;
use crate::compare::{report, Request};
use clap::{Args, ValueEnum};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// Each context that differs, each changed field with its origin.
    #[default]
    Text,
    /// Every context compared, as one JSON document.
    Json,
    /// A summary for a pull request: a table of contexts, details folded.
    Markdown,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 when nothing differs, 1 when something does, 2 on error \
(a bad revision, a context that fails to compose on either side).

Examples:
  bpc diff                                  # the work tree against the merge base with main
  bpc diff --base origin/main --head HEAD --all-contexts --format markdown
  bpc diff --affected > matrix.json         # the contexts a CI matrix should run"
)]
pub struct DiffArgs {
    /// The base revision (default: the merge base of HEAD and the default branch,
    /// origin/HEAD, else main or master).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The head revision (default: the work tree, uncommitted changes included).
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,
    /// Every context of either side (the default when no --context is given).
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
    /// How the report is written.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// Print only the contexts that differ, with their components and
    /// Kustomizations, as a CI matrix (`{"include": [...]}`).
    #[arg(long, conflicts_with = "format")]
    pub affected: bool,
    #[command(flatten)]
    pub project: ProjectArgs,
}

pub fn run(args: DiffArgs) -> ExitCode {
    if args.project.at.template.is_some() {
        let refused = crate::files::Diagnostic::error(
            "bpc diff takes the template of each version of the project; --template is not taken",
        )
        .with_help("run it in the project (or pass --project DIR)");
        report(&[refused], &crate::files::FileMap::new());
        return ExitCode::from(2);
    }
    let contexts = args.project.context.clone();
    let one = ProjectArgs {
        context: Vec::new(),
        ..args.project.clone()
    };
    let options = match one.session_options(env_context(), None) {
        Ok(options) => options,
        Err(diagnostics) => {
            report(&diagnostics, &crate::files::FileMap::new());
            return ExitCode::from(2);
        }
    };
    let request = Request {
        base: args.base.clone(),
        head: args.head.clone(),
        contexts,
        options,
    };
    let diff = match crate::compare::diff(&request) {
        Ok(diff) => diff,
        Err((diagnostics, files)) => {
            report(&diagnostics, &files);
            return ExitCode::from(2);
        }
    };
    let text = if args.affected {
        report::affected(&diff)
    } else {
        match args.format {
            DiffFormat::Text => report::text(&diff),
            DiffFormat::Json => report::json(&diff),
            DiffFormat::Markdown => report::markdown(&diff),
        }
    };
    print!("{text}");
    if diff.failed() {
        ExitCode::from(2)
    } else if diff.differs() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
