//! The context's own blueprint (`contexts/<ctx>/blueprint.yaml`) laid over the composed
//! blueprint (docs/semantics.md S12): Windsor's merge rules when no `listStrategies`
//! are declared, each declared strategy, the lookup order, and how `explain`,
//! `--provenance` and diagnostics name the file.

use indoc::indoc;
use std::path::Path;

const HEADER: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";

/// The template of the probes run against the Windsor CLI: a base component, a facet
/// merging into it, a kustomization and a config block.
const BASE: &str = "\
kind: Blueprint
apiVersion: blueprints.windsorcli.dev/v1alpha1
metadata: {name: t}
repository:
  url: https://example.com/template.git
terraform:
  - path: cluster
    dependsOn: [net]
    inputs:
      scalar: base
      groups: [{name: a, size: 1}, {name: b, size: 2}]
  - path: net
";

fn facet() -> String {
    format!(
        "{HEADER}metadata: {{name: f}}
config:
  - name: sizing
    value: {{workers: 3}}
terraform:
  - path: cluster
    parallelism: 3
    dependsOn: [net2]
    inputs:
      scalar: facet
      lst: [c]
      nested: {{x: 2, l: [3], y: 9}}
      empty: fromfacet
      tags: [x, y]
  - path: net2
kustomize:
  - name: app
    components: [mid]
    dependsOn: [dep]
    substitutions: {{t: facet}}
    timeout: 3m
    patches:
      - path: p2.yaml
  - name: dep
flux:
  - name: gitops
    install:
      components: [flux]
"
    )
}

/// A project with the template above and `overlay` as `contexts/local/blueprint.yaml`
/// (none when empty), plus `extra` files.
fn project(overlay: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let facet = facet();
    let mut files = vec![
        // Not a dev context (a context named `local` is one unless it says otherwise,
        // docs/semantics.md S4): no dev repository stands in for a cleared one.
        (
            "windsor.yaml",
            "context: local\ncontexts:\n  local:\n    dev: false\n",
        ),
        ("contexts/_template/blueprint.yaml", BASE),
        ("contexts/_template/facets/f.yaml", facet.as_str()),
    ];
    if !overlay.is_empty() {
        files.push(("contexts/local/blueprint.yaml", overlay));
    }
    files.extend_from_slice(extra);
    crate::common::project(&files)
}

/// `bpc ARGS…` in `dir`: (success, stdout, stderr).
fn outcome(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = crate::common::bpc(dir, args);
    (out.success(), out.stdout, out.stderr)
}

fn compose(dir: &Path) -> String {
    let (ok, stdout, stderr) = outcome(dir, &["compose"]);
    assert!(ok, "compose failed:\n{stderr}");
    stdout
}

/// Snapshot `snapshots/NAME.snap`: the overlay file (the template is the one above),
/// then the command and what it printed.
fn snap(name: &str, overlay: &str, command: &str, text: String) {
    snap!(
        name,
        &format!(
            "# contexts/local/blueprint.yaml\n{overlay}{}{command}\n{text}",
            crate::common::OUTPUT_MARK
        ),
    );
}

/// The lines of `yaml` from the one equal to `start` up to the next line indented as
/// little or less.
fn block(yaml: &str, start: &str) -> String {
    let mut lines = yaml.lines().skip_while(|l| *l != start);
    let Some(first) = lines.next() else {
        panic!("no line {start:?} in\n{yaml}");
    };
    let indent = first.len() - first.trim_start().len();
    let mut out = vec![first.to_string()];
    for line in lines {
        if line.len() - line.trim_start().len() <= indent && !line.trim_start().starts_with("- ")
            || line.len() - line.trim_start().len() < indent
        {
            break;
        }
        out.push(line.to_string());
    }
    out.join("\n")
}

