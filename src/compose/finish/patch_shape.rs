//! Kustomization patches in the shape the Windsor CLI writes them (S10): `path`,
//! `patch`, `target`, in that order, and a target's keys from `group` to
//! `labelSelector`. Other keys are dropped, as Windsor's decoder drops them; the loader
//! has already warned about each one at its line.

use crate::compose::model::tracked::Tracked;
use crate::template::keys::{PATCH, PATCH_TARGET};
use std::sync::Arc;

/// Shapes every patch of a `patches` list in place.
pub fn shape_patches(patches: &mut Tracked) {
    let Tracked::List(items, _) = patches else {
        return;
    };
    for item in items {
        keep_in_order(item, PATCH);
        if let Tracked::Map(entries, _) = item {
            if let Some(target) = Arc::make_mut(entries).get_mut("target") {
                keep_in_order(target, PATCH_TARGET);
            }
        }
    }
}

/// Whether [`shape_patches`] would leave `patches` as it is.
pub fn is_shaped(patches: &Tracked) -> bool {
    let Tracked::List(items, _) = patches else {
        return true;
    };
    items.iter().all(|item| {
        in_order(item, PATCH)
            && match item {
                Tracked::Map(entries, _) => entries
                    .get("target")
                    .is_none_or(|target| in_order(target, PATCH_TARGET)),
                _ => true,
            }
    })
}

/// Whether a map's keys are all `known`, in the order `known` lists them (what
/// [`keep_in_order`] leaves).
fn in_order(value: &Tracked, known: &[&str]) -> bool {
    let Tracked::Map(entries, _) = value else {
        return true;
    };
    let mut positions = entries
        .keys()
        .map(|k| known.iter().position(|n| *n == &**k));
    let mut last = 0;
    positions.all(|p| match p {
        Some(p) if p >= last => {
            last = p;
            true
        }
        _ => false,
    })
}

/// Keeps only the `known` keys of a map, in the order `known` lists them.
fn keep_in_order(value: &mut Tracked, known: &[&str]) {
    // A map shared with another tree is copied only when it changes.
    if in_order(value, known) {
        return;
    }
    let Tracked::Map(entries, _) = value else {
        return;
    };
    let entries = Arc::make_mut(entries);
    entries.retain(|k, _| known.contains(&&**k));
    entries.sort_by_cached_key(|k, _| known.iter().position(|n| *n == &**k));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose::model::origin::OriginId;
    use crate::value::Value;

    fn tracked(yaml: &str) -> Tracked {
        let node = crate::yaml::parse(yaml, crate::files::FileId(0)).expect("yaml");
        Tracked::from_value(&node.to_value(), OriginId(0))
    }

    #[test]
    fn patches_take_windsors_key_order_and_lose_unknown_keys() {
        let mut patches = tracked(
            "- target: {name: web, bogus: 1, kind: Deployment, group: apps}\n  extra: 1\n  patch: 'a: 1'\n  path: p.yaml\n",
        );
        shape_patches(&mut patches);
        let Value::List(items) = patches.to_value() else {
            panic!("a list");
        };
        let patch = items[0].as_map().expect("a map");
        let keys: Vec<&str> = patch.keys().map(|k| &**k).collect();
        assert_eq!(keys, ["path", "patch", "target"]);
        let target = patch.get("target").and_then(Value::as_map).expect("target");
        let keys: Vec<&str> = target.keys().map(|k| &**k).collect();
        assert_eq!(keys, ["group", "kind", "name"]);
    }

    #[test]
    fn patches_count_as_shaped_exactly_when_shaping_changes_nothing() {
        for yaml in [
            "- target: {name: web, bogus: 1}\n  path: p.yaml\n",
            "- target: {kind: Deployment, group: apps}\n  path: p.yaml\n",
            "- patch: 'a: 1'\n  path: p.yaml\n",
            "- path: p.yaml\n  patch: 'a: 1'\n  target: {group: apps, kind: Deployment, name: web}\n",
            "- path: p.yaml\n- 7\n",
            "[]\n",
        ] {
            let before = tracked(yaml);
            let mut after = before.clone();
            shape_patches(&mut after);
            let unchanged = before
                .to_value()
                .equals(&after.to_value(), crate::value::Equality::IDENTICAL);
            assert_eq!(is_shaped(&before), unchanged, "{yaml}");
        }
    }
}
