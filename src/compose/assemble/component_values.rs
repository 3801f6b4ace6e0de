//! The blueprint value of each component, remembered across compositions.
//!
//! A component's value is a function of its kind and fields alone
//! ([`blueprint::component_value`]). Fields are shared copy-on-write from merging on,
//! so a component an edit did not reach has the very fields (the same allocation) it
//! had in the last composition: incremental recomposition (issue 25) takes its value
//! from [`Memo`] instead of converting it again.
//!
//! The memo keeps the values in list order, so that finding a component's is a look
//! at the same position; only where the lists moved is it looked up by address.

use crate::compose::merge::{Component, Merged};
use crate::compose::shared::fields::FieldMap;
use crate::compose::shared::{blueprint, budget};
use crate::expr::Value;
use crate::template::ComponentKind;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The values of the last composition's components, in the order they were given.
#[derive(Default)]
pub struct Memo {
    kept: Vec<Kept>,
    /// Where [`Memo::kept`] is taken from next (lists are given one after another).
    cursor: usize,
    /// The position of each kept value by the address of its fields: built the first
    /// time a component is not where the last composition had it.
    by_fields: Option<FxHashMap<usize, usize>>,
    /// The estimated size of each value (see [`budget::Sizes`]).
    pub sizes: budget::Sizes,
}

/// One component's value, with the fields it was made from: holding them keeps their
/// address from being reused by other fields while the entry exists.
struct Kept {
    id: Arc<str>,
    fields: Arc<FieldMap>,
    kind: ComponentKind,
    value: Value,
    /// Its estimated size ([`budget::size_within`]).
    size: usize,
}

impl Kept {
    fn is_of(&self, c: &Component) -> bool {
        self.kind == c.kind && Arc::ptr_eq(&self.fields, &c.fields)
    }
}

impl Memo {
    /// The value kept for `c`, given at position `at` of the lists given so far.
    fn find(&mut self, at: usize, c: &Component) -> Option<&Kept> {
        match self.kept.get(at) {
            Some(kept) if kept.is_of(c) => return self.kept.get(at),
            // The same component with other fields: it changed.
            Some(kept) if kept.id == c.id => return None,
            _ => {}
        }
        let kept = &self.kept;
        let by_fields = self.by_fields.get_or_insert_with(|| {
            kept.iter()
                .enumerate()
                .map(|(i, k)| (Arc::as_ptr(&k.fields) as usize, i))
                .collect()
        });
        let i = *by_fields.get(&(Arc::as_ptr(&c.fields) as usize))?;
        self.kept.get(i).filter(|k| k.is_of(c))
    }
}

/// Each component of `merged` as the blueprint lists it; with a memo, taken from it
/// where the component's fields are the ones it saw, and left in `next` for the next
/// composition.
pub fn of(merged: &Merged, memo: Option<(&mut Memo, &mut Memo)>) -> Vec<Value> {
    let Some((last, next)) = memo else {
        return merged
            .components
            .values()
            .map(blueprint::component_value)
            .collect();
    };
    let start = last.cursor;
    last.cursor += merged.components.len();
    next.kept.reserve(merged.components.len());
    merged
        .components
        .values()
        .enumerate()
        .map(|(i, c)| {
            let (value, size) = match last.find(start + i, c) {
                Some(kept) => (kept.value.clone(), kept.size),
                None => {
                    let value = blueprint::component_value(c);
                    let size = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
                    (value, size)
                }
            };
            if let Value::Map(map) = &value {
                next.sizes.insert(budget::map_address(map), size);
            }
            next.kept.push(Kept {
                id: Arc::clone(&c.id),
                fields: Arc::clone(&c.fields),
                kind: c.kind,
                value: value.clone(),
                size,
            });
            value
        })
        .collect()
}
