//! Pathological inputs must end in ordinary errors: no stack overflow, hang or
//! unbounded allocation.

use crate::common::{bpc, indoc, small};
use bpc::expr::host::NullHost;
use bpc::expr::{Engine, EngineConfig, ErrorKind, Map, Value};

fn eval(src: &str) -> Result<Value, bpc::expr::ExprError> {
    let engine = Engine::new(EngineConfig::default());
    let mut scope = Map::default();
    scope.insert(
        "list".into(),
        Value::list((1..=5).map(Value::Int).collect()),
    );
    engine.eval(src, &scope, &NullHost::default())
}

fn kind_of(src: &str) -> Option<ErrorKind> {
    eval(src).err().map(|e| e.kind)
}

#[test]
fn deep_nesting_is_a_compile_error() {
    let n = 100_000;
    let inputs = [
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("1{}", "+1".repeat(n)),
        format!("{}1", "-".repeat(n)),
        format!("{}1", "!".repeat(n)),
        "[".repeat(n),
        format!("{}{}", "[".repeat(n), "]".repeat(n)),
        "{a:".repeat(n),
        format!("a{}", ".b".repeat(n)),
        format!("a{}", "[0]".repeat(n)),
        format!("{}1", "let x = 1; ".repeat(n)),
        format!("{}1", "t ? 1 : ".repeat(n)),
        format!("1{}", " ?? 1".repeat(n)),
        format!("1{}", " < 2".repeat(n)),
        format!("{}1{}", "map(list, ".repeat(n), ")".repeat(n)),
        format!("{}1{}", "len(".repeat(n), ")".repeat(n)),
        format!("list{}", " | map(#)".repeat(n)),
    ];
    for src in &inputs {
        assert_eq!(kind_of(src), Some(ErrorKind::Compile), "{}", &src[..40]);
    }
}

#[test]
fn nesting_within_the_limit_still_works() {
    let depth = 40;
    let src = format!("{}1{}", "(".repeat(depth), " + 1)".repeat(depth));
    assert!(matches!(eval(&src), Ok(Value::Int(41))));
    let src = format!("{}#{}", "map([1], ".repeat(depth), ")".repeat(depth));
    assert!(eval(&src).is_ok());
}

#[test]
fn huge_ranges_and_strings_are_run_errors() {
    for src in [
        "len(1..1000000000000)",
        "len(-9223372036854775807..9223372036854775807)",
        "repeat('x', 1000000000000)",
        "repeat('xy', 9223372036854775807)",
        "reduce(1..200, #acc + #acc, 'x')",
        "map(1..999, map(1..999, map(1..999, #)))",
        "reduce(1..999, reduce(1..999, reduce(1..999, #acc, 0), 0), 0)",
        "count(1..999, any(1..999, any(1..999, # < 0)))",
        "replace(repeat('x', 10000), '', repeat('y', 10000))",
        "join(map(1..999, repeat('x', 100000)), repeat('y', 100000))",
    ] {
        assert_eq!(kind_of(src), Some(ErrorKind::Run), "{src}");
    }
}

#[test]
fn long_flat_inputs_compile() {
    let items: Vec<String> = (0..5000).map(|i| i.to_string()).collect();
    let src = format!("len([{}])", items.join(", "));
    assert!(matches!(eval(&src), Ok(Value::Int(5000))));
}

/// Expressions that each stay within their own step budget still share one budget per
/// composition: the one whose steps cross it is named, with the flag that raises it.
#[test]
fn a_composition_shares_one_step_budget_across_its_expressions() {
    let mut inputs = String::new();
    for i in 0..6 {
        inputs.push_str(&format!(
            "      sum{i}: \"${{reduce(1..100000, #acc + #, {i})}}\"\n"
        ));
    }
    let heavy = || {
        crate::common::Test::new()
            .file("windsor.yaml", "version: v1alpha1\n")
            .file(
                "_template/facets/heavy.yaml",
                format!(
                    "{}metadata:\n  name: heavy\nterraform:\n  - path: net\n    inputs:\n{inputs}",
                    crate::common::FACET_HEAD
                ),
            )
    };
    let message = "the composition's expressions took more than 250000 evaluation steps in all; raise the budget with --max-steps N";
    heavy()
        .args(["compose", "--max-steps", "250000"])
        .fails(format!(
            "error: expression failed: {message}
  --> _template/facets/heavy.yaml:10:34
   |
10 |       sum2: \"${{reduce(1..100000, #acc + #, 2)}}\"
   |                                  ^^^^^^^^ {message}
   |
   = note: in `inputs` of terraform component `net` of facet `heavy`

"
        ))
        .run();
    let composed = heavy().args(["compose", "--max-steps", "600000"]).run();
    assert!(
        composed.stdout.contains("sum5: 5000050005"),
        "{}",
        composed.stdout
    );
}

#[test]
fn quadratic_concatenation_meets_the_step_limit() {
    let dir = small();
    for (expr, message) in [
        (
            "reduce(1..157868, #acc + 'xxxxxxxxxxxxxxxx', '')",
            indoc! {"
            error: expression failed: evaluation step limit exceeded
             --> <expression>:1:19
              |
            1 | reduce(1..157868, #acc + 'xxxxxxxxxxxxxxxx', '')
              |                   ^^^^^^^^^^^^^^^^^^^^^^^^^ evaluation step limit exceeded

        "},
        ),
        (
            "reduce(1..900000, #acc + 'x', '')",
            indoc! {"
            error: expression failed: evaluation step limit exceeded
             --> <expression>:1:19
              |
            1 | reduce(1..900000, #acc + 'x', '')
              |                   ^^^^^^^^^^ evaluation step limit exceeded

        "},
        ),
    ] {
        let run = bpc(dir.path(), &["eval", expr]);
        assert_eq!(run.status, Some(1), "{expr}: {}", run.stdout.len());
        assert_eq!(run.stderr, message, "{expr}");
    }
    // Ordinary use is far below the limit.
    let run = bpc(
        dir.path(),
        &["eval", "len(reduce(1..1000, #acc + 'x', ''))"],
    );
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(run.stdout, "1000\n");
}
