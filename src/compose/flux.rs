//! Stage 8, flux: the merged lists tidied ([`crate::compose::shared::blueprint`]) and
//! flux systems (`flux:` entries in system form, docs/format.md) compiled into the
//! Flux Kustomizations they stand for:
//!
//! * `install` → `<name>-install` at `<path>/install` (omitted when every component
//!   of the tier evaluated to empty);
//! * each `resources` variant → `<name>-resources` (unnamed) or
//!   `<name>-resources-<variant>` at `<path>/resources`, depending on the install tier;
//! * system `dependsOn` names other systems (a bare name means its install tier) and
//!   attaches to the install tier, else to every variant;
//! * `globalDependency: true`: every kustomization and system outside the system's own
//!   dependency closure depends on the system's terminal tier (its variants, else its
//!   install); as any system dependency, it reaches a system's install tier, or its
//!   resources tiers when it has none.

use crate::compose::merge::Lists;
use crate::compose::merge::{Component, Merged};
use crate::compose::shared::blueprint;
use crate::compose::shared::fields::sort_in_order;
use crate::compose::shared::origin::Origins;
use crate::compose::shared::tier_names;
use crate::compose::shared::tracked::Tracked;
use crate::expr::Value;
use crate::files::Diagnostic;
use crate::template::fields::field_for;
use crate::template::ComponentKind;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

struct Tiers {
    install: Option<String>,
    variants: Vec<String>,
}

impl Tiers {
    fn terminal(&self) -> Vec<String> {
        if self.variants.is_empty() {
            self.install.iter().cloned().collect()
        } else {
            self.variants.clone()
        }
    }
}

