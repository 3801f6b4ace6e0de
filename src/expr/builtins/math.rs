//! Numeric builtins: abs, ceil, floor, round, max, min, mean, median and the bit
//! functions.

use super::super::budget::Budget;
use super::super::ops::{self, go_type};
use crate::value::Value;
use std::cmp::Ordering;

fn invalid(name: &str, v: &Value) -> String {
    format!("invalid argument for {name} (type {})", go_type(v))
}

pub fn abs(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    match &args[0] {
        Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
        Value::Uint(u) => Ok(Value::Uint(*u)),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        other => Err(invalid("abs", other)),
    }
}

fn rounding(name: &str, v: &Value, f: fn(f64) -> f64) -> Result<Value, String> {
    match v {
        Value::Int(_) | Value::Uint(_) | Value::Float(_) => {
            Ok(Value::Float(f(ops::as_f64(v).unwrap_or(0.0))))
        }
        other => Err(invalid(name, other)),
    }
}

pub fn ceil(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    rounding("ceil", &args[0], f64::ceil)
}

pub fn floor(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    rounding("floor", &args[0], f64::floor)
}

pub fn round(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    rounding("round", &args[0], f64::round)
}

/// Walks numbers in arguments and (nested) lists, in order.
fn each_number(
    name: &str,
    args: &[Value],
    budget: &mut Budget,
    depth: u32,
    f: &mut dyn FnMut(&Value) -> Result<(), String>,
) -> Result<(), String> {
    if depth > 64 {
        return Err(format!("{name}: lists nested too deeply"));
    }
    for a in args {
        budget.step(1)?;
        match a {
            Value::Int(_) | Value::Uint(_) | Value::Float(_) => f(a)?,
            Value::List(items) => each_number(name, items, budget, depth + 1, f)?,
            other => return Err(invalid(name, other)),
        }
    }
    Ok(())
}

fn extreme(
    name: &str,
    args: &[Value],
    budget: &mut Budget,
    want: Ordering,
) -> Result<Value, String> {
    let mut best: Option<Value> = None;
    each_number(name, args, budget, 0, &mut |v| {
        let replace = match &best {
            None => true,
            Some(b) => ops::compare("<", v, b).map(|o| o == want).unwrap_or(false),
        };
        if replace {
            best = Some(v.clone());
        }
        Ok(())
    })?;
    Ok(best.unwrap_or(Value::Nil))
}

pub fn max(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    extreme("max", args, budget, Ordering::Greater)
}

pub fn min(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    extreme("min", args, budget, Ordering::Less)
}

fn floats(name: &str, args: &[Value], budget: &mut Budget) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    each_number(name, args, budget, 0, &mut |v| {
        out.push(ops::as_f64(v).unwrap_or(0.0));
        Ok(())
    })?;
    Ok(out)
}

pub fn mean(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let xs = floats("mean", args, budget)?;
    if xs.is_empty() {
        return Ok(Value::Float(0.0));
    }
    Ok(Value::Float(xs.iter().sum::<f64>() / xs.len() as f64))
}

pub fn median(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let mut xs = floats("median", args, budget)?;
    if xs.is_empty() {
        return Ok(Value::Float(0.0));
    }
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let n = xs.len();
    Ok(Value::Float(if n % 2 == 0 {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    } else {
        xs[n / 2]
    }))
}

fn ints(name: &str, args: &[Value]) -> Result<(i64, i64), String> {
    let get = |v: &Value| match v {
        Value::Int(i) => Ok(*i),
        other => Err(format!(
            "invalid argument for {name} (type {})",
            go_type(other)
        )),
    };
    Ok((get(&args[0])?, args.get(1).map_or(Ok(0), get)?))
}

pub fn bitand(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    ints("bitand", args).map(|(a, b)| Value::Int(a & b))
}
pub fn bitor(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    ints("bitor", args).map(|(a, b)| Value::Int(a | b))
}
pub fn bitxor(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    ints("bitxor", args).map(|(a, b)| Value::Int(a ^ b))
}
pub fn bitnand(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    ints("bitnand", args).map(|(a, b)| Value::Int(a & !b))
}
pub fn bitnot(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    ints("bitnot", args).map(|(a, _)| Value::Int(!a))
}

fn shift(name: &str, args: &[Value], f: fn(i64, u32) -> i64) -> Result<Value, String> {
    let (a, b) = ints(name, args)?;
    if b < 0 {
        return Err(format!("invalid operation: negative shift count {b}"));
    }
    Ok(Value::Int(f(a, b.min(64) as u32)))
}

pub fn bitshl(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    shift("bitshl", args, |a, b| if b >= 64 { 0 } else { a << b })
}
pub fn bitshr(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    shift("bitshr", args, |a, b| a >> b.min(63))
}
pub fn bitushr(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    shift("bitushr", args, |a, b| {
        if b >= 64 {
            0
        } else {
            ((a as u64) >> b) as i64
        }
    })
}
