//! Argument checks shared by the Windsor functions. The checker only rejects
//! arguments whose type it knows at compile time; values read from the scope arrive
//! untyped, so every function re-checks them here with Windsor's wording
//! (`cidrhost() first argument must be a string, got <nil>`).

use crate::expr::native::NativeError;
use crate::expr::ops::go_type;
use crate::value::Value;

/// `what` names the argument as Windsor's message does: `"cidrhost() first argument"`.
pub fn string<'a>(value: &'a Value, what: &str) -> Result<&'a str, NativeError> {
    match value {
        Value::Str(s) => Ok(s),
        other => Err(NativeError::run(format!(
            "{what} must be a string, got {}",
            go_type(other)
        ))),
    }
}

/// A whole number the way Windsor converts it: Go integers as they are, floats
/// truncated toward zero.
pub fn integer(value: &Value, what: &str) -> Result<i64, NativeError> {
    let bad = || NativeError::run(format!("{what} must be a number, got {}", go_type(value)));
    match value {
        Value::Int(n) => Ok(*n),
        Value::Uint(n) => {
            i64::try_from(*n).map_err(|_| NativeError::run(format!("{what} is too large: {n}")))
        }
        // `as` saturates; a NaN or an infinity has no integer to truncate to.
        Value::Float(f) if f.is_finite() => Ok(f.trunc() as i64),
        Value::Float(f) => Err(NativeError::run(format!(
            "{what} is not a finite number: {f}"
        ))),
        _ => Err(bad()),
    }
}

/// "first", "second", … for messages about positional arguments.
pub fn ordinal(index: usize) -> &'static str {
    match index {
        0 => "first",
        1 => "second",
        2 => "third",
        _ => "next",
    }
}
