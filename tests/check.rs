//! `bpc check`: a template seeded with one mistake of each kind gets exactly those
//! findings (snapshotted); the public corpora get no warning; silencing, `--strict`,
//! `--format json` and `--coverage` behave as documented (docs/check.md).

use bpc::check::{Allow, FindingId, Report};
use bpc::files::{FileMap, Severity};
use bpc::session::{Options, Session};
use indoc::indoc;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn session(project: &Path) -> (Session, Arc<FileMap>) {
    let sources = Arc::new(FileMap::new());
    let session = Session::open(Options::at(project), sources.clone())
        .unwrap_or_else(|d| panic!("{}", bpc::files::render_all(&d, &sources, false)));
    (session, sources)
}

fn check(project: &Path, allow: &[Allow]) -> (Report, Arc<FileMap>) {
    let (session, sources) = session(project);
    (
        bpc::check::check(&session.template, &session.engine, allow),
        sources,
    )
}

fn ids(report: &Report) -> Vec<&'static str> {
    report.findings.iter().map(|f| f.id.as_str()).collect()
}

/// `bpc ARGS…` from the repository root: (exit code, stdout).
fn code_and_stdout(args: &[&str]) -> (i32, String) {
    let out = crate::common::bpc(&root(), args);
    (out.status.unwrap_or(-1), out.stdout)
}

#[test]
fn seeded_template_gets_one_finding_of_each_kind() {
    let (report, sources) = check(&root().join("tests/check/seeded"), &[]);
    let mut found = ids(&report);
    found.sort();
    let mut expected: Vec<&str> = FindingId::ALL.iter().map(|id| id.as_str()).collect();
    expected.sort();
    assert_eq!(found, expected);
    assert_eq!(
        report.silenced, 1,
        "the `# bpc:allow` comment in platform-metal.yaml"
    );
    let text = report
        .findings
        .iter()
        .map(|f| bpc::files::render(&f.diagnostic, &sources, false))
        .collect::<Vec<_>>()
        .join("\n");
    snap!("check__check_seeded", text);
}

#[test]
fn corpora_have_no_warnings() {
    for corpus in ["windsor-core-eaa2bcea", "windsor-core-75d2a6c1"] {
        let (report, sources) = check(&root().join("tests/conformance").join(corpus), &[]);
        let loud: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.diagnostic.severity != Severity::Note)
            .map(|f| bpc::files::render(&f.diagnostic, &sources, false))
            .collect();
        assert!(loud.is_empty(), "{corpus}:\n{}", loud.join("\n"));
    }
}

#[test]
fn project_config_silences_an_id_in_every_file_or_one() {
    let project = root().join("tests/check/seeded");
    let all = Allow {
        id: FindingId::UnknownReference,
        file: None,
    };
    let (report, _) = check(&project, &[all]);
    assert!(!ids(&report).contains(&"unknown-reference"));
    assert_eq!(report.silenced, 2);
    let elsewhere = Allow {
        id: FindingId::UnknownReference,
        file: Some("facets/platform-aws.yaml".to_string()),
    };
    let (report, _) = check(&project, &[elsewhere]);
    assert!(ids(&report).contains(&"unknown-reference"));
}

