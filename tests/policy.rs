//! `bpc check --policy` (docs/policy.md): Rego policies over the public windsor-core
//! template's contexts, one per kind of input (blueprint, rendered Flux objects,
//! Terraform variables, the context's values), with their exact output; a policy in
//! conftest's older Rego v0; the JSON form; and the errors of a policy that does not
//! parse, does not finish, or holds too much memory.

use crate::common::{bpc, copy_dir, repo, Output};
use std::path::{Path, PathBuf};

/// windsor-core's template and `windsor.yaml`, the render set's contexts, and one
/// more context, `strict-off`: a dev metal context that turns policies off and routes
/// alerts to Slack with a (sensitive) webhook.
fn project(dir: &Path) -> PathBuf {
    let project = dir.join("project");
    let core = repo().join("tests/conformance/windsor-core-eaa2bcea");
    copy_dir(
        &core.join("contexts/_template"),
        &project.join("contexts/_template"),
    );
    std::fs::copy(core.join("windsor.yaml"), project.join("windsor.yaml")).expect("copy");
    copy_dir(
        &repo().join("tests/conformance/windsor-render-eaa2bcea/contexts"),
        &project.join("contexts"),
    );
    let metal_dev = std::fs::read_to_string(project.join("contexts/metal-dev/values.yaml"))
        .expect("metal-dev values");
    std::fs::create_dir_all(project.join("contexts/strict-off")).expect("mkdir");
    std::fs::write(
        project.join("contexts/strict-off/values.yaml"),
        format!(
            "{metal_dev}policies:\n  enabled: false\ntelemetry:\n  alerts:\n    slack:\n      \
             webhook_url: https://hooks.slack.example/T000/B000/XXXX\n"
        ),
    )
    .expect("write");
    project
}

fn policies(name: &str) -> String {
    repo()
        .join("tests/policy")
        .join(name)
        .to_string_lossy()
        .to_string()
}

/// What the policies printed: stdout after the template's own summary line.
/// `bpc check --policy tests/policy/<set> EXTRA…` in a fresh copy of windsor-core.
fn check_with(set: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project(dir.path());
    let set = policies(set);
    let mut args = vec!["check", "--policy", set.as_str()];
    args.extend_from_slice(extra);
    bpc(&project, &args)
}

fn policy_part(out: &Output) -> String {
    let at = out
        .stdout
        .find("\nerror: ")
        .or_else(|| out.stdout.find("\nwarning: "))
        .or_else(|| out.stdout.find("\npolicies: "))
        .unwrap_or_else(|| panic!("no policy output in:\n{}", out.text()));
    out.stdout[at + 1..].to_string()
}

