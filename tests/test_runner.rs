//! `bpc test` end to end: the binary run on throwaway templates. Each assertion kind is
//! shown both passing and failing, so a runner that passed everything would fail here.
//! A run is bounded (`--max-cases`) and streams its report; cases whose names would
//! share a golden file are refused.

use crate::common::{bpc, components, indoc, project, Output, FACET_HEAD};
use std::path::Path;

const FACET: &str = FACET_HEAD;

/// A template with one facet that contributes a component only on aws, one
/// kustomization with two components, and reads a mocked terraform output.
fn template_files() -> Vec<(&'static str, String)> {
    vec![
        (
            "_template/schema.yaml",
            "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  provider:\n    type: string\n    default: docker\n  logs:\n    type: object\n    properties:\n      driver:\n        type: string\n        default: fluentd\n".to_string(),
        ),
        (
            "_template/facets/provider-base.yaml",
            format!(
                "{FACET_HEAD}metadata:\n  name: base\nterraform:\n  - name: network\n    path: network\n    inputs:\n      provider: ${{provider}}\n      cidr: 10.0.0.0/16\n  - name: cloud\n    path: cloud\n    when: provider == 'aws'\n    inputs:\n      region: us-east-1\nkustomize:\n  - name: logs\n    path: logs\n    components:\n      - base\n      - ${{logs.driver ?? 'none'}}\n"
            ),
        ),
        (
            "_template/facets/option-outputs.yaml",
            format!(
                "{FACET_HEAD}metadata:\n  name: outputs\nwhen: provider == 'aws'\nterraform:\n  - name: cluster\n    path: cluster\n    dependsOn: [network]\n    inputs:\n      vpc: ${{terraform_output('network', 'vpc_id')}}\n"
            ),
        ),
    ]
}

