//! Composed values that keep their provenance: a tree like [`Value`] where every node
//! carries the [`OriginId`] of the contribution that put it there.

use crate::compose::model::origin::OriginId;
use crate::expr::{Map, Value};
use crate::value::ordered_map::OrderedMap;
use crate::value::Equality;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Tracked {
    Leaf(Value, OriginId),
    List(Vec<Tracked>, OriginId),
    /// Shared, copied on write: maps are few and leaves many, so a pointer keeps
    /// every node small (an inline `IndexMap` is 80 bytes instead of 32); and the
    /// merge keeps each contribution's fields beside the component made of them, so
    /// a map taken over whole is one more reference, not a copy of its tree.
    Map(Arc<TrackedMap>, OriginId),
}

/// The entries of a [`Tracked::Map`]: mostly a few, searched without hashing.
pub type TrackedMap = OrderedMap<Arc<str>, Tracked>;

impl Tracked {
    /// Wraps a plain value; every node gets the same origin.
    pub fn from_value(value: &Value, origin: OriginId) -> Tracked {
        match value {
            Value::List(items) => Tracked::List(
                items
                    .iter()
                    .map(|v| Tracked::from_value(v, origin))
                    .collect(),
                origin,
            ),
            Value::Map(map) => Tracked::Map(
                Arc::new(
                    map.iter()
                        .map(|(k, v)| (k.clone(), Tracked::from_value(v, origin)))
                        .collect(),
                ),
                origin,
            ),
            other => Tracked::Leaf(other.clone(), origin),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Tracked::Leaf(v, _) => v.clone(),
            Tracked::List(items, _) => Value::list(items.iter().map(Tracked::to_value).collect()),
            Tracked::Map(entries, _) => {
                let map: Map = entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect();
                Value::map(map)
            }
        }
    }

    /// Every origin id of the tree mapped by `f`, in place (its origins were moved
    /// to other ids of a table).
    pub fn map_origins(&mut self, f: impl Fn(OriginId) -> OriginId + Copy) {
        match self {
            Tracked::Leaf(_, o) => *o = f(*o),
            Tracked::List(items, o) => {
                *o = f(*o);
                items.iter_mut().for_each(|t| t.map_origins(f));
            }
            Tracked::Map(entries, o) => {
                *o = f(*o);
                Arc::make_mut(entries)
                    .values_mut()
                    .for_each(|t| t.map_origins(f));
            }
        }
    }

    pub fn origin(&self) -> OriginId {
        match self {
            Tracked::Leaf(_, o) | Tracked::List(_, o) | Tracked::Map(_, o) => *o,
        }
    }

    /// `""`, `[]`, `{}`: values that a merge overlay may not use to erase a base (S9).
    pub fn is_empty_value(&self) -> bool {
        match self {
            Tracked::Leaf(Value::Str(s), _) => s.is_empty(),
            Tracked::Leaf(_, _) => false,
            Tracked::List(items, _) => items.is_empty(),
            Tracked::Map(entries, _) => entries.is_empty(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tracked::Leaf(Value::Str(s), _) => Some(s),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Tracked> {
        match self {
            Tracked::Map(entries, _) => entries.get(key),
            _ => None,
        }
    }

    /// Deep merge for inputs (S9): maps merge key by key, other values replace, and an
    /// empty overlay never erases a non-empty base. `null` replaces.
    ///
    /// The overlay is read, not taken: what it adds is shared with it (a map is one
    /// more reference), and a map of the base is copied only where it changes.
    pub fn merge_from(&mut self, overlay: &Tracked) {
        match (self, overlay) {
            (Tracked::Map(base, _), Tracked::Map(over, _)) => {
                // A map merged into itself (or nothing merged) leaves it as it is.
                if over.is_empty() || Arc::ptr_eq(base, over) {
                    return;
                }
                let base = Arc::make_mut(base);
                for (k, v) in over.iter() {
                    match base.get_mut(k) {
                        Some(existing) => existing.merge_from(v),
                        None => {
                            base.insert(Arc::clone(k), v.clone());
                        }
                    }
                }
            }
            (base, over) => {
                if over.is_empty_value() && !base.is_empty_value() && !base.is_null() {
                    return;
                }
                *base = over.clone();
            }
        }
    }

    /// [`Equality::DATA`] on the plain values, without building them: `AppendUnique` lists
    /// compare every new item against every kept one.
    pub fn same_value(&self, other: &Tracked) -> bool {
        match (self, other) {
            (Tracked::Leaf(a, _), Tracked::Leaf(b, _)) => a.equals(b, Equality::DATA),
            (Tracked::List(a, _), Tracked::List(b, _)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_value(y))
            }
            (Tracked::Map(a, _), Tracked::Map(b, _)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).is_some_and(|w| v.same_value(w)))
            }
            // A leaf may itself hold a list or map value (from an expression).
            (Tracked::Leaf(a, _), b) | (b, Tracked::Leaf(a, _)) => {
                a.equals(&b.to_value(), Equality::DATA)
            }
            _ => false,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Tracked::Leaf(Value::Nil, _))
    }

