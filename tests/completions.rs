//! `bpc completions SHELL`: a completion script for each shell clap can generate one
//! for, naming every subcommand.

use crate::common::*;

const SUBCOMMANDS: &[&str] = &[
    "check",
    "compose",
    "completions",
    "eval",
    "explain",
    "render",
    "show",
    "test",
];

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = Test::new().args(["completions", shell]).run();
        assert!(!out.stdout.is_empty(), "{shell}: empty script");
        for sub in SUBCOMMANDS {
            assert!(
                out.stdout.contains(sub),
                "{shell}: no `{sub}` in the script"
            );
        }
        assert!(out.stderr.is_empty(), "{shell}: {}", out.stderr);
    }
}

#[test]
fn completes_the_flags_of_a_subcommand() {
    let out = Test::new().args(["completions", "bash"]).run();
    for flag in ["--project", "--context", "--text", "--strict"] {
        assert!(out.stdout.contains(flag), "no `{flag}` in the bash script");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = Test::new().args(["completions", "nushell"]).status(2).run();
    assert_eq!(
        out.stderr,
        indoc! {"
        error: invalid value 'nushell' for '<SHELL>'
          [possible values: bash, elvish, fish, powershell, zsh]

        For more information, try '--help'.
    "}
    );
}

/// A reader that has gone (`bpc completions bash | true`) is a write error said in
/// one line, as for any other command's output, never a panic.
#[test]
fn a_closed_pipe_is_an_error_not_a_panic() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = command(&repo())
        .args(["completions", "bash"])
        .stdout(writer)
        .output()
        .expect("bpc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: cannot write output: Broken pipe (os error 32)\n"
    );
}
