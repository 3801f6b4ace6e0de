//! `bpc explain` output, compared whole, on the embedded template, the examples and the
//! windsor-core corpus. Together the paths go through every kind of contribution:
//! override by ordinal, replace, field-level remove, a component excluded by its
//! `when`, a config block reading its own input, a deferred `terraform_output`.

use crate::common::*;

/// `bpc explain ARGS…` in the repository directory `dir`, exiting 0; stdout then
/// stderr.
#[track_caller]
fn explain(dir: &str, args: &[&str]) -> String {
    explain_status(dir, args, 0)
}

#[track_caller]
fn explain_status(dir: &str, args: &[&str], status: i32) -> String {
    Test::in_dir(repo().join(dir))
        .arg("explain")
        .args(args.iter().copied())
        .status(status)
        .run()
        .text()
}

/// In `examples/NAME`, with the embedded template.
#[track_caller]
fn example(name: &str, args: &[&str]) -> String {
    let mut all = vec!["--template", "../../_template"];
    all.extend_from_slice(args);
    explain(&format!("examples/{name}"), &all)
}

#[test]
fn deferred_terraform_output() {
    let t = explain("", &["terraform.cluster.inputs.endpoints"]);
    assert_eq!(
        t,
        indoc! {r#"
        terraform.cluster.inputs.endpoints = {"expression":"${terraform_output('compute', 'controlplanes')}"}

        contributions, in order applied:
          1. facet `docker` (_template/facets/provider-docker.yaml:13:5, source `template`), ordinal 200, merge
             ${terraform_output('compute', 'controlplanes')}  (deferred: kept as written until apply)
             → won

        left out:
          - aws (_template/facets/provider-aws.yaml, source `template`, ordinal 200): facet `aws` is not active — when: provider == 'aws'
    "#}
    );
}

#[test]
fn config_block_reading_its_own_input() {
    let t = explain("", &["network.cidr_block"]);
    assert_eq!(
        t,
        indoc! {r#"
        network.cidr_block = "10.0.0.0/16"

        config block `network`, in order applied:
          1. facet `cluster-config` (_template/facets/config-cluster.yaml:9:11, source `template`), ordinal 100, merge
             ${network.cidr_block ?? '10.0.0.0/16'}
             (reads its own input: `network.cidr_block` inside the block is the context value)
    "#}
    );
}

#[test]
fn whole_component_replaced_by_a_later_facet() {
    let t = example("aws-prod", &["kustomize.csi"]);
    assert_eq!(
        t,
        indoc! {r#"
        kustomize.csi = {"name":"csi","path":"csi","dependsOn":["policy-base"],"components":["aws-ebs"]}

        contributions, in order applied:
          1. facet `provider-base` (../../_template/facets/provider-base.yaml:16:5, source `template`), ordinal 199, merge
             → created the component
          2. facet `aws` (../../_template/facets/provider-aws.yaml:22:5, source `template`), ordinal 200, replace
             → replaced everything before it
    "#}
    );
}

#[test]
fn field_level_remove() {
    let t = example("dev-laptop", &["kustomize.policy-base.components"]);
    assert_eq!(
        t,
        indoc! {r#"
        kustomize.policy-base.components = ["kyverno","kyverno/pod-security"]

        contributions, in order applied:
          1. blueprint.yaml (../../_template/blueprint.yaml:14:5), ordinal base, merge
             ["kyverno","kyverno/audit"]
             → partly kept: 1 of 2 values are in the final value
          2. facet `provider-base` (../../_template/facets/provider-base.yaml:8:5, source `template`), ordinal 199, merge
             ["kyverno/pod-security"]
             → kept: merged into the final value
          3. facet `dev` (../../_template/facets/option-dev.yaml:9:5, source `template`), ordinal 300, remove
             ["kyverno/audit"]
             → removed components: kyverno/audit
    "#}
    );
}

#[test]
fn facet_excluded_by_when() {
    let t = explain("", &["--facet", "aws"]);
    assert_eq!(
        t,
        indoc! {r#"
        facet `aws` (_template/facets/provider-aws.yaml, source `template`), ordinal 200: inactive
          when: provider == 'aws'
            provider = "docker"

        contributions:
          terraform.network: left out, facet `aws` is not active
          terraform.cluster: left out, facet `aws` is not active
          kustomize.csi: left out, facet `aws` is not active
    "#}
    );
}

#[test]
fn context_value_and_unknown_path_suggestions() {
    let t = explain("", &["cluster.workers.count"]);
    assert_eq!(
        t,
        indoc! {"
        cluster.workers.count = 2

        context value: 2
    "}
    );
    let t = explain_status("", &["terraform.clustr.inputs"], 1);
    assert_eq!(
        t,
        indoc! {"
        error: no value at `terraform.clustr.inputs`; closest paths: terraform.cluster.inputs, terraform.cluster.path, terraform.compute.inputs

    "}
    );
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
    );
    assert_eq!(
        t,
        indoc! {r#"
        kustomize.telemetry-base.components = ["prometheus","prometheus/flux","filebeat"]

        contributions, in order applied:
          1. facet `provider-base` (contexts/_template/facets/provider-base.yaml:59:3, source `template`), ordinal 199, merge
             ["prometheus","prometheus/flux","fluentbit"]
             → overridden
          2. facet `observability` (contexts/_template/facets/addon-observability.yaml:86:3, source `template`), ordinal 400, replace
             ["prometheus","prometheus/flux","filebeat"]
             → won
    "#}
    );
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
    assert_eq!(
        out.text(),
        indoc! {r#"
        kustomize.ingress.components = ["traefik"]

        contributions, in order applied:
          1. facet `a` (_template/facets/a.yaml:7:5, source `template`), ordinal 100, merge
             ["nginx"]
             → overridden
          2. facet `b` (_template/facets/b.yaml:7:5, source `template`), ordinal 200, merge
             ["nginx/web"]
             → overridden
          3. facet `c` (_template/facets/c.yaml:7:5, source `template`), ordinal 300, replace
             ["traefik","traefik/web"]
             → partly kept: 1 of 2 values are in the final value
          4. facet `d` (_template/facets/d.yaml:7:5, source `template`), ordinal 400, remove
             ["traefik/web"]
             → removed components: traefik/web
    "#}
    );
}

#[test]
fn values_bpc_sets_itself_name_their_rule() {
    // No facet writes the path, the CRDs dependency or the global system's install
    // tier: each is there by a rule of bpc's, and `explain` names it.
    let out = Test::new()
        .windsor("context: dev\n")
        .facet(
            "a.yaml",
            indoc! {"
                metadata:
                  name: a
                crds: [cert-manager]
                kustomize:
                  - name: app
                    components: [x]
                flux:
                  - name: gateway
                    globalDependency: true
                    install:
                      components: [a]
            "},
        )
        .args(["explain", "kustomize.app"])
        .run();
    assert_eq!(
        out.text(),
        indoc! {r#"
        kustomize.app = {"name":"app","path":"app","dependsOn":["crds","gateway-install"],"components":["x"]}

        contributions, in order applied:
          1. facet `a` (_template/facets/a.yaml:7:5, source `template`), ordinal 0, merge
             → created the component

        set by bpc:
          - kustomize.app.path = "app": a Flux Kustomization's `path` defaults to its name (S9)
          - kustomize.app.dependsOn[0] = "crds": the blueprint has CRDs: a kustomization that depends on nothing else depends on the CRDs layer (S10)
          - kustomize.app.dependsOn[1] = "gateway-install": a flux system with `globalDependency: true` comes before every kustomization it does not depend on itself (S10)
    "#}
    );
}

/// Only `explain` shows the `${…}` text behind a value, so a run that writes its
/// blueprint and exits (`bpc compose`, `bpc render`) composes without keeping them;
/// every other session keeps them.
#[test]
fn the_expression_behind_a_value_is_kept_only_where_it_may_be_explained() {
    use bpc::compose::model::for_explain::ForExplain;
    use bpc::files::FileMap;
    use bpc::session::{Options, Session};
    use std::sync::Arc;
    let facet = format!(
        "{FACET_HEAD}metadata:\n  name: net\nterraform:\n  - name: network\n    path: net\n    inputs:\n      region: \"${{region ?? 'eu-west-1'}}\"\n"
    );
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/net.yaml", facet.as_str()),
    ]);
    let expression_of_region = |texts| {
        let options = Options {
            for_explain: texts,
            ..Options::at(dir.path())
        };
        let session = Session::open(options, Arc::new(FileMap::new())).expect("loads");
        let composition = session.compose().expect("composes");
        let network = &composition.terraform.components["network"];
        let region = network
            .get("inputs")
            .and_then(|inputs| inputs.get("region"))
            .expect("the region input");
        composition.origins.get(region.origin()).expression
    };
    assert_eq!(
        expression_of_region(ForExplain::Kept).as_deref(),
        Some("${region ?? 'eu-west-1'}")
    );
    assert_eq!(expression_of_region(ForExplain::Dropped), None);
}
