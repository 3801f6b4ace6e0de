//! The `jsonnet()` function: an evaluation has a memory budget and a deadline, each
//! raised from the command line; an error in a Jsonnet file points at its line and
//! column; integral numbers print as integers.

use crate::common::*;

const FACET: &str = FACET_HEAD;

fn jsonnet_project(jsonnet: &str) -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{jsonnet('../j.jsonnet')}}\n"),
        ),
        ("_template/j.jsonnet", jsonnet),
    ])
}

#[test]
fn jsonnet_memory_budget() {
    for source in [
        "std.length(std.range(1, 100000000))",
        // Doubles a string until it is far beyond any budget.
        "local grow(s, n) = if n == 0 then std.length(s) else grow(s + s, n - 1); grow('ab', 40)",
    ] {
        let dir = jsonnet_project(source);
        let e = compose_err(dir.path(), &["--jsonnet-memory", "64"]);
        assert_eq!(
            e,
            indoc! {"
            error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: evaluation used more than the jsonnet memory limit of 64 MiB; raise it with --jsonnet-memory MIB
             --> _template/facets/a.yaml:8:12
              |
            8 |       x: ${jsonnet('../j.jsonnet')}
              |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: evaluation used more than the jsonnet memory limit of 64 MiB; raise it with --jsonnet-memory MIB
              |
              = note: in `inputs` of terraform component `net` of facet `a`

        "},
            "{source}"
        );
    }
}

#[test]
fn jsonnet_deadline() {
    let dir = jsonnet_project(
        "local count(n) = if n == 0 then 0 else count(n - 1) tailstrict; count(1000000000000)",
    );
    let e = compose_err(dir.path(), &["--jsonnet-timeout", "0.2"]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: evaluation ran longer than the jsonnet time limit of 0.2 s; raise it with --jsonnet-timeout SECONDS
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: evaluation ran longer than the jsonnet time limit of 0.2 s; raise it with --jsonnet-timeout SECONDS
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

#[test]
fn jsonnet_errors_name_file_line_column() {
    let dir = jsonnet_project("{\n  a: 1,\n  b: error 'boom',\n}\n");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:3:6: error: boom
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:3:6: error: boom
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
    let dir = jsonnet_project("{ a: 1 +, }");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:9: syntax error: expected expr, found simple
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:9: syntax error: expected expr, found simple
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
    let dir = jsonnet_project("{ a: nosuch }");
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:6: unknown variable
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${jsonnet('../j.jsonnet')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file ../j.jsonnet: j.jsonnet:1:6: unknown variable
          |
          = note: in `inputs` of terraform component `net` of facet `a`

    "}
    );
}

#[test]
fn jsonnet_integers_print_as_integers() {
    let dir = jsonnet_project("{ size: 4, ratio: 2.5, big: 3 * 1000 }");
    let out = compose_ok(dir.path(), &[]);
    assert_eq!(
        out,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: local
          description: Blueprint for the local context
        repository:
          url: http://git.test/git/[project]
          ref:
            branch: main
          secretName: flux-system
        sources:
        - name: template
          install: true
        terraform:
        - path: net
          inputs:
            x:
              big: 3000
              ratio: 2.5
              size: 4
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}
