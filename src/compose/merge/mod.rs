//! Stage 6, merge: contributions applied in order (S3) with their strategies (S9).
//!
//! * `merge`: fields combine as [`crate::compose::model::fields`] says;
//! * `replace`: the contribution replaces everything earlier for that identity;
//! * `remove`: identity only deletes the component; with more fields exactly the
//!   listed items go (input keys and nested paths, list items, substitution keys,
//!   equal patches, scalar fields). A later `merge` merges into what is left.

use crate::compose::collect::{Contribution, Contributions};
use crate::compose::model::component::{variant_name, Component, Effect, Merged, Step};
use crate::compose::model::fields::{sort_in_order, FieldMap};
use crate::compose::model::for_explain::ForExplain;
use crate::compose::model::tracked::Tracked;
use crate::compose::shared::memory::Memory;
use crate::template::fields::{field_for, Combine};
use crate::template::{ComponentKind, Strategy};
use identities::Memo;
use std::sync::Arc;

pub mod identities;

/// The blueprint's three component lists, merged.
pub struct Lists {
    pub terraform: Merged,
    pub kustomize: Merged,
    /// Flux systems, not yet expanded into their tiers.
    pub flux: Merged,
    /// What the merge no longer needed ([`LetGo`]).
    pub let_go: LetGo,
}

/// The fields of contributions that a merge keeping no record for `explain` no
/// longer needs: merged into a component, replaced by a later contribution, or
/// removed. Kept aside, to be freed with the composition: freed as the merge went,
/// each merge thread freeing what the collection threads had allocated, they cost
/// the merge a third of its time at 10 000 facets, and a run that writes its
/// blueprint and exits does not free them at all. Kept in the history instead (for
/// `explain`), a component that several contributions merged into copies its fields
/// the first time, which it need not do when nothing else holds them.
#[derive(Clone, Default)]
pub struct LetGo(Vec<Arc<FieldMap>>);

impl LetGo {
    fn push(&mut self, fields: Arc<FieldMap>) {
        self.0.push(fields);
    }

    fn append(&mut self, mut other: LetGo) {
        self.0.append(&mut other.0);
    }
}

/// Merges each kind's contributions, in merge order; with a memo, components whose
/// contributions are the ones the last composition merged are taken from it. The
/// components' histories keep what each contribution said only if `for_explain`
/// says so. After a large merge, `memory` is handed back.
pub fn lists(
    contributions: Contributions,
    memo: Option<&mut Memo>,
    for_explain: ForExplain,
    memory: Memory,
) -> Lists {
    let (terraform, kustomize, flux) = match memo {
        Some(memo) => (
            Some(&mut memo.terraform),
            Some(&mut memo.kustomize),
            Some(&mut memo.flux),
        ),
        None => (None, None, None),
    };
    // Handing pages back walks the heap: worth it only after a large merge.
    let large = contributions.count() >= GIVE_BACK_FROM;
    let mut let_go = LetGo::default();
    let mut merge = |contributions, memo| {
        let (merged, gone) = identities::merge(contributions, memo, for_explain);
        let_go.append(gone);
        merged
    };
    let lists = Lists {
        terraform: merge(contributions.terraform, terraform),
        kustomize: merge(contributions.kustomize, kustomize),
        flux: merge(contributions.systems, flux),
        let_go,
    };
    // What the merge's threads and its grouping freed sits in arenas the stages
    // after it would not reuse.
    memory.when(large).give_back();
    lists
}

/// Contributions from which a merge hands what it freed back to the system.
const GIVE_BACK_FROM: usize = 4096;

/// What one contribution did to the slots of the merged list: merging happens per
/// identity, and the order of the list comes from these (see [`identities`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// The component exists from now on, in a new slot at the end of the list.
    Created,
    /// The component (or, for a remove that missed, its record) went to `deleted`.
    Left,
    /// It changed in place, or not at all.
    Changed,
}

