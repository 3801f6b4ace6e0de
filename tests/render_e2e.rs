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
    let args: &[&str] = match tool {
        "kubectl" => &["version", "--client"],
        "git" => &["--version"],
        _ => &["version", "-json"],
    };
    let ok = Command::new(tool)
        .args(args)
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

const SHIM_MODULE: &str = "variable \"cidr\" {
  type        = string
  description = \"The network's CIDR\"
}
variable \"note\" {
  type    = string
  default = \"none\"
}
variable \"token\" {
  type      = string
  default   = \"t\"
  sensitive = true
}
output \"cidr\" {
  value       = var.cidr
  description = \"The CIDR, back\"
}
output \"secret\" {
  value     = var.token
  sensitive = true
}
";

/// A project at `ws/proj` whose component `net` comes from source `mods`, given as
/// `url`, with `tag` as its ref when set.
fn remote_project(ws: &Path, url: &str, tag: Option<&str>) -> std::path::PathBuf {
    let root = ws.join("proj");
    let reference = tag.map_or(String::new(), |t| format!("    ref:\n      tag: {t}\n"));
    let files = [
        ("windsor.yaml", "version: v1alpha1\n".to_string()),
        (
            "contexts/_template/blueprint.yaml",
            format!(
                "{BLUEPRINT_HEAD}metadata:\n  name: t\nsources:\n  - name: mods\n    url: {url}\n{reference}"
            ),
        ),
        (
            "contexts/_template/facets/net.yaml",
            format!(
                "{FACET_HEAD}metadata:\n  name: net\nterraform:\n  - name: net\n    source: mods\n    path: net\n    inputs:\n      cidr: 10.0.0.0/16\n      note: \"a\\nb\"\n"
            ),
        ),
        ("contexts/prod/values.yaml", "id: wprod001\n".to_string()),
    ];
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    root
}

/// `text` with the workspace `ws` (a temp dir) written `[ws]`.
fn in_ws(ws: &Path, text: &str) -> String {
    let mut text = text.to_string();
    for path in [ws.canonicalize().ok(), Some(ws.to_path_buf())]
        .into_iter()
        .flatten()
    {
        text = text.replace(path.to_string_lossy().as_ref(), "[ws]");
    }
    text
}

/// `terraform -chdir=render/terraform/net init` then `apply` as a user runs the shim,
/// with nothing but the rendered directory: the tfvars and backend beside the shim are
/// read by Terraform itself. Checks the state lands where Windsor keeps it.
fn apply_shim(root: &Path) -> serde_json::Value {
    let chdir = "-chdir=render/terraform/net";
    run(root, "terraform", &[chdir, "init", "-input=false"]);
    run(
        root,
        "terraform",
        &[chdir, "apply", "-auto-approve", "-input=false"],
    );
    let state = root.join(".windsor/contexts/prod/.tfstate/net/terraform.tfstate");
    assert!(state.is_file(), "no state at {}", state.display());
    let outputs = run(root, "terraform", &[chdir, "output", "-json"]);
    serde_json::from_str(&outputs).expect("output json")
}

