//! bpc — a blueprint composer for Windsor facet templates.
//!
//! The pipeline: load → scope → activate → config → collect → merge → validate → emit.
//! [`template`] loads, [`compose`] runs the middle stages, [`emit`] writes the result;
//! [`expr`] is the expression engine, self-contained.

pub mod all_contexts;
pub mod alloc;
pub mod cli;
pub mod compose;
pub mod emit;
pub mod explain;
pub mod expr;
pub mod parallel;
pub mod project;
pub mod render;
pub mod session;
pub mod source;
pub mod template;
pub mod testing;
pub mod watch;
pub mod yaml;