#[test]
fn bpc_yaml_allow_list_is_read_and_bad_ids_point_at_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = |from: &Path, to: &Path| {
        for entry in walk(from) {
            let target = to.join(entry.strip_prefix(from).expect("inside"));
            std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&entry, &target).expect("copy");
        }
    };
    copy(&root().join("tests/check/seeded"), dir.path());
    let project = dir.path().to_string_lossy().to_string();
    std::fs::write(dir.path().join("bpc.yaml"), "check:\n  allow:\n    - unknown-reference\n    - id: type-mismatch\n      file: facets/config-base.yaml\n").expect("write");
    let (_, out) = code_and_stdout(&["check", "--project", &project, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(json["silenced"], 3);
    std::fs::write(
        dir.path().join("bpc.yaml"),
        "check:\n  allow:\n    - unknown-refrence\n",
    )
    .expect("write");
    let out = crate::common::bpc(&root(), &["check", "--project", &project]);
    assert_eq!(out.status, Some(1));
    assert_eq!(
        crate::common::masked(dir.path(), &out.stderr),
        indoc! {"
        error: `unknown-refrence` is not a finding id of `bpc check`
         --> bpc.yaml:3:7
          |
        3 |     - unknown-refrence
          |       ^^^^^^^^^^^^^^^^ unknown id
          |
          = help: did you mean `unknown-reference`?

    "}
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn exit_code_is_zero_for_warnings_and_one_with_strict() {
    let eaa = root().join("tests/conformance/windsor-core-eaa2bcea");
    let (code, out) = code_and_stdout(&["check", "--project", &eaa.to_string_lossy(), "--strict"]);
    assert_eq!(code, 0, "{out}");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("_template/facets")).expect("mkdir");
    std::fs::write(
        dir.path().join("_template/facets/a.yaml"),
        "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: a\nwhen: provder == 'x'\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("_template/schema.yaml"),
        "type: object\nproperties:\n  provider:\n    type: string\n",
    )
    .expect("write");
    let project = dir.path().to_string_lossy().to_string();
    let (code, out) = code_and_stdout(&["check", "--project", &project]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        crate::common::masked(dir.path(), &out),
        indoc! {"
        warning: `provder` reads `provder`, which is no schema property, config block or built-in [unknown-reference]
         --> _template/facets/a.yaml:5:7
          |
        5 | when: provder == 'x'
          |       ^^^^^^^ unknown name
          |
          = help: did you mean `provider`?

        note: schema property `provider` is read by no expression [unread-schema-property]
         --> _template/schema.yaml:3:3
          |
        3 |   provider:
          |   ^^^^^^^^ declared here

        0 error(s), 1 warning(s), 1 note(s)
    "}
    );
    let (code, out) = code_and_stdout(&["check", "--project", &project, "--strict"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        crate::common::masked(dir.path(), &out),
        indoc! {"
        error: `provder` reads `provder`, which is no schema property, config block or built-in [unknown-reference]
         --> _template/facets/a.yaml:5:7
          |
        5 | when: provder == 'x'
          |       ^^^^^^^ unknown name
          |
          = help: did you mean `provider`?

        note: schema property `provider` is read by no expression [unread-schema-property]
         --> _template/schema.yaml:3:3
          |
        3 |   provider:
          |   ^^^^^^^^ declared here

        0 error(s), 1 warning(s), 1 note(s) (warnings are errors with --strict)
    "}
    );
}

#[test]
fn json_lists_findings_with_ids_and_locations() {
    let seeded = root().join("tests/check/seeded");
    let (code, out) = code_and_stdout(&[
        "check",
        "--project",
        &seeded.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "an invalid expression is an error");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let first = &json["findings"][0];
    assert_eq!(first["id"], "unknown-reference");
    assert_eq!(first["severity"], "warning");
    assert_eq!(
        first["location"]["file"],
        "_template/facets/config-base.yaml"
    );
    assert_eq!(first["location"]["line"], 10);
    assert_eq!(json["errors"], 1);
    assert_eq!(json["warnings"], 7);
    assert_eq!(json["notes"], 2);
}

#[test]
fn coverage_names_what_no_case_reaches() {
    let covered = root().join("tests/check/covered");
    let (code, out) = code_and_stdout(&[
        "check",
        "--project",
        &covered.to_string_lossy(),
        "--coverage",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows = json["coverage"]["rows"].as_array().expect("rows");
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).expect(name).clone();
    assert_eq!(row("aws")["cases"], 1);
    assert_eq!(
        row("aws")["when_false"],
        false,
        "no case leaves aws inactive"
    );
    assert_eq!(row("metal")["cases"], 0);
    assert_eq!(row("aws/terraform/replica")["when_true"], false);
    assert_eq!(row("aws/terraform/cluster")["cases"], 1);
    let (_, text) = code_and_stdout(&[
        "check",
        "--project",
        &covered.to_string_lossy(),
        "--coverage",
    ]);
    assert_eq!(
        text,
        indoc! {"
        coverage over 1 case(s):
          item          name                                                         cases  when never   at
          facet         aws                                                              1  false        _template/facets/platform-aws.yaml:4
          component     aws/terraform/replica                                            0  true         _template/facets/platform-aws.yaml:9
          facet         metal                                                            0  true         _template/facets/platform-metal.yaml:4
          component     metal/terraform/cluster                                          0  -            _template/facets/platform-metal.yaml:7
          2 of 5 items active in some case; 4 with a gap
        0 error(s), 0 warning(s), 0 note(s)
    "}
    );
}

/// `bpc check --offline` never contacts a registry: a published blueprint missing from
/// the cache is named, with how to pull it.
#[test]
fn offline_check_names_the_blueprint_missing_from_the_cache() {
    // Nothing listens on port 9 of this host: had check connected, it would say so.
    crate::common::Test::new()
        .file("windsor.yaml", "context: local\n")
        .file(
            "contexts/local/blueprint.yaml",
            format!(
                "{}metadata:\n  name: local\nsources:\n  - name: demo\n    url: oci://127.0.0.1:9/acme/demo:v1\n",
                crate::common::BLUEPRINT_HEAD
            ),
        )
        .args(["check", "--offline"])
        .fails(indoc! {"
            error: oci://127.0.0.1:9/acme/demo:v1 is not in the cache (.windsor/cache/oci/127.0.0.1_9_acme_demo_v1 has no artifact.tar) and --offline forbids pulling it
             --> contexts/local/blueprint.yaml:7:10
              |
            7 |     url: oci://127.0.0.1:9/acme/demo:v1
              |          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ this source
              |
              = note: source `demo` of contexts/local/blueprint.yaml
              = help: run once without --offline (or `windsor init`) to pull it into the cache

        "})
        .run();
}
