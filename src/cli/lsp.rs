//! `bpc lsp`: the language server, speaking LSP on stdin/stdout. Settings come from
//! the client (`initializationOptions`, `workspace/didChangeConfiguration`).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc lsp                                     # what an editor runs, in the project
  bpc lsp --stdio                             # the same, for clients that pass --stdio

Editor set-ups: README.md; capabilities: docs/lsp.md.
Settings (initializationOptions or workspace/didChangeConfiguration, bare or under `bpc`):
  context                the context hovers and diagnostics use (default: the project's)
  debounceMs             quiet time after an edit before analysing (default 30)
  tests                  run the template's tests for diagnostics (default true)
  incremental            reuse what an edit did not reach (default true)
  pull                   pull missing oci:// blueprints (default false: never contact a registry)
  jsonnetMemoryMiB       memory of one jsonnet() evaluation (default 1024)
  jsonnetTimeoutSeconds  wall-clock time of one jsonnet() evaluation (default 10)
  policies               Rego policy files or directories for diagnostics (default none)")]
pub struct LspArgs {
    /// Speak LSP on stdin/stdout (the only transport; accepted for clients that pass it).
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: LspArgs) -> ExitCode {
    match crate::lsp::serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: bpc lsp: {message}");
            ExitCode::from(1)
        }
    }
}
