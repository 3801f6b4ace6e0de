//! `bpc diff`: what a change does to each context, between two versions of a project
//! read from a real git repository (made here with the `git` CLI). Commits are made
//! with a fixed author and date, so their ids, which the reports name, are the same
//! on every run.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A git repository in a temp dir, on branch `main`.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        repo.git(&["init", "-q", "-b", "main", "."]);
        repo
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs git in `dir` with a fixed identity and date; returns its stdout.
    #[track_caller]
    fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "Ann")
            .env("GIT_AUTHOR_EMAIL", "ann@example.com")
            .env("GIT_COMMITTER_NAME", "Ann")
            .env("GIT_COMMITTER_EMAIL", "ann@example.com")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    #[track_caller]
    fn git(&self, args: &[&str]) -> String {
        self.git_in(self.root(), args)
    }

    fn write(&self, path: &str, text: &str) {
        let full = self.root().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }

    /// Commits everything as it is now.
    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// `bpc diff ARGS` run in `dir` under the repository.
    fn diff_in(&self, dir: &str, args: &[&str]) -> Output {
        let mut all = vec!["diff"];
        all.extend_from_slice(args);
        bpc(&self.root().join(dir), &all)
    }

    fn diff(&self, args: &[&str]) -> Output {
        self.diff_in("", args)
    }
}

/// A small project under `at` (`""` or `dir/`): a template whose facet makes one
/// Terraform component and two Kustomizations, a schema with a sensitive `token`,
/// and contexts `dev` and `prod`.
fn small_project(repo: &Repo, at: &str) {
    repo.write(&format!("{at}windsor.yaml"), "version: v1alpha1\n");
    repo.write(
        &format!("{at}contexts/_template/schema.yaml"),
        indoc! {r#"
            $schema: https://json-schema.org/draft/2020-12/schema
            type: object
            properties:
              size:
                type: string
                default: small
              token:
                type: string
                sensitive: true
                default: ""
        "#},
    );
    repo.write(
        &format!("{at}contexts/_template/facets/cluster.yaml"),
        &format!(
            "{FACET_HEAD}{}",
            indoc! {"
                metadata:
                  name: cluster
                terraform:
                  - path: cluster
                    inputs:
                      size: ${size}
                      token: ${token}
                      region: eu
                kustomize:
                  - name: ingress
                    path: ingress
                    dependsOn: [base, dns]
                  - name: base
                    path: base
                  - name: dns
                    path: dns
            "}
        ),
    );
    repo.write(
        &format!("{at}contexts/prod/values.yaml"),
        "size: big\ntoken: s3cr3t-prod\n",
    );
    repo.write(&format!("{at}contexts/dev/values.yaml"), "size: tiny\n");
}

/// The repository with the small project committed on `main`, and branch `feature`
/// checked out.
fn on_feature(at: &str) -> Repo {
    let repo = Repo::new();
    small_project(&repo, at);
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo
}

/// Replaces `from` by `to` in file `path` of the repository.
fn edit(repo: &Repo, path: &str, from: &str, to: &str) {
    let full: PathBuf = repo.root().join(path);
    let text = std::fs::read_to_string(&full).expect("read");
    assert!(text.contains(from), "{path} holds no {from:?}");
    std::fs::write(full, text.replacen(from, to, 1)).expect("write");
}

#[track_caller]
fn expect(out: &Output, status: i32, stdout: &str) {
    assert_eq!(out.status, Some(status), "{}", out.stderr);
    assert_eq!(out.stdout, stdout);
}

#[test]
fn a_facet_edit_changes_every_context_it_reaches_with_its_origin() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "region: eu",
        "region: us",
    );
    repo.commit("region");
    let out = repo.diff(&["--base", "main", "--head", "feature"]);
    expect(
        &out,
        1,
        indoc! {r#"
            base: main (commit 64c981c2be13)
            head: feature (commit 4810805720ff)
            context dev: changed
              terraform cluster: changed
                inputs.region: "eu" -> "us"
                  from contexts/_template/facets/cluster.yaml:10:15 (cluster, 0, merge)
                tfvars.region: "eu" -> "us"
                  from contexts/_template/facets/cluster.yaml:10:15 (cluster, 0, merge)
            context prod: changed
              terraform cluster: changed
                inputs.region: "eu" -> "us"
                  from contexts/_template/facets/cluster.yaml:10:15 (cluster, 0, merge)
                tfvars.region: "eu" -> "us"
                  from contexts/_template/facets/cluster.yaml:10:15 (cluster, 0, merge)
            2 context(s): 2 changed, 0 added, 0 removed, 0 unchanged
        "#},
    );
}

#[test]
fn a_reordered_depends_on_is_no_change() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "dependsOn: [base, dns]",
        "dependsOn: [dns, base]",
    );
    let out = repo.diff(&["--base", "main"]);
    expect(
        &out,
        0,
        indoc! {"
            base: main (commit 64c981c2be13)
            head: work tree
            2 context(s): 0 changed, 0 added, 0 removed, 2 unchanged
        "},
    );
}

