//! String builtins. Offsets are byte offsets, as in Go.

use super::super::budget::Budget;
use super::super::ops::{as_str, go_type, to_int};
use crate::value::Value;

fn s(v: &Value) -> Result<&str, String> {
    as_str(v)
}

pub fn trim(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let text = s(&args[0])?;
    Ok(match args.get(1) {
        None => text.trim_matches(|c: char| c.is_whitespace()).into(),
        Some(cut) => {
            let cut = s(cut)?;
            text.trim_matches(|c: char| cut.contains(c)).into()
        }
    })
}

pub fn trim_prefix(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let text = s(&args[0])?;
    let prefix = args.get(1).map_or(Ok(" "), s)?;
    Ok(text.strip_prefix(prefix).unwrap_or(text).into())
}

pub fn trim_suffix(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    let text = s(&args[0])?;
    let suffix = args.get(1).map_or(Ok(" "), s)?;
    Ok(text.strip_suffix(suffix).unwrap_or(text).into())
}

/// Go maps rune by rune; a rune whose case form is several characters stays as is.
fn map_case(text: &str, upper: bool) -> String {
    text.chars()
        .map(|c| {
            let mut it: Box<dyn Iterator<Item = char>> = if upper {
                Box::new(c.to_uppercase())
            } else {
                Box::new(c.to_lowercase())
            };
            match (it.next(), it.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

pub fn upper(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(map_case(s(&args[0])?, true).into())
}

pub fn lower(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(map_case(s(&args[0])?, false).into())
}

/// Go's `strings.SplitN`/`SplitAfterN` (n < 0: all).
fn split_impl(text: &str, sep: &str, n: i64, keep_sep: bool) -> Vec<Value> {
    if n == 0 {
        return Vec::new();
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let mut out: Vec<Value> = Vec::new();
    if sep.is_empty() {
        let chars: Vec<&str> = text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
        for (i, c) in chars.iter().enumerate() {
            if out.len() + 1 == limit {
                out.push(Value::str(chars[i..].concat()));
                return out;
            }
            out.push(Value::str(*c));
        }
        return out;
    }
    let mut rest = text;
    while out.len() + 1 < limit {
        match rest.find(sep) {
            Some(i) => {
                let end = if keep_sep { i + sep.len() } else { i };
                out.push(Value::str(&rest[..end]));
                rest = &rest[i + sep.len()..];
            }
            None => break,
        }
    }
    out.push(Value::str(rest));
    out
}

fn split_common(args: &[Value], budget: &mut Budget, keep: bool) -> Result<Value, String> {
    let text = s(&args[0])?;
    let sep = s(&args[1])?;
    let n = match args.get(2) {
        Some(v) => to_int(v)?,
        None => -1,
    };
    let parts = split_impl(text, sep, n, keep);
    budget.grow(parts.len())?;
    Ok(Value::list(parts))
}

pub fn split(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    split_common(args, budget, false)
}

pub fn split_after(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    split_common(args, budget, true)
}

pub fn replace(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let (text, old, new) = (s(&args[0])?, s(&args[1])?, s(&args[2])?);
    let count = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    budget.string_len(text.len().saturating_add(count.saturating_mul(new.len())))?;
    Ok(text.replace(old, new).into())
}

pub fn repeat(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let text = s(&args[0])?;
    let n = match &args[1] {
        Value::Int(i) => *i,
        Value::Uint(u) => *u as i64,
        other => {
            return Err(format!(
                "cannot use {} as argument (type int) to call repeat",
                go_type(other)
            ))
        }
    };
    if n < 0 {
        return Err(format!(
            "invalid argument for repeat (expected positive integer, got {n})"
        ));
    }
    budget.string_len(
        text.len()
            .saturating_mul(usize::try_from(n).unwrap_or(usize::MAX)),
    )?;
    Ok(text.repeat(n as usize).into())
}

fn offset(found: Option<usize>) -> Value {
    Value::Int(found.map_or(-1, |i| i as i64))
}

pub fn index_of(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(offset(s(&args[0])?.find(s(&args[1])?)))
}

pub fn last_index_of(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(offset(s(&args[0])?.rfind(s(&args[1])?)))
}

pub fn has_prefix(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(Value::Bool(s(&args[0])?.starts_with(s(&args[1])?)))
}

pub fn has_suffix(args: &[Value], _: &mut Budget) -> Result<Value, String> {
    Ok(Value::Bool(s(&args[0])?.ends_with(s(&args[1])?)))
}

pub fn join(args: &[Value], budget: &mut Budget) -> Result<Value, String> {
    let items = match &args[0] {
        Value::List(items) => items,
        Value::Nil => return Err("invalid argument for join (type %!s(<nil>))".into()),
        other => {
            return Err(format!(
                "invalid argument for join (type {})",
                go_type(other)
            ))
        }
    };
    let sep = args.get(1).map_or(Ok(""), s)?;
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(s(item)?);
        budget.string_len(out.len())?;
    }
    Ok(out.into())
}
