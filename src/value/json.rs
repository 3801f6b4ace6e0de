//! Value ↔ JSON: the crate's one conversion between [`Value`] and serde_json's tree.
//!
//! The policy for numbers, in one place:
//!
//! * Out: `Int` and `Uint` become JSON integers, `Float` a JSON number (serde_json
//!   writes an integral float with its `.0`, so a reader still sees a float). JSON has
//!   no NaN or infinity; what they become is the caller's explicit choice
//!   ([`ToJson`]). Writers that must fail on them instead (the pretty document of
//!   `bpc compose --format json`, `toJSON`) are text formatters of their own in
//!   `emit::json` and the expression builtins, with the same rule: no NaN in JSON.
//! * In: which integer type a JSON number becomes depends on whose decoder bpc mirrors
//!   ([`FromJson`]): Go's `encoding/json` makes every number a `float64`.
//!
//! The conformance cases' tagged encoding (typed floats and NaN survive the trip) is
//! one more option of the same conversion ([`ToJson::Tagged`], [`FromJson::Tagged`]).

use super::{Map, Value};
use serde_json::Value as Json;
use std::sync::Arc;

/// How values become JSON: what NaN and infinities turn into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToJson {
    /// `null`: a JSON Schema validator sees no number there.
    NonFiniteAsNull,
    /// The strings `NaN`, `inf`, `-inf`: for a value shown inside text (messages,
    /// substitutions), where failing would lose the rest.
    NonFiniteAsText,
    /// The conformance case encoding: every float as `{"float": x}` (x may be `"NaN"`,
    /// `"+Inf"`, `"-Inf"`), and a map whose only key is a tag name wrapped as
    /// `{"map": {…}}` so that it does not read as a tag.
    Tagged,
}

/// How JSON numbers become values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FromJson {
    /// Integers that fit `i64` as `Int`, larger ones as `Uint`, the rest as `Float`:
    /// nothing is lost (schema defaults).
    Typed,
    /// Integers that fit `i64` as `Int`, the rest as `Float`. For output Go decodes as
    /// `float64` but prints without a fraction when integral (`jsonnet()`): an `Int`
    /// prints the same, and a number past `i64` stays a float as in Go.
    IntOrFloat,
    /// Every number as `Float`, as Go's `json.Unmarshal` into `interface{}` (`fromJSON`).
    Float64,
    /// [`FromJson::Typed`], reading the tags of [`ToJson::Tagged`].
    Tagged,
}

/// The tag names of the conformance encoding.
const TAGS: &[&str] = &[
    "float", "map", "int", "int64", "uint64", "duration", "time", "go",
];

/// The JSON tree of `value`.
pub fn to_json(value: &Value, how: ToJson) -> Json {
    match value {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Uint(n) => Json::from(*n),
        Value::Float(f) => float_to_json(*f, how),
        Value::Str(s) => Json::String(s.to_string()),
        Value::List(items) => Json::Array(items.iter().map(|v| to_json(v, how)).collect()),
        Value::Map(m) => {
            let object: serde_json::Map<String, Json> = m
                .iter()
                .map(|(k, v)| (k.to_string(), to_json(v, how)))
                .collect();
            let looks_tagged = object.len() == 1 && object.keys().all(|k| TAGS.contains(&&**k));
            if how == ToJson::Tagged && looks_tagged {
                serde_json::json!({ "map": object })
            } else {
                Json::Object(object)
            }
        }
    }
}

fn float_to_json(f: f64, how: ToJson) -> Json {
    let number = serde_json::Number::from_f64(f).map(Json::Number);
    match how {
        ToJson::NonFiniteAsNull => number.unwrap_or(Json::Null),
        ToJson::NonFiniteAsText => number.unwrap_or_else(|| Json::String(f.to_string())),
        ToJson::Tagged => {
            let x = match number {
                Some(n) => n,
                None if f.is_nan() => Json::from("NaN"),
                None if f > 0.0 => Json::from("+Inf"),
                None => Json::from("-Inf"),
            };
            serde_json::json!({ "float": x })
        }
    }
}