#[test]
fn a_values_edit_changes_only_its_context_as_json() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/dev/values.yaml",
        "size: tiny",
        "size: huge",
    );
    repo.commit("bigger dev");
    let out = repo.diff(&["--format", "json"]);
    expect(
        &out,
        1,
        indoc! {r#"
            {
              "base": "merge base of HEAD and main (commit 64c981c2be13)",
              "head": "work tree",
              "template": null,
              "differs": true,
              "contexts": [
                {
                  "context": "dev",
                  "change": "changed",
                  "sources": [],
                  "items": [
                    {
                      "kind": "terraform",
                      "id": "cluster",
                      "change": "changed",
                      "fields": [
                        {
                          "path": "inputs.size",
                          "old": "tiny",
                          "new": "huge",
                          "deferred": [],
                          "origin": "contexts/_template/facets/cluster.yaml:8:13 (cluster, 0, merge)"
                        },
                        {
                          "path": "tfvars.size",
                          "old": "tiny",
                          "new": "huge",
                          "deferred": [],
                          "origin": "contexts/_template/facets/cluster.yaml:8:13 (cluster, 0, merge)"
                        }
                      ]
                    }
                  ],
                  "failed": []
                },
                {
                  "context": "prod",
                  "change": null,
                  "sources": [],
                  "items": [],
                  "failed": []
                }
              ]
            }
        "#},
    );
}

/// `--format json` gives each side's value as a value (a string, a number, a set as a
/// sorted list; a source as its URL and ref), a masked one as the mask, and names the
/// sides that are deferred.
#[test]
fn json_gives_values_typed_masked_and_marked_deferred() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/prod/values.yaml",
        "token: s3cr3t-prod",
        "token: n3w-s3cr3t",
    );
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "region: eu",
        "region: eu\n      nodes: 3\n      vip: ${terraform_output('net', 'vip')}",
    );
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "dependsOn: [base, dns]",
        "dependsOn: [dns]",
    );
    repo.write(
        "contexts/prod/blueprint.yaml",
        &format!(
            "{BLUEPRINT_HEAD}metadata:\n  name: prod\nsources:\n  - name: extras\n    \
             url: https://git.example/extras.git\n    ref:\n      branch: main\n"
        ),
    );
    let out = repo.diff(&["--format", "json", "--context", "prod"]);
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(!out.stdout.contains("s3cr3t"), "{}", out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let field = |item: &str, path: &str| {
        let items = doc["contexts"][0]["items"].as_array().expect("items");
        let item = items.iter().find(|i| i["id"] == item);
        let item = item.unwrap_or_else(|| panic!("no {item:?}: {}", out.stdout));
        let fields = item["fields"].as_array().expect("fields");
        let field = fields.iter().find(|f| f["path"] == path);
        let field = field.unwrap_or_else(|| panic!("no field {path} of {item}: {}", out.stdout));
        serde_json::json!([field["old"], field["new"], field["deferred"]])
    };
    use serde_json::json;
    assert_eq!(field("cluster", "inputs.nodes"), json!([null, 3, []]));
    assert_eq!(field("cluster", "tfvars.nodes"), json!([null, 3, []]));
    assert_eq!(
        field("cluster", "inputs.token"),
        json!(["<sensitive>", "<sensitive>", []])
    );
    assert_eq!(
        field("cluster", "inputs.vip.expression"),
        json!([null, "${terraform_output('net', 'vip')}", ["new"]])
    );
    assert_eq!(
        field("ingress", "dependsOn"),
        json!([["base", "dns"], ["dns"], []])
    );
    assert_eq!(
        doc["contexts"][0]["sources"],
        json!([{
            "name": "extras",
            "old": null,
            "new": {"url": "https://git.example/extras.git", "ref": {"branch": "main"}}
        }])
    );
}

