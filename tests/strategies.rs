//! The merge strategies of components (`docs/semantics.md` S3, S9), one document each:
//! the facets that contribute to a component, then the blueprint `bpc compose` prints.
//! Facets carry explicit ordinals, so which contribution comes later is written down.

use crate::common::*;

/// The blueprint of context `local` with these components: what every project here
/// composes to around its `terraform:` and `kustomize:` sections (`local` is a dev
/// context with a workstation, so it has a dev repository and `DOMAIN: test`, S4).
fn blueprint(components: &str) -> String {
    let head = indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: local
          description: Blueprint for the local context
        repository:
          url: http://git.test/git/project
          ref:
            branch: main
          secretName: flux-system
        sources:
        - name: template
          install: true
    "};
    let tail = indoc! {"
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "};
    format!("{head}{components}{tail}")
}

#[test]
fn merge_deep_merges_inputs_and_empty_values_never_erase() {
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            ordinal: 100
            terraform:
              - name: cluster
                path: cluster/talos
                inputs:
                  nodes:
                    count: 1
                    size: small
                  tags:
                    team: core
                  endpoint: https://a
        "},
        )
        .facet(
            "more.yaml",
            indoc! {r#"
            metadata:
              name: more
            ordinal: 200
            terraform:
              - name: cluster
                inputs:
                  nodes:
                    count: 3
                  tags:
                    env: prod
                  endpoint: ""
                  extra: []
        "#},
        )
        // Inputs come out with sorted keys, as the Windsor CLI writes a Go map.
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: cluster
              path: cluster/talos
              inputs:
                endpoint: https://a
                extra: []
                nodes:
                  count: 3
                  size: small
                tags:
                  env: prod
                  team: core
        "}))
        .run();
}

#[test]
fn merge_appends_lists_and_replaces_other_fields() {
    // Kustomization `dependsOn` and two merged `components` lists come out sorted,
    // terraform `dependsOn` keeps first-seen order, patches append, `interval` is
    // replaced (and printed in Go's spelling), substitutions merge.
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            ordinal: 100
            terraform:
              - name: network
                path: network
              - name: dns
                path: dns
              - name: cluster
                path: cluster
                dependsOn: [network]
            kustomize:
              - name: cni
              - name: csi
              - name: ingress
                path: ingress
                interval: 5m
                dependsOn: [csi]
                components: [nginx, nginx/web]
                substitutions:
                  host: a.example.com
                patches:
                  - path: patches/a.yaml
        "},
        )
        .facet(
            "more.yaml",
            indoc! {r#"
            metadata:
              name: more
            ordinal: 200
            terraform:
              - name: cluster
                dependsOn: [dns, network]
            kustomize:
              - name: ingress
                interval: 10m
                dependsOn: [cni]
                components: [nginx/lb, cert-manager]
                substitutions:
                  port: "443"
                patches:
                  - path: patches/b.yaml
        "#},
        )
        .compose()
        .stdout(blueprint(indoc! {r#"
            terraform:
            - name: dns
              path: dns
            - name: network
              path: network
            - name: cluster
              path: cluster
              dependsOn:
              - network
              - dns
            kustomize:
            - name: cni
            - name: csi
            - name: ingress
              path: ingress
              dependsOn:
              - cni
              - csi
              interval: 10m0s
              patches:
              - path: patches/a.yaml
              - path: patches/b.yaml
              components:
              - cert-manager
              - nginx
              - nginx/lb
              - nginx/web
              substitutions:
                host: a.example.com
                port: "443"
        "#}))
        .run();
}

#[test]
fn replace_drops_every_earlier_field() {
    Test::new()
        .facet(
            "base.yaml",
            indoc! {r#"
            metadata:
              name: base
            ordinal: 100
            terraform:
              - name: cluster
                path: cluster/talos
                parallelism: 2
                inputs:
                  nodes: 3
                  version: "1.30"
            kustomize:
              - name: csi
                path: csi/longhorn
                components: [longhorn, longhorn/backup]
                substitutions:
                  replicas: "3"
        "#},
        )
        .facet(
            "more.yaml",
            indoc! {"
            metadata:
              name: more
            ordinal: 200
            terraform:
              - name: cluster
                strategy: replace
                path: cluster/eks
                inputs:
                  region: us-east-1
            kustomize:
              - name: csi
                strategy: replace
                path: csi/ebs
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: cluster
              path: cluster/eks
              inputs:
                region: us-east-1
            kustomize:
            - name: csi
              path: csi/ebs
        "}))
        .run();
}

#[test]
fn remove_with_only_the_name_deletes_the_component() {
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            ordinal: 100
            terraform:
              - name: network
                path: network
              - name: cluster
                path: cluster
            kustomize:
              - name: monitoring
              - name: policy
        "},
        )
        .facet(
            "more.yaml",
            indoc! {"
            metadata:
              name: more
            ordinal: 200
            terraform:
              - name: cluster
                strategy: remove
            kustomize:
              - name: monitoring
                strategy: remove
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: network
              path: network
            kustomize:
            - name: policy
        "}))
        .run();
}

#[test]
fn remove_with_items_deletes_exactly_those() {
    // Nested input keys, list items and substitution keys; the rest stays.
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            ordinal: 100
            terraform:
              - name: network
                path: network
              - name: cluster
                path: cluster
                dependsOn: [network]
                inputs:
                  nodes:
                    count: 3
                    size: small
                  debug: true
            kustomize:
              - name: policy
                path: policy
                components: [kyverno, kyverno/policies, audit]
                substitutions:
                  mode: enforce
                  level: high
        "},
        )
        .facet(
            "more.yaml",
            indoc! {"
            metadata:
              name: more
            ordinal: 200
            terraform:
              - name: cluster
                strategy: remove
                inputs:
                  nodes:
                    size: small
                  debug: true
            kustomize:
              - name: policy
                strategy: remove
                components: [audit]
                substitutions:
                  level: high
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: network
              path: network
            - name: cluster
              path: cluster
              dependsOn:
              - network
              inputs:
                nodes:
                  count: 3
            kustomize:
            - name: policy
              path: policy
              components:
              - kyverno
              - kyverno/policies
              substitutions:
                mode: enforce
        "}))
        .run();
}

#[test]
fn a_later_merge_merges_into_what_a_remove_left() {
    // The removal drops the `dependsOn` item; the last facet adds a component.
    Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: a
            ordinal: 100
            kustomize:
              - name: cni
              - name: ingress
                path: ingress
                dependsOn: [cni]
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
                strategy: remove
                dependsOn: [cni]
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
                components: [nginx/lb]
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            kustomize:
            - name: cni
            - name: ingress
              path: ingress
              components:
              - nginx
              - nginx/lb
        "}))
        .run();
}

#[test]
fn strategies_on_a_component_not_yet_defined() {
    // `merge` and `replace` define it; `remove` of nothing is no error and leaves nothing.
    Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: a
            kustomize:
              - name: early-merge
                components: [x]
              - name: early-replace
                strategy: replace
                path: r
              - name: early-remove
                strategy: remove
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            kustomize:
            - name: early-merge
              components:
              - x
            - name: early-replace
              path: r
        "}))
        .run();
}

#[test]
fn the_higher_ordinal_wins_whatever_the_file_order() {
    // a.yaml is read first but has the higher facet ordinal, so its `size` wins; its
    // `network` contribution has a component ordinal of 50, below b's 100, so b's wins.
    Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: a
            ordinal: 300
            terraform:
              - name: cluster
                inputs:
                  size: large
              - name: network
                ordinal: 50
                inputs:
                  cidr: 10.1.0.0/16
        "},
        )
        .facet(
            "b.yaml",
            indoc! {"
            metadata:
              name: b
            ordinal: 100
            terraform:
              - name: cluster
                path: cluster
                inputs:
                  size: small
              - name: network
                path: network
                inputs:
                  cidr: 10.0.0.0/16
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: cluster
              path: cluster
              inputs:
                size: large
            - name: network
              path: network
              inputs:
                cidr: 10.0.0.0/16
        "}))
        .run();
}

/// Empty collections are left out of the blueprint, as Windsor's `omitempty` Go fields
/// are (checked with the Windsor CLI 7b6bca77): `inputs: {}`, `components: []`,
/// `substitutions: {}`, `patches: []`, also inside flux tiers. An empty tier stays.
#[test]
fn empty_collections_are_left_out() {
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            terraform:
              - name: a
                path: a
                inputs: {}
            kustomize:
              - name: k
                components: []
                substitutions: {}
                patches: []
            flux:
              - name: s
                install:
                  components: [x]
                  substitutions: {}
                resources:
                  - components: []
                    substitutions: {}
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            terraform:
            - name: a
              path: a
            kustomize:
            - name: k
            flux:
            - name: s
              source: template
              install:
                components:
                - x
              resources:
              - {}
        "}))
        .run();
}

/// A plain kustomization depending on a flux system by its bare name depends on its
/// install tier, as Windsor's `resolveTierDependencies` rewrites it (checked with the
/// Windsor CLI 7b6bca77); a system without an install tier is not a target.
#[test]
fn a_bare_system_name_in_a_plain_dependency_means_its_install_tier() {
    Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            flux:
              - name: cni
                install:
                  components: [cilium]
            kustomize:
              - name: app
                dependsOn: [cni]
        "},
        )
        .compose()
        .stdout(blueprint(indoc! {"
            kustomize:
            - name: app
              dependsOn:
              - cni-install
            flux:
            - name: cni
              source: template
              install:
                components:
                - cilium
        "}))
        .run();
    let out = Test::new()
        .facet(
            "base.yaml",
            indoc! {"
            metadata:
              name: base
            flux:
              - name: gitops
                resources:
                  - components: [flux]
            kustomize:
              - name: app
                dependsOn: [gitops]
        "},
        )
        .compose()
        .failure()
        .run();
    assert_eq!(
        out.stderr,
        indoc! {"
        error: kustomization `app` depends on `gitops`, which is not in the blueprint
          --> _template/facets/base.yaml:11:17
           |
        11 |     dependsOn: [gitops]
           |                 ^^^^^^ no kustomization named `gitops`
           |
           = note: `gitops` is a flux system without an install tier (`gitops-install`), which its bare name stands for
           = help: depend on one of its tiers: `gitops-resources`

    "}
    );
}
