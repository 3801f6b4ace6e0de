//! The example projects under `examples/` composed with the embedded `_template/`,
//! snapshot-tested (design S10: byte-stable output).

use crate::common::*;

/// `bpc compose` of `examples/NAME` with the embedded template (and `extra` flags).
#[track_caller]
fn compose_example(name: &str, extra: &[&str]) -> String {
    Test::in_dir(repo().join("examples").join(name))
        .compose()
        .args(["--template", "../../_template"])
        .args(extra.iter().copied())
        .run()
        .stdout
}

#[test]
fn embedded_template_composes_with_no_arguments() {
    let out = Test::in_dir(repo()).compose().run().stdout;
    snap!("compose_examples__template_default", &out);
}

#[test]
fn docker_local() {
    let out = compose_example("docker-local", &[]);
    snap!("compose_examples__example_docker_local", &out);
}

#[test]
fn aws_prod() {
    let out = compose_example("aws-prod", &[]);
    snap!("compose_examples__example_aws_prod", &out);
}

#[test]
fn dev_laptop() {
    let out = compose_example("dev-laptop", &[]);
    snap!("compose_examples__example_dev_laptop", &out);
}

#[test]
fn output_is_byte_stable_across_runs() {
    let a = compose_example("aws-prod", &[]);
    let b = compose_example("aws-prod", &[]);
    assert_eq!(a, b);
}

/// examples/platform: the current Windsor format (value blocks, requires, crds,
/// facet substitutions, backend, flux systems with tiers, messages) composed, and its
/// own `bpc test` cases passing.
#[test]
fn platform_current_format() {
    // The environment is empty (no TEAM, no WINDSOR_CONTEXT).
    let platform = || Test::in_dir(repo().join("examples/platform"));
    let out = platform().compose().run();
    assert_eq!(
        out.stderr,
        indoc! {"
        note: Composed aws platform for example.internal
        note: dashboards at https://grafana.example.internal
    "}
    );
    snap!("compose_examples__example_platform", &out.stdout);
    let out = platform().arg("test").run();
    assert_eq!(
        out.stdout,
        indoc! {"
        === tests/platform.test.yaml ===
        ✓ aws platform has tiers, crds, backend and substitutions
        ✓ env is hermetic, TEAM unset in the case means the default
        ✓ lean drops audit, notifications and the grafana crd
        ✓ a missing domain is reported with the authors' message
        ✓ platform none composes nothing from the platform facets

        5 passed, 0 failed
    "}
    );
}

/// `--provenance` adds a comment naming the origin of every value and is still YAML that
/// reads back as exactly the plain blueprint.
#[test]
fn provenance_comments_keep_the_yaml_identical() {
    let plain = compose_example("aws-prod", &[]);
    let annotated = compose_example("aws-prod", &["--provenance"]);
    snap!("compose_examples__example_aws_prod_provenance", &annotated);
    let read = |text: &str| {
        let node = bpc::yaml::parse(text, bpc::files::FileId(0)).expect("valid YAML");
        format!("{:?}", node.to_value())
    };
    assert_eq!(read(&plain), read(&annotated));
}
