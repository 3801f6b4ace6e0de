//! `bpc render`: the rendered Flux objects validate against the Flux CRDs
//! (`tests/flux-crds/`, Apache-2.0), tfvars carry the components' inputs, the output
//! directory is replaced as a whole, and `--check` sees edits while reading only
//! regular files of a bounded size.

use crate::common::*;
use bpc::files::{render as show, FileMap};
use bpc::render::{ManifestFormat, Rendered};
use bpc::session::{Options, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Renders the project at `project` (with the template at `template`, if given) and
/// the values files `values`, as `bpc render` would.
fn render_with(project: &Path, template: Option<&Path>, values: &[PathBuf]) -> Rendered {
    let sources = Arc::new(FileMap::new());
    let mut options = Options::at(repo());
    options.locate.project = Some(project.to_path_buf());
    options.locate.template = template.map(Path::to_path_buf);
    options.locate.values = values.to_vec();
    Session::open(options, sources.clone())
        .and_then(|session| session.render(ManifestFormat::Yaml))
        .unwrap_or_else(|d| {
            panic!(
                "{}",
                d.iter()
                    .map(|d| show(d, &sources, false))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
}

fn render(project: &Path, template: Option<&Path>) -> Rendered {
    render_with(project, template, &[])
}

/// YAML text as JSON, through bpc's own loader.
fn yaml_json(text: &str) -> serde_json::Value {
    let node = bpc::yaml::parse(text, bpc::files::span::FileId(0)).expect("yaml");
    let value = node.to_value();
    serde_json::from_str(&bpc::value::json::compact(&value)).expect("json")
}

/// The `openAPIV3Schema` of the CRD's storage version.
fn crd_validator(file: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("tests/flux-crds").join(file)).expect("crd");
    let crd = yaml_json(&text);
    let version = crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .find(|v| v["storage"] == true)
        .expect("storage version");
    jsonschema::validator_for(&version["schema"]["openAPIV3Schema"]).expect("schema compiles")
}

fn validate_flux(rendered: &Rendered) -> usize {
    let validators = [
        (
            "Kustomization",
            "kustomize.toolkit.fluxcd.io/v1",
            crd_validator("kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
        ),
        (
            "GitRepository",
            "source.toolkit.fluxcd.io/v1",
            crd_validator("source.toolkit.fluxcd.io_gitrepositories.yaml"),
        ),
        (
            "OCIRepository",
            "source.toolkit.fluxcd.io/v1",
            crd_validator("source.toolkit.fluxcd.io_ocirepositories.yaml"),
        ),
    ];
    let mut checked = 0;
    for (path, bytes) in &rendered.files {
        if !path.starts_with("flux/") || !path.ends_with(".yaml") {
            continue;
        }
        let doc = yaml_json(std::str::from_utf8(bytes).expect("utf-8"));
        for (kind, api, validator) in &validators {
            if doc["kind"] == *kind && doc["apiVersion"] == *api {
                let errors: Vec<String> = validator
                    .iter_errors(&doc)
                    .map(|e| format!("{} at {}", e, e.instance_path()))
                    .collect();
                assert!(errors.is_empty(), "{path}: {errors:#?}");
                checked += 1;
            }
        }
    }
    checked
}

fn example(name: &str) -> Rendered {
    render(
        &repo().join("examples").join(name),
        Some(&repo().join("_template")),
    )
}

#[test]
fn flux_objects_validate_against_the_crds() {
    let mut total = validate_flux(&render(&repo(), None));
    for name in ["platform", "aws-prod", "docker-local", "dev-laptop"] {
        let project = repo().join("examples").join(name);
        let template = project.join("contexts/_template");
        let r = if template.is_dir() {
            render(&project, None)
        } else {
            example(name)
        };
        total += validate_flux(&r);
    }
    assert!(total > 10, "only {total} objects validated");
}

#[test]
fn tfvars_hold_the_component_inputs() {
    let sources = Arc::new(FileMap::new());
    let session = Session::open(Options::at(repo()), sources).expect("session");
    let composition = session.compose().expect("compose");
    let rendered = render(&repo(), None);
    assert!(!composition.terraform.components.is_empty());
    for c in composition.terraform.components.values() {
        let file = |name: &str| rendered.files.get(&format!("terraform/{}/{name}", c.id));
        let tfvars: serde_json::Value =
            serde_json::from_slice(file("terraform.tfvars.json").expect("tfvars")).expect("json");
        let mut keys: Vec<String> = tfvars
            .as_object()
            .expect("object")
            .keys()
            .cloned()
            .collect();
        if let Some(d) = file("deferred.json") {
            let d: serde_json::Value = serde_json::from_slice(d).expect("json");
            keys.extend(d.as_object().expect("object").keys().cloned());
        }
        keys.sort();
        let mut inputs: Vec<String> = match c.get("inputs").map(|t| t.to_value()) {
            Some(bpc::expr::Value::Map(m)) => m.keys().map(|k| k.to_string()).collect(),
            _ => Vec::new(),
        };
        inputs.sort();
        assert_eq!(keys, inputs, "component {}", c.id);
    }
    // Numbers stay numbers; the deferred input waits on its component.
    let cluster: serde_json::Value =
        serde_json::from_slice(&rendered.files["terraform/compute/terraform.tfvars.json"])
            .expect("json");
    assert!(cluster["workers"].is_number());
    let deferred: serde_json::Value =
        serde_json::from_slice(&rendered.files["terraform/cluster/deferred.json"]).expect("json");
    assert_eq!(deferred["endpoints"]["waitsFor"][0], "compute");
}

/// Every file of a render, one after another (what the snapshot holds).
fn dump(rendered: &Rendered) -> String {
    let mut out = String::new();
    for (path, bytes) in &rendered.files {
        out.push_str(&format!("=== {path}\n{}", String::from_utf8_lossy(bytes)));
    }
    out
}

#[test]
fn embedded_template_render() {
    let out = dump(&render(&repo(), None));
    assert_eq!(out, dump(&render(&repo(), None)), "byte-stable");
    snap!("render__render_template_default", &out);
}

#[test]
fn platform_example_render() {
    let project = repo().join("examples/platform");
    snap!(
        "render__render_example_platform",
        &dump(&render(&project, None)),
    );
}

const FACET: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: app\nterraform:\n  - name: net\n    path: net\n    inputs:\n      cidr: 10.0.0.0/16\nkustomize:\n  - name: app\n    path: app\n    substitutions:\n      replicas: \"2\"\n";

/// `bpc render EXTRA…` in `project`, whatever its exit status (the tests check it).
fn bpc_render(project: &Path, extra: &[&str]) -> Output {
    bpc(project, &[&["render"], extra].concat())
}

#[test]
fn failed_render_leaves_the_previous_directory_untouched() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", FACET),
    ]);
    let out = dir.path().join("render");
    let out_s = out.to_str().expect("utf-8");
    let first = bpc_render(dir.path(), &["--out", out_s]);
    assert!(first.success(), "{}", &first.stderr);
    let before = bpc::render::write::read_tree(&out).expect("read");
    assert!(before.contains_key("terraform/net/terraform.tfvars.json"));
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        "kind: Facet\nmetadata: [\n",
    )
    .expect("break facet");
    let second = bpc_render(dir.path(), &["--out", out_s]);
    assert!(!second.success());
    assert_eq!(bpc::render::write::read_tree(&out).expect("read"), before);
    // No temp directories left beside it.
    let mut siblings: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    siblings.sort();
    assert_eq!(siblings, ["_template", "render", "windsor.yaml"]);
}

