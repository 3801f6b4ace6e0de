//! `bpc explain` output, snapshot-tested on the embedded template, the examples and the
//! windsor-core corpus. Together the paths go through every kind of contribution:
//! override by ordinal, replace, field-level remove, a component excluded by its
//! `when`, a config block reading its own input, a deferred `terraform_output`.

use crate::common::*;

/// `bpc explain ARGS…` in the repository directory `dir`, exiting 0; stdout then
/// stderr, snapshot as NAME below the command that printed it.
#[track_caller]
fn explain(dir: &str, args: &[&str], name: &str) -> String {
    explain_status(dir, args, name, 0)
}

#[track_caller]
fn explain_status(dir: &str, args: &[&str], name: &str, status: i32) -> String {
    let out = Test::in_dir(repo().join(dir))
        .arg("explain")
        .args(args.iter().copied())
        .status(status)
        .run();
    let text = out.text();
    snap!(name, out.with_input("output", &text));
    text
}

/// In `examples/NAME`, with the embedded template.
#[track_caller]
fn example(name: &str, args: &[&str], snapshot: &str) -> String {
    let mut all = vec!["--template", "../../_template"];
    all.extend_from_slice(args);
    explain(&format!("examples/{name}"), &all, snapshot)
}

#[test]
fn deferred_terraform_output() {
    let t = explain(
        "",
        &["terraform.cluster.inputs.endpoints"],
        "explain_deferred_output",
    );
    assert!(t.contains("terraform_output"), "{t}");
}

#[test]
fn config_block_reading_its_own_input() {
    let t = explain(
        "",
        &["network.cidr_block"],
        "explain_config_block_own_input",
    );
    assert!(t.contains("cluster-config"), "{t}");
}

#[test]
fn whole_component_replaced_by_a_later_facet() {
    let t = example("aws-prod", &["kustomize.csi"], "explain_replace");
    assert!(t.contains("replace"), "{t}");
}

#[test]
fn field_level_remove() {
    let t = example(
        "dev-laptop",
        &["kustomize.policy-base.components"],
        "explain_field_remove",
    );
    assert!(t.contains("remove"), "{t}");
}

#[test]
fn facet_excluded_by_when() {
    let t = explain("", &["--facet", "aws"], "explain_facet_inactive");
    assert!(t.contains("provider == 'aws'"), "{t}");
}

#[test]
fn context_value_and_unknown_path_suggestions() {
    explain("", &["cluster.workers.count"], "explain_context_value");
    let t = explain_status("", &["terraform.clustr.inputs"], "explain_unknown_path", 1);
    assert!(t.contains("terraform.cluster"), "{t}");
}

#[test]
fn corpus_override_by_ordinal_and_replace() {
    let t = explain(
        "tests/conformance/windsor-core-75d2a6c1",
        &[
            // `platform`, not the older `provider`: Windsor gives a context named
            // `local` `platform: docker` unless set (docs/semantics.md S4).
            "--set",
            "platform=metal",
            "--set",
            "dns.domain=elk.example.com",
            "--set",
            "addons.observability.enabled=true",
            "--set",
            "addons.observability.logs_driver=elasticsearch",
            "kustomize.telemetry-base.components",
        ],
        "explain_corpus_ordinal_replace",
    );
    assert!(t.contains("ordinal 400, replace"), "{t}");
    assert!(t.contains("overridden"), "{t}");
}

/// A small project written out in full: a value created, merged into, replaced and
/// partly removed by four facets, and the explanation of each step.
#[test]
fn every_strategy_on_one_component() {
    let out = Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: a
            ordinal: 100
            kustomize:
              - name: ingress
                components: [nginx]
        "},
        )
        .facet(
            "b.yaml",
            indoc! {"
            metadata:
              name: b
            ordinal: 200
            kustomize:
              - name: ingress
                components: [nginx/web]
        "},
        )
        .facet(
            "c.yaml",
            indoc! {"
            metadata:
              name: c
            ordinal: 300
            kustomize:
              - name: ingress
                strategy: replace
                components: [traefik, traefik/web]
        "},
        )
        .facet(
            "d.yaml",
            indoc! {"
            metadata:
              name: d
            ordinal: 400
            kustomize:
              - name: ingress
                strategy: remove
                components: [traefik/web]
        "},
        )
        .args(["explain", "kustomize.ingress.components"])
        .run();
    let text = out.text();
    assert!(
        text.contains("replace") && text.contains("remove") && text.contains("d.yaml"),
        "{text}"
    );
    snap!("explain_every_strategy", out.with_input("output", &text));
}
