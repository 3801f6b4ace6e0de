//! `toJSON` as Go's `json.MarshalIndent(v, "", "  ")` (sorted keys, HTML-safe
//! escapes, Go's float spelling) and `fromJSON` (numbers become floats).

use super::super::budget::Budget;
use super::super::ops::as_str;
use super::gofmt::shortest;
use crate::value::json::{self, FromJson};
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
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Uint(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&json_float(*f)?),
        Value::Str(s) => quote(s, out),
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
                quote(k, out);
                out.push_str(": ");
                write(&m[&***k], level + 1, out, budget)?;
            }
            indent(out, level);
            out.push('}');
        }
    }
    Ok(())
}

/// Go's `encoding/json` float format: plain decimals between 1e-6 and 1e21, else
/// exponent form with at least one exponent digit (`1e-7`, `1e+21`).
fn json_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!(
            "json: unsupported value: {}",
            super::gofmt::float_v(f)
        ));
    }
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        let (digits, exp) = shortest(f);
        let mut s = String::new();
        if f < 0.0 {
            s.push('-');
        }
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        s.push_str(&exp.unsigned_abs().to_string());
        return Ok(s);
    }
    Ok(format!("{f}"))
}

/// Go's `encoding/json` string escaping (HTML-safe, the default): shared by `toJSON`
/// and Windsor's `jsonString`.
pub(crate) fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
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
