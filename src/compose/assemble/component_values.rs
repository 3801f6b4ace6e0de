//! The blueprint value of each component, remembered across compositions.
//!
//! A component's value is a function of its kind and fields alone
//! ([`blueprint::component_value`]): incremental recomposition takes the
//! value of a component an edit did not reach from [`Memo`] (see
//! [`ByPosition`]) instead of converting it again.

use crate::compose::model::component::{Component, Merged};
use crate::compose::model::{blueprint, budget};
use crate::compose::shared::by_position::ByPosition;
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

/// Each component of `merged` as the blueprint lists it, its size noted in
/// `next.sizes`; with the last composition's memo, taken from it where the
/// component's fields are the ones it saw, and left in `next` for the next
/// composition.
pub fn of(merged: &Merged, last: Option<&mut Memo>, next: &mut Memo) -> Vec<Value> {
    let Some(last) = last else {
        // Each value depends on its component alone: a long list is converted on
        // several threads.
        let components: Vec<&Component> = merged.components.values().collect();
        let threads =
            crate::parallel::cores().min(components.len() / blueprint::COMPONENTS_PER_THREAD);
        return sized_values(&components, threads)
            .into_iter()
            .map(|(value, size)| note_size(value, size, next))
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
            next.values
                .keep(c, Arc::clone(&c.fields), (value.clone(), size));
            note_size(value, size, next)
        })
        .collect()
}

/// `value`, its estimated `size` noted in `next.sizes`.
fn note_size(value: Value, size: usize, next: &mut Memo) -> Value {
    if let Value::Map(map) = &value {
        next.sizes.insert(budget::map_address(map), size);
    }
    value
}

/// Each component's value with its estimated size, on up to `threads` threads.
fn sized_values(components: &[&Component], threads: usize) -> Vec<(Value, usize)> {
    let sized = |c: &&Component| {
        let value = blueprint::component_value(c);
        let size = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
        (value, size)
    };
    if threads < 2 {
        components.iter().map(sized).collect()
    } else {
        crate::parallel::map(components, threads, sized)
    }
}

#[cfg(test)]
mod tests {
    use super::sized_values;
    use crate::compose::fixture::{facet, Fixture};
    use crate::compose::model::component::Component;
    use crate::compose::model::origin::Origins;

    #[test]
    fn several_threads_give_each_component_its_value_in_order() {
        let body: String = (0..9)
            .map(|k| format!("  - name: c{k}\n    path: p{k}\n    inputs: {{z: {k}, a: [{k}]}}\n"))
            .collect();
        let fx = Fixture::new(&[("facets/a.yaml", &facet("a", &format!("terraform:\n{body}")))]);
        let (_, lists) = fx.merged(&mut Origins::default());
        let components: Vec<&Component> = lists.terraform.components.values().collect();
        let text = |threads| format!("{:?}", sized_values(&components, threads));
        let one = text(1);
        assert!(one.contains("c0") && one.contains("c8"), "{one}");
        for threads in [2, 3, 20] {
            assert_eq!(text(threads), one, "{threads} threads");
        }
    }
}
