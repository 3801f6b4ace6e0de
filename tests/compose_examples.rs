//! The example projects under `examples/` composed with the embedded `_template/`,
//! snapshot-tested (design S10: byte-stable output).

mod common;
use common::*;

fn compose_example(name: &str) -> String {
    let project = repo().join("examples").join(name);
    let template = repo().join("_template");
    compose(&args(&project, Some(&template), &[])).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

#[test]
fn embedded_template_composes_with_no_arguments() {
    let out = compose(&args(&repo(), None, &[])).expect("compose _template");
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("template_default", out);
    });
}

#[test]
fn docker_local() {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("example_docker_local", compose_example("docker-local"));
    });
}

#[test]
fn aws_prod() {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("example_aws_prod", compose_example("aws-prod"));
    });
}

#[test]
fn dev_laptop() {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("example_dev_laptop", compose_example("dev-laptop"));
    });
}

#[test]
fn output_is_byte_stable_across_runs() {
    let a = compose_example("aws-prod");
    let b = compose_example("aws-prod");
    assert_eq!(a, b);
}
