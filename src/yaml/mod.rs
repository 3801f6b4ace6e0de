//! YAML in (with spans, anchors, aliases and merge keys) and out (deterministic).

pub mod error;
pub mod load;
mod map_builder;
pub mod node;
pub mod offset;
mod positions;
pub mod scalar;

#[cfg(test)]
mod load_tests;

pub use error::YamlError;
pub use load::{parse, parse_all, ALIAS_EXPANSION_LIMIT, MAX_DEPTH};
pub use node::{Key, Node, NodeKind, ScalarStyle};
pub use offset::content_offset;
