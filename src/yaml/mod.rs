//! YAML in: text to a tree of [`Node`]s with spans, anchors, aliases and merge keys.
//! Writing YAML is `emit`'s job.

pub(crate) mod error;
mod fast;
mod front;
mod intern;
pub(crate) mod load;
mod map_builder;
pub(crate) mod node;
pub(crate) mod offset;
mod positions;
pub(crate) mod scalar;
mod syntax_help;

#[cfg(test)]
mod load_tests;

pub use error::YamlError;
pub use front::{parse, parse_fast, parse_interned, parse_with_warnings};
pub use intern::Interner;
pub use load::{parse_all, parse_full, ALIAS_EXPANSION_LIMIT, MAX_DEPTH};
pub use node::{Key, Node, NodeKind, ScalarStyle};
pub use offset::content_offset;

#[cfg(test)]
mod fast_tests;
