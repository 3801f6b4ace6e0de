//! `toJSON` as Go's `json.MarshalIndent(v, "", "  ")` (sorted keys, HTML-safe
//! escapes, Go's float spelling) and `fromJSON` (numbers become floats).

use super::super::budget::Budget;
use super::super::ops::as_str;
use crate::value::json::{self, FromJson};
use crate::value::text::{self, Escape};
use crate::value::Value;

pub fn to_json(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let mut out = String::new();
    write(&args[0], 0, &mut out, budget)?;
    Ok(out.into())
}

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write(v: &Value, level: usize, out: &mut String, budget: &mut Budget) -> Result<(), String> {
    if level > 128 {
        return Err("json: value nested too deeply".into());
    }
    budget.step(1)?;
    budget.string_len(out.len())?;
    match v {
        Value::Str(s) => text::quote(out, s, Escape::GoJson),
        Value::List(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                write(item, level + 1, out, budget)?;
            }
            indent(out, level);
            out.push(']');
        }
        Value::Map(m) => {
            if m.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            let mut keys: Vec<_> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                text::quote(out, k, Escape::GoJson);
                out.push_str(": ");
                write(&m[&***k], level + 1, out, budget)?;
            }
            indent(out, level);
            out.push('}');
        }
        atom => {
            text::go_json_atom(out, atom)?;
        }
    }
    Ok(())
}

pub fn from_json(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let text = as_str(&args[0])?;
    let parsed: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    // A step for every value built; the result is returned even past the step limit,
    // which the next step then reports.
    let _ = budget.step(node_count(&parsed));
    Ok(json::from_json(&parsed, FromJson::Float64))
}

fn node_count(json: &serde_json::Value) -> u64 {
    1 + match json {
        serde_json::Value::Array(items) => items.iter().map(node_count).sum(),
        serde_json::Value::Object(object) => object.values().map(node_count).sum(),
        _ => 0,
    }
}