/// A tree of more files than the process may hold open at once is written whole:
/// files are not kept open until the tree is flushed (with 300 components and a
/// limit of 64 descriptors, that failed with "Too many open files").
#[cfg(target_os = "linux")]
#[test]
fn a_tree_of_more_files_than_open_descriptors_is_written() {
    let components: String = (0..300)
        .map(|k| format!("  - name: c{k}\n    path: c{k}\n    inputs:\n      k: {k}\n"))
        .collect();
    let facet = format!(
        "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: many\nterraform:\n{components}"
    );
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/many.yaml", &facet),
    ]);
    let out = dir.path().join("render");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" render --out \"$1\"")
        .arg(env!("CARGO_BIN_EXE_bpc"))
        .arg(&out)
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let tree = bpc::render::write::read_tree(&out).expect("read");
    let tfvars = tree.keys().filter(|k| k.ends_with(".tfvars.json")).count();
    assert_eq!(tfvars, 300);
}

#[test]
fn refuses_a_directory_bpc_did_not_write() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", FACET),
        ("mine/notes.txt", "keep me"),
    ]);
    let out = dir.path().join("mine");
    let out_s = out.to_str().expect("utf-8");
    let run = bpc_render(dir.path(), &["--out", out_s]);
    assert!(!run.success());
    assert_eq!(
        run.stderr,
        indoc! {"
        error: [project]/mine is not empty and was not written by `bpc render` (no .bpc-render); choose another --out or pass --force to replace it

    "}
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "keep me"
    );
    assert!(bpc_render(dir.path(), &["--out", out_s, "--force"]).success());
    assert!(!out.join("notes.txt").exists());
}

