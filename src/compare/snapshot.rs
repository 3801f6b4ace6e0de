//! What one side of `bpc diff` gives for one context, in the shape the comparison
//! reads: each Terraform component and Flux Kustomization as its fields flattened to
//! `path → value` (each value with its origin, as `bpc explain` names it), the
//! Terraform values (tfvars) under their component, each other rendered file as its
//! own item, and the blueprint's sources. Sensitive values are masked and deferred
//! ones marked here, before anything is compared or shown.

use crate::compose::face::Composition;
use crate::compose::model::component::Merged;
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use crate::files::FileMap;
use crate::render::Rendered;
use crate::template::Template;
use std::collections::BTreeMap;

/// What a masked value reads as.
pub const SENSITIVE: &str = crate::emit::values::SENSITIVE;

/// Fields whose lists are sets to Windsor and Flux: a move of an item is no change.
const UNORDERED: &[&str] = &["dependsOn", "components"];

/// Keys of rendered objects whose lists are sets likewise (a kustomization's
/// `resources`, a Kustomization's `dependsOn` and `components`).
const UNORDERED_RENDERED: &[&str] = &["dependsOn", "components", "resources"];

/// The kinds of item a context is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Terraform,
    Kustomization,
    /// A rendered file that belongs to no Terraform component (Flux objects).
    Rendered,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Terraform => "terraform",
            Kind::Kustomization => "kustomization",
            Kind::Rendered => "rendered",
        }
    }
}

/// One value of an item: how it reads (masked, deferred marked), the value itself for
/// JSON readers (masked too), and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub shown: String,
    /// The value as JSON: the mask for a masked one.
    pub value: serde_json::Value,
    /// The value is a Terraform output known only when applied.
    pub deferred: bool,
    /// What is compared: the shown text, or for a masked value a digest of the
    /// value itself (a changed secret is a change, shown masked on both sides).
    pub key: String,
    pub origin: Option<String>,
}

impl Leaf {
    fn new(value: Shown, origin: Option<String>, secrets: &Secrets) -> Leaf {
        let Shown { text, value } = value;
        let shown = secrets.hide(text.clone());
        let (key, value) = match shown == SENSITIVE {
            true => (digest(&text), serde_json::Value::from(SENSITIVE)),
            false => (shown.clone(), value),
        };
        Leaf {
            shown,
            value,
            deferred: false,
            key,
            origin,
        }
    }
}

/// A value as one line of text, and as JSON.
struct Shown {
    text: String,
    value: serde_json::Value,
}

impl Shown {
    fn text(text: String) -> Shown {
        Shown {
            value: serde_json::Value::from(text.as_str()),
            text,
        }
    }

    fn of(value: &Value) -> Shown {
        Shown {
            text: show(value),
            value: crate::value::json::to_json(value, crate::value::json::ToJson::NonFiniteAsNull),
        }
    }

    fn of_json(value: &serde_json::Value) -> Shown {
        Shown {
            text: show_json(value),
            value: value.clone(),
        }
    }

    /// A set: its items sorted by how they read, shown as one list.
    fn set(mut items: Vec<(String, serde_json::Value)>) -> Shown {
        items.sort_by(|a, b| a.0.cmp(&b.0));
        let (texts, values): (Vec<String>, Vec<serde_json::Value>) = items.into_iter().unzip();
        Shown {
            text: format!("[{}]", texts.join(", ")),
            value: serde_json::Value::Array(values),
        }
    }
}

/// Where a source is: as text reads it (`"oci://…" {"tag":"v1"}`), and as JSON
/// (`{"url", "ref"}`); the mask for both when it holds a secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub shown: String,
    pub value: serde_json::Value,
}

/// A context on one side.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub items: BTreeMap<(Kind, String), BTreeMap<String, Leaf>>,
    /// The blueprint's sources, name → where (`oci://…`, a repository and ref).
    pub sources: BTreeMap<String, Located>,
}

/// The strings of a context's values its schema calls sensitive, which nothing the
/// diff shows may contain.
pub struct Secrets(Vec<String>);

impl Secrets {
    pub fn of(composition: &Composition, schema: Option<&crate::compose::face::Schema>) -> Secrets {
        let values = Value::map((*composition.context).clone());
        let masked = crate::emit::values::masked(&values, schema);
        let mut found = Vec::new();
        sensitive_leaves(&values, &masked, &mut found);
        found.sort();
        found.dedup();
        Secrets(found)
    }

    /// `text`, or the mask when it holds a secret (the whole of a short one, any
    /// part of a longer one).
    fn hide(&self, text: String) -> String {
        let bare = text.trim_matches('"');
        let hit = self
            .0
            .iter()
            .any(|s| s == bare || (s.chars().count() >= 4 && text.contains(s.as_str())));
        if hit {
            SENSITIVE.to_string()
        } else {
            text
        }
    }
}

