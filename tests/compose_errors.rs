//! Every class of composition error, with the rendered message: file:line:col, the
//! source line and a caret, and what was being evaluated. Each snapshot shows the
//! project and the command that produced it above the message. (`.facet` adds the
//! two-line facet head, so line N of a facet body below is line N+2 in the messages.)

use crate::common::*;

/// `bpc compose` must fail; its stderr, snapshot as NAME with the input above it.
#[track_caller]
fn error(test: Test, name: &str) -> String {
    let out = test.compose().status(1).run();
    snap!(name, out.with_input("stderr", &out.stderr));
    out.stderr
}

#[test]
fn duplicate_facet_names_name_both_files() {
    let test = Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: same
        "},
        )
        .facet(
            "b.yaml",
            indoc! {"
            metadata:
              name: same
        "},
        );
    let e = error(test, "error_duplicate_facet");
    assert!(
        e.contains("facets/a.yaml") && e.contains("facets/b.yaml"),
        "{e}"
    );
}

#[test]
fn missing_kind_is_reported_at_the_file() {
    let test = Test::new().file(
        "_template/facets/x.yaml",
        indoc! {"
            apiVersion: blueprints.windsorcli.dev/v1alpha1
            metadata:
              name: x
        "},
    );
    let e = error(test, "error_missing_kind");
    assert!(e.contains("facets/x.yaml:1:1"), "{e}");
}

#[test]
fn expression_errors_point_inside_the_dollar_brace() {
    let test = Test::new().facet(
        "provider-x.yaml",
        indoc! {r#"
            metadata:
              name: x
            terraform:
              - name: net
                path: net
                inputs:
                  cidr: "prefix-${network.cidr +}"
        "#},
    );
    let e = error(test, "error_expression_column");
    // Line 9 of the file (the facet head adds two lines); the caret sits inside ${…}.
    assert!(e.contains("facets/provider-x.yaml:9:"), "{e}");
}

#[test]
fn non_boolean_when_is_an_error() {
    let test = Test::new()
        .facet(
            "x.yaml",
            indoc! {"
            metadata:
              name: x
            when: provider
        "},
        )
        .args(["--set", "provider=aws"]);
    let e = error(test, "error_when_not_boolean");
    assert!(e.contains("boolean"), "{e}");
}

#[test]
fn config_cycles_print_the_chain() {
    let test = Test::new().facet(
        "config-x.yaml",
        indoc! {"
            metadata:
              name: x
            config:
              - name: a
                x: ${b.y}
              - name: b
                y: ${a.x}
            terraform:
              - name: t
                path: t
                inputs:
                  v: ${a.x}
        "},
    );
    let e = error(test, "error_config_cycle");
    assert!(e.contains("a.x -> b.y -> a.x"), "{e}");
}

#[test]
fn missing_dependency_says_which_when_left_it_out() {
    let test = Test::new()
        .facet(
            "option-ingress.yaml",
            indoc! {"
            metadata:
              name: ingress
            when: ingress.enabled == true
            kustomize:
              - name: ingress
                path: ingress
        "},
        )
        .facet(
            "addon-store.yaml",
            indoc! {"
            metadata:
              name: store
            kustomize:
              - name: minio
                path: minio
                dependsOn: [ingress]
        "},
        )
        .args(["--set", "ingress.enabled=false"]);
    let e = error(test, "error_missing_dependency");
    assert!(e.contains("ingress.enabled == true"), "{e}");
    assert!(e.contains("option-ingress.yaml"), "{e}");
}

#[test]
fn missing_dependency_on_an_inactive_flux_system_names_it() {
    // `policy` is a flux system, so dependents need its tiers (`policy-install`, …);
    // the facet that defines it is off.
    let test = Test::new()
        .facet(
            "option-policy.yaml",
            indoc! {"
            metadata:
              name: policy
            when: policy.enabled == true
            flux:
              - name: policy
                install:
                  components: [kyverno]
        "},
        )
        .facet(
            "addon-apps.yaml",
            indoc! {"
            metadata:
              name: apps
            kustomize:
              - name: apps
                path: apps
                dependsOn: [policy]
        "},
        )
        .args(["--set", "policy.enabled=false"]);
    let e = error(test, "error_missing_flux_system_dependency");
    assert!(e.contains("flux system"), "{e}");
    assert!(e.contains("policy.enabled == true"), "{e}");
    assert!(!e.contains("no facet defines"), "{e}");
}

#[test]
fn dependency_cycles_are_printed_whole() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: x
            kustomize:
              - name: a
                dependsOn: [b]
              - name: b
                dependsOn: [c]
              - name: c
                dependsOn: [a]
        "},
    );
    let e = error(test, "error_dependency_cycle");
    assert!(e.contains("a -> b -> c -> a"), "{e}");
}

/// A project whose values break two rules of its schema.
fn violating() -> Test {
    Test::new()
        .schema(indoc! {"
            $schema: https://json-schema.org/draft/2020-12/schema
            type: object
            properties:
              provider:
                type: string
                enum: [aws, docker]
              cluster:
                type: object
                properties:
                  workers:
                    type: integer
        "})
        .values(
            "local",
            indoc! {"
            provider: gcp
            cluster:
              workers: many
        "},
        )
        .facet(
            "x.yaml",
            indoc! {"
            metadata:
              name: x
        "},
        )
}

/// Under `--strict` the warnings fail the run (docs/semantics.md S4).
#[test]
fn schema_violations_are_all_reported() {
    let e = error(violating().arg("--strict"), "error_schema_violations");
    assert!(
        e.contains("provider") && e.contains("cluster.workers"),
        "{e}"
    );
    assert!(e.contains("contexts/local/values.yaml:1:11"), "{e}");
    assert!(e.contains("/properties/provider/enum"), "{e}");
}

/// By default a violation warns, naming the line and the schema path, and composition
/// goes on with the value as written, as in the Windsor CLI.
#[test]
fn schema_violations_warn_and_compose_goes_on() {
    let out = violating().compose().status(0).run();
    for want in [
        "warning: invalid value at `provider`",
        "contexts/local/values.yaml:1:11",
        "at /properties/provider/enum",
        "warning: invalid value at `cluster.workers`",
        "contexts/local/values.yaml:3:12",
    ] {
        assert!(out.stderr.contains(want), "{want} in {}", out.stderr);
    }
    assert!(out.stdout.contains("kind: Blueprint"), "{}", out.stdout);
}

#[test]
fn unclosed_interpolation_is_an_error() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {r#"
            metadata:
              name: x
            kustomize:
              - name: k
                substitutions:
                  a: "${provider"
        "#},
    );
    let e = error(test, "error_unclosed_interpolation");
    assert!(e.contains("facets/x.yaml:8:"), "{e}");
}

#[test]
fn file_functions_cannot_leave_the_template() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: x
            kustomize:
              - name: k
                substitutions:
                  a: ${file('../../../../etc/passwd')}
        "},
    );
    let e = error(test, "error_file_escape");
    assert!(!e.contains("root:"), "{e}");
}

#[test]
fn activation_that_never_settles_names_the_facets() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: flip
            when: flag == null
            config:
              - name: flag
                value: true
        "},
    );
    let e = error(test, "error_activation_flips");
    assert!(e.contains("flip"), "{e}");
}
