//! `expect.config` and `exclude.config`: the composed config blocks, checked as the
//! Windsor CLI's main checks them since windsorcli/cli#3270 (0.9 left them unchecked),
//! with the config semantics of the threads that came with it. The template is in
//! `tests/config_expectations/`; each test adds its own test file.

use crate::common::{bpc, copy_dir, repo, Output};

/// `bpc test EXTRA…` on the template with `cases` as its only test file.
fn run(cases: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo().join("tests/config_expectations/_template"),
        &dir.path().join("_template"),
    );
    std::fs::create_dir_all(dir.path().join("_template/tests")).expect("mkdir");
    std::fs::write(dir.path().join("_template/tests/config.test.yaml"), cases).expect("write");
    bpc(dir.path(), &[&["test"], extra].concat())
}

#[test]
fn expect_config_compares_the_composed_config_blocks() {
    let out = run(
        "cases:\n  - name: the computed quota\n    values:\n      provisioning:\n        enabled: true\n    expect:\n      config:\n        cluster:\n          controlplanes:\n            cpu: 6\n  - name: a wrong quota is caught\n    expect:\n      config:\n        cluster:\n          controlplanes:\n            cpu: 7\n  - name: a block its when turns off is not there\n    values:\n      sizing:\n        enabled: false\n    expect:\n      config:\n        sizing:\n          memory: 8\n",
        &[],
    );
    assert_eq!(
        out.stdout,
        indoc::indoc! {r#"
        === tests/config.test.yaml ===
        ✓ the computed quota
        ✗ a wrong quota is caught
          config.cluster.controlplanes.cpu: expected 7, got 5
        ✗ a block its when turns off is not there
          config.sizing: expected {"memory":8}, but it is not set

        1 passed, 2 failed
    "#}
    );
}

#[test]
fn exclude_config_fails_for_a_block_that_matches() {
    let out = run(
        "cases:\n  - name: the block holds x 1\n    exclude:\n      config:\n        features:\n          x: 1\n  - name: the block does not hold x 2\n    exclude:\n      config:\n        features:\n          x: 2\n  - name: a block its when turns off\n    exclude:\n      config:\n        sizing: {}\n",
        &[],
    );
    assert_eq!(
        out.stdout,
        indoc::indoc! {r#"
        === tests/config.test.yaml ===
        ✗ the block holds x 1
          config.features: should not be {"x":1,"y":["a","b"]}
        ✓ the block does not hold x 2
        ✓ a block its when turns off

        2 passed, 1 failed
    "#}
    );
}

/// A project pinned to the 0.9 CLI keeps its verdicts: there `config` expectations
/// checked nothing, and bpc says so.
#[test]
fn windsor_compat_0_9_leaves_config_expectations_unchecked() {
    let out = run(
        "cases:\n  - name: a wrong quota\n    expect:\n      config:\n        cluster:\n          controlplanes:\n            cpu: 7\n",
        &["--windsor-compat", "0.9"],
    );
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("`config` expectations are not compared under --windsor-compat 0.9"),
        "{}",
        out.stderr
    );
}

/// windsorcli/cli#3269's example: an operator's explicit value wins over a facet's
/// unconditional computation of the same key (the facet would make it 5 + 1 + 1).
#[test]
fn operator_values_win_over_unconditional_facet_config() {
    let out = run(
        "cases:\n  - name: an explicit cpu quota is not overridden\n    values:\n      cluster:\n        controlplanes:\n          cpu: 3\n      provisioning:\n        enabled: true\n      registry:\n        enabled: true\n    expect:\n      config:\n        cluster:\n          controlplanes:\n            cpu: 3\n",
        &[],
    );
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
}

/// windsorcli/cli#3271: operator values are folded over the config blocks only for
/// the names a block still defines, so a block a later facet removes with
/// `strategy: remove` stays removed, whatever the operator set under its name.
#[test]
fn a_block_a_facet_removes_stays_removed_under_an_operator_value() {
    let out = run(
        "cases:\n  - name: expecting the removed block fails\n    values:\n      drop: true\n      features:\n        z: 9\n    expect:\n      config:\n        features:\n          z: 9\n  - name: excluding the removed block passes\n    values:\n      drop: true\n      features:\n        z: 9\n    exclude:\n      config:\n        features: {}\n  - name: without the removal the operator value shows through\n    values:\n      features:\n        z: 9\n    expect:\n      config:\n        features:\n          x: 1\n          z: 9\n",
        &[],
    );
    assert_eq!(
        out.stdout,
        indoc::indoc! {r#"
        === tests/config.test.yaml ===
        ✗ expecting the removed block fails
          config.features: expected {"z":9}, but it is not set
        ✓ excluding the removed block passes
        ✓ without the removal the operator value shows through

        2 passed, 1 failed
    "#}
    );
}

/// windsorcli/cli#3209 (closed by #3240): a config block's `when:` sees another
/// block's computed value, as `value:` expressions do. bpc's `when`s read the lazily
/// resolved scope, so `storage_class` is in exactly when `storage.enabled` computes
/// true (the Windsor CLI gave the same blueprints).
#[test]
fn a_config_when_sees_another_blocks_computed_value() {
    let out = run(
        "cases:\n  - name: on metal the gated block is in\n    values:\n      platform: metal\n    expect:\n      config:\n        storage_class:\n          name: local-path\n      terraform:\n        - name: reserve\n          inputs:\n            storage_class: local-path\n  - name: elsewhere it is not\n    values:\n      platform: aws\n    exclude:\n      config:\n        storage_class: {}\n    expect:\n      terraform:\n        - name: reserve\n          inputs:\n            storage_class: none\n",
        &[],
    );
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
}

/// windsorcli/cli#3206: two keys derived by expressions of the same shape from
/// different inputs (`controlplane_factor`, `worker_factor`) each get their own value;
/// Windsor's main once gave the worker reserve the control plane's factor. bpc
/// evaluates each config path on its own, so the worker reserve is 100 × (2 − 1.75).
#[test]
fn sibling_expressions_of_identical_shape_read_their_own_values() {
    let out = run(
        "cases:\n  - name: each reserve from its own factor\n    values:\n      cluster:\n        workers:\n          ratio: 1.75\n    expect:\n      config:\n        talos_common:\n          controlplane_factor: 1\n          worker_factor: 0.25\n        controlplane_reserve:\n          kubelet_cpu: 200m\n        worker_reserve:\n          kubelet_cpu: 25m\n",
        &[],
    );
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
}

/// windsorcli/cli#3070: a `when:` decides inclusion during composition and never
/// reaches the blueprint or the render, whose readers could not evaluate its
/// composition-only config (`storage.enabled` is a config block).
#[test]
fn a_composition_only_when_stays_out_of_the_blueprint_and_the_render() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo().join("tests/config_expectations/_template"),
        &dir.path().join("_template"),
    );
    std::fs::create_dir_all(dir.path().join("_template/tests")).expect("mkdir");
    std::fs::write(
        dir.path().join("_template/tests/config.test.yaml"),
        "cases:\n  - name: metal\n    values:\n      platform: metal\n",
    )
    .expect("write");
    let out = bpc(dir.path(), &["test", "metal", "--show"]);
    assert!(out.stdout.contains("- name: csi\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("when"), "{}", out.stdout);
    // Nor the render: the system's Flux Kustomization carries no trace of it.
    std::fs::create_dir_all(dir.path().join("contexts/metal")).expect("mkdir");
    std::fs::write(
        dir.path().join("contexts/metal/values.yaml"),
        "platform: metal\n",
    )
    .expect("write");
    let render = bpc(
        dir.path(),
        &["render", "--context", "metal", "--out", "out"],
    );
    assert!(render.success(), "{}", render.stderr);
    let installed =
        std::fs::read_to_string(dir.path().join("out/flux/kustomizations/csi-install.yaml"))
            .expect("the csi system is rendered");
    assert!(!installed.contains("when"), "{installed}");
    assert!(!installed.contains("storage"), "{installed}");
}
