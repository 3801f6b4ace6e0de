//! `bpc completions SHELL`: the shell's completion script for `bpc`, generated from
//! the same command definition the binary parses with, so it never falls behind.

use clap::Args;
use clap_complete::Shell;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc completions bash > ~/.local/share/bash-completion/completions/bpc
  bpc completions zsh > \"${fpath[1]}/_bpc\"
  bpc completions fish > ~/.config/fish/completions/bpc.fish")]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the script for `command`, the whole `bpc` command line. The script is made
/// in memory first: the generator gives up on a failed write by panicking, and a
/// closed pipe (`bpc completions bash | head`) is an error like any other command's.
pub fn run(args: CompletionsArgs, mut command: clap::Command) -> ExitCode {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    match super::output::emit(None, &[&script]) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
