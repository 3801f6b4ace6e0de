//! Collection builtins: len, keys, values, toPairs, fromPairs, concat, flatten, uniq,
//! first, last, take, get, sort, reverse.

use super::super::budget::Budget;
use super::super::ops::{self, go_type, to_int};
use super::gofmt::sprint_key;
use crate::value::{Map, Value};
use std::cmp::Ordering;
use std::sync::Arc;

/// Go's `reflect.Value.Kind()` name of a value, as builtins report it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Nil => "invalid",
        Value::List(_) => "slice",
        Value::Map(_) => "map",
        Value::Int(_) => "int",
        Value::Uint(_) => "uint64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::Bool(_) => "bool",
    }
}

pub fn len(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let n = match &args[0] {
        Value::Str(s) => s.chars().count(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.len(),
        other => {
            return Err(format!(
                "invalid argument for len (type {})",
                go_type(other)
            ))
        }
    };
    Ok(Value::Int(n as i64))
}

fn map_arg<'a>(what: &str, v: &'a Value) -> Result<&'a Map, String> {
    match v {
        Value::Map(m) => Ok(m),
        other => Err(format!("cannot get {what} from {}", kind(other))),
    }
}

pub fn keys(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let m = map_arg("keys", &args[0])?;
    budget.grow(m.len())?;
    Ok(Value::list(
        m.keys().map(|k| Value::Str(k.clone())).collect(),
    ))
}

pub fn values(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let m = map_arg("values", &args[0])?;
    budget.grow(m.len())?;
    Ok(Value::list(m.values().cloned().collect()))
}

pub fn to_pairs(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let m = map_arg("pairs", &args[0])?;
    budget.grow(m.len() * 3)?;
    Ok(Value::list(
        m.iter()
            .map(|(k, v)| Value::list(vec![Value::Str(k.clone()), v.clone()]))
            .collect(),
    ))
}

pub fn from_pairs(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let items = match &args[0] {
        Value::List(l) => l,
        other => return Err(format!("cannot transform {} from pairs", kind(other))),
    };
    budget.grow(items.len())?;
    let mut out = Map::with_capacity(items.len());
    for item in items.iter() {
        match item {
            Value::List(pair) if pair.len() == 2 => {
                let key: Arc<str> = match &pair[0] {
                    Value::Str(s) => s.clone(),
                    other => sprint_key(other).into(),
                };
                out.insert(key, pair[1].clone());
            }
            Value::List(_) => return Err(format!("invalid pair length {}", sprint_key(item))),
            other => return Err(format!("invalid pair {}", sprint_key(other))),
        }
    }
    Ok(Value::map(out))
}

pub fn concat(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let mut out = Vec::new();
    for a in args {
        match a {
            Value::List(l) => {
                budget.grow(l.len())?;
                out.extend(l.iter().cloned());
            }
            other => return Err(format!("cannot concat {}", kind(other))),
        }
    }
    Ok(Value::list(out))
}

fn flatten_into(
    items: &[Value],
    out: &mut Vec<Value>,
    budget: &mut Budget,
    depth: u32,
) -> Result<(), String> {
    if depth > 64 {
        return Err("flatten: lists nested too deeply".into());
    }
    for item in items {
        budget.step(1)?;
        match item {
            Value::List(inner) => flatten_into(inner, out, budget, depth + 1)?,
            other => {
                budget.grow(1)?;
                out.push(other.clone());
            }
        }
    }
    Ok(())
}

pub fn flatten(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    match &args[0] {
        Value::List(l) => {
            let mut out = Vec::new();
            flatten_into(l, &mut out, budget, 0)?;
            Ok(Value::list(out))
        }
        other => Err(format!("cannot flatten {}", kind(other))),
    }
}

pub fn uniq(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let items = match &args[0] {
        Value::List(l) => l,
        other => return Err(format!("cannot uniq {}", kind(other))),
    };
    let mut out: Vec<Value> = Vec::new();
    for item in items.iter() {
        budget.step(out.len() as u64 + 1)?;
        if !out.iter().any(|seen| ops::equal(seen, item)) {
            out.push(item.clone());
        }
    }
    budget.grow(out.len())?;
    Ok(Value::list(out))
}

/// Go's `first`/`last` recover from any failure and give nil.
pub fn first(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(ops::fetch(&args[0], &Value::Int(0)).unwrap_or(Value::Nil))
}

pub fn last(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(ops::fetch(&args[0], &Value::Int(-1)).unwrap_or(Value::Nil))
}

pub fn take(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let items = match &args[0] {
        Value::List(l) => l,
        other => return Err(format!("cannot take from {}", kind(other))),
    };
    let n = match &args[1] {
        Value::Int(i) => *i,
        Value::Uint(u) => *u as i64,
        other => return Err(format!("cannot take {} elements", go_type(other))),
    };
    if n < 0 {
        return Err("reflect.Value.Slice: slice index out of bounds".into());
    }
    let n = (n as usize).min(items.len());
    budget.grow(n)?;
    Ok(Value::list(items[..n].to_vec()))
}

pub fn get(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let (base, key) = (&args[0], &args[1]);
    match base {
        Value::List(_) | Value::Str(_) => {
            let i = to_int(key)?;
            let len = match base {
                Value::List(l) => l.len(),
                Value::Str(s) => s.len(),
                _ => 0,
            } as i64;
            let j = if i < 0 { i + len } else { i };
            if j < 0 || j >= len {
                return Ok(Value::Nil);
            }
            ops::fetch(base, &Value::Int(j))
        }
        Value::Map(_) => ops::fetch(base, key),
        _ => Ok(Value::Nil),
    }
}

/// Go's `runtime.Less`, failing on values that have no order.
pub fn less(a: &Value, b: &Value) -> Result<Ordering, String> {
    ops::compare("<", a, b).or_else(|e| {
        if e.is_empty() {
            Ok(Ordering::Equal)
        } else {
            Err(e)
        }
    })
}

/// A stable sort that stops at the first comparison error.
pub fn sort_values(
    items: &mut [(Value, Value)],
    desc: bool,
    budget: &mut Budget,
) -> Result<(), String> {
    budget.step(items.len() as u64 * 8)?;
    let mut error: Option<String> = None;
    items.sort_by(|(a, _), (b, _)| {
        if error.is_some() {
            return Ordering::Equal;
        }
        match less(a, b) {
            Ok(o) => {
                if desc {
                    o.reverse()
                } else {
                    o
                }
            }
            Err(e) => {
                error = Some(e);
                Ordering::Equal
            }
        }
    });
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub fn sort(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let items = match &args[0] {
        Value::List(l) => l.clone(),
        Value::Nil => Arc::new(Vec::new()),
        other => return Err(format!("cannot sort {}", kind(other))),
    };
    let desc = match args.get(1) {
        None => false,
        Some(Value::Str(o)) if &**o == "asc" => false,
        Some(Value::Str(o)) if &**o == "desc" => true,
        Some(other) => {
            return Err(format!(
                "invalid order {}, expected asc or desc",
                sprint_key(other)
            ))
        }
    };
    budget.grow(items.len())?;
    let mut pairs: Vec<(Value, Value)> = items.iter().map(|v| (v.clone(), Value::Nil)).collect();
    sort_values(&mut pairs, desc, budget)?;
    Ok(Value::list(pairs.into_iter().map(|(v, _)| v).collect()))
}

pub fn reverse(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    match &args[0] {
        Value::List(l) => {
            budget.grow(l.len())?;
            Ok(Value::list(l.iter().rev().cloned().collect()))
        }
        other => Err(format!("cannot reverse {}", kind(other))),
    }
}
