//! Render, runs and expressions under attack: output links, kills, hostile trees,
//! terminal bytes, budgets. One test (or a few) per attack, each on a small project in
//! a temp dir.

use crate::common::*;
use std::path::Path;

const FACET: &str = FACET_HEAD;

/// A project with `n` Terraform components whose inputs carry `tag`.
fn components(n: usize, tag: &str) -> String {
    let mut text = format!("{FACET}metadata:\n  name: app\nterraform:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  - name: c{i}\n    path: c{i}\n    inputs:\n      tag: {tag}\n      i: {i}\n"
        ));
    }
    text
}

fn small() -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(2, "one")),
    ])
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

// ---- --format json respects --max-output ---------------------------------

/// What `--max-output 1` says of the deep value below, in either format.
const MAX_OUTPUT_CROSSED: &str = indoc! {"
    error: the composed blueprint written as text is larger than the output budget of 1 MiB; it was crossed at `terraform.net.inputs.a[12][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]`
    = note: nothing was written; the size counts the indentation of every nested level
    = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

"};

#[test]
fn json_output_is_bounded_by_max_output() {
    // Deep nesting costs little as compact JSON but a lot as indented text.
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!(
                "{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      a: ${{map(1..400, reduce(1..200, [#acc], 1))}}\n"
            ),
        ),
    ]);
    let run = bpc(
        dir.path(),
        &["compose", "--format", "json", "--max-output", "1"],
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "printed {} bytes", run.stdout.len());
    assert_eq!(run.stderr, MAX_OUTPUT_CROSSED);
    // The same value as YAML puts nested lists on one line (`- - - 1`): the budget
    // counts the text written, so it fits.
    let run = bpc(
        dir.path(),
        &["compose", "--format", "yaml", "--max-output", "1"],
    );
    assert!(run.success(), "{}", run.stderr);
    let written = run.stdout.len();
    assert!((100_000..1024 * 1024).contains(&written), "{written} bytes");
    let run = bpc(
        dir.path(),
        &["compose", "--format", "json", "--max-output", "64"],
    );
    assert!(run.success(), "{}", run.stderr);
    // `bpc eval` of the same value counts its text the same way.
    let deep = "map(1..400, reduce(1..200, [#acc], 1))";
    let run = bpc(
        dir.path(),
        &["eval", "--format", "json", "--max-output", "1", deep],
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "printed {} bytes", run.stdout.len());
    assert!(
        run.stderr.starts_with(
            "error: the value written as text is larger than the output budget of 1 MiB; it was crossed at `[12][0][0]"
        ),
        "{}",
        run.stderr
    );
    let run = bpc(dir.path(), &["eval", "--max-output", "1", deep]);
    assert!(run.success(), "{}", run.stderr);
    let written = run.stdout.len();
    assert!((100_000..1024 * 1024).contains(&written), "{written} bytes");
}

// ---- render --check reads only regular files --------------------------------

