//! Run-time semantics of operators on values, following Go expr-lang's `runtime`
//! package: integer arithmetic wraps, `/` and `**` give floats, equality is numeric
//! across number types and deep (with exact types) for maps, member access is nil-safe.

use crate::value::{Equality, Value};
use std::cmp::Ordering;

/// Go's `%T` name of a value, for error messages that mirror Windsor's.
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Nil => "<nil>",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Uint(_) => "uint64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::List(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    U(u64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Uint(u) => Some(Num::U(*u)),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::U(u) => u as f64,
            Num::F(f) => f,
        }
    }
    fn wide(self) -> i128 {
        match self {
            Num::I(i) => i as i128,
            Num::U(u) => u as i128,
            Num::F(f) => f as i128,
        }
    }
    /// Go converts mixed integer operands with `int(x)`.
    fn as_int(self) -> i64 {
        match self {
            Num::I(i) => i,
            Num::U(u) => u as i64,
            Num::F(f) => f as i64,
        }
    }
}

pub fn as_f64(v: &Value) -> Option<f64> {
    num(v).map(Num::f)
}

/// Go's `runtime.ToInt`: numbers truncate, anything else is an error.
pub fn to_int(v: &Value) -> Result<i64, String> {
    match num(v) {
        Some(n) => Ok(n.as_int()),
        None => Err(format!("invalid operation: int({})", go_type(v))),
    }
}

fn mismatch(op: &str, a: &Value, b: &Value) -> String {
    format!("invalid operation: {} {} {}", go_type(a), op, go_type(b))
}

pub fn add(a: &Value, b: &Value) -> Result<Value, String> {
    if let (Value::Str(x), Value::Str(y)) = (a, b) {
        let mut s = String::with_capacity(x.len() + y.len());
        s.push_str(x);
        s.push_str(y);
        return Ok(Value::Str(s.into()));
    }
    int_or_float("+", a, b, i64::wrapping_add, u64::wrapping_add, |x, y| {
        x + y
    })
}

pub fn sub(a: &Value, b: &Value) -> Result<Value, String> {
    int_or_float("-", a, b, i64::wrapping_sub, u64::wrapping_sub, |x, y| {
        x - y
    })
}

pub fn mul(a: &Value, b: &Value) -> Result<Value, String> {
    int_or_float("*", a, b, i64::wrapping_mul, u64::wrapping_mul, |x, y| {
        x * y
    })
}

fn int_or_float(
    op: &str,
    a: &Value,
    b: &Value,
    int: fn(i64, i64) -> i64,
    uint: fn(u64, u64) -> u64,
    float: fn(f64, f64) -> f64,
) -> Result<Value, String> {
    match (num(a), num(b)) {
        (Some(Num::I(x)), Some(Num::I(y))) => Ok(Value::Int(int(x, y))),
        (Some(Num::U(x)), Some(Num::U(y))) => Ok(Value::Uint(uint(x, y))),
        (Some(x @ Num::F(_)), Some(y)) | (Some(x), Some(y @ Num::F(_))) => {
            Ok(Value::Float(float(x.f(), y.f())))
        }
        (Some(x), Some(y)) => Ok(Value::Int(int(x.as_int(), y.as_int()))),
        _ => Err(mismatch(op, a, b)),
    }
}

pub fn div(a: &Value, b: &Value) -> Result<Value, String> {
    match (num(a), num(b)) {
        (Some(x), Some(y)) => Ok(Value::Float(x.f() / y.f())),
        _ => Err(mismatch("/", a, b)),
    }
}

pub fn pow(a: &Value, b: &Value) -> Result<Value, String> {
    match (num(a), num(b)) {
        (Some(x), Some(y)) => Ok(Value::Float(x.f().powf(y.f()))),
        _ => Err(mismatch("**", a, b)),
    }
}

pub fn modulo(a: &Value, b: &Value) -> Result<Value, String> {
    match (num(a), num(b)) {
        (Some(Num::F(_)), _) | (_, Some(Num::F(_))) | (None, _) | (_, None) => {
            Err(mismatch("%", a, b))
        }
        (Some(Num::U(x)), Some(Num::U(y))) => {
            if y == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::Uint(x % y))
        }
        (Some(x), Some(y)) => {
            let (x, y) = (x.as_int(), y.as_int());
            if y == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::Int(x.wrapping_rem(y)))
        }
    }
}

pub fn negate(v: &Value) -> Result<Value, String> {
    match v {
        Value::Int(i) => Ok(Value::Int(i.wrapping_neg())),
        Value::Uint(u) => Ok(Value::Uint(u.wrapping_neg())),
        Value::Float(f) => Ok(Value::Float(-f)),
        _ => Err(format!("invalid operation: - {}", go_type(v))),
    }
}

pub fn plus(v: &Value) -> Result<Value, String> {
    match v {
        Value::Int(_) | Value::Uint(_) | Value::Float(_) => Ok(v.clone()),
        _ => Err(format!("invalid operation: + {}", go_type(v))),
    }
}

/// `<`, `>`, `<=`, `>=`: numbers with numbers, strings with strings.
pub fn compare(op: &str, a: &Value, b: &Value) -> Result<Ordering, String> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        _ => match (num(a), num(b)) {
            (Some(x @ Num::F(_)), Some(y)) | (Some(x), Some(y @ Num::F(_))) => {
                // NaN compares false every way; `Less` with a false flag is handled by callers.
                x.f().partial_cmp(&y.f()).ok_or_else(String::new)
            }
            (Some(x), Some(y)) => Ok(x.wide().cmp(&y.wide())),
            _ => Err(mismatch(op, a, b)),
        },
    }
}

