//! The output budget (`--max-output`): a value that repeats other values until the
//! blueprint passes the budget is stopped where it crosses it, named by its path and
//! the line that wrote it. The budget counts the text written, in YAML or JSON, by
//! `bpc compose` and `bpc eval`.

use crate::common::*;

const FACET: &str = FACET_HEAD;

/// Block `b{i}` lists `b{i-1}` ten times: 10^levels leaves from a few hundred bytes.
fn amplifier(levels: usize) -> tempfile::TempDir {
    let mut facet = format!(
        "{FACET}metadata:\n  name: amp\nconfig:\n  - name: b0\n    value: [{}]\n",
        "x".repeat(64)
    );
    for i in 1..=levels {
        let refs = vec![format!("'${{b{}}}'", i - 1); 10].join(", ");
        facet.push_str(&format!("  - name: b{i}\n    value: [{refs}]\n"));
    }
    facet.push_str(&format!(
        "terraform:\n  - path: net\n    inputs:\n      x: ${{b{levels}}}\n"
    ));
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/amp.yaml", &facet),
    ])
}

#[test]
fn output_budget_names_the_value_and_can_be_raised() {
    // 10^5 leaves of 66 bytes: about 6.6 MB, over a 1 MiB budget.
    let dir = amplifier(5);
    let e = compose_err(dir.path(), &["--max-output", "1"]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 1 MiB (crossed at `(value)[1][4][9][0][8][0]`)
          --> _template/facets/amp.yaml:21:10
           |
        21 |       x: ${b5}
           |          ^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `amp`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
    let out = compose_ok(dir.path(), &["--max-output", "16"]);
    assert!(out.len() > 6_000_000);
}

#[test]
fn seven_levels_fail_fast_under_the_default_budget() {
    // 10^7 leaves (about 220 MB of output) must stop at the default budget.
    let dir = amplifier(7);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 64 MiB (crossed at `(value)[0][9][5][4][1][5][4][0]`)
          --> _template/facets/amp.yaml:25:10
           |
        25 |       x: ${b7}
           |          ^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `amp`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
}

#[test]
fn output_budget_bounds_the_sum_of_many_references() {
    // One 40 KB values file read by 40 inputs: each fits, together they do not.
    let big: String = (0..1000)
        .map(|i| format!("k{i}: {}\n", "v".repeat(30)))
        .collect();
    let inputs: String = (0..40).map(|i| format!("      i{i}: ${{big}}\n")).collect();
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "contexts/local/values.yaml",
            &format!(
                "big:\n{}",
                big.lines().map(|l| format!("  {l}\n")).collect::<String>()
            ),
        ),
        (
            "_template/facets/a.yaml",
            &format!(
                "{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n{inputs}"
            ),
        ),
    ]);
    let e = compose_err(dir.path(), &["--max-output", "1"]);
    assert_eq!(
        e,
        indoc! {"
        error: this value takes the blueprint past the output budget of 1 MiB (crossed at `(value).k287`)
          --> _template/facets/a.yaml:34:12
           |
        34 |       i26: ${big}
           |            ^^^^^^ expands past the output budget
           |
           = note: in `inputs` of terraform component `net` of facet `a`
           = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

    "}
    );
    compose_ok(dir.path(), &["--max-output", "4"]);
}

/// What `--max-output 1` says of the deep value below, in either format.
const MAX_OUTPUT_CROSSED: &str = indoc! {"
    error: the composed blueprint written as text is larger than the output budget of 1 MiB; it was crossed at `terraform.net.inputs.a[12][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]`
    = note: nothing was written; the size counts the indentation of every nested level
    = help: values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB

"};

#[test]
fn json_output_is_bounded_by_max_output() {
    // Deep nesting costs little as compact JSON but a lot as indented text.
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!(
                "{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      a: ${{map(1..400, reduce(1..200, [#acc], 1))}}\n"
            ),
        ),
    ]);
    let run = bpc(
        dir.path(),
        &["compose", "--format", "json", "--max-output", "1"],
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "printed {} bytes", run.stdout.len());
    assert_eq!(run.stderr, MAX_OUTPUT_CROSSED);
    // The same value as YAML puts nested lists on one line (`- - - 1`): the budget
    // counts the text written, so it fits.
    let run = bpc(
        dir.path(),
        &["compose", "--format", "yaml", "--max-output", "1"],
    );
    assert!(run.success(), "{}", run.stderr);
    let written = run.stdout.len();
    assert!((100_000..1024 * 1024).contains(&written), "{written} bytes");
    let run = bpc(
        dir.path(),
        &["compose", "--format", "json", "--max-output", "64"],
    );
    assert!(run.success(), "{}", run.stderr);
    // `bpc eval` of the same value counts its text the same way.
    let deep = "map(1..400, reduce(1..200, [#acc], 1))";
    let run = bpc(
        dir.path(),
        &["eval", "--format", "json", "--max-output", "1", deep],
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "printed {} bytes", run.stdout.len());
    assert!(
        run.stderr.starts_with(
            "error: the value written as text is larger than the output budget of 1 MiB; it was crossed at `[12][0][0]"
        ),
        "{}",
        run.stderr
    );
    let run = bpc(dir.path(), &["eval", "--max-output", "1", deep]);
    assert!(run.success(), "{}", run.stderr);
    let written = run.stdout.len();
    assert!((100_000..1024 * 1024).contains(&written), "{written} bytes");
}
