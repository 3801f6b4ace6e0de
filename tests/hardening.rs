//! Bad input never costs the user data, memory, time or a silently wrong
//! blueprint. One test (or a few) per kind of bad input, each on a small project built
//! in a temp dir.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const FACET: &str = FACET_HEAD;

/// `bpc compose ARGS…` in `dir` must exit 1; its stderr.
#[track_caller]
fn compose_err(dir: &Path, args: &[&str]) -> String {
    let out = Test::in_dir(dir)
        .compose()
        .args(args.iter().copied())
        .status(1)
        .run();
    masked(dir, &out.stderr)
}

/// `bpc compose ARGS…` in `dir` must succeed; the blueprint.
#[track_caller]
fn compose_ok(dir: &Path, args: &[&str]) -> String {
    let out = Test::in_dir(dir).compose().args(args.iter().copied()).run();
    masked(dir, &out.stdout)
}

/// A project with one facet that sets a terraform component.
fn simple() -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n"),
        ),
    ])
}

/// What `bpc compose` prints for `simple()`.
const SIMPLE: &str = indoc! {"
    kind: Blueprint
    apiVersion: blueprints.windsorcli.dev/v1alpha1
    metadata:
      name: local
      description: Blueprint for the local context
    repository:
      url: http://git.test/git/[project]
      ref:
        branch: main
      secretName: flux-system
    sources:
    - name: template
      install: true
    terraform:
    - path: net
    configMaps:
      values-common:
        CONTEXT: local
        DOMAIN: test
"};

// ---- --out ----------------------------------------------------------------

#[cfg(unix)]
#[test]
fn out_keeps_mode_and_follows_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = simple();
    let target = dir.path().join("real.yaml");
    std::fs::write(&target, "old").expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::symlink("real.yaml", dir.path().join("link.yaml")).expect("symlink");

    let out = bpc(dir.path(), &["compose", "--out", "link.yaml"]);
    assert!(out.success(), "{}", out.stderr);
    let link = std::fs::symlink_metadata(dir.path().join("link.yaml")).expect("link");
    assert!(link.file_type().is_symlink(), "the symlink was replaced");
    let text = std::fs::read_to_string(&target).expect("read");
    assert_eq!(masked(dir.path(), &text), SIMPLE);
    let mode = std::fs::metadata(&target)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "mode not kept");
    // No temp file is left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["_template", "link.yaml", "real.yaml", "windsor.yaml"]
    );
}

#[cfg(unix)]
#[test]
fn out_writes_devices_in_place_and_dash_is_stdout() {
    use std::os::unix::fs::FileTypeExt;
    let dir = simple();
    let out = bpc(dir.path(), &["compose", "--out", "/dev/null"]);
    assert!(out.success(), "{}", out.stderr);
    let meta = std::fs::metadata("/dev/null").expect("meta");
    assert!(meta.file_type().is_char_device(), "/dev/null was replaced");

    let out = bpc(dir.path(), &["compose", "--out", "-"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(out.stdout, SIMPLE);
    assert!(!dir.path().join("-").exists());

    // A new file gets an ordinary mode, not the temp file's 0600.
    let out = bpc(dir.path(), &["compose", "--out", "new.yaml"]);
    assert!(out.success(), "{}", out.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("new.yaml"))
        .expect("meta")
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "mode {mode:o}");
}

#[cfg(unix)]
#[test]
fn out_refuses_sockets_and_directories() {
    let dir = simple();
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
    let out = bpc(dir.path(), &["compose", "--out", "s.sock"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot write s.sock: is a socket; refusing to write the blueprint there

    "}
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&sock)
        .expect("meta")
        .file_type()
        .is_socket());

    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--out", "d"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        error: cannot write d: is a directory

    "}
    );
}

// ---- only regular files are read --------------------------------------------

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

// ---- file() checks the size before reading ---------------------------------------

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

// ---- archives are capped as they decompress ------------------------------------

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

// ---- jsonnet has a deadline and a memory budget ----------------------------------

fn jsonnet_project(jsonnet: &str) -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{jsonnet('../j.jsonnet')}}\n"),
        ),
        ("_template/j.jsonnet", jsonnet),
    ])
}

