//! Expectations of empty collections, in `expect` and in `exclude`, at every depth
//! (terraform inputs, kustomizations, flux systems and their tiers). The template and
//! its test files are in `tests/empty_expectations/`; each case's verdict below is the
//! one the Windsor CLI (7b6bca77) gave for it, so `bpc test` must give the same one.

use crate::common::{bpc, copy_dir, repo};

/// (test file, case, whether the Windsor CLI passed it). The oracle gave these.
const WINDSOR_VERDICTS: &[(&str, &str, bool)] = &[
    ("expect.test.yaml", "terraform dependsOn empty", true),
    ("expect.test.yaml", "terraform inputs empty on bare", true),
    (
        "expect.test.yaml",
        "terraform inputs nested empty map",
        true,
    ),
    (
        "expect.test.yaml",
        "terraform inputs nested empty list",
        true,
    ),
    (
        "expect.test.yaml",
        "terraform inputs nested missing key empty map",
        false,
    ),
    (
        "expect.test.yaml",
        "terraform inputs nested missing key empty list",
        false,
    ),
    (
        "expect.test.yaml",
        "terraform inputs nested missing key null",
        false,
    ),
    ("expect.test.yaml", "kustomization dependsOn empty", true),
    ("expect.test.yaml", "kustomization components empty", true),
    (
        "expect.test.yaml",
        "kustomization substitutions empty",
        true,
    ),
    (
        "expect.test.yaml",
        "kustomization components empty on nonempty",
        true,
    ),
    (
        "expect.test.yaml",
        "kustomization substitutions empty on nonempty",
        true,
    ),
    ("expect.test.yaml", "flux dependsOn empty", true),
    ("expect.test.yaml", "flux install components empty", true),
    ("expect.test.yaml", "flux resources components empty", true),
    ("expect.test.yaml", "tier dependsOn empty", true),
    (
        "exclude.test.yaml",
        "exclude kustomization components empty",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude kustomization components empty on nonempty",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude kustomization dependsOn empty",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude kustomization substitutions empty",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude kustomization only name",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude kustomization components null",
        false,
    ),
    ("exclude.test.yaml", "exclude terraform inputs empty", false),
    (
        "exclude.test.yaml",
        "exclude terraform dependsOn empty",
        false,
    ),
    ("exclude.test.yaml", "exclude terraform inputs key", false),
    (
        "exclude.test.yaml",
        "exclude flux install components empty",
        false,
    ),
    (
        "exclude.test.yaml",
        "exclude flux resources components empty",
        false,
    ),
    ("exclude.test.yaml", "exclude flux dependsOn empty", false),
    ("exclude.test.yaml", "exclude flux install empty map", false),
    (
        "exclude.test.yaml",
        "exclude flux resources empty list",
        false,
    ),
    ("exclude.test.yaml", "exclude tier components empty", false),
    (
        "exclude.test.yaml",
        "exclude missing components empty",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "expect no install tier components empty",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect no install tier empty map",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect no install tier substitutions empty",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect no resources empty list",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "expect no resources unnamed variant empty components",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect named variant missing empty components",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect named variant present empty components",
        true,
    ),
    ("flux-tiers.test.yaml", "expect flux system source", true),
    (
        "flux-tiers.test.yaml",
        "exclude no install tier components empty",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude no install tier components c9",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude install substitutions empty",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude named variant missing empty components",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude named variant present empty components",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude named variant present c9",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude resources empty plus install c9",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude install empty components plus resources c9",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude no resources unnamed variant empty",
        true,
    ),
    (
        "flux-tiers.test.yaml",
        "exclude kustomization components empty plus dependsOn",
        false,
    ),
    (
        "flux-tiers.test.yaml",
        "expect null install on a system without one",
        true,
    ),
    ("flux-tiers.test.yaml", "exclude null install", true),
    ("flux-tiers.test.yaml", "expect null resources", true),
    ("inputs.test.yaml", "inputs emptylist expr", true),
    ("inputs.test.yaml", "inputs emptymap expr", true),
    ("inputs.test.yaml", "inputs null vs empty map", false),
    ("inputs.test.yaml", "inputs null vs empty list", false),
    ("inputs.test.yaml", "inputs exprnull vs empty list", false),
    ("inputs.test.yaml", "inputs empty list vs one", false),
    ("inputs.test.yaml", "inputs empty map vs scalar", false),
    ("inputs.test.yaml", "inputs empty list vs scalar", false),
    ("inputs.test.yaml", "inputs empty map vs list", false),
    ("inputs.test.yaml", "inputs nested empties", true),
    ("inputs.test.yaml", "inputs nested empty vs map", true),
    ("inputs.test.yaml", "inputs null expected vs null", true),
    ("inputs.test.yaml", "inputs empty string vs null", false),
    ("inputs.test.yaml", "kustomization components null", true),
    ("inputs.test.yaml", "kustomization path empty string", true),
];

#[test]
fn empty_collections_match_as_the_windsor_cli_matches_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo().join("tests/empty_expectations/_template"),
        &dir.path().join("_template"),
    );
    let out = bpc(dir.path(), &["test", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("bpc test --format json");
    let cases = doc["cases"].as_array().expect("cases");
    let got: Vec<(String, String, bool)> = cases
        .iter()
        .map(|c| {
            let file = c["file"].as_str().unwrap_or_default();
            let file = file.rsplit('/').next().unwrap_or(file).to_string();
            let name = c["name"].as_str().unwrap_or_default().to_string();
            (file, name, c["passed"].as_bool().unwrap_or(false))
        })
        .collect();
    let mut wrong = Vec::new();
    for (file, name, passed) in WINDSOR_VERDICTS {
        match got.iter().find(|(f, n, _)| f == file && n == name) {
            Some((_, _, ours)) if ours == passed => {}
            Some((_, _, ours)) => {
                wrong.push(format!("{file} :: {name}: Windsor {passed}, bpc {ours}"))
            }
            None => wrong.push(format!("{file} :: {name}: not run")),
        }
    }
    assert_eq!(got.len(), WINDSOR_VERDICTS.len(), "{got:?}");
    assert!(
        wrong.is_empty(),
        "verdicts differ from the Windsor CLI's:\n{}",
        wrong.join("\n")
    );
}
