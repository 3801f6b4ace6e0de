//! The render tree applied as the README's recipe does, with the real tools: `terraform
//! -chdir=terraform/<path>` with the rendered backend and tfvars (the state must land
//! where Windsor keeps it, not in the module directory), and `kubectl kustomize` of
//! `flux/` (the index must build). Each test skips, saying so on stderr, when its tool
//! is not installed (`.ci/run` does not install Terraform, which Debian does not ship).

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// Whether `tool` runs; prints a loud skip note when it does not.
fn have(tool: &str, test: &str) -> bool {
    let ok = Command::new(tool)
        .arg("version")
        .arg(if tool == "kubectl" {
            "--client"
        } else {
            "-json"
        })
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED {test}: `{tool}` is not installed");
    }
    ok
}

fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .expect("run tool");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

const FACET: &str = "kind: Facet
apiVersion: blueprints.windsorcli.dev/v1alpha1
metadata:
  name: net
terraform:
  - path: network/vpc
    inputs:
      cidr: 10.0.0.0/16
      note: \"line one\\nline two\"
kustomize:
  - name: app
    path: apps/app
    substitutions:
      replicas: \"2\"
";

const MODULE: &str = "variable \"cidr\" { type = string }
variable \"note\" { type = string }
output \"cidr\" { value = var.cidr }
output \"note\" { value = var.note }
";

fn project() -> tempfile::TempDir {
    crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("contexts/_template/facets/net.yaml", FACET),
        ("contexts/prod/values.yaml", "id: wprod001\n"),
        ("terraform/network/vpc/main.tf", MODULE),
    ])
}

#[test]
fn terraform_applies_a_local_module_with_the_rendered_backend_and_tfvars() {
    if !have("terraform", "terraform_applies_a_local_module…") {
        return;
    }
    let dir = project();
    let root = dir.path();
    let out = bpc(root, &["render", "--context", "prod", "--out", "render"]);
    assert!(out.success(), "{}", out.stderr);
    let module = root.join("terraform/network/vpc");
    std::fs::copy(
        root.join("render/terraform/network/vpc/backend.tf.json"),
        module.join("backend_override.tf.json"),
    )
    .expect("copy backend");
    let chdir = "-chdir=terraform/network/vpc";
    run(root, "terraform", &[chdir, "init", "-input=false"]);
    let tfvars = root.join("render/terraform/network/vpc/terraform.tfvars.json");
    let var_file = format!("-var-file={}", tfvars.display());
    run(
        root,
        "terraform",
        &[chdir, "apply", "-auto-approve", "-input=false", &var_file],
    );
    // The state is where Windsor keeps it, relative to the project root.
    let state = root.join(".windsor/contexts/prod/.tfstate/network/vpc/terraform.tfstate");
    assert!(state.is_file(), "no state at {}", state.display());
    assert!(
        !module.join(".windsor").exists(),
        "state landed in the module"
    );
    let outputs = run(root, "terraform", &[chdir, "output", "-json"]);
    let outputs: serde_json::Value = serde_json::from_str(&outputs).expect("output json");
    assert_eq!(outputs["cidr"]["value"], "10.0.0.0/16");
    // A multi-line input reaches Terraform ending in a newline, as from Windsor's heredoc.
    assert_eq!(outputs["note"]["value"], "line one\nline two\n");
}

#[test]
fn kubectl_builds_the_flux_tree() {
    if !have("kubectl", "kubectl_builds_the_flux_tree") {
        return;
    }
    let dir = project();
    let root = dir.path();
    let out = bpc(root, &["render", "--context", "prod", "--out", "render"]);
    assert!(out.success(), "{}", out.stderr);
    let built = run(root, "kubectl", &["kustomize", "render/flux"]);
    for want in [
        "kind: Namespace",
        "name: system-gitops",
        "kind: ConfigMap",
        "name: values-app",
        "kind: Kustomization",
        "name: app",
    ] {
        assert!(built.contains(want), "{want} not in:\n{built}");
    }
}
