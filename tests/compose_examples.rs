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

/// examples/platform: the current Windsor format (value blocks, requires, crds,
/// facet substitutions, backend, flux systems with tiers, messages) composed, and its
/// own `bpc test` cases passing.
#[test]
fn platform_current_format() {
    let dir = repo().join("examples/platform");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
            .args(args)
            .current_dir(&dir)
            .env_remove("WINDSOR_CONTEXT")
            .env_remove("TEAM")
            .env("NO_COLOR", "1")
            .output()
            .expect("run bpc")
    };
    let out = run(&["compose"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Composed aws platform for example.internal"),
        "{stderr}"
    );
    let yaml = String::from_utf8_lossy(&out.stdout).to_string();
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("example_platform", yaml);
    });
    let out = run(&["test"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("5 passed, 0 failed"), "{text}");
}

/// `--provenance` adds a comment naming the origin of every value and is still YAML that
/// reads back as exactly the plain blueprint.
#[test]
fn provenance_comments_keep_the_yaml_identical() {
    let project = repo().join("examples").join("aws-prod");
    let template = repo().join("_template");
    let plain = compose(&args(&project, Some(&template), &[])).expect("compose");
    let mut with = args(&project, Some(&template), &[]);
    with.provenance = true;
    let annotated = compose(&with).expect("compose --provenance");
    assert!(
        annotated.contains("_template/facets/provider-aws.yaml:8:11 (aws, 200, merge)"),
        "{annotated}"
    );
    let read = |text: &str| {
        let node = bpc::yaml::parse(text, bpc::source::FileId(0)).expect("valid YAML");
        format!("{:?}", node.to_value())
    };
    assert_eq!(read(&plain), read(&annotated));
}