/// Applies one contribution to its identity's component (`live`, `None` while it does
/// not exist), moving what a remove deletes to `deleted`. With `let_go` (no record
/// for `explain`), the history does not keep what the contribution said, and fields
/// no component holds any more go to `let_go`.
pub(crate) fn apply(
    live: &mut Option<Component>,
    deleted: &mut Vec<Component>,
    c: Contribution,
    mut let_go: Option<&mut LetGo>,
) -> Event {
    let said = let_go.is_none().then(|| Arc::clone(&c.fields));
    let mut done_with = |fields: Arc<FieldMap>| {
        if let Some(let_go) = let_go.as_deref_mut() {
            let_go.push(fields);
        }
    };
    let step = |effect| Step {
        origin: c.origin,
        strategy: c.strategy,
        effect,
        said,
        lists: Vec::new(),
    };
    let Some(existing) = live.as_mut() else {
        if c.strategy == Strategy::Remove {
            // Nothing to remove; remembered so `explain` can show it.
            deleted.push(Component {
                kind: c.kind,
                id: Arc::clone(&c.id),
                fields: Arc::default(),
                history: Arc::new(vec![step(Effect::Missed)]),
            });
            done_with(c.fields);
            return Event::Left;
        }
        let created = step(Effect::Created);
        *live = Some(Component {
            kind: c.kind,
            id: c.id,
            fields: c.fields,
            history: Arc::new(vec![created]),
        });
        return Event::Created;
    };
    match c.strategy {
        Strategy::Remove if c.identity_only => {
            Arc::make_mut(&mut existing.history).push(step(Effect::Deleted));
            deleted.extend(live.take());
            done_with(c.fields);
            return Event::Left;
        }
        Strategy::Remove => {
            let removed = remove_fields(existing, &c.fields);
            Arc::make_mut(&mut existing.history).push(step(Effect::Removed(removed)));
            done_with(c.fields);
        }
        Strategy::Replace => {
            Arc::make_mut(&mut existing.history).push(step(Effect::Replaced));
            existing.kind = c.kind;
            done_with(std::mem::replace(&mut existing.fields, c.fields));
        }
        Strategy::Merge => {
            // The merge copies the overlay's values in; the step keeps what was said
            // if the composition may be explained.
            merge_fields(existing, &c.fields);
            Arc::make_mut(&mut existing.history).push(step(Effect::Merged));
            done_with(c.fields);
        }
    }
    Event::Changed
}

