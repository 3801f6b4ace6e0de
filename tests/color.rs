//! Colour in diagnostics: `--color always` and `--color never`, before or after the
//! command; left to itself, colour goes only to a terminal, decided on the stream that
//! gets the findings.

use crate::common::*;

const FACET: &str = FACET_HEAD;

#[test]
fn color_flag_and_no_color() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{nope_fn(1)}}\n"),
        ),
    ]);
    let always = bpc(dir.path(), &["check", "--color", "always"]);
    assert_eq!(
        always.stdout,
        indoc! {"
        \x1b[1;33mwarning\x1b[0m\x1b[1m: `nope_fn` is not a function [unknown-function]\x1b[0m
         \x1b[1;34m-->\x1b[0m _template/facets/a.yaml:8:12
          \x1b[1;34m|\x1b[0m
        \x1b[1;34m8 |\x1b[0m       x: ${nope_fn(1)}
          \x1b[1;34m|\x1b[0m            \x1b[1;33m^^^^^^^ unknown function\x1b[0m

        0 error(s), 1 warning(s), 0 note(s)
    "}
    );
    let never = bpc(dir.path(), &["--color", "never", "check"]);
    assert_eq!(
        never.stdout,
        indoc! {"
        warning: `nope_fn` is not a function [unknown-function]
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${nope_fn(1)}
          |            ^^^^^^^ unknown function

        0 error(s), 1 warning(s), 0 note(s)
    "}
    );
    // stderr a terminal, stdout a file: the findings in the file have no colour.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: `script` (util-linux) is not installed; the terminal half of this test did not run");
        return;
    }
    let out = dir.path().join("findings.txt");
    let command = format!("{} check > {} ", env!("CARGO_BIN_EXE_bpc"), out.display());
    let status = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("script");
    let _ = status;
    let text = std::fs::read_to_string(&out).expect("findings");
    assert_eq!(text, never.stdout, "colour codes in a file?");
}
