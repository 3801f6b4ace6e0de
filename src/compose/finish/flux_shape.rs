//! Flux systems and plain kustomizations in the shape the blueprint carries
//! them (S10, as the Windsor CLI writes them). Systems stay systems in the blueprint —
//! stage 9 ([`crate::compose::flux`]) compiles these shaped systems, once, into the
//! Flux Kustomizations that validation checks and `bpc render` writes — but their
//! dependencies are resolved here, where everyone reading the blueprint sees them:
//!
//! * a plain kustomization's `dependsOn` naming a flux system with an install tier
//!   means that tier (`cni` → `cni-install`, Windsor's `resolveTierDependencies`);
//! * a bare `X` in a system's or a plain kustomization's `dependsOn` means `X-install`
//!   when `X` names nothing but `X-install` exists;
//! * with CRDs in the blueprint, every root (empty `dependsOn`) depends on `crds`, the
//!   layer that installs them;
//! * a system with `globalDependency: true` is depended on (through its terminal tiers)
//!   by every system and kustomization outside its own dependency closure.
//!
//! Each system also gets its `source` (the template's, `template`, unless set), loses
//! an `install` tier whose components are all empty and the empty items of its tiers'
//! lists; durations take Go's canonical spelling; a null substitution is `""`.

use crate::compose::finish::patch_shape::{self, shape_patches};
use crate::compose::model::blueprint::TEMPLATE_SOURCE;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::fields::{field_position, sort_in_order};
use crate::compose::model::origin::{OriginId, Origins, Rule};
use crate::compose::model::tier_names::{self, Tiers};
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use crate::template::ComponentKind;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The Flux layer that installs the blueprint's CRDs.
const CRDS_LAYER: &str = "crds";

const DURATIONS: [&str; 3] = ["interval", "timeout", "retryInterval"];

/// `own_source` is the name of the composing template's source: `template`, or a
/// published blueprint's name (S14), whose CRDs layer is `crds-<name>`.
pub fn shape(
    systems: &mut Merged,
    kustomize: &mut Merged,
    has_crds: bool,
    own_source: &str,
    origins: &mut Origins,
) {
    // What bpc adds itself is attributed to bpc's rule, not to the facet of the entry.
    let source = origins.add_derived(Rule::SystemSource);
    let crds_first = origins.add_derived(Rule::CrdsFirst);
    let global_first = origins.add_derived(Rule::GlobalDependency);
    for system in systems.components.values_mut() {
        shape_system(system, own_source, source);
    }
    for k in kustomize.components.values_mut() {
        // Copy-on-write: fields shared with the merge's history (or the memo) are
        // copied only when shaping changes them.
        if k.fields
            .iter()
            .all(|(name, value)| already_shaped(name, value))
        {
            continue;
        }
        let fields = Arc::make_mut(&mut k.fields);
        for (name, value) in fields.iter_mut() {
            if DURATIONS.contains(name) {
                canonical_duration(value);
            } else if *name == "substitutions" {
                null_substitutions_empty(value);
            } else if *name == "patches" {
                shape_patches(value);
            }
        }
    }
    resolve_install_names(systems, kustomize);
    if has_crds {
        let layer = crds_layer(own_source);
        add_crds_barrier(systems, kustomize, &layer, crds_first);
    }
    let globals: Vec<String> = systems
        .components
        .values()
        .filter(|s| {
            matches!(
                s.get("globalDependency"),
                Some(Tracked::Leaf(Value::Bool(true), _))
            )
        })
        .map(|s| s.id.to_string())
        .collect();
    for global in globals {
        add_global_barrier(&global, systems, kustomize, global_first);
    }
}

/// The Flux layer installing the CRDs of the template named `source`: `crds` for the
/// local template, `crds-<name>` for a published one (as the Windsor CLI names it).
pub fn crds_layer(source: &str) -> String {
    if source == TEMPLATE_SOURCE {
        CRDS_LAYER.to_string()
    } else {
        format!("{CRDS_LAYER}-{source}")
    }
}

fn shape_system(system: &mut Component, own_source: &str, derived: OriginId) {
    let fields = Arc::make_mut(&mut system.fields);
    if !fields.contains_key("source") {
        fields.insert("source", leaf(own_source, derived));
    }
    if let Some(install) = fields.get_mut("install") {
        shape_tier(install);
        let has_components = matches!(install.get("components"),
            Some(Tracked::List(items, _)) if !items.is_empty());
        if !has_components {
            fields.shift_remove("install");
        }
    }
    if let Some(Tracked::List(variants, _)) = fields.get_mut("resources") {
        variants.iter_mut().for_each(shape_tier);
    }
    if let Some(Tracked::List(deps, _)) = fields.get_mut("dependsOn") {
        deps.retain(|d| d.as_str() != Some(""));
    }
    sort_in_order(ComponentKind::FluxSystem, fields);
}

