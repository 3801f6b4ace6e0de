//! Issue 14: bad input never costs the user data, memory, time or a silently wrong
//! blueprint. One test (or a few) per item of the issue, each on a small project built
//! in a temp dir.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const FACET: &str = FACET_HEAD;

/// `bpc ARGS…` in `dir`, whatever its exit status.
fn bpc(dir: &Path, args: &[&str]) -> Output {
    Test::in_dir(dir)
        .args(args.iter().copied())
        .any_status()
        .run()
}

/// `bpc compose ARGS…` in `dir` must exit 1; its stderr.
#[track_caller]
fn compose_err(dir: &Path, args: &[&str]) -> String {
    Test::in_dir(dir)
        .compose()
        .args(args.iter().copied())
        .status(1)
        .run()
        .stderr
}

/// `bpc compose ARGS…` in `dir` must succeed; the blueprint.
#[track_caller]
fn compose_ok(dir: &Path, args: &[&str]) -> String {
    Test::in_dir(dir)
        .compose()
        .args(args.iter().copied())
        .run()
        .stdout
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

// ---- 1: --out ----------------------------------------------------------------

#[cfg(unix)]
#[test]
fn item01_out_keeps_mode_and_follows_symlinks() {
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
    assert!(text.contains("path: net"), "{text}");
    let mode = std::fs::metadata(&target)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "mode not kept");
    // No temp file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("bpc-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[cfg(unix)]
#[test]
fn item01_out_writes_devices_in_place_and_dash_is_stdout() {
    use std::os::unix::fs::FileTypeExt;
    let dir = simple();
    let out = bpc(dir.path(), &["compose", "--out", "/dev/null"]);
    assert!(out.success(), "{}", out.stderr);
    let meta = std::fs::metadata("/dev/null").expect("meta");
    assert!(meta.file_type().is_char_device(), "/dev/null was replaced");

    let out = bpc(dir.path(), &["compose", "--out", "-"]);
    assert!(out.success(), "{}", out.stderr);
    assert!(out.stdout.contains("path: net"));
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
fn item01_out_refuses_sockets_and_directories() {
    let dir = simple();
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
    let out = bpc(dir.path(), &["compose", "--out", "s.sock"]);
    assert!(!out.success());
    assert!(out.stderr.contains("socket"), "{}", out.stderr);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&sock)
        .expect("meta")
        .file_type()
        .is_socket());

    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--out", "d"]);
    assert!(!out.success());
    assert!(out.stderr.contains("is a directory"), "{}", out.stderr);
}

// ---- 2: only regular files are read --------------------------------------------

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn item02_fifo_facet_is_an_error_naming_it() {
    let dir = simple();
    mkfifo(&dir.path().join("_template/facets/pipe.yaml"));
    let out = bpc(dir.path(), &["compose"]);
    assert!(!out.success());
    let e = out.stderr;
    assert!(e.contains("facets/pipe.yaml") && e.contains("FIFO"), "{e}");
}

#[cfg(unix)]
#[test]
fn item02_fifo_through_file_is_an_error_naming_it() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{file('../pipe')}}\n"),
        ),
    ]);
    mkfifo(&dir.path().join("_template/pipe"));
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("pipe") && e.contains("FIFO"), "{e}");
}

#[cfg(unix)]
#[test]
fn item02_fifo_values_yaml_is_not_ignored() {
    let dir = simple();
    std::fs::create_dir_all(dir.path().join("contexts/local")).expect("mkdir");
    mkfifo(&dir.path().join("contexts/local/values.yaml"));
    let e = compose_err(dir.path(), &[]);
    assert!(
        e.contains("contexts/local/values.yaml") && e.contains("FIFO"),
        "{e}"
    );
}

// ---- 5: file() checks the size before reading ---------------------------------------

#[test]
fn item05_file_size_is_checked_before_reading() {
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
    assert!(
        e.contains("big.txt") && e.contains("3221225472 bytes") && e.contains("limit"),
        "{e}"
    );
}

// ---- 6: archives are capped as they decompress ------------------------------------

#[test]
fn item06_gzip_bomb_fails_naming_the_cap() {
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
    let e = out.stderr;
    assert!(
        e.contains("67108864 bytes") && e.contains("zeros.yaml"),
        "{e}"
    );
}

