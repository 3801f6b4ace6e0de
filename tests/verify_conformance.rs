//! `bpc verify --all-contexts` on the 46 contexts of the render conformance set, with
//! windsor-core's own `kustomize/` tree: every finding is one docs/verify.md lists as a
//! true mistake (of windsor-core or of the hand-made `extras` context) or a limit of
//! verifying offline, with the facet line it points at; every other context is clean.
//! Runs the real kustomize; skipped, saying so, where none is installed.

use crate::common::*;
use std::path::Path;

const SET: &str = "tests/conformance/windsor-render-eaa2bcea";

/// A project folder named `project`: windsor-core's template and `windsor.yaml`, the
/// set's contexts and its `kustomize/` tree.
fn assemble(dir: &Path) -> std::path::PathBuf {
    let project = dir.join("project");
    let core = repo().join("tests/conformance/windsor-core-eaa2bcea");
    copy_dir(
        &core.join("contexts/_template"),
        &project.join("contexts/_template"),
    );
    std::fs::copy(core.join("windsor.yaml"), project.join("windsor.yaml")).expect("copy");
    copy_dir(
        &repo().join(SET).join("contexts"),
        &project.join("contexts"),
    );
    let archive = std::fs::File::open(repo().join(SET).join("kustomize.tar.gz")).expect("tree");
    tar::Archive::new(flate2::read::GzDecoder::new(archive))
        .unpack(&project)
        .expect("unpack the kustomize tree");
    project
}

#[test]
fn every_context_of_the_render_set_verifies_but_for_the_documented_findings() {
    let installed = ["kubectl", "kustomize"].iter().any(|p| {
        std::process::Command::new(p)
            .arg("version")
            .arg("--client")
            .output()
            .is_ok()
    });
    if !installed {
        eprintln!("SKIPPED verify_conformance: neither kubectl nor kustomize is on PATH");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = assemble(dir.path());
    let out = bpc(&project, &["verify", "--all-contexts", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", out.stdout, out.stderr));
    let contexts = report["contexts"].as_array().expect("contexts");
    assert_eq!(contexts.len(), 46, "{}", out.stderr);
    let mut found = Vec::new();
    for c in contexts {
        for f in c["findings"].as_array().expect("findings") {
            let at = match (
                f["location"]["file"].as_str(),
                f["location"]["line"].as_u64(),
            ) {
                (Some(file), Some(line)) => format!("{file}:{line}"),
                _ => "-".to_string(),
            };
            found.push(format!(
                "{} {} {} {} {} {at}",
                c["context"].as_str().unwrap_or_default(),
                f["severity"].as_str().unwrap_or_default(),
                f["id"].as_str().unwrap_or_default(),
                f["kustomization"].as_str().unwrap_or("-"),
                f["object"].as_str().unwrap_or("-"),
            ));
        }
    }
    let want = [
        "extras warning source-not-read extra-app - contexts/extras/blueprint.yaml:18",
        "extras error missing-path ns-app - contexts/extras/blueprint.yaml:48",
        "extras error build-failed pki-install - contexts/extras/patches/pki-install/issuer.yaml:1",
        "extras error missing-namespace ns-app Kustomization/other-ns/ns-app contexts/extras/blueprint.yaml:49",
        "t-addon-database-1 error schema-violation observability-resources HTTPRoute/system-observability/grafana contexts/_template/facets/addon-observability.yaml:141",
        "t-option-demo-0 warning remote-resource demo-resources - contexts/_template/facets/option-demo.yaml:20",
        "t-option-demo-1 warning remote-resource demo-resources - contexts/_template/facets/option-demo.yaml:20",
    ];
    assert_eq!(found, want, "{}", out.stderr);
    assert_eq!(report["errors"], 4);
    assert_eq!(out.status, Some(1));
}