/// Evaluates an ordering operator; NaN makes every ordering false.
pub fn ordering(op: &str, a: &Value, b: &Value) -> Result<bool, String> {
    match compare(op, a, b) {
        Ok(o) => Ok(match op {
            "<" => o == Ordering::Less,
            ">" => o == Ordering::Greater,
            "<=" => o != Ordering::Greater,
            _ => o != Ordering::Less,
        }),
        Err(e) if e.is_empty() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Go's `runtime.Equal`: numbers compare numerically, lists element-wise with the
/// same rule, maps deeply with exact types (`reflect.DeepEqual`).
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The common case in templates (`provider == 'aws'`), before the number checks.
        (Value::Str(x), Value::Str(y)) => crate::value::str_eq(x, y),
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Nil, _) | (_, Value::Nil) => a.is_nil() && b.is_nil(),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q))
        }
        (Value::Map(_), Value::Map(_)) => a.equals(b, Equality::GO_DEEP),
        _ => match (num(a), num(b)) {
            (Some(x @ Num::F(_)), Some(y)) | (Some(x), Some(y @ Num::F(_))) => x.f() == y.f(),
            (Some(x), Some(y)) => x.wide() == y.wide(),
            _ => scalar_eq(a, b),
        },
    }
}

fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => false,
    }
}

/// Member or index access, nil-safe as Windsor configures expr-lang.
pub fn fetch(base: &Value, key: &Value) -> Result<Value, String> {
    match base {
        Value::Nil => Ok(Value::Nil),
        Value::Map(m) => match key {
            Value::Str(k) => Ok(m.get(k).cloned().unwrap_or(Value::Nil)),
            other => Err(format!(
                "reflect.Value.MapIndex: value of type {} is not assignable to type string",
                go_type(other)
            )),
        },
        Value::List(items) => {
            let i = to_int(key)?;
            Ok(items[checked_index(i, items.len())?].clone())
        }
        Value::Str(s) => {
            let i = to_int(key)?;
            Ok(Value::Uint(s.as_bytes()[checked_index(i, s.len())?] as u64))
        }
        other => Err(format!(
            "cannot fetch {} from {}",
            key_text(key),
            go_type(other)
        )),
    }
}

fn key_text(key: &Value) -> String {
    match key {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => go_type(key).to_string(),
    }
}

fn checked_index(i: i64, len: usize) -> Result<usize, String> {
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 || j >= len as i64 {
        return Err(format!("index out of range: {j} (array length is {len})"));
    }
    Ok(j as usize)
}

/// `base[from:to]` on lists and strings (byte offsets).
pub fn slice(base: &Value, from: Option<&Value>, to: Option<&Value>) -> Result<Value, String> {
    let len = match base {
        Value::List(l) => l.len(),
        Value::Str(s) => s.len(),
        _ => {
            let at = from.map_or(Ok(0), to_int).unwrap_or(0);
            return Err(format!("cannot slice {at}"));
        }
    } as i64;
    let bound = |v: Option<&Value>, default: i64| -> Result<i64, String> {
        let mut i = match v {
            Some(v) => to_int(v)?,
            None => default,
        };
        if i < 0 {
            i += len;
        }
        Ok(i.clamp(0, len))
    };
    let b = bound(to, len)?;
    let a = bound(from, 0)?.min(b);
    let (a, b) = (a as usize, b as usize);
    Ok(match base {
        Value::List(l) => Value::list(l[a..b].to_vec()),
        Value::Str(s) => Value::Str(String::from_utf8_lossy(&s.as_bytes()[a..b]).into()),
        _ => Value::Nil,
    })
}

/// Membership: `x in list` (Go equality), `key in map`, nil on the right is false.
pub fn contains_in(needle: &Value, hay: &Value) -> Result<bool, String> {
    match hay {
        Value::Nil => Ok(false),
        Value::List(items) => Ok(items.iter().any(|v| equal(needle, v))),
        Value::Map(m) => match needle {
            Value::Str(k) => Ok(m.contains_key(k)),
            other => Err(format!(
                "reflect.Value.MapIndex: value of type {} is not assignable to type string",
                go_type(other)
            )),
        },
        other => Err(format!("operator \"in\" not defined on {}", go_type(other))),
    }
}

/// `==` over values the checker proved to be ints (Go's `OpEqualInt`): a nil at run
/// time fails like Go's interface conversion does.
pub fn strict_int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(format!(
            "interface conversion: interface {{}} is {}, not int",
            go_type(other).trim_start_matches('<').trim_end_matches('>')
        )),
    }
}

/// Go's interface conversion to bool, used for conditions and `&&`/`||`/`!`.
pub fn as_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(format!(
            "interface conversion: interface {{}} is {}, not bool",
            go_type(other).trim_start_matches('<').trim_end_matches('>')
        )),
    }
}

/// Go's interface conversion to string, used by string builtins and operators.
pub fn as_str(v: &Value) -> Result<&str, String> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(format!(
            "interface conversion: interface {{}} is {}, not string",
            go_type(other).trim_start_matches('<').trim_end_matches('>')
        )),
    }
}
