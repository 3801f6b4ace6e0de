//! Values: the data every stage reads and writes (YAML documents as read, expression
//! results, the composed blueprint). A leaf of the crate: it knows YAML nodes and
//! spans, nothing above them.
//!
//! [`Value`] is the runtime value of the expression engine.//!
//! Mirrors the Go types Windsor's expr-lang configuration produces: `Int` is Go `int`,
//! `Uint` is the `uint64` that YAML-parsed integers (and string bytes) become, `Float` is
//! `float64`. Lists and maps share their storage so cloning a value is cheap, which matters
//! because the same scope is read by thousands of expressions.

mod equal;
pub mod json;
mod node;

pub use equal::Equality;

use indexmap::IndexMap;
use std::sync::Arc;

/// An ordered map: iteration follows insertion (source) order, so `keys()` and
/// `values()` are deterministic (docs/semantics.md S7). Hashed with foldhash
/// (hashbrown's own default): every member access hashes a key, and SipHash cost
/// more than the rest of a typical expression; its per-process random seed keeps
/// collisions out of an attacker's reach.
pub type Map = IndexMap<Arc<str>, Value, foldhash::fast::RandomState>;

/// Maps up to this size are searched by comparing keys instead of hashing: template
/// maps are small, and a few length-first string compares cost less than SipHash.
const SCAN_LEN: usize = 8;

/// `m[key]`, the way member access reads maps.
pub fn map_get<'m>(m: &'m Map, key: &str) -> Option<&'m Value> {
    if m.len() <= SCAN_LEN {
        m.iter().find(|(k, _)| ***k == *key).map(|(_, v)| v)
    } else {
        m.get(key)
    }
}

#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(Arc<str>),
    List(Arc<Vec<Value>>),
    Map(Arc<Map>),
}

impl Value {
    pub fn str(s: impl Into<Arc<str>>) -> Value {
        Value::Str(s.into())
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    pub fn map(map: Map) -> Value {
        Value::Map(Arc::new(map))
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// The name `type()` returns for this value, as Go expr-lang reports it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::List(_) => "array",
            Value::Map(_) => "map",
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_of(n: usize) -> Map {
        (0..n)
            .map(|i| (Arc::from(format!("k{i}")), Value::Int(i as i64)))
            .collect()
    }

    /// Small maps are scanned, larger ones hashed: both must find every key and
    /// nothing else.
    #[test]
    fn map_get_scans_and_hashes_alike() {
        for n in [0, 1, SCAN_LEN, SCAN_LEN + 1, 40] {
            let m = map_of(n);
            for i in 0..n {
                assert!(
                    matches!(map_get(&m, &format!("k{i}")), Some(Value::Int(x)) if *x == i as i64)
                );
            }
            assert!(map_get(&m, "k").is_none());
            assert!(map_get(&m, &format!("k{n}")).is_none());
        }
    }
}