#[test]
fn windsor_core_policies_trace_each_finding_to_its_facet_line() {
    let out = check_with(
        "windsor-core",
        &["--context", "aws", "--context", "strict-off"],
    );
    assert_eq!(
        out.status,
        Some(1),
        "a deny fails the check: {}",
        out.text()
    );
    let want = r#"error: terraform component network runs a single NAT gateway outside a dev context [policy main.deny_single_nat]
  --> contexts/_template/facets/platform-aws.yaml:80:27
   |
80 |       single_nat_gateway: "${topology != 'ha'}"
   |                           ^^^^^^^^^^^^^^^^^^^^^ terraform[network].inputs.single_nat_gateway is written here
   |
   = note: context `aws`, in blueprint.yaml

warning: Kustomization observability-install may take 15m0s [policy main.warn_slow]
   --> contexts/_template/facets/platform-base.yaml:402:16
    |
402 |       timeout: 15m
    |                ^^^ kustomize[observability-install].timeout is written here
    |
    = note: context `aws`, in flux/kustomizations/observability-install.json

warning: Kustomization pki-install may take 20m0s [policy main.warn_slow]
   --> contexts/_template/facets/platform-base.yaml:385:16
    |
385 |       timeout: 20m
    |                ^^^ kustomize[pki-install].timeout is written here
    |
    = note: context `aws`, in flux/kustomizations/pki-install.json

warning: Kustomization policy-install may take 30m0s [policy main.warn_slow]
   --> contexts/_template/facets/platform-base.yaml:308:16
    |
308 |       timeout: 30m
    |                ^^^ kustomize[policy-install].timeout is written here
    |
    = note: context `aws`, in flux/kustomizations/policy-install.json

warning: Kustomization telemetry-install may take 30m0s [policy main.warn_slow]
   --> contexts/_template/facets/platform-base.yaml:327:16
    |
327 |       timeout: 30m
    |                ^^^ kustomize[telemetry-install].timeout is written here
    |
    = note: contexts `aws`, `strict-off`, in flux/kustomizations/telemetry-install.json

error: context strict-off turns Kyverno policies off [policy main.deny_policies_off]
= note: context `strict-off`, in blueprint.yaml

warning: context strict-off routes alerts to Slack (webhook <sensitive>) [policy main.warn_slack]
= note: context `strict-off`, in blueprint.yaml

warning: Kustomization cni-install may take 15m0s [policy main.warn_slow]
  --> contexts/_template/facets/option-cni.yaml:86:16
   |
86 |       timeout: 15m
   |                ^^^ kustomize[cni-install].timeout is written here
   |
   = note: context `strict-off`, in flux/kustomizations/cni-install.json

warning: Kustomization csi-install may take 20m0s [policy main.warn_slow]
  --> contexts/_template/facets/option-storage.yaml:59:16
   |
59 |       timeout: 20m
   |                ^^^ kustomize[csi-install].timeout is written here
   |
   = note: context `strict-off`, in flux/kustomizations/csi-install.json

warning: Kustomization dns-install may take 20m0s [policy main.warn_slow]
  --> contexts/_template/facets/addon-private-dns.yaml:67:16
   |
67 |       timeout: 20m
   |                ^^^ kustomize[dns-install].timeout is written here
   |
   = note: context `strict-off`, in flux/kustomizations/dns-install.json

warning: Kustomization observability-install may take 20m0s [policy main.warn_slow]
   --> contexts/_template/facets/addon-observability.yaml:166:16
    |
166 |       timeout: 20m
    |                ^^^ kustomize[observability-install].timeout is written here
    |
    = note: context `strict-off`, in flux/kustomizations/observability-install.json

error: component cluster runs Talos 1.13.7, older than 1.14.0 [policy main.deny_talos_version]
  --> contexts/_template/facets/platform-metal.yaml:57:22
   |
57 |       talos_version: ${talos.talos_version}
   |                      ^^^^^^^^^^^^^^^^^^^^^^ terraform[cluster].inputs.talos_version is written here
   |
   = note: context `strict-off`, in terraform/cluster/terraform.tfvars.json

policies: 5 rule(s) from 4 file(s) over 56 input(s) of 2 context(s): 3 denied, 9 warning(s), 1 excepted
"#;
    let got = policy_part(&out);
    assert!(got == want, "{}", crate::common::diff(want, &got));
}

#[test]
fn a_conftest_style_v0_policy_runs_unchanged() {
    let out = check_with("v0", &["--context", "extras", "--context", "local"]);
    assert_eq!(out.status, Some(1), "{}", out.text());
    let want = "error: GitRepository gitvendor follows a branch, not a tag [policy main.deny]
= note: context `extras`, in flux/sources/gitrepository-gitvendor.json

error: GitRepository local follows a branch, not a tag [policy main.deny]
= note: context `local`, in flux/sources/gitrepository-local.json

policies: 1 rule(s) from 1 file(s) over 59 input(s) of 2 context(s): 2 denied, 0 warning(s)
";
    let got = policy_part(&out);
    assert!(got == want, "{}", crate::common::diff(want, &got));
}

#[test]
fn json_findings_carry_the_location_and_the_rules_object() {
    let out = check_with(
        "windsor-core",
        &["--context", "strict-off", "--format", "json"],
    );
    assert_eq!(out.status, Some(1), "{}", out.text());
    let value: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let report = &value["policies"];
    assert_eq!(
        (
            &report["denied"],
            &report["warnings"],
            &report["excepted"],
            &report["inputs"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(6),
            &serde_json::json!(1),
            &serde_json::json!(29)
        )
    );
    let talos = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == "main.deny_talos_version")
        .expect("the Talos finding");
    assert_eq!(
        talos,
        &serde_json::json!({
            "rule": "main.deny_talos_version",
            "severity": "error",
            "message": "component cluster runs Talos 1.13.7, older than 1.14.0",
            "contexts": ["strict-off"],
            "input": "terraform/cluster/terraform.tfvars.json",
            "location": {
                "file": "contexts/_template/facets/platform-metal.yaml",
                "line": 57,
                "column": 22,
                "label": "terraform[cluster].inputs.talos_version is written here"
            },
            "object": {
                "msg": "component cluster runs Talos 1.13.7, older than 1.14.0",
                "path": ["variables", "talos_version"]
            }
        })
    );
}

