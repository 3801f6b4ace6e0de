//! `${…}` interpolation inside strings (conformance/expr README, "tmpl mode";
//! design/semantics.md S7).
pub fn contains_expression(t: &str) -> bool {
    t.contains("${")
}
