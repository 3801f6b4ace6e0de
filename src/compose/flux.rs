//! Stage 9, flux: the finished flux systems (`flux:` entries in system form,
//! docs/format.md, shaped by stage 8) compiled, once, into the Flux Kustomizations
//! they stand for. Validation checks these, `bpc render` writes them, and the test
//! matcher and `bpc explain` read them; nothing expands a system again.
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
//!
//! A plain kustomization without a `path` gets its name as path here (the blueprint
//! leaves it out, the Flux Kustomization has one).

use crate::compose::merge::Lists;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::fields::{sort_in_order, FieldMap};
use crate::compose::model::origin::{Origins, Rule};
use crate::compose::model::tier_names::Tiers;
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use crate::files::Diagnostic;
use crate::template::fields::field_for;
use crate::template::ComponentKind;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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

fn leaf(s: &str, like: &Tracked) -> Tracked {
    Tracked::Leaf(Value::str(s), like.origin())
}

/// Every Flux Kustomization the finished `lists` stand for: the plain ones, in the
/// blueprint's order, then each system's tiers, systems in the blueprint's order.
/// A tier may not take the name of a plain kustomization.
pub fn compile(lists: &Lists, origins: &mut Origins) -> Result<Merged, Vec<Diagnostic>> {
    let mut kustomizations = lists.kustomize.clone();
    default_paths(&mut kustomizations, origins);
    expand(&lists.flux, &mut kustomizations, origins)?;
    Ok(kustomizations)
}

/// A Flux Kustomization's `path` defaults to its name.
fn default_paths(kustomize: &mut Merged, origins: &mut Origins) {
    for component in kustomize.components.values_mut() {
        if component.get("path").is_none() {
            let origin = origins.add_derived(Rule::PathFromName);
            let name = component.id.clone();
            let fields = Arc::make_mut(&mut component.fields);
            fields.insert("path", Tracked::Leaf(Value::str(name), origin));
            sort_in_order(component.kind, fields);
        }
    }
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
    let mut f = FieldMap::default();
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
        id: Arc::from(spec.name),
        fields: Arc::new(f),
        history: system.history.clone(),
    }
}

/// Expands every system into `kustomize`. Generated names must not collide with
/// kustomizations defined directly.
fn expand(
    systems: &Merged,
    kustomize: &mut Merged,
    origins: &Origins,
) -> Result<(), Vec<Diagnostic>> {
    let tiers: HashMap<String, Tiers> = systems
        .components
        .values()
        .map(|s| (s.id.to_string(), Tiers::of(s)))
        .collect();
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
        let t = &tiers[&*s.id];
        let anchor = s
            .get("name")
            .cloned()
            .unwrap_or(Tracked::Leaf(Value::str(s.id.as_ref()), Default::default()));
        let base_path = text(s.get("path")).unwrap_or_else(|| s.id.to_string());
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
        if let Some(plain) = kustomize.components.get(&c.id) {
            errors.push(collision(&c, plain, origins));
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
            add_global_dependency(&tiers[&*s.id], &tiers, kustomize);
        }
    }
    Ok(())
}

/// The error for a tier named like the plain kustomization `plain`, at both names.
fn collision(tier: &Component, plain: &Component, origins: &Origins) -> Diagnostic {
    let at = |c: &Component| c.get("name").map(|n| origins.span(n.origin()));
    let mut d = Diagnostic::error(format!(
        "flux system tier `{}` has the name of a kustomization defined directly",
        tier.id
    ));
    if let Some(span) = at(plain) {
        d = d.with_primary(span, "the kustomization");
    }
    if let Some(span) = at(tier) {
        d = d.with_secondary(span, "the flux system whose tier takes that name");
    }
    d
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
        if let Some(c) = kustomize.components.get(n.as_str()) {
            for d in deps_of(c) {
                if closure.insert(d.clone()) {
                    stack.push(d);
                }
            }
        }
    }
    let terminal = t.terminal();
    for c in kustomize.components.values_mut() {
        if closure.contains(&*c.id) || behind_install.contains(c.id.as_ref()) {
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
    use crate::compose::model::origin::Origins;

    const SYSTEM: &str = "flux:\n  - name: ingress\n    dependsOn: [base]\n    install:\n      components: [crds]\n    resources:\n      - name: public\n      - name: private\n";

    #[test]
    fn a_system_becomes_an_install_tier_and_a_tier_per_variant() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet("a", &format!("kustomize:\n  - name: base\n{SYSTEM}")),
        )]);
        let mut origins = Origins::default();
        let compiled = fx.compiled(&mut origins);
        let all = compiled.kustomizations.expect("the tiers compile");
        assert_eq!(
            ids(&all),
            [
                "base",
                "ingress-install",
                "ingress-resources-public",
                "ingress-resources-private"
            ]
        );
        // A plain kustomization has a path; the system's dependencies go to its install
        // tier; its variants follow it.
        assert_eq!(json(&all, "base"), r#"{"name":"base","path":"base"}"#);
        assert_eq!(
            json(&all, "ingress-install"),
            r#"{"name":"ingress-install","path":"ingress/install","source":"template","dependsOn":["base"],"components":["crds"]}"#
        );
        assert_eq!(
            json(&all, "ingress-resources-public"),
            r#"{"name":"ingress-resources-public","path":"ingress/resources","source":"template","dependsOn":["ingress-install"]}"#
        );
        // The blueprint keeps the system as a system, and its plain kustomization
        // without a path.
        assert_eq!(ids(&compiled.lists.flux), ["ingress"]);
        assert_eq!(
            json(&compiled.lists.kustomize, "base"),
            r#"{"name":"base"}"#
        );
    }

    #[test]
    fn the_tiers_are_compiled_from_the_shaped_system() {
        // Shaped first: the install tier of empty components is dropped (so the
        // variant waits on the system's dependencies), the duration is Go's, and with
        // CRDs in the blueprint the root depends on their layer.
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "crds: [cert-manager]\nflux:\n  - name: web\n    install:\n      components: ['']\n    resources:\n      - interval: 90s\n",
            ),
        )]);
        let mut origins = Origins::default();
        let compiled = fx.compiled(&mut origins);
        let all = compiled.kustomizations.expect("the tiers compile");
        assert_eq!(ids(&all), ["web-resources"]);
        assert_eq!(
            json(&all, "web-resources"),
            r#"{"name":"web-resources","path":"web/resources","source":"template","dependsOn":["crds"],"interval":"1m30s"}"#
        );
        assert_eq!(compiled.crds_layer.as_deref(), Some("crds"));
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
        let errors = fx
            .compiled(&mut origins)
            .kustomizations
            .expect_err("the names collide");
        assert_eq!(
            messages(&errors),
            "flux system tier `ingress-install` has the name of a kustomization defined directly"
        );
        // Both names are pointed at.
        let error = &errors[0];
        let at = |span| fx.template.files.describe(span);
        let primary = error.primary.as_ref().expect("a primary label");
        assert_eq!(at(primary.span), "template!facets/a.yaml:7:11");
        let secondary: Vec<String> = error.secondary.iter().map(|l| at(l.span)).collect();
        assert_eq!(secondary, ["template!facets/a.yaml:9:11"]);
    }
}
