//! The composed blueprint as one ordered value (S10):
//! `kind, apiVersion, metadata, repository, sources, terraform, kustomize`, then
//! anything else; component fields in the order of [`crate::compose::model::fields`].

use crate::compose::model::component::{Component, Merged};
use crate::compose::model::tracked::Tracked;
use crate::expr::{Map, Value};
use crate::template::fields::field_for;
use crate::template::ComponentKind;
use std::sync::Arc;

const KIND: &str = "Blueprint";
/// A flux tier's fields are a kustomization's.
const TIER: ComponentKind = ComponentKind::Kustomize;
/// The name of the source a template's own components come from.
pub const TEMPLATE_SOURCE: &str = "template";
pub const API_VERSION: &str = "blueprints.windsorcli.dev/v1alpha1";

/// S9 clean-up, applied once after merging: `""` items dropped from inputs, name
/// lists and substitutions; empty `dependsOn` dropped.
pub fn clean(merged: &mut Merged) {
    let mut components: Vec<&mut Component> = merged.components.values_mut().collect();
    let threads = crate::parallel::cores().min(components.len() / COMPONENTS_PER_THREAD);
    crate::parallel::for_each_mut(&mut components, threads, |c| clean_component(c));
}

/// Components per thread below which a thread costs more than it saves, for the
/// per-component steps after merging.
pub const COMPONENTS_PER_THREAD: usize = 1024;

/// [`clean`] for one component: a function of its kind and fields alone.
pub fn clean_component(component: &mut Component) {
    let kind = component.kind;
    let cleaned = |name: &str| field_for(kind, name).is_some_and(|f| f.cleaned);
    // Fields are shared with the step that set them (copy-on-write): only a
    // component that actually changes gets its own copy.
    if component
        .fields
        .iter()
        .any(|(name, value)| cleaned(name) && value.has_empty_strings())
    {
        for (name, value) in Arc::make_mut(&mut component.fields).iter_mut() {
            if cleaned(name) && value.has_empty_strings() {
                value.drop_empty_strings();
            }
        }
    }
    if matches!(component.get("dependsOn"), Some(Tracked::List(items, _)) if items.is_empty()) {
        Arc::make_mut(&mut component.fields).shift_remove("dependsOn");
    }
}

/// Whether a component's field (or, with [`ComponentKind::Kustomize`], a tier's) is
/// one the Windsor CLI holds as a Go map, written with its keys sorted at every depth
/// (S10). (`secrets` is a map of names to a struct; see [`sort_secrets`].)
fn go_map(kind: ComponentKind, name: &str) -> bool {
    field_for(kind, name).is_some_and(|f| f.go_map)
}

/// Whether Windsor leaves the field out of its blueprint when it is empty (Go's
/// `omitempty`).
fn omit_empty(kind: ComponentKind, name: &str) -> bool {
    field_for(kind, name).is_some_and(|f| f.omit_empty)
}

/// The fields of a flux secret, in the order Windsor writes them.
const SECRET_FIELDS: &[&str] = &["namespaces", "data"];

/// A component as the blueprint writes it (its fields are kept in the table's order
/// from collection on), with its Go maps sorted (S10).
pub fn component_value(component: &Component) -> Value {
    let map: Map = component
        .fields
        .iter()
        .map(|(k, v)| {
            let mut value = v.to_value();
            if go_map(component.kind, k) {
                sort_keys_deep(&mut value);
            } else if *k == "secrets" {
                sort_secrets(&mut value);
            } else if matches!(*k, "install" | "resources") {
                sort_tier_maps(&mut value);
                drop_empty_tier_fields(&mut value);
            }
            (field_key(k), value)
        })
        .filter(|(k, v)| !(omit_empty(component.kind, k) && is_empty_collection(v)))
        .collect();
    Value::map(map)
}

/// The key a field is written under, shared by every component of the thread's
/// compositions (one allocation per field name, not one per field of each component).
fn field_key(name: &'static str) -> Arc<str> {
    thread_local! {
        static KEYS: std::cell::RefCell<rustc_hash::FxHashMap<&'static str, Arc<str>>> =
            std::cell::RefCell::default();
    }
    KEYS.with(|keys| {
        Arc::clone(
            keys.borrow_mut()
                .entry(name)
                .or_insert_with(|| Arc::from(name)),
        )
    })
}