/// One-line JSON (no spaces) of `value`, NaN and infinities as text: for a value shown
/// or stored inside a string (substitutions, messages).
pub fn compact(value: &Value) -> String {
    to_json(value, ToJson::NonFiniteAsText).to_string()
}

/// The value of a JSON tree.
pub fn from_json(json: &Json, how: FromJson) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match how {
            FromJson::Float64 => Value::Float(n.as_f64().unwrap_or(0.0)),
            FromJson::IntOrFloat => n
                .as_i64()
                .map_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN)), Value::Int),
            FromJson::Typed | FromJson::Tagged => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_u64().map(Value::Uint))
                .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        },
        Json::String(s) => Value::str(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(|j| from_json(j, how)).collect()),
        Json::Object(object) => {
            if how == FromJson::Tagged && object.len() == 1 {
                if let Some(f) = object.get("float") {
                    return Value::Float(tagged_float(f));
                }
                if let Some(inner @ Json::Object(_)) = object.get("map") {
                    return from_json_object(inner, how);
                }
            }
            from_json_object(json, how)
        }
    }
}

fn tagged_float(f: &Json) -> f64 {
    match f {
        Json::String(s) if s == "NaN" => f64::NAN,
        Json::String(s) if s == "+Inf" => f64::INFINITY,
        Json::String(s) if s == "-Inf" => f64::NEG_INFINITY,
        other => other.as_f64().unwrap_or(f64::NAN),
    }
}

fn from_json_object(json: &Json, how: FromJson) -> Value {
    let mut map = Map::default();
    if let Json::Object(object) = json {
        map.reserve(object.len());
        for (k, v) in object {
            map.insert(Arc::from(k.as_str()), from_json(v, how));
        }
    }
    Value::map(map)
}

/// The value of JSON text.
pub fn parse(text: &str, how: FromJson) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Json>(text).map(|json| from_json(&json, how))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_chosen_decoder() {
        let text = "[1, 18446744073709551615, 2.5]";
        let show = |how| format!("{:?}", parse(text, how).expect("json"));
        assert!(show(FromJson::Typed).contains("[Int(1), Uint(18446744073709551615), Float(2.5)]"));
        assert!(show(FromJson::IntOrFloat)
            .contains("[Int(1), Float(1.8446744073709552e19), Float(2.5)]"));
        assert!(show(FromJson::Float64)
            .contains("[Float(1.0), Float(1.8446744073709552e19), Float(2.5)]"));
    }

    #[test]
    fn non_finite_floats_as_chosen() {
        let v = Value::list(vec![
            Value::Float(f64::NAN),
            Value::Float(f64::NEG_INFINITY),
            Value::Float(2.0),
        ]);
        assert_eq!(
            to_json(&v, ToJson::NonFiniteAsNull).to_string(),
            "[null,null,2.0]"
        );
        assert_eq!(compact(&v), r#"["NaN","-inf",2.0]"#);
        assert_eq!(
            to_json(&v, ToJson::Tagged).to_string(),
            r#"[{"float":"NaN"},{"float":"-Inf"},{"float":2.0}]"#
        );
    }

    #[test]
    fn tagged_values_round_trip() {
        let j: Json = serde_json::from_str(
            r#"{"a": {"float": 2.5}, "b": 18446744073709551615, "c": {"map": {"float": 1}}, "d": {"float": "NaN"}}"#,
        )
        .expect("json");
        let v = from_json(&j, FromJson::Tagged);
        let m = v.as_map().expect("map");
        assert!(matches!(m["a"], Value::Float(f) if f == 2.5));
        assert!(matches!(m["b"], Value::Uint(u64::MAX)));
        assert!(matches!(&m["c"], Value::Map(inner) if matches!(inner["float"], Value::Int(1))));
        assert!(matches!(m["d"], Value::Float(f) if f.is_nan()));
        let back = to_json(&v, ToJson::Tagged);
        assert_eq!(back["c"], serde_json::json!({"map": {"float": 1}}));
    }
}
