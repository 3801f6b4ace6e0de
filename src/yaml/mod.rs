//! YAML in (with spans, anchors, aliases and merge keys) and out (deterministic).

pub mod node;

pub use node::{Key, Node, NodeKind, ScalarStyle};