/// The scalar values of `values` that `masked` replaced by the mask, as text.
fn sensitive_leaves(values: &Value, masked: &Value, out: &mut Vec<String>) {
    if let Value::Str(s) = masked {
        if &**s == SENSITIVE && !matches!(values, Value::Str(v) if &**v == SENSITIVE) {
            scalars(values, out);
            return;
        }
    }
    match (values, masked) {
        (Value::Map(a), Value::Map(b)) => {
            for (k, v) in a.iter() {
                if let Some(m) = b.get(k) {
                    sensitive_leaves(v, m, out);
                }
            }
        }
        (Value::List(a), Value::List(b)) => {
            for (v, m) in a.iter().zip(b.iter()) {
                sensitive_leaves(v, m, out);
            }
        }
        _ => {}
    }
}

fn scalars(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Map(m) => m.values().for_each(|v| scalars(v, out)),
        Value::List(items) => items.iter().for_each(|v| scalars(v, out)),
        Value::Nil => {}
        Value::Str(s) if s.is_empty() => {}
        Value::Str(s) => out.push(s.to_string()),
        other => out.push(crate::value::json::compact(other)),
    }
}

/// A value as one line: strings quoted, everything else as compact JSON.
fn show(value: &Value) -> String {
    match value {
        Value::Str(s) => format!("{s:?}"),
        Value::Nil => "null".to_string(),
        other => crate::value::json::compact(other),
    }
}

fn show_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl Snapshot {
    /// The snapshot of one composed and rendered context.
    pub fn of(
        template: &Template,
        composition: &Composition,
        rendered: &Rendered,
        files: &FileMap,
        secrets: &Secrets,
    ) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let origin = |t: &Tracked| {
            let origin = composition.origins.get(t.origin());
            let text = crate::emit::provenance::describe(&origin, template, files);
            (text, origin.deferred)
        };
        let lists: [(Kind, &Merged); 2] = [
            (Kind::Terraform, &composition.terraform),
            (Kind::Kustomization, &composition.kustomizations),
        ];
        for (kind, merged) in lists {
            for (id, component) in merged.components.iter() {
                let mut fields = BTreeMap::new();
                for (field, value) in component.fields.iter() {
                    flatten(
                        value,
                        field.to_string(),
                        field,
                        &origin,
                        secrets,
                        &mut fields,
                    );
                }
                snapshot.items.insert((kind, id.to_string()), fields);
            }
        }
        snapshot.rendered(rendered, secrets);
        let get = |v: &Value, key: &str| match v {
            Value::Map(m) => m.get(key).cloned(),
            _ => None,
        };
        if let Some(Value::List(sources)) = get(&composition.blueprint, "sources") {
            for source in sources.iter() {
                let name = match get(source, "name") {
                    Some(Value::Str(s)) => s.to_string(),
                    Some(other) => show(&other),
                    None => String::new(),
                };
                // The project's own template is a source without a URL.
                let url = get(source, "url");
                let mut at = url.as_ref().map_or("(no url)".to_string(), show);
                let mut value = serde_json::Map::new();
                if let Some(url) = &url {
                    value.insert("url".to_string(), Shown::of(url).value);
                }
                if let Some(r) = get(source, "ref") {
                    at.push_str(&format!(" {}", crate::value::json::compact(&r)));
                    value.insert("ref".to_string(), Shown::of(&r).value);
                }
                let shown = secrets.hide(at);
                let value = match shown == SENSITIVE {
                    true => serde_json::Value::from(SENSITIVE),
                    false => serde_json::Value::Object(value),
                };
                snapshot.sources.insert(name, Located { shown, value });
            }
        }
        snapshot
    }

    /// The rendered files: `terraform/<id>/terraform.tfvars.json` as the component's
    /// `tfvars.<name>` fields (their origin the input's), other files of a
    /// component's directory as `file <name>`, every other file an item of its own.
    fn rendered(&mut self, rendered: &Rendered, secrets: &Secrets) {
        for (path, bytes) in &rendered.files {
            if path == crate::render::MARKER {
                continue;
            }
            let parsed = parse(path, bytes);
            let component = path
                .strip_prefix("terraform/")
                .and_then(|rest| rest.rsplit_once('/'))
                .filter(|(id, _)| self.items.contains_key(&(Kind::Terraform, id.to_string())));
            match component {
                Some((id, "terraform.tfvars.json")) => {
                    let Some(fields) = self.items.get_mut(&(Kind::Terraform, id.to_string()))
                    else {
                        continue;
                    };
                    let mut values = BTreeMap::new();
                    if let Some(v) = &parsed {
                        flatten_json(v, "tfvars".to_string(), &mut values);
                    }
                    for (at, shown) in values {
                        let input = at.replacen("tfvars", "inputs", 1);
                        let origin = fields
                            .iter()
                            .filter(|(p, _)| {
                                input == **p
                                    || input.starts_with(&format!("{p}."))
                                    || p.starts_with(&input)
                            })
                            .find_map(|(_, leaf)| leaf.origin.clone());
                        fields.insert(at, Leaf::new(shown, origin, secrets));
                    }
                }
                Some((id, name)) => {
                    let shown = String::from_utf8_lossy(bytes).to_string();
                    if let Some(fields) = self.items.get_mut(&(Kind::Terraform, id.to_string())) {
                        fields.insert(
                            format!("file {name}"),
                            Leaf::new(
                                Shown::text(format!("{} bytes, {}", bytes.len(), digest(&shown))),
                                None,
                                secrets,
                            ),
                        );
                    }
                }
                None => {
                    let mut values = BTreeMap::new();
                    match &parsed {
                        Some(v) => flatten_json(v, String::new(), &mut values),
                        None => {
                            let text = String::from_utf8_lossy(bytes);
                            for (i, line) in text.lines().enumerate() {
                                let shown = Shown {
                                    text: format!("{line:?}"),
                                    value: serde_json::Value::from(line),
                                };
                                values.insert(format!("line {:>5}", i + 1), shown);
                            }
                        }
                    }
                    let fields = values
                        .into_iter()
                        .map(|(at, shown)| {
                            let at = if at.is_empty() {
                                "(document)".to_string()
                            } else {
                                at
                            };
                            (at, Leaf::new(shown, None, secrets))
                        })
                        .collect();
                    self.items.insert((Kind::Rendered, path.clone()), fields);
                }
            }
        }
    }
}

