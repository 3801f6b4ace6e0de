//! Issue 21, items 1 and 2: whatever a template or a command line says, bpc writes
//! nothing outside its output directory, and no value is deep enough to overflow the
//! stack of any walk over it (compose, render, explain, eval, show values).

use crate::common::*;

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
    assert!(
        out.stderr.contains(
            "terraform component path `../../../../escape-tf` cannot be used: it has a `..` path segment"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "kustomization name `../../../escape-k` cannot be used: it has a `..` path segment"
        ),
        "{}",
        out.stderr
    );
    // Each error points at the facet line that wrote the name.
    assert!(
        out.stderr.contains("_template/facets/escape.yaml:6:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("_template/facets/escape.yaml:10:"),
        "{}",
        out.stderr
    );
    // Nothing was written anywhere: not the render, not beside the project.
    let parent = out.root.parent().expect("the project has a parent");
    assert!(!out.path("out").exists());
    assert!(!parent.join("escape-tf").exists() && !parent.join("escape-k").exists());
}

#[test]
fn compose_refuses_the_same_names() {
    escaping()
        .compose()
        .status(1)
        .stderr_contains("terraform component path `../../../../escape-tf` cannot be used")
        .run();
}

#[test]
fn absolute_and_empty_segment_names_are_refused_too() {
    for (field, name, why) in [
        ("name", "/etc/bpc", "it is an absolute path"),
        ("name", "a//b", "it has an empty path segment"),
        ("name", "a/./b", "it has a `.` path segment"),
        ("name", "a\\\\..\\\\b", "it contains `\\`"),
    ] {
        Test::new()
            .facet(
                "a.yaml",
                &format!(
                    "metadata:\n  name: a\nterraform:\n  - path: net\n    {field}: \"{name}\"\n"
                ),
            )
            .compose()
            .status(1)
            .stderr_contains(why)
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
    assert!(tfvars.contains("\"nodes\": 3"), "{tfvars}");
}

// ---- 2: values nest a bounded number of levels, however they are built -------------------

const TOO_DEEP: &str = "the value nests lists and maps deeper than 256 levels";

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
    deep().compose().status(1).stderr_contains(TOO_DEEP).run();
    deep()
        .args(["render", "--out", "r"])
        .status(1)
        .stderr_contains(TOO_DEEP)
        .run();
    deep()
        .args(["explain", "terraform.net.inputs.a"])
        .status(1)
        .stderr_contains(TOO_DEEP)
        .run();
    Test::new()
        .args(["eval", "reduce(1..100000, [#acc], 1)"])
        .status(1)
        .stderr_contains(TOO_DEEP)
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
    test.facet(
        "use.yaml",
        "metadata:\n  name: use\nterraform:\n  - path: net\n    inputs:\n      v: ${c299}\n",
    )
    .compose()
    .status(1)
    .stderr_contains(TOO_DEEP)
    .run();
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
    test.facet(
        "use.yaml",
        "metadata:\n  name: use\nterraform:\n  - path: net\n    inputs:\n      v: ${c2999}\n",
    )
    .compose()
    .stdout_contains("    v: 3000\n")
    .run();
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
    assert!(
        yaml.contains(&format!("a:\n    {}1\n", "- ".repeat(255))),
        "{yaml}"
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
    Test::new()
        .facet("a.yaml", "metadata:\n  name: a\n")
        .args(["show", "values", "--set", &format!("{key}=1")])
        .status(1)
        .stderr_contains("--set: the key path has 30000 segments; at most 256 are allowed")
        .run();
}
