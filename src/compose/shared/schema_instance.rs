//! The JSON instance that schema validation reads, without copying what no rule of the
//! schema can see.
//!
//! Validating takes the merged context values as JSON, and a JSON tree costs several
//! times the YAML it came from: a large values file under a key the schema says
//! nothing about (a lookup table, generated data) would be copied whole only to be
//! accepted unseen. So where the schema provably does not look inside a value, the
//! value is written as `null` instead. "Provably" is kept narrow: the
//! schema at that place uses only `type` (allowing the value's own type),
//! `properties`, `required`, `additionalProperties` (absent, `true` or a schema) or
//! `items`, plus annotations, and local `$ref`s are followed. Anything else — `enum`,
//! `const`, combinators, `patternProperties`, size and uniqueness rules, whose
//! messages or outcome depend on the members — gets the value whole, so every
//! verdict and every message is the one the full instance gives.

use crate::value::json::{to_json, ToJson};
use crate::value::Value;
use serde_json::{Map as JsonMap, Value as Json};

/// Keywords that never constrain an instance.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
    "deprecated",
    "readOnly",
    "writeOnly",
    "sensitive",
];

/// `values` as the JSON instance for a schema whose root is `root`.
pub(crate) fn instance(values: &Value, root: &Json) -> Json {
    at(values, Some(root), root)
}

/// `value` against `schema` (`None`: nothing constrains it).
fn at(value: &Value, schema: Option<&Json>, root: &Json) -> Json {
    let Some(schema) = schema.map(|s| deref(s, root)) else {
        // Nothing constrains it, so any value passes, `null` as well.
        return Json::Null;
    };
    let Json::Object(rules) = schema else {
        // `true` accepts anything; `false` rejects everything and prints the value.
        return match schema {
            Json::Bool(true) => Json::Null,
            _ => full(value),
        };
    };
    match value {
        Value::Map(members)
            if only(
                rules,
                "object",
                &["properties", "required", "additionalProperties"],
            ) =>
        {
            let properties = rules.get("properties").and_then(Json::as_object);
            let additional = match rules.get("additionalProperties") {
                None | Some(Json::Bool(true)) => None,
                Some(Json::Bool(false)) => return full(value),
                Some(other) => Some(other),
            };
            let mut out = JsonMap::new();
            for (key, member) in members.iter() {
                let rule = properties.and_then(|p| p.get(&**key)).or(additional);
                out.insert(key.to_string(), at(member, rule, root));
            }
            Json::Object(out)
        }
        Value::List(items) if only(rules, "array", &["items"]) => {
            let rule = rules.get("items");
            if matches!(rule, Some(Json::Bool(false))) {
                return full(value);
            }
            Json::Array(items.iter().map(|item| at(item, rule, root)).collect())
        }
        _ => full(value),
    }
}

/// Whether `rules` holds nothing but annotations, a `type` that allows `kind`, and
/// the structural keywords `allowed`.
fn only(rules: &JsonMap<String, Json>, kind: &str, allowed: &[&str]) -> bool {
    rules.iter().all(|(k, v)| match k.as_str() {
        "type" => match v {
            Json::String(t) => t == kind,
            Json::Array(ts) => ts.iter().any(|t| t.as_str() == Some(kind)),
            _ => false,
        },
        k => ANNOTATIONS.contains(&k) || allowed.contains(&k),
    })
}

fn full(value: &Value) -> Json {
    to_json(value, ToJson::NonFiniteAsNull)
}

/// Follows local `$ref`s (`#/$defs/…`) a few levels; a schema with a `$ref` and other
/// keywords is returned as is (the combination is not looked into).
fn deref<'a>(mut schema: &'a Json, root: &'a Json) -> &'a Json {
    for _ in 0..8 {
        let Some(obj) = schema.as_object() else { break };
        let Some(pointer) = obj
            .get("$ref")
            .and_then(Json::as_str)
            .and_then(|r| r.strip_prefix('#'))
        else {
            break;
        };
        if obj.len() != 1 {
            break;
        }
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(j: Json) -> Value {
        crate::value::json::from_json(&j, crate::value::json::FromJson::Typed)
    }

    #[test]
    fn values_no_rule_reads_are_left_out() {
        let schema = json!({
            "type": "object",
            "properties": {"cluster": {"type": "object", "properties": {"name": {"type": "string"}}}},
        });
        let values = value(json!({
            "cluster": {"name": "a", "extra": {"deep": [1, 2]}},
            "table": {"k1": {"big": "x"}, "k2": [1, 2, 3]},
        }));
        assert_eq!(
            instance(&values, &schema),
            json!({
                "cluster": {"name": "a", "extra": null},
                "table": null,
            })
        );
    }

    #[test]
    fn rules_that_read_members_get_the_value_whole() {
        let schema = json!({
            "$defs": {"tags": {"type": "array", "uniqueItems": true}},
            "type": "object",
            "properties": {
                "tags": {"$ref": "#/$defs/tags"},
                "mode": {"enum": [{"a": 1}]},
                "nodes": {"type": "object", "additionalProperties": {"type": "integer"}},
                "closed": {"type": "object", "additionalProperties": false},
                "wrong": {"type": "string"},
            },
        });
        let values = value(json!({
            "tags": [["x"], ["x"]],
            "mode": {"a": {"b": 2}},
            "nodes": {"n1": "three"},
            "closed": {"x": {"y": 1}},
            "wrong": {"z": {"q": 1}},
        }));
        assert_eq!(
            instance(&values, &schema),
            json!({
                "tags": [["x"], ["x"]],
                "mode": {"a": {"b": 2}},
                "nodes": {"n1": "three"},
                "closed": {"x": {"y": 1}},
                "wrong": {"z": {"q": 1}},
            })
        );
    }

    #[test]
    fn verdicts_and_messages_match_the_full_instance() {
        let schema = json!({
            "type": "object",
            "required": ["cluster"],
            "properties": {
                "cluster": {"type": "object", "properties": {"workers": {"type": "integer"}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"minimum": 3}}}},
            },
        });
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("schema");
        let values = value(json!({
            "cluster": {"workers": "many", "notes": {"long": "text"}},
            "list": [{"n": 1, "other": [1]}, {"n": 5}],
            "data": {"a": {"b": {"c": 1}}},
        }));
        let messages = |instance: &Json| -> Vec<String> {
            validator
                .iter_errors(instance)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect()
        };
        let pruned = instance(&values, &schema);
        assert_eq!(messages(&pruned), messages(&full(&values)));
        assert_eq!(messages(&pruned).len(), 2);
    }
}