/// Merges `overlay` into `existing` field by field (S9), then puts the fields back in
/// their written order.
pub fn merge_fields(existing: &mut Component, overlay: &FieldMap) {
    let kind = existing.kind;
    let fields = Arc::make_mut(&mut existing.fields);
    for (&name, value) in overlay {
        let combine = field_for(kind, name).map_or(Combine::Replace, |f| f.combine);
        match (fields.get_mut(name), combine) {
            (None, _) => {
                fields.insert(name, value.clone());
            }
            (Some(base), Combine::Replace) => *base = value.clone(),
            (Some(base), Combine::DeepMerge) => base.merge_from(value),
            (Some(Tracked::List(items, _)), Combine::AppendUnique) => {
                // Windsor sorts two merged component lists.
                append_unique(items, value.clone(), name == "components")
            }
            (Some(Tracked::List(items, _)), Combine::Append) => {
                items.extend(list_items(value.clone()))
            }
            (Some(base), Combine::Tier) => merge_tier(base, value.clone(), TierKind::Install),
            (Some(Tracked::List(items, _)), Combine::Variants) => {
                for variant in list_items(value.clone()) {
                    let name = variant_name(&variant);
                    match items.iter_mut().find(|v| variant_name(v) == name) {
                        Some(existing) => merge_tier(existing, variant, TierKind::Variant),
                        None => items.push(variant),
                    }
                }
            }
            (Some(base), _) => *base = value.clone(),
        }
    }
    // A kustomization or system merged from several entries lists its dependencies
    // sorted, as the Windsor CLI writes them (terraform keeps its order).
    if kind != ComponentKind::Terraform {
        if let Some(Tracked::List(items, _)) = fields.get_mut("dependsOn") {
            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
    sort_in_order(kind, fields);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TierKind {
    Install,
    Variant,
}

/// Appends the overlay's items not already present; with `sort`, two non-empty lists
/// merged come out sorted, as the Windsor CLI writes them (a single list keeps its
/// order).
fn append_unique(items: &mut Vec<Tracked>, overlay: Tracked, sort: bool) {
    let added = list_items(overlay);
    let merging = !items.is_empty() && !added.is_empty();
    for item in added {
        if !items.iter().any(|i| i.same_value(&item)) {
            items.push(item);
        }
    }
    if sort && merging {
        items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    }
}

/// Merges one flux tier into another: name lists append new items, patches append,
/// other keys merge as inputs do.
fn merge_tier(base: &mut Tracked, overlay: Tracked, tier: TierKind) {
    let (Tracked::Map(base, _), Tracked::Map(over, _)) = (&mut *base, &overlay) else {
        *base = overlay;
        return;
    };
    let base = Arc::make_mut(base);
    for (k, v) in over.iter() {
        let combine =
            field_for(ComponentKind::Kustomize, k).map_or(Combine::Replace, |f| f.combine);
        match (base.get_mut(k), combine) {
            (Some(Tracked::List(items, _)), Combine::AppendUnique) => {
                append_unique(items, v.clone(), &**k == "components");
            }
            (Some(Tracked::List(items, _)), Combine::Append) => items.extend(list_items(v.clone())),
            (Some(existing), _) => existing.merge_from(v),
            (None, _) => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
    // Windsor sorts a variant's components whenever two variants merge.
    if tier == TierKind::Variant {
        if let Some(Tracked::List(items, _)) = base.get_mut("components") {
            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
}

fn list_items(t: Tracked) -> Vec<Tracked> {
    match t {
        Tracked::List(items, _) => items,
        other => vec![other],
    }
}

/// Field-level remove; returns a description of each thing removed.
fn remove_fields(existing: &mut Component, spec_fields: &FieldMap) -> Vec<String> {
    let mut removed = Vec::new();
    let kind = existing.kind;
    let fields = Arc::make_mut(&mut existing.fields);
    for (name, spec) in spec_fields {
        let Some(field) = field_for(kind, name) else {
            continue;
        };
        if field.identity {
            continue;
        }
        let Some(current) = fields.get_mut(name) else {
            continue;
        };
        match (current, spec) {
            // Flux tiers: an empty tier spec drops the tier; otherwise its listed items.
            (current, Tracked::Map(entries, _)) if field.combine == Combine::Tier => {
                if entries.is_empty() {
                    fields.shift_remove(name);
                    removed.push((*name).to_string());
                } else {
                    remove_in_tier(current, spec, name, &mut removed);
                }
            }
            (Tracked::List(variants, _), Tracked::List(specs, _))
                if field.combine == Combine::Variants =>
            {
                for spec in specs {
                    let vname = variant_name(spec);
                    let only_name =
                        matches!(spec, Tracked::Map(e, _) if e.keys().all(|k| &**k == "name"));
                    let label = if vname.is_empty() {
                        format!("{name}[]")
                    } else {
                        format!("{name}[{vname}]")
                    };
                    if only_name {
                        let before = variants.len();
                        variants.retain(|v| variant_name(v) != vname);
                        if variants.len() < before {
                            removed.push(label);
                        }
                    } else if let Some(v) = variants.iter_mut().find(|v| variant_name(v) == vname) {
                        remove_in_tier(v, spec, &label, &mut removed);
                    }
                }
            }
            (Tracked::List(items, _), Tracked::List(gone, _)) => {
                remove_items(items, gone, name, &mut removed);
            }
            (current @ Tracked::Map(..), Tracked::Map(..)) => {
                for path in leaf_paths(spec) {
                    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
                    if current.remove_path(&refs) {
                        removed.push(format!("{name}.{}", path.join(".")));
                    }
                }
            }
            // Scalar fields in a removal (`path`, `timeout`, …) only say which component
            // is meant; they are not removed.
            _ => {}
        }
    }
    removed
}

/// Drops the items of `items` equal to one in `gone`, noting each as `label: item`.
fn remove_items(
    items: &mut Vec<Tracked>,
    gone: &[Tracked],
    label: &str,
    removed: &mut Vec<String>,
) {
    items.retain(|i| {
        let hit = gone.iter().any(|g| g.same_value(i));
        if hit {
            removed.push(format!(
                "{label}: {}",
                crate::expr::windsor::format::go_format(&i.to_value())
            ));
        }
        !hit
    });
}

/// Inside one tier: list items named in the spec go; any other named key goes.
fn remove_in_tier(tier: &mut Tracked, spec: &Tracked, label: &str, removed: &mut Vec<String>) {
    let (Tracked::Map(fields, _), Tracked::Map(specs, _)) = (tier, spec) else {
        return;
    };
    let fields = Arc::make_mut(fields);
    for (k, v) in specs.iter() {
        if &**k == "name" {
            continue;
        }
        match (fields.get_mut(k), v) {
            (Some(Tracked::List(items, _)), Tracked::List(gone, _)) => {
                remove_items(items, gone, &format!("{label}.{k}"), removed);
            }
            (Some(current @ Tracked::Map(..)), Tracked::Map(children, _))
                if !children.is_empty() =>
            {
                for path in leaf_paths(v) {
                    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
                    if current.remove_path(&refs) {
                        removed.push(format!("{label}.{k}.{}", path.join(".")));
                    }
                }
            }
            (Some(_), _) => {
                fields.shift_remove(k);
                removed.push(format!("{label}.{k}"));
            }
            (None, _) => {}
        }
    }
}

/// The paths a removal map names: a key whose value is a non-empty map names its
/// children; any other value names the key itself.
fn leaf_paths(spec: &Tracked) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if let Tracked::Map(entries, _) = spec {
        for (k, v) in entries.iter() {
            match v {
                Tracked::Map(children, _) if !children.is_empty() => {
                    for mut p in leaf_paths(v) {
                        p.insert(0, k.to_string());
                        out.push(p);
                    }
                }
                _ => out.push(vec![k.to_string()]),
            }
        }
    }
    out
}

/// Contributions to one identity, applied in order with their strategies (S3, S9).
#[cfg(test)]
mod tests {
    use super::Effect;
    use crate::compose::fixture::{facet, ids, json, Fixture};
    use crate::compose::model::origin::Origins;

    fn lists(files: &[(&str, &str)]) -> super::Lists {
        Fixture::new(files).merged(&mut Origins::default()).1
    }

    #[test]
    fn a_later_contribution_merges_into_the_same_component() {
        let lists = lists(&[
            (
                "facets/a.yaml",
                &facet("a", "ordinal: 100\nterraform:\n  - name: db\n    path: db\n    inputs: {size: small, zone: a}\n"),
            ),
            (
                "facets/b.yaml",
                &facet("b", "ordinal: 200\nterraform:\n  - name: db\n    inputs: {size: large}\n"),
            ),
        ]);
        assert_eq!(
            json(&lists.terraform, "db"),
            r#"{"name":"db","path":"db","inputs":{"size":"large","zone":"a"}}"#
        );
        let effects: Vec<&Effect> = lists.terraform.components["db"]
            .history
            .iter()
            .map(|s| &s.effect)
            .collect();
        assert_eq!(effects, [&Effect::Created, &Effect::Merged]);
    }

    #[test]
    fn replace_drops_what_came_before_and_remove_deletes() {
        let lists = lists(&[
            (
                "facets/a.yaml",
                &facet("a", "ordinal: 100\nterraform:\n  - name: db\n    path: db\n    inputs: {size: small}\n  - name: cache\n    path: cache\n"),
            ),
            (
                "facets/b.yaml",
                &facet("b", "ordinal: 200\nterraform:\n  - name: db\n    path: db2\n    strategy: replace\n  - name: cache\n    strategy: remove\n"),
            ),
        ]);
        assert_eq!(ids(&lists.terraform), ["db"]);
        assert_eq!(
            json(&lists.terraform, "db"),
            r#"{"name":"db","path":"db2"}"#
        );
        assert_eq!(lists.terraform.deleted.len(), 1);
    }

    #[test]
    fn each_kind_merges_on_its_own() {
        let lists = lists(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "terraform:\n  - name: app\n    path: app\nkustomize:\n  - name: app\n",
            ),
        )]);
        assert_eq!(ids(&lists.terraform), ["app"]);
        assert_eq!(ids(&lists.kustomize), ["app"]);
        assert!(lists.flux.components.is_empty());
    }
}
