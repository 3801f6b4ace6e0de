//! `--template` given an archive or a directory: an archive whose top level is
//! `_template/` is looked inside; a directory that holds no template is an error; an
//! archive is capped as it decompresses, and one that holds a path twice is refused.

use crate::common::*;
use std::process::Command;

const FACET: &str = FACET_HEAD;

#[test]
fn gzip_bomb_fails_naming_the_cap() {
    use flate2::{write::GzEncoder, Compression};
    let dir = simple();
    let path = dir.path().join("bomb.tgz");
    let file = std::fs::File::create(&path).expect("create");
    let mut builder = tar::Builder::new(GzEncoder::new(file, Compression::fast()));
    let mut header = tar::Header::new_gnu();
    let size: u64 = 80 << 20; // over the 64 MiB cap
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    builder
        .append_data(
            &mut header,
            "_template/facets/zeros.yaml",
            std::io::Read::take(std::io::repeat(0), size),
        )
        .expect("append");
    builder.into_inner().expect("tar").finish().expect("gzip");
    assert!(std::fs::metadata(&path).expect("meta").len() < 1 << 20);
    let out = bpc(dir.path(), &["compose", "--template", "bomb.tgz"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot open template bomb.tgz: _template/facets/zeros.yaml: entry of 83886080 bytes: the archive holds more than 67108864 bytes (64 MiB) uncompressed, the limit for a template archive

    "}
    );
}

#[test]
fn archive_with_template_inside_and_empty_template() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "contexts/_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n"),
        ),
        ("empty/README", "not a template\n"),
    ]);
    let status = Command::new("tar")
        .args(["czf", "t.tgz", "-C", "contexts", "_template"])
        .current_dir(dir.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let out = bpc(dir.path(), &["compose", "--template", "t.tgz"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(out.stdout, SIMPLE);

    let out = bpc(dir.path(), &["compose", "--template", "empty"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: empty/ is not a template: it has no facets/, blueprint.yaml or schema.yaml
        = help: pass the directory (or archive) that holds facets/, or an archive whose top level is _template/

    "}
    );
}

#[test]
fn duplicate_tar_entries_are_refused() {
    // Built by hand: tar tools refuse to write such archives on purpose.
    let dir = small();
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for text in [components(1, "one"), components(1, "two")] {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_path("facets/app.yaml").expect("path");
        header.set_cksum();
        builder.append(&header, text.as_bytes()).expect("append");
    }
    let bytes = builder.into_inner().expect("tar").finish().expect("gzip");
    std::fs::write(dir.path().join("t.tar.gz"), bytes).expect("write");
    let run = bpc(dir.path(), &["compose", "--template", "t.tar.gz"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot open template t.tar.gz: facets/app.yaml: the archive holds `facets/app.yaml` more than once; refusing the ambiguous archive

    "}
    );
}
