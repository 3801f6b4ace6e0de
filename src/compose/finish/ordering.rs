//! The order of the blueprint's lists (S10), as the Windsor CLI writes them.
//! Terraform components and plain kustomizations: sorted by identity, then every item
//! placed after what it depends on (depth-first, dependencies first and visited in
//! sorted order), so a list reads in apply order and never depends on facet file
//! order. Flux systems: by name.

use crate::compose::model::component::Merged;
use crate::compose::model::tracked::Tracked;
use rustc_hash::FxHashMap;

/// Puts `merged`'s components in dependency order.
pub fn dependency_order(merged: &mut Merged) {
    let order = order_of(merged);
    place(merged, &order);
}

/// The positions of `merged`'s components in dependency order. Linear in components
/// and dependencies, plus one sort of positions by name: dependencies are looked up
/// once, as ranks.
pub fn order_of(merged: &Merged) -> Vec<usize> {
    let count = merged.components.len();
    let ids: Vec<&str> = merged.components.keys().map(AsRef::as_ref).collect();
    // The components by identity (ids are distinct, so an unstable sort is exact).
    let mut by_id: Vec<usize> = (0..count).collect();
    by_id.sort_unstable_by(|&a, &b| ids[a].cmp(ids[b]));
    let rank: FxHashMap<&str, usize> = by_id
        .iter()
        .enumerate()
        .map(|(r, &i)| (ids[i], r))
        .collect();
    // Each component's dependencies as ranks, in sorted order (by name).
    let deps: Vec<Vec<usize>> = by_id
        .iter()
        .map(|&i| {
            let mut deps: Vec<usize> = match merged.components[i].get("dependsOn") {
                Some(Tracked::List(items, _)) => items
                    .iter()
                    .filter_map(|d| d.as_str().and_then(|n| rank.get(n).copied()))
                    .collect(),
                _ => Vec::new(),
            };
            deps.sort_unstable();
            deps
        })
        .collect();
    drop(rank);
    // `seen` also guards against cycles; validation has rejected them already, but
    // the order must not loop if one slips through.
    let mut seen = vec![false; count];
    let mut order: Vec<usize> = Vec::with_capacity(count);
    // Depth-first, iteratively: (rank, next dependency to visit).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for start in 0..count {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push((start, 0));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            match deps[node].get(next) {
                Some(&dep) => {
                    top.1 += 1;
                    if !seen[dep] {
                        seen[dep] = true;
                        stack.push((dep, 0));
                    }
                }
                None => {
                    order.push(by_id[node]);
                    stack.pop();
                }
            }
        }
    }
    order
}

/// Puts `merged`'s components in `order` (positions, each once): the map is rebuilt
/// once in the new order (moving each entry into place one by one was quadratic).
pub fn place(merged: &mut Merged, order: &[usize]) {
    let mut entries: Vec<Option<_>> = std::mem::take(&mut merged.components)
        .into_iter()
        .map(Some)
        .collect();
    merged.components.reserve(order.len());
    for &i in order {
        if let Some((id, component)) = entries[i].take() {
            merged.components.insert(id, component);
        }
    }
}

pub fn by_name(merged: &mut Merged) {
    merged.components.sort_unstable_keys();
}
