//! A `bpc compose` or `bpc render` of one context keeps certainly inactive facets
//! hollow while a large template loads (`template::prune`). None of it may
//! show: each test composes a template of more facets than the cut-off both ways — one
//! context (hollow facets) and through `--all-contexts` (every facet whole) — and expects
//! the same blueprint, or the same error.

use crate::common::*;

/// Facets that are inactive in the context the tests compose (`provider: aws`), each
/// with a component (named `filler-<k>`, or for odd `k` known by its path
/// `filler/<k>`): enough of them for the load to keep facets hollow.
fn with_inactive_fillers(mut test: Test) -> Test {
    for k in 0..300 {
        let name = if k % 2 == 0 {
            format!("name: filler-{k}\n    ")
        } else {
            String::new()
        };
        test = test.facet(
            &format!("filler-{k:03}.yaml"),
            &format!(
                "metadata:\n  name: filler-{k}\nwhen: provider == 'azure'\nterraform:\n  - {name}path: filler/{k}\n    inputs:\n      size: large\n"
            ),
        );
    }
    test.values("local", "provider: aws\n")
}

/// The blueprint of context `local`, composed alone and then among `--all-contexts`;
/// asserts they are the same and returns it.
#[track_caller]
fn composed_both_ways(test: Test) -> String {
    let alone = test.compose().run();
    let dir = alone.root.as_path();
    let out = dir.join("all");
    let among = bpc(
        dir,
        &[
            "compose",
            "--all-contexts",
            "--out",
            out.to_str().unwrap_or("all"),
        ],
    );
    assert!(among.success(), "{}", among.text());
    let written = std::fs::read_to_string(out.join("local.yaml")).unwrap_or_default();
    assert_eq!(alone.stdout, written, "composed alone and among contexts");
    alone.stdout
}

/// A facet that applies only once a config block `feature` says so.
const LATE: &str = indoc! {"
    metadata:
      name: late
    when: feature.on == true
    terraform:
      - name: late-net
        path: late/net
        inputs:
          cidr: 10.1.0.0/16
"};

/// A template where facet `late` applies only once `zz-enabler`'s config block
/// `feature` (written as `config`) counts: `late`'s `when` is false when its file is
/// parsed, before `zz-enabler.yaml` on any number of threads.
fn switched_on_by(config: &str) -> Test {
    with_inactive_fillers(Test::new())
        .facet("late.yaml", LATE)
        .facet(
            "zz-enabler.yaml",
            &format!("metadata:\n  name: enabler\n{config}"),
        )
}

#[track_caller]
fn assert_late_composed_in_full(blueprint: &str) {
    assert!(
        blueprint
            .contains("- name: late-net\n  path: late/net\n  inputs:\n    cidr: 10.1.0.0/16\n"),
        "{blueprint}"
    );
    assert!(!blueprint.contains("filler-"), "{blueprint}");
}

#[test]
fn a_facet_switched_on_by_another_facets_config_is_composed_in_full() {
    // The block's name, read from the text before parsing, keeps `late` whole.
    let test = switched_on_by("config:\n  - name: feature\n    value:\n      on: true\n");
    assert_late_composed_in_full(&composed_both_ways(test));
}

#[test]
fn a_facet_left_hollow_is_parsed_again_when_its_when_reads_a_block() {
    // Written in flow style, the block escapes the guess at block names made before
    // parsing: `late` is left hollow, then parsed again in full once every facet is
    // known.
    let test = switched_on_by("config: [{name: feature, value: {on: true}}]\n");
    assert_late_composed_in_full(&composed_both_ways(test));
}

#[test]
fn a_facet_switched_on_by_a_local_sources_config_is_composed_in_full() {
    // The sources' config is in the composing template's scope: a template that
    // lists local sources loads every facet whole.
    let mut test = Test::new().file(
        "_template/blueprint.yaml",
        format!(
            "{BLUEPRINT_HEAD}metadata:\n  name: top\nsources:\n  - name: base\n    url: ../base\n"
        ),
    );
    test = with_inactive_fillers(test)
        .file(
            "base/blueprint.yaml",
            format!("{BLUEPRINT_HEAD}metadata:\n  name: base\n"),
        )
        .file(
            "base/facets/feature.yaml",
            format!(
                "{FACET_HEAD}metadata:\n  name: feature\nconfig:\n  - name: feature\n    value:\n      on: true\n"
            ),
        )
        .facet("late.yaml", LATE);
    assert_late_composed_in_full(&composed_both_ways(test));
}

#[test]
fn a_component_of_a_hollow_facet_is_still_named_when_missed() {
    // One dependency named, one known by its path: a hollow facet keeps what each
    // identity is made of.
    let test = with_inactive_fillers(Test::new()).facet(
        "app.yaml",
        indoc! {"
            metadata:
              name: app
            terraform:
              - name: app
                path: app
                dependsOn: [filler-6, filler/7]
        "},
    );
    let alone = test.compose().status(1).run();
    let among = bpc(
        alone.root.as_path(),
        &["compose", "--all-contexts", "--out", "all"],
    );
    assert!(!among.success());
    for note in [
        "note: `filler-6` is defined in facet `filler-6`, but facet `filler-6` is not active (facets/filler-006.yaml): `when: provider == 'azure'`",
        "note: `filler/7` is defined in facet `filler-7`, but facet `filler-7` is not active (facets/filler-007.yaml): `when: provider == 'azure'`",
    ] {
        assert!(alone.stderr.contains(note), "{}", alone.stderr);
        assert!(among.stderr.contains(note), "{}", among.stderr);
    }
}

#[test]
fn an_inactive_facets_mistakes_are_still_errors() {
    let test = with_inactive_fillers(Test::new()).facet(
        "broken.yaml",
        indoc! {"
            metadata:
              name: broken
            when: provider == 'azure'
            terraform:
              - name: x
                path: x
                strategy: mrege
        "},
    );
    test.compose()
        .fails(indoc! {"
        error: invalid strategy `mrege`
         --> _template/facets/broken.yaml:9:15
          |
        9 |     strategy: mrege
          |               ^^^^^ must be `merge`, `replace` or `remove`
          |
          = help: did you mean `merge`?

    "})
        .run();
}

/// The test of which facets can stay hollow reads the context's values while the
/// template loads; composing then uses what it read rather than reading the files
/// again, so the two cannot see different values (a file changed in between), and
/// the values file is registered once.
#[test]
fn the_context_values_are_read_once() {
    use bpc::files::{FileId, FileMap};
    use bpc::session::{OneShot, Options};
    use std::sync::Arc;
    let composed = with_inactive_fillers(Test::new()).compose().run();
    let options = Options::at(composed.root.as_path());
    let files = Arc::new(FileMap::new());
    let session = OneShot::open(options, files.clone()).expect("the project loads");
    session.compose().expect("the context composes");
    let values_files = (0..files.len())
        .filter_map(|i| files.path(FileId(i as u32)))
        .filter(|path| path.ends_with("values.yaml"))
        .count();
    assert_eq!(values_files, 1);
}
