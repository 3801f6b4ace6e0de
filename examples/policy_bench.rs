//! Policies over every context against rendering every context (goal: 20 policies
//! over the 46 contexts of the render set in under 2× `bpc render --all-contexts`).
//!
//! `cargo build --release && cargo run --release --example policy_bench -- [RUNS]`
//!
//! Assembles the render conformance set's project (windsor-core's template and its
//! 46 contexts, `tests/conformance/windsor-render-eaa2bcea`), writes 20 Rego policies
//! over all three kinds of input, then RUNS times (default 3), side by side:
//! `bpc render --all-contexts --out DIR` and `bpc check --policy DIR --all-contexts`
//! (which composes and renders every context in memory, then evaluates the
//! policies). Both run as the release binary beside this example, output discarded.
//! Prints both wall times and their ratio per run, and the best of each.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Twenty policies: the blueprint, the Flux objects, the Terraform variables and the
/// context's values, as a platform team might write them.
const POLICIES: &[(&str, &str)] = &[
    (
        "single_nat",
        r#"deny_single_nat contains {"msg": msg, "path": ["terraform", i, "inputs", "single_nat_gateway"]} if {
	input.kind == "Blueprint"
	not data.bpc.context.values.dev
	some i, c in input.terraform
	c.inputs.single_nat_gateway == true
	msg := sprintf("%s runs a single NAT gateway", [c.name])
}"#,
    ),
    (
        "component_path",
        r#"deny_no_path contains msg if {
	input.kind == "Blueprint"
	some c in input.terraform
	not c.path
	msg := sprintf("terraform component %s has no path", [c.name])
}"#,
    ),
    (
        "depends_known",
        r#"deny_unknown_dependency contains msg if {
	input.kind == "Blueprint"
	names := {c.name | some c in input.terraform}
	some c in input.terraform
	some d in c.dependsOn
	not names[d]
	msg := sprintf("%s depends on unknown %s", [c.name, d])
}"#,
    ),
    (
        "sources_pinned",
        r#"warn_unpinned_source contains msg if {
	input.kind == "Blueprint"
	some s in input.sources
	not s.ref
	msg := sprintf("source %s is not pinned", [s.name])
}"#,
    ),
    (
        "slow",
        r#"warn_slow contains {"msg": msg, "path": ["spec", "timeout"]} if {
	input.kind == "Kustomization"
	regex.match(`^([1-9][0-9]+)m`, input.spec.timeout)
	to_number(regex.find_n(`^[0-9]+`, input.spec.timeout, 1)[0]) > 10
	msg := sprintf("%s may take %s", [input.metadata.name, input.spec.timeout])
}"#,
    ),
    (
        "prune",
        r#"deny_no_prune contains msg if {
	input.kind == "Kustomization"
	input.spec.prune == false
	not startswith(input.metadata.name, "crds")
	msg := sprintf("%s does not prune", [input.metadata.name])
}"#,
    ),
    (
        "wait",
        r#"warn_no_wait contains msg if {
	input.kind == "Kustomization"
	not input.spec.wait
	msg := sprintf("%s does not wait", [input.metadata.name])
}"#,
    ),
    (
        "labels",
        r#"deny_unlabelled contains msg if {
	input.kind == "Kustomization"
	not input.metadata.labels["windsorcli.dev/context"]
	msg := sprintf("%s carries no context label", [input.metadata.name])
}"#,
    ),
    (
        "interval",
        r#"warn_fast_interval contains msg if {
	input.kind == "Kustomization"
	input.spec.interval == "1m0s"
	msg := sprintf("%s reconciles every minute", [input.metadata.name])
}"#,
    ),
    (
        "namespace",
        r#"deny_namespace contains msg if {
	input.kind == "Kustomization"
	not input.metadata.namespace
	msg := sprintf("%s has no namespace", [input.metadata.name])
}"#,
    ),
    (
        "configmap_values",
        r#"warn_empty_configmap contains msg if {
	input.kind == "ConfigMap"
	count(object.get(input, "data", {})) == 0
	msg := sprintf("ConfigMap %s is empty", [input.metadata.name])
}"#,
    ),
    (
        "git_https",
        r#"deny_git_http contains msg if {
	input.kind == "GitRepository"
	startswith(input.spec.url, "http://")
	msg := sprintf("%s fetches over plain http", [input.metadata.name])
}"#,
    ),
    (
        "oci_tag",
        r#"warn_oci_latest contains msg if {
	input.kind == "OCIRepository"
	input.spec.ref.tag == "latest"
	msg := sprintf("%s follows latest", [input.metadata.name])
}"#,
    ),
    (
        "talos",
        r#"deny_talos contains {"msg": msg, "path": ["variables", "talos_version"]} if {
	input.kind == "TerraformVariables"
	v := input.variables.talos_version
	semver.compare(v, "1.14.0") < 0
	msg := sprintf("%s runs Talos %s", [input.component, v])
}"#,
    ),
    (
        "cidr",
        r#"deny_cidr contains msg if {
	input.kind == "TerraformVariables"
	cidr := input.variables.cidr_block
	not endswith(cidr, "/16")
	msg := sprintf("%s uses %s", [input.component, cidr])
}"#,
    ),
    (
        "concurrency",
        r#"warn_concurrency contains msg if {
	input.kind == "TerraformVariables"
	input.variables.concurrency > 10
	msg := sprintf("%s reconciles %d at once", [input.component, input.variables.concurrency])
}"#,
    ),
    (
        "empty_lists",
        r#"warn_no_volumes contains msg if {
	input.kind == "TerraformVariables"
	vs := input.variables.worker_volumes
	count(vs) == 0
	msg := sprintf("%s mounts no worker volume", [input.component])
}"#,
    ),
    (
        "policies_on",
        r#"deny_policies_off contains msg if {
	input.kind == "Blueprint"
	data.bpc.context.values.policies.enabled == false
	msg := sprintf("%s turns policies off", [data.bpc.context.name])
}"#,
    ),
    (
        "ids",
        r#"deny_no_id contains msg if {
	input.kind == "Blueprint"
	not data.bpc.context.values.id
	msg := sprintf("%s has no id", [data.bpc.context.name])
}"#,
    ),
    (
        "platform",
        r#"warn_platform contains msg if {
	input.kind == "Blueprint"
	p := data.bpc.context.values.platform
	not p in {"aws", "azure", "metal", "docker", "incus", "hetzner", "hyperv"}
	msg := sprintf("%s runs on %s", [data.bpc.context.name, p])
}"#,
    ),
];

