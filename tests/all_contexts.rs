//! Every context at once: `bpc compose --all-contexts --out DIR`, `--context a
//! --context b`, and `bpc render` likewise. Each context's output equals its
//! single-context run; one context's failure is reported under its name, leaves its
//! previous output alone and does not stop the others; the exit code says whether any
//! failed; a summary table closes the run.

use crate::common::*;
use bpc::files::FileMap;
use bpc::session::{Options, Session};
use std::path::Path;
use std::sync::Arc;

/// The example template with contexts `dev` (docker), `prod` (aws, in windsor.yaml
/// only) and `staging` (aws, in contexts/staging/, with its own blueprint overlay).
fn three_contexts() -> tempfile::TempDir {
    let dir = project(&[
        (
            "windsor.yaml",
            "contexts:\n  prod:\n    provider: aws\n    cluster:\n      name: prod\n",
        ),
        ("contexts/dev/values.yaml", "provider: docker\n"),
        ("contexts/staging/values.yaml", "provider: aws\n"),
        (
            "contexts/staging/blueprint.yaml",
            "terraform:\n  - path: cluster/aws-eks\n    inputs:\n      staging_only: true\n",
        ),
    ]);
    copy_dir(&repo().join("_template"), &dir.path().join("_template"));
    dir
}

fn single(project: &Path, context: &str) -> String {
    let out = bpc(project, &["compose", "--context", context]);
    assert!(out.success(), "{}", out.stderr);
    out.stdout.clone()
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn all_contexts_writes_each_context_as_its_single_run_would() {
    let dir = three_contexts();
    let root = dir.path();
    let out = bpc(root, &["compose", "--all-contexts", "--out", "out"]);
    assert!(out.success(), "{}", out.stderr);
    let written = files_in(&root.join("out"));
    assert_eq!(written, ["dev.yaml", "prod.yaml", "staging.yaml"]);
    // Each file is compared whole with its single run below; these say which of them
    // staging's own blueprint overlay reached.
    assert!(read(&root.join("out/staging.yaml")).contains("staging_only: true"));
    assert!(!read(&root.join("out/prod.yaml")).contains("staging_only"));
    for context in ["dev", "prod", "staging"] {
        assert_eq!(
            read(&root.join("out").join(format!("{context}.yaml"))),
            single(root, context),
            "{context}"
        );
    }
    assert_eq!(
        untimed(&out.stdout),
        indoc! {"
        context  components  kustomizations  time  status
        dev               2               4  [time]  ok
        prod              2               4  [time]  ok
        staging           3               4  [time]  ok
        3 context(s): 3 ok, 0 failed
    "}
    );
}

#[test]
fn a_failing_context_is_named_keeps_its_old_output_and_does_not_stop_the_others() {
    let dir = three_contexts();
    let root = dir.path();
    std::fs::write(
        root.join("contexts/staging/values.yaml"),
        "provider: aws\ncluster: [\n",
    )
    .expect("write");
    std::fs::create_dir_all(root.join("out")).expect("mkdir");
    std::fs::write(root.join("out/staging.yaml"), "previous\n").expect("write");
    let out = bpc(root, &["compose", "--all-contexts", "--out", "out"]);
    assert_eq!(out.status, Some(1));
    assert_eq!(
        masked(root, &out.stderr),
        indoc! {"
        == context `staging` ==
        error: this flow sequence is never closed: the file ends before its `]`
         --> contexts/staging/values.yaml:2:10
          |
        2 | cluster: [
          |          ^
          |           - the file ends here
          |
          = help: close it with `]`

    "}
    );
    assert_eq!(read(&root.join("out/staging.yaml")), "previous\n");
    assert_eq!(read(&root.join("out/dev.yaml")), single(root, "dev"));
    assert_eq!(read(&root.join("out/prod.yaml")), single(root, "prod"));
    assert_eq!(
        untimed(&out.stdout),
        indoc! {"
        context  components  kustomizations  time  status
        dev               2               4  [time]  ok
        prod              2               4  [time]  ok
        staging           -               -  [time]  failed (1 error(s))
        3 context(s): 2 ok, 1 failed
    "}
    );
}

#[test]
fn repeated_context_flags_choose_a_subset_in_json() {
    let dir = three_contexts();
    let root = dir.path();
    let out = bpc(
        root,
        &[
            "compose",
            "--context",
            "prod",
            "--context",
            "dev",
            "--context",
            "prod",
            "--format",
            "json",
            "--out",
            "subset",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    let written = files_in(&root.join("subset"));
    assert_eq!(written, ["dev.json", "prod.json"]);
    let json = bpc(root, &["compose", "--context", "prod", "--format", "json"]);
    assert_eq!(read(&root.join("subset/prod.json")), json.stdout);
}

#[test]
fn an_unknown_context_warns_and_fails_under_strict() {
    let dir = three_contexts();
    let root = dir.path();
    let out = bpc(
        root,
        &[
            "compose",
            "--context",
            "dev",
            "--context",
            "qa",
            "--strict",
            "--out",
            "o",
        ],
    );
    assert_eq!(out.status, Some(1));
    let stderr = out.stderr.clone();
    assert_eq!(
        stderr,
        indoc! {"
        == context `qa` ==
        warning: context `qa` is not defined: there is no contexts/qa/ and no `contexts.qa` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        error: 1 warning(s) with --strict; nothing written

    "}
    );
    assert!(root.join("o/dev.yaml").is_file());
    assert!(!root.join("o/qa.yaml").exists());
}

#[test]
fn several_contexts_need_an_output_directory() {
    let dir = three_contexts();
    let out = bpc(dir.path(), &["compose", "--all-contexts"]);
    assert_eq!(out.status, Some(1));
    assert_eq!(
        out.stderr,
        indoc! {"
        error: several contexts are written one output per context: give --out DIR

    "}
    );
    let both = bpc(
        dir.path(),
        &["compose", "--all-contexts", "--context", "dev"],
    );
    assert_eq!(both.status, Some(2), "clap refuses the pair");
}

#[test]
fn commands_of_one_context_refuse_several() {
    let dir = three_contexts();
    let out = bpc(
        dir.path(),
        &["show", "values", "--context", "dev", "--context", "prod"],
    );
    assert_eq!(out.status, Some(1));
    assert_eq!(
        out.stderr,
        indoc! {"
        error: --context is given 2 times; this command composes one context
        = help: `compose`, `render`, `graph`, `verify` and `check --policy` take several --context (or --all-contexts)

    "}
    );
}

#[test]
fn a_project_without_contexts_is_an_error() {
    let dir = project(&[]);
    copy_dir(&repo().join("_template"), &dir.path().join("_template"));
    let out = bpc(dir.path(), &["compose", "--all-contexts", "--out", "o"]);
    assert_eq!(out.status, Some(1));
    assert_eq!(
        out.stderr,
        indoc! {"
        error: the project at [project] defines no context
        = help: a context is a directory contexts/<name>/ or an entry `contexts.<name>` in windsor.yaml

    "}
    );
}

#[test]
fn a_session_composes_any_context_without_reloading() {
    let dir = three_contexts();
    let sources = Arc::new(FileMap::new());
    let session = Session::open(Options::at(dir.path()), sources).expect("session");
    assert_eq!(session.contexts(), ["dev", "prod", "staging"]);
    let names = session.contexts();
    let composed: Vec<String> = std::thread::scope(|s| {
        let threads: Vec<_> = names
            .iter()
            .map(|name| {
                let session = &session;
                s.spawn(move || {
                    let composition = session.compose_context(name).expect("compose");
                    bpc::emit::to_yaml(&composition.blueprint)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect()
    });
    for (name, yaml) in names.iter().zip(&composed) {
        assert_eq!(yaml, &single(dir.path(), name), "{name}");
    }
    assert!(session.compose_context("../etc").is_err());
}

#[test]
fn render_writes_one_tree_per_context() {
    let dir = three_contexts();
    let root = dir.path();
    let out = bpc(
        root,
        &[
            "render",
            "--context",
            "dev",
            "--context",
            "prod",
            "--out",
            "r",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    for context in ["dev", "prod"] {
        // At the same depth as `r/<context>`: shims reach the project from there.
        let single_dir = format!("single/{context}");
        let one = bpc(
            root,
            &["render", "--context", context, "--out", single_dir.as_str()],
        );
        assert!(one.success(), "{}", one.stderr);
        let many = bpc::render::write::read_tree(&root.join("r").join(context)).expect("tree");
        let alone = bpc::render::write::read_tree(&root.join(&single_dir)).expect("tree");
        assert!(!many.is_empty());
        assert_eq!(many, alone, "{context}");
    }
    assert!(!root.join("r/staging").exists());
    // --check: up to date, then a difference in one context only.
    let check_both = || {
        bpc(
            root,
            &[
                "render",
                "--context",
                "dev",
                "--context",
                "prod",
                "--out",
                "r",
                "--check",
            ],
        )
    };
    let check = check_both();
    assert!(check.success(), "{}", check.stderr);
    std::fs::write(root.join("contexts/dev/values.yaml"), "provider: aws\n").expect("write");
    let check = check_both();
    assert_eq!(check.status, Some(1));
    // dev's differences (its provider changed to aws), then the table.
    snap!(
        "all_contexts_check_diff",
        untimed(&masked(root, &check.stdout))
    );
    assert_eq!(
        masked(root, &check.stderr),
        indoc! {"
        == context `dev` ==
        error: r/dev is not up to date

    "}
    );
}
