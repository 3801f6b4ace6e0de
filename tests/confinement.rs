//! Whatever a template or a command line says, bpc writes
//! nothing outside its output directory, and no value is deep enough to overflow the
//! stack of any walk over it (compose, render, explain, eval, show values).

use crate::common::*;

/// What render and compose say of the names in `escaping()`.
const ESCAPING: &str = indoc! {"
    error: terraform component path `../../../../escape-tf` cannot be used: it has a `..` path segment, which would leave the output directory
     --> _template/facets/escape.yaml:6:11
      |
    6 |   - path: ../../../../escape-tf
      |           ^^^^^^^^^^^^^^^^^^^^^ this path becomes a path under `bpc render --out`
      |
      = help: use a plain relative name such as `cluster` or `network/vpc`

    error: kustomization name `../../../escape-k` cannot be used: it has a `..` path segment, which would leave the output directory
      --> _template/facets/escape.yaml:10:11
       |
    10 |   - name: ../../../escape-k
       |           ^^^^^^^^^^^^^^^^^ this name becomes a path under `bpc render --out`
       |
       = help: use a plain relative name such as `cluster` or `network/vpc`

"};

/// A project whose facet names a terraform component and a kustomization with `..`.
fn escaping() -> Test {
    Test::new().facet(
        "escape.yaml",
        indoc! {"
            metadata:
              name: escape
            terraform:
              - path: ../../../../escape-tf
                inputs:
                  a: 1
            kustomize:
              - name: ../../../escape-k
                path: p
        "},
    )
}

#[test]
fn names_that_would_leave_the_render_directory_are_refused_where_they_are_written() {
    let out = escaping()
        .args(["render", "--out", "out/r"])
        .status(1)
        .run();
    // Each error points at the facet line that wrote the name.
    assert_eq!(out.stderr, ESCAPING);
    // Nothing was written anywhere: not the render, not beside the project.
    let parent = out.root.parent().expect("the project has a parent");
    assert!(!out.path("out").exists());
    assert!(!parent.join("escape-tf").exists() && !parent.join("escape-k").exists());
}

#[test]
fn compose_refuses_the_same_names() {
    escaping().compose().fails(ESCAPING).run();
}

#[test]
fn absolute_and_empty_segment_names_are_refused_too() {
    for (name, message) in [
        (
            "/etc/bpc",
            indoc! {r#"
                error: terraform component name `/etc/bpc` cannot be used: it is an absolute path
                 --> _template/facets/a.yaml:7:11
                  |
                7 |     name: "/etc/bpc"
                  |           ^^^^^^^^^^ this name becomes a path under `bpc render --out`
                  |
                  = help: use a plain relative name such as `cluster` or `network/vpc`

            "#},
        ),
        (
            "a//b",
            indoc! {r#"
                error: terraform component name `a//b` cannot be used: it has an empty path segment (`//` or a trailing `/`)
                 --> _template/facets/a.yaml:7:11
                  |
                7 |     name: "a//b"
                  |           ^^^^^^ this name becomes a path under `bpc render --out`
                  |
                  = help: use a plain relative name such as `cluster` or `network/vpc`

            "#},
        ),
        (
            "a/./b",
            indoc! {r#"
                error: terraform component name `a/./b` cannot be used: it has a `.` path segment
                 --> _template/facets/a.yaml:7:11
                  |
                7 |     name: "a/./b"
                  |           ^^^^^^^ this name becomes a path under `bpc render --out`
                  |
                  = help: use a plain relative name such as `cluster` or `network/vpc`

            "#},
        ),
        (
            "a\\\\..\\\\b",
            indoc! {r#"
                error: terraform component name `a\\..\\b` cannot be used: it contains `\`
                 --> _template/facets/a.yaml:7:11
                  |
                7 |     name: "a\\..\\b"
                  |           ^^^^^^^^^^ this name becomes a path under `bpc render --out`
                  |
                  = help: use a plain relative name such as `cluster` or `network/vpc`

            "#},
        ),
    ] {
        Test::new()
            .facet(
                "a.yaml",
                &format!("metadata:\n  name: a\nterraform:\n  - path: net\n    name: \"{name}\"\n"),
            )
            .compose()
            .fails(message)
            .run();
    }
}

#[test]
fn component_paths_with_directories_still_render() {
    let out = Test::new()
        .facet(
            "a.yaml",
            indoc! {"
                metadata:
                  name: a
                terraform:
                  - path: cluster/talos
                    inputs:
                      nodes: 3
            "},
        )
        .args(["render", "--out", "r"])
        .run();
    let tfvars =
        std::fs::read_to_string(out.path("r/terraform/cluster/talos/terraform.tfvars.json"))
            .expect("the component's tfvars");
    assert_eq!(
        tfvars,
        indoc! {r#"
        {
          "nodes": 3
        }
    "#}
    );
}

// ---- values nest a bounded number of levels, however they are built -------------------

#[test]
fn an_expression_that_nests_without_end_is_an_error_not_a_crash() {
    let deep = || {
        Test::new().facet(
            "deep.yaml",
            indoc! {"
                metadata:
                  name: deep
                terraform:
                  - path: net
                    inputs:
                      a: ${reduce(1..40000, [#acc], 1)}
            "},
        )
    };
    // compose, render and explain alike
    let error = indoc! {"
        error: expression failed: the value nests lists and maps deeper than 256 levels
         --> _template/facets/deep.yaml:8:12
          |
        8 |       a: ${reduce(1..40000, [#acc], 1)}
          |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^ the value nests lists and maps deeper than 256 levels
          |
          = note: in `inputs` of terraform component `net` of facet `deep`

    "};
    deep().compose().fails(error).run();
    deep().args(["render", "--out", "r"]).fails(error).run();
    deep()
        .args(["explain", "terraform.net.inputs.a"])
        .fails(error)
        .run();
    Test::new()
        .args(["eval", "reduce(1..100000, [#acc], 1)"])
        .fails(indoc! {"
            error: expression failed: the value nests lists and maps deeper than 256 levels
             --> <expression>:1:1
              |
            1 | reduce(1..100000, [#acc], 1)
              | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ the value nests lists and maps deeper than 256 levels

        "})
        .run();
}

#[test]
fn a_chain_of_config_blocks_cannot_nest_past_the_bound() {
    // Each block wraps the one before in a list: 300 facets, one level each.
    let mut test = Test::new().facet(
        "c0.yaml",
        "metadata:\n  name: c0\nconfig:\n  - name: c0\n    value: 1\n",
    );
    for i in 1..300 {
        test = test.facet(
            &format!("c{i}.yaml"),
            &format!(
                "metadata:\n  name: c{i}\nconfig:\n  - name: c{i}\n    value: ${{[c{}]}}\n",
                i - 1
            ),
        );
    }
    let out = test
        .facet(
            "use.yaml",
            "metadata:\n  name: use\nterraform:\n  - path: net\n    inputs:\n      v: ${c299}\n",
        )
        .compose()
        .status(1)
        .run();
    // The error at the 257th level, and the chain of blocks that needed it.
    snap!("confinement_config_chain_too_deep", out.stderr);
}

#[test]
fn a_long_chain_of_config_references_is_followed_not_a_crash() {
    // 3 000 blocks, each reading the one before: the resolution recurses through
    // every link (Windsor follows such chains too).
    let mut test = Test::new().facet(
        "c0.yaml",
        "metadata:\n  name: c0\nconfig:\n  - name: c0\n    value: 1\n",
    );
    for i in 1..3000 {
        test = test.facet(
            &format!("c{i}.yaml"),
            &format!(
                "metadata:\n  name: c{i}\nconfig:\n  - name: c{i}\n    value: ${{c{} + 1}}\n",
                i - 1
            ),
        );
    }
    let out = test
        .facet(
            "use.yaml",
            "metadata:\n  name: use\nterraform:\n  - path: net\n    inputs:\n      v: ${c2999}\n",
        )
        .compose()
        .run();
    assert_eq!(
        out.stdout,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: local
          description: Blueprint for the local context
        repository:
          url: http://git.test/git/project
          ref:
            branch: main
          secretName: flux-system
        sources:
        - name: template
          install: true
        terraform:
        - path: net
          inputs:
            v: 3000
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

#[test]
fn values_at_the_bound_compose_render_and_explain() {
    // 255 levels from an expression, placed under a component's inputs: every walk
    // (merge, emit YAML and JSON, provenance, render, drop) runs on it in full.
    let facet = indoc! {"
        metadata:
          name: deep
        terraform:
          - path: net
            inputs:
              a: ${reduce(1..255, [#acc], 1)}
    "};
    let yaml = Test::new().facet("deep.yaml", facet).compose().run().stdout;
    // The value on one line: 255 nested lists, then the number.
    assert_eq!(
        yaml,
        format!(
            "{}    {}1\n{}",
            indoc! {"
                kind: Blueprint
                apiVersion: blueprints.windsorcli.dev/v1alpha1
                metadata:
                  name: local
                  description: Blueprint for the local context
                repository:
                  url: http://git.test/git/project
                  ref:
                    branch: main
                  secretName: flux-system
                sources:
                - name: template
                  install: true
                terraform:
                - path: net
                  inputs:
                    a:
            "},
            "- ".repeat(255),
            indoc! {"
                configMaps:
                  values-common:
                    CONTEXT: local
                    DOMAIN: test
            "}
        )
    );
    Test::new()
        .facet("deep.yaml", facet)
        .args(["compose", "--format", "json", "--provenance"])
        .run();
    Test::new()
        .facet("deep.yaml", facet)
        .args(["render", "--out", "r"])
        .run();
    Test::new()
        .facet("deep.yaml", facet)
        .args(["explain", "terraform.net.inputs.a"])
        .run();
}

#[test]
fn a_set_path_longer_than_the_bound_is_refused() {
    let key = vec!["a"; 30_000].join(".");
    let out = Test::new()
        .facet("a.yaml", "metadata:\n  name: a\n")
        .args(["show", "values", "--set", &format!("{key}=1")])
        .status(1)
        .run();
    assert_eq!(
        out.stderr,
        indoc! {"
        error: --set: the key path has 30000 segments; at most 256 are allowed

    "}
    );
}
