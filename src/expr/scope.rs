//! The names an expression reads. Windsor runs expr-lang without a typed environment:
//! an unknown name is nil. Lookups go through this trait so an embedder can resolve
//! values lazily (config blocks are computed on first read, docs/semantics.md S6).

use super::error::ExprError;
use crate::value::{Map, Value};

pub trait Scope {
    /// Resolves a chain of constant member accesses starting at a root name
    /// (`talos.vars.x` arrives as `["talos", "vars", "x"]`). Returns the value at the
    /// prefix the scope chose to resolve and how many segments that prefix has (at
    /// least 1); the engine applies the remaining accesses itself. `None` means the
    /// root name is not defined (the engine reads it as nil).
    fn lookup(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError>;

    /// Every name as one map (`$env`, and `std.extVar("context")` in jsonnet).
    fn all(&self) -> Result<Value, ExprError>;

    /// A root name's value by reference, for scopes that already hold it. Lets the
    /// engine walk member chains and compare without cloning (no reference counting
    /// on the hot path). The default sends every name through [`Scope::lookup`].
    fn peek(&self, _root: &str) -> Peek<'_> {
        Peek::Lookup
    }

    /// [`Scope::peek`] with the root's hash under the maps' hasher
    /// ([`crate::value::key_hash`]), computed when the expression was compiled.
    fn peek_hashed(&self, root: &str, _hash: u64) -> Peek<'_> {
        self.peek(root)
    }
}

/// What [`Scope::peek`] knows about a root name.
pub enum Peek<'s> {
    Value(&'s Value),
    /// The name is not defined (reads as nil).
    Undefined,
    /// Ask [`Scope::lookup`].
    Lookup,
}

/// A plain map of values is a scope whose lookups resolve one segment at a time.
impl Scope for Map {
    fn lookup(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError> {
        Ok(path
            .first()
            .and_then(|root| self.get(root))
            .map(|v| (v.clone(), 1)))
    }

    fn all(&self) -> Result<Value, ExprError> {
        Ok(Value::map(self.clone()))
    }

    fn peek(&self, root: &str) -> Peek<'_> {
        match self.get(root) {
            Some(v) => Peek::Value(v),
            None => Peek::Undefined,
        }
    }

    fn peek_hashed(&self, root: &str, hash: u64) -> Peek<'_> {
        match self.get_hashed(root, hash) {
            Some(v) => Peek::Value(v),
            None => Peek::Undefined,
        }
    }
}