/// Every `.tf` file of the tree parses as HCL.
fn parse_tf(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "tf") {
                let text = std::fs::read_to_string(&path).expect("read tf");
                hcl::parse(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
                found.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// The shim files of component `net`, for a snapshot.
fn shim_text(render: &Path) -> String {
    let mut text = String::new();
    for name in ["main.tf", "variables.tf", "outputs.tf", "backend.tf.json"] {
        let body = std::fs::read_to_string(render.join("terraform/net").join(name))
            .unwrap_or_else(|_| format!("(no {name})\n"));
        text.push_str(&format!("--- terraform/net/{name}\n{body}"));
    }
    text
}

#[test]
fn a_local_source_outside_the_project_gets_a_shim_that_terraform_applies() {
    let ws = tempfile::tempdir().expect("tmp");
    let mods = ws.path().join("mods");
    std::fs::create_dir_all(mods.join("terraform/net")).expect("mkdir");
    std::fs::write(
        mods.join("blueprint.yaml"),
        format!("{BLUEPRINT_HEAD}metadata:\n  name: mods\n"),
    )
    .expect("write");
    std::fs::write(mods.join("terraform/net/main.tf"), SHIM_MODULE).expect("write");
    // Relative to the listing template, contexts/_template.
    let root = remote_project(ws.path(), "../../../mods", None);
    let out = bpc(&root, &["render", "--context", "prod", "--out", "render"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        in_ws(ws.path(), &out.stderr),
        indoc! {"
        rendered 11 file(s) to render
    "}
    );
    let render = root.join("render");
    assert_eq!(
        parse_tf(&render),
        [
            "terraform/net/main.tf",
            "terraform/net/outputs.tf",
            "terraform/net/variables.tf"
        ]
    );
    snap!("render_shim_local_source", &shim_text(&render));
    let plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(render.join("terraform/plan.json")).expect("plan"),
    )
    .expect("plan json");
    assert_eq!(plan["components"][0]["workdir"], "terraform/net");
    let variables = std::fs::read_to_string(render.join("terraform/net/variables.json"))
        .expect("variables.json");
    assert_eq!(
        variables,
        indoc! {r#"
        {
          "module": "../../../mods//terraform/net?ref=",
          "variables": {
            "cidr": {
              "description": "The network's CIDR",
              "required": true,
              "input": "tfvars"
            },
            "note": {
              "default": "none",
              "required": false,
              "input": "tfvars"
            },
            "token": {
              "sensitive": true,
              "required": false,
              "input": "none"
            }
          }
        }
    "#}
    );
    if !have("terraform", "a_local_source_outside_the_project…") {
        return;
    }
    let outputs = apply_shim(&root);
    assert_eq!(outputs["cidr"]["value"], "10.0.0.0/16");
    assert_eq!(outputs["secret"]["sensitive"], true);
}

#[test]
fn a_git_source_gets_a_shim_that_passes_inputs_through() {
    let ws = tempfile::tempdir().expect("tmp");
    let repo = ws.path().join("gitmods");
    std::fs::create_dir_all(repo.join("terraform/net")).expect("mkdir");
    std::fs::write(repo.join("terraform/net/main.tf"), SHIM_MODULE).expect("write");
    let url = format!("git::file://{}", repo.display());
    let root = remote_project(ws.path(), &url, Some("v1"));
    let out = bpc(&root, &["render", "--context", "prod", "--out", "render"]);
    assert!(out.success(), "{}", out.stderr);
    // The module is fetched only by `terraform init`: bpc says what it wrote instead.
    assert_eq!(
        in_ws(ws.path(), &out.stderr),
        indoc! {"
        note: terraform component `net`: the variables of git::file://[ws]/gitmods//terraform/net?ref=v1 are unknown until `terraform init` fetches it; its shim passes the component's inputs through by name (cidr, note) and re-exports no outputs
        rendered 10 file(s) to render
    "}
    );
    let render = root.join("render");
    parse_tf(&render);
    let plan = std::fs::read_to_string(render.join("terraform/plan.json")).expect("plan");
    assert_eq!(
        in_ws(ws.path(), &plan),
        indoc! {r#"
        {
          "context": "prod",
          "backend": {
            "type": "local"
          },
          "components": [
            {
              "id": "net",
              "dir": "terraform/net",
              "path": "net",
              "source": "mods",
              "module": "git::file://[ws]/gitmods//terraform/net?ref=v1",
              "workdir": "terraform/net",
              "note": "terraform component `net`: the variables of git::file://[ws]/gitmods//terraform/net?ref=v1 are unknown until `terraform init` fetches it; its shim passes the component's inputs through by name (cidr, note) and re-exports no outputs"
            }
          ]
        }
    "#}
    );
    // The shim calls the module at its git address, passing the inputs through.
    snap!(
        "render_shim_git_source",
        in_ws(ws.path(), &shim_text(&render))
    );
    if !have("git", "a_git_source_gets_a_shim…") || !have("terraform", "a_git_source_gets_a_shim…")
    {
        return;
    }
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "module"]);
    git(&["tag", "v1"]);
    let outputs = apply_shim(&root);
    // No outputs are re-exported (they are unknown); the apply used the inputs.
    assert_eq!(outputs, serde_json::json!({}));
    let state =
        std::fs::read_to_string(root.join(".windsor/contexts/prod/.tfstate/net/terraform.tfstate"))
            .expect("state");
    assert!(state.contains("\"serial\""), "{state}");
}

#[test]
fn an_oci_source_in_the_cache_gets_a_shim_that_terraform_applies() {
    let ws = tempfile::tempdir().expect("tmp");
    let root = remote_project(ws.path(), "oci://registry.example/acme/mods:v1", None);
    // The entry bpc (and Windsor) pull the artifact into: complete once artifact.tar
    // is there, so nothing is fetched.
    let entry = root.join(".windsor/cache/oci/registry.example_acme_mods_v1");
    std::fs::create_dir_all(entry.join("terraform/net")).expect("mkdir");
    std::fs::write(entry.join("terraform/net/main.tf"), SHIM_MODULE).expect("write");
    std::fs::write(entry.join("artifact.tar"), b"layer").expect("write");
    let out = bpc(
        &root,
        &[
            "render",
            "--context",
            "prod",
            "--out",
            "render",
            "--offline",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        in_ws(ws.path(), &out.stderr),
        indoc! {"
        rendered 11 file(s) to render
    "}
    );
    let render = root.join("render");
    parse_tf(&render);
    // The shim calls the module in the project's OCI cache, every variable read.
    snap!("render_shim_oci_source", shim_text(&render));
    if !have("terraform", "an_oci_source_in_the_cache…") {
        return;
    }
    let outputs = apply_shim(&root);
    assert_eq!(outputs["cidr"]["value"], "10.0.0.0/16");
}

/// A shim's module read by bpc is checked as a local module is: an input no variable
/// declares is a warning naming the facet line, with a did-you-mean.
#[test]
fn a_read_remote_module_checks_the_inputs() {
    let ws = tempfile::tempdir().expect("tmp");
    let root = remote_project(ws.path(), "oci://registry.example/acme/mods:v1", None);
    let entry = root.join(".windsor/cache/oci/registry.example_acme_mods_v1");
    std::fs::create_dir_all(entry.join("terraform/net")).expect("mkdir");
    std::fs::write(entry.join("terraform/net/main.tf"), SHIM_MODULE).expect("write");
    std::fs::write(entry.join("artifact.tar"), b"layer").expect("write");
    let facet = root.join("contexts/_template/facets/net.yaml");
    let text = std::fs::read_to_string(&facet).expect("facet");
    std::fs::write(&facet, text.replace("      cidr:", "      cidrr:")).expect("write");
    let out = bpc(
        &root,
        &[
            "render",
            "--context",
            "prod",
            "--out",
            "render",
            "--offline",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        in_ws(ws.path(), &out.stderr),
        indoc! {"
        warning: input `cidrr` of terraform component `net` matches no variable of .windsor/cache/oci/registry.example_acme_mods_v1/terraform/net
          --> contexts/_template/facets/net.yaml:10:14
           |
        10 |       cidrr: 10.0.0.0/16
           |              ^^^^^^^^^^^ set here
           |
           = help: did you mean `cidr`?

        warning: required variable `cidr` (.windsor/cache/oci/registry.example_acme_mods_v1/terraform/net/main.tf) has no input in terraform component `net`
        = help: set it in the component's `inputs`, or give the variable a `default`

        rendered 11 file(s) to render
    "}
    );
}
