//! Strings shared between the trees of one parse worker. Mapping keys and short values
//! repeat within a file and across the files of a template (`name`, `inputs`,
//! `${region ?? 'us-east-1'}`), so each distinct text is one allocation for as long as
//! the interner lives: a facet file, or every file one thread of the template loader
//! reads.
//!
//! Each set is bounded. A full set starts over, so a text of many distinct strings
//! costs no more than copying them, and strings that stop repeating give way to the
//! ones that do.

use rustc_hash::FxHashSet;
use std::sync::Arc;

/// Distinct strings each set holds before it starts over.
const LIMIT: usize = 4096;

/// String values up to this many bytes are interned: enum-like values (`aws`, list
/// tags) and `${…}` expressions (up to 64 bytes, most of them) repeat; longer texts
/// (descriptions, scripts) seldom do.
pub const SHORT_STRING: usize = 64;

pub struct Interner {
    keys: FxHashSet<Arc<str>>,
    values: FxHashSet<Arc<str>>,
}

/// Room each set starts with: a facet file's keys and short values, about, so that
/// parsing one file does not grow the sets again and again.
const START: usize = 64;

impl Default for Interner {
    fn default() -> Interner {
        Interner {
            keys: FxHashSet::with_capacity_and_hasher(START, Default::default()),
            values: FxHashSet::with_capacity_and_hasher(START, Default::default()),
        }
    }
}

impl Interner {
    /// The shared text of mapping key `name`.
    pub fn key(&mut self, name: &str) -> Arc<str> {
        shared(&mut self.keys, name, || Arc::from(name))
    }

    /// The text of string value `text`, shared when it is short.
    pub fn value(&mut self, text: &str) -> Arc<str> {
        if text.len() > SHORT_STRING {
            return Arc::from(text);
        }
        shared(&mut self.values, text, || Arc::from(text))
    }

    /// [`Interner::value`] for a text already allocated: kept if it is the first of
    /// its kind (or long), dropped for the shared one otherwise.
    pub fn value_of(&mut self, text: Arc<str>) -> Arc<str> {
        if text.len() > SHORT_STRING {
            return text;
        }
        let key = Arc::clone(&text);
        shared(&mut self.values, &key, move || text)
    }
}

fn shared(set: &mut FxHashSet<Arc<str>>, text: &str, new: impl FnOnce() -> Arc<str>) -> Arc<str> {
    if let Some(known) = set.get(text) {
        return Arc::clone(known);
    }
    let fresh = new();
    if set.len() >= LIMIT {
        set.clear();
    }
    set.insert(Arc::clone(&fresh));
    fresh
}

#[cfg(test)]
mod tests {
    use super::{Interner, LIMIT, SHORT_STRING};
    use std::sync::Arc;

    #[test]
    fn a_repeated_key_or_short_value_is_one_allocation() {
        let mut interner = Interner::default();
        let first = interner.key("inputs");
        assert!(Arc::ptr_eq(&first, &interner.key("inputs")));
        let value = interner.value("${region}");
        assert!(Arc::ptr_eq(&value, &interner.value("${region}")));
        let owned = interner.value_of(Arc::from("${region}"));
        assert!(Arc::ptr_eq(&value, &owned));
        // Keys and values are kept apart: a key never stands for a value.
        assert!(!Arc::ptr_eq(&interner.key("${region}"), &value));
    }

    #[test]
    fn long_values_are_not_kept() {
        let mut interner = Interner::default();
        let long = "x".repeat(SHORT_STRING + 1);
        let a = interner.value(&long);
        let b = interner.value(&long);
        assert_eq!(a, b);
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(interner.values.is_empty());
    }

    #[test]
    fn a_full_set_starts_over_and_goes_on_sharing() {
        let mut interner = Interner::default();
        for i in 0..LIMIT {
            interner.key(&format!("k{i}"));
        }
        assert_eq!(interner.keys.len(), LIMIT);
        let after = interner.key("after");
        assert_eq!(interner.keys.len(), 1);
        assert!(Arc::ptr_eq(&after, &interner.key("after")));
        assert_eq!(&*interner.key("k0"), "k0");
    }
}
