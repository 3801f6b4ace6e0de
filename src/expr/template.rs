//! `${…}` interpolation inside strings (conformance/expr README, "tmpl mode";
//! design/semantics.md S7).