// ---- 3: jsonnet has a deadline and a memory budget ----------------------------------

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
fn item03_jsonnet_memory_budget() {
    for source in [
        "std.length(std.range(1, 100000000))",
        // Doubles a string until it is far beyond any budget.
        "local grow(s, n) = if n == 0 then std.length(s) else grow(s + s, n - 1); grow('ab', 40)",
    ] {
        let dir = jsonnet_project(source);
        let e = compose_err(dir.path(), &["--jsonnet-memory", "64"]);
        assert!(
            e.contains("jsonnet memory limit of 64 MiB")
                && e.contains("--jsonnet-memory")
                && e.contains("j.jsonnet")
                && e.contains("facets/a.yaml:"),
            "{e}"
        );
    }
}

#[test]
fn item03_jsonnet_deadline() {
    let dir = jsonnet_project(
        "local count(n) = if n == 0 then 0 else count(n - 1) tailstrict; count(1000000000000)",
    );
    let e = compose_err(dir.path(), &["--jsonnet-timeout", "0.2"]);
    assert!(
        e.contains("jsonnet time limit of 0.2 s") && e.contains("--jsonnet-timeout"),
        "{e}"
    );
}

// ---- 12: jsonnet errors are diagnostics with file:line:col -----------------------------

#[test]
fn item12_jsonnet_errors_name_file_line_column() {
    let dir = jsonnet_project("{\n  a: 1,\n  b: error 'boom',\n}\n");
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("j.jsonnet:3:6: error: boom"), "{e}");
    assert!(!e.contains("ExplicitError") && !e.contains("span"), "{e}");
    let dir = jsonnet_project("{ a: 1 +, }");
    let e = compose_err(dir.path(), &[]);
    assert!(
        e.contains("j.jsonnet:1:") && e.contains("syntax error"),
        "{e}"
    );
    let dir = jsonnet_project("{ a: nosuch }");
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("j.jsonnet:1:6: unknown variable"), "{e}");
}

// ---- 11: integral jsonnet numbers print as integers -----------------------------------

#[test]
fn item11_jsonnet_integers_print_as_integers() {
    let dir = jsonnet_project("{ size: 4, ratio: 2.5, big: 3 * 1000 }");
    let out = compose_ok(dir.path(), &[]);
    assert!(out.contains("size: 4\n"), "{out}");
    assert!(out.contains("big: 3000\n"), "{out}");
    assert!(out.contains("ratio: 2.5\n"), "{out}");
}

// ---- 4: the composed blueprint has an output budget ---------------------------------

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
fn item04_output_budget_names_the_value_and_can_be_raised() {
    // 10^5 leaves of 66 bytes: about 6.6 MB, over a 1 MiB budget.
    let dir = amplifier(5);
    let e = compose_err(dir.path(), &["--max-output", "1"]);
    assert!(
        e.contains("output budget of 1 MiB")
            && e.contains("facets/amp.yaml:")
            && e.contains("terraform component `net`")
            && e.contains("--max-output"),
        "{e}"
    );
    let out = compose_ok(dir.path(), &["--max-output", "16"]);
    assert!(out.len() > 6_000_000);
}

#[test]
fn item04_seven_levels_fail_fast_under_the_default_budget() {
    // 10^7 leaves (the 220 MB case) must stop at the default budget.
    let dir = amplifier(7);
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("output budget of 64 MiB"), "{e}");
}

#[test]
fn item04_output_budget_bounds_the_sum_of_many_references() {
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
    assert!(
        e.contains("output budget of 1 MiB") && e.contains("facets/a.yaml:"),
        "{e}"
    );
    compose_ok(dir.path(), &["--max-output", "4"]);
}

// ---- 7: snapshot names that collide are refused -------------------------------------

#[test]
fn item07_colliding_snapshot_names_are_refused() {
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
    let e = out.stderr;
    assert!(e.contains("`Foo Bar`") && e.contains("`foo-bar`"), "{e}");
    assert!(
        !dir.path().join("_template/tests/__snapshots__").exists()
            || std::fs::read_dir(dir.path().join("_template/tests/__snapshots__/a"))
                .map(|d| d.count() == 0)
                .unwrap_or(true),
        "nothing may be written"
    );
}