/// `bpc check --policy policy/ …` in the project with `policy/broken.rego` holding
/// `text`: (exit status, stderr).
fn with_policy(text: &str, extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project(dir.path());
    std::fs::create_dir_all(project.join("policy")).expect("mkdir");
    std::fs::write(project.join("policy/broken.rego"), text).expect("write");
    let mut args = vec!["check", "--policy", "policy", "--context", "local"];
    args.extend_from_slice(extra);
    let out = bpc(&project, &args);
    (out.status, out.stderr)
}

#[test]
fn a_policy_that_does_not_parse_is_an_error_at_its_line() {
    let (status, stderr) = with_policy(
        "package main\n\nimport rego.v1\n\ndeny contains msg if {\n\tinput.kind == \"Kustomization\"\n\tmsg := sprintf(\"%s\", [input.kind]\n}\n",
        &[],
    );
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr,
        "error: invalid policy: expecting `)` while parsing call expr
 --> policy/broken.rego:8:1
  |
8 | }
  | ^ here

"
    );
}

#[test]
fn a_rule_that_does_not_finish_stops_at_the_time_budget() {
    let started = std::time::Instant::now();
    let (status, stderr) = with_policy(
        "package main\n\nimport rego.v1\n\n# Ten billion sums.\ndeny contains msg if {\n\tcount([x | some a in numbers.range(1, 100000); some b in numbers.range(1, 100000); x := a + b]) < 0\n\tmsg := \"never\"\n}\n",
        &["--policy-timeout", "1"],
    );
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr,
        "error: policy rule `main.deny` did not finish within 1 s (the policy time budget)
 --> policy/broken.rego:6:1
  |
6 | deny contains msg if {
  | ^^^^^^^^^^^^^^^^^^^^^^ this rule
  |
  = note: in context `local`
  = help: a rule that loops over large ranges or joins inputs with themselves can take unbounded time; --policy-timeout SECONDS raises the budget

"
    );
    assert!(started.elapsed().as_secs() < 60, "it stopped at the budget");
}

#[test]
fn a_rule_that_holds_too_much_stops_at_the_memory_budget() {
    let (status, stderr) = with_policy(
        "package main\n\nimport rego.v1\n\ndeny contains msg if {\n\txs := [sprintf(\"%d-padding\", [n]) | some n in numbers.range(1, 100000000)]\n\tcount(xs) < 0\n\tmsg := \"never\"\n}\n",
        &["--policy-memory", "64"],
    );
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr,
        "error: policy rule `main.deny` held more than 64 MiB (the policy memory budget)
 --> policy/broken.rego:5:1
  |
5 | deny contains msg if {
  | ^^^^^^^^^^^^^^^^^^^^^^ this rule
  |
  = note: in context `local`
  = help: --policy-memory MIB raises the budget

"
    );
}

#[test]
fn test_cases_assert_what_the_policies_find() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project(dir.path());
    // The aws context's values as two cases' values: one asserts the denial the
    // policies give, the other (wrongly) that they give none.
    let aws = std::fs::read_to_string(project.join("contexts/aws/values.yaml")).expect("aws");
    let values: String = aws.lines().map(|l| format!("      {l}\n")).collect();
    std::fs::write(
        project.join("contexts/_template/tests/policy.test.yaml"),
        format!(
            "cases:\n  - name: policy aws runs one NAT gateway\n    values:\n{values}    policies:\n      \
             deny: [\"runs a single NAT gateway\"]\n  - name: policy aws passes every policy\n    \
             values:\n{values}    policies:\n      deny: []\n      warn: [\"pki-install may take\"]\n"
        ),
    )
    .expect("write");
    let core = policies("windsor-core");
    let out = bpc(
        &project,
        &["test", "--filter", "policy aws", "--policy", &core],
    );
    assert_eq!(out.status, Some(1), "{}", out.text());
    let want = "=== tests/policy.test.yaml ===