fn text(t: Option<&Tracked>) -> Option<String> {
    t.and_then(Tracked::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn names(t: Option<&Tracked>) -> Vec<Tracked> {
    match t {
        Some(Tracked::List(items, _)) => items.clone(),
        _ => Vec::new(),
    }
}

/// True when the tier lists components and every one of them is empty.
fn pruned(tier: &Tracked) -> bool {
    match tier.get("components") {
        Some(Tracked::List(items, _)) => items.iter().all(|i| i.as_str() == Some("")),
        _ => false,
    }
}

fn leaf(s: &str, like: &Tracked) -> Tracked {
    Tracked::Leaf(Value::str(s), like.origin())
}

/// Tidies the merged lists and returns every Flux Kustomization the blueprint stands
/// for: the plain ones and each system's tiers, where every tier has its own name
/// (dependencies are validated on these).
pub fn kustomizations(lists: &mut Lists, origins: &mut Origins) -> Result<Merged, Vec<Diagnostic>> {
    blueprint::finish(&mut lists.terraform, origins);
    blueprint::clean(&mut lists.kustomize);
    resolve_plain_dependencies(&lists.flux, &mut lists.kustomize);
    let mut kustomizations = lists.kustomize.clone();
    expand(&lists.flux, &mut kustomizations)?;
    blueprint::finish(&mut kustomizations, origins);
    Ok(kustomizations)
}

/// One tier of a system, as a kustomization is made from it.
struct TierSpec<'a> {
    name: &'a str,
    path: String,
    /// The tier's own fields (`install`, or one `resources` variant).
    tier: Option<&'a Tracked>,
    deps: Vec<Tracked>,
    /// Whether the system's `secrets` go to this tier.
    secrets: bool,
}

/// The kustomization tier `spec` of `system` stands for; `anchor` is what its
/// generated name and path are attributed to, `map_dep` maps a dependency name to the
/// tiers it means.
fn tier_component(
    system: &Component,
    anchor: &Tracked,
    spec: TierSpec<'_>,
    map_dep: &dyn Fn(&Tracked) -> Vec<Tracked>,
) -> Component {
    let mut f: IndexMap<&'static str, Tracked> = IndexMap::new();
    f.insert("name", leaf(spec.name, anchor));
    f.insert("path", leaf(&spec.path, anchor));
    if let Some(src) = system.get("source") {
        f.insert("source", src.clone());
    }
    for key in ["enabled", "destroy"] {
        if let Some(v) = system.get(key) {
            f.insert(key, v.clone());
        }
    }
    let mut all_deps = spec.deps;
    if let Some(Tracked::Map(entries, _)) = spec.tier {
        for (k, v) in entries.iter() {
            if &**k == "name" {
                continue;
            }
            let Some(field) = field_for(ComponentKind::Kustomize, k) else {
                continue;
            };
            if field.name == "dependsOn" {
                all_deps.extend(names(Some(v)).iter().flat_map(map_dep));
            } else {
                f.insert(field.name, v.clone());
            }
        }
    }
    if !all_deps.is_empty() {
        f.insert("dependsOn", Tracked::List(all_deps, anchor.origin()));
    }
    if spec.secrets {
        if let Some(sec) = system.get("secrets") {
            f.insert("secrets", sec.clone());
        }
    }
    sort_in_order(ComponentKind::Kustomize, &mut f);
    Component {
        kind: ComponentKind::Kustomize,
        id: spec.name.to_string(),
        fields: Arc::new(f),
        history: system.history.clone(),
    }
}

/// Expands every system into `kustomize`. Generated names must not collide with
/// kustomizations defined directly.
pub fn expand(systems: &Merged, kustomize: &mut Merged) -> Result<(), Vec<Diagnostic>> {
    let mut tiers: HashMap<String, Tiers> = HashMap::new();
    for s in systems.components.values() {
        let install = s
            .get("install")
            .filter(|t| !pruned(t))
            .map(|_| tier_names::install(&s.id));
        let variants = names(s.get("resources"))
            .iter()
            .map(|v| tier_names::variant(&s.id, &crate::compose::merge::variant_name(v)))
            .collect();
        tiers.insert(s.id.clone(), Tiers { install, variants });
    }
    // A system named in `dependsOn` means its install tier (or its terminal tiers when
    // it has none); any other name is a plain kustomization.
    let map_dep = |dep: &Tracked| -> Vec<Tracked> {
        match dep.as_str().and_then(|d| tiers.get(d)) {
            Some(t) => match &t.install {
                Some(i) => vec![leaf(i, dep)],
                None => t.terminal().iter().map(|n| leaf(n, dep)).collect(),
            },
            None => vec![dep.clone()],
        }
    };
    let mut errors = Vec::new();
    let mut generated: Vec<Component> = Vec::new();
    for s in systems.components.values() {
        let t = &tiers[&s.id];
        let anchor = s
            .get("name")
            .cloned()
            .unwrap_or(Tracked::Leaf(Value::str(s.id.as_str()), Default::default()));
        let base_path = text(s.get("path")).unwrap_or_else(|| s.id.clone());
        let system_deps: Vec<Tracked> = names(s.get("dependsOn"))
            .iter()
            .flat_map(&map_dep)
            .collect();
        if let Some(install_name) = &t.install {
            let spec = TierSpec {
                name: install_name,
                path: format!("{base_path}/install"),
                tier: s.get("install"),
                deps: system_deps.clone(),
                secrets: true,
            };
            generated.push(tier_component(s, &anchor, spec, &map_dep));
        }
        for (variant, vname) in names(s.get("resources")).iter().zip(&t.variants) {
            let deps = match &t.install {
                Some(i) => vec![leaf(i, &anchor)],
                None => system_deps.clone(),
            };
            let secrets = t.install.is_none() && Some(vname) == t.variants.first();
            let spec = TierSpec {
                name: vname,
                path: format!("{base_path}/resources"),
                tier: Some(variant),
                deps,
                secrets,
            };
            generated.push(tier_component(s, &anchor, spec, &map_dep));
        }
    }
    for c in generated {
        if kustomize.components.contains_key(&c.id) {
            errors.push(Diagnostic::error(format!(
                "flux system tier `{}` has the name of a kustomization defined directly",
                c.id
            )));
            continue;
        }
        kustomize.components.insert(c.id.clone(), c);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for s in systems.components.values() {
        let global = matches!(
            s.get("globalDependency"),
            Some(Tracked::Leaf(Value::Bool(true), _))
        );
        if global {
            add_global_dependency(&tiers[&s.id], &tiers, kustomize);
        }
    }
    Ok(())
}

/// Windsor's `resolveTierDependencies` for plain `kustomize:` entries: a `dependsOn`
/// name that is no kustomization but a flux system with an install tier means that
/// install tier (`cni` → `cni-install`). Any other missing name is left for
/// validation to report.
pub fn resolve_plain_dependencies(systems: &Merged, kustomize: &mut Merged) {
    let installs: HashMap<String, String> = systems
        .components
        .values()
        .filter(|s| s.get("install").is_some_and(|t| !pruned(t)))
        .map(|s| (s.id.clone(), tier_names::install(&s.id)))
        .collect();
    if installs.is_empty() {
        return;
    }
    let plain: HashSet<String> = kustomize.components.keys().cloned().collect();
    for c in kustomize.components.values_mut() {
        let needs = names(c.get("dependsOn")).iter().any(|d| {
            d.as_str()
                .is_some_and(|n| !plain.contains(n) && installs.contains_key(n))
        });
        if !needs {
            continue;
        }
        let fields = Arc::make_mut(&mut c.fields);
        if let Some(Tracked::List(items, _)) = fields.get_mut("dependsOn") {
            for item in items.iter_mut() {
                let target = item
                    .as_str()
                    .filter(|n| !plain.contains(*n))
                    .and_then(|n| installs.get(n));
                if let Some(target) = target {
                    *item = leaf(target, item);
                }
            }
        }
    }
}

fn deps_of(c: &Component) -> Vec<String> {
    names(c.get("dependsOn"))
        .iter()
        .filter_map(|d| d.as_str().map(str::to_string))
        .collect()
}

/// Windsor adds a global system's terminal tiers to the `dependsOn` of every plain
/// kustomization and every other *system*; a system's `dependsOn` reaches its install
/// tier only (its resources tiers wait on that install tier), or every resources tier
/// when it has no install tier. So a resources tier behind an install tier gets no
/// barrier of its own.
fn add_global_dependency(t: &Tiers, all: &HashMap<String, Tiers>, kustomize: &mut Merged) {
    let behind_install: HashSet<&str> = all
        .values()
        .filter(|other| other.install.is_some())
        .flat_map(|other| other.variants.iter().map(String::as_str))
        .collect();
    let own: Vec<String> = t
        .install
        .iter()
        .cloned()
        .chain(t.variants.iter().cloned())
        .collect();
    // The system's own dependency closure may not depend on it (that would be a cycle).
    let mut closure: HashSet<String> = own.iter().cloned().collect();
    let mut stack = own.clone();
    while let Some(n) = stack.pop() {
        if let Some(c) = kustomize.components.get(&n) {
            for d in deps_of(c) {
                if closure.insert(d.clone()) {
                    stack.push(d);
                }
            }
        }
    }
    let terminal = t.terminal();
    for c in kustomize.components.values_mut() {
        if closure.contains(&c.id) || behind_install.contains(c.id.as_str()) {
            continue;
        }
        let origin = c.get("name").map(Tracked::origin).unwrap_or_default();
        let fields = Arc::make_mut(&mut c.fields);
        let deps = fields
            .entry("dependsOn")
            .or_insert_with(|| Tracked::List(Vec::new(), origin));
        if let Tracked::List(items, _) = deps {
            for term in &terminal {
                if !items.iter().any(|i| i.as_str() == Some(term)) {
                    items.push(Tracked::Leaf(Value::Str(Arc::from(term.as_str())), origin));
                }
            }
        }
        sort_in_order(ComponentKind::Kustomize, fields);
    }
}

/// Flux systems compiled into their tiers.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, ids, json, messages, Fixture};
    use crate::compose::shared::origin::Origins;

    const SYSTEM: &str = "flux:\n  - name: ingress\n    dependsOn: [base]\n    install:\n      components: [crds]\n    resources:\n      - name: public\n      - name: private\n";

    #[test]
    fn a_system_becomes_an_install_tier_and_a_tier_per_variant() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet("a", &format!("kustomize:\n  - name: base\n{SYSTEM}")),
        )]);
        let mut origins = Origins::default();
        let (_, mut lists) = fx.merged(&mut origins);
        let all = super::kustomizations(&mut lists, &mut origins).expect("the tiers compile");
        assert_eq!(
            ids(&all),
            [
                "base",
                "ingress-install",
                "ingress-resources-public",
                "ingress-resources-private"
            ]
        );
        // The system's dependencies go to its install tier; its variants follow it.
        assert_eq!(
            json(&all, "ingress-install"),
            r#"{"name":"ingress-install","path":"ingress/install","dependsOn":["base"],"components":["crds"]}"#
        );
        assert_eq!(
            json(&all, "ingress-resources-public"),
            r#"{"name":"ingress-resources-public","path":"ingress/resources","dependsOn":["ingress-install"]}"#
        );
        // The blueprint keeps the system as a system.
        assert_eq!(ids(&lists.flux), ["ingress"]);
    }

    #[test]
    fn a_tier_may_not_take_the_name_of_a_plain_kustomization() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "kustomize:\n  - name: base\n  - name: ingress-install\nflux:\n  - name: ingress\n    install:\n      components: [crds]\n",
            ),
        )]);
        let mut origins = Origins::default();
        let (_, mut lists) = fx.merged(&mut origins);
        let errors =
            super::kustomizations(&mut lists, &mut origins).expect_err("the names collide");
        assert_eq!(
            messages(&errors),
            "flux system tier `ingress-install` has the name of a kustomization defined directly"
        );
    }
}
