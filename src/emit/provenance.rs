//! `bpc compose --provenance`: the blueprint with the origin of every value — a
//! trailing comment in YAML (`# facets/provider-aws.yaml:12 (aws, 200, merge)`, still
//! valid YAML), or with JSON a parallel document of the same shape holding origins.

use crate::compose::face::Composition;
use crate::compose::model::component::Merged;
use crate::compose::model::origin::{Contributor, Origin};
use crate::compose::model::tracked::Tracked;
use crate::emit::Pieces;
use crate::expr::{Map, Value};
use crate::files::FileMap;
use crate::template::Template;
use std::collections::HashMap;

/// A path inside the blueprint value.
pub type Path = Vec<PathSeg>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// One line naming where a value came from: `file:line:col (facet, ordinal, strategy)`.
pub fn describe(origin: &Origin, template: &Template, files: &FileMap) -> String {
    let strategy = origin.strategy.as_str();
    match &origin.contributor {
        Contributor::Facet(id) => {
            let name = template.facet(*id).map_or("?", |f| f.name.as_str());
            // A facet of a local source is named with its source: `platform/network`.
            let name = match template.upstream_name(id.template) {
                Some(source) => format!("{source}/{name}"),
                None => name.to_string(),
            };
            let deferred = if origin.deferred { ", deferred" } else { "" };
            format!(
                "{} ({name}, {}, {strategy}{deferred})",
                files.describe(origin.span),
                origin.ordinal
            )
        }
        Contributor::Base => format!("{} (blueprint.yaml)", files.describe(origin.span)),
        Contributor::Overlay => {
            let deferred = if origin.deferred { ", deferred" } else { "" };
            format!(
                "{} (context blueprint{deferred})",
                files.describe(origin.span)
            )
        }
        Contributor::ContextPatch => format!("{} (context patch)", files.describe(origin.span)),
        Contributor::Context => "context values".to_string(),
        Contributor::Derived(rule) => format!("bpc: {}", rule.says()),
    }
}

fn walk(
    t: &Tracked,
    path: &mut Path,
    out: &mut HashMap<Path, String>,
    describe: &dyn Fn(&Tracked) -> String,
) {
    out.insert(path.clone(), describe(t));
    match t {
        Tracked::Map(entries, _) => {
            for (k, v) in entries.iter() {
                path.push(PathSeg::Key(k.to_string()));
                walk(v, path, out, describe);
                path.pop();
            }
        }
        Tracked::List(items, _) => {
            for (i, v) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                walk(v, path, out, describe);
                path.pop();
            }
        }
        Tracked::Leaf(..) => {}
    }
}

/// Origin descriptions by path, for every value that came from a component field.
pub fn origins(
    template: &Template,
    composition: &Composition,
    files: &FileMap,
) -> HashMap<Path, String> {
    let mut out = HashMap::new();
    let describe_tracked =
        |t: &Tracked| describe(&composition.origins.get(t.origin()), template, files);
    for (key, merged) in [
        ("terraform", &composition.terraform),
        ("kustomize", &composition.kustomize),
        ("flux", &composition.flux),
    ] {
        list(key, merged, &mut out, &describe_tracked);
    }
    out
}

fn list(
    key: &str,
    merged: &Merged,
    out: &mut HashMap<Path, String>,
    describe: &dyn Fn(&Tracked) -> String,
) {
    for (i, component) in merged.components.values().enumerate() {
        for (field, value) in component.fields.iter() {
            let mut path = vec![
                PathSeg::Key(key.to_string()),
                PathSeg::Index(i),
                PathSeg::Key((*field).to_string()),
            ];
            walk(value, &mut path, out, describe);
        }
    }
}

pub fn yaml(template: &Template, composition: &Composition, files: &FileMap) -> Pieces {
    let map = origins(template, composition, files);
    let hook = |path: &[crate::emit::PathSegment<'_>]| {
        let owned: Path = path
            .iter()
            .map(|s| match s {
                crate::emit::PathSegment::Key(k) => PathSeg::Key((*k).to_string()),
                crate::emit::PathSegment::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        map.get(&owned).cloned()
    };
    crate::emit::to_yaml_with_comments(&composition.blueprint, &hook)
}

/// `{"blueprint": …, "provenance": …}` where provenance mirrors the blueprint's
/// component lists with an origin string at every value.
pub fn json(
    template: &Template,
    composition: &Composition,
    files: &FileMap,
) -> Result<String, String> {
    let describe_tracked =
        |t: &Tracked| describe(&composition.origins.get(t.origin()), template, files);
    let mut prov = Map::default();
    for (key, merged) in [
        ("terraform", &composition.terraform),
        ("kustomize", &composition.kustomize),
        ("flux", &composition.flux),
    ] {
        let items: Vec<Value> = merged
            .components
            .values()
            .map(|c| {
                let fields: Map = c
                    .fields
                    .iter()
                    .map(|(f, t)| ((*f).into(), mirror(t, &describe_tracked)))
                    .collect();
                Value::map(fields)
            })
            .collect();
        prov.insert(key.into(), Value::list(items));
    }
    let mut doc = Map::default();
    doc.insert("blueprint".into(), composition.blueprint.clone());
    doc.insert("provenance".into(), Value::map(prov));
    crate::emit::to_json(&Value::map(doc)).map_err(|e| e.to_string())
}

fn mirror(t: &Tracked, describe: &dyn Fn(&Tracked) -> String) -> Value {
    match t {
        Tracked::Leaf(..) => Value::str(describe(t)),
        Tracked::List(items, _) => Value::list(items.iter().map(|i| mirror(i, describe)).collect()),
        Tracked::Map(entries, _) => Value::map(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), mirror(v, describe)))
                .collect(),
        ),
    }
}
