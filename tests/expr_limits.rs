//! Pathological inputs must end in ordinary errors: no stack overflow, hang or
//! unbounded allocation.

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
