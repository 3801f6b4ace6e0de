//! Stage 8 (the data half of emit): the composed blueprint as one ordered value (S10):
//! `kind, apiVersion, metadata, repository, sources, terraform, kustomize`, then
//! anything else; component fields in the order of [`super::fields`].

use super::merge::{Component, Merged};
use super::origin::{Origin, Origins, Source};
use super::tracked::Tracked;
use crate::expr::{Map, Value};
use crate::template::{ComponentKind, Strategy};
use std::sync::Arc;

pub const KIND: &str = "Blueprint";
pub const API_VERSION: &str = "blueprints.windsorcli.dev/v1alpha1";

/// S9 clean-up and defaults, applied once after merging: `""` items dropped from
/// inputs, name lists and substitutions; empty `dependsOn` dropped; a kustomization's
/// `path` defaults to its name.
pub fn finish(merged: &mut Merged, origins: &mut Origins) {
    for component in merged.components.values_mut() {
        let cleaned = |name: &str| CLEANED_FIELDS.contains(&name);
        // Fields are shared with the step that set them (copy-on-write): only a
        // component that actually changes gets its own copy.
        if component
            .fields
            .iter()
            .any(|(name, value)| cleaned(name) && value.has_empty_strings())
        {
            for (name, value) in Arc::make_mut(&mut component.fields).iter_mut() {
                if cleaned(name) {
                    value.drop_empty_strings();
                }
            }
        }
        if matches!(component.get("dependsOn"), Some(Tracked::List(items, _)) if items.is_empty()) {
            Arc::make_mut(&mut component.fields).shift_remove("dependsOn");
        }
        if component.kind == ComponentKind::Kustomize && component.get("path").is_none() {
            let origin = origins.add(Origin {
                source: Source::Derived,
                span: Default::default(),
                ordinal: 0,
                strategy: Strategy::Merge,
                expression: None,
                deferred: false,
            });
            let name = component.id.clone();
            let fields = Arc::make_mut(&mut component.fields);
            fields.insert("path", Tracked::Leaf(Value::str(name), origin));
            super::fields::sort_in_order(component.kind, fields);
        }
    }
}

/// The fields whose `""` items the S9 clean-up drops.
const CLEANED_FIELDS: &[&str] = &[
    "inputs",
    "substitutions",
    "dependsOn",
    "components",
    "cleanup",
];

pub fn component_value(component: &Component) -> Value {
    let map: Map = component
        .fields
        .iter()
        .map(|(k, v)| (Arc::from(*k), v.to_value()))
        .collect();
    Value::map(map)
}

/// The whole blueprint. `base` is the template's `blueprint.yaml` as a plain value.
pub fn assemble(
    base: Option<&Value>,
    context: &str,
    terraform: &Merged,
    kustomize: &Merged,
    extra: Vec<(&str, Value)>,
) -> Value {
    let base_map = base.and_then(Value::as_map);
    let from_base = |k: &str| base_map.and_then(|m| m.get(k)).cloned();
    let mut out = Map::default();
    out.insert("kind".into(), Value::str(KIND));
    out.insert("apiVersion".into(), Value::str(API_VERSION));
    let mut metadata = Map::default();
    metadata.insert("name".into(), Value::str(context));
    metadata.insert(
        "description".into(),
        Value::str(format!("Blueprint for the {context} context")),
    );
    out.insert("metadata".into(), Value::map(metadata));
    if let Some(repo) = from_base("repository").filter(|r| !r.is_nil()) {
        out.insert("repository".into(), repo);
    }
    out.insert(
        "sources".into(),
        from_base("sources")
            .filter(|s| !s.is_nil())
            .unwrap_or_else(|| Value::list(Vec::new())),
    );
    out.insert(
        "terraform".into(),
        Value::list(terraform.components.values().map(component_value).collect()),
    );
    out.insert(
        "kustomize".into(),
        Value::list(kustomize.components.values().map(component_value).collect()),
    );
    for (k, v) in extra {
        out.insert(k.into(), v);
    }
    if let Some(m) = base_map {
        for (k, v) in m.iter() {
            let known = matches!(
                &**k,
                "kind"
                    | "apiVersion"
                    | "metadata"
                    | "repository"
                    | "sources"
                    | "terraform"
                    | "kustomize"
            );
            if !known && !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::map(out)
}