    /// Drops `""` recursively from maps and lists (S9 clean-up); nulls stay.
    pub fn drop_empty_strings(&mut self) {
        match self {
            // Only what changes is copied out of a map shared with another tree.
            Tracked::Map(entries, _) => {
                let entries = Arc::make_mut(entries);
                entries.retain(|k, v| !k.is_empty() && v.as_str() != Some(""));
                for v in entries.values_mut() {
                    if v.has_empty_strings() {
                        v.drop_empty_strings();
                    }
                }
            }
            Tracked::List(items, _) => {
                items.retain(|v| v.as_str() != Some(""));
                for v in items.iter_mut() {
                    if v.has_empty_strings() {
                        v.drop_empty_strings();
                    }
                }
            }
            Tracked::Leaf(_, _) => {}
        }
    }

    /// Whether [`Tracked::drop_empty_strings`] would change anything.
    pub fn has_empty_strings(&self) -> bool {
        match self {
            Tracked::Map(entries, _) => entries
                .iter()
                .any(|(k, v)| k.is_empty() || v.as_str() == Some("") || v.has_empty_strings()),
            Tracked::List(items, _) => items
                .iter()
                .any(|v| v.as_str() == Some("") || v.has_empty_strings()),
            Tracked::Leaf(_, _) => false,
        }
    }

    /// Removes the nested path `path` (S9 field-level remove); true if something went.
    pub fn remove_path(&mut self, path: &[&str]) -> bool {
        let Tracked::Map(entries, _) = self else {
            return false;
        };
        // A map shared with another tree is copied only when it has the key.
        match path {
            [] => false,
            [first, ..] if !entries.contains_key(first) => false,
            [last] => Arc::make_mut(entries).shift_remove(last).is_some(),
            [first, rest @ ..] => Arc::make_mut(entries)
                .get_mut(first)
                .is_some_and(|child| child.remove_path(rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(yaml: &str) -> Tracked {
        let node = crate::yaml::parse(yaml, crate::files::FileId::default()).expect("yaml");
        Tracked::from_value(&node.to_value(), OriginId(0))
    }

    #[test]
    fn same_value_compares_like_plain_values() {
        let pairs = [
            (
                "{a: 1, b: [x, {c: true}]}",
                "{b: [x, {c: true}], a: 1}",
                true,
            ),
            ("{a: 1}", "{a: 2}", false),
            ("[1, 2]", "[2, 1]", false),
            ("[]", "{}", false),
            ("x", "x", true),
        ];
        for (a, b, expected) in pairs {
            let (ta, tb) = (tracked(a), tracked(b));
            assert_eq!(ta.same_value(&tb), expected, "{a} vs {b}");
            assert_eq!(
                ta.to_value().equals(&tb.to_value(), Equality::DATA),
                expected,
                "{a} vs {b}"
            );
        }
        // A leaf holding a whole list (an expression's result) equals the tracked list.
        let leaf = Tracked::Leaf(tracked("[1, 2]").to_value(), OriginId(1));
        assert!(leaf.same_value(&tracked("[1, 2]")));
    }

    #[test]
    fn has_empty_strings_predicts_drop_empty_strings() {
        for yaml in [
            "{a: '', b: 1}",
            "{a: {b: [x, '']}}",
            "[x, y]",
            "{'': 1}",
            "{a: {b: c}}",
            "[[''], x]",
        ] {
            let t = tracked(yaml);
            let mut dropped = t.clone();
            dropped.drop_empty_strings();
            let changed = !dropped.same_value(&t);
            assert_eq!(t.has_empty_strings(), changed, "{yaml}");
        }
    }

    fn map(t: &Tracked) -> &Arc<TrackedMap> {
        match t {
            Tracked::Map(entries, _) => entries,
            other => panic!("not a map: {other:?}"),
        }
    }

    #[test]
    fn a_merge_copies_only_the_maps_it_changes_and_never_the_overlay() {
        let created = tracked("{region: a, nested: {x: 1}, kept: {y: 2}}");
        let overlay = tracked("{region: b, nested: {z: 3}, added: {w: 4}}");
        let (created_before, overlay_before) = (created.clone(), overlay.clone());
        // The component starts as the contribution that created it, sharing its maps.
        let mut component = created.clone();
        component.merge_from(&overlay);
        let expected = tracked("{region: b, nested: {x: 1, z: 3}, kept: {y: 2}, added: {w: 4}}");
        assert!(
            component.same_value(&expected),
            "{:?}",
            component.to_value()
        );
        // What each contribution said is as it was: the steps of `explain` read it.
        assert!(created.same_value(&created_before));
        assert!(overlay.same_value(&overlay_before));
        // A map the merge did not change is still the contribution's; a map the
        // overlay added is the overlay's; a changed one is the component's own.
        let at = |t: &Tracked, k: &str| Arc::clone(map(t.get(k).expect(k)));
        assert!(Arc::ptr_eq(&at(&component, "kept"), &at(&created, "kept")));
        assert!(Arc::ptr_eq(
            &at(&component, "added"),
            &at(&overlay, "added")
        ));
        assert!(!Arc::ptr_eq(
            &at(&component, "nested"),
            &at(&created, "nested")
        ));
        // Merging a map into itself changes nothing.
        let before = component.clone();
        component.merge_from(&before);
        assert!(Arc::ptr_eq(map(&component), map(&before)));
    }
}