#[test]
fn no_overlay_file_and_an_empty_overlay_change_nothing_but_windsors_repository_rule() {
    let plain = compose(project("", &[]).path());
    snap("overlay_none", "", "bpc compose", plain.clone());
    // With an overlay, the template's repository goes unless the overlay names one
    // (Windsor clears it); everything else stays.
    let said_nothing = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata: {name: local}\nrepository:\n  url: https://example.com/template.git\n";
    assert_eq!(compose(project(said_nothing, &[]).path()), plain);
    let without_repository = compose(project("metadata: {name: local}\n", &[]).path());
    assert_eq!(
        without_repository,
        plain.replace("repository:\n  url: https://example.com/template.git\n", "")
    );
}

#[test]
fn without_list_strategies_the_overlay_merges_as_windsor_does() {
    // Checked with the Windsor CLI: scalars win, maps deep-merge, lists inside inputs
    // are replaced, an empty value erases nothing, dependsOn is a union, patches
    // append, components are a sorted union, substitutions merge key by key.
    let overlay = "\
terraform:
  - path: cluster
    dependsOn: [net]
    inputs:
      scalar: ctx
      lst: [d]
      nested: {x: 1, l: [1, 2]}
      empty: ''
kustomize:
  - name: app
    components: [alpha]
    substitutions: {t: ctx, u: new}
    timeout: 1m
    patches:
      - path: p2.yaml
";
    let out = compose(project(overlay, &[]).path());
    snap("overlay_windsor_defaults", overlay, "bpc compose", out);
}

#[test]
fn each_declared_list_strategy() {
    let overlay = "\
listStrategies:
  terraform.cluster.inputs.groups: {merge-by-key: name}
  inputs.tags: union
  lst: append
  cluster.dependsOn: replace
  kustomize.app.patches: 'merge-by-key: path'
terraform:
  - path: cluster
    dependsOn: [net2]
    inputs:
      groups: [{name: b, size: 5}, {name: c, size: 1}]
      tags: [y, z]
      lst: [d]
kustomize:
  - name: app
    patches:
      - {path: p2.yaml, target: {kind: Deployment}}
      - path: p3.yaml
";
    let out = compose(project(overlay, &[]).path());
    assert_eq!(
        block(&out, "    groups:"),
        "    groups:\n    - name: a\n      size: 1\n    - name: b\n      size: 5\n    - name: c\n      size: 1"
    );
    assert_eq!(
        block(&out, "    tags:"),
        "    tags:\n    - x\n    - \"y\"\n    - z"
    );
    assert_eq!(block(&out, "    lst:"), "    lst:\n    - c\n    - d");
    // The rest, with `cluster` depending on net2 alone (replace), in the snapshot.
    snap("overlay_each_strategy", overlay, "bpc compose", out);
}

#[test]
fn lookup_order_is_exact_path_then_suffix_then_bare_key() {
    let overlay = "\
listStrategies:
  tags: append
  inputs.tags: replace
  terraform.cluster.inputs.tags: union
  lst: replace
  cluster.inputs.lst: append
terraform:
  - path: cluster
    inputs:
      tags: [y, z]
      lst: [d]
  - path: net2
    inputs:
      tags: [q]
";
    let dir = project(
        overlay,
        &[(
            "contexts/_template/facets/g.yaml",
            &format!(
                "{HEADER}metadata: {{name: g}}\nterraform:\n  - path: net2\n    inputs:\n      tags: [p]\n"
            ),
        )],
    );
    let out = compose(dir.path());
    // the suffix `cluster.inputs.lst` (append) beats the bare `lst`
    assert_eq!(block(&out, "    lst:"), "    lst:\n    - c\n    - d");
    // In the snapshot: the exact `terraform.cluster.inputs.tags` (union) beats the suffix
    // and the bare key (cluster's tags x, y, z); the suffix `inputs.tags` (replace)
    // beats the bare key for net2 (its tags: q).
    snap(
        "overlay_lookup_order",
        overlay,
        "bpc compose  # facets/g.yaml adds net2 with `tags: [p]`",
        out,
    );
}