#[cfg(unix)]
#[test]
fn check_never_follows_links_blocks_or_reads_unbounded() {
    let dir = small();
    let out = dir.path().join("r");
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-TOKEN\n").expect("secret");
    // A link to a secret in place of a rendered file, a new one beside it, a FIFO and
    // a link to /dev/zero.
    let tfvars = out.join("terraform/c0/terraform.tfvars.json");
    std::fs::remove_file(&tfvars).expect("rm");
    std::os::unix::fs::symlink(&secret, &tfvars).expect("link");
    std::os::unix::fs::symlink(&secret, out.join("extra")).expect("link");
    std::os::unix::fs::symlink("/dev/zero", out.join("zero")).expect("link");
    let fifo = out.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // With a FIFO in the tree an unbounded or blocking read would never return; the
    // child is killed after 20 s so the test fails instead of hanging.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
        .args(["render", "--check", "--out", s(&out)])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("render --check blocked on the hostile tree");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(
        masked(dir.path(), &stdout),
        indoc! {r#"
        ! a/extra is a symbolic link; only regular files are compared, so it is not read
        ! a/pipe is a FIFO; only regular files are compared, so it is not read
        ! a/terraform/c0/terraform.tfvars.json is a symbolic link; only regular files are compared, so it is not read
        --- /dev/null
        +++ b/terraform/c0/terraform.tfvars.json
        @@ -0,0 +1,4 @@
        +{
        +  "i": 0,
        +  "tag": "one"
        +}
        ! a/zero is a symbolic link; only regular files are compared, so it is not read
    "#}
    );
}

#[test]
fn check_bounds_the_size_of_a_file_it_reads() {
    let dir = small();
    let out = dir.path().join("r");
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    let big = std::fs::File::create(out.join("big")).expect("big");
    big.set_len(bpc::render::write::MAX_CHECKED_FILE + 1)
        .expect("sparse file");
    let run = bpc(dir.path(), &["render", "--check", "--out", s(&out)]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stdout,
        indoc! {"
        ! a/big is larger than 16777216 bytes, the most --check reads of one file; only regular files are compared, so it is not read
    "}
    );
}

// ---- --out LINK: one rule for render and compose ---------------------------

#[cfg(unix)]
#[test]
fn render_and_compose_both_follow_an_out_link() {
    let dir = small();
    let real = dir.path().join("real");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("real", &link).expect("link");
    let run = bpc(dir.path(), &["render", "--out", s(&link)]);
    assert!(run.success(), "{}", run.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(real.join("terraform/c0/terraform.tfvars.json").is_file());
    // Rendered again over the link: still a link, the target replaced.
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        components(1, "two"),
    )
    .expect("edit");
    assert!(bpc(dir.path(), &["render", "--out", s(&link)]).success());
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(!real.join("terraform/c1").exists());
    let check = bpc(dir.path(), &["render", "--check", "--out", s(&link)]);
    assert!(check.success(), "{}", check.stdout);
    // compose follows the same way.
    let file_link = dir.path().join("bp.yaml");
    std::os::unix::fs::symlink("bp-real.yaml", &file_link).expect("link");
    assert!(bpc(dir.path(), &["compose", "--out", s(&file_link)]).success());
    assert!(dir.path().join("bp-real.yaml").is_file());
    assert!(std::fs::symlink_metadata(&file_link)
        .expect("link")
        .file_type()
        .is_symlink());
}

// ---- render is atomic under kill -9 ----------------------------------------

/// A small xorshift generator: the kill delays vary from run to run (seeded from the
/// clock, printed on failure).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(unix)]
#[test]
fn render_survives_random_kills_whole() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(60, "old")),
    ]);
    let out = dir.path().join("r");
    let run = bpc(dir.path(), &["render", "--out", s(&out)]);
    assert!(run.success(), "{}", run.stderr);
    let old = bpc::render::write::read_tree(&out).expect("old tree");
    // The new tree, rendered elsewhere once.
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        components(60, "new"),
    )
    .expect("edit");
    let reference = dir.path().join("reference");
    assert!(bpc(dir.path(), &["render", "--out", s(&reference)]).success());
    let new = bpc::render::write::read_tree(&reference).expect("new tree");
    assert_ne!(old, new);
    // How long a whole render takes, to spread the kills over it.
    let start = std::time::Instant::now();
    assert!(bpc(dir.path(), &["render", "--out", s(&reference)]).success());
    let span = start.elapsed().as_micros().max(1000) as u64;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut rng = Rng(seed);
    let (mut saw_old, mut saw_new) = (0, 0);
    for round in 0..40 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
            .args(["render", "--out", s(&out)])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_micros(rng.next() % span));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = bpc::render::write::read_tree(&out)
            .unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        if now == old {
            saw_old += 1;
        } else if now == new {
            saw_new += 1;
        } else {
            panic!(
                "seed {seed} round {round}: {} holds neither tree ({} files)",
                out.display(),
                now.len()
            );
        }
        // Back to the old tree every other round, so kills land on both swaps.
        if round % 2 == 1 && now == new {
            std::fs::write(
                dir.path().join("_template/facets/app.yaml"),
                components(60, "old"),
            )
            .expect("edit");
            assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
            std::fs::write(
                dir.path().join("_template/facets/app.yaml"),
                components(60, "new"),
            )
            .expect("edit");
        }
    }
    eprintln!("seed {seed}: old {saw_old}, new {saw_new}");
    // A last run completes and removes what the killed ones left.
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    assert_eq!(bpc::render::write::read_tree(&out).expect("tree"), new);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    assert_eq!(left, ["_template", "r", "reference", "windsor.yaml"]);
}

