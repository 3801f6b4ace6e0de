//! Context patches (`docs/semantics.md` S13): the files of `contexts/<ctx>/patches/<name>/`
//! become patches of kustomization `<name>` (or of a flux system's tier), after every
//! facet, as the Windsor CLI's composer adds them. Each behaviour here was first
//! checked against the Windsor CLI on a probe template.

use crate::common::*;

/// A template with one kustomization (`app`, which already has a patch) and one flux
/// system (`gitops`, an install tier and two resources variants).
fn template() -> Test {
    Test::new().windsor("context: dev\n").facet(
        "a.yaml",
        indoc! {"
            metadata:
              name: a
            kustomize:
              - name: app
                patches:
                  - patch: 'from: facet'
            flux:
              - name: gitops
                install:
                  components: [flux]
                resources:
                  - components: [sync]
                  - name: extra
                    components: [x]
        "},
    )
}

/// What `bpc compose` prints for that template: `app_patches` are the patches after
/// the facet's own and `gitops` the system's tiers, both written from column 0.
fn blueprint(app_patches: &str, gitops: &str) -> String {
    let indent = |text: &str| -> String { text.lines().map(|l| format!("  {l}\n")).collect() };
    let head = indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: dev
          description: Blueprint for the dev context
        sources:
        - name: template
          install: true
        kustomize:
        - name: app
          patches:
          - patch: \"from: facet\"
    "};
    let tail = indoc! {"
        configMaps:
          values-common:
            CONTEXT: dev
    "};
    format!(
        "{head}{}flux:\n- name: gitops\n  source: template\n{}{tail}",
        indent(app_patches),
        indent(gitops)
    )
}

const GITOPS: &str = indoc! {"
    install:
      components:
      - flux
    resources:
    - components:
      - sync
    - name: extra
      components:
      - x
"};

#[test]
fn a_json6902_file_gets_a_target_and_any_other_file_is_a_strategic_merge_patch() {
    // Files in name order; empty files are skipped. A top-level `patches` list with a
    // `kind` is a JSON 6902 patch: the list as YAML, the target from kind and metadata.
    template()
        .file(
            "contexts/dev/patches/app/a-replicas.yml",
            indoc! {"
                kind: Deployment
                metadata:
                  name: web
                  namespace: web-ns
                patches:
                  - {value: 3, path: /spec/replicas, op: replace}
            "},
        )
        .file(
            "contexts/dev/patches/app/b-config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"1\"\n",
        )
        .file("contexts/dev/patches/app/c-empty.yaml", "# nothing yet\n")
        .file("contexts/dev/patches/app/d-notes.txt", "not a patch\n")
        .compose()
        .stdout(blueprint(
            indoc! {"
                - patch: |
                    - op: replace
                      path: /spec/replicas
                      value: 3
                  target:
                    kind: Deployment
                    namespace: web-ns
                    name: web
                - patch: |
                    apiVersion: v1
                    kind: ConfigMap
                    metadata:
                      name: x
                    data:
                      a: \"1\"
            "},
            GITOPS,
        ))
        .run();
}

#[test]
fn a_flux_system_is_patched_through_its_tiers() {
    // The system's own name and `<system>-install` patch the install tier;
    // `<system>-resources[-<variant>]` a resources variant. Directories in name order.
    template()
        .file("contexts/dev/patches/gitops/p.yaml", "kind: A\n")
        .file("contexts/dev/patches/gitops-install/p.yaml", "kind: B\n")
        .file("contexts/dev/patches/gitops-resources/p.yaml", "kind: C\n")
        .file(
            "contexts/dev/patches/gitops-resources-extra/p.yaml",
            "kind: D\n",
        )
        .compose()
        .stdout(blueprint(
            "",
            indoc! {"
                install:
                  patches:
                  - patch: |
                      kind: A
                  - patch: |
                      kind: B
                  components:
                  - flux
                resources:
                - patches:
                  - patch: |
                      kind: C
                  components:
                  - sync
                - name: extra
                  patches:
                  - patch: |
                      kind: D
                  components:
                  - x
            "},
        ))
        .run();
}

#[test]
fn a_directory_that_names_nothing_and_a_file_that_does_not_parse_are_warnings() {
    // The Windsor CLI warns about the first and skips the second silently.
    template()
        .file("contexts/dev/patches/nosuch/p.yaml", "kind: A\n")
        .file("contexts/dev/patches/app/broken.yaml", "data: [\n")
        .compose()
        .stdout(blueprint("", GITOPS))
        .stderr(indoc! {"
            warning: patch file contexts/dev/patches/app/broken.yaml is not valid YAML: this flow sequence is never closed: the file ends before its `]`
             --> contexts/dev/patches/app/broken.yaml:1:7
              |
            1 | data: [
              |       ^
              |        - the file ends here
              |
              = help: the file is skipped (the Windsor CLI skips it silently); fix or remove it

            warning: contexts/dev/patches/nosuch matches no kustomization and no flux system or tier; its patches are ignored
            = help: name the directory after a kustomization, `<system>-install` or `<system>-resources[-<variant>]`

        "})
        .run();
    template()
        .file("contexts/dev/patches/nosuch/p.yaml", "kind: A\n")
        .compose()
        .arg("--strict")
        .failure()
        .run();
}

#[test]
fn a_directory_of_empty_files_changes_nothing() {
    template()
        .file("contexts/dev/patches/app/empty.yaml", "# later\n")
        .file("contexts/dev/patches/gitops/empty.yaml", "{}\n")
        .compose()
        .stdout(blueprint("", GITOPS))
        .run();
}

#[test]
fn other_contexts_patches_do_not_apply() {
    template()
        .file("contexts/prod/patches/app/p.yaml", "kind: A\n")
        .compose()
        .stdout(blueprint("", GITOPS))
        .run();
}

#[test]
fn explain_lists_each_patch_file_as_a_step() {
    let out = template()
        .file("contexts/dev/patches/app/p.yaml", "kind: A\n")
        .args(["explain", "kustomize[app].patches"])
        .run();
    assert_eq!(
        out.stdout,
        indoc! {r#"
        kustomize[app].patches = [{"patch":"from: facet"},{"patch":"kind: A\n"}]

        contributions, in order applied:
          1. facet `a` (_template/facets/a.yaml:6:5, source `template`), ordinal 0, merge
             [{"patch":"from: facet"}]
             → kept: merged into the final value
          2. context patch (contexts/dev/patches/app/p.yaml:1:1), ordinal after all facets, merge
             [{"patch":"kind: A\n"}]
             → kept: merged into the final value
    "#}
    );
}

#[test]
fn in_a_test_case_the_template_root_holds_the_patches() {
    // `bpc test` composes each case under context `test` with the template root as the
    // context directory, so `_template/patches/<name>/` applies, as in `windsor test`.
    let out = template()
        .file("_template/patches/app/p.yaml", "kind: A\n")
        .file("contexts/dev/patches/app/p.yaml", "kind: NotInTests\n")
        .file(
            "_template/tests/a.test.yaml",
            indoc! {"
                cases:
                  - name: patched
                    expect: {}
            "},
        )
        .args(["test", "patched", "--show"])
        .run();
    assert_eq!(
        out.stdout,
        indoc! {r#"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: test
          description: Blueprint for the test context
        sources:
        - name: template
          install: true
        kustomize:
        - name: app
          patches:
          - patch: "from: facet"
          - patch: |
              kind: A
        flux:
        - name: gitops
          source: template
          install:
            components:
            - flux
          resources:
          - components:
            - sync
          - name: extra
            components:
            - x
        configMaps:
          values-common:
            CONTEXT: test
    "#}
    );
}

#[test]
fn facet_patches_take_windsors_key_order_and_lose_keys_it_does_not_know() {
    let out = Test::new()
        .facet(
            "a.yaml",
            indoc! {"
                metadata:
                  name: a
                kustomize:
                  - name: app
                    patches:
                      - target: {name: web, kind: Deployment, bogus: 1}
                        patch: 'a: 1'
                        path: extra.yaml
            "},
        )
        .file("_template/kustomize/extra.yaml", "a: 1\n")
        .compose()
        .run();
    assert_eq!(
        out.stdout,
        indoc! {r#"
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
        kustomize:
        - name: app
          patches:
          - path: extra.yaml
            patch: "a: 1"
            target:
              kind: Deployment
              name: web
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "#}
    );
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: unknown key `bogus` in a patch `target`
         --> _template/facets/a.yaml:8:47
          |
        8 |       - target: {name: web, kind: Deployment, bogus: 1}
          |                                               ^^^^^ not a key bpc knows here

    "}
    );
}

#[test]
fn bpc_test_names_a_patches_directory_that_names_nothing_once() {
    let out = template()
        .file("_template/patches/nosuch/p.yaml", "kind: A\n")
        .file(
            "_template/tests/a.test.yaml",
            indoc! {"
                cases:
                  - name: one
                    expect: {}
                  - name: two
                    expect: {}
            "},
        )
        .arg("test")
        .run();
    assert_eq!(
        out.stdout,
        indoc! {"
        === tests/a.test.yaml ===
        ✓ one
        ✓ two

        2 passed, 0 failed
    "}
    );
    // Once, not once per case.
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: _template/patches/nosuch matches no kustomization and no flux system or tier; its patches are ignored
        = help: name the directory after a kustomization, `<system>-install` or `<system>-resources[-<variant>]`

    "}
    );
}
