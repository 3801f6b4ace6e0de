//! `jsonString(v)`: Go's `json.Marshal` of a value — compact, map keys sorted, HTML
//! characters escaped. The same encoding hands the scope to Jsonnet.

use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::text::{self, Escape};
use crate::value::Value;

pub const JSON_STRING: NativeFn = NativeFn {
    name: "jsonString",
    sigs: &[Signature {
        params: &[Ty::Any],
        variadic: None,
        ret: Ty::Str,
    }],
    call: json_string,
};

/// Deepest nesting encoded; values from YAML are far shallower, and the limit keeps
/// the recursion bounded whatever a caller builds.
const MAX_DEPTH: usize = 512;

fn json_string(_: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let value = args.first().unwrap_or(&Value::Nil);
    marshal(value)
        .map(Value::from)
        .map_err(|m| NativeError::run(format!("jsonString() failed: {m}")))
}

/// Go's `json.Marshal` text of `value`.
pub fn marshal(value: &Value) -> Result<String, String> {
    let mut out = String::new();
    write(value, &mut out, 0)?;
    Ok(out)
}

fn write(value: &Value, out: &mut String, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("value nests deeper than {MAX_DEPTH} levels"));
    }
    match value {
        Value::Str(s) => text::quote(out, s, Escape::GoJson),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out, depth + 1)?;
            }
            out.push(']');
        }
        Value::Map(map) => {
            let mut keys: Vec<&str> = map.keys().map(|k| &**k).collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                text::quote(out, key, Escape::GoJson);
                out.push(':');
                write(map.get(key).unwrap_or(&Value::Nil), out, depth + 1)?;
            }
            out.push('}');
        }
        atom => {
            text::go_json_atom(out, atom)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Map;

    #[test]
    fn marshals_like_go() {
        let floats = vec![Value::Float(1e21), Value::Float(2.5), Value::Nil];
        let m: Map = [
            ("z", Value::Int(1)),
            ("a", Value::list(floats)),
            ("h", Value::from("<a&b>\n\u{1}\u{2028}é")),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v))
        .collect();
        assert_eq!(
            marshal(&Value::map(m)).ok(),
            Some(
                r#"{"a":[1e+21,2.5,null],"h":"\u003ca\u0026b\u003e\n\u0001\u2028é","z":1}"#.into()
            )
        );
        assert!(marshal(&Value::Float(f64::NAN)).is_err());
        assert_eq!(marshal(&Value::Float(3.0)).ok(), Some("3".into()));
    }

    #[test]
    fn refuses_runaway_nesting() {
        let mut v = Value::Nil;
        for _ in 0..(MAX_DEPTH + 2) {
            v = Value::list(vec![v]);
        }
        assert!(marshal(&v).is_err());
    }
}
