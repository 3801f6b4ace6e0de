//! `yaml(arg[, input])` and `yamlString(v)` / `yamlString(path, input)`.
//!
//! `yaml` takes inline YAML when `arg` holds a newline, otherwise a file name; with
//! no such file and no `input`, `arg` itself is parsed, and a plain-string result
//! means the name was meant as a file (`yaml() file not found`). With `input` the text
//! is first interpolated with `input` in scope. A list holding exactly one map is
//! unwrapped to that map, and integers come back as Go's YAML decoder makes them
//! (`uint64` when non-negative).

use super::args;
use super::format::{interpolation_text, yaml_marshal};
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::expr::ops::go_type;
use crate::files::FileId;
use crate::value::Value;

pub const YAML: NativeFn = NativeFn {
    name: "yaml",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: Some(Ty::Any),
        ret: Ty::Any,
    }],
    call: yaml,
};

pub const YAML_STRING: NativeFn = NativeFn {
    name: "yamlString",
    sigs: &[
        Signature {
            params: &[Ty::Any],
            variadic: None,
            ret: Ty::Str,
        },
        Signature {
            params: &[Ty::Str, Ty::Any],
            variadic: None,
            ret: Ty::Str,
        },
    ],
    call: yaml_string,
};

fn yaml(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    if args.is_empty() || args.len() > 2 {
        return Err(NativeError::run(format!(
            "yaml() requires 1 or 2 arguments, got {}",
            args.len()
        )));
    }
    let Value::Str(arg) = &args[0] else {
        return Err(NativeError::run(format!(
            "yaml() first argument must be a string (file path or YAML content), got {}",
            go_type(&args[0])
        )));
    };
    let input = args.get(1);
    let not_found = || NativeError::run(format!("yaml() file not found: {arg}"));

    let (text, from_file) = if arg.contains('\n') {
        (arg.to_string(), false)
    } else {
        match call.host.read_file(arg) {
            Ok((_, bytes)) => (String::from_utf8_lossy(&bytes).into_owned(), true),
            Err(_) if input.is_some() => return Err(not_found()),
            Err(_) => (arg.to_string(), false),
        }
    };
    let looked_like_a_name = !from_file && !arg.contains('\n');

    let parsed = match input {
        Some(input) => match render(call, &text, input)? {
            Value::Str(rendered) => parse(&rendered)?,
            // A template that is one whole `${…}` yields its value as it is.
            other => other,
        },
        None => match parse(&text) {
            Ok(v) => v,
            Err(_) if looked_like_a_name => return Err(not_found()),
            Err(e) => return Err(e),
        },
    };
    if looked_like_a_name && matches!(parsed, Value::Str(_)) {
        return Err(not_found());
    }
    Ok(unwrap_single_map(parsed))
}

/// Interpolates `${…}` in `text` with `input` in scope; text without any is
/// returned as it is, as the interpolation loop would.
fn render(call: &Call<'_>, text: &str, input: &Value) -> Result<Value, NativeError> {
    if text.contains("${") {
        call.interp.interpolate(text, input.clone())
    } else {
        Ok(Value::from(text))
    }
}

/// Parses one YAML document into values typed as goccy/go-yaml types them.
fn parse(text: &str) -> Result<Value, NativeError> {
    crate::yaml::parse(text, FileId::default())
        .map(|node| node.to_value_go_yaml())
        .map_err(|e| NativeError::run(format!("yaml() failed to parse: {}", e.message)))
}

/// `[ {a: 1} ]` → `{a: 1}`: Windsor unwraps a list that holds exactly one map.
fn unwrap_single_map(value: Value) -> Value {
    match value.as_list() {
        Some([only @ Value::Map(_)]) => only.clone(),
        _ => value,
    }
}

fn yaml_string(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    match args {
        [value] => Ok(Value::from(yaml_marshal(value))),
        [path, input] => {
            let path = args::string(path, "yamlString() first argument")?;
            // A name that is not a file is the template text itself.
            let text = match call.host.read_file(path) {
                Ok((_, bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => path.to_string(),
            };
            let rendered = render(call, &text, input)?;
            Ok(match rendered {
                Value::Str(s) => Value::Str(s),
                other => Value::from(interpolation_text(&other)),
            })
        }
        _ => Err(NativeError::run(format!(
            "yamlString() requires 1 or 2 arguments, got {}",
            args.len()
        ))),
    }
}
