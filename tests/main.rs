//! The integration tests: one binary (linked once, not once per file) with a module
//! per feature, as ripgrep and just arrange theirs. Run one feature's tests with
//! `cargo test --test integration render::` (a module path filters by prefix).

#[macro_use]
mod common;

mod all_contexts;
mod blueprint_alone;
mod bodies_lent;
mod check;
mod color;
mod completions;
mod compose_errors;
mod compose_examples;
mod compose_sources;
mod config_expectations;
mod confinement;
mod context_names;
mod context_patches;
mod corpus;
mod corpus_compose;
mod diff;
mod empty_expectations;
mod eval;
mod explain;
mod expr_conformance;
mod expr_limits;
mod graph;
mod help;
mod inactive_at_load;
mod input_files;
mod jsonnet;
mod jsonnet_helpers;
mod lsp;
mod module_graph;
mod oci;
mod output_budget;
mod output_files;
mod overlay;
mod policy;
mod properties;
mod recompose;
mod render;
mod render_e2e;
mod render_fidelity;
mod repeated_expressions;
mod show_values;
mod strategies;
mod template_archives;
mod test_runner;
mod verify;
mod verify_conformance;
mod watch;
