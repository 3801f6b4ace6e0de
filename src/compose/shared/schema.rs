//! `schema.yaml` as JSON Schema (draft 2020-12): defaults for the context values and
//! validation of the merged values (S4), with every violation reported at once.

use crate::compose::model::inputs::Layer;
use crate::expr::{Map, Value};
use crate::files::{Diagnostic, FileMap, Span};
use crate::value::json::{from_json, to_json, FromJson, ToJson};
use crate::yaml::Node;
use std::sync::{Arc, OnceLock};

pub struct Schema {
    pub node: Node,
    json: serde_json::Value,
    validator: jsonschema::Validator,
    /// [`Schema::defaults`], worked out on first use.
    defaults: OnceLock<Map>,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").finish_non_exhaustive()
    }
}

impl Schema {
    /// The compiled `schema.yaml` of a template, if it has one.
    pub fn of_template(
        template: &crate::template::Template,
    ) -> Result<Option<Schema>, Vec<Diagnostic>> {
        template
            .schema
            .as_ref()
            .map(Schema::compile)
            .transpose()
            .map_err(|d| vec![d])
    }

    /// Compiles the schema. Windsor's own `$schema` URL names the same dialect as
    /// draft 2020-12, so the draft is fixed rather than looked up.
    pub fn compile(node: &Node) -> Result<Schema, Diagnostic> {
        let mut json = to_json(&node.to_value(), ToJson::NonFiniteAsNull);
        if let serde_json::Value::Object(map) = &mut json {
            map.remove("$schema");
        }
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&json)
            .map_err(|e| {
                // The error's instance path is a pointer into the schema itself: point
                // at that key rather than at the whole file.
                let pointer = e.instance_path().to_string();
                let at = schema_node_at(node, &pointer);
                let label = if pointer.is_empty() {
                    "in this schema".to_string()
                } else {
                    format!("at `{pointer}`")
                };
                Diagnostic::error(format!("schema.yaml is not a valid JSON Schema: {e}"))
                    .with_primary(at.span, label)
            })?;
        Ok(Schema {
            node: node.clone(),
            json,
            validator,
            defaults: OnceLock::new(),
        })
    }

    /// The schema as JSON (`$schema` removed).
    pub fn json(&self) -> &serde_json::Value {
        &self.json
    }

    /// The defaults alone: what [`Schema::apply_defaults`] makes of no values. Every
    /// composition's `values-common` falls back to them, so they are worked out once
    /// per schema.
    pub fn defaults(&self) -> &Map {
        self.defaults
            .get_or_init(|| match self.apply_defaults(&Value::map(Map::default())) {
                Value::Map(m) => Arc::unwrap_or_clone(m),
                _ => Map::default(),
            })
    }

    /// Applies `default`s (S4): a property's default fills a missing value; an object
    /// whose properties have defaults is created from them when absent (as Windsor
    /// does), with its own `default` underneath.
    pub fn apply_defaults(&self, values: &Value) -> Value {
        apply(&self.json, Some(values)).unwrap_or_else(|| values.clone())
    }

    /// Every violation of the schema by `values`, each naming the key path and rule,
    /// pointing at the layer that wrote the offending value.
    pub fn validate(&self, values: &Value, layers: &[Layer], files: &FileMap) -> Vec<Diagnostic> {
        let instance = crate::compose::shared::schema_instance::instance(values, &self.json);
        let mut out = Vec::new();
        for error in self.validator.iter_errors(&instance) {
            let pointer = error.instance_path().to_string();
            let path: Vec<String> = pointer
                .split('/')
                .skip(1)
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect();
            let dotted = if path.is_empty() {
                "(the values)".to_string()
            } else {
                path.join(".")
            };
            let schema_path = error.schema_path().to_string();
            let rule = schema_path.rsplit('/').next().unwrap_or_default();
            let mut d = Diagnostic::error(format!("invalid value at `{dotted}`: {error}"))
                .with_note(format!("rule `{rule}` of schema.yaml, at {schema_path}"));
            match writer(layers, &path, files) {
                Some((layer, Some(span))) => {
                    d = d.with_primary(span, format!("set by {layer}"));
                }
                Some((layer, None)) => d = d.with_note(format!("set by {layer}")),
                None => {}
            }
            out.push(d);
        }
        out
    }
}

/// The deepest node of `schema` that the JSON pointer `pointer` reaches.
fn schema_node_at<'a>(schema: &'a Node, pointer: &str) -> &'a Node {
    let mut cur = schema;
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let next = match &cur.kind {
            crate::yaml::NodeKind::Seq(items) => {
                seg.parse::<usize>().ok().and_then(|i| items.get(i))
            }
            _ => cur.get(&seg),
        };
        match next {
            Some(n) => cur = n,
            None => break,
        }
    }
    cur
}

fn has_path(v: &Value, path: &[String]) -> bool {
    let mut cur = v;
    for seg in path {
        match cur.as_map().and_then(|m| m.get(seg.as_str())) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    true
}

/// The highest layer that writes `path`, and where when it is YAML (a `--set` has no
/// place in a file; a lower file's line would name a value that was overridden).
fn writer<'a>(
    layers: &'a [Layer],
    path: &[String],
    files: &FileMap,
) -> Option<(&'a str, Option<Span>)> {
    layers.iter().rev().find_map(|layer| {
        let name = layer.name.as_str();
        match layer.locate(path, files) {
            Some(span) => Some((name, Some(span))),
            None if layer.yaml.is_none() && has_path(&layer.value, path) => Some((name, None)),
            None => None,
        }
    })
}

fn apply(schema: &serde_json::Value, value: Option<&Value>) -> Option<Value> {
    let value = match (value, schema.get("default")) {
        (Some(v), _) if !v.is_nil() => Some(v.clone()),
        (_, Some(d)) => Some(from_json(d, FromJson::Typed)),
        (v, None) => v.cloned(),
    };
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return value;
    };
    let mut map: Map = match &value {
        Some(Value::Map(m)) => (**m).clone(),
        Some(_) => return value,
        None => Map::default(),
    };
    for (key, sub) in props {
        let current = map.get(key.as_str()).cloned();
        if let Some(v) = apply(sub, current.as_ref()) {
            map.insert(Arc::from(key.as_str()), v);
        }
    }
    if map.is_empty() && value.is_none() {
        return None;
    }
    Some(Value::map(map))
}