#[cfg(unix)]
#[test]
fn leftovers_of_dead_runs_are_removed_and_live_ones_kept() {
    let dir = small();
    let out = dir.path().join("r");
    // A pid that cannot be alive (above the kernel's maximum) and our own parent's.
    let dead = dir.path().join(".r.bpc-new-4194304999");
    let dead_old = dir.path().join(".r.bpc-old-4194304998");
    let live = dir
        .path()
        .join(format!(".r.bpc-new-{}", std::process::id()));
    for d in [&dead, &dead_old, &live] {
        std::fs::create_dir_all(d.join("terraform")).expect("mkdir");
    }
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    assert!(!dead.exists());
    assert!(!dead_old.exists());
    assert!(live.exists(), "a live process's temp dir was removed");
}

// ---- clear messages for --out paths that cannot be written ------------------

#[cfg(unix)]
#[test]
fn out_below_a_file_and_dangling_links_are_explained() {
    let dir = small();
    std::fs::write(dir.path().join("plain"), "x").expect("file");
    let run = bpc(dir.path(), &["render", "--out", "plain/r"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write plain/r: plain is a file, not a directory, so nothing can be created below it

    "}
    );
    let run = bpc(dir.path(), &["compose", "--out", "plain/bp.yaml"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write plain/bp.yaml: plain is a file, not a directory, so nothing can be created below it

    "}
    );
    std::os::unix::fs::symlink("missing/bp.yaml", dir.path().join("dangling")).expect("link");
    let run = bpc(dir.path(), &["compose", "--out", "dangling"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: cannot write dangling: dangling is a symbolic link to missing/bp.yaml, and its directory missing does not exist

    "}
    );
    // render creates the directory a dangling link points to.
    std::os::unix::fs::symlink("made", dir.path().join("rlink")).expect("link");
    let run = bpc(dir.path(), &["render", "--out", "rlink"]);
    assert!(run.success(), "{}", run.stderr);
    assert!(dir.path().join("made/.bpc-render").is_file());
}

// ---- render's output is never a watch input nor a context --------------------

/// Runs `bpc ARGS…` in `dir` for `secs` seconds (calling `during` after half of it),
/// then kills it; its stderr.
fn run_for(dir: &Path, args: &[&str], secs: u64, during: impl FnOnce()) -> String {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_secs(secs / 2));
    during();
    std::thread::sleep(std::time::Duration::from_secs(secs - secs / 2));
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn watch_render_into_contexts_runs_once_per_change() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(3, "one")),
        ("contexts/dev/values.yaml", "a: 1\n"),
    ]);
    let facet = dir.path().join("_template/facets/app.yaml");
    let stderr = run_for(
        dir.path(),
        &[
            "render",
            "--watch",
            "--context",
            "dev",
            "--out",
            "contexts/rendered",
        ],
        8,
        || std::fs::write(&facet, components(2, "two")).expect("edit"),
    );
    let rounds = stderr.lines().filter(|l| l.starts_with("watch: ")).count();
    // "watching for changes", the first round, the edit's round: nothing else.
    assert_eq!(rounds, 3, "{stderr}");
    assert_eq!(
        masked(dir.path(), &stderr),
        indoc! {"
        watch: watching for changes (Ctrl-C to stop)
        watch: wrote contexts/rendered: 3 component(s), 0 kustomization(s)
        watch: _template/facets/app.yaml changed: wrote contexts/rendered: components: 1 removed (c2), 2 changed (c0, c1)
    "}
    );
    // The rendered tree is not a context.
    let run = bpc(
        dir.path(),
        &["compose", "--all-contexts", "--out", "contexts/all"],
    );
    assert!(run.success(), "{}{}", run.stdout, run.stderr);
    assert_eq!(
        untimed(&run.stdout),
        indoc! {"
        context  components  kustomizations  time  status
        dev               2               0  [time]  ok
        1 context(s): 1 ok, 0 failed
    "}
    );
    assert!(dir.path().join("contexts/all/dev.yaml").is_file());
    // Nor is the output directory of an all-contexts run, on the next run.
    let again = bpc(
        dir.path(),
        &["render", "--all-contexts", "--out", "contexts/all"],
    );
    assert!(again.success(), "{}{}", again.stdout, again.stderr);
    assert_eq!(
        untimed(&again.stdout),
        indoc! {"
        context  components  kustomizations  time  status
        dev               2               0  [time]  ok
        1 context(s): 1 ok, 0 failed
    "}
    );
    assert!(!dir.path().join("contexts/all/all").exists());
}

// ---- bpc test is bounded and streams -----------------------------------------

/// A template with one facet and `n` trivial cases in one test file.
fn suite(n: usize) -> tempfile::TempDir {
    let mut cases = String::from("cases:\n");
    for i in 0..n {
        cases.push_str(&format!(
            "  - name: case {i}\n    values: {{}}\n    expect:\n      terraform:\n        - name: c0\n"
        ));
    }
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(1, "one")),
        ("_template/tests/many.test.yaml", &cases),
    ])
}

