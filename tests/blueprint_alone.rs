//! A plain `bpc compose` of one context reads only the blueprint, so its composition
//! lets go of the origins, and leaves the components for the writer to convert,
//! measure and write one by one (`compose::face::BlueprintAlone`); a
//! large one hands the memory its stages free back to the system as it goes
//! (`heap::give_back`). None of it may show: the blueprint, and every message about
//! the output budget, are the ones of a composition that keeps everything
//! (`--all-contexts`, `--provenance`).

use crate::common::*;

/// `n` active facets, each adding a terraform component and a kustomization, and each
/// merging into the component of the facet before it: past 2 048 components of a
/// kind, assembly converts them on two threads, and past 4 096 contributions the
/// stages give memory back.
fn merging_facets(n: usize) -> Test {
    let mut test = Test::new().values("local", "provider: aws\n");
    for k in 0..n {
        let (merge_before, depend_before) = match k {
            0 => (String::new(), String::new()),
            _ => (
                format!("  - name: tf-{}\n    inputs:\n      next: {k}\n", k - 1),
                format!("    dependsOn: [k-{}]\n", k - 1),
            ),
        };
        test = test.facet(
            &format!("f{k:04}.yaml"),
            &format!(
                "metadata:\n  name: f{k}\nterraform:\n  - name: tf-{k}\n    path: mod/{k}\n    inputs:\n      label: \"${{provider}}-{k}\"\n      zones: [a, \"${{provider}}\"]\n{merge_before}kustomize:\n  - name: k-{k}\n    path: apps/{k}\n{depend_before}"
            ),
        );
    }
    test
}

#[test]
fn a_large_composition_read_for_its_blueprint_alone_writes_what_one_that_keeps_everything_does() {
    let alone = merging_facets(2100).compose().run();
    assert!(
        alone.stdout.contains(
            "- name: tf-2098\n  path: mod/2098\n  inputs:\n    label: aws-2098\n    next: 2099\n    zones:\n    - a\n    - aws\n"
        ),
        "{}",
        alone.stdout
    );
    assert_eq!(
        alone.stdout,
        local_among_all_contexts(&alone),
        "blueprint alone, and everything kept"
    );
}

#[test]
fn as_json_too_a_blueprint_read_alone_is_the_one_kept_whole() {
    let alone = merging_facets(2100)
        .compose()
        .args(["--format", "json"])
        .run();
    let out = alone.root.join("all");
    let among = bpc(
        &alone.root,
        &[
            "compose",
            "--all-contexts",
            "--format",
            "json",
            "--out",
            &out.to_string_lossy(),
        ],
    );
    assert!(among.success(), "{}", among.text());
    let kept = std::fs::read_to_string(out.join("local.json")).unwrap_or_default();
    assert!(
        alone.stdout.contains("\"name\": \"tf-2099\""),
        "{}",
        alone.stdout
    );
    assert_eq!(alone.stdout, kept);
}

/// `n` facets of one terraform component each, whose inputs are `value`.
fn facets_with_inputs(n: usize, value: &str) -> Test {
    (0..n).fold(Test::new(), |test, k| {
        test.facet(
            &format!("f{k:04}.yaml"),
            &format!("metadata:\n  name: f{k}\nterraform:\n  - path: mod/{k}\n    inputs:\n      v: {value}\n"),
        )
    })
}

/// What a plain compose and one with `--provenance` (which keeps everything) say of
/// the same project under `--max-output 1`: the same, and a failure.
fn over_one_mib(project: Test) -> String {
    let alone = project
        .compose()
        .args(["--max-output", "1"])
        .failure()
        .run();
    assert!(
        alone.stdout.is_empty(),
        "printed {} bytes",
        alone.stdout.len()
    );
    let kept = bpc(
        &alone.root,
        &["compose", "--max-output", "1", "--provenance"],
    );
    assert_eq!(kept.status, Some(1), "{}", kept.stderr);
    assert_eq!(alone.stderr, kept.stderr, "alone, and with everything kept");
    alone.stderr
}

#[test]
fn components_that_pass_the_budget_together_say_where_as_a_whole_blueprint_does() {
    // 1 100 components of a 1 000-character string each: none is large, together
    // they are over 1 MiB.
    let said = over_one_mib(facets_with_inputs(1100, &"x".repeat(1000)));
    assert!(
        said.starts_with(
            "error: the composed blueprint is larger than the output budget of 1 MiB; it was crossed at `terraform.mod/"
        ),
        "{said}"
    );
}

#[test]
fn components_whose_text_passes_the_budget_say_where_as_a_whole_blueprint_does() {
    // A map 200 deep is small as a value but written as YAML each level is indented
    // further: 30 of them are over 1 MiB of text.
    let deep = format!("{}1{}", "{a: ".repeat(200), "}".repeat(200));
    let said = over_one_mib(facets_with_inputs(30, &deep));
    assert!(
        said.starts_with(
            "error: the composed blueprint written as text is larger than the output budget of 1 MiB; it was crossed at `terraform"
        ),
        "{said}"
    );
}

#[test]
fn a_value_json_cannot_hold_is_named_where_a_whole_blueprint_names_it() {
    // The 2 100 components are written on two threads; the second thread's run holds
    // the value JSON has no number for (`tf-2050` is item 1 170: the blueprint lists
    // components by name).
    let project = (0..2100).fold(Test::new(), |test, k| {
        let v = if k == 2050 { ".nan" } else { "1.5" };
        test.facet(
            &format!("f{k:04}.yaml"),
            &format!("metadata:\n  name: f{k}\nterraform:\n  - name: tf-{k}\n    path: mod/{k}\n    inputs:\n      v: {v}\n"),
        )
    });
    let alone = project.compose().args(["--format", "json"]).failure().run();
    assert!(
        alone.stdout.is_empty(),
        "printed {} bytes",
        alone.stdout.len()
    );
    assert_eq!(
        alone.stderr,
        "error: at terraform[1170].inputs.v: .nan cannot be written as JSON\n\n"
    );
    // As YAML it is written.
    let yaml = bpc(&alone.root, &["compose"]);
    assert!(yaml.stdout.contains("    v: .nan\n"), "{}", yaml.text());
}
