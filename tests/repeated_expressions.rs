//! Templates repeat the same `${…}` strings in facet after facet, and bpc renders
//! such a string once per composition when its value can only depend on the scope.
//! These tests pin down where that must not show: a string that reads a file gives
//! each facet its own file's text, and every context renders a string with its own
//! values.

use crate::common::*;

fn reads_its_own_file(name: &str) -> String {
    format!(
        indoc! {"
        metadata:
          name: {name}
        terraform:
          - path: {name}
            inputs:
              size: ${{file('size.txt')}}
              region: ${{region ?? 'us-east-1'}}
    "},
        name = name
    )
}

#[test]
fn the_same_file_expression_in_two_facets_reads_each_facets_own_file() {
    Test::new()
        .facet("a/a.yaml", &reads_its_own_file("a"))
        .file("_template/facets/a/size.txt", "small")
        .facet("b/b.yaml", &reads_its_own_file("b"))
        .file("_template/facets/b/size.txt", "large")
        .values("local", "region: eu-west-1\n")
        .compose()
        .stdout(indoc! {"
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
            - path: a
              inputs:
                region: eu-west-1
                size: small
            - path: b
              inputs:
                region: eu-west-1
                size: large
            configMaps:
              values-common:
                CONTEXT: local
                DOMAIN: test
        "})
        .run();
}

/// Every context at once composes one loaded template (the same shared strings) in
/// several scopes, more contexts than threads: each context renders the repeated
/// string with its own values.
#[test]
fn every_context_renders_the_same_string_with_its_own_values() {
    let facet = |name: &str| {
        format!(
            "{FACET_HEAD}metadata:\n  name: {name}\nterraform:\n  - path: {name}\n    inputs:\n      region: ${{region ?? 'us-east-1'}}\n"
        )
    };
    let regions = [
        "ap-south-1",
        "eu-north-1",
        "eu-west-1",
        "sa-east-1",
        "us-east-2",
        "us-west-2",
    ];
    let mut files = vec![
        (
            "windsor.yaml".to_string(),
            "version: v1alpha1\n".to_string(),
        ),
        ("_template/facets/a.yaml".to_string(), facet("a")),
        ("_template/facets/b.yaml".to_string(), facet("b")),
    ];
    for region in regions {
        files.push((
            format!("contexts/{region}/values.yaml"),
            format!("region: {region}\n"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = project(&files);
    let out = bpc(dir.path(), &["compose", "--all-contexts", "--out", "out"]);
    assert!(out.success(), "{}", out.stderr);
    for region in regions {
        let path = dir.path().join("out").join(format!("{region}.yaml"));
        let text = std::fs::read_to_string(&path).expect("written");
        let written: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("region: "))
            .collect();
        assert_eq!(written, [region, region], "context {region}");
    }
}