fn shape_tier(tier: &mut Tracked) {
    let Tracked::Map(entries, _) = tier else {
        return;
    };
    // Systems are few: a tier shared with a contribution is simply copied.
    let entries = Arc::make_mut(entries);
    for (key, value) in entries.iter_mut() {
        match &**key {
            "components" | "dependsOn" => {
                if let Tracked::List(items, _) = value {
                    items.retain(|i| i.as_str() != Some(""));
                }
            }
            "substitutions" => null_substitutions_empty(value),
            "patches" => shape_patches(value),
            k if DURATIONS.contains(&k) => canonical_duration(value),
            _ => {}
        }
    }
    for list in ["dependsOn", "components"] {
        if matches!(entries.get(list), Some(Tracked::List(items, _)) if items.is_empty()) {
            entries.shift_remove(list);
        }
    }
    // A tier's fields are a kustomization's, written in the same order.
    entries.sort_by_cached_key(|k, _| field_position(ComponentKind::Kustomize, k));
}

/// Whether shaping a kustomization's field `name` would leave `value` as it is.
fn already_shaped(name: &str, value: &Tracked) -> bool {
    if DURATIONS.contains(&name) {
        !matches!(value, Tracked::Leaf(Value::Str(text), _)
            if crate::compose::model::duration::canonical(text).is_some_and(|go| *go != **text))
    } else if name == "substitutions" {
        !matches!(value, Tracked::Map(entries, _)
            if entries.values().any(|v| matches!(v, Tracked::Leaf(Value::Nil, _))))
    } else if name == "patches" {
        patch_shape::is_shaped(value)
    } else {
        true
    }
}

fn canonical_duration(value: &mut Tracked) {
    if let Tracked::Leaf(Value::Str(text), _) = value {
        if let Some(go) = crate::compose::model::duration::canonical(text) {
            *text = Arc::from(go);
        }
    }
}

/// Windsor renders a substitution that evaluated to null as an empty string.
fn null_substitutions_empty(value: &mut Tracked) {
    if let Tracked::Map(entries, _) = value {
        for v in Arc::make_mut(entries).values_mut() {
            if let Tracked::Leaf(leaf @ Value::Nil, _) = v {
                *leaf = Value::str("");
            }
        }
    }
}

fn leaf(text: &str, origin: OriginId) -> Tracked {
    Tracked::Leaf(Value::str(text), origin)
}

fn deps_mut(component: &mut Component) -> Option<&mut Vec<Tracked>> {
    match Arc::make_mut(&mut component.fields).get_mut("dependsOn") {
        Some(Tracked::List(items, _)) => Some(items),
        _ => None,
    }
}

/// Windsor's `resolveTierDependencies` for plain `kustomize:` entries: a `dependsOn`
/// name that is no kustomization but a flux system with an install tier means that
/// install tier (`cni` → `cni-install`). Any other missing name is left for
/// validation to report. Runs on the merged lists, before they are ordered.
pub fn resolve_plain_dependencies(systems: &Merged, kustomize: &mut Merged) {
    let installs: FxHashMap<&str, String> = systems
        .components
        .values()
        .filter_map(|s| Some((s.id.as_ref(), Tiers::of(s).install?)))
        .collect();
    if installs.is_empty() {
        return;
    }
    let plain: FxHashSet<String> = kustomize.components.keys().map(|k| k.to_string()).collect();
    let target = |item: &Tracked| {
        item.as_str()
            .filter(|n| !plain.contains(*n))
            .and_then(|n| installs.get(n))
    };
    for c in kustomize.components.values_mut() {
        let needs = match c.get("dependsOn") {
            Some(Tracked::List(items, _)) => items.iter().any(|d| target(d).is_some()),
            _ => false,
        };
        if !needs {
            continue;
        }
        if let Some(items) = deps_mut(c) {
            for item in items.iter_mut() {
                if let Some(install) = target(item) {
                    *item = Tracked::Leaf(Value::str(install.as_str()), item.origin());
                }
            }
        }
    }
}

