//! The order of the blueprint's lists (S10), as the Windsor CLI writes them.
//! Terraform components and plain kustomizations: sorted by identity, then every item
//! placed after what it depends on (depth-first, dependencies first and visited in
//! sorted order), so a list reads in apply order and never depends on facet file
//! order. Flux systems: by name.

use crate::compose::merge::Merged;
use std::collections::HashSet;

pub fn dependency_order(merged: &mut Merged) {
    merged.components.sort_unstable_keys();
    let ids: Vec<String> = merged.components.keys().cloned().collect();
    let mut placed: HashSet<String> = HashSet::new();
    let mut order: Vec<String> = Vec::with_capacity(ids.len());
    // `visiting` guards against cycles; validation has rejected them already, but the
    // order must not loop if one slips through.
    let mut visiting: HashSet<String> = HashSet::new();
    for id in &ids {
        visit(id, merged, &mut placed, &mut visiting, &mut order);
    }
    for (target, id) in order.iter().enumerate() {
        if let Some(current) = merged.components.get_index_of(id) {
            merged.components.move_index(current, target);
        }
    }
}

fn visit(
    id: &str,
    merged: &Merged,
    placed: &mut HashSet<String>,
    visiting: &mut HashSet<String>,
    order: &mut Vec<String>,
) {
    if placed.contains(id) || !visiting.insert(id.to_string()) {
        return;
    }
    if let Some(component) = merged.components.get(id) {
        let mut deps = component.dependencies();
        deps.sort();
        for dep in deps {
            visit(&dep, merged, placed, visiting, order);
        }
        placed.insert(id.to_string());
        order.push(id.to_string());
    }
}

pub fn by_name(merged: &mut Merged) {
    merged.components.sort_unstable_keys();
}