fn is_empty_collection(v: &Value) -> bool {
    match v {
        Value::List(items) => items.is_empty(),
        Value::Map(entries) => entries.is_empty(),
        _ => false,
    }
}

/// [`omit_empty`] inside a tier, or each tier of a list.
fn drop_empty_tier_fields(value: &mut Value) {
    match value {
        Value::Map(tier)
            if tier
                .iter()
                .any(|(k, v)| omit_empty(TIER, k) && is_empty_collection(v)) =>
        {
            Arc::make_mut(tier).retain(|k, v| !(omit_empty(TIER, k) && is_empty_collection(v)));
        }
        Value::List(tiers) => Arc::make_mut(tiers)
            .iter_mut()
            .for_each(drop_empty_tier_fields),
        _ => {}
    }
}

/// Sorts the Go-map fields of a tier, or of each tier of a list.
fn sort_tier_maps(value: &mut Value) {
    match value {
        Value::Map(tier) => {
            for (k, v) in Arc::make_mut(tier).iter_mut() {
                if go_map(TIER, k) {
                    sort_keys_deep(v);
                }
            }
        }
        Value::List(tiers) => Arc::make_mut(tiers).iter_mut().for_each(sort_tier_maps),
        _ => {}
    }
}

/// Secrets by name; each secret's fields in Windsor's order, its `data` sorted.
fn sort_secrets(value: &mut Value) {
    let Value::Map(secrets) = value else {
        return;
    };
    let secrets = Arc::make_mut(secrets);
    secrets.sort_keys();
    for secret in secrets.values_mut() {
        if let Value::Map(fields) = secret {
            let fields = Arc::make_mut(fields);
            fields.sort_by_cached_key(|k, _| {
                SECRET_FIELDS
                    .iter()
                    .position(|f| **f == **k)
                    .unwrap_or(usize::MAX)
            });
            if let Some(data) = fields.get_mut("data") {
                sort_keys_deep(data);
            }
        }
    }
}

/// Sorts the keys of every map in `value`, as Go writes a `map[string]any`.
pub fn sort_keys_deep(value: &mut Value) {
    match value {
        Value::Map(map) => {
            let map = Arc::make_mut(map);
            map.sort_keys();
            map.values_mut().for_each(sort_keys_deep);
        }
        Value::List(items) => Arc::make_mut(items).iter_mut().for_each(sort_keys_deep),
        _ => {}
    }
}

/// What the blueprint is assembled from.
pub struct Parts<'a> {
    /// The template's `blueprint.yaml` as a plain value.
    pub base: Option<&'a Value>,
    pub context: &'a str,
    /// The finished component lists, each component as [`component_value`] gives it.
    pub terraform: Vec<Value>,
    pub kustomize: Vec<Value>,
    pub flux: Vec<Value>,
    /// Lists of components left to the writer: each written as an empty list where
    /// it goes (see `assemble::Assembly::components_apart`).
    pub apart: &'a [&'a str],
    pub backend: Option<&'a str>,
    pub crds: &'a [String],
    pub substitutions: &'a Map,
    pub config_maps: Vec<(&'a str, Map)>,
    /// Used when the base blueprint sets no repository.
    pub repository: Option<Value>,
    pub messages: Vec<Value>,
    /// The published blueprint the template was pulled from (S14), if any.
    pub published: Option<&'a crate::template::Published>,
}

/// Fields of the base blueprint that assembly writes itself.
const ASSEMBLED: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "backend",
    "repository",
    "sources",
    "terraform",
    "crds",
    "kustomize",
    "flux",
    "substitutions",
    "configMaps",
    "messages",
];