✓ policy aws runs one NAT gateway
✗ policy aws passes every policy
  policies.deny: unexpected denial \"terraform component network runs a single NAT gateway outside a dev context\" [main.deny_single_nat] on blueprint.yaml
  policies.warn: unexpected warning \"Kustomization observability-install may take 15m0s\" [main.warn_slow] on flux/kustomizations/observability-install.json
  policies.warn: unexpected warning \"Kustomization policy-install may take 30m0s\" [main.warn_slow] on flux/kustomizations/policy-install.json
  policies.warn: unexpected warning \"Kustomization telemetry-install may take 30m0s\" [main.warn_slow] on flux/kustomizations/telemetry-install.json

1 passed, 1 failed
";
    assert!(
        out.stdout == want,
        "{}",
        crate::common::diff(want, &out.stdout)
    );
    // Without --policy, a case that asserts policies fails saying so.
    let out = bpc(&project, &["test", "--filter", "policy aws runs"]);
    assert_eq!(out.status, Some(1), "{}", out.text());
    assert!(
        out.stdout
            .contains("policies: the case asserts policies, but no --policy was given"),
        "{}",
        out.stdout
    );
}

#[test]
fn verify_runs_the_policies_on_the_objects_it_builds() {
    if !crate::verify::kustomize_installed("verify_runs_the_policies_on_the_objects_it_builds") {
        return;
    }
    let rules = "package main\n\nimport rego.v1\n\n\
        deny_public_host contains msg if {\n\
        \tinput.kind == \"ConfigMap\"\n\
        \thost := input.data.host\n\
        \tnot endswith(host, \".internal\")\n\
        \tmsg := sprintf(\"ConfigMap %s serves the public host %s\", [input.metadata.name, host])\n\
        }\n\n\
        warn_small_cache contains msg if {\n\
        \tinput.kind == \"ConfigMap\"\n\
        \tto_number(input.data.size) < 2\n\
        \tmsg := sprintf(\"ConfigMap %s keeps a cache of %s\", [input.metadata.name, input.data.size])\n\
        }\n";
    // A Kustomization `web` whose build has a ConfigMap with a substituted host, and a
    // component `cache` with another.
    let test = crate::verify::project(&crate::verify::apps(""))
        .file("policy/hosts.rego", rules)
        .args(["--policy", "policy"]);
    let (text, status) = crate::verify::verified(test);
    assert_eq!(status, Some(1), "{text}");
    let want = "== context `local` ==
warning: ConfigMap cache keeps a cache of 1 (policy main.warn_small_cache) [policy-warn]
 --> _template/facets/apps.yaml:9:9
  |
9 |       - cache
  |         ^^^^^ the component it comes from, written by facet `apps`
error: ConfigMap settings serves the public host app.example.com (policy main.deny_public_host) [policy-deny]
 --> _template/facets/apps.yaml:6:5
  |
6 |   - name: web
  |     ^^^^^^^^^ the kustomization that builds it, written by facet `apps`
context  kustomizations  objects  errors  warnings
local                 1        8       1         1
1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
";
    assert!(text == want, "{}", crate::common::diff(want, &text));
}

#[test]
fn namespace_chooses_the_package_whose_rules_are_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project(dir.path());
    std::fs::create_dir_all(project.join("rules")).expect("mkdir");
    std::fs::write(
        project.join("rules/platform.rego"),
        "package platform.flux\n\nimport rego.v1\n\ndeny contains msg if {\n\tinput.kind == \"Namespace\"\n\tmsg := sprintf(\"namespace %s\", [input.metadata.name])\n}\n",
    )
    .expect("write");
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--policy", "rules", "--context", "local"];
        args.extend_from_slice(extra);
        bpc(&project, &args)
    };
    // Package `main` has no rule: an error, not a silent pass.
    let out = run(&[]);
    assert_eq!(
        (out.status, out.stderr.as_str()),
        (
            Some(1),
            "error: the policies have no `deny`, `violation` or `warn` rule in package `main`\n= help: the packages they define: platform.flux; choose one with --namespace\n\n"
        )
    );
    let out = run(&["--namespace", "platform.flux"]);
    assert_eq!(
        (out.status, policy_part(&out)),
        (
            Some(1),
            "error: namespace system-gitops [policy platform.flux.deny]\n= note: context `local`, in flux/sources/namespace-system-gitops.json\n\npolicies: 1 rule(s) from 1 file(s) over 30 input(s) of 1 context(s): 1 denied, 0 warning(s)\n"
                .to_string()
        )
    );
}
