//! The `bpc` command line: parse arguments, run one command, exit with its code.

use std::process::ExitCode;

fn main() -> ExitCode {
    bpc::run(std::env::args_os())
}
