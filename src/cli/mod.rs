//! The `bpc` command line: the arguments parsed with clap, one file per command, each a
//! thin shell over the library that returns an exit code: 0 success, 1 a failure it
//! reported (composition errors, failing tests), 2 bad usage.
//!
//! Files use each other in one direction only: this file uses every command;
//! `watch` uses the commands it repeats (`compose`, `render`, `test`); `compose`,
//! `render` and `graph` use `contexts`; every file may use `args` (the shared
//! arguments), `terminal` (colour, diagnostics) and `output` (`--out`), which use no
//! other file but `args`.

mod args;
mod check;
mod completions;
mod compose;
mod contexts;
mod diff;
mod eval;
mod explain;
mod graph;
mod lsp;
mod output;
mod policy;
mod publish;
mod render;
mod show;
mod terminal;
mod test;
mod verify;
mod watch;
#[cfg(test)]
mod watch_tests;

use crate::expr::windsor::jsonnet::worker;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "bpc",
    version,
    about = "Compose Windsor blueprints from facet templates"
)]
struct Cli {
    /// Colour in messages and reports: `auto` colours a stream only when it is a
    /// terminal and NO_COLOR is unset or empty; `always` and `never` override both.
    #[arg(long, global = true, value_enum, default_value_t = args::ColorChoice::Auto)]
    color: args::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    /// What a change does to every context, between two git revisions (see docs/diff.md).
    Diff(diff::DiffArgs),
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
    /// Build, substitute and validate what a context's render applies, as Flux would,
    /// offline (see docs/verify.md).
    Verify(verify::VerifyArgs),
    /// Evaluate `jsonnet()` files sent on stdin (started by bpc itself).
    #[command(name = "jsonnet-worker", hide = true)]
    JsonnetWorker,
}

/// Runs the command line `argv` (the program name first, as in `std::env::args_os()`)
/// and returns the exit code. Help, version and usage errors are printed as clap
/// prints them.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(argv) {
        Ok(cli) => dispatch(cli),
        Err(e) => {
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        }
    }
}

/// The language server and `--watch` run until they are stopped; every other command
/// runs once and exits.
fn runs_until_stopped(command: &Command) -> bool {
    match command {
        Command::Lsp(_) => true,
        Command::Compose(args) => args.watch.watch,
        Command::Render(args) => args.watch.watch,
        Command::Test(args) => args.watch.watch,
        _ => false,
    }
}

fn dispatch(cli: Cli) -> ExitCode {
    if let Command::JsonnetWorker = cli.command {
        return worker::serve();
    }
    if let Some(executable) = this_executable() {
        worker::run_in_processes(executable);
    }
    terminal::set_color(cli.color);
    if !runs_until_stopped(&cli.command) {
        crate::heap::for_one_run();
    }
    match cli.command {
        Command::Compose(args) if args.watch.watch => watch::run(watch::Watched::Compose(args)),
        Command::Render(args) if args.watch.watch => watch::run(watch::Watched::Render(args)),
        Command::Test(args) if args.watch.watch => watch::run(watch::Watched::Test(args)),
        Command::Bundle(args) => publish::run_bundle(args),
        Command::Push(args) => publish::run_push(args),
        Command::Check(args) => check::run(args),
        Command::Compose(args) => compose::run(args),
        Command::Completions(args) => {
            completions::run(args, <Cli as clap::CommandFactory>::command())
        }
        Command::Diff(args) => diff::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Test(args) => test::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Render(args) => render::run(args),
        Command::Show(args) => show::run(args),
        Command::Verify(args) => verify::run(args),
        Command::JsonnetWorker => worker::serve(),
    }
}

/// The running executable, to start `jsonnet()` workers from. On Linux the kernel's
/// link, which still starts this program after its file was replaced on disk.
fn this_executable() -> Option<std::path::PathBuf> {
    let proc_link = std::path::Path::new("/proc/self/exe");
    if cfg!(target_os = "linux") && proc_link.exists() {
        return Some(proc_link.to_path_buf());
    }
    std::env::current_exe().ok()
}
