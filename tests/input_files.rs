//! What bpc reads of a project: only regular files (a FIFO is an error that names it,
//! never a read that blocks), each of a bounded size checked before reading, as UTF-8
//! text; YAML tags bpc has no meaning for are warned. An error's snippet shows only the
//! part of a long line around the error, and draws control bytes as symbols.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const FACET: &str = FACET_HEAD;

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn fifo_facet_is_an_error_naming_it() {
    let dir = simple();
    mkfifo(&dir.path().join("_template/facets/pipe.yaml"));
    let out = bpc(dir.path(), &["compose"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot read _template/facets/pipe.yaml: is a FIFO; only regular files are read

    "}
    );
}

#[cfg(unix)]
#[test]
fn fifo_through_file_is_an_error_naming_it() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{file('../pipe')}}\n"),
        ),
    ]);
    mkfifo(&dir.path().join("_template/pipe"));
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to read file ../pipe: pipe: is a FIFO; only regular files are read
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${file('../pipe')}
          |            ^^^^^^^^^^^^^^^ failed to read file ../pipe: pipe: is a FIFO; only regular files are read
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

#[cfg(unix)]
#[test]
fn fifo_values_yaml_is_not_ignored() {
    let dir = simple();
    std::fs::create_dir_all(dir.path().join("contexts/local")).expect("mkdir");
    mkfifo(&dir.path().join("contexts/local/values.yaml"));
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: cannot read contexts/local/values.yaml: is a FIFO; only regular files are read

    "}
    );
}

#[test]
fn file_size_is_checked_before_reading() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{file('../big.txt')}}\n"),
        ),
    ]);
    // Sparse: 3 GiB on paper, nothing on disk; reading it would take 3 GiB.
    let big = std::fs::File::create(dir.path().join("_template/big.txt")).expect("create");
    big.set_len(3 << 30).expect("set_len");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to read file ../big.txt: big.txt: is 3221225472 bytes, more than the limit of 16777216 bytes for one template file
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${file('../big.txt')}
          |            ^^^^^^^^^^^^^^^^^^ failed to read file ../big.txt: big.txt: is 3221225472 bytes, more than the limit of 16777216 bytes for one template file
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

#[test]
fn long_line_snippets_are_cut() {
    let long = vec!["item"; 40_000].join(", ");
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nconfig:\n  - name: b\n    value: [{long}]]\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: misplaced bracket
         --> _template/facets/a.yaml:7:240012
          |
        7 | …tem, item, item, item, item, item, item]]
          |                                          ^

    "}
    );
    assert!(
        e.len() < 2_000,
        "{} bytes of error for a {} byte line",
        e.len(),
        long.len()
    );
}

#[test]
fn invalid_utf8_in_a_values_file_names_line_and_column() {
    let dir = small();
    std::fs::create_dir_all(dir.path().join("contexts/dev")).expect("mkdir");
    std::fs::write(
        dir.path().join("contexts/dev/values.yaml"),
        b"a: 1\nb: x\xffy\n",
    )
    .expect("write");
    let run = bpc(dir.path(), &["compose", "--context", "dev"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot read contexts/dev/values.yaml: is not valid UTF-8 text (line 2, column 5: byte 0xff)

    "}
    );
}

#[test]
fn nul_and_escape_bytes_are_not_echoed_into_snippets() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: \"\u{0}\u{1b}[2J\" ${{\n"),
        ),
    ]);
    let run = bpc(dir.path(), &["compose"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {r#"
        error: while scanning a quoted scalar, found unexpected end of stream
         --> _template/facets/a.yaml:8:10
          |
        8 |       x: "␀␛[2J" ${
          |          ^

    "#}
    );
}

#[test]
fn unknown_tags_and_binary_are_warned() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: !custom 3\n      y: !!binary aGVsbG8=\n      z: ! 4\n"),
        ),
    ]);
    let run = bpc(dir.path(), &["compose"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.stderr,
        indoc! {"
        warning: the tag !custom has no meaning for bpc and is dropped; the value is read as if it were not tagged
         --> _template/facets/a.yaml:8:18
          |
        8 |       x: !custom 3
          |                  ^
          |
          = help: remove the tag, or quote the value if it must stay text

        warning: the tag !!binary is not decoded: bpc has no bytes type, so the value stays its base64 text
         --> _template/facets/a.yaml:9:19
          |
        9 |       y: !!binary aGVsbG8=
          |                   ^^^^^^^^
          |
          = help: decode it where it is needed with fromBase64(...)

    "}
    );
    let strict = bpc(dir.path(), &["compose", "--strict"]);
    assert_eq!(strict.status, Some(1));
}
