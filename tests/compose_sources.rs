//! Local multi-source composition: a template whose `blueprint.yaml` lists other
//! template directories or archives under `sources:` (docs/semantics.md S9 "Local sources").

use crate::common::*;

/// A `blueprint.yaml` listing local sources as (name, url).
fn blueprint(name: &str, sources: &[(&str, &str)]) -> String {
    let mut text = format!("{BLUEPRINT_HEAD}metadata:\n  name: {name}\n");
    if !sources.is_empty() {
        text.push_str("sources:\n");
        for (n, url) in sources {
            text.push_str(&format!("  - name: {n}\n    url: {url}\n"));
        }
    }
    text
}

fn facet(name: &str, body: &str) -> String {
    format!("{FACET_HEAD}metadata:\n  name: {name}\n{body}")
}

/// `bpc compose --template top` in a throwaway project holding `files`.
fn top(files: &[(&str, String)]) -> Test {
    files
        .iter()
        .fold(Test::new(), |test, (path, text)| {
            test.file(path, text.as_str())
        })
        .compose()
        .args(["--template", "top"])
}

/// The blueprint of the template `top`.
#[track_caller]
fn compose_top(files: &[(&str, String)]) -> String {
    top(files).run().stdout
}

/// The failed composition of the template `top`: its stderr, and the run to snapshot.
#[track_caller]
fn compose_top_err(files: &[(&str, String)]) -> Output {
    top(files).status(1).run()
}

/// The `name:` lines of a component list, in output order.
fn names(yaml: &str, list: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in yaml.lines() {
        if !line.starts_with(' ') && !line.starts_with('-') {
            inside = line == format!("{list}:");
            continue;
        }
        if let Some(name) = line.strip_prefix("- name: ").filter(|_| inside) {
            out.push(name.to_string());
        }
    }
    out
}

/// `examples/multi-source` composed with its template `app`.
fn example(sets: &[&str]) -> String {
    let mut test = Test::in_dir(repo().join("examples/multi-source"))
        .compose()
        .args(["--template", "app"]);
    for set in sets {
        test = test.args(["--set", set]);
    }
    test.run().stdout
}

#[test]
fn example_merges_replaces_and_removes_upstream_components() {
    let out = example(&[]);
    // Platform components first (depth 0), the application's after.
    assert_eq!(names(&out, "terraform"), ["network", "cluster", "database"]);
    assert_eq!(names(&out, "kustomize"), ["ingress", "dns", "addon-app"]);
    // The whole blueprint in the snapshot. Merge: the app's worker count (4) and
    // ingress component (nginx/cert-manager) land in platform components. Replace:
    // nothing of the platform's dns (coredns) is left, and it is now the app's
    // (dns/external). Remove: addon-monitoring is gone unless asked for.
    snap!("sources_example", &out);
}

#[test]
fn upstream_components_keep_their_place_before_downstream_ones() {
    let out = example(&["monitoring.enabled=true"]);
    assert_eq!(
        names(&out, "kustomize"),
        ["ingress", "addon-monitoring", "dns", "addon-app"]
    );
    snap!("sources_example_monitoring", &out);
}