#[test]
fn test_limits_cases_per_run_and_streams_the_report() {
    let dir = suite(600);
    let run = bpc(dir.path(), &["test", "--max-cases", "500"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: more than 500 test cases selected (reached in tests/many.test.yaml); at most --max-cases 500 run at once
        = help: run the suite in parts with --filter, or raise --max-cases N

    "}
    );
    // A filter that selects fewer runs.
    let run = bpc(
        dir.path(),
        &["test", "--max-cases", "500", "--filter", "case 1*"],
    );
    assert!(run.success(), "{}", run.stderr);
    assert!(
        run.stdout.ends_with("111 passed, 0 failed\n"),
        "{}",
        run.stdout
    );
    // Over several batches, the JSON report is still one document with every case.
    let run = bpc(dir.path(), &["test", "--format", "json"]);
    assert!(run.success(), "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(doc["passed"], 600);
    assert_eq!(doc["cases"].as_array().map(Vec::len), Some(600));
    assert_eq!(doc["cases"][599]["name"], "case 599");
    let text = bpc(dir.path(), &["test"]);
    assert_eq!(
        text.stdout.lines().filter(|l| l.starts_with("✓")).count(),
        600
    );
}

// ---- --color is decided on the stream that gets the findings ------------------

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

// ---- the smaller items ---------------------------------------------------------

#[test]
fn local_sources_warn_that_their_addresses_cannot_be_fetched() {
    let example = repo().join("examples/multi-source");
    let out = tempfile::tempdir().expect("tmp");
    let target = out.path().join("r");
    let run = bpc(
        &example,
        &[
            "render",
            "--template",
            "app",
            "--context",
            "local",
            "--out",
            s(&target),
        ],
    );
    assert!(run.success(), "{}", run.stderr);
    let stderr = run.stderr.replace(s(out.path()), "[out]");
    assert_eq!(
        stderr,
        indoc! {"
        warning: source `platform` has the local URL `../platform`: the source rendered for it cannot be fetched by Flux
        = help: render a blueprint whose sources are published (git, OCI), or treat this render as a preview; --strict makes this an error

        note: terraform component `network`: the variables of ../platform//terraform/network/vpc?ref= are unknown: there is no module directory at platform/terraform/network/vpc; its shim passes the component's inputs through by name (cidr_block) and re-exports no outputs
        note: terraform component `cluster`: the variables of ../platform//terraform/cluster/talos?ref= are unknown: there is no module directory at platform/terraform/cluster/talos; its shim passes the component's inputs through by name (controlplanes, workers) and re-exports no outputs
        rendered 22 file(s) to [out]/r
    "}
    );
    let strict = bpc(
        &example,
        &[
            "render",
            "--template",
            "app",
            "--context",
            "local",
            "--strict",
            "--out",
            s(&target),
        ],
    );
    assert_eq!(strict.status, Some(1), "{}", strict.stderr);
}

#[test]
fn invalid_context_names_in_windsor_yaml_are_reported() {
    let dir = project(&[
        (
            "windsor.yaml",
            "version: v1alpha1\ncontexts:\n  good: {}\n  \"bad name\": {}\n",
        ),
        ("_template/facets/app.yaml", &components(1, "one")),
    ]);
    let run = bpc(dir.path(), &["compose", "--context", "good"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.stderr,
        indoc! {r#"
        warning: windsor.yaml: `contexts.bad name` is not a valid context name, so this context is skipped
         --> windsor.yaml:4:3
          |
        4 |   "bad name": {}
          |   ^^^^^^^^^^ not a valid context name
          |
          = help: a context name is letters, digits, `-`, `_` and `.`, not starting with `.` (it names the directory contexts/<name>/)

    "#}
    );
    let strict = bpc(dir.path(), &["compose", "--context", "good", "--strict"]);
    assert_eq!(strict.status, Some(1), "{}", strict.stderr);
    let all = bpc(
        dir.path(),
        &["compose", "--all-contexts", "--strict", "--out", "all"],
    );
    assert_eq!(all.status, Some(1), "{}{}", all.stdout, all.stderr);
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

#[test]
fn set_indexes_lists_as_helm_does() {
    let dir = small();
    let run = bpc(
        dir.path(),
        &[
            "show",
            "values",
            "--set",
            "hosts[1].name=b",
            "--set",
            "hosts[0]=a",
            "--set",
            "m.l[0][1]=x",
        ],
    );
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        indoc! {"
        hosts:
        - a
        - name: b
        m:
          l:
          - - null
            - x
        dev: true
        platform: docker
        workstation:
          runtime: docker
          arch: amd64
        dns:
          domain: test
        cluster:
          driver: talos
          controlplanes:
            nodes: {}
          workers:
            nodes: {}
    "}
    );
    for (bad, why) in [
        (
            "a[x]=1",
            "`a[x]`: `[x]` is not a list index (a number from 0)",
        ),
        ("a[0=1", "`a[0`: `[0` is not a list index like [0]"),
        ("[0]=1", "`[0]` is not a dotted key path (an empty name)"),
        (
            "a[99999999]=1",
            "`a[99999999]`: the index 99999999 is over the largest allowed, 65536",
        ),
        (
            "a.[0]=1",
            "`a.[0]` is not a dotted key path (an empty name)",
        ),
    ] {
        let run = bpc(dir.path(), &["show", "values", "--set", bad]);
        assert_eq!(run.status, Some(1), "{bad}: {}", run.stdout);
        assert_eq!(
            run.stderr,
            format!(
                "error: --set {bad:?}: {why}\n\
                 = help: a key path is names joined by `.`, each optionally followed by list \
                 indexes: a.b[0].c\n\n"
            )
        );
    }
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

// ---- fuzz finding: growing a string by `+` in a loop is bounded work -------------------

#[test]
fn quadratic_concatenation_meets_the_step_limit() {
    let dir = small();
    for (expr, message) in [
        (
            "reduce(1..157868, #acc + 'xxxxxxxxxxxxxxxx', '')",
            indoc! {"
            error: expression failed: evaluation step limit exceeded
             --> <expression>:1:19
              |
            1 | reduce(1..157868, #acc + 'xxxxxxxxxxxxxxxx', '')
              |                   ^^^^^^^^^^^^^^^^^^^^^^^^^ evaluation step limit exceeded

        "},
        ),
        (
            "reduce(1..900000, #acc + 'x', '')",
            indoc! {"
            error: expression failed: evaluation step limit exceeded
             --> <expression>:1:19
              |
            1 | reduce(1..900000, #acc + 'x', '')
              |                   ^^^^^^^^^^ evaluation step limit exceeded

        "},
        ),
    ] {
        let run = bpc(dir.path(), &["eval", expr]);
        assert_eq!(run.status, Some(1), "{expr}: {}", run.stdout.len());
        assert_eq!(run.stderr, message, "{expr}");
    }
    // Ordinary use is far below the limit.
    let run = bpc(
        dir.path(),
        &["eval", "len(reduce(1..1000, #acc + 'x', ''))"],
    );
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.stdout, "1000\n");
}