fn resolve_install_names(systems: &mut Merged, kustomize: &mut Merged) {
    let tiers: Vec<String> = systems
        .components
        .values()
        .flat_map(|s| Tiers::of(s).all().cloned().collect::<Vec<_>>())
        .collect();
    let mut names: FxHashSet<&str> = kustomize.components.keys().map(AsRef::as_ref).collect();
    names.extend(tiers.iter().map(String::as_str));
    // Found first, then written: fields shared copy-on-write are copied only for a
    // component with a dependency to rewrite.
    let renamed = |list: &Merged| -> Vec<(usize, Vec<(usize, String)>)> {
        let rewrites = |c: &Component| -> Vec<(usize, String)> {
            let Some(Tracked::List(items, _)) = c.get("dependsOn") else {
                return Vec::new();
            };
            items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let dep = item.as_str()?;
                    let install = tier_names::install(dep);
                    (!names.contains(dep) && names.contains(install.as_str()))
                        .then_some((i, install))
                })
                .collect()
        };
        list.components
            .values()
            .enumerate()
            .map(|(k, c)| (k, rewrites(c)))
            .filter(|(_, r)| !r.is_empty())
            .collect()
    };
    let (in_systems, in_kustomize) = (renamed(systems), renamed(kustomize));
    for (list, rewrites) in [(systems, in_systems), (kustomize, in_kustomize)] {
        for (k, items) in rewrites {
            let Some((_, component)) = list.components.get_index_mut(k) else {
                continue;
            };
            if let Some(deps) = deps_mut(component) {
                for (i, install) in items {
                    if let Some(Tracked::Leaf(Value::Str(dep), _)) = deps.get_mut(i) {
                        *dep = Arc::from(install);
                    }
                }
            }
        }
    }
}

fn add_crds_barrier(systems: &mut Merged, kustomize: &mut Merged, layer: &str, derived: OriginId) {
    let root = |c: &Component| c.dependencies().is_empty();
    for c in systems
        .components
        .values_mut()
        .chain(kustomize.components.values_mut())
        .filter(|c| root(c))
    {
        append_dependency(c, layer, derived);
    }
}

fn append_dependency(component: &mut Component, name: &str, origin: OriginId) {
    let kind = component.kind;
    let fields = Arc::make_mut(&mut component.fields);
    let deps = fields
        .entry("dependsOn")
        .or_insert_with(|| Tracked::List(Vec::new(), origin));
    if let Tracked::List(items, _) = deps {
        if !items.iter().any(|i| i.as_str() == Some(name)) {
            items.push(leaf(name, origin));
        }
    }
    sort_in_order(kind, fields);
}

/// Every system and plain kustomization outside `global`'s dependency closure depends
/// on its terminal tiers (resources variants, else install).
fn add_global_barrier(
    global: &str,
    systems: &mut Merged,
    kustomize: &mut Merged,
    derived: OriginId,
) {
    // Which node (system or plain kustomization) each dependable name belongs to.
    let mut owner: HashMap<String, String> = HashMap::default();
    let mut edges: HashMap<String, Vec<String>> = HashMap::default();
    for s in systems.components.values() {
        for tier in Tiers::of(s).all() {
            owner.insert(tier.clone(), s.id.to_string());
        }
        owner.insert(s.id.to_string(), s.id.to_string());
        let mut deps = s.dependencies();
        if let Some(Tracked::List(variants, _)) = s.get("resources") {
            for v in variants {
                if let Some(Tracked::List(items, _)) = v.get("dependsOn") {
                    deps.extend(items.iter().filter_map(|d| d.as_str().map(str::to_string)));
                }
            }
        }
        edges.insert(s.id.to_string(), deps);
    }
    for k in kustomize.components.values() {
        owner.insert(k.id.to_string(), k.id.to_string());
        edges.insert(k.id.to_string(), k.dependencies());
    }
    let mut closure: BTreeSet<String> = BTreeSet::from([global.to_string()]);
    let mut stack = vec![global.to_string()];
    while let Some(node) = stack.pop() {
        for dep in edges.get(&node).into_iter().flatten() {
            if let Some(o) = owner.get(dep) {
                if closure.insert(o.clone()) {
                    stack.push(o.clone());
                }
            }
        }
    }
    let Some(system) = systems.components.get(global) else {
        return;
    };
    let terminal = Tiers::of(system).terminal();
    for c in systems
        .components
        .values_mut()
        .chain(kustomize.components.values_mut())
        .filter(|c| !closure.contains(&*c.id))
    {
        for tier in &terminal {
            append_dependency(c, tier, derived);
        }
    }
}