#[test]
fn a_sensitive_value_is_masked_and_a_kustomization_added_is_listed() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/prod/values.yaml",
        "token: s3cr3t-prod",
        "token: n3w-s3cr3t",
    );
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "  - name: dns\n",
        "  - name: cache\n    path: cache\n  - name: dns\n",
    );
    let out = repo.diff(&["--context", "prod"]);
    assert!(!out.stdout.contains("s3cr3t"), "{}", out.stdout);
    expect(
        &out,
        1,
        indoc! {r#"
            base: merge base of HEAD and main (commit 64c981c2be13)
            head: work tree
            context prod: changed
              terraform cluster: changed
                inputs.token: <sensitive> -> <sensitive>
                  from contexts/_template/facets/cluster.yaml:9:14 (cluster, 0, merge)
                tfvars.token: <sensitive> -> <sensitive>
                  from contexts/_template/facets/cluster.yaml:9:14 (cluster, 0, merge)
              kustomization cache: added
              rendered flux/kustomization.yaml: changed
                resources: ["configmaps/values-common.json", "kustomizations/base.json", "kustomizations/dns.json", "kustomizations/ingress.json", "sources/namespace-system-gitops.json"] -> ["configmaps/values-common.json", "kustomizations/base.json", "kustomizations/cache.json", "kustomizations/dns.json", "kustomizations/ingress.json", "sources/namespace-system-gitops.json"]
              rendered flux/kustomizations/cache.json: added
            1 context(s): 1 changed, 0 added, 0 removed, 0 unchanged
        "#},
    );
}

