//! The effective values of a context as text, as Windsor's `show values` prints them:
//! each schema `description` as a comment above its key (YAML), and every value whose
//! schema says `sensitive: true` masked.

use super::path::PathSegment;
use super::Format;
use crate::compose::schema::Schema;
use crate::files::Diagnostic;
use crate::value::{Map, Value};

/// What a masked value reads as.
pub const SENSITIVE: &str = "<sensitive>";

/// `values` (a context's effective values) as text in `format`, masked and described by
/// `schema`; `output_bytes` bounds the text.
pub fn values_text(
    values: Map,
    schema: Option<&Schema>,
    format: Format,
    output_bytes: usize,
) -> Result<String, Vec<Diagnostic>> {
    let empty = serde_json::Value::Null;
    let root = schema.map_or(&empty, Schema::json);
    let masked = mask(&Value::map(values), root, root);
    crate::compose::budget::check_text(&masked, output_bytes, "the values").map_err(|d| vec![d])?;
    Ok(match format {
        Format::Yaml => {
            let hook = |path: &[PathSegment<'_>]| {
                let at = schema_at(root, path)?;
                at.get("description")
                    .and_then(serde_json::Value::as_str)
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
            };
            super::to_yaml_with_leading_comments(&masked, &hook)
        }
        Format::Json => {
            super::to_json(&masked).map_err(|e| vec![Diagnostic::error(e.to_string())])?
        }
    })
}

/// `values` with every value whose schema says `sensitive: true` replaced by
/// [`SENSITIVE`] (what `bpc show values` shows, as a value).
pub fn masked(values: &Map, schema: Option<&Schema>) -> Value {
    let empty = serde_json::Value::Null;
    let root = schema.map_or(&empty, Schema::json);
    mask(&Value::map(values.clone()), root, root)
}

/// Follows a local `$ref` (`#/$defs/…`), a few levels deep at most.
fn deref<'a>(
    root: &'a serde_json::Value,
    mut schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    for _ in 0..8 {
        let Some(pointer) = schema
            .get("$ref")
            .and_then(serde_json::Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        else {
            break;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The subschema of `schema` for one key or list index, if the schema names one.
fn child<'a>(
    root: &'a serde_json::Value,
    schema: &'a serde_json::Value,
    segment: PathSegment<'_>,
) -> Option<&'a serde_json::Value> {
    let schema = deref(root, schema);
    let next = match segment {
        PathSegment::Key(key) => schema
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object())),
        PathSegment::Index(_) => schema.get("items").filter(|i| i.is_object()),
    }?;
    Some(deref(root, next))
}

/// The subschema at a path of the values.
fn schema_at<'a>(
    root: &'a serde_json::Value,
    path: &[PathSegment<'_>],
) -> Option<&'a serde_json::Value> {
    let mut cur = root;
    for segment in path {
        cur = child(root, cur, *segment)?;
    }
    Some(cur)
}

/// `value` with every value whose schema says `sensitive: true` replaced by
/// [`SENSITIVE`].
fn mask(value: &Value, schema: &serde_json::Value, root: &serde_json::Value) -> Value {
    if schema.get("sensitive") == Some(&serde_json::Value::Bool(true)) {
        return Value::str(SENSITIVE);
    }
    match value {
        Value::Map(map) => {
            let out: Map = map
                .iter()
                .map(|(k, v)| {
                    let v = match child(root, schema, PathSegment::Key(k)) {
                        Some(sub) => mask(v, sub, root),
                        None => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            Value::map(out)
        }
        Value::List(items) => Value::list(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| match child(root, schema, PathSegment::Index(i)) {
                    Some(sub) => mask(v, sub, root),
                    None => v.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}
