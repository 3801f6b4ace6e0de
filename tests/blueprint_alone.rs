//! A plain `bpc compose` of one context reads only the blueprint, so its composition
//! lets go of the origins and the merged components while it assembles the blueprint
//! (issue 25, `compose::Inputs::blueprint_alone`), and a large one hands the memory its
//! stages free back to the system as it goes (`heap::give_back`). None of it may show:
//! the blueprint is the one `--all-contexts` writes, which keeps everything.

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