/// A short fingerprint of a text (for files shown only as changed or not).
fn digest(text: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256 {hex}")
}

/// Each leaf of a component field as `path → leaf`; the lists of [`UNORDERED`]
/// fields are one leaf, their items sorted.
fn flatten(
    t: &Tracked,
    path: String,
    field: &str,
    origin: &dyn Fn(&Tracked) -> (String, bool),
    secrets: &Secrets,
    out: &mut BTreeMap<String, Leaf>,
) {
    let leaf = |t: &Tracked, shown: Shown, out: &mut BTreeMap<String, Leaf>| {
        let (from, deferred) = origin(t);
        let mut leaf = Leaf::new(shown, Some(from), secrets);
        if deferred && leaf.shown != SENSITIVE {
            leaf.shown.push_str(" (deferred)");
            leaf.key.push_str(" (deferred)");
            leaf.deferred = true;
        }
        out.insert(path.clone(), leaf);
    };
    match t {
        Tracked::List(items, _) if UNORDERED.contains(&field) && path == field => {
            let items = items.iter().map(|i| Shown::of(&i.to_value()));
            leaf(
                t,
                Shown::set(items.map(|i| (i.text, i.value)).collect()),
                out,
            );
        }
        Tracked::Map(entries, _) if !entries.is_empty() => {
            for (k, v) in entries.iter() {
                flatten(v, format!("{path}.{k}"), field, origin, secrets, out);
            }
        }
        Tracked::List(items, _) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(v, format!("{path}[{i}]"), field, origin, secrets, out);
            }
        }
        other => leaf(other, Shown::of(&other.to_value()), out),
    }
}

/// A rendered file as JSON: JSON files as they are, YAML ones (one document, or a
/// list of the documents when there are several) through bpc's YAML reader.
fn parse(path: &str, bytes: &[u8]) -> Option<serde_json::Value> {
    if path.ends_with(".json") {
        return serde_json::from_slice(bytes).ok();
    }
    if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let nodes = crate::yaml::parse_all(text, crate::files::span::FileId(0)).ok()?;
    let mut docs: Vec<serde_json::Value> = nodes
        .iter()
        .filter_map(|n| serde_json::from_str(&crate::value::json::compact(&n.to_value())).ok())
        .filter(|v: &serde_json::Value| !v.is_null())
        .collect();
    match docs.len() {
        1 => docs.pop(),
        _ => Some(serde_json::Value::Array(docs)),
    }
}

/// `path → value as one line` of a JSON document (an empty map or list is a leaf;
/// the lists of [`UNORDERED_RENDERED`] keys are one leaf, their items sorted).
fn flatten_json(value: &serde_json::Value, path: String, out: &mut BTreeMap<String, Shown>) {
    let join = |key: &str| match path.is_empty() {
        true => key.to_string(),
        false => format!("{path}.{key}"),
    };
    let key = path.rsplit('.').next().unwrap_or_default();
    if let (serde_json::Value::Array(items), true) = (value, UNORDERED_RENDERED.contains(&key)) {
        let items = items.iter().map(|i| (i.to_string(), i.clone()));
        out.insert(path, Shown::set(items.collect()));
        return;
    }
    match value {
        serde_json::Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten_json(v, join(k), out);
            }
        }
        serde_json::Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten_json(v, format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path, Shown::of_json(other));
        }
    }
}
