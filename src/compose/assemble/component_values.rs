//! The blueprint value of each component, remembered across compositions.
//!
//! A component's value is a function of its kind and fields alone
//! ([`blueprint::component_value`]): incremental recomposition (issue 25) takes the
//! value of a component an edit did not reach from [`Memo`] (see
//! [`ByPosition`]) instead of converting it again.

use crate::compose::merge::Merged;
use crate::compose::shared::by_position::ByPosition;
use crate::compose::shared::{blueprint, budget};
use crate::expr::Value;
use std::sync::Arc;

/// The values of the last composition's components, in the order they were given.
#[derive(Default)]
pub struct Memo {
    /// Each value with its estimated size ([`budget::size_within`]).
    values: ByPosition<(Value, usize)>,
    /// The estimated size of each value (see [`budget::Sizes`]).
    pub sizes: budget::Sizes,
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
    let start = last.values.start_list(merged.components.len());
    next.values.reserve(merged.components.len());
    merged
        .components
        .values()
        .enumerate()
        .map(|(i, c)| {
            let (value, size) = match last.values.find(start + i, c) {
                Some((value, size)) => (value.clone(), *size),
                None => {
                    let value = blueprint::component_value(c);
                    let size = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
                    (value, size)
                }
            };
            if let Value::Map(map) = &value {
                next.sizes.insert(budget::map_address(map), size);
            }
            next.values
                .keep(c, Arc::clone(&c.fields), (value.clone(), size));
            value
        })
        .collect()
}
