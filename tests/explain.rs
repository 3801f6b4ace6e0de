//! `bpc explain` output, snapshot-tested on the embedded template, the examples and the
//! windsor-core corpus. Together the paths go through every kind of contribution:
//! override by ordinal, replace, field-level remove, a component excluded by its
//! `when`, a config block reading its own input, a deferred `terraform_output`.

mod common;

use common::repo;
use std::path::Path;
use std::process::Command;

/// Runs `bpc explain ARGS…` in `dir`; the text of stdout and stderr, paths relative.
fn explain(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bpc"))
        .arg("explain")
        .args(args)
        .current_dir(dir)
        .env_remove("WINDSOR_CONTEXT")
        .env("NO_COLOR", "1")
        .output()
        .expect("run bpc");
    let mut text = String::from_utf8_lossy(&out.stdout).to_string();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text
}

fn snap(name: &str, text: String) {
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

fn example(name: &str, args: &[&str]) -> String {
    let mut all = vec!["--template", "../../_template"];
    all.extend_from_slice(args);
    explain(&repo().join("examples").join(name), &all)
}

#[test]
fn deferred_terraform_output() {
    let t = explain(&repo(), &["terraform.cluster.inputs.endpoints"]);
    assert!(t.contains("terraform_output"), "{t}");
    snap("explain_deferred_output", t);
}

#[test]
fn config_block_reading_its_own_input() {
    let t = explain(&repo(), &["network.cidr_block"]);
    assert!(t.contains("cluster-config"), "{t}");
    snap("explain_config_block_own_input", t);
}

#[test]
fn whole_component_replaced_by_a_later_facet() {
    let t = example("aws-prod", &["kustomize.csi"]);
    assert!(t.contains("replace"), "{t}");
    snap("explain_replace", t);
}

#[test]
fn field_level_remove() {
    let t = example("dev-laptop", &["kustomize.policy-base.components"]);
    assert!(t.contains("remove"), "{t}");
    snap("explain_field_remove", t);
}

#[test]
fn facet_excluded_by_when() {
    let t = explain(&repo(), &["--facet", "aws"]);
    assert!(t.contains("provider == 'aws'"), "{t}");
    snap("explain_facet_inactive", t);
}

#[test]
fn context_value_and_unknown_path_suggestions() {
    let t = explain(&repo(), &["cluster.workers.count"]);
    snap("explain_context_value", t);
    let t = explain(&repo(), &["terraform.clustr.inputs"]);
    assert!(t.contains("terraform.cluster"), "{t}");
    snap("explain_unknown_path", t);
}

#[test]
fn corpus_override_by_ordinal_and_replace() {
    let corpus = repo().join("tests/conformance/windsor-core-75d2a6c1");
    let t = explain(
        &corpus,
        &[
            "--set",
            "provider=metal",
            "--set",
            "dns.domain=elk.example.com",
            "--set",
            "addons.observability.enabled=true",
            "--set",
            "addons.observability.logs_driver=elasticsearch",
            "kustomize.telemetry-base.components",
        ],
    );
    assert!(t.contains("ordinal 400, replace"), "{t}");
    assert!(t.contains("overridden"), "{t}");
    snap("explain_corpus_ordinal_replace", t);
}
