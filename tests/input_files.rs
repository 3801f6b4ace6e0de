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
