//! `bpc verify`: each kind of mistake Flux would only find in a cluster, seeded into a
//! small project and found offline with the facet line that wrote it. These run the real
//! kustomize (`kubectl kustomize` or `kustomize`) and are skipped, saying so, where
//! neither is installed.

use crate::common::*;
use indoc::indoc;

/// Whether a kustomize is installed; prints why the test is skipped when not.
pub fn kustomize_installed(test: &str) -> bool {
    let runs = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = runs("kubectl", &["version", "--client"]) || runs("kustomize", &["version"]);
    if !found {
        eprintln!("SKIPPED {test}: neither kubectl nor kustomize is on PATH");
    }
    found
}

/// The facet of the test project: one Kustomization `web` of `kustomize/web` with the
/// component `cache` and one substitution, `extra` lines added to its entry.
pub fn apps(extra: &str) -> String {
    format!(
        "metadata:\n  name: apps\nkustomize:\n  - name: web\n    path: web\n    components:\n      - cache\n    substitutions:\n      domain: example.com\n{extra}"
    )
}

/// A project whose kustomize tree builds and verifies cleanly.
pub fn project(facet: &str) -> Test {
    Test::new()
        .facet("apps.yaml", facet)
        .file(
            "kustomize/web/kustomization.yaml",
            "resources:\n  - namespace.yaml\n  - config.yaml\n",
        )
        .file(
            "kustomize/web/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
        )
        .file(
            "kustomize/web/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: web\ndata:\n  host: app.${domain}\n",
        )
        .file(
            "kustomize/web/cache/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - cache.yaml\n",
        )
        .file(
            "kustomize/web/cache/cache.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache\n  namespace: web\ndata:\n  size: \"1\"\n",
        )
        .args(["verify"])
        .any_status()
}

/// The output with the kustomize's name and version masked (they vary by machine).
pub fn verified(test: Test) -> (String, Option<i32>) {
    let out = test.run();
    let text = regex::Regex::new(r"with (kubectl kustomize|kustomize build) \(kustomize [^)]*\)")
        .expect("regex")
        .replace_all(&out.stdout, "with [kustomize]")
        .into_owned();
    (format!("{text}{}", out.stderr), out.status)
}

