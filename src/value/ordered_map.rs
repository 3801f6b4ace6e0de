//! An insertion-ordered map keyed by strings that builds a hash index only once it
//! is large.
//!
//! Values and composed components are made of many small maps (a component's
//! fields, its inputs, a nested input, a setting of a values file): at 10 000 facets
//! over a hundred thousand of them, most with two to six entries. An `IndexMap` gives each a hash table besides its entries
//! and stores a hash in every entry; for a map this small, comparing the keys costs
//! less than hashing one. This map keeps the entries in a vector, searches up to
//! [`SCAN_LEN`] of them by comparing keys, and indexes larger ones with a hash table
//! of positions, hashed as [`super::Map`] is (seeded foldhash, out of an attacker's
//! reach).
//!
//! Its behaviour is `IndexMap`'s wherever both have the operation: inserting a key
//! already present replaces the value in place; removing shifts the later entries
//! up; equality ignores order.

use super::{key_hash, str_eq};
use hashbrown::HashTable;
use std::borrow::Borrow;
use std::fmt;

/// Maps up to this size are searched by comparing keys; larger ones are indexed.
pub(crate) const SCAN_LEN: usize = 8;

#[derive(Clone)]
pub struct OrderedMap<K, V> {
    entries: Vec<(K, V)>,
    /// Positions into `entries`, hashed by key; only while there are more than
    /// [`SCAN_LEN`] entries. Boxed: a map without one stays 32 bytes.
    index: Option<Box<HashTable<u32>>>,
}

// The maps are held by the hundred thousand: keep them from growing unnoticed.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<OrderedMap<std::sync::Arc<str>, u64>>() == 32);

impl<K, V> Default for OrderedMap<K, V> {
    fn default() -> Self {
        OrderedMap {
            entries: Vec::new(),
            index: None,
        }
    }
}

type Pair<'a, K, V> = (&'a K, &'a V);

/// Iterator over `(&key, &value)` in order.
pub type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> Pair<'a, K, V>>;

/// Iterator over `(&key, &mut value)` in order.
pub type IterMut<'a, K, V> =
    std::iter::Map<std::slice::IterMut<'a, (K, V)>, fn(&'a mut (K, V)) -> (&'a K, &'a mut V)>;

