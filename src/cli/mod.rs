//! Commands of the `bpc` binary, one file each. Every command returns an exit code:
//! 0 success, 1 a failure it reported (composition errors, failing tests), 2 bad usage.

pub(crate) mod check;
pub(crate) mod completions;
pub mod compose;
pub(crate) mod contexts;
pub(crate) mod eval;
pub(crate) mod explain;
pub(crate) mod graph;
pub(crate) mod lsp;
pub(crate) mod output;
pub(crate) mod publish;
pub(crate) mod render;
pub mod show;
pub(crate) mod test;
pub mod watch;

use crate::files::{Diagnostic, FileMap};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "bpc",
    version,
    about = "Compose Windsor blueprints from facet templates"
)]
pub struct Cli {
    /// Colour in messages and reports: `auto` colours a stream only when it is a
    /// terminal and NO_COLOR is unset or empty; `always` and `never` override both.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// The `--color` of this process (set once, by [`run`]).
static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// The `--color` this process runs with (`auto` until [`run`] has set it).
pub fn color_choice() -> ColorChoice {
    COLOR.get().copied().unwrap_or_default()
}

/// Whether a stream gets colour, decided for the stream itself: `terminal` says
/// whether it is one.
fn color_for(terminal: bool) -> bool {
    match color_choice() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Whether what goes to stdout (reports, findings) gets colour.
pub(crate) fn color_stdout() -> bool {
    color_for(std::io::stdout().is_terminal())
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Bundle the template (with the project's kustomize/ and terraform/) as a
    /// Windsor blueprint artifact, `<name>-<version>.tar.gz`.
    Bundle(publish::BundleArgs),
    /// Check a template for mistakes without composing (references, types,
    /// reachability, dependencies; `--coverage` for test coverage).
    Check(check::CheckArgs),
    /// Compose the blueprint of a context from the template's facets.
    Compose(compose::ComposeArgs),
    /// Print the shell completion script for bash, zsh, fish or powershell.
    Completions(completions::CompletionsArgs),
    /// Evaluate an expression (or `${…}` text) in a project's scope, or against values.
    Eval(eval::EvalArgs),
    /// Show where a value of the composed blueprint (or the scope) came from.
    Explain(explain::ExplainArgs),
    /// Draw a context's deployment order: what waits for what (DOT, Mermaid, SVG, HTML).
    Graph(graph::GraphArgs),
    /// Run the language server on stdin/stdout (for editors; see docs/lsp.md).
    Lsp(lsp::LspArgs),
    /// Write the Terraform and Flux inputs of a context (see docs/render.md).
    Render(render::RenderArgs),
    /// Show the effective values of a context (`bpc show values`).
    Show(show::ShowArgs),
    /// Push the template as a Windsor blueprint artifact to `oci://REGISTRY/REPO:TAG`.
    Push(publish::PushArgs),
    /// Run the template's test cases.
    Test(test::TestArgs),
}

pub fn run(cli: Cli) -> ExitCode {
    let _ = COLOR.set(cli.color);
    match cli.command {
        Command::Bundle(args) => publish::run_bundle(args),
        Command::Push(args) => publish::run_push(args),
        Command::Check(args) => check::run(args),
        Command::Compose(args) => compose::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Test(args) => test::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Render(args) => render::run(args),
        Command::Show(args) => show::run(args),
    }
}

/// Whether what goes to stderr (diagnostics) gets colour (see [`color_for`]).
fn color_stderr() -> bool {
    color_for(std::io::stderr().is_terminal())
}

/// Prints diagnostics to stderr, errors and warnings alike, in order.
pub fn report(diagnostics: &[Diagnostic], sources: &FileMap) {
    let color = color_stderr();
    for d in diagnostics {
        eprintln!("{}", crate::files::render(d, sources, color));
    }
}
