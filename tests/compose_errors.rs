//! Every class of composition error, with the rendered message: file:line:col, the
//! source line and a caret, and what was being evaluated.

mod common;
use common::*;

fn template(facets: &[(&str, &str)]) -> tempfile::TempDir {
    let mut files: Vec<(String, String)> = facets
        .iter()
        .map(|(name, body)| {
            (
                format!("_template/facets/{name}"),
                format!("{FACET_HEAD}{body}"),
            )
        })
        .collect();
    files.push(("windsor.yaml".into(), "version: v1alpha1\n".into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    project(&refs)
}

fn error_of(facets: &[(&str, &str)], sets: &[&str]) -> String {
    let dir = template(facets);
    compose(&args(dir.path(), None, sets)).expect_err("composition should fail")
}

fn snap(name: &str, text: String) {
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn duplicate_facet_names_name_both_files() {
    let e = error_of(
        &[
            ("a.yaml", "metadata:\n  name: same\n"),
            ("b.yaml", "metadata:\n  name: same\n"),
        ],
        &[],
    );
    assert!(
        e.contains("facets/a.yaml") && e.contains("facets/b.yaml"),
        "{e}"
    );
    snap("error_duplicate_facet", e);
}

#[test]
fn missing_kind_is_reported_at_the_file() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/x.yaml",
            "apiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: x\n",
        ),
    ]);
    let e = compose(&args(dir.path(), None, &[])).expect_err("fails");
    assert!(e.contains("facets/x.yaml:1:1"), "{e}");
    snap("error_missing_kind", e);
}

#[test]
fn expression_errors_point_inside_the_dollar_brace() {
    let e = error_of(
        &[(
            "provider-x.yaml",
            "metadata:\n  name: x\nterraform:\n  - name: net\n    path: net\n    inputs:\n      cidr: \"prefix-${network.cidr +}\"\n",
        )],
        &[],
    );
    // Line 9 of the file (the facet head adds two lines); the caret sits inside ${…}.
    assert!(e.contains("facets/provider-x.yaml:9:"), "{e}");
    snap("error_expression_column", e);
}

#[test]
fn non_boolean_when_is_an_error() {
    let e = error_of(
        &[("x.yaml", "metadata:\n  name: x\nwhen: provider\n")],
        &["provider=aws"],
    );
    assert!(e.contains("boolean"), "{e}");
    snap("error_when_not_boolean", e);
}

#[test]
fn config_cycles_print_the_chain() {
    let e = error_of(
        &[(
            "config-x.yaml",
            "metadata:\n  name: x\nconfig:\n  - name: a\n    x: ${b.y}\n  - name: b\n    y: ${a.x}\nterraform:\n  - name: t\n    path: t\n    inputs:\n      v: ${a.x}\n",
        )],
        &[],
    );
    assert!(e.contains("a.x -> b.y -> a.x"), "{e}");
    snap("error_config_cycle", e);
}

#[test]
fn missing_dependency_says_which_when_left_it_out() {
    let e = error_of(
        &[
            (
                "option-ingress.yaml",
                "metadata:\n  name: ingress\nwhen: ingress.enabled == true\nkustomize:\n  - name: ingress\n    path: ingress\n",
            ),
            (
                "addon-store.yaml",
                "metadata:\n  name: store\nkustomize:\n  - name: minio\n    path: minio\n    dependsOn: [ingress]\n",
            ),
        ],
        &["ingress.enabled=false"],
    );
    assert!(e.contains("ingress.enabled == true"), "{e}");
    assert!(e.contains("option-ingress.yaml"), "{e}");
    snap("error_missing_dependency", e);
}

#[test]
fn missing_dependency_on_an_inactive_flux_system_names_it() {
    // `policy` is a flux system, so dependents need its tiers (`policy-install`, …);
    // the facet that defines it is off.
    let e = error_of(
        &[
            (
                "option-policy.yaml",
                "metadata:\n  name: policy\nwhen: policy.enabled == true\nflux:\n  - name: policy\n    install:\n      components: [kyverno]\n",
            ),
            (
                "addon-apps.yaml",
                "metadata:\n  name: apps\nkustomize:\n  - name: apps\n    path: apps\n    dependsOn: [policy]\n",
            ),
        ],
        &["policy.enabled=false"],
    );
    assert!(e.contains("flux system"), "{e}");
    assert!(e.contains("policy.enabled == true"), "{e}");
    assert!(!e.contains("no facet defines"), "{e}");
    snap("error_missing_flux_system_dependency", e);
}

#[test]
fn dependency_cycles_are_printed_whole() {
    let e = error_of(
        &[(
            "x.yaml",
            "metadata:\n  name: x\nkustomize:\n  - name: a\n    dependsOn: [b]\n  - name: b\n    dependsOn: [c]\n  - name: c\n    dependsOn: [a]\n",
        )],
        &[],
    );
    assert!(e.contains("a -> b -> c -> a"), "{e}");
    snap("error_dependency_cycle", e);
}

#[test]
fn schema_violations_are_all_reported() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/schema.yaml",
            "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  provider:\n    type: string\n    enum: [aws, docker]\n  cluster:\n    type: object\n    properties:\n      workers:\n        type: integer\n",
        ),
        ("contexts/local/values.yaml", "provider: gcp\ncluster:\n  workers: many\n"),
        ("_template/facets/x.yaml", &format!("{FACET_HEAD}metadata:\n  name: x\n")),
    ]);
    let e = compose(&args(dir.path(), None, &[])).expect_err("fails");
    assert!(
        e.contains("provider") && e.contains("cluster.workers"),
        "{e}"
    );
    assert!(e.contains("contexts/local/values.yaml:1:"), "{e}");
    snap("error_schema_violations", e);
}

#[test]
fn unclosed_interpolation_is_an_error() {
    let e = error_of(
        &[("x.yaml", "metadata:\n  name: x\nkustomize:\n  - name: k\n    substitutions:\n      a: \"${provider\"\n")],
        &[],
    );
    snap("error_unclosed_interpolation", e);
}

#[test]
fn file_functions_cannot_leave_the_template() {
    let e = error_of(
        &[("x.yaml", "metadata:\n  name: x\nkustomize:\n  - name: k\n    substitutions:\n      a: ${file('../../../../etc/passwd')}\n")],
        &[],
    );
    assert!(!e.contains("root:"), "{e}");
    snap("error_file_escape", e);
}

#[test]
fn activation_that_never_settles_names_the_facets() {
    let e = error_of(
        &[(
            "x.yaml",
            "metadata:\n  name: flip\nwhen: flag == null\nconfig:\n  - name: flag\n    value: true\n",
        )],
        &[],
    );
    assert!(e.contains("flip"), "{e}");
    snap("error_activation_flips", e);
}
