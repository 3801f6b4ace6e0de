//! bpc — a blueprint composer for Windsor facet templates.
//!
//! The pipeline: load → scope → activate → config → collect → merge → validate →
//! emit/render. [`template`] loads, [`compose`] runs the middle stages, [`emit`] and
//! [`render`] write the result; [`expr`] is the expression engine, self-contained.
//! CONTRIBUTING.md walks the stages file by file.
//!
//! # The public API
//!
//! Start from a [`session::Session`]: `Session::open(Options, sources)` finds the
//! project, loads its template, compiles its schema and makes an expression engine,
//! once; then
//!
//! * `session.compose()` gives a [`compose::face::Composition`]: the blueprint
//!   (`composition.blueprint`, a [`value::Value`]), its components and the origin of
//!   every value; `session.compose_context(name)` composes any other context of the
//!   project from the same loaded template (from many threads at once, if you like),
//!   and `session.contexts()` lists them;
//! * `session.render(format)` gives the Terraform and Flux files ([`render::Rendered`]);
//! * `session.suite(options, select)` loads the template's test cases
//!   ([`testing::case`]) and runs them ([`testing::runner`]);
//! * `session.eval(text, Syntax::Expression)` evaluates one expression (or, with
//!   [`session::Syntax::Text`], `${…}` text) in the context's composed scope, as a
//!   facet expression would see it.
//!
//! Around it: [`emit::to_yaml`] / [`emit::to_json`] print a value,
//! [`explain::Explainer`] says where a value came from, [`files::Diagnostic`]s render
//! with [`files::render`] against the session's [`files::FileMap`], and
//! [`expr::Engine`] evaluates an expression on its own (files, the environment and
//! Terraform outputs come from an [`expr::host::Host`] of your own). [`run`] is the `bpc` binary's command line, a thin
//! shell over all this; [`lsp::serve_stdio`] is `bpc lsp`, the language server.
//!
//! Everything else is `pub(crate)`: the modules the pipeline uses between its stages,
//! and those behind one command only (`bpc graph`, `--watch`, `bpc verify`, `bpc
//! diff`, `--policy`), which the command line reaches.

pub(crate) mod all_contexts;
pub mod alloc;
pub mod check;
mod cli;
pub(crate) mod compare;
pub mod compose;
pub(crate) mod diff;
pub mod emit;
pub mod explain;
pub mod expr;
pub mod files;
pub(crate) mod graph;
mod heap;
pub mod lsp;
pub mod oci;
pub(crate) mod parallel;
pub(crate) mod policy;
pub(crate) mod project;
pub mod render;
pub mod session;
pub mod template;
pub mod testing;
pub mod value;
pub(crate) mod verify;
pub(crate) mod watch;
pub mod yaml;

pub use cli::run;