/// What `--check` shows of the directory it compares (file names and contents that
/// anyone could have written) never reaches the terminal as escape sequences: every
/// control character is drawn as a visible one.
#[test]
fn check_draws_control_characters_of_the_compared_files() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", FACET),
    ]);
    let out = dir.path().join("render");
    let out_s = out.to_str().expect("utf-8");
    assert!(bpc_render(dir.path(), &["--out", out_s]).success());
    std::fs::write(
        out.join("terraform/net/terraform.tfvars.json"),
        "{\n  \"cidr\": \"\u{1b}]0;owned\u{7}\u{1b}[2J\"\n}\n",
    )
    .expect("edit");
    std::fs::write(out.join("terraform/net/\u{1b}[31mred"), "x\n").expect("write");
    let check = bpc_render(dir.path(), &["--out", out_s, "--check"]);
    assert_eq!(check.status, Some(1));
    assert!(!check.stdout.contains('\u{1b}'), "{:?}", check.stdout);
    assert_eq!(
        check.stdout,
        indoc! {r#"
        --- a/terraform/net/␛[31mred
        +++ /dev/null
        @@ -1,1 +0,0 @@
        -x
        --- a/terraform/net/terraform.tfvars.json
        +++ b/terraform/net/terraform.tfvars.json
        @@ -1,3 +1,3 @@
         {
        -  "cidr": "␛]0;owned␇␛[2J"
        +  "cidr": "10.0.0.0/16"
         }
        "#}
    );
}

#[test]
fn check_passes_then_fails_after_a_facet_edit() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", FACET),
    ]);
    let out = dir.path().join("render");
    let out_s = out.to_str().expect("utf-8");
    assert!(bpc_render(dir.path(), &["--out", out_s]).success());
    let check = bpc_render(dir.path(), &["--out", out_s, "--check"]);
    assert!(check.success(), "{}", &check.stdout);
    std::fs::write(
        dir.path().join("_template/facets/app.yaml"),
        FACET.replace("10.0.0.0/16", "10.1.0.0/16"),
    )
    .expect("edit");
    let check = bpc_render(dir.path(), &["--out", out_s, "--check"]);
    assert_eq!(check.status, Some(1));
    assert_eq!(
        check.stdout,
        indoc! {r#"
        --- a/terraform/net/terraform.tfvars.json
        +++ b/terraform/net/terraform.tfvars.json
        @@ -1,3 +1,3 @@
         {
        -  "cidr": "10.0.0.0/16"
        +  "cidr": "10.1.0.0/16"
         }
    "#}
    );
    assert_eq!(
        check.stderr,
        indoc! {"
        error: [project]/render is not up to date
    "}
    );
}

const BLUEPRINT: &str = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: x\nrepository:\n  url: git@github.com:acme/platform.git\nsources:\n  - name: core\n    url: oci://ghcr.io/acme/core:v1.2.0\n  - name: vendor\n    url: github.com/acme/vendor\n    ref:\n      tag: v2.0.0\n";

const VENDOR_FACET: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: vendor\nterraform:\n  - name: cluster\n    source: core\n    path: cluster/talos\n    inputs:\n      vip: ${terraform_output('net', 'vip')}\n  - name: net\n    path: net\nkustomize:\n  - name: ingress\n    source: core\n    path: ingress/nginx\n    patches:\n      - path: patches/ingress.yaml\n  - name: extra\n    source: vendor\n    interval: 90s\n    substitutions:\n      lb: ${terraform_output('net', 'lb')}\n";

#[test]
fn sources_backends_patches_and_deferred_substitutions() {
    let dir = project(&[
        (
            "windsor.yaml",
            "version: v1alpha1\ncontexts:\n  local:\n    terraform:\n      backend:\n        type: s3\n        prefix: acme/\n        s3:\n          bucket: state\n",
        ),
        ("_template/blueprint.yaml", BLUEPRINT),
        ("_template/facets/vendor.yaml", VENDOR_FACET),
        ("_template/kustomize/patches/ingress.yaml", "kind: Service\nmetadata:\n  name: x\n"),
    ]);
    let r = render(dir.path(), None);
    // The blueprint's own repository is applied though no kustomization reads it, as
    // the Windsor CLI applies it (seen on published-blueprint projects, S14).
    assert_eq!(validate_flux(&r), 5);
    let text = |p: &str| String::from_utf8_lossy(&r.files[p]).to_string();
    // `cluster` reads `net`'s outputs, so it is applied after it.
    let plan = text("terraform/plan.json");
    assert!(plan.find("\"id\": \"net\"") < plan.find("\"id\": \"cluster\""));
    // Every file, in the snapshot: the three sources (the project's repository, core's
    // OCI URL, vendor's https URL), the ingress patch inlined, extra's interval 1m30s,
    // the s3 backend's bucket and key, the plan's module addresses, and `values-extra`
    // waiting in flux/deferred.json instead of a `${…}` left in its config map.
    snap!("render__render_sources_backends", &dump(&r));

    // --strict refuses deferred values; an unknown backend names where it was set.
    let out = dir.path().join("render");
    let strict = bpc_render(
        dir.path(),
        &["--out", out.to_str().expect("utf-8"), "--strict"],
    );
    assert_eq!(strict.status, Some(1));
    assert!(!out.exists());
    std::fs::write(
        dir.path().join("windsor.yaml"),
        "version: v1alpha1\ncontexts:\n  local:\n    terraform:\n      backend:\n        type: gcs\n",
    )
    .expect("write");
    let bad = bpc_render(dir.path(), &["--out", out.to_str().expect("utf-8")]);
    assert_eq!(
        bad.stderr,
        indoc! {"
        error: unknown terraform backend type `gcs` (set in windsor.yaml contexts.local at terraform.backend.type); supported: none, local, s3, kubernetes, azurerm

    "}
    );
}

/// The windsor-core (eaa2bcea) corpus rendered with `tests/render-values/VALUES.yaml`,
/// in context `local` (a dev context, docs/semantics.md S4) unless `context` is given.
/// The project is copied out of this repository first: a render outside dev mode reads
/// the git origin of the repository holding the project (docs/render.md), which must
/// not be this one's.
fn windsor_core(values: &str, context: Option<&str>) -> Rendered {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir") {
            let entry = entry.expect("entry");
            if entry.file_type().expect("type").is_dir() {
                copy(&entry.path(), &to.join(entry.file_name()));
            } else {
                std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
            }
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("windsor-core-eaa2bcea");
    copy(
        &repo().join("tests/conformance/windsor-core-eaa2bcea"),
        &project,
    );
    let values = repo().join(format!("tests/render-values/{values}.yaml"));
    let sources = Arc::new(FileMap::new());
    let mut options = Options::at(repo());
    options.locate.project = Some(project);
    options.locate.values = vec![values];
    options.locate.context = context.map(str::to_string);
    Session::open(options, sources.clone())
        .and_then(|session| session.render(ManifestFormat::Yaml))
        .unwrap_or_else(|d| {
            let text: Vec<String> = d.iter().map(|d| show(d, &sources, false)).collect();
            panic!("{}", text.join("\n"))
        })
}

/// A case of the current public corpus (windsorcli/core eaa2bcea, the values of its
/// `addon-database` tests): metal, dev mode, flux systems with tiers.
#[test]
fn windsor_core_render() {
    let r = windsor_core("windsor-core-metal-dev", None);
    assert!(validate_flux(&r) > 10);
    snap!("render__render_windsor_core_metal_dev", &dump(&r));
}

/// A second case of the same corpus (its `platform-aws` tests, first case): AWS EKS,
/// an S3 state backend, no gateway; the terraform chain runs backend first. Context
/// `prod`, so not a dev context.
#[test]
fn windsor_core_aws_render() {
    let r = windsor_core("windsor-core-aws", Some("prod"));
    assert!(validate_flux(&r) > 10);
    for id in ["backend", "network", "cluster", "gitops"] {
        let tfvars = format!("terraform/{id}/terraform.tfvars.json");
        let parsed: serde_json::Value =
            serde_json::from_slice(r.files.get(&tfvars).expect("tfvars")).expect("json");
        assert!(parsed.is_object(), "{tfvars}");
    }
    let plan = String::from_utf8_lossy(&r.files["terraform/plan.json"]).to_string();
    assert!(plan.find("\"id\": \"backend\"") < plan.find("\"id\": \"network\""));
    assert!(plan.find("\"id\": \"network\"") < plan.find("\"id\": \"cluster\""));
    snap!("render__render_windsor_core_aws", &dump(&r));
}

/// A local module's `variable` blocks against the component's inputs: a misspelt
/// input (Windsor would drop it silently) and a required variable nobody sets are
/// warnings naming the facet line and the module; `--strict` refuses to write.
#[test]
fn local_module_variables_are_checked_against_inputs() {
    let project = || {
        Test::new()
            .facet(
                "cluster.yaml",
                indoc! {"
                metadata:
                  name: cluster
                terraform:
                  - name: cluster
                    path: cluster
                    inputs:
                      cluster_name: demo
                      wrokers: 3
            "},
            )
            .file(
                "terraform/cluster/variables.tf",
                indoc! {r#"
                variable "cluster_name" {
                  type = string
                }
                variable "workers" {
                  type    = number
                  default = 1
                }
                variable "region" {
                  type = string
                }
            "#},
            )
    };
    let warnings = indoc! {"
            warning: input `wrokers` of terraform component `cluster` matches no variable of terraform/cluster
              --> _template/facets/cluster.yaml:10:16
               |
            10 |       wrokers: 3
               |                ^ set here
               |
               = help: did you mean `workers`?

            warning: required variable `region` (terraform/cluster/variables.tf) has no input in terraform component `cluster`
            = help: set it in the component's `inputs`, or give the variable a `default`

    "};
    project()
        .args(["render", "--out", "out"])
        .stderr(format!("{warnings}rendered 9 file(s) to out\n"))
        .run();
    project()
        .args(["render", "--out", "out", "--strict"])
        .status(1)
        .stderr(format!(
            "{warnings}error: 2 warning(s) with --strict; nothing written\n"
        ))
        .run();
}

/// Values waiting on Terraform outputs are counted in the summary line, and `--check`
/// says so too when the tree is otherwise up to date.
#[test]
fn deferred_values_show_in_the_summary_and_under_check() {
    let dir = crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/app.yaml",
            "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: app\nkustomize:\n  - name: app\n    substitutions:\n      vip: ${terraform_output('net', 'vip')}\n",
        ),
    ]);
    let out = bpc(dir.path(), &["render", "--context", "prod", "--out", "out"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `prod` is not defined: there is no contexts/prod/ and no `contexts.prod` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        warning: no URL for GitRepository `prod` (blueprint `repository`): it is not rendered

        note: deferred: values-app.vip
        rendered 8 file(s) to out; 1 value(s) deferred until terraform outputs exist (listed in deferred.json; render again with --terraform-outputs)
    "}
    );
    let check = bpc(
        dir.path(),
        &["render", "--context", "prod", "--out", "out", "--check"],
    );
    assert!(check.success(), "{}", check.stderr);
    assert_eq!(
        check.stderr,
        indoc! {"
        warning: context `prod` is not defined: there is no contexts/prod/ and no `contexts.prod` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        warning: no URL for GitRepository `prod` (blueprint `repository`): it is not rendered

        note: deferred: values-app.vip
        out is up to date; 1 value(s) deferred until terraform outputs exist (listed in deferred.json; render again with --terraform-outputs)
    "}
    );
}

/// Outside dev mode, a blueprint without `repository` gets the project's git origin as
/// its primary GitRepository (host/path form, https, branch main), as the Windsor CLI
/// does; credentials in the remote URL are not written.
#[test]
fn the_primary_repository_falls_back_to_the_git_origin() {
    let facet = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: app\nkustomize:\n  - name: app\n";
    let dir = crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", facet),
        (
            ".git/config",
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://bot:s3cret@github.com/acme/platform.git\n",
        ),
    ]);
    let out = bpc(dir.path(), &["render", "--context", "prod", "--out", "out"]);
    assert!(out.success(), "{}", out.stderr);
    let source =
        std::fs::read_to_string(dir.path().join("out/flux/sources/gitrepository-prod.yaml"))
            .expect("the primary GitRepository is rendered");
    assert_eq!(
        source,
        indoc! {"
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: GitRepository
        metadata:
          name: prod
          namespace: system-gitops
        spec:
          url: https://github.com/acme/platform
          ref:
            branch: main
          interval: 1m0s
          timeout: 2m0s
    "}
    );
    // Without a repository around the project, the warning stays.
    std::fs::remove_dir_all(dir.path().join(".git")).expect("rm");
    let out = bpc(dir.path(), &["render", "--context", "prod", "--out", "out"]);
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `prod` is not defined: there is no contexts/prod/ and no `contexts.prod` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        warning: no URL for GitRepository `prod` (blueprint `repository`): it is not rendered

        rendered 6 file(s) to out
    "}
    );
}

/// A local module's variables are listed beside its tfvars (`variables.json`), as
/// Windsor's tfvars file lists them in comments: description, literal default (none for
/// a sensitive variable), required, and where the value comes from.
#[test]
fn a_local_module_gets_its_variables_listed() {
    let facet = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: f\nterraform:\n  - name: net\n    path: net\n    inputs:\n      cidr: 10.0.0.0/16\n      vip: ${terraform_output('x', 'vip')}\n";
    let module = "variable \"cidr\" {\n  description = \"The network range\"\n}\nvariable \"vip\" {}\nvariable \"zones\" {\n  default = [\"a\", \"b\"]\n}\nvariable \"token\" {\n  sensitive = true\n  default   = \"s3cret\"\n}\nvariable \"computed\" {\n  default = \"${path.module}/x\"\n}\n";
    let dir = crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/f.yaml", facet),
        ("terraform/net/variables.tf", module),
    ]);
    let out = bpc(dir.path(), &["render", "--context", "prod", "--out", "out"]);
    assert!(out.success(), "{}", out.stderr);
    let text = std::fs::read_to_string(dir.path().join("out/terraform/net/variables.json"))
        .expect("variables.json");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let v = &doc["variables"];
    assert_eq!(doc["module"], "terraform/net");
    assert_eq!(v["cidr"]["description"], "The network range");
    assert_eq!(v["cidr"]["input"], "tfvars");
    assert_eq!(v["vip"]["input"], "deferred");
    assert_eq!(v["vip"]["required"], true);
    assert_eq!(v["zones"]["default"], serde_json::json!(["a", "b"]));
    assert_eq!(v["zones"]["input"], "none");
    assert_eq!(v["token"]["sensitive"], true);
    assert_eq!(
        text,
        indoc! {r#"
        {
          "module": "terraform/net",
          "variables": {
            "cidr": {
              "description": "The network range",
              "required": true,
              "input": "tfvars"
            },
            "vip": {
              "required": true,
              "input": "deferred"
            },
            "zones": {
              "default": [
                "a",
                "b"
              ],
              "required": false,
              "input": "none"
            },
            "token": {
              "sensitive": true,
              "required": false,
              "input": "none"
            },
            "computed": {
              "required": false,
              "input": "none"
            }
          }
        }
    "#}
    );
    assert!(v["computed"].get("default").is_none(), "{text}");
    assert_eq!(v["computed"]["required"], false);
}

/// A schema violation in the context values warns with its place and the render goes
/// on (as the Windsor CLI's render does); `--strict` makes it exit 1 writing nothing
/// (docs/semantics.md S4).
#[test]
fn schema_violations_warn_and_strict_writes_nothing() {
    let dir = crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "contexts/_template/schema.yaml",
            "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  gitops:\n    type: object\n    properties:\n      interval: {type: string}\n    additionalProperties: false\n",
        ),
        (
            "contexts/_template/facets/app.yaml",
            "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: app\nkustomize:\n  - name: app\n",
        ),
        (
            "contexts/prod/values.yaml",
            "id: wprod001\ngitops:\n  namespace: other-gitops\n",
        ),
    ]);
    let root = dir.path();
    let out = bpc(root, &["render", "--context", "prod", "--out", "r"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: invalid value at `gitops`: Additional properties are not allowed ('namespace' was unexpected)
         --> contexts/prod/values.yaml:3:3
          |
        3 |   namespace: other-gitops
          |   ^^^^^^^^^^^^^^^^^^^^^^^ set by contexts/prod/values.yaml
          |
          = note: rule `additionalProperties` of schema.yaml, at /properties/gitops/additionalProperties
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

        warning: no URL for GitRepository `prod` (blueprint `repository`): it is not rendered

        rendered 6 file(s) to r
    "}
    );
    // Rendered with the value as written, as Windsor does.
    assert!(root
        .join("r/flux/sources/namespace-other-gitops.yaml")
        .is_file());
    let strict = bpc(
        root,
        &["render", "--context", "prod", "--out", "s", "--strict"],
    );
    assert_eq!(strict.status, Some(1), "{}", strict.stderr);
    assert!(!root.join("s").exists());
    let eval = bpc(root, &["eval", "--context", "prod", "gitops.namespace"]);
    assert!(eval.success(), "{}", eval.stderr);
    assert_eq!(
        eval.stdout,
        indoc! {"
        other-gitops
    "}
    );
    assert_eq!(
        eval.stderr,
        indoc! {"
        warning: invalid value at `gitops`: Additional properties are not allowed ('namespace' was unexpected)
         --> contexts/prod/values.yaml:3:3
          |
        3 |   namespace: other-gitops
          |   ^^^^^^^^^^^^^^^^^^^^^^^ set by contexts/prod/values.yaml
          |
          = note: rule `additionalProperties` of schema.yaml, at /properties/gitops/additionalProperties
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

    "}
    );
    let eval = bpc(
        root,
        &["eval", "--context", "prod", "--strict", "gitops.namespace"],
    );
    assert_eq!(eval.status, Some(1), "{}", eval.stderr);
}

/// A kustomization whose name Kubernetes would refuse as an object name (upper case,
/// `_`, a look-alike letter from another script) is not rendered: each one is named
/// with the facet line that wrote it, where the Windsor CLI leaves it to the cluster.
#[test]
fn kustomization_names_follow_kubernetes_object_names() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!(
                "{FACET_HEAD}metadata:\n  name: a\nkustomize:\n  - name: Ingress_Main\n    path: ingress\n  - name: \"ingre\u{455}s\"\n    path: ingress2\n  - name: web.v2\n    path: web\n"
            ),
        ),
    ]);
    let out = dir.path().join("render");
    let run = bpc_render(dir.path(), &["--out", out.to_str().expect("utf-8")]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: kustomization `Ingress_Main` cannot name a Kubernetes object: it holds 'I' (U+0049)
         --> _template/facets/a.yaml:6:11
          |
        6 |   - name: Ingress_Main
          |           ^^^^^^^^^^^^ this name becomes the Flux Kustomization's metadata.name
          |
          = help: Kubernetes object names are lowercase ASCII letters, digits, `-` and `.`, starting and ending with a letter or digit

        error: kustomization `ingre\u{455}s` cannot name a Kubernetes object: it holds '\u{455}' (U+0455)
         --> _template/facets/a.yaml:8:11
          |
        8 |   - name: \"ingre\u{455}s\"
          |           ^^^^^^^^^ this name becomes the Flux Kustomization's metadata.name
          |
          = help: Kubernetes object names are lowercase ASCII letters, digits, `-` and `.`, starting and ending with a letter or digit

        "}
    );
    assert!(!out.exists(), "nothing is written");
}