#[test]
fn jsonnet_memory_budget() {
    for source in [
        "std.length(std.range(1, 100000000))",
        // Doubles a string until it is far beyond any budget.
        "local grow(s, n) = if n == 0 then std.length(s) else grow(s + s, n - 1); grow('ab', 40)",
    ] {
        let dir = jsonnet_project(source);
        let e = compose_err(dir.path(), &["--jsonnet-memory", "64"]);
        assert_eq!(
            e,
            indoc! {"
            error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: evaluation used more than the jsonnet memory limit of 64 MiB; raise it with --jsonnet-memory MIB
             --> _template/facets/a.yaml:8:12
              |
            8 |       x: ${jsonnet('../j.jsonnet')}
              |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: evaluation used more than the jsonnet memory limit of 64 MiB; raise it with --jsonnet-memory MIB
              |
              = note: in `inputs` of terraform component `net` of facet `a`

        "},
            "{source}"
        );
    }
}

#[test]
fn jsonnet_deadline() {
    let dir = jsonnet_project(
        "local count(n) = if n == 0 then 0 else count(n - 1) tailstrict; count(1000000000000)",
    );
    let e = compose_err(dir.path(), &["--jsonnet-timeout", "0.2"]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: evaluation ran longer than the jsonnet time limit of 0.2 s; raise it with --jsonnet-timeout SECONDS
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: evaluation ran longer than the jsonnet time limit of 0.2 s; raise it with --jsonnet-timeout SECONDS
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

// ---- jsonnet errors are diagnostics with file:line:col -----------------------------

#[test]
fn jsonnet_errors_name_file_line_column() {
    let dir = jsonnet_project("{\n  a: 1,\n  b: error 'boom',\n}\n");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:3:6: error: boom
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:3:6: error: boom
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
    let dir = jsonnet_project("{ a: 1 +, }");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:9: syntax error: expected expr, found simple
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:9: syntax error: expected expr, found simple
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
    let dir = jsonnet_project("{ a: nosuch }");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:6: unknown variable
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:6: unknown variable
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

// ---- integral jsonnet numbers print as integers -----------------------------------

#[test]
fn jsonnet_integers_print_as_integers() {
    let dir = jsonnet_project("{ size: 4, ratio: 2.5, big: 3 * 1000 }");
    let out = compose_ok(dir.path(), &[]);
    assert_eq!(
        out,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: local
          description: Blueprint for the local context
        repository:
          url: http://git.test/git/[project]
          ref:
            branch: main
          secretName: flux-system
        sources:
        - name: template
          install: true
        terraform:
        - path: net
          inputs:
            x:
              big: 3000
              ratio: 2.5
              size: 4
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

// ---- the composed blueprint has an output budget ---------------------------------

/// Block `b{i}` lists `b{i-1}` ten times: 10^levels leaves from a few hundred bytes.
fn amplifier(levels: usize) -> tempfile::TempDir {
    let mut facet = format!(
        "{FACET}metadata:\n  name: amp\nconfig:\n  - name: b0\n    value: [{}]\n",
        "x".repeat(64)
    );
    for i in 1..=levels {
        let refs = vec![format!("'${{b{}}}'", i - 1); 10].join(", ");
        facet.push_str(&format!("  - name: b{i}\n    value: [{refs}]\n"));
    }
    facet.push_str(&format!(
        "terraform:\n  - path: net\n    inputs:\n      x: ${{b{levels}}}\n"
    ));
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/amp.yaml", &facet),
    ])
}

#[test]
fn output_budget_names_the_value_and_can_be_raised() {
    // 10^5 leaves of 66 bytes: about 6.6 MB, over a 1 MiB budget.
    let dir = amplifier(5);
    let e = compose_err(dir.path(), &["--max-output", "1"]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 1 MiB (crossed at `(value)[1][4][9][0][8][0]`)
          --> _template/facets/amp.yaml:21:10
           |
        21 |       x: ${b5}
           |          ^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `amp`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
    let out = compose_ok(dir.path(), &["--max-output", "16"]);
    assert!(out.len() > 6_000_000);
}

#[test]
fn seven_levels_fail_fast_under_the_default_budget() {
    // 10^7 leaves (the 220 MB case) must stop at the default budget.
    let dir = amplifier(7);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 64 MiB (crossed at `(value)[0][9][5][4][1][5][4][0]`)
          --> _template/facets/amp.yaml:25:10
           |
        25 |       x: ${b7}
           |          ^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `amp`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
}

#[test]
fn output_budget_bounds_the_sum_of_many_references() {
    // One 40 KB values file read by 40 inputs: each fits, together they do not.
    let big: String = (0..1000)
        .map(|i| format!("k{i}: {}\n", "v".repeat(30)))
        .collect();
    let inputs: String = (0..40).map(|i| format!("      i{i}: ${{big}}\n")).collect();
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "contexts/local/values.yaml",
            &format!(
                "big:\n{}",
                big.lines().map(|l| format!("  {l}\n")).collect::<String>()
            ),
        ),
        (
            "_template/facets/a.yaml",
            &format!(
                "{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n{inputs}"
            ),
        ),
    ]);
    let e = compose_err(dir.path(), &["--max-output", "1"]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 1 MiB (crossed at `(value).k287`)
          --> _template/facets/a.yaml:34:12
           |
        34 |       i26: ${big}
           |            ^^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `a`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
    compose_ok(dir.path(), &["--max-output", "4"]);
}

// ---- snapshot names that collide are refused -------------------------------------

#[test]
fn colliding_snapshot_names_are_refused() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n"),
        ),
        (
            "_template/tests/a.test.yaml",
            "cases:\n  - name: Foo Bar\n    values: {}\n  - name: foo-bar\n    values: {}\n",
        ),
    ]);
    let out = bpc(dir.path(), &["test", "--update"]);
    assert!(!out.success(), "--update must not succeed");
    assert_eq!(
        out.stderr,
        indoc! {"
        error: test cases `Foo Bar` (tests/a.test.yaml) and `foo-bar` (tests/a.test.yaml) would share the golden file tests/__snapshots__/a/foo-bar.yaml
        = help: rename one of the cases so their names differ in letters or digits

    "}
    );
    assert!(
        !dir.path().join("_template/tests/__snapshots__").exists()
            || std::fs::read_dir(dir.path().join("_template/tests/__snapshots__/a"))
                .map(|d| d.count() == 0)
                .unwrap_or(true),
        "nothing may be written"
    );
}

