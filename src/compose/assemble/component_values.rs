//! The blueprint value of each component, remembered across compositions.
//!
//! A component's value is a function of its kind and fields alone
//! ([`blueprint::component_value`]). Fields are shared copy-on-write from merging on,
//! so a component an edit did not reach has the very fields (the same allocation) it
//! had in the last composition: incremental recomposition (issue 25) takes its value
//! from [`Memo`] instead of converting it again.

use crate::compose::merge::{Component, Merged};
use crate::compose::shared::fields::FieldMap;
use crate::compose::shared::{blueprint, budget};
use crate::expr::Value;
use crate::template::ComponentKind;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The values of the last composition's components, by the address of their fields.
#[derive(Default)]
pub struct Memo {
    by_fields: FxHashMap<usize, Kept>,
    /// The estimated size of each value (see [`budget::Sizes`]).
    pub sizes: budget::Sizes,
}

/// One component's value, with the fields it was made from: holding them keeps their
/// address from being reused by other fields while the entry exists.
struct Kept {
    fields: Arc<FieldMap>,
    kind: ComponentKind,
    value: Value,
    /// Its estimated size ([`budget::size_within`]).
    size: usize,
}

/// Each component of `merged` as the blueprint lists it; with a memo, taken from it
/// where the component's fields are the ones it saw, and left in `next` for the next
/// composition.
pub fn of(merged: &Merged, memo: Option<(&Memo, &mut Memo)>) -> Vec<Value> {
    let Some((last, next)) = memo else {
        return merged
            .components
            .values()
            .map(blueprint::component_value)
            .collect();
    };
    merged
        .components
        .values()
        .map(|c| {
            let key = Arc::as_ptr(&c.fields) as usize;
            let (value, size) = match last.by_fields.get(&key) {
                Some(kept) if kept.kind == c.kind && Arc::ptr_eq(&kept.fields, &c.fields) => {
                    (kept.value.clone(), kept.size)
                }
                _ => {
                    let value = blueprint::component_value(c);
                    let size = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
                    (value, size)
                }
            };
            if let Value::Map(map) = &value {
                next.sizes.insert(budget::map_address(map), size);
            }
            next.by_fields.insert(key, kept(c, value.clone(), size));
            value
        })
        .collect()
}

fn kept(c: &Component, value: Value, size: usize) -> Kept {
    Kept {
        fields: Arc::clone(&c.fields),
        kind: c.kind,
        value,
        size,
    }
}