#[test]
fn a_renamed_context_is_one_removed_and_one_added() {
    let repo = on_feature("");
    repo.git(&["mv", "contexts/dev", "contexts/staging"]);
    repo.commit("rename dev");
    let out = repo.diff(&[]);
    expect(
        &out,
        1,
        indoc! {r#"
            base: merge base of HEAD and main (commit 64c981c2be13)
            head: work tree
            context dev: removed
              terraform cluster: removed
              kustomization base: removed
              kustomization dns: removed
              kustomization ingress: removed
            context staging: added
              terraform cluster: added
              kustomization base: added
              kustomization dns: added
              kustomization ingress: added
            3 context(s): 0 changed, 1 added, 1 removed, 1 unchanged
        "#},
    );
    let affected = repo.diff(&["--affected"]);
    expect(
        &affected,
        1,
        concat!(
            r#"{"include":[{"context":"dev","change":"removed","terraform":["cluster"],"kustomizations":["base","dns","ingress"]},"#,
            r#"{"context":"staging","change":"added","terraform":["cluster"],"kustomizations":["base","dns","ingress"]}]}"#,
            "\n"
        ),
    );
}

#[test]
fn a_project_in_a_sub_directory_names_files_from_the_repository_root() {
    let repo = on_feature("infra/");
    edit(
        &repo,
        "infra/contexts/_template/facets/cluster.yaml",
        "path: dns",
        "path: dns/v2",
    );
    let out = repo.diff_in("infra", &["--format", "markdown"]);
    expect(
        &out,
        1,
        indoc! {r#"
            ### bpc diff: 2 of 2 context(s) differ

            Base: merge base of HEAD and main (commit 61ab99e14c41). Head: work tree.

            | context | change | terraform | kustomizations | rendered files |
            |---|---|---|---|---|
            | dev | changed | 0 | 1 | 1 |
            | prod | changed | 0 | 1 | 1 |

            <details><summary><b>dev</b>: changed</summary>

            - kustomization `dns`: changed
              - `path`: `"dns"` → `"dns/v2"` (from infra/contexts/_template/facets/cluster.yaml:18:11 (cluster, 0, merge))
            - rendered `flux/kustomizations/dns.json`: changed
              - `spec.path`: `"kustomize/dns"` → `"kustomize/dns/v2"`

            </details>

            <details><summary><b>prod</b>: changed</summary>

            - kustomization `dns`: changed
              - `path`: `"dns"` → `"dns/v2"` (from infra/contexts/_template/facets/cluster.yaml:18:11 (cluster, 0, merge))
            - rendered `flux/kustomizations/dns.json`: changed
              - `spec.path`: `"kustomize/dns"` → `"kustomize/dns/v2"`

            </details>
        "#},
    );
}

#[test]
fn the_work_tree_side_holds_uncommitted_changes_and_head_does_not() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/dev/values.yaml",
        "size: tiny",
        "size: huge",
    );
    let dirty = repo.diff(&["--affected"]);
    expect(
        &dirty,
        1,
        indoc! {r#"
            {"include":[{"context":"dev","change":"changed","terraform":["cluster"],"kustomizations":[]}]}
        "#},
    );
    let committed = repo.diff(&["--head", "HEAD", "--affected"]);
    expect(&committed, 0, "{\"include\":[]}\n");
}

#[test]
fn a_revision_that_does_not_exist_is_an_error() {
    let repo = on_feature("");
    let out = repo.diff(&["--base", "no-such-branch"]);
    assert_eq!(out.status, Some(2));
    assert_eq!(out.stdout, "");
    assert_eq!(masked(repo.root(), &out.stderr), indoc! {r#"
            error: `no-such-branch` does not name a commit of the repository at [project]: couldn't parse revision, input="no-such-branch"
            = help: give a branch, tag or commit (`--base origin/main`, `--head HEAD`)
        "#}
        .to_string()
            + "\n"
    );
}

#[test]
fn a_detached_head_compares_as_a_branch_does() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/dev/values.yaml",
        "size: tiny",
        "size: huge",
    );
    repo.commit("bigger dev");
    repo.git(&["checkout", "-q", "--detach", "HEAD"]);
    let out = repo.diff(&["--affected"]);
    expect(
        &out,
        1,
        indoc! {r#"
            {"include":[{"context":"dev","change":"changed","terraform":["cluster"],"kustomizations":[]}]}
        "#},
    );
}

#[test]
fn a_shallow_clone_without_the_merge_base_says_why() {
    let repo = on_feature("");
    edit(
        &repo,
        "contexts/dev/values.yaml",
        "size: tiny",
        "size: huge",
    );
    repo.commit("bigger dev");
    repo.git(&["checkout", "-q", "main"]);
    edit(
        &repo,
        "contexts/prod/values.yaml",
        "size: big",
        "size: bigger",
    );
    repo.commit("bigger prod");
    let clones = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", repo.root().display());
    repo.git_in(
        clones.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            "--branch",
            "feature",
            &url,
            "clone",
        ],
    );
    let clone = clones.path().join("clone");
    let out = bpc(&clone, &["diff"]);
    assert_eq!(out.status, Some(2));
    assert_eq!(masked(&clone, &out.stderr), indoc! {r#"
            error: HEAD and origin/HEAD have no commit in common
            = note: the repository is a shallow clone, so their common commit may be cut off (fetch with `--unshallow`, or `fetch-depth: 0` in CI)
            = help: name the base: `bpc diff --base REF`
        "#}
        .to_string()
            + "\n"
    );
    // Naming the base works: its commit is in the clone.
    let named = bpc(&clone, &["diff", "--base", "origin/main", "--affected"]);
    expect(
        &named,
        1,
        concat!(
            r#"{"include":[{"context":"dev","change":"changed","terraform":["cluster"],"kustomizations":[]},"#,
            r#"{"context":"prod","change":"changed","terraform":["cluster"],"kustomizations":[]}]}"#,
            "\n"
        ),
    );
}

/// Every file under `dir`, path → contents.
fn tree_of(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.insert(
                    rel.to_string_lossy().to_string(),
                    std::fs::read(&path).expect("read"),
                );
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The 46-context render set, made a repository: a one-line change to one facet is
/// reported for exactly the contexts whose `render --all-contexts` output differs
/// between the two commits.
#[test]
fn on_the_render_set_a_facet_line_affects_exactly_the_contexts_whose_render_differs() {
    let repo = Repo::new();
    let core = crate::common::repo().join("tests/conformance/windsor-core-eaa2bcea");
    let set = crate::common::repo().join("tests/conformance/windsor-render-eaa2bcea");
    copy_dir(
        &core.join("contexts/_template"),
        &repo.root().join("project/contexts/_template"),
    );
    std::fs::copy(
        core.join("windsor.yaml"),
        repo.root().join("project/windsor.yaml"),
    )
    .expect("copy");
    copy_dir(&set.join("contexts"), &repo.root().join("project/contexts"));
    repo.commit("the render set");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    edit(
        &repo,
        "project/contexts/_template/facets/addon-private-dns.yaml",
        "      timeout: 20m\n",
        "      timeout: 25m\n",
    );
    repo.commit("a longer timeout for private DNS");

    let render = |rev: &str, out: &str| {
        repo.git(&["checkout", "-q", rev]);
        let run = bpc(
            &repo.root().join("project"),
            &["render", "--all-contexts", "--out", &format!("../{out}")],
        );
        assert_eq!(run.status, Some(0), "{}", run.stderr);
        repo.root().join(out)
    };
    let (before, after) = (render("main", "before"), render("feature", "after"));
    let mut differ = Vec::new();
    let mut contexts: Vec<String> = std::fs::read_dir(&before)
        .expect("rendered")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    contexts.sort();
    assert_eq!(contexts.len(), 46);
    for context in &contexts {
        if tree_of(&before.join(context)) != tree_of(&after.join(context)) {
            differ.push(context.clone());
        }
    }
    assert!(
        !differ.is_empty() && differ.len() < contexts.len(),
        "the edit should reach some contexts, not all: {differ:?}"
    );

    let out = repo.diff_in(
        "project",
        &["--base", "main", "--head", "feature", "--affected"],
    );
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let listed: Vec<String> = matrix["include"]
        .as_array()
        .expect("include")
        .iter()
        .map(|entry| {
            assert_eq!(
                entry["kustomizations"],
                serde_json::json!(["dns-install"]),
                "{entry}"
            );
            entry["context"].as_str().expect("name").to_string()
        })
        .collect();
    assert_eq!(listed, differ);
}

/// `bpc diff --base main` of `repo`, which differs (exit 1), its output with the
/// registry at `host` shown as `[registry]`: its port is in the commit (the URL) and
/// in the shim (its module source), so ids vary too; the cache directory names it
/// with `_` for `:`.
fn diff_with_registry(repo: &Repo, home: &crate::oci::support::Home, host: &str) -> String {
    use crate::oci::support::WithHome;
    let out = Test::in_project(repo.root())
        .home(home)
        .args(["diff", "--base", "main"])
        .status(1)
        .run();
    let shown = out
        .stdout
        .replace(host, "[registry]")
        .replace(&host.replace(':', "_"), "[registry]");
    regex::Regex::new("(commit|sha256) [0-9a-f]{12}")
        .expect("regex")
        .replace_all(&shown, "$1 [id]")
        .into_owned()
}

/// A project built on a published blueprint moves to its next tag: both versions are
/// pulled from the registry and composed, and the diff says the template changed.
#[test]
fn a_new_oci_tag_is_pulled_and_compared() {
    use crate::oci::support::{self, WithHome};
    let registry = crate::registry!(false);
    let home = support::Home::new();
    let publisher = support::publisher("demo", &[]);
    let v1 = format!("oci://{}/acme/demo:v1", registry.host());
    let v2 = format!("oci://{}/acme/demo:v2", registry.host());
    let push = |url: &str| {
        Test::in_project(publisher.path())
            .home(&home)
            .args(["push", url])
            .run();
    };
    push(&v1);
    support::write(
        publisher.path(),
        "contexts/_template/facets/demo.yaml",
        format!(
            "{FACET_HEAD}metadata:\n  name: demo\nconfig:\n  - name: democfg\n    value:\n      workers: ${{size * 3}}\nterraform:\n  - name: demo-net\n    path: demo/net\n    inputs:\n      workers: ${{democfg.workers}}\nkustomize:\n  - name: demo-app\n    path: demo/app\n"
        ),
    );
    push(&v2);

    let repo = Repo::new();
    repo.write("windsor.yaml", "context: local\n");
    repo.write(".gitignore", ".windsor/\n");
    repo.write("contexts/local/values.yaml", "size: 3\n");
    let blueprint = |url: &str| {
        format!(
            "{BLUEPRINT_HEAD}metadata:\n  name: local\nsources:\n  - name: demo\n    url: {url}\n"
        )
    };
    repo.write("contexts/local/blueprint.yaml", &blueprint(&v1));
    repo.commit("on v1");
    repo.write("contexts/local/blueprint.yaml", &blueprint(&v2));
    let shown = diff_with_registry(&repo, &home, &registry.host());
    assert_eq!(
        shown,
        indoc! {r#"
            base: main (commit [id])
            head: work tree
            template: oci://[registry]/acme/demo:v1 -> oci://[registry]/acme/demo:v2
            context local: changed
              source demo: "oci://[registry]/acme/demo:v1" -> "oci://[registry]/acme/demo:v2"
              terraform demo-net: changed
                file main.tf: 135 bytes, sha256 [id] -> 135 bytes, sha256 [id]
                inputs.workers: 6 -> 9
                  from .windsor/cache/oci/[registry]_acme_demo_v2/_template/facets/demo.yaml:13:16 (demo, 0, merge)
                tfvars.workers: 6 -> 9
                  from .windsor/cache/oci/[registry]_acme_demo_v2/_template/facets/demo.yaml:13:16 (demo, 0, merge)
              rendered flux/sources/ocirepository-demo.json: changed
                spec.ref.tag: "v1" -> "v2"
              rendered terraform/plan.json: changed
                components: [{"id":"demo-net","dir":"terraform/demo-net","path":"demo/net","source":"demo","module":"oci://[registry]/acme/demo:v1//terraform/demo/net","workdir":"terraform/demo-net"}] -> [{"id":"demo-net","dir":"terraform/demo-net","path":"demo/net","source":"demo","module":"oci://[registry]/acme/demo:v2//terraform/demo/net","workdir":"terraform/demo-net"}]
            1 context(s): 1 changed, 0 added, 0 removed, 0 unchanged
        "#}
    );
}

/// A context whose inputs (template, windsor.yaml, its own directory) are the same
/// bytes on both sides cannot differ, and is not composed again: here one that fails
/// to compose on both sides is reported unchanged, not failed.
#[test]
fn a_context_whose_inputs_did_not_change_is_not_composed() {
    let repo = Repo::new();
    small_project(&repo, "");
    // Not YAML: composing this context fails.
    repo.write("contexts/broken/values.yaml", "size: [\n");
    repo.commit("base");
    let broken = repo.diff(&["--base", "main", "--context", "broken", "--head", "main"]);
    assert_eq!(broken.status, Some(0), "{}", broken.stdout);
    edit(
        &repo,
        "contexts/dev/values.yaml",
        "size: tiny",
        "size: huge",
    );
    let out = repo.diff(&["--base", "main", "--affected"]);
    expect(
        &out,
        1,
        concat!(
            r#"{"include":[{"context":"dev","change":"changed","terraform":["cluster"],"kustomizations":[]}]}"#,
            "\n"
        ),
    );
    // Changing the template composes every context again, and the broken one fails.
    edit(
        &repo,
        "contexts/_template/facets/cluster.yaml",
        "region: eu",
        "region: us",
    );
    let out = repo.diff(&["--base", "main", "--context", "broken"]);
    assert_eq!(out.status, Some(2), "{}", out.stdout);
    assert!(
        out.stdout.starts_with(indoc! {"
            base: main (commit e533ed9712a9)
            head: work tree
            context broken: failed on main (commit e533ed9712a9)
        "}),
        "{}",
        out.stdout
    );
}

/// A project whose own template gives way to the published one: the base composes
/// the local template, the head pulls the `oci://` blueprint, and the diff names the
/// template that changed and what it changes.
#[test]
fn a_local_template_replaced_by_a_published_one_is_compared() {
    use crate::oci::support::{self, WithHome};
    let registry = crate::registry!(false);
    let home = support::Home::new();
    let publisher = support::publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1", registry.host());
    Test::in_project(publisher.path())
        .home(&home)
        .args(["push", &url])
        .run();
    let repo = Repo::new();
    repo.write("windsor.yaml", "context: local\n");
    repo.write(".gitignore", ".windsor/\n");
    repo.write("contexts/local/values.yaml", "size: 3\n");
    // The same template, with one input changed, kept in the project.
    let facet =
        std::fs::read_to_string(publisher.path().join("contexts/_template/facets/demo.yaml"))
            .expect("the publisher's facet");
    repo.write(
        "contexts/_template/facets/demo.yaml",
        &facet.replace("${size * 2}", "${size * 5}"),
    );
    for module in [
        "terraform/demo/net/main.tf",
        "terraform/demo/net/variables.tf",
    ] {
        if let Ok(text) = std::fs::read_to_string(publisher.path().join(module)) {
            repo.write(module, &text);
        }
    }
    repo.commit("own template");
    repo.git(&["rm", "-r", "-q", "contexts/_template"]);
    repo.write(
        "contexts/local/blueprint.yaml",
        &format!(
            "{BLUEPRINT_HEAD}metadata:\n  name: local\nsources:\n  - name: demo\n    url: {url}\n"
        ),
    );
    let shown = diff_with_registry(&repo, &home, &registry.host());
    let head = indoc! {r#"
        base: main (commit [id])
        head: work tree
        template: contexts/_template -> oci://[registry]/acme/demo:v1
        context local: changed
          source demo: (none) -> "oci://[registry]/acme/demo:v1"
          source template: (no url) -> (none)
          terraform demo-net: changed
    "#};
    assert!(shown.starts_with(head), "{shown}");
    // The published template's values, with the facet line in the pulled copy.
    for line in [
        "    inputs.workers: 15 -> 6\n      from .windsor/cache/oci/[registry]_acme_demo_v1/_template/facets/demo.yaml:13:16 (demo, 0, merge)\n",
        "    spec.sourceRef.kind: \"GitRepository\" -> \"OCIRepository\"\n",
        "  rendered flux/sources/ocirepository-demo.json: added\n",
        "1 context(s): 1 changed, 0 added, 0 removed, 0 unchanged\n",
    ] {
        assert!(shown.contains(line), "{line} not in\n{shown}");
    }
}
