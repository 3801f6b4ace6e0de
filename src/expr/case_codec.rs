//! The JSON encoding of values used by the expression conformance cases (and by the
//! `expr_bench` example): plain JSON, except floats are `{"float": x}` (x may be
//! `"NaN"`, `"+Inf"`, `"-Inf"`) and a map whose only key is a tag name is wrapped as
//! `{"map": {…}}`. Integers above `i64::MAX` decode as `Uint`.

use super::value::{Map, Value};
use serde_json::Value as Json;
use std::sync::Arc;

const TAGS: &[&str] = &[
    "float", "map", "int", "int64", "uint64", "duration", "time", "go",
];

pub fn decode(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::Uint(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(decode).collect()),
        Json::Object(m) => {
            if m.len() == 1 {
                if let Some(f) = m.get("float") {
                    return Value::Float(match f {
                        Json::String(s) if s == "NaN" => f64::NAN,
                        Json::String(s) if s == "+Inf" => f64::INFINITY,
                        Json::String(s) if s == "-Inf" => f64::NEG_INFINITY,
                        other => other.as_f64().unwrap_or(f64::NAN),
                    });
                }
                if let Some(Json::Object(inner)) = m.get("map") {
                    return Value::map(
                        inner
                            .iter()
                            .map(|(k, v)| (Arc::from(k.as_str()), decode(v)))
                            .collect(),
                    );
                }
            }
            let map: Map = m
                .iter()
                .map(|(k, v)| (Arc::from(k.as_str()), decode(v)))
                .collect();
            Value::map(map)
        }
    }
}

pub fn encode(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Uint(n) => Json::from(*n),
        Value::Float(f) => {
            let x = if f.is_nan() {
                Json::from("NaN")
            } else if f.is_infinite() {
                Json::from(if *f > 0.0 { "+Inf" } else { "-Inf" })
            } else {
                serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number)
            };
            serde_json::json!({ "float": x })
        }
        Value::Str(s) => Json::String(s.to_string()),
        Value::List(items) => Json::Array(items.iter().map(encode).collect()),
        Value::Map(m) => {
            let obj: serde_json::Map<String, Json> =
                m.iter().map(|(k, v)| (k.to_string(), encode(v))).collect();
            if obj.len() == 1 && obj.keys().all(|k| TAGS.contains(&k.as_str())) {
                serde_json::json!({ "map": obj })
            } else {
                Json::Object(obj)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_values_round_trip() {
        let j: Json = serde_json::from_str(r#"{"a": {"float": 2.5}, "b": 18446744073709551615, "c": {"map": {"float": 1}}, "d": {"float": "NaN"}}"#).unwrap();
        let v = decode(&j);
        let m = v.as_map().unwrap();
        assert!(matches!(m["a"], Value::Float(f) if f == 2.5));
        assert!(matches!(m["b"], Value::Uint(u64::MAX)));
        assert!(matches!(&m["c"], Value::Map(inner) if matches!(inner["float"], Value::Int(1))));
        assert!(matches!(m["d"], Value::Float(f) if f.is_nan()));
        let back = encode(&v);
        assert_eq!(back["c"], serde_json::json!({"map": {"float": 1}}));
    }
}
