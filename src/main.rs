//! The `bpc` command line: parse arguments, run one command, exit with its code.

use bpc::cli;
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::run(args)
}