#[cfg(unix)]
#[test]
fn check_never_follows_links_blocks_or_reads_unbounded() {
    let dir = small();
    let out = dir.path().join("r");
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-TOKEN\n").expect("secret");
    // A link to a secret in place of a rendered file, a new one beside it, a FIFO and
    // a link to /dev/zero.
    let tfvars = out.join("terraform/c0/terraform.tfvars.json");
    std::fs::remove_file(&tfvars).expect("rm");
    std::os::unix::fs::symlink(&secret, &tfvars).expect("link");
    std::os::unix::fs::symlink(&secret, out.join("extra")).expect("link");
    std::os::unix::fs::symlink("/dev/zero", out.join("zero")).expect("link");
    let fifo = out.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // With a FIFO in the tree an unbounded or blocking read would never return; the
    // child is killed after 20 s so the test fails instead of hanging.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bpc"))
        .args(["render", "--check", "--out", s(&out)])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("render --check blocked on the hostile tree");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(
        masked(dir.path(), &stdout),
        indoc! {r#"
        ! a/extra is a symbolic link; only regular files are compared, so it is not read
        ! a/pipe is a FIFO; only regular files are compared, so it is not read
        ! a/terraform/c0/terraform.tfvars.json is a symbolic link; only regular files are compared, so it is not read
        --- /dev/null
        +++ b/terraform/c0/terraform.tfvars.json
        @@ -0,0 +1,4 @@
        +{
        +  "i": 0,
        +  "tag": "one"
        +}
        ! a/zero is a symbolic link; only regular files are compared, so it is not read
    "#}
    );
}

#[test]
fn check_bounds_the_size_of_a_file_it_reads() {
    let dir = small();
    let out = dir.path().join("r");
    assert!(bpc(dir.path(), &["render", "--out", s(&out)]).success());
    let big = std::fs::File::create(out.join("big")).expect("big");
    big.set_len(bpc::render::write::MAX_CHECKED_FILE + 1)
        .expect("sparse file");
    let run = bpc(dir.path(), &["render", "--check", "--out", s(&out)]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stdout,
        indoc! {"
        ! a/big is larger than 16777216 bytes, the most --check reads of one file; only regular files are compared, so it is not read
    "}
    );
}
