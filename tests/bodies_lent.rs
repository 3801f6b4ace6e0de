//! A `bpc compose` or `bpc render` of one context lends the template's component
//! bodies to its composition, which lets go of each facet's bodies once the facet is
//! collected (`template::bodies`). None of it may show: each test composes a
//! template of enough active facets for collection to run on several threads, once
//! for one context (bodies lent) and once in a way that keeps them, and expects the
//! same blueprint or the same error.

use crate::common::*;

/// `n` active facets, each with a terraform component whose inputs hold an
/// expression, a nested map and a list: enough facets, past 512, for collection to
/// take them from both ends on two threads.
fn active_facets(n: usize) -> Test {
    let mut test = Test::new().values("local", "provider: aws\n");
    for k in 0..n {
        test = test.facet(
            &format!("f{k:04}.yaml"),
            &format!(
                "metadata:\n  name: f{k}\nterraform:\n  - name: tf-{k}\n    path: mod/{k}\n    inputs:\n      label: \"${{provider}}-{k}\"\n      nested:\n        size: {k}\n        zones: [a, \"${{provider}}\"]\n"
            ),
        );
    }
    test
}

#[test]
fn a_large_template_composes_as_it_does_with_its_bodies_kept() {
    let alone = active_facets(600).compose().run();
    assert!(
        alone.stdout.contains(
            "- name: tf-599\n  path: mod/599\n  inputs:\n    label: aws-599\n    nested:\n      size: 599\n      zones:\n      - a\n      - aws\n"
        ),
        "{}",
        alone.stdout
    );
    assert_eq!(
        alone.stdout,
        local_among_all_contexts(&alone),
        "bodies lent, and kept among contexts"
    );
}

/// An error in the last facet (facets are in the order of their names) is found by the
/// thread collecting from the back; the
/// facets that thread collected are then collected again in order on one thread, so
/// their bodies, already let go of, are read again from their files.
#[test]
fn an_error_late_in_a_large_template_is_reported_as_with_its_bodies_kept() {
    let test = active_facets(600).facet(
        "zz-broken.yaml",
        "metadata:\n  name: zz-broken\nterraform:\n  - name: broken\n    path: broken\n    inputs:\n      size: \"${nope(1)}\"\n",
    );
    let lent = test.compose().failure().run();
    assert!(
        lent.stderr.contains("_template/facets/zz-broken.yaml:9:16"),
        "{}",
        lent.stderr
    );
    // `--provenance` composes with every body kept in its facet.
    let kept = bpc(&lent.root, &["compose", "--provenance"]);
    assert!(!kept.success(), "{}", kept.text());
    assert_eq!(lent.stderr, kept.stderr);
}
