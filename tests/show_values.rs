//! `bpc show values`: schema defaults under the value layers, descriptions as
//! comments, sensitive values masked, in YAML and JSON; `--set` key paths index lists
//! as Helm's do.

use crate::common::*;
use std::path::Path;

const SCHEMA: &str = r#"$schema: https://json-schema.org/draft/2020-12/schema
type: object
properties:
  cluster:
    type: object
    description: The Kubernetes cluster.
    properties:
      name:
        type: string
        description: |-
          Cluster name.
          Used in resource names.
        default: demo
      workers:
        type: object
        properties:
          count:
            type: integer
            description: Number of workers.
            default: 1
          size:
            type: string
            default: small
  dns:
    type: object
    properties:
      token:
        type: string
        sensitive: true
        description: API token of the DNS provider.
      zone:
        type: string
"#;

const WINDSOR: &str = "version: v1alpha1\ncontexts:\n  local:\n    cluster:\n      workers:\n        count: 3\n    dns:\n      token: s3cr3t\n";

/// `bpc show values EXTRA…` in `project`: stdout, stderr and the exit status.
fn show_values(project: &Path, extra: &[&str]) -> (String, String, Option<i32>) {
    let out = bpc(project, &[&["show", "values"], extra].concat());
    (out.stdout, out.stderr, out.status)
}

fn fixture() -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", WINDSOR),
        ("_template/schema.yaml", SCHEMA),
        (
            "contexts/local/values.yaml",
            "dns:\n  zone: example.com\nextra: [1, 2]\n",
        ),
    ])
}

#[test]
fn yaml_has_descriptions_masks_and_defaults() {
    let dir = fixture();
    let (out, err, code) = show_values(dir.path(), &[]);
    assert_eq!(code, Some(0), "{err}");
    // Descriptions sit above their keys, at the key's indentation (a multi-line one as
    // several comment lines); explicit values win over defaults, which fill the gaps;
    // the sensitive token is masked; the typed fields Windsor materialises are there,
    // and so are its config defaults for a context named `local` (S4). The last line is
    // the machine's architecture.
    let (head, arch) = out
        .rsplit_once("\n  arch: ")
        .expect("workstation.arch last");
    assert!(arch.ends_with('\n') && arch.lines().count() == 1, "{out}");
    assert_eq!(
        format!("{head}\n  arch: ARCH\n"),
        indoc! {"
        # The Kubernetes cluster.
        cluster:
          workers:
            # Number of workers.
            count: 3
            size: small
            nodes: {}
          # Cluster name.
          # Used in resource names.
          name: demo
          driver: talos
          controlplanes:
            nodes: {}
        dns:
          # API token of the DNS provider.
          token: <sensitive>
          zone: example.com
          domain: test
        extra:
        - 1
        - 2
        dev: true
        platform: docker
        workstation:
          runtime: docker
          services:
            dns: true
            git: true
            registries: true
          arch: ARCH
        "}
    );
    // Deterministic.
    assert_eq!(show_values(dir.path(), &[]).0, out);
}

#[test]
fn json_parses_and_is_masked() {
    let dir = fixture();
    let (out, err, code) = show_values(
        dir.path(),
        &["--format", "json", "--set", "cluster.name=prod"],
    );
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["cluster"]["name"], "prod");
    assert_eq!(v["cluster"]["workers"]["count"], 3);
    assert_eq!(v["cluster"]["workers"]["size"], "small");
    assert_eq!(v["dns"]["token"], "<sensitive>");
    assert_eq!(v["dns"]["zone"], "example.com");
    assert_eq!(v["extra"], serde_json::json!([1, 2]));
    assert_eq!(
        out,
        indoc! {r#"
        {
          "cluster": {
            "workers": {
              "count": 3,
              "size": "small",
              "nodes": {}
            },
            "name": "prod",
            "driver": "talos",
            "controlplanes": {
              "nodes": {}
            }
          },
          "dns": {
            "token": "<sensitive>",
            "zone": "example.com",
            "domain": "test"
          },
          "extra": [
            1,
            2
          ],
          "dev": true,
          "platform": "docker",
          "workstation": {
            "runtime": "docker",
            "services": {
              "dns": true,
              "git": true,
              "registries": true
            },
            "arch": "amd64"
          }
        }
    "#}
    );
}

#[test]
fn schema_violations_warn_and_fail_under_strict() {
    let dir = fixture();
    let set = ["--set", "cluster.workers.count=many"];
    let (out, err, code) = show_values(dir.path(), &set);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err,
        indoc! {r#"
        warning: invalid value at `cluster.workers.count`: "many" is not of type "integer"
        = note: rule `type` of schema.yaml, at /properties/cluster/properties/workers/properties/count/type
        = note: set by --set
        = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

    "#}
    );
    assert_eq!(
        out,
        indoc! {"
        # The Kubernetes cluster.
        cluster:
          workers:
            # Number of workers.
            count: many
            size: small
            nodes: {}
          # Cluster name.
          # Used in resource names.
          name: demo
          driver: talos
          controlplanes:
            nodes: {}
        dns:
          # API token of the DNS provider.
          token: <sensitive>
          zone: example.com
          domain: test
        extra:
        - 1
        - 2
        dev: true
        platform: docker
        workstation:
          runtime: docker
          services:
            dns: true
            git: true
            registries: true
          arch: amd64
    "}
    );
    let (out, err, code) = show_values(dir.path(), &[set[0], set[1], "--strict"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty(), "{out}");
}

#[test]
fn values_text_matches_the_binary() {
    let dir = fixture();
    let sources = std::sync::Arc::new(bpc::files::FileMap::new());
    let mut options = bpc::session::Options::at(repo());
    options.locate.project = Some(dir.path().to_path_buf());
    let session = bpc::session::Session::open(options, sources).expect("session");
    let text = session
        .values_text(bpc::emit::Format::Yaml)
        .expect("values");
    assert!(session.project.warnings.is_empty());
    assert_eq!(text, show_values(dir.path(), &[]).0);
}

#[test]
fn set_indexes_lists_as_helm_does() {
    let dir = small();
    let run = bpc(
        dir.path(),
        &[
            "show",
            "values",
            "--set",
            "hosts[1].name=b",
            "--set",
            "hosts[0]=a",
            "--set",
            "m.l[0][1]=x",
        ],
    );
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        indoc! {"
        hosts:
        - a
        - name: b
        m:
          l:
          - - null
            - x
        dev: true
        platform: docker
        workstation:
          runtime: docker
          arch: amd64
        dns:
          domain: test
        cluster:
          driver: talos
          controlplanes:
            nodes: {}
          workers:
            nodes: {}
    "}
    );
    for (bad, why) in [
        (
            "a[x]=1",
            "`a[x]`: `[x]` is not a list index (a number from 0)",
        ),
        ("a[0=1", "`a[0`: `[0` is not a list index like [0]"),
        ("[0]=1", "`[0]` is not a dotted key path (an empty name)"),
        (
            "a[99999999]=1",
            "`a[99999999]`: the index 99999999 is over the largest allowed, 65536",
        ),
        (
            "a.[0]=1",
            "`a.[0]` is not a dotted key path (an empty name)",
        ),
    ] {
        let run = bpc(dir.path(), &["show", "values", "--set", bad]);
        assert_eq!(run.status, Some(1), "{bad}: {}", run.stdout);
        assert_eq!(
            run.stderr,
            format!(
                "error: --set {bad:?}: {why}\n\
                 = help: a key path is names joined by `.`, each optionally followed by list \
                 indexes: a.b[0].c\n\n"
            )
        );
    }
}