/// The whole blueprint, fields in the Windsor CLI's order (S10): `kind, apiVersion,
/// metadata, backend, repository, sources, terraform, crds, kustomize, flux,
/// substitutions, configMaps, messages`, then anything else the base blueprint has.
/// Empty lists and maps are left out, except `sources`.
pub fn assemble(parts: Parts<'_>) -> Value {
    let base_map = parts.base.and_then(Value::as_map);
    let from_base = |k: &str| {
        base_map
            .and_then(|m| m.get(k))
            .filter(|v| !v.is_nil())
            .cloned()
    };
    let mut out = Map::default();
    out.insert("kind".into(), Value::str(KIND));
    out.insert("apiVersion".into(), Value::str(API_VERSION));
    let mut metadata = Map::default();
    metadata.insert("name".into(), Value::str(parts.context));
    metadata.insert(
        "description".into(),
        Value::str(format!("Blueprint for the {} context", parts.context)),
    );
    out.insert("metadata".into(), Value::map(metadata));
    if let Some(backend) = parts.backend {
        out.insert("backend".into(), Value::str(backend));
    }
    if let Some(repo) = from_base("repository").or(parts.repository) {
        out.insert("repository".into(), repo);
    }
    out.insert(
        "sources".into(),
        Value::list(sources(from_base("sources"), parts.crds, parts.published)),
    );
    let mut crds: Vec<&String> = parts.crds.iter().collect();
    crds.sort();
    crds.dedup();
    let optional: [(&str, Value); 7] = [
        ("terraform", Value::list(parts.terraform)),
        (
            "crds",
            Value::list(crds.into_iter().map(|c| Value::str(c.as_str())).collect()),
        ),
        ("kustomize", Value::list(parts.kustomize)),
        ("flux", Value::list(parts.flux)),
        ("substitutions", Value::map(parts.substitutions.clone())),
        (
            "configMaps",
            Value::map(
                parts
                    .config_maps
                    .into_iter()
                    .filter(|(_, data)| !data.is_empty())
                    .map(|(name, data)| (name.into(), Value::map(data)))
                    .collect(),
            ),
        ),
        ("messages", Value::list(parts.messages)),
    ];
    for (key, mut value) in optional {
        if matches!(key, "substitutions" | "configMaps") {
            sort_keys_deep(&mut value);
        }
        let empty = match &value {
            Value::List(items) => items.is_empty(),
            Value::Map(entries) => entries.is_empty(),
            _ => false,
        };
        if !empty || parts.apart.contains(&key) {
            out.insert(key.into(), value);
        }
    }
    if let Some(m) = base_map {
        for (k, v) in m.iter() {
            if !ASSEMBLED.contains(&&**k) && !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::map(out)
}

/// The `name` of a `sources:` entry.
pub fn source_name(source: &Value) -> Option<&str> {
    source
        .as_map()
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
}

/// The base blueprint's sources, led by the template's own (`template`), which Flux
/// installs itself when the blueprint brings no CRDs of its own.
fn sources(
    base: Option<Value>,
    crds: &[String],
    published: Option<&crate::template::Published>,
) -> Vec<Value> {
    let listed: Vec<Value> = base
        .as_ref()
        .and_then(Value::as_list)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    if let Some(p) = published {
        // A published blueprint is listed as its source, by URL, not as `template`
        // (S14); its entry of the context's blueprint replaces this one.
        let mut own = Map::default();
        own.insert("name".into(), Value::str(p.name.as_str()));
        own.insert("url".into(), Value::str(p.url.as_str()));
        let mut out = vec![Value::map(own)];
        out.extend(
            listed.into_iter().filter(
                |v| !matches!(source_name(v), Some(n) if n == p.name || n == TEMPLATE_SOURCE),
            ),
        );
        return out;
    }
    let named_template = |v: &Value| source_name(v) == Some(TEMPLATE_SOURCE);
    if listed.iter().any(named_template) {
        return listed;
    }
    let mut template = Map::default();
    template.insert("name".into(), Value::str(TEMPLATE_SOURCE));
    if crds.is_empty() {
        template.insert("install".into(), Value::Bool(true));
    }
    let mut out = vec![Value::map(template)];
    out.extend(listed);
    out
}

/// A published blueprint's CRDs belong to its own `sources:` entry, as the Windsor CLI
/// writes them: moved there from the top-level `crds` (S14).
pub fn published_crds(blueprint: &mut Value, published: &crate::template::Published) {
    let Value::Map(out) = blueprint else { return };
    let out = Arc::make_mut(out);
    let Some(crds) = out.get("crds").cloned() else {
        return;
    };
    let Some(Value::List(sources)) = out.get_mut("sources") else {
        return;
    };
    let sources = Arc::make_mut(sources);
    let Some(Value::Map(entry)) = sources
        .iter_mut()
        .find(|s| source_name(s) == Some(published.name.as_str()))
    else {
        return;
    };
    Arc::make_mut(entry).insert("crds".into(), crds);
    out.shift_remove("crds");
}
