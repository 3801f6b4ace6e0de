//! The same document as pretty JSON: two-space indentation, keys in map order, `{}` and
//! `[]` for empty collections.
//!
//! Floats are written as in YAML output, so an integral float keeps its `.0` (`2.0`) and
//! a JSON reader that distinguishes integers from floats sees the same types as the YAML
//! reader; very large or small ones use an exponent (`1.0e300`). JSON has no NaN or
//! infinity: such a value is an error naming its path.

use super::path::{format_path, PathSegment};
use super::pieces::{append_after, Pieces, Unfinished, PIECE};
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
    Ok(to_json_within_apart(value, limit, Vec::new())?.map(Pieces::into_string))
}

/// [`to_json_within`] for a document some of whose top-level lists were written
/// apart ([`Items`]): each key of `apart` holds an empty list in `value`, and its
/// items are the pieces given with it, moved into the document's.
pub fn to_json_within_apart(
    value: &Value,
    limit: usize,
    apart: Vec<(&str, Pieces)>,
) -> Result<Option<Pieces>, EmitError> {
    let mut writer = JsonWriter::new(limit);
    writer.apart = apart;
    writer.value(value, 0)?;
    writer.out.push('\n');
    Ok((writer.len() <= limit).then(|| writer.into_pieces()))
}

/// The items of a list that is the value of a top-level key, written one at a time
/// for [`to_json_within_apart`] (each item can be let go of once written). Writing
/// stops at the first item that starts past `limit` bytes, or at the first value
/// JSON cannot hold; the caller then writes the whole document, whose writer says
/// which of the two comes first.
pub struct Items {
    text: Unfinished,
    limit: usize,
    failed: bool,
}

impl Items {
    pub fn new(limit: usize) -> Items {
        Items {
            text: Unfinished::default(),
            limit,
            failed: false,
        }
    }

    /// Writes `item`, the list's item at `index`, after the others.
    pub fn push(&mut self, index: usize, item: &Value) {
        let mut writer = JsonWriter::new(self.limit);
        let text = std::mem::take(&mut self.text);
        (writer.done, writer.done_len, writer.out) = (text.done, text.done_len, text.out);
        writer.next_piece();
        writer.path.push(PathSegment::Index(index));
        writer.separator(index, ITEM_INDENT);
        self.failed |= writer.value(item, ITEM_INDENT).is_err();
        self.text = Unfinished {
            done: writer.done,
            done_len: writer.done_len,
            out: writer.out,
        };
    }

    /// Whether writing stopped: the items are longer than `limit`, or one of them
    /// cannot be written.
    pub fn stopped(&self) -> bool {
        self.failed || self.text.len() > self.limit
    }

    /// The items written, or `None` if one could not be.
    pub fn into_text(self) -> Option<Pieces> {
        (!self.failed).then(|| self.text.finish())
    }
}

/// Where the items of a top-level key's list are indented.
const ITEM_INDENT: usize = 4;

struct JsonWriter<'p> {
    /// The pieces written so far (see [`Pieces`]) and the one being written.
    done: Pieces,
    done_len: usize,
    out: String,
    path: Vec<PathSegment<'p>>,
    /// Past this many bytes the writer stops (the caller then has no text).
    limit: usize,
    /// Top-level lists written apart, with their items ([`to_json_within_apart`]).
    apart: Vec<(&'p str, Pieces)>,
}

impl<'p> JsonWriter<'p> {
    fn new(limit: usize) -> JsonWriter<'p> {
        JsonWriter {
            done: Pieces::default(),
            done_len: 0,
            out: String::new(),
            path: Vec::new(),
            limit,
            apart: Vec::new(),
        }
    }

    /// Bytes written so far.
    fn len(&self) -> usize {
        self.done_len + self.out.len()
    }

    /// The text written, in pieces.
    fn into_pieces(mut self) -> Pieces {
        self.done.push(self.out);
        self.done
    }

    /// Starts a new piece once the current one is full (a JSON text is never edited
    /// once written, so it may be cut anywhere).
    fn next_piece(&mut self) {
        if self.out.len() >= PIECE {
            let full = std::mem::replace(&mut self.out, String::with_capacity(PIECE + PIECE / 4));
            self.done_len += full.len();
            self.done.push(full);
        }
    }

    /// Moves `later`'s pieces after the text written so far.
    fn append(&mut self, later: Pieces) {
        append_after(&mut self.done, &mut self.done_len, &mut self.out, later);
    }

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
            Value::List(items) if items.is_empty() => match self.written_apart() {
                Some(items) => {
                    self.out.push('[');
                    self.append(items);
                    self.close(']', indent);
                }
                None => self.out.push_str("[]"),
            },
            Value::Map(map) if map.is_empty() => self.out.push_str("{}"),
            Value::List(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if self.len() > self.limit {
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
                    if self.len() > self.limit {
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

    /// The items written apart for the top-level key being written, whose value is
    /// the empty list that stands for them ([`to_json_within_apart`]).
    fn written_apart(&mut self) -> Option<Pieces> {
        let [PathSegment::Key(key)] = self.path.as_slice() else {
            return None;
        };
        let at = self.apart.iter().position(|(k, _)| k == key)?;
        Some(self.apart.swap_remove(at).1)
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
        let mut writer = JsonWriter::new(100);
        writer.value(&value, 0).expect("json");
        assert!(
            writer.out.len() <= 100 + ",\n  9999".len(),
            "{}",
            writer.out.len()
        );
    }

    #[test]
    fn top_level_lists_written_apart_read_as_written_in_place() {
        let item = |k: usize| match k % 3 {
            0 => {
                let mut m = Map::default();
                m.insert("name".into(), Value::from(format!("c{k}").as_str()));
                Value::map(m)
            }
            1 => Value::list(vec![Value::Int(k as i64)]),
            _ => Value::Float(k as f64),
        };
        let document = |terraform: Vec<Value>, kustomize: Vec<Value>| {
            let mut root = Map::default();
            root.insert("kind".into(), Value::from("Blueprint"));
            root.insert("terraform".into(), Value::list(terraform));
            root.insert("kustomize".into(), Value::list(kustomize));
            Value::map(root)
        };
        let items = |n: usize| -> Vec<Value> { (0..n).map(item).collect() };
        let whole = to_json(&document(items(20_000), items(4))).expect("json");
        let apart = |n: usize| {
            let mut written = Items::new(usize::MAX);
            items(n)
                .iter()
                .enumerate()
                .for_each(|(i, v)| written.push(i, v));
            written.into_text().expect("all written")
        };
        let pieces = apart(20_000);
        assert!(pieces.as_bytes().len() > 1, "in pieces");
        let text = to_json_within_apart(
            &document(vec![], vec![]),
            usize::MAX,
            vec![("kustomize", apart(4)), ("terraform", pieces)],
        )
        .expect("json");
        assert_eq!(text.map(Pieces::into_string), Some(whole));
        // An item JSON cannot hold stops the writing and leaves no text.
        let mut written = Items::new(usize::MAX);
        written.push(0, &Value::Int(1));
        written.push(1, &Value::Float(f64::INFINITY));
        assert!(written.stopped());
        assert_eq!(written.into_text(), None);
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