#[test]
fn sources_compose_in_dependency_order_and_see_upstream_config() {
    // top -> mid -> base, and top -> base directly too (a diamond of one).
    let files = vec![
        (
            "top/blueprint.yaml",
            blueprint("top", &[("mid", "../mid"), ("base", "../base")]),
        ),
        (
            "top/facets/top.yaml",
            facet(
                "top",
                "when: mid_config.ready && base_config.tier == 'gold'\nkustomize:\n  - name: top-app\n    dependsOn: [mid-app, base-app]\n",
            ),
        ),
        ("mid/blueprint.yaml", blueprint("mid", &[("base", "../base")])),
        (
            "mid/facets/mid.yaml",
            facet(
                "mid",
                "when: base_config.tier == 'gold'\nconfig:\n  - name: mid_config\n    value:\n      ready: true\nkustomize:\n  - name: mid-app\n    dependsOn: [base-app]\n",
            ),
        ),
        ("base/blueprint.yaml", blueprint("base", &[])),
        (
            "base/facets/base.yaml",
            facet(
                "base",
                "config:\n  - name: base_config\n    value:\n      tier: gold\nkustomize:\n  - name: base-app\n",
            ),
        ),
    ];
    let out = compose_top(&files);
    assert_eq!(names(&out, "kustomize"), ["base-app", "mid-app", "top-app"]);
    // The composing template's own components get no `source:`; the template's own
    // source comes first, then each source once, in the order first seen.
    assert_eq!(
        out,
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
        - name: base
          url: ../base
        - name: mid
          url: ../mid
        kustomize:
        - name: base-app
          source: base
        - name: mid-app
          source: mid
          dependsOn:
          - base-app
        - name: top-app
          dependsOn:
          - mid-app
          - base-app
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

#[test]
fn ordinals_do_not_cross_source_boundaries() {
    // The upstream facet's ordinal is far higher, but the downstream template is
    // merged after the whole upstream source, so its value wins.
    let files = vec![
        ("top/blueprint.yaml", blueprint("top", &[("up", "../up")])),
        (
            "top/facets/a.yaml",
            facet(
                "low",
                "ordinal: 1\nterraform:\n  - name: net\n    inputs:\n      size: downstream\n",
            ),
        ),
        ("up/blueprint.yaml", blueprint("up", &[])),
        (
            "up/facets/a.yaml",
            facet(
                "high",
                "ordinal: 900\nterraform:\n  - name: net\n    path: net\n    inputs:\n      size: upstream\n",
            ),
        ),
    ];
    let out = compose_top(&files);
    assert_eq!(
        out,
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
        - name: up
          url: ../up
        terraform:
        - name: net
          source: up
          path: net
          inputs:
            size: downstream
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

#[test]
fn upstream_config_does_not_leak_into_unrelated_sources() {
    // `b` does not reference `a`, so `a`'s config block is invisible to it.
    let files = vec![
        (
            "top/blueprint.yaml",
            blueprint("top", &[("a", "../a"), ("b", "../b")]),
        ),
        ("a/blueprint.yaml", blueprint("a", &[])),
        (
            "a/facets/a.yaml",
            facet(
                "a",
                "config:\n  - name: shared\n    value:\n      enabled: true\n",
            ),
        ),
        ("b/blueprint.yaml", blueprint("b", &[])),
        (
            "b/facets/b.yaml",
            facet(
                "b",
                "when: shared.enabled == true\nkustomize:\n  - name: b-app\n",
            ),
        ),
        (
            "top/facets/top.yaml",
            facet(
                "top",
                "when: shared.enabled == true\nkustomize:\n  - name: top-app\n",
            ),
        ),
    ];
    let out = compose_top(&files);
    assert_eq!(names(&out, "kustomize"), ["top-app"]);
}

#[test]
fn depends_on_a_missing_upstream_component_is_an_error() {
    let files = vec![
        ("top/blueprint.yaml", blueprint("top", &[("up", "../up")])),
        (
            "top/facets/top.yaml",
            facet(
                "top",
                "kustomize:\n  - name: app\n    dependsOn: [ingres]\n",
            ),
        ),
        ("up/blueprint.yaml", blueprint("up", &[])),
        (
            "up/facets/up.yaml",
            facet("up", "kustomize:\n  - name: ingress\n"),
        ),
    ];
    let run = compose_top_err(&files);
    let e = &run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: kustomization `app` depends on `ingres`, which is not in the blueprint
         --> top/facets/top.yaml:7:17
          |
        7 |     dependsOn: [ingres]
          |                 ^^^^^^ no kustomization named `ingres`
          |
          = help: did you mean `ingress`?

    "}
    );
}

#[test]
fn cycles_between_sources_print_the_whole_chain() {
    let files = vec![
        ("top/blueprint.yaml", blueprint("top", &[("a", "../a")])),
        ("a/blueprint.yaml", blueprint("a", &[("b", "../b")])),
        ("b/blueprint.yaml", blueprint("b", &[("c", "../c")])),
        ("c/blueprint.yaml", blueprint("c", &[("a", "../a")])),
    ];
    let run = compose_top_err(&files);
    let e = &run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: local sources reference each other in a cycle: a -> b -> c -> a
         --> c/blueprint.yaml:6:5
          |
        6 |   - name: a
          |     ^^^^^^^ this entry closes the cycle
         ::: top/blueprint.yaml:6:5
          |
        6 |   - name: a
          |     ------- `a` listed here
         ::: a/blueprint.yaml:6:5
          |
        6 |   - name: b
          |     ------- `b` listed here
         ::: b/blueprint.yaml:6:5
          |
        6 |   - name: c
          |     ------- `c` listed here
          |
          = help: a source cannot depend on a template that depends on it

    "}
    );
}

#[test]
fn a_source_listing_the_composing_template_is_a_cycle() {
    let files = vec![
        ("top/blueprint.yaml", blueprint("top", &[("a", "../a")])),
        ("a/blueprint.yaml", blueprint("a", &[("app", "../top")])),
    ];
    let run = compose_top_err(&files);
    let e = &run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: local sources reference each other in a cycle: app -> a -> app
         --> a/blueprint.yaml:6:5
          |
        6 |   - name: app
          |     ^^^^^^^^^ this entry closes the cycle
         ::: top/blueprint.yaml:6:5
          |
        6 |   - name: a
          |     ------- `a` listed here
          |
          = help: a source cannot depend on a template that depends on it

    "}
    );
}

#[test]
fn a_missing_source_is_reported_at_its_entry() {
    let files = vec![(
        "top/blueprint.yaml",
        blueprint("top", &[("platform", "../platfrom")]),
    )];
    let run = compose_top_err(&files);
    let e = &run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: local source `platform` (sources[0] of top/blueprint.yaml) not found: platfrom does not exist
         --> top/blueprint.yaml:7:10
          |
        7 |     url: ../platfrom
          |          ^^^^^^^^^^^ no such directory or archive
          |
          = note: a relative path is resolved against the directory of the template that lists it (top)

    "}
    );
}

