//! `--watch`: each change to the project composes or renders once more, and the tree a
//! watched render writes is never read back as an input, nor as a context.

use crate::common::*;
use std::path::Path;

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