#[path = "support/render_set.rs"]
mod render_set;

fn main() -> ExitCode {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let Some(bpc) = binary() else {
        eprintln!("no bpc binary beside this example: run `cargo build --release` first");
        return ExitCode::from(1);
    };
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("cannot make a temporary directory: {e}");
            return ExitCode::from(1);
        }
    };
    let (project, policies) = match assemble(dir.path()) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("cannot assemble the project: {e}");
            return ExitCode::from(1);
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{} policies, 46 contexts, {cores} core(s)", POLICIES.len());
    let (mut best_render, mut best_policy) = (f64::MAX, f64::MAX);
    for run in 1..=runs {
        let out = dir.path().join(format!("render-{run}"));
        let render = time(
            &bpc,
            &project,
            &["render", "--all-contexts", "--out", &out.to_string_lossy()],
            None,
        );
        let policy = time(
            &bpc,
            &project,
            &[
                "check",
                "--all-contexts",
                "--policy",
                &policies.to_string_lossy(),
            ],
            // The policies deny in some contexts (exit 1): the summary says they ran.
            Some("policies: 20 rule(s) from 20 file(s) over 1167 input(s) of 46 context(s)"),
        );
        let (Some(render), Some(policy)) = (render, policy) else {
            return ExitCode::from(1);
        };
        best_render = best_render.min(render);
        best_policy = best_policy.min(policy);
        println!(
            "run {run}: render --all-contexts {:.1} ms, check --policy --all-contexts {:.1} ms, ratio {:.2}x",
            render * 1000.0,
            policy * 1000.0,
            policy / render
        );
    }
    println!(
        "best: render {:.1} ms, policies {:.1} ms, ratio {:.2}x (goal < 2x)",
        best_render * 1000.0,
        best_policy * 1000.0,
        best_policy / best_render
    );
    ExitCode::SUCCESS
}

/// The release `bpc` beside `target/release/examples/`.
fn binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("bpc");
    bin.is_file().then_some(bin)
}

/// Seconds `bpc ARGS` took in `project`; `None` (said on stderr) when it failed or
/// could not start. With `summary`, the run succeeded when its stdout has that text,
/// whatever its exit status.
fn time(bpc: &Path, project: &Path, args: &[&str], summary: Option<&str>) -> Option<f64> {
    let start = Instant::now();
    let output = Command::new(bpc)
        .args(args)
        .current_dir(project)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    let elapsed = start.elapsed().as_secs_f64();
    match output {
        Ok(o) => {
            let ok = match summary {
                Some(text) => String::from_utf8_lossy(&o.stdout).contains(text),
                None => o.status.success(),
            };
            if ok {
                return Some(elapsed);
            }
            eprintln!(
                "bpc {} failed ({}):\n{}",
                args.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) => {
            eprintln!("cannot run {}: {e}", bpc.display());
            None
        }
    }
}

/// The project (windsor-core's template, the render set's contexts) and the policy
/// directory.
fn assemble(dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let project = dir.join("project");
    render_set::assemble(&project)?;
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies)?;
    for (name, rule) in POLICIES {
        std::fs::write(
            policies.join(format!("{name}.rego")),
            format!("package main\n\nimport rego.v1\n\n{rule}\n"),
        )?;
    }
    Ok((project, policies))
}
