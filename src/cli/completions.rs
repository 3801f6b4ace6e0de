//! `bpc completions SHELL`: the shell's completion script for `bpc`, generated from
//! the same command definition the binary parses with, so it never falls behind.

use super::Cli;
use clap::{Args, CommandFactory};
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

pub fn run(args: CompletionsArgs) -> ExitCode {
    let mut command = Cli::command();
    let name = command.get_name().to_string();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    ExitCode::SUCCESS
}