// ---- a directory that is not a template is an error; archives look inside ------------

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

// ---- blueprint.yaml is type-checked --------------------------------------------------

#[test]
fn blueprint_yaml_is_checked() {
    let head = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
    for (body, message) in [
        (
            format!("{head}terraform: 5\n"),
            indoc! {"
            error: `terraform` must be a list, found an integer
             --> _template/blueprint.yaml:3:12
              |
            3 | terraform: 5
              |            ^ expected a list

        "},
        ),
        (
            format!("{head}kustomize: abc\n"),
            indoc! {"
            error: `kustomize` must be a list, found a string
             --> _template/blueprint.yaml:3:12
              |
            3 | kustomize: abc
              |            ^^^ expected a list

        "},
        ),
        (
            format!("{head}metadata: 7\n"),
            indoc! {"
            error: `metadata` must be a map, found an integer
             --> _template/blueprint.yaml:3:11
              |
            3 | metadata: 7
              |           ^ expected a map

        "},
        ),
        (
            "kind: Blueprint\n".to_string(),
            indoc! {"
            error: blueprint.yaml needs `apiVersion: blueprints.windsorcli.dev/v1alpha1`
             --> _template/blueprint.yaml:1:1
              |
            1 | kind: Blueprint
              | ^^^^^^^^^^^^^^^ no `apiVersion:` here

        "},
        ),
        (
            format!("{head}terraform:\n  - 5\n"),
            indoc! {"
            error: a terraform component must be a map, found an integer
             --> _template/blueprint.yaml:4:5
              |
            4 |   - 5
              |     ^ expected a map

        "},
        ),
    ] {
        let dir = project(&[
            ("windsor.yaml", "version: v1alpha1\n"),
            ("_template/blueprint.yaml", &body),
        ]);
        assert_eq!(compose_err(dir.path(), &[]), message, "{body}");
    }
}

// ---- context names are safe; an undefined context is a warning ---------------------

#[test]
fn context_names() {
    let dir = simple();
    std::fs::create_dir_all(dir.path().join("x")).expect("mkdir");
    std::fs::write(dir.path().join("x/values.yaml"), "secret: 1\n").expect("write");
    for bad in ["../x", "../../x", "a/b", ".hidden", ""] {
        let out = bpc(dir.path(), &["compose", "--context", bad]);
        assert!(!out.success(), "{bad:?}");
        assert_eq!(
            out.stderr,
            format!(
                "error: invalid context name {bad:?}\n\
                 = help: a context name is letters, digits, `-`, `_` and `.`, not starting with \
                 `.` (it names the directory contexts/<name>/)\n\n"
            )
        );
    }
    let out = bpc(dir.path(), &["compose", "--context", "nosuch"]);
    assert!(out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `nosuch` is not defined: there is no contexts/nosuch/ and no `contexts.nosuch` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

    "}
    );
    assert_eq!(
        out.stdout,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: nosuch
          description: Blueprint for the nosuch context
        sources:
        - name: template
          install: true
        terraform:
        - path: net
        configMaps:
          values-common:
            CONTEXT: nosuch
    "}
    );
    let out = bpc(dir.path(), &["compose", "--context", "nosuch", "--strict"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `nosuch` is not defined: there is no contexts/nosuch/ and no `contexts.nosuch` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        error: 1 warning(s) with --strict; nothing written
    "}
    );
    std::fs::create_dir_all(dir.path().join("contexts/prod")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--context", "prod", "--strict"]);
    assert!(out.success(), "{}", out.stderr);
}

// ---- an error on a very long line shows only the part around it ----------------------

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

// ---- activation chains settle with each `when` evaluated a bounded number of times --

#[test]
fn activation_chain_and_flips() {
    // Facet i is active once facet i-1 is; only the last one stays off (its `when`
    // reads a block nobody defines). Rounds re-evaluate only what read a changed block,
    // so this settles quickly; the result must be exactly the fixed point of S5.
    let n = 300;
    let mut files: Vec<(String, String)> =
        vec![("windsor.yaml".into(), "version: v1alpha1\n".into())];
    for i in 0..n {
        let when = match i {
            0 => String::new(),
            i if i == n - 1 => "when: nosuch.on == true\n".to_string(),
            i => format!("when: c{}.on == true\n", i - 1),
        };
        files.push((
            format!("_template/facets/f{i:04}.yaml"),
            format!("{FACET}metadata:\n  name: f{i}\n{when}config:\n  - name: c{i}\n    on: true\nterraform:\n  - path: p{i}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = project(&refs);
    let out = compose_ok(dir.path(), &[]);
    // Every facet but the last is on: components p0 … p{n-2}, and no other.
    let mut paths: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("- path: "))
        .collect();
    paths.sort_unstable();
    let mut want: Vec<String> = (0..n - 1).map(|i| format!("p{i}")).collect();
    want.sort_unstable();
    assert_eq!(paths, want);

    // Two facets that switch each other off never settle; both are named.
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nwhen: b_on.x != true\nconfig:\n  - name: a_on\n    x: true\n"),
        ),
        (
            "_template/facets/b.yaml",
            &format!("{FACET}metadata:\n  name: b\nwhen: a_on.x != true\nconfig:\n  - name: b_on\n    x: true\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: facet activation does not settle after 3 rounds: `a` (facets/a.yaml), `b` (facets/b.yaml) keep switching on and off
         --> _template/facets/a.yaml:5:7
          |
        5 | when: b_on.x != true
          |       ^^^^^^^^^^^^^^ this condition flips
         ::: _template/facets/b.yaml:5:7
          |
        5 | when: a_on.x != true
          |       -------------- this one too
          |
          = help: a facet's `when` reads config that exists only while the facet is inactive (or the reverse)

    "}
    );
}

#[test]
fn unknown_function_is_named_with_a_hint() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{uper('a')}}\n      y: ${{nosuchthing(1)}}\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: unknown function `uper`
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${uper('a')}
          |            ^^^^^^^^^ no function named `uper`
          |
          = note: in `inputs` of terraform component `net` of facet `a`
          = note: (the expression engine says: invalid operation: cannot call nil)
          = help: did you mean `upper`?

    "}
    );
}

#[test]
fn bad_schema_points_at_the_key() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/schema.yaml",
            "type: object\nproperties:\n  cluster:\n    type: object\n    properties:\n      size:\n        type: 5\n",
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: schema.yaml is not a valid JSON Schema: 5 is not valid under any of the schemas listed in the 'anyOf' keyword
         --> _template/schema.yaml:7:15
          |
        7 |         type: 5
          |               ^ at `/properties/cluster/properties/size/type`

    "}
    );
}
