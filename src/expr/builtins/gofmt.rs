//! Go's `fmt.Sprint` for scalars, needed where expr-lang turns interface-typed map
//! keys (`groupBy`, `fromPairs`) into text and for expr-lang's own `string()`.

use crate::value::text::{self, Dialect};
use crate::value::Value;

/// `fmt.Sprint` of a value used as a map key.
pub fn sprint_key(v: &Value) -> String {
    match v {
        Value::Nil => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Float(f) => text::float(*f, Dialect::GoFmt),
        Value::Str(s) => s.to_string(),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(sprint_key).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Map(m) => {
            let mut parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", sprint_key(v)))
                .collect();
            parts.sort();
            format!("map[{}]", parts.join(" "))
        }
    }
}
