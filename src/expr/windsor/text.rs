//! Windsor's `string` and `split`, which replace expr-lang's builtins of the same
//! names: `string` renders maps and lists as YAML, `split` takes exactly two strings.

use super::args;
use super::format::interpolation_text;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::Value;

pub const STRING: NativeFn = NativeFn {
    name: "string",
    sigs: &[Signature {
        params: &[Ty::Any],
        variadic: None,
        ret: Ty::Str,
    }],
    call: string,
};

pub const SPLIT: NativeFn = NativeFn {
    name: "split",
    sigs: &[Signature {
        params: &[Ty::Str, Ty::Str],
        variadic: None,
        ret: Ty::List,
    }],
    call: split,
};

/// nil → `""`, maps and lists → trimmed YAML, everything else → Go `%v`.
fn string(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::from(interpolation_text(first(args)?)))
}

/// Go's `strings.Split`: an empty separator splits into characters, an empty text
/// gives one empty part.
fn split(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let (Some(text), Some(sep)) = (args.first(), args.get(1)) else {
        return Err(NativeError::run("split() requires 2 arguments"));
    };
    let text = args::string(text, "split() first argument")?;
    let sep = args::string(sep, "split() second argument")?;
    Ok(Value::list(split_parts(text, sep)))
}

fn split_parts(text: &str, sep: &str) -> Vec<Value> {
    if sep.is_empty() {
        return text
            .char_indices()
            .map(|(i, c)| Value::str(&text[i..i + c.len_utf8()]))
            .collect();
    }
    text.split(sep).map(Value::str).collect()
}

fn first(args: &[Value]) -> Result<&Value, NativeError> {
    args.first()
        .ok_or_else(|| NativeError::run("missing argument"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str, sep: &str) -> Vec<String> {
        split_parts(text, sep)
            .iter()
            .map(|v| v.as_str().unwrap_or("?").to_string())
            .collect()
    }

    #[test]
    fn split_follows_go() {
        assert_eq!(parts("a,b,,c", ","), ["a", "b", "", "c"]);
        assert_eq!(parts("", ","), [""]);
        assert_eq!(parts("", ""), Vec::<String>::new());
        assert_eq!(parts("aé", ""), ["a", "é"]);
        assert_eq!(parts("a::b", "::"), ["a", "b"]);
    }
}
