//! Conversion builtins: int, float, string (expr-lang's own, used only when Windsor's
//! is not registered), toBase64, fromBase64, type.

use super::super::budget::Budget;
use super::super::ops::{as_str, go_type};
use super::gofmt;
use crate::value::Value;
use base64::Engine as _;

pub fn int(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    match &args[0] {
        Value::Int(i) => Ok(Value::Int(*i)),
        Value::Uint(u) => Ok(Value::Int(*u as i64)),
        Value::Float(f) => Ok(Value::Int(*f as i64)),
        Value::Str(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| format!("invalid operation: int({s})")),
        Value::Nil => Err("reflect: call of reflect.Value.Type on zero Value".into()),
        other => Err(format!("invalid operation: int({})", go_type(other))),
    }
}

/// Go's `strconv.ParseFloat` accepts a few spellings Rust does not and vice versa.
fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    let word = body.to_ascii_lowercase();
    let valid_word = matches!(word.as_str(), "inf" | "infinity" | "nan");
    let valid_number = !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !(valid_word || valid_number) || s.starts_with("+-") || s.starts_with("-+") {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    if f.is_infinite() && !valid_word {
        return None;
    }
    Some(f)
}

pub fn float(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    match &args[0] {
        Value::Int(i) => Ok(Value::Float(*i as f64)),
        Value::Uint(u) => Ok(Value::Float(*u as f64)),
        Value::Float(f) => Ok(Value::Float(*f)),
        Value::Str(s) => parse_go_float(s)
            .map(Value::Float)
            .ok_or_else(|| format!("invalid operation: float({s})")),
        other => Err(format!("invalid operation: float({})", go_type(other))),
    }
}

pub fn string(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(Value::str(gofmt::sprint_key(&args[0])))
}

pub fn to_base64(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let s = as_str(&args[0])?;
    Ok(base64::engine::general_purpose::STANDARD
        .encode(s.as_bytes())
        .into())
}

pub fn from_base64(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let s = as_str(&args[0])?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.as_bytes())
        .map_err(|e| format!("illegal base64 data: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned().into())
}

pub fn type_of(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(Value::str(args[0].type_name()))
}
