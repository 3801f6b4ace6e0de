//! Values: the data every stage reads and writes (YAML documents as read, expression
//! results, the composed blueprint). A leaf of the crate: it knows YAML nodes and
//! spans, nothing above them.
//!
//! [`Value`] is the runtime value of the expression engine.//!
//! Mirrors the Go types Windsor's expr-lang configuration produces: `Int` is Go `int`,
//! `Uint` is the `uint64` that YAML-parsed integers (and string bytes) become, `Float` is
//! `float64`. Lists and maps share their storage so cloning a value is cheap, which matters
//! because the same scope is read by thousands of expressions.

pub(crate) mod depth;
pub mod edit;
mod equal;
pub mod json;
mod node;
pub(crate) mod ordered_map;
pub(crate) mod text;

pub use equal::Equality;

use std::sync::Arc;

/// An ordered map: iteration follows insertion (source) order, so `keys()` and
/// `values()` are deterministic (docs/semantics.md S7). Small maps (most of a
/// template's) are searched by comparing keys; larger ones are indexed, hashed with
/// foldhash under [`KeyHasher`] (SipHash cost more than the rest of a typical
/// expression).
pub type Map = ordered_map::OrderedMap<Arc<str>, Value>;

/// The hasher of every indexed [`Map`] (one of more than eight entries): foldhash
/// keyed with its process-wide random seed, so collisions stay out of an attacker's
/// reach, and one key hashes the same in every map of the process. That lets a
/// compiled expression hash its constant member names once ([`key_hash`]) and look
/// them up with [`ordered_map::OrderedMap::get_hashed`] on every run.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher;

/// The per-hasher half of the seed; the random half is foldhash's global seed.
const KEY_SEED: u64 = 0x243f_6a88_85a3_08d3;

impl std::hash::BuildHasher for KeyHasher {
    type Hasher = foldhash::fast::FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        foldhash::fast::FoldHasher::with_seed(KEY_SEED, foldhash::SharedSeed::global_random())
    }
}

/// The hash a [`Map`] gives `key`, for [`ordered_map::OrderedMap::get_hashed`].
pub(crate) fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher;
    KeyHasher.hash_one(key)
}

/// Byte equality of two keys or strings, inline for the short ones templates use
/// (a call into `memcmp` costs more than comparing a few words).
#[inline]
pub(crate) fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two overlapping loads cover lengths from one word to two.
    fn word(s: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    }
    fn half(s: &[u8], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    }
    match n {
        0..=3 => a == b,
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
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

    #[test]
    fn str_eq_is_byte_equality() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
        ];
        let long = "abcdefghijklmnopqrstuvwxyz";
        for n in 0..=long.len() {
            for m in 0..=long.len() {
                let (a, b) = (&long[..n], &long[..m]);
                assert_eq!(str_eq(a, b), a == b);
                let c: String = b.chars().rev().collect();
                assert_eq!(str_eq(a, &c), a == c);
            }
        }
        for a in words {
            for b in words {
                assert_eq!(str_eq(a, b), a == b);
            }
        }
        assert!(!str_eq("abcdefgX", "abcdefgY"));
        assert!(!str_eq("Xbcdefghijk", "Ybcdefghijk"));
    }
}
