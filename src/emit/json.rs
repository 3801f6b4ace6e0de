//! The same document as pretty JSON: two-space indentation, keys in map order, `{}` and
//! `[]` for empty collections.
//!
//! Floats are written as in YAML output, so an integral float keeps its `.0` (`2.0`) and
//! a JSON reader that distinguishes integers from floats sees the same types as the YAML
//! reader; very large or small ones use an exponent (`1.0e300`). JSON has no NaN or
//! infinity: such a value is an error naming its path.

use super::path::{format_path, PathSegment};
use super::EmitError;
use crate::value::text::{self, Dialect, Escape};
use crate::value::Value;

/// The document for `value`, ending in a newline.
pub fn to_json(value: &Value) -> Result<String, EmitError> {
    to_json_within(value, usize::MAX).map(|text| text.unwrap_or_default())
}

/// [`to_json`], or `None` once the text passes `limit` bytes: writing stops at the
/// first item that starts past it.
pub fn to_json_within(value: &Value, limit: usize) -> Result<Option<String>, EmitError> {
    let mut writer = JsonWriter {
        out: String::new(),
        path: Vec::new(),
        limit,
    };
    writer.value(value, 0)?;
    writer.out.push('\n');
    Ok((writer.out.len() <= limit).then_some(writer.out))
}

struct JsonWriter<'p> {
    out: String,
    path: Vec<PathSegment<'p>>,
    /// Past this many bytes the writer stops (the caller then has no text).
    limit: usize,
}

impl<'p> JsonWriter<'p> {
    fn value(&mut self, value: &'p Value, indent: usize) -> Result<(), EmitError> {
        match value {
            Value::Float(f) if !f.is_finite() => {
                return Err(EmitError {
                    path: format_path(&self.path),
                    message: format!(
                        "{} cannot be written as JSON",
                        text::float(*f, Dialect::Bpc)
                    ),
                });
            }
            Value::Str(s) => text::quote(&mut self.out, s, Escape::Json),
            Value::List(items) if items.is_empty() => self.out.push_str("[]"),
            Value::Map(map) if map.is_empty() => self.out.push_str("{}"),
            Value::List(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if self.out.len() > self.limit {
                        return Ok(());
                    }
                    self.separator(i, indent + 2);
                    self.path.push(PathSegment::Index(i));
                    self.value(item, indent + 2)?;
                    self.path.pop();
                }
                self.close(']', indent);
            }
            Value::Map(map) => {
                self.out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if self.out.len() > self.limit {
                        return Ok(());
                    }
                    self.separator(i, indent + 2);
                    text::quote(&mut self.out, key, Escape::Json);
                    self.out.push_str(": ");
                    self.path.push(PathSegment::Key(key));
                    self.value(item, indent + 2)?;
                    self.path.pop();
                }
                self.close('}', indent);
            }
            atom => {
                text::atom(&mut self.out, atom, Dialect::Bpc);
            }
        }
        Ok(())
    }

    fn separator(&mut self, index: usize, indent: usize) {
        if index > 0 {
            self.out.push(',');
        }
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn close(&mut self, bracket: char, indent: usize) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.out.push(bracket);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    #[test]
    fn pretty_and_ordered() {
        let mut inner = Map::default();
        inner.insert("z".into(), Value::Float(2.0));
        inner.insert("a".into(), Value::list(vec![Value::Int(-1), Value::Nil]));
        inner.insert("e".into(), Value::map(Map::default()));
        let mut root = Map::default();
        root.insert("name".into(), Value::from("a \"q\"\n\u{1}"));
        root.insert("inner".into(), Value::map(inner));
        root.insert("none".into(), Value::list(vec![]));
        root.insert("big".into(), Value::Uint(u64::MAX));
        let expected = r#"{
  "name": "a \"q\"\n\u0001",
  "inner": {
    "z": 2.0,
    "a": [
      -1,
      null
    ],
    "e": {}
  },
  "none": [],
  "big": 18446744073709551615
}
"#;
        let out = to_json(&Value::map(root)).expect("json");
        assert_eq!(out, expected);
        let parsed: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(parsed["inner"]["z"], serde_json::json!(2.0));
    }

    #[test]
    fn a_writer_with_a_limit_stops_at_the_item_that_passes_it() {
        let value = Value::list((0..10_000).map(Value::Int).collect());
        let whole = to_json(&value).expect("json");
        let within = |limit| to_json_within(&value, limit).expect("json");
        assert_eq!(within(whole.len()), Some(whole.clone()));
        assert_eq!(within(whole.len() - 1), None);
        let mut writer = JsonWriter {
            out: String::new(),
            path: Vec::new(),
            limit: 100,
        };
        writer.value(&value, 0).expect("json");
        assert!(
            writer.out.len() <= 100 + ",\n  9999".len(),
            "{}",
            writer.out.len()
        );
    }

    #[test]
    fn non_finite_floats_are_errors() {
        let mut root = Map::default();
        root.insert(
            "list".into(),
            Value::list(vec![Value::Int(1), Value::Float(f64::NAN)]),
        );
        let err = to_json(&Value::map(root)).expect_err("NaN");
        assert_eq!(err.path, "list[1]");
        assert_eq!(err.message, ".nan cannot be written as JSON");
    }
}
