//! A YAML document as a tree of nodes that remember where they came from.
//!
//! Anchors, aliases and `<<` merge keys are resolved by the loader, so consumers see
//! plain maps and lists; each node keeps the span of the text it was read from (for an
//! alias: the anchored node's span, where the value is actually written).

use crate::files::Span;
use std::sync::Arc;

/// How a scalar was written. Typing and the mapping of a byte offset inside the value
/// back to the source (for carets inside `${…}`) depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Null,
    Bool(bool),
    Int(i64),
    /// Non-negative integers above `i64::MAX`.
    Uint(u64),
    Float(f64),
    /// Shared with the values composed from it: reading a literal into a value or an
    /// origin copies a pointer, not the text.
    Str(Arc<str>),
    /// Boxed slices, not vectors: a loaded tree never grows, and without a capacity
    /// every node is 40 bytes instead of 48 (a 10 000-facet template holds over a
    /// million of them).
    Seq(Box<[Node]>),
    /// Keys in source order. Keys are strings (non-string scalar keys are kept in their
    /// textual form); duplicate keys are a load error.
    Map(Box<[(Key, Node)]>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// Interned per document: the same key text is one allocation.
    pub name: Arc<str>,
    pub span: Span,
}

// The tree of a large template is mostly these: keep them from growing unnoticed.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Node>() == 40 && std::mem::size_of::<Key>() == 32);

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Span,
    /// `Some` for scalars.
    pub style: Option<ScalarStyle>,
}

impl Node {
    /// A null node at `span`, standing in for a body taken away: a hollow facet's
    /// config block, a component body lent to collection.
    pub fn placeholder(span: Span) -> Node {
        Node {
            kind: NodeKind::Null,
            span,
            style: None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(entries) => entries
                .iter()
                .find(|(k, _)| &*k.name == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The text of a string node, to share rather than copy.
    pub fn as_shared_str(&self) -> Option<&Arc<str>> {
        match &self.kind {
            NodeKind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, NodeKind::Null)
    }

    /// A short name of the node's type for error messages ("a map", "a string", …).
    pub fn type_label(&self) -> &'static str {
        match self.kind {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "a boolean",
            NodeKind::Int(_) | NodeKind::Uint(_) => "an integer",
            NodeKind::Float(_) => "a number",
            NodeKind::Str(_) => "a string",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a map",
        }
    }
}