impl<K: Borrow<str>, V> OrderedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(capacity: usize) -> Self {
        let mut map = OrderedMap {
            entries: Vec::with_capacity(capacity),
            index: None,
        };
        if capacity > SCAN_LEN {
            map.index = Some(Box::new(HashTable::with_capacity(capacity)));
        }
        map
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where `key` is among the entries.
    pub fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            None => self.scan(key),
            Some(index) => self.find(index, key, key_hash(key)),
        }
    }

    /// [`OrderedMap::get`] with the key's hash computed beforehand by [`key_hash`]
    /// (used only if the map is large enough to be indexed).
    pub fn get_hashed(&self, key: &str, hash: u64) -> Option<&V> {
        let at = match &self.index {
            None => self.scan(key),
            Some(index) => self.find(index, key, hash),
        };
        at.map(|at| &self.entries[at].1)
    }

    fn scan(&self, key: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|(k, _)| str_eq(k.borrow(), key))
    }

    fn find(&self, index: &HashTable<u32>, key: &str, hash: u64) -> Option<usize> {
        index
            .find(hash, |&at| {
                str_eq(self.entries[at as usize].0.borrow(), key)
            })
            .map(|&at| at as usize)
    }

    /// The entry of `key`, to read or fill in place.
    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        let at = self.position(key.borrow());
        Entry { map: self, key, at }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).map(|at| &self.entries[at].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.position(key).map(|at| &mut self.entries[at].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    pub fn get_index(&self, at: usize) -> Option<(&K, &V)> {
        self.entries.get(at).map(|(k, v)| (k, v))
    }

    /// Sets `key` to `value`: in place if it is present (returning the old value),
    /// else at the end.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(at) = self.position(key.borrow()) {
            return Some(std::mem::replace(&mut self.entries[at].1, value));
        }
        self.push_new(key, value);
        None
    }

    /// Appends an entry whose key is not present.
    fn push_new(&mut self, key: K, value: V) {
        let at = self.entries.len();
        match &mut self.index {
            Some(index) => {
                let entries = &self.entries;
                index.insert_unique(key_hash(key.borrow()), at as u32, |&i| {
                    key_hash(entries[i as usize].0.borrow())
                });
            }
            None if at == SCAN_LEN => {
                self.entries.push((key, value));
                self.reindex();
                return;
            }
            None => {}
        }
        self.entries.push((key, value));
    }

    /// Builds the index again from the entries (or drops it, if they are few).
    fn reindex(&mut self) {
        if self.entries.len() <= SCAN_LEN {
            self.index = None;
            return;
        }
        let mut index = HashTable::with_capacity(self.entries.len());
        for (at, (k, _)) in self.entries.iter().enumerate() {
            let entries = &self.entries;
            index.insert_unique(key_hash(k.borrow()), at as u32, |&i| {
                key_hash(entries[i as usize].0.borrow())
            });
        }
        self.index = Some(Box::new(index));
    }

    /// Removes `key`, keeping the order of the rest (the later entries move up).
    pub fn shift_remove(&mut self, key: &str) -> Option<V> {
        let at = self.position(key)?;
        let (_, value) = self.entries.remove(at);
        if self.index.is_some() {
            self.reindex();
        }
        Some(value)
    }

    /// Keeps the entries `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        let before = self.entries.len();
        self.entries.retain_mut(|(k, v)| keep(k, v));
        if self.entries.len() != before && self.index.is_some() {
            self.reindex();
        }
    }

    /// Sorts the entries with `less` comparing two `(key, value)` pairs.
    pub fn sort_by(&mut self, mut compare: impl FnMut(&K, &V, &K, &V) -> std::cmp::Ordering) {
        self.entries
            .sort_by(|(k1, v1), (k2, v2)| compare(k1, v1, k2, v2));
        if self.index.is_some() {
            self.reindex();
        }
    }

    /// Sorts the entries by a key computed once per entry.
    pub fn sort_by_cached_key<T: Ord>(&mut self, mut key: impl FnMut(&K, &V) -> T) {
        self.entries.sort_by_cached_key(|(k, v)| key(k, v));
        if self.index.is_some() {
            self.reindex();
        }
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }
}

/// The place of one key in an [`OrderedMap`], present or not.
pub struct Entry<'a, K, V> {
    map: &'a mut OrderedMap<K, V>,
    key: K,
    at: Option<usize>,
}

impl<'a, K: Borrow<str>, V> Entry<'a, K, V> {
    /// The value, `value` inserted at the end first if the key is not present.
    pub fn or_insert(self, value: V) -> &'a mut V {
        self.or_insert_with(|| value)
    }

    /// The value, made by `make` and inserted at the end if the key is not present.
    pub fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        let at = match self.at {
            Some(at) => at,
            None => {
                self.map.push_new(self.key, make());
                self.map.entries.len() - 1
            }
        };
        &mut self.map.entries[at].1
    }
}

impl<K: Borrow<str> + Ord, V> OrderedMap<K, V> {
    /// Sorts the entries by key.
    pub fn sort_keys(&mut self) {
        self.sort_by(|a, _, b, _| a.cmp(b));
    }
}

impl<K: Borrow<str>, V> std::ops::Index<&str> for OrderedMap<K, V> {
    type Output = V;

    fn index(&self, key: &str) -> &V {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no entry `{key}` in the map"),
        }
    }
}

impl<K: Borrow<str>, V> FromIterator<(K, V)> for OrderedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        let items = items.into_iter();
        let mut map = OrderedMap::with_capacity(items.size_hint().0);
        map.extend(items);
        map
    }
}

impl<K: Borrow<str>, V> Extend<(K, V)> for OrderedMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