#[test]
fn a_project_whose_kustomizations_build_verifies_clean() {
    if !kustomize_installed("a_project_whose_kustomizations_build_verifies_clean") {
        return;
    }
    let (text, status) = verified(project(&apps("")));
    assert_eq!(
        text,
        indoc! {"
        context  kustomizations  objects  errors  warnings
        local                 1        8       0         0
        1 context(s), 0 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(0));
}

#[test]
fn a_misspelled_component_is_named_with_the_facet_line_and_the_nearest_directory() {
    if !kustomize_installed("a_misspelled_component") {
        return;
    }
    let facet = apps("").replace("      - cache\n", "      - cahce\n");
    let (text, status) = verified(project(&facet));
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: component `cahce` of kustomization `web` is not a directory of kustomize/web [missing-component]
         --> _template/facets/apps.yaml:9:9
          |
        9 |       - cahce
          |         ^^^^^ the component, written by facet `apps`
          |
          = help: did you mean `cache`?
        context  kustomizations  objects  errors  warnings
        local                 1        7       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn a_path_that_is_no_directory_of_the_tree_is_named_with_the_facet_line() {
    if !kustomize_installed("a_path_that_is_no_directory") {
        return;
    }
    let facet = apps("").replace("    path: web\n", "    path: wbe\n");
    let (text, status) = verified(project(&facet));
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: the path `kustomize/wbe` of kustomization `web` is not a directory of kustomize [missing-path]
         --> _template/facets/apps.yaml:7:11
          |
        7 |     path: wbe
          |           ^^^ the kustomization's path, written by facet `apps`
        context  kustomizations  objects  errors  warnings
        local                 1        5       1         0
        1 context(s), 1 error(s); 0 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn a_variable_no_substitution_provides_points_at_the_substitutions_and_the_manifest() {
    if !kustomize_installed("a_variable_no_substitution_provides") {
        return;
    }
    let test = project(&apps("")).file(
        "kustomize/web/config.yaml",
        concat!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: web\ndata:\n",
            "  host: app.${domain}\n  port: \"${port}\"\n  user: ${user:=admin}\n  shell: echo $${HOME}\n",
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\n  namespace: web\n",
            "  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\ndata:\n  run: echo ${HOME}\n",
        ),
    );
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {r#"
        == context `local` ==
        error: `${port}` in ConfigMap/web/settings (field `data.port`) is set by no substitution of kustomization `web` [unresolved-variable]
          --> _template/facets/apps.yaml:11:7
           |
        11 |       domain: example.com
           |       ^^^^^^^^^^^^^^^^^^^ the substitutions expected to provide it, written by facet `apps`
          ::: kustomize/web/config.yaml:8:10
           |
         8 |   port: "${port}"
           |          ------ here in the kustomize tree
           |
           = note: substituteFrom: ConfigMap `values-web`, ConfigMap `values-common`
           = note: kustomize-controller v1.9 and later fail the reconcile on it (StrictPostBuildSubstitutions, on by default); earlier ones write an empty string
           = help: set `port` in the kustomization's substitutions, or give it a default: `${port:=…}`
        context  kustomizations  objects  errors  warnings
        local                 1        9       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "#}
    );
    assert_eq!(status, Some(1));
}

/// `test` with a Kustomization `web` that also builds a HelmRepository `bitnami` and
/// a HelmRelease `redis` reading its chart from `source`, every `interval`.
fn with_chart(test: Test, interval: &str, source: &str) -> Test {
    test.file(
        "kustomize/web/kustomization.yaml",
        "resources:\n  - namespace.yaml\n  - config.yaml\n  - chart.yaml\n",
    )
    .file(
        "kustomize/web/chart.yaml",
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  \
             name: bitnami\n  namespace: web\nspec:\n  url: https://charts.bitnami.com/bitnami\n\
             ---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  \
             name: redis\n  namespace: web\nspec:\n  interval: {interval}\n  chart:\n    \
             spec:\n      chart: redis\n      sourceRef:\n        kind: HelmRepository\n        \
             name: {source}\n"
        ),
    )
}

#[test]
fn a_helm_release_whose_chart_source_is_not_built_is_named() {
    if !kustomize_installed("a_helm_release_whose_chart_source_is_not_built") {
        return;
    }
    let test = with_chart(project(&apps("")), "5m", "bitnamy");
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: HelmRelease/web/redis reads its chart from HelmRepository `bitnamy` in namespace `web` (spec.chart.spec.sourceRef), which no kustomization of the context builds [missing-chart-source]
         --> _template/facets/apps.yaml:6:5
          |
        6 |   - name: web
          |     ^^^^^^^^^ the kustomization that builds it, written by facet `apps`
          |
          = note: the HelmRelease comes from kustomize/web/chart.yaml
          = help: did you mean `bitnami`?
        note: no schema for these kinds, their objects were not validated: helm.toolkit.fluxcd.io/v2 HelmRelease (1), source.toolkit.fluxcd.io/v1 HelmRepository (1)
        context  kustomizations  objects  errors  warnings
        local                 1       10       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

/// A kind no kustomization defines (Flux's HelmRelease, say) is validated against a
/// CRD given with `--crds`; a kind no given CRD defines stays unchecked.
#[test]
fn a_kind_defined_by_a_given_crd_is_validated_against_it() {
    if !kustomize_installed("a_kind_defined_by_a_given_crd") {
        return;
    }
    let test = with_chart(project(&apps("")), "5", "bitnami")
        .file(
            "flux-system/helm-crds.yaml",
            indoc! {r#"
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: helmreleases.helm.toolkit.fluxcd.io
            spec:
              group: helm.toolkit.fluxcd.io
              scope: Namespaced
              names:
                kind: HelmRelease
                plural: helmreleases
              versions:
                - name: v2
                  served: true
                  storage: true
                  schema:
                    openAPIV3Schema:
                      type: object
                      properties:
                        spec:
                          type: object
                          required: [interval, chart]
                          properties:
                            interval:
                              type: string
            "#},
        )
        .args(["--crds", "flux-system"]);
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {r#"
        == context `local` ==
        error: HelmRelease/web/redis does not match the openAPIV3Schema of CRD `helmreleases.helm.toolkit.fluxcd.io` (given with --crds, flux-system/helm-crds.yaml): /spec/interval: 5 is not of type "string" [schema-violation]
         --> _template/facets/apps.yaml:6:5
          |
        6 |   - name: web
          |     ^^^^^^^^^ the kustomization that builds it, written by facet `apps`
          |
          = note: the object comes from kustomize/web/chart.yaml
        note: no schema for these kinds, their objects were not validated: source.toolkit.fluxcd.io/v1 HelmRepository (1)
        context  kustomizations  objects  errors  warnings
        local                 1       10       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "#}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn an_object_two_kustomizations_build_names_both() {
    if !kustomize_installed("an_object_two_kustomizations_build") {
        return;
    }
    let facet =
        apps("  - name: api\n    path: api\n    substitutions:\n      domain: example.com\n");
    let test = project(&facet).file(
        "kustomize/api/kustomization.yaml",
        "resources:\n  - ../web/config.yaml\n",
    );
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: ConfigMap/web/settings is built by two kustomizations, `api` and `web`: each reconcile undoes the other's, and pruning one deletes it [two-owners]
          --> _template/facets/apps.yaml:6:5
           |
         6 |   - name: web
           |     ^^^^^^^^^ the kustomization that builds it, written by facet `apps`
        ...
        12 |   - name: api
           |     --------- `api` builds it too, written by facet `apps`
           |
           = note: `api` builds it from kustomize/web/config.yaml
           = note: `web` builds it from kustomize/web/config.yaml
        context  kustomizations  objects  errors  warnings
        local                 2       11       1         0
        1 context(s), 1 error(s); 2 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn an_object_breaking_its_crd_schema_is_found_in_its_component() {
    if !kustomize_installed("an_object_breaking_its_crd_schema") {
        return;
    }
    let test = project(&apps(""))
        .file(
            "kustomize/web/kustomization.yaml",
            "resources:\n  - namespace.yaml\n  - config.yaml\n  - crd.yaml\n",
        )
        .file(
            "kustomize/web/crd.yaml",
            indoc! {"
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: caches.example.com
            spec:
              group: example.com
              scope: Namespaced
              names:
                kind: Cache
                plural: caches
              versions:
                - name: v1
                  served: true
                  storage: true
                  schema:
                    openAPIV3Schema:
                      type: object
                      properties:
                        spec:
                          type: object
                          properties:
                            size:
                              type: integer
            "},
        )
        .file(
            "kustomize/web/cache/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - cache.yaml\n  - instance.yaml\n",
        )
        .file(
            "kustomize/web/cache/instance.yaml",
            "apiVersion: example.com/v1\nkind: Cache\nmetadata:\n  name: main\n  namespace: web\nspec:\n  size: big\n",
        );
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {r#"
        == context `local` ==
        error: Cache/web/main does not match the openAPIV3Schema of CRD `caches.example.com`: /spec/size: "big" is not of type "integer" [schema-violation]
         --> _template/facets/apps.yaml:9:9
          |
        9 |       - cache
          |         ^^^^^ the component it comes from, written by facet `apps`
          |
          = note: the object comes from kustomize/web/cache/instance.yaml
        context  kustomizations  objects  errors  warnings
        local                 1       10       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "#}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn a_project_on_a_published_blueprint_is_verified_against_the_pulled_tree() {
    if !kustomize_installed("a_project_on_a_published_blueprint") {
        return;
    }
    // The artifact as a pull leaves it in Windsor's cache (`artifact.tar` marks the
    // entry complete), read with --offline: the Kustomizations read the artifact's
    // `kustomize/` through their OCIRepository.
    let cache = ".windsor/cache/oci/ghcr.io_acme_core_v1.0.0";
    let test = Test::new()
        .file(
            "contexts/prod/blueprint.yaml",
            format!("{BLUEPRINT_HEAD}metadata:\n  name: prod\nsources:\n  - name: core\n    url: oci://ghcr.io/acme/core:v1.0.0\n"),
        )
        .file(&format!("{cache}/artifact.tar"), "pulled")
        .file(
            &format!("{cache}/_template/facets/apps.yaml"),
            format!("{FACET_HEAD}{}", apps("").replace("      - cache\n", "      - cahce\n")),
        )
        .file(&format!("{cache}/kustomize/web/kustomization.yaml"), "resources:\n  - namespace.yaml\n")
        .file(
            &format!("{cache}/kustomize/web/namespace.yaml"),
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
        )
        .file(
            &format!("{cache}/kustomize/web/cache/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
        )
        .args(["verify", "--context", "prod", "--offline"])
        .any_status();
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        == context `prod` ==
        error: component `cahce` of kustomization `web` is not a directory of .windsor/cache/oci/ghcr.io_acme_core_v1.0.0/kustomize/web [missing-component]
         --> .windsor/cache/oci/ghcr.io_acme_core_v1.0.0/_template/facets/apps.yaml:9:9
          |
        9 |       - cahce
          |         ^^^^^ the component, written by facet `apps`
          |
          = help: did you mean `cache`?
        context  kustomizations  objects  errors  warnings
        prod                  1        6       1         0
        1 context(s), 1 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn findings_come_as_json_for_ci() {
    if !kustomize_installed("findings_come_as_json_for_ci") {
        return;
    }
    let facet = apps("").replace("      - cache\n", "      - cahce\n");
    let out = project(&facet).args(["--format", "json"]).run();
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let finding = &report["contexts"][0]["findings"][0];
    assert_eq!(report["errors"], 1);
    assert_eq!(report["contexts"][0]["context"], "local");
    assert_eq!(finding["id"], "missing-component");
    assert_eq!(finding["kustomization"], "web");
    assert_eq!(
        finding["location"],
        serde_json::json!({"file": "_template/facets/apps.yaml", "line": 9, "column": 9})
    );
    assert_eq!(finding["help"], "did you mean `cache`?");
    assert_eq!(out.status, Some(1));
}

#[test]
fn without_kubectl_or_kustomize_verify_names_both() {
    let empty = tempfile::tempdir().expect("tempdir");
    project(&apps(""))
        .env("PATH", &empty.path().to_string_lossy())
        .stderr(indoc! {"
            error: no kustomize to build with: neither `kubectl` (for `kubectl kustomize`) nor `kustomize` is on PATH
            = help: install kubectl (it embeds kustomize) or kustomize; verify builds each Flux Kustomization with it

        "})
        .status(1)
        .run();
}

#[test]
fn substituted_numbers_are_numbers_as_flux_parses_them_after_substitution() {
    if !kustomize_installed("substituted_numbers_are_numbers") {
        return;
    }
    // `replicas: ${replicas}` is a string before substitution and an integer after it:
    // validated as the controller applies it, the Deployment is valid.
    let facet = apps("      replicas: \"2\"\n");
    let test = project(&facet)
        .file(
            "kustomize/web/kustomization.yaml",
            "resources:\n  - namespace.yaml\n  - config.yaml\n  - deployment.yaml\n",
        )
        .file(
            "kustomize/web/deployment.yaml",
            indoc! {"
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
              namespace: web
            spec:
              replicas: ${replicas}
              selector:
                matchLabels:
                  app: web
              template:
                metadata:
                  labels:
                    app: web
                spec:
                  containers:
                    - name: web
                      image: nginx
            "},
        );
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        context  kustomizations  objects  errors  warnings
        local                 1        9       0         0
        1 context(s), 0 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(0));
}

#[test]
fn remote_resources_are_reported_never_fetched_and_fail_under_strict() {
    if !kustomize_installed("remote_resources_are_reported") {
        return;
    }
    let remote = "https://example.invalid/manifests/app.yaml";
    let with_remote = |strict: bool| {
        let test = project(&apps("")).file(
            "kustomize/web/kustomization.yaml",
            format!("resources:\n  - namespace.yaml\n  - config.yaml\n  - {remote}\n"),
        );
        if strict {
            test.arg("--strict")
        } else {
            test
        }
    };
    let (text, status) = verified(with_remote(false));
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        warning: kustomization `web` includes the remote resource https://example.invalid/manifests/app.yaml (in kustomize/web), which is not fetched or checked [remote-resource]
         --> _template/facets/apps.yaml:6:5
          |
        6 |   - name: web
          |     ^^^^^^^^^ the kustomization, written by facet `apps`
        context  kustomizations  objects  errors  warnings
        local                 1        8       0         1
        1 context(s), 0 error(s); 1 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(0));
    let (_, status) = verified(with_remote(true));
    assert_eq!(status, Some(1));
}

#[test]
fn a_path_without_a_kustomization_is_built_from_the_manifests_below_it() {
    if !kustomize_installed("a_path_without_a_kustomization") {
        return;
    }
    // As kustomize-controller generates one: every manifest below the path (a
    // subdirectory with a kustomization as such), other files left out.
    let facet = apps("  - name: plain\n    path: plain\n");
    let test = project(&facet)
        .file("kustomize/plain/README.md", "not a manifest\n")
        .file("kustomize/plain/notes.yaml", "just: data\n")
        .file(
            "kustomize/plain/a/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: web\n",
        )
        .file(
            "kustomize/plain/b/kustomization.yaml",
            "resources:\n  - config.yaml\n",
        )
        .file(
            "kustomize/plain/b/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: webb\n",
        );
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: ConfigMap/webb/b lives in namespace `webb`, which no kustomization of the context creates and a cluster does not have [missing-namespace]
          --> _template/facets/apps.yaml:12:5
           |
        12 |   - name: plain
           |     ^^^^^^^^^^^ the kustomization that builds it, written by facet `apps`
           |
           = note: the object comes from kustomize/plain/b/config.yaml
        context  kustomizations  objects  errors  warnings
        local                 2       11       1         0
        1 context(s), 1 error(s); 2 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

#[test]
fn a_project_without_a_kustomize_tree_is_one_finding() {
    if !kustomize_installed("a_project_without_a_kustomize_tree") {
        return;
    }
    let test = Test::new()
        .facet("apps.yaml", &apps("  - name: api\n    path: api\n"))
        .args(["verify"])
        .any_status();
    let (text, status) = verified(test);
    assert_eq!(
        text,
        indoc! {"
        == context `local` ==
        error: the project has no `kustomize/` directory: none of the 2 kustomization(s) reading it can be built (api, web) [missing-path]
        context  kustomizations  objects  errors  warnings
        local                 2        6       1         0
        1 context(s), 1 error(s); 0 distinct build(s) with [kustomize]
        "}
    );
    assert_eq!(status, Some(1));
}

/// A kustomization naming a file outside the source tree (absolute, or `../` past its
/// root) is refused before anything is built: kustomize-controller cannot read such a
/// file, and verify must not read this machine's.
#[test]
fn a_kustomization_reaching_outside_the_tree_is_refused_unread() {
    if !kustomize_installed("a_kustomization_reaching_outside_the_tree") {
        return;
    }
    let secret = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(secret.path(), "hunter2\n").expect("write");
    let absolute = secret.path().display().to_string();
    let climbing = format!("{}{}", "../".repeat(40), absolute.trim_start_matches('/'));
    for (entry, column) in [(absolute.as_str(), 13), (climbing.as_str(), 13)] {
        let kustomization = format!(
            "resources:\n  - namespace.yaml\n  - config.yaml\nconfigMapGenerator:\n  - name: stolen\n    namespace: web\n    files:\n      - key={entry}\n"
        );
        let test = project(&apps("")).file("kustomize/web/kustomization.yaml", kustomization);
        let (text, status) = verified(test);
        assert_eq!(
            text,
            format!(
                "error: kustomize/web/kustomization.yaml:8:{column}: `configMapGenerator` names `{entry}`, which is outside the source tree; kustomize-controller cannot read it, and verify does not\n\n"
            )
        );
        assert!(!text.contains("hunter2"));
        assert_eq!(status, Some(1));
    }
}

/// A link in the kustomize tree is followed only inside the project.
#[cfg(unix)]
#[test]
fn a_link_out_of_the_project_is_not_copied_into_the_build() {
    if !kustomize_installed("a_link_out_of_the_project") {
        return;
    }
    let secret = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(secret.path(), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\n  namespace: web\ndata:\n  password: hunter2\n").expect("write");
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    let files = [
        ("windsor.yaml", "version: v1alpha1\n".to_string()),
        ("_template/facets/apps.yaml", format!("{FACET_HEAD}{}", apps(""))),
        (
            "kustomize/web/kustomization.yaml",
            "resources:\n  - namespace.yaml\n  - stolen.yaml\n".to_string(),
        ),
        (
            "kustomize/web/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n".to_string(),
        ),
        (
            "kustomize/web/cache/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - cache.yaml\n"
                .to_string(),
        ),
        (
            "kustomize/web/cache/cache.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache\n  namespace: web\n"
                .to_string(),
        ),
    ];
    for (path, text) in files {
        let at = root.join(path);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        std::fs::write(at, text).expect("write");
    }
    std::os::unix::fs::symlink(secret.path(), root.join("kustomize/web/stolen.yaml"))
        .expect("link");
    let test = Test::in_dir(&root).args(["verify"]).any_status();
    let (text, status) = verified(test);
    assert_eq!(
        text,
        "error: kustomize/web/stolen.yaml is a link that leads out of the project; verify builds only what is inside it, as kustomize-controller does\n\n"
    );
    assert_eq!(status, Some(1));
}