// ---- 8: a directory that is not a template is an error; archives look inside ------------

#[test]
fn item08_archive_with_template_inside_and_empty_template() {
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
    assert!(out.stdout.contains("path: net"));

    let out = bpc(dir.path(), &["compose", "--template", "empty"]);
    assert!(!out.success());
    assert!(out.stderr.contains("is not a template"), "{}", out.stderr);
}

// ---- 9: blueprint.yaml is type-checked --------------------------------------------------

#[test]
fn item09_blueprint_yaml_is_checked() {
    let head = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
    for (body, expect) in [
        (
            format!("{head}terraform: 5\n"),
            "`terraform` must be a list",
        ),
        (
            format!("{head}kustomize: abc\n"),
            "`kustomize` must be a list",
        ),
        (format!("{head}metadata: 7\n"), "`metadata` must be a map"),
        ("kind: Blueprint\n".to_string(), "needs `apiVersion"),
        (format!("{head}terraform:\n  - 5\n"), "must be a map"),
    ] {
        let dir = project(&[
            ("windsor.yaml", "version: v1alpha1\n"),
            ("_template/blueprint.yaml", &body),
        ]);
        let e = compose_err(dir.path(), &[]);
        assert!(
            e.contains(expect) && e.contains("blueprint.yaml:"),
            "{body}\n{e}"
        );
    }
}

// ---- 10: context names are safe; an undefined context is a warning ---------------------

#[test]
fn item10_context_names() {
    let dir = simple();
    std::fs::create_dir_all(dir.path().join("x")).expect("mkdir");
    std::fs::write(dir.path().join("x/values.yaml"), "secret: 1\n").expect("write");
    for bad in ["../x", "../../x", "a/b", ".hidden", ""] {
        let out = bpc(dir.path(), &["compose", "--context", bad]);
        assert!(!out.success(), "{bad:?}");
        assert!(
            out.stderr.contains("invalid context name"),
            "{}",
            out.stderr
        );
    }
    let out = bpc(dir.path(), &["compose", "--context", "nosuch"]);
    assert!(out.success());
    assert!(
        out.stderr.contains("context `nosuch` is not defined"),
        "{}",
        out.stderr
    );
    let out = bpc(dir.path(), &["compose", "--context", "nosuch", "--strict"]);
    assert!(!out.success());
    std::fs::create_dir_all(dir.path().join("contexts/prod")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--context", "prod", "--strict"]);
    assert!(out.success(), "{}", out.stderr);
}

// ---- 13: an error on a very long line shows only the part around it ----------------------

#[test]
fn item13_long_line_snippets_are_cut() {
    let long = vec!["item"; 40_000].join(", ");
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nconfig:\n  - name: b\n    value: [{long}]]\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("facets/a.yaml:7:"), "{e}");
    assert!(
        e.len() < 2_000,
        "{} bytes of error for a {} byte line",
        e.len(),
        long.len()
    );
    assert!(e.contains('…'), "{e}");
}

// ---- 14: activation chains settle with each `when` evaluated a bounded number of times --

#[test]
fn item14_activation_chain_and_flips() {
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
    assert!(
        out.contains(&format!("path: p{}\n", n - 2)),
        "chain did not complete"
    );
    assert!(!out.contains(&format!("path: p{}\n", n - 1)));

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
    assert!(
        e.contains("does not settle") && e.contains("`a`") && e.contains("`b`"),
        "{e}"
    );
}

#[test]
fn item13_unknown_function_is_named_with_a_hint() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{uper('a')}}\n      y: ${{nosuchthing(1)}}\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert!(
        e.contains("unknown function `uper`") && e.contains("did you mean `upper`?"),
        "{e}"
    );
}

#[test]
fn item13_bad_schema_points_at_the_key() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/schema.yaml",
            "type: object\nproperties:\n  cluster:\n    type: object\n    properties:\n      size:\n        type: 5\n",
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert!(e.contains("not a valid JSON Schema"), "{e}");
    assert!(e.contains("schema.yaml:7:15"), "{e}");
}