#[test]
fn a_misspelt_strategy_path_is_a_warning_with_a_suggestion() {
    let overlay = "\
listStrategies:
  inputs.tagz: union
  terraform.clustr.inputs.groups: replace
terraform:
  - path: cluster
    inputs: {tags: [z]}
";
    let (ok, _, stderr) = outcome(project(overlay, &[]).path(), &["compose"]);
    assert!(ok);
    snap(
        "overlay_unused_strategy_warning",
        overlay,
        "bpc compose (stderr)",
        stderr,
    );
    let (ok, _, _) = outcome(project(overlay, &[]).path(), &["compose", "--strict"]);
    assert!(!ok, "--strict makes the warning fatal");
}

#[test]
fn a_bad_strategy_is_an_error_at_its_line_and_column() {
    let overlay = "\
listStrategies:
  inputs.tags: apend
  groups: merge-by-key
terraform:
  - path: cluster
    inputs: {tags: [z]}
";
    let (ok, _, stderr) = outcome(project(overlay, &[]).path(), &["compose"]);
    assert!(!ok);
    assert_eq!(
        stderr,
        indoc! {"
        error: unknown list strategy `apend`
         --> contexts/local/blueprint.yaml:2:16
          |
        2 |   inputs.tags: apend
          |                ^^^^^ not a list strategy
          |
          = note: in `listStrategies.inputs.tags`
          = help: did you mean `append`? expected one of append, replace, union, merge-by-key: <field>

        error: `merge-by-key` needs a field name
         --> contexts/local/blueprint.yaml:3:11
          |
        3 |   groups: merge-by-key
          |           ^^^^^^^^^^^^ write `merge-by-key: <field>`
          |
          = note: in `listStrategies.groups`

    "}
    );
}

#[test]
fn expression_errors_and_entries_without_identity_name_the_overlay_file() {
    let (ok, _, stderr) = outcome(
        project(
            "terraform:\n  - path: cluster\n    inputs:\n      x: ${sizing.workers +}\n",
            &[],
        )
        .path(),
        &["compose"],
    );
    assert!(!ok);
    assert_eq!(
        stderr,
        indoc! {"
        error: invalid expression: unexpected token EOF
         --> contexts/local/blueprint.yaml:4:28
          |
        4 |       x: ${sizing.workers +}
          |                            ^ unexpected token EOF
          |
          = note: in `inputs` of terraform component `cluster` of contexts/local/blueprint.yaml

    "}
    );
    let (ok, _, stderr) = outcome(
        project("kustomize:\n  - path: somewhere\n", &[]).path(),
        &["compose"],
    );
    assert!(!ok);
    assert_eq!(
        stderr,
        indoc! {"
        error: a kustomization in contexts/local/blueprint.yaml has no identity
         --> contexts/local/blueprint.yaml:2:5
          |
        2 |   - path: somewhere
          |     ^^^^^^^^^^^^^^^ needs a `name`

    "}
    );
}

#[test]
fn the_overlay_adds_and_overrides_terraform_inputs_and_kustomizations() {
    let overlay = "\
terraform:
  - path: cluster
    inputs:
      workers: ${sizing.workers * 2}
      note: ${file('note.txt')}
      scalar: ctx
  - name: dns
    path: network/dns
    dependsOn: [net]
    inputs: {zone: '${context}.example.com'}
kustomize:
  - name: app
    substitutions: {t: '${not_evaluated}'}
  - name: extra
    components: [one]
    dependsOn: [app]
";
    let dir = project(
        overlay,
        &[("contexts/local/note.txt", "from the context dir")],
    );
    let out = compose(dir.path());
    // `workers: 6`, the note read from the context's directory, `scalar: ctx`, the new
    // `dns` and `extra`; kustomization fields are taken as written (`t:
    // ${not_evaluated}`), as Windsor does.
    snap("overlay_adds_and_overrides", overlay, "bpc compose", out);
}

#[test]
fn repository_and_sources_follow_the_overlay() {
    let overlay = "\
repository:
  url: https://example.com/context.git
  ref: {branch: prod}
sources:
  - name: template
    install: true
  - name: addons
    url: oci://ghcr.io/example/addons:1.0.0
";
    let out = compose(project(overlay, &[]).path());
    snap(
        "overlay_repository_and_sources",
        overlay,
        "bpc compose",
        out,
    );
}

#[test]
fn an_overlay_entry_naming_a_flux_tier_is_an_error() {
    let (ok, _, stderr) = outcome(
        project(
            "kustomize:\n  - name: gitops-install\n    timeout: 1m\n",
            &[],
        )
        .path(),
        &["compose"],
    );
    assert!(!ok);
    assert_eq!(
        stderr,
        indoc! {"
        error: kustomization `gitops-install` belongs to the flux system `gitops`
         --> contexts/local/blueprint.yaml:2:5
          |
        2 |   - name: gitops-install
          |     ^^^^^^^^^^^^^^^^^^^^ a flux system's tier
          |
          = help: a context blueprint merges into plain kustomizations only; change the system in a facet

    "}
    );
}

#[test]
fn unknown_keys_and_facet_only_keys_are_warnings() {
    let overlay = "\
kustomise: []
terraform:
  - path: cluster
    strategy: replace
    inputz: {a: 1}
";
    let (ok, _, stderr) = outcome(project(overlay, &[]).path(), &["compose"]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stderr,
        indoc! {"
        warning: `kustomise` in contexts/local/blueprint.yaml is not applied: a context blueprint sets repository, sources, terraform, kustomize, listStrategies
         --> contexts/local/blueprint.yaml:1:1
          |
        1 | kustomise: []
          | ^^^^^^^^^ not applied
          |
          = help: did you mean `kustomize`? --strict makes this an error

        warning: `strategy` is ignored in a context blueprint: its entries always merge
         --> contexts/local/blueprint.yaml:4:5
          |
        4 |     strategy: replace
          |     ^^^^^^^^ facet-only key
          |
          = help: use a facet to replace, remove or condition a component; --strict makes this an error

        warning: unknown terraform component field `inputz` in contexts/local/blueprint.yaml
         --> contexts/local/blueprint.yaml:5:5
          |
        5 |     inputz: {a: 1}
          |     ^^^^^^ not applied
          |
          = help: did you mean `inputs`? --strict makes this an error

    "}
    );
}

#[test]
fn explain_shows_the_overlay_as_its_own_step_with_the_list_strategy() {
    let overlay = "\
listStrategies:
  inputs.groups: {merge-by-key: name}
terraform:
  - path: cluster
    inputs:
      scalar: ctx
      groups: [{name: b, size: 5}]
      lst: [d]
";
    let dir = project(overlay, &[]);
    let mut text = String::new();
    for path in [
        "terraform.cluster.inputs.scalar",
        "terraform.cluster.inputs.groups",
        "terraform.cluster.inputs.lst",
    ] {
        let (ok, stdout, stderr) = outcome(dir.path(), &["explain", path]);
        assert!(ok, "{stderr}");
        text.push_str(&stdout);
        text.push('\n');
    }
    snap(
        "overlay_explain",
        overlay,
        "bpc explain (three paths)",
        text,
    );
}

#[test]
fn provenance_names_the_overlay_line() {
    let overlay = "terraform:\n  - path: cluster\n    inputs:\n      scalar: ctx\n";
    let (ok, stdout, stderr) = outcome(project(overlay, &[]).path(), &["compose", "--provenance"]);
    assert!(ok, "{stderr}");
    // `scalar: ctx  # contexts/local/blueprint.yaml:4:15 (context blueprint)`
    snap(
        "overlay_provenance",
        overlay,
        "bpc compose --provenance",
        stdout,
    );
}
