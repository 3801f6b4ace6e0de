//! Templates repeat the same `${…}` strings in facet after facet, and bpc renders
//! such a string once per composition when its value can only depend on the scope.
//! These tests pin down where that must not show: a string that reads a file gives
//! each facet its own file's text.

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