impl<K, V> IntoIterator for OrderedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K: Borrow<str>, V> IntoIterator for &'a OrderedMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, K: Borrow<str>, V> IntoIterator for &'a mut OrderedMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Equal when both have the same keys with equal values, in any order (as
/// `IndexMap`'s equality).
impl<K: Borrow<str>, V: PartialEq> PartialEq for OrderedMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k.borrow()) == Some(v))
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for OrderedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;
    use proptest::prelude::*;

    /// What can be done to a map, with keys drawn from a few so that they repeat.
    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        KeepEven,
        SortByKey,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..24, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            2 => (0u8..24).prop_map(Op::Remove),
            1 => Just(Op::KeepEven),
            1 => Just(Op::SortByKey),
        ]
    }

    proptest! {
        /// Whatever is done to it, the map holds what an `IndexMap` given the same
        /// operations holds, in the same order, small or large.
        #[test]
        fn behaves_as_an_index_map(ops in proptest::collection::vec(op(), 0..80)) {
            let mut ours: OrderedMap<String, u32> = OrderedMap::new();
            let mut theirs: IndexMap<String, u32> = IndexMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let key = format!("key{k}");
                        prop_assert_eq!(ours.insert(key.clone(), v), theirs.insert(key, v));
                    }
                    Op::Remove(k) => {
                        let key = format!("key{k}");
                        prop_assert_eq!(ours.shift_remove(&key), theirs.shift_remove(&key));
                    }
                    Op::KeepEven => {
                        ours.retain(|_, v| *v % 2 == 0);
                        theirs.retain(|_, v| *v % 2 == 0);
                    }
                    Op::SortByKey => {
                        ours.sort_by(|a, _, b, _| a.cmp(b));
                        theirs.sort_by(|a, _, b, _| a.cmp(b));
                    }
                }
                let ours_now: Vec<_> = ours.iter().map(|(k, v)| (k.clone(), *v)).collect();
                let theirs_now: Vec<_> = theirs.iter().map(|(k, v)| (k.clone(), *v)).collect();
                prop_assert_eq!(&ours_now, &theirs_now);
                for k in 0..24 {
                    let key = format!("key{k}");
                    prop_assert_eq!(ours.get(&key), theirs.get(&key));
                    prop_assert_eq!(ours.position(&key), theirs.get_index_of(&key));
                }
            }
        }
    }

    /// Small maps are scanned, larger ones hashed: both must find every key and
    /// nothing else, with the key's hash computed here or beforehand.
    #[test]
    fn every_key_found_small_or_large() {
        for n in [0, 1, SCAN_LEN, SCAN_LEN + 1, 40] {
            let map: OrderedMap<String, usize> = (0..n).map(|i| (format!("k{i}"), i)).collect();
            for i in 0..n {
                let k = format!("k{i}");
                assert_eq!(map.get(&k), Some(&i));
                assert_eq!(map.get_hashed(&k, key_hash(&k)), Some(&i));
            }
            assert_eq!(map.get("k"), None);
            assert_eq!(map.get_hashed("k", key_hash("k")), None);
            assert_eq!(map.get(&format!("k{n}")), None);
        }
    }

    #[test]
    fn equality_ignores_order() {
        let a: OrderedMap<&str, i32> = [("x", 1), ("y", 2)].into_iter().collect();
        let b: OrderedMap<&str, i32> = [("y", 2), ("x", 1)].into_iter().collect();
        let c: OrderedMap<&str, i32> = [("y", 2), ("x", 3)].into_iter().collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn an_index_only_once_large() {
        let mut map: OrderedMap<String, usize> = OrderedMap::new();
        for i in 0..=SCAN_LEN {
            assert!(map.index.is_none(), "{i} entries");
            map.insert(format!("k{i}"), i);
        }
        assert!(map.index.is_some());
        map.shift_remove("k0");
        assert!(map.index.is_none(), "back to {SCAN_LEN} entries");
        assert_eq!(map.get("k8"), Some(&8));
    }
}