fn project_with_tests(tests: &str) -> tempfile::TempDir {
    let mut files = template_files();
    files.push(("_template/tests/main.test.yaml", tests.to_string()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    project(&refs)
}

/// `bpc test EXTRA…` in `dir`, whatever its exit status (the tests check it).
fn bpc_test(dir: &Path, extra: &[&str]) -> Output {
    bpc(dir, &[&["test"], extra].concat())
}

fn text(out: &Output) -> String {
    out.text()
}

#[test]
fn passing_and_failing_expectations_are_both_reported() {
    let dir = project_with_tests(
        "cases:\n  - name: aws has the cloud component\n    values:\n      provider: aws\n    terraformOutputs:\n      network:\n        vpc_id: vpc-1\n    expect:\n      terraform:\n        - name: cloud\n          inputs:\n            region: us-east-1\n        - name: cluster\n          inputs:\n            vpc: vpc-1\n  - name: wrong region is caught\n    values:\n      provider: aws\n    terraformOutputs:\n      network:\n        vpc_id: vpc-1\n    expect:\n      terraform:\n        - name: cloud\n          inputs:\n            region: eu-west-1\n",
    );
    let out = bpc_test(dir.path(), &[]);
    let t = text(&out);
    assert!(!out.success(), "{t}");
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ aws has the cloud component
        ✗ wrong region is caught
          terraform[cloud].inputs.region: expected "eu-west-1", got "us-east-1"

        1 passed, 1 failed
    "#}
    );
}

#[test]
fn missing_component_names_the_closest_present() {
    let dir = project_with_tests(
        "cases:\n  - name: typo\n    values:\n      provider: docker\n    expect:\n      terraform:\n        - name: netwrk\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✗ typo
          terraform[netwrk]: terraform component `netwrk` not found (closest present: network)

        0 passed, 1 failed
    "#}
    );
}

#[test]
fn exclude_with_fields_beyond_identity_checks_the_items() {
    // `components: [fluentd]` beyond the identity: passes only while `fluentd` is absent.
    let dir = project_with_tests(
        "cases:\n  - name: none driver drops fluentd\n    values:\n      provider: docker\n      logs:\n        driver: none\n    exclude:\n      kustomize:\n        - name: logs\n          components:\n            - fluentd\n  - name: fluentd present fails the exclude\n    values:\n      provider: docker\n      logs:\n        driver: fluentd\n    exclude:\n      kustomize:\n        - name: logs\n          components:\n            - fluentd\n  - name: identity-only exclude asserts absence\n    values:\n      provider: docker\n    exclude:\n      terraform:\n        - name: cloud\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ none driver drops fluentd
        ✗ fluentd present fails the exclude
          kustomize[logs].components: "fluentd" should not be present
        ✓ identity-only exclude asserts absence

        2 passed, 1 failed
    "#}
    );
}

#[test]
fn expect_error_passes_only_when_composition_fails() {
    let dir = project_with_tests(
        "cases:\n  - name: a failing composition passes\n    values:\n      provider: 42\n    expectError: true\n  - name: expecting an error that does not happen fails\n    values:\n      provider: docker\n    expectError: true\n  - name: wrong error text fails\n    values:\n      provider: 42\n    expectError: no such words\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ a failing composition passes
        ✗ expecting an error that does not happen fails
          expected composition to fail, but it succeeded
        ✗ wrong error text fails
          composition failed, but no error contains "no such words"; it said: invalid value at `provider`: 42 is not of type "string"
            error: invalid value at `provider`: 42 is not of type "string"
            = note: rule `type` of schema.yaml, at /properties/provider/type
            = note: set by values of case `wrong error text fails`

        1 passed, 2 failed
    "#}
    );
}

/// A template where `network` reads the outputs of `cloud`, which exists on aws only.
fn outputs_project(tests: &str) -> tempfile::TempDir {
    let facet = format!(
        "{FACET_HEAD}metadata:\n  name: base\nterraform:\n  - name: cloud\n    path: cloud\n    when: provider == 'aws'\n  - name: network\n    path: network\n    inputs:\n      zone: ${{terraform_output('cloud', 'zone') ?? 'none'}}\n      region: ${{terraform_output('cloud', 'region') ?? 'unset'}}\n"
    );
    project(&[
        ("_template/facets/platform-base.yaml", facet.as_str()),
        ("_template/tests/outputs.test.yaml", tests),
    ])
}

#[test]
fn mocked_outputs_follow_windsor_unmocked_outputs_are_null() {
    let dir = outputs_project(
        "cases:\n  - name: mocked and unmocked outputs\n    values:\n      provider: aws\n    terraformOutputs:\n      cloud:\n        zone: z1\n    expect:\n      terraform:\n        - name: network\n          inputs:\n            zone: z1\n            region: unset\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/outputs.test.yaml ===
        ✓ mocked and unmocked outputs

        1 passed, 0 failed
    "#}
    );
    // Stricter on request: every output read must be mocked.
    let t = text(&bpc_test(dir.path(), &["--unmocked-outputs", "error"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/outputs.test.yaml ===
        ✗ mocked and unmocked outputs
          composition failed: expression failed: terraform_output('cloud', 'region'): the case mocks component `cloud` but not its output `region`
            error: expression failed: terraform_output('cloud', 'region'): the case mocks component `cloud` but not its output `region`
              --> _template/facets/platform-base.yaml:13:17
               |
            13 |       region: ${terraform_output('cloud', 'region') ?? 'unset'}
               |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ terraform_output('cloud', 'region'): the case mocks component `cloud` but not its output `region`
               |
               = note: in `inputs` of terraform component `network` of facet `base`

        0 passed, 1 failed
    "#}
    );
}

#[test]
fn reading_outputs_of_a_component_left_out_by_its_when_fails_the_case() {
    let dir = outputs_project(
        "cases:\n  - name: cloud is not on docker\n    values:\n      provider: docker\n    terraformOutputs:\n      cloud:\n        zone: z1\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/outputs.test.yaml ===
        ✗ cloud is not on docker
          composition failed: component not found: cloud (terraform_output() reads a component that is not in the composed blueprint)
            error: component not found: cloud (terraform_output() reads a component that is not in the composed blueprint)
            = note: `cloud` is read in facets/platform-base.yaml

        0 passed, 1 failed
    "#}
    );
}

#[test]
fn show_prints_one_case_blueprint() {
    let dir = outputs_project(
        "cases:\n  - name: aws\n    values:\n      provider: aws\n    terraformOutputs:\n      cloud:\n        zone: z1\n",
    );
    let out = bpc_test(dir.path(), &["aws", "--show"]);
    let t = text(&out);
    assert!(out.success(), "{t}");
    assert_eq!(
        t,
        indoc::indoc! {r#"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: test
          description: Blueprint for the test context
        sources:
        - name: template
          install: true
        terraform:
        - name: cloud
          path: cloud
        - name: network
          path: network
          inputs:
            region: unset
            zone: z1
        configMaps:
          values-common:
            CONTEXT: test
    "#}
    );
    let out = bpc_test(dir.path(), &["aws", "--show", "--format", "json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&out.stdout).expect("--show --format json prints JSON");
    assert_eq!(doc["terraform"][1]["inputs"]["zone"], "z1", "{doc}");
}

#[test]
fn schema_defaults_apply_only_when_asked() {
    let dir = project_with_tests(
        "cases:\n  - name: default driver\n    values:\n      provider: docker\n    expect:\n      kustomize:\n        - name: logs\n          components:\n            - fluentd\n  - name: default driver with applySchemaDefaults\n    applySchemaDefaults: true\n    values:\n      provider: docker\n    expect:\n      kustomize:\n        - name: logs\n          components:\n            - fluentd\n",
    );
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✗ default driver
          kustomize[logs].components: missing "fluentd" (has ["base","none"])
        ✓ default driver with applySchemaDefaults

        1 passed, 1 failed
    "#}
    );
    let t = text(&bpc_test(dir.path(), &["--schema-defaults"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ default driver
        ✓ default driver with applySchemaDefaults

        2 passed, 0 failed
    "#}
    );
}

#[test]
fn name_and_filter_select_cases() {
    let dir = project_with_tests(
        "cases:\n  - name: alpha one\n    values: {provider: docker}\n  - name: alpha two\n    values: {provider: docker}\n  - name: beta\n    values: {provider: docker}\n",
    );
    let t = text(&bpc_test(dir.path(), &["beta"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ beta

        1 passed, 0 failed
    "#}
    );
    let t = text(&bpc_test(dir.path(), &["--filter", "alpha"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ alpha one
        ✓ alpha two

        2 passed, 0 failed
    "#}
    );
    let t = text(&bpc_test(dir.path(), &["--filter", "a*two"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ alpha two

        1 passed, 0 failed
    "#}
    );
}

#[test]
fn unknown_expectation_keys_warn_with_a_location() {
    let dir = project_with_tests(
        "cases:\n  - name: strategy in expect\n    values: {provider: docker}\n    expect:\n      terraform:\n        - name: network\n          strategy: merge\n",
    );
    let out = bpc_test(dir.path(), &[]);
    let t = text(&out);
    assert!(out.success(), "{t}");
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ strategy in expect

        1 passed, 0 failed
        warning: `strategy` of a terraform component expectation is not compared by the test matcher
         --> _template/tests/main.test.yaml:7:11
          |
        7 |           strategy: merge
          |           ^^^^^^^^ not compared
          |
          = help: the matcher compares `source`, `path`, `dependsOn`, `inputs` (as the Windsor CLI does); facet directives such as `strategy` and `when` never reach the blueprint

    "#}
    );
}

#[test]
fn bad_test_file_names_file_line_and_column() {
    let dir = project_with_tests("cases:\n  - name: x\n    values: [1\n");
    let out = bpc_test(dir.path(), &[]);
    let t = text(&out);
    assert!(!out.success(), "{t}");
    assert_eq!(
        t,
        indoc::indoc! {r#"
        error: this flow sequence is never closed: the file ends before its `]`
         --> _template/tests/main.test.yaml:3:13
          |
        3 |     values: [1
          |             ^
          |               - the file ends here
          |
          = help: close it with `]`

    "#}
    );
}

#[test]
fn json_output_lists_every_case() {
    let dir = project_with_tests(
        "cases:\n  - name: ok\n    values: {provider: docker}\n  - name: bad\n    values: {provider: docker}\n    expect:\n      terraform:\n        - name: nope\n",
    );
    let out = bpc_test(dir.path(), &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json output");
    assert!(v.is_object(), "{v}");
    assert_eq!(
        crate::common::masked(dir.path(), &out.stdout),
        indoc::indoc! {r#"
        {
          "cases": [
            {
              "file": "tests/main.test.yaml",
              "name": "ok",
              "passed": true,
              "mismatches": [],
              "errors": []
            },
            {
              "file": "tests/main.test.yaml",
              "name": "bad",
              "passed": false,
              "mismatches": [
                {
                  "path": "terraform[nope]",
                  "message": "terraform component `nope` not found (closest present: network)"
                }
              ],
              "errors": []
            }
          ],
          "passed": 1,
          "failed": 1
        }
    "#}
    );
    assert!(!out.success());
}

#[test]
fn snapshots_are_written_compared_and_orphans_reported() {
    let dir =
        project_with_tests("cases:\n  - name: docker blueprint\n    values: {provider: docker}\n");
    // No golden file yet: --snapshot fails and says how to create it.
    let out = bpc_test(dir.path(), &["--snapshot"]);
    assert!(!out.success(), "{}", text(&out));
    // --update writes it; then --snapshot passes.
    let out = bpc_test(dir.path(), &["--snapshot", "--update"]);
    assert!(out.success(), "{}", text(&out));
    let out = bpc_test(dir.path(), &["--snapshot"]);
    assert!(out.success(), "{}", text(&out));
    // A change in the template shows as a unified diff.
    let facet = dir.path().join("_template/facets/provider-base.yaml");
    let changed = std::fs::read_to_string(&facet)
        .expect("facet")
        .replace("10.0.0.0/16", "10.9.0.0/16");
    std::fs::write(&facet, changed).expect("write");
    let out = bpc_test(dir.path(), &["--snapshot"]);
    let t = text(&out);
    assert!(!out.success(), "{t}");
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✗ docker blueprint
          snapshot: blueprint differs from [project]/_template/tests/__snapshots__/main/docker-blueprint.yaml
          --- golden
          +++ composed
          @@ -10,7 +10,7 @@
           - name: network
             path: network
             inputs:
          -    cidr: 10.0.0.0/16
          +    cidr: 10.9.0.0/16
               provider: docker
           kustomize:
           - name: logs

        0 passed, 1 failed
    "#}
    );
    // Renaming the case leaves the old golden file orphaned, and that is reported.
    let tests = dir.path().join("_template/tests/main.test.yaml");
    std::fs::write(
        &tests,
        "cases:\n  - name: renamed\n    values: {provider: docker}\n",
    )
    .expect("write");
    let t = text(&bpc_test(dir.path(), &["--snapshot", "--update"]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/main.test.yaml ===
        ✓ renamed

        1 passed, 0 failed
        warning: golden file [project]/_template/tests/__snapshots__/main/docker-blueprint.yaml belongs to no case any more

    "#}
    );
}

/// An exclusion of a flux system's resources components checks only those components:
/// a named entry against the variant of that name, an unnamed one against every
/// variant; a variant that is not there excludes nothing. Verdicts as the Windsor CLI
/// 7b6bca77 gives them on the same template.
#[test]
fn exclude_of_resources_components_checks_the_variants() {
    let facet = format!(
        "{FACET_HEAD}metadata:\n  name: f\nflux:\n  - name: s\n    install:\n      components: [x]\n    resources:\n      - components: [a, b]\n      - name: extra\n        components: [c]\n"
    );
    let case = |name: &str, exclude: &str| {
        format!("  - name: {name}\n    values: {{}}\n    exclude:\n      flux:\n        - name: s\n{exclude}")
    };
    let tests = [
        case(
            "absent component passes",
            "          resources:\n            - components: [z]\n",
        ),
        case(
            "default variant component fails",
            "          resources:\n            - components: [a]\n",
        ),
        case(
            "named variant component fails",
            "          resources:\n            - name: extra\n              components: [c]\n",
        ),
        case(
            "named variant other component passes",
            "          resources:\n            - name: extra\n              components: [a]\n",
        ),
        case(
            "missing variant passes",
            "          resources:\n            - name: nope\n              components: [a]\n",
        ),
        case(
            "unnamed entry sees every variant",
            "          resources:\n            - components: [c]\n",
        ),
        case("identity only fails", ""),
    ]
    .concat();
    let dir = project(&[
        ("_template/facets/f.yaml", facet.as_str()),
        ("_template/tests/t.test.yaml", &format!("cases:\n{tests}")),
    ]);
    let t = text(&bpc_test(dir.path(), &[]));
    assert_eq!(
        t,
        indoc::indoc! {r#"
        === tests/t.test.yaml ===
        ✓ absent component passes
        ✗ default variant component fails
          flux[s].resources[0].components: "a" should not be present
        ✗ named variant component fails
          flux[s].resources[extra].components: "c" should not be present
        ✓ named variant other component passes
        ✓ missing variant passes
        ✗ unnamed entry sees every variant
          flux[s].resources[extra].components: "c" should not be present
        ✗ identity only fails
          flux[s]: flux system `s` should not exist

        3 passed, 4 failed
    "#}
    );
}

/// `values-common`'s load-balancer keys come from the schema's defaults in a case
/// that does not apply them, as in the Windsor CLI, whose config lookups fall back to
/// schema defaults (the oracle printed this `configMaps` for the same template); the
/// facets' own expressions still do not see the defaults.
#[test]
fn values_common_falls_back_to_schema_defaults_in_a_case_without_them() {
    let dir = crate::common::project(&[
        (
            "_template/schema.yaml",
            "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  network:\n    type: object\n    properties:\n      loadbalancer_ips:\n        type: object\n        properties:\n          start:\n            type: string\n            default: 10.5.1.10\n          end:\n            type: string\n            default: 10.5.1.100\n",
        ),
        (
            "_template/facets/base.yaml",
            &format!("{FACET_HEAD}metadata:\n  name: base\nterraform:\n  - name: t\n    path: t\n    inputs:\n      start: ${{network.loadbalancer_ips.start ?? 'none'}}\n"),
        ),
        (
            "_template/tests/lb.test.yaml",
            "cases:\n  - name: partial network\n    values:\n      network:\n        loadbalancer_ips:\n          start: 10.9.9.9\n    expect:\n      terraform:\n        - name: t\n",
        ),
    ]);
    let out = bpc_test(dir.path(), &["partial network", "--show"]);
    let shown = text(&out);
    assert!(
        shown.contains("  inputs:\n    start: 10.9.9.9\n"),
        "{shown}"
    );
    assert!(
        shown.ends_with("configMaps:\n  values-common:\n    CONTEXT: test\n    LOADBALANCER_IP_END: 10.5.1.100\n    LOADBALANCER_IP_RANGE: 10.9.9.9-10.5.1.100\n    LOADBALANCER_IP_START: 10.9.9.9\n"),
        "{shown}"
    );
}

/// Multi-line strings in a case's blueprint come out byte for byte as the Windsor CLI
/// prints them (goccy/go-yaml's literal blocks: whitespace-only lines, tabs, trailing
/// blanks, `|+`, blank lines of list items left empty). The expected text is the
/// oracle's `show` of the same template.
#[test]
fn multi_line_strings_show_as_the_windsor_cli_prints_them() {
    let dir = crate::common::project(&[
        (
            "_template/blueprint.yaml",
            "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: strings\n",
        ),
        (
            "_template/facets/base.yaml",
            &format!("{FACET_HEAD}metadata:\n  name: base\nterraform:\n  - name: strings\n    path: strings\n    inputs:\n      blank_line: \"a\\n  \\nb\"\n      tab_line: \"a\\n\\t\\nb\"\n      trailing_blanks: \"a  \\nb\"\n      two_final_breaks: \"a\\n\\n\"\n      lines: [\"x\\n\\ny\", \"z\\n\"]\nkustomize:\n  - name: app\n    path: app\n    patches:\n      - patch: \"kind: A\\n\\nspec:\\n  x: 1\\n\"\n"),
        ),
        (
            "_template/tests/t.test.yaml",
            "cases:\n  - name: strings\n",
        ),
    ]);
    let out = bpc_test(dir.path(), &["strings", "--show"]);
    let windsor = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: test\n  description: Blueprint for the test context\nsources:\n- name: template\n  install: true\nterraform:\n- name: strings\n  path: strings\n  inputs:\n    blank_line: |-\n      a\n        \n      b\n    lines:\n    - |-\n      x\n\n      y\n    - |\n      z\n    tab_line: |-\n      a\n      \t\n      b\n    trailing_blanks: |-\n      a  \n      b\n    two_final_breaks: |+\n      a\n\nkustomize:\n- name: app\n  path: app\n  patches:\n  - patch: |\n      kind: A\n      \n      spec:\n        x: 1\nconfigMaps:\n  values-common:\n    CONTEXT: test\n";
    assert_eq!(out.stdout, windsor);
}

#[test]
fn colliding_snapshot_names_are_refused() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n"),
        ),
        (
            "_template/tests/a.test.yaml",
            "cases:\n  - name: Foo Bar\n    values: {}\n  - name: foo-bar\n    values: {}\n",
        ),
    ]);
    let out = bpc(dir.path(), &["test", "--update"]);
    assert!(!out.success(), "--update must not succeed");
    assert_eq!(
        out.stderr,
        indoc! {"
        error: test cases `Foo Bar` (tests/a.test.yaml) and `foo-bar` (tests/a.test.yaml) would share the golden file tests/__snapshots__/a/foo-bar.yaml
        = help: rename one of the cases so their names differ in letters or digits

    "}
    );
    assert!(
        !dir.path().join("_template/tests/__snapshots__").exists()
            || std::fs::read_dir(dir.path().join("_template/tests/__snapshots__/a"))
                .map(|d| d.count() == 0)
                .unwrap_or(true),
        "nothing may be written"
    );
}

/// A template with one facet and `n` trivial cases in one test file.
fn suite(n: usize) -> tempfile::TempDir {
    let mut cases = String::from("cases:\n");
    for i in 0..n {
        cases.push_str(&format!(
            "  - name: case {i}\n    values: {{}}\n    expect:\n      terraform:\n        - name: c0\n"
        ));
    }
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(1, "one")),
        ("_template/tests/many.test.yaml", &cases),
    ])
}

#[test]
fn test_limits_cases_per_run_and_streams_the_report() {
    let dir = suite(600);
    let run = bpc(dir.path(), &["test", "--max-cases", "500"]);
    assert_eq!(run.status, Some(1));
    assert_eq!(
        run.stderr,
        indoc! {"
        error: more than 500 test cases selected (reached in tests/many.test.yaml); at most --max-cases 500 run at once
        = help: run the suite in parts with --filter, or raise --max-cases N

    "}
    );
    // A filter that selects fewer runs.
    let run = bpc(
        dir.path(),
        &["test", "--max-cases", "500", "--filter", "case 1*"],
    );
    assert!(run.success(), "{}", run.stderr);
    assert!(
        run.stdout.ends_with("111 passed, 0 failed\n"),
        "{}",
        run.stdout
    );
    // Over several batches, the JSON report is still one document with every case.
    let run = bpc(dir.path(), &["test", "--format", "json"]);
    assert!(run.success(), "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(doc["passed"], 600);
    assert_eq!(doc["cases"].as_array().map(Vec::len), Some(600));
    assert_eq!(doc["cases"][599]["name"], "case 599");
    let text = bpc(dir.path(), &["test"]);
    assert_eq!(
        text.stdout.lines().filter(|l| l.starts_with("✓")).count(),
        600
    );
}
