//! bpc — a blueprint composer for Windsor facet templates.
//!
//! The pipeline: load → scope → activate → config → collect → merge → validate → emit.

pub mod emit;
pub mod expr;
pub mod source;
pub mod yaml;
