//! Blueprints of the windsor-core corpus composed for the values of some of its own test
//! cases, snapshot-tested. Each snapshot was checked by hand against the facets (see
//! docs/conformance.md).

use bpc::compose::model::precedence::Precedence;
use bpc::files::FileMap;
use bpc::session::{Options, Session};
use bpc::testing::case;
use bpc::testing::runner::{RunOptions, UnmockedOutputs};
use std::sync::Arc;

fn composed(file: &str, name: &str, schema_defaults: bool) -> String {
    let root = crate::common::repo().join("tests/conformance/windsor-core-75d2a6c1");
    let sources = Arc::new(FileMap::new());
    let session = Session::open(Options::at(&root), sources.clone()).expect("corpus loads");
    let (tests, _) =
        case::load(&session.template.tree, &sources, &format!("tests/{file}")).expect("test file");
    let case = tests
        .cases
        .iter()
        .find(|c| c.name == name)
        .expect("case exists");
    let mut suite = session.runner(RunOptions {
        schema_defaults,
        unmocked_outputs: UnmockedOutputs::Null,
        precedence: Precedence::FacetWins,
        ..Default::default()
    });
    // The snapshots name the project root; keep them independent of the checkout.
    suite.project_root = "/project".to_string();
    let composition = suite.compose_case(case).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(|d| bpc::files::render(d, &sources, false))
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    bpc::emit::to_yaml(&composition.blueprint)
}

#[test]
fn aws_terraform_chain() {
    snap!(
        "corpus_aws",
        composed(
            "provider-aws.test.yaml",
            "minimal config creates VPC, EKS, and GitOps terraform chain",
            true,
        ),
    );
}

#[test]
fn docker_with_mocked_outputs() {
    let file = "provider-docker.test.yaml";
    let root = crate::common::repo()
        .join("tests/conformance/windsor-core-75d2a6c1/contexts/_template/tests")
        .join(file);
    let text = std::fs::read_to_string(root).expect("test file");
    let first = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("- name: "))
        .expect("a case")
        .to_string();
    snap!("corpus_docker", composed(file, &first, true));
}

#[test]
fn metal_dev_mode() {
    snap!(
        "corpus_metal_dev",
        composed(
            "option-dev.test.yaml",
            "dev mode creates selfsigned issuer",
            true,
        ),
    );
}