#[test]
fn a_local_source_needs_a_name() {
    let text = format!("{BLUEPRINT_HEAD}metadata:\n  name: top\nsources:\n  - url: ../up\n");
    let files = vec![
        ("top/blueprint.yaml", text),
        ("up/blueprint.yaml", blueprint("up", &[])),
    ];
    let run = compose_top_err(&files);
    let e = &run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: the local source at sources[0] of top/blueprint.yaml has no name
         --> top/blueprint.yaml:6:5
          |
        6 |   - url: ../up
          |     ^^^^^^^^^^ needs a `name`
          |
          = help: components from a source are tagged with its name (`source: <name>`)

    "}
    );
}

#[test]
fn remote_sources_are_left_alone() {
    let files = vec![(
        "top/blueprint.yaml",
        blueprint("top", &[("core", "oci://ghcr.io/windsorcli/core:v0.3.0")]),
    )];
    let out = compose_top(&files);
    assert_eq!(
        out,
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
        - name: core
          url: oci://ghcr.io/windsorcli/core:v0.3.0
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

/// The files as a `.tar.gz` archive.
fn pack(files: &[(&str, &str)]) -> Vec<u8> {
    let dir = project(files);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all(".", dir.path()).expect("pack");
    tar.into_inner().expect("tar").finish().expect("gzip")
}

#[test]
fn an_archive_works_as_a_source() {
    let upstream = pack(&[
        ("blueprint.yaml", &blueprint("up", &[])),
        (
            "facets/up.yaml",
            &facet("up", "kustomize:\n  - name: ingress\n"),
        ),
    ]);
    let out = top(&[
        (
            "top/blueprint.yaml",
            blueprint("top", &[("up", "../up.tar.gz")]),
        ),
        (
            "top/facets/top.yaml",
            facet(
                "top",
                "kustomize:\n  - name: app\n    dependsOn: [ingress]\n",
            ),
        ),
    ])
    .file_bytes("up.tar.gz", upstream)
    .run()
    .stdout;
    assert_eq!(names(&out, "kustomize"), ["ingress", "app"]);
    assert_eq!(
        out,
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
        - name: up
          url: ../up.tar.gz
        kustomize:
        - name: ingress
          source: up
        - name: app
          dependsOn:
          - ingress
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

#[test]
fn an_archive_cannot_list_local_sources() {
    let upstream = pack(&[("blueprint.yaml", &blueprint("up", &[("x", "../x")]))]);
    let run = top(&[
        ("x/blueprint.yaml", blueprint("x", &[])),
        (
            "top/blueprint.yaml",
            blueprint("top", &[("up", "../up.tar.gz")]),
        ),
    ])
    .file_bytes("up.tar.gz", upstream)
    .status(1)
    .run();
    let e = run.stderr;
    assert_eq!(
        e,
        indoc! {"
        error: local source `x` (sources[0] of up.tar.gz!blueprint.yaml) is listed by an archive, which cannot reference the filesystem
         --> up.tar.gz!blueprint.yaml:7:10
          |
        7 |     url: ../x
          |          ^^^^ a path outside the archive
          |
          = help: list this source in the composing template instead, or give it an oci:// URL

    "}
    );
}

/// `bpc explain` names the source and the ordinal beside every facet it shows: the
/// upstream source by its `sources:` name, the template's own facets as `template`.
#[test]
fn explain_names_the_source_and_ordinal_of_every_facet() {
    let files = [
        ("top/blueprint.yaml", blueprint("top", &[("up", "../up")])),
        (
            "top/facets/a.yaml",
            facet(
                "low",
                "ordinal: 1\nterraform:\n  - name: net\n    inputs:\n      size: downstream\n",
            ),
        ),
        ("up/blueprint.yaml", blueprint("up", &[])),
        (
            "up/facets/a.yaml",
            facet(
                "high",
                "ordinal: 900\nterraform:\n  - name: net\n    path: net\n    inputs:\n      size: upstream\n",
            ),
        ),
    ];
    let out = files
        .iter()
        .fold(Test::new(), |test, (path, text)| {
            test.file(path, text.as_str())
        })
        .arg("explain")
        .args(["--template", "top", "terraform.net.inputs.size"])
        .run()
        .stdout;
    assert_eq!(
        out,
        indoc! {"
        terraform.net.inputs.size = \"downstream\"

        contributions, in order applied:
          1. facet `high` (up/facets/a.yaml:7:5, source `up`), ordinal 900, merge
             \"upstream\"
             → overridden
          2. facet `low` (top/facets/a.yaml:7:5, source `template`), ordinal 1, merge
             \"downstream\"
             → won
    "}
    );
}

#[test]
fn local_sources_warn_that_their_addresses_cannot_be_fetched() {
    let example = repo().join("examples/multi-source");
    let out = tempfile::tempdir().expect("tmp");
    let target = out.path().join("r");
    let run = bpc(
        &example,
        &[
            "render",
            "--template",
            "app",
            "--context",
            "local",
            "--out",
            s(&target),
        ],
    );
    assert!(run.success(), "{}", run.stderr);
    let stderr = run.stderr.replace(s(out.path()), "[out]");
    assert_eq!(
        stderr,
        indoc! {"
        warning: source `platform` has the local URL `../platform`: the source rendered for it cannot be fetched by Flux
        = help: render a blueprint whose sources are published (git, OCI), or treat this render as a preview; --strict makes this an error

        note: terraform component `network`: the variables of ../platform//terraform/network/vpc?ref= are unknown: there is no module directory at platform/terraform/network/vpc; its shim passes the component's inputs through by name (cidr_block) and re-exports no outputs
        note: terraform component `cluster`: the variables of ../platform//terraform/cluster/talos?ref= are unknown: there is no module directory at platform/terraform/cluster/talos; its shim passes the component's inputs through by name (controlplanes, workers) and re-exports no outputs
        rendered 22 file(s) to [out]/r
    "}
    );
    let strict = bpc(
        &example,
        &[
            "render",
            "--template",
            "app",
            "--context",
            "local",
            "--strict",
            "--out",
            s(&target),
        ],
    );
    assert_eq!(strict.status, Some(1), "{}", strict.stderr);
}
