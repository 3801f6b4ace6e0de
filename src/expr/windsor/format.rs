//! Turning values into text the way Windsor's Go code does: `fmt`'s `%v` for scalars and
//! goccy/go-yaml's `Marshal` for maps and lists. `string()`, `yamlString()` and `${…}`
//! splicing all go through here, so their output matches Windsor byte for byte on the
//! shapes templates produce.
//!
//! goccy's rules reproduced here: map keys sorted bytewise, two-space indentation, a list
//! under a key is not indented (`key:\n- a`), empty collections as `{}`/`[]`, strings
//! double-quoted (Go escapes) when they would read back as something else, multi-line
//! strings as literal blocks (`|`, `|-`, `|+`), floats always with a `.` or an exponent.

use crate::value::text::{self, Dialect, Escape, Plain};
use crate::value::Value;

/// Deepest nesting written; deeper values are cut off with an error marker so a
/// pathological value cannot exhaust the stack.
const MAX_DEPTH: usize = 512;

/// Go's `%v` of a value (`<nil>` for nil; maps and lists in Go's bracket notation, which
/// Windsor never shows because it renders those as YAML first).
pub fn go_format(value: &Value) -> String {
    let mut out = String::new();
    go_format_into(&mut out, value, 0);
    out
}

fn go_format_into(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Str(s) => out.push_str(s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                if depth < MAX_DEPTH {
                    go_format_into(out, item, depth + 1);
                }
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push_str("map[");
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                if let (Some(v), true) = (map.get(key), depth < MAX_DEPTH) {
                    go_format_into(out, v, depth + 1);
                }
            }
            out.push(']');
        }
        atom => {
            text::atom(out, atom, Dialect::GoFmt);
        }
    }
}

/// The text a value becomes inside a string: `string(x)` and `${…}` splicing.
/// nil is empty, maps and lists are trimmed YAML, everything else is `%v`.
pub fn interpolation_text(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        Value::Str(s) => s.to_string(),
        Value::List(_) | Value::Map(_) => yaml_marshal(value).trim().to_string(),
        other => go_format(other),
    }
}

/// goccy/go-yaml's `Marshal` of a value: the whole document, ending in a newline.
pub fn yaml_marshal(value: &Value) -> String {
    let mut w = YamlWriter { out: String::new() };
    match value {
        Value::Map(map) if !map.is_empty() => w.map(map, 0, false, 0),
        Value::List(items) if !items.is_empty() => w.list(items, 0, false, 0),
        // A top-level block scalar is indented like a map value would be.
        scalar => w.scalar(scalar, 2),
    }
    if !w.out.ends_with('\n') {
        w.out.push('\n');
    }
    w.out
}

struct YamlWriter {
    out: String,
}

impl YamlWriter {
    fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn newline(&mut self) {
        self.out.push('\n');
    }

    /// `key: value` lines at `indent`; with `inline_first` the first key continues the
    /// current line (right after `- `).
    fn map(&mut self, map: &crate::value::Map, indent: usize, inline_first: bool, depth: usize) {
        let mut keys: Vec<_> = map.iter().collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        for (i, (key, value)) in keys.into_iter().enumerate() {
            if i > 0 || !inline_first {
                self.indent(indent);
            }
            self.key(key);
            self.out.push(':');
            self.after_key(value, indent, depth);
        }
    }

    fn key(&mut self, key: &str) {
        if text::needs_quotes(key, Plain::Goccy) || key.contains(['\n', '\r']) {
            text::quote(&mut self.out, key, Escape::GoQuote);
        } else {
            self.out.push_str(key);
        }
    }

    fn after_key(&mut self, value: &Value, indent: usize, depth: usize) {
        if depth >= MAX_DEPTH {
            self.out.push_str(" null\n");
            return;
        }
        match value {
            Value::Map(m) if !m.is_empty() => {
                self.newline();
                self.map(m, indent + 2, false, depth + 1);
            }
            Value::List(items) if !items.is_empty() => {
                self.newline();
                self.list(items, indent, false, depth + 1);
            }
            scalar => {
                self.out.push(' ');
                self.scalar(scalar, indent + 2);
            }
        }
    }

    /// `- item` lines at `indent`; with `inline_first` the first item continues the
    /// current line (a list directly inside a list).
    fn list(&mut self, items: &[Value], indent: usize, inline_first: bool, depth: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline_first {
                self.indent(indent);
            }
            self.out.push_str("- ");
            if depth >= MAX_DEPTH {
                self.out.push_str("null\n");
                continue;
            }
            match item {
                Value::Map(m) if !m.is_empty() => self.map(m, indent + 2, true, depth + 1),
                Value::List(inner) if !inner.is_empty() => {
                    self.list(inner, indent + 2, true, depth + 1)
                }
                scalar => self.scalar(scalar, indent + 2),
            }
        }
    }

    /// A scalar (or empty collection) and the end of its line; block scalars put their
    /// lines at `block_indent`.
    fn scalar(&mut self, value: &Value, block_indent: usize) {
        match value {
            Value::Str(s) if text::needs_quotes(s, Plain::Goccy) => {
                text::quote(&mut self.out, s, Escape::GoQuote)
            }
            Value::Str(s) if s.contains('\n') => self.literal_block(s, block_indent),
            Value::Str(s) => self.out.push_str(s),
            Value::List(_) => self.out.push_str("[]"),
            Value::Map(_) => self.out.push_str("{}"),
            atom => {
                text::atom(&mut self.out, atom, Dialect::GoYaml);
            }
        }
        self.newline();
    }

    /// A `|` block: the chomping header says how trailing newlines are kept, every line
    /// is indented (goccy writes the indentation on empty lines too).
    fn literal_block(&mut self, s: &str, indent: usize) {
        let header = if s.ends_with("\n\n") {
            "|+"
        } else if s.ends_with('\n') {
            "|"
        } else {
            "|-"
        };
        let prefix = " ".repeat(indent);
        let mut block = s
            .split('\n')
            .map(|line| format!("{prefix}{line}"))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(stripped) = block.strip_suffix(&format!("\n{prefix}")) {
            block.truncate(stripped.len());
        }
        if let Some(stripped) = block.strip_suffix(&prefix) {
            block.truncate(stripped.len());
        }
        self.out.push_str(header);
        self.out.push('\n');
        self.out.push_str(&block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    fn map(entries: &[(&str, Value)]) -> Value {
        let mut m = Map::default();
        for (k, v) in entries {
            m.insert((*k).into(), v.clone());
        }
        Value::map(m)
    }

    fn list(items: &[Value]) -> Value {
        Value::list(items.to_vec())
    }

    #[test]
    fn floats_follow_go_percent_v() {
        let cases = [
            (4.0, "4"),
            (2.5, "2.5"),
            (1e-7, "1e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.75, "0.75"),
            (1234567.0, "1.234567e+06"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (-0.0, "-0"),
            (0.0, "0"),
            (-2.5, "-2.5"),
            (123456.5, "123456.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        ];
        for (f, want) in cases {
            assert_eq!(text::float(f, Dialect::GoFmt), want, "{f:e}");
        }
    }

    #[test]
    fn json_floats_follow_encoding_json() {
        assert_eq!(text::float(1.0, Dialect::GoJson), "1");
        assert_eq!(text::float(1e6, Dialect::GoJson), "1000000");
        assert_eq!(text::float(1e21, Dialect::GoJson), "1e+21");
        assert_eq!(text::float(1e-7, Dialect::GoJson), "1e-7");
        assert_eq!(text::float(1.5e-10, Dialect::GoJson), "1.5e-10");
        assert_eq!(text::float(0.000001, Dialect::GoJson), "0.000001");
    }

    #[test]
    fn scalars_format_like_go() {
        assert_eq!(go_format(&Value::Nil), "<nil>");
        assert_eq!(go_format(&Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(go_format(&Value::Uint(u64::MAX)), "18446744073709551615");
        assert_eq!(go_format(&Value::Bool(true)), "true");
        assert_eq!(go_format(&list(&[Value::Int(1), "a".into()])), "[1 a]");
        assert_eq!(
            go_format(&map(&[("b", Value::Int(2)), ("a", Value::Nil)])),
            "map[a:<nil> b:2]"
        );
    }

    #[test]
    fn interpolation_text_of_each_kind() {
        assert_eq!(interpolation_text(&Value::Nil), "");
        assert_eq!(interpolation_text(&Value::Float(4.0)), "4");
        assert_eq!(interpolation_text(&"x".into()), "x");
        assert_eq!(interpolation_text(&list(&[])), "[]");
        assert_eq!(interpolation_text(&map(&[])), "{}");
        assert_eq!(
            interpolation_text(&list(&[Value::Int(1), Value::Int(2)])),
            "- 1\n- 2"
        );
    }

    fn basic_obj() -> Value {
        map(&[
            ("a", Value::Int(1)),
            (
                "b",
                map(&[
                    ("c", "deep".into()),
                    ("d", list(&[Value::Int(10), Value::Int(20), Value::Int(30)])),
                ]),
            ),
            ("e", Value::Nil),
            ("f", Value::Bool(false)),
            ("g", Value::Int(0)),
            ("h", "".into()),
            ("i", list(&[])),
        ])
    }

    #[test]
    fn yaml_of_nested_map_matches_conformance() {
        // builtins_conv/8
        assert_eq!(
            yaml_marshal(&basic_obj()).trim(),
            "a: 1\nb:\n  c: deep\n  d:\n  - 10\n  - 20\n  - 30\ne: null\nf: false\ng: 0\nh: \"\"\ni: []"
        );
    }

    #[test]
    fn yaml_of_nested_lists_matches_conformance() {
        // builtins_conv/11: [[1, 2], [3, [4, [5]]]]
        let nested = list(&[
            list(&[Value::Int(1), Value::Int(2)]),
            list(&[
                Value::Int(3),
                list(&[Value::Int(4), list(&[Value::Int(5)])]),
            ]),
        ]);
        assert_eq!(
            yaml_marshal(&nested),
            "- - 1\n  - 2\n- - 3\n  - - 4\n    - - 5\n"
        );
    }

    #[test]
    fn yaml_sorts_keys_and_quotes_ambiguous_strings() {
        let v = map(&[
            ("z", Value::Int(1)),
            ("a", "true".into()),
            ("m", "1".into()),
            ("k", "007".into()),
            ("y", "y".into()),
            ("u", "10.9.0.10:6443".into()),
            ("t", "12:30".into()),
            ("s", "a: b".into()),
            ("r", "# not a comment".into()),
            ("q", "- item".into()),
            ("p", "https://example.com/x".into()),
            ("o", " lead".into()),
            ("n", "1e3".into()),
            ("l", "2001-12-14".into()),
        ]);
        assert_eq!(
            yaml_marshal(&v),
            "a: \"true\"\nk: \"007\"\nl: \"2001-12-14\"\nm: \"1\"\n\"n\": \"1e3\"\no: \" lead\"\n\
             p: https://example.com/x\nq: \"- item\"\nr: \"# not a comment\"\ns: \"a: b\"\n\
             t: \"12:30\"\nu: 10.9.0.10:6443\n\"y\": \"y\"\nz: 1\n"
        );
    }

    #[test]
    fn yaml_quotes_keys_like_values() {
        let v = map(&[
            ("1", "one".into()),
            ("", "blank".into()),
            ("with.dot", "wd".into()),
        ]);
        assert_eq!(yaml_marshal(&v), "\"\": blank\n\"1\": one\nwith.dot: wd\n");
    }

    #[test]
    fn yaml_multiline_strings_are_literal_blocks() {
        // builtins_conv/17
        assert_eq!(
            yaml_marshal(&map(&[("k", "multi\nline".into())])),
            "k: |-\n  multi\n  line\n"
        );
        assert_eq!(yaml_marshal(&map(&[("k", "a\n".into())])), "k: |\n  a\n");
        assert_eq!(
            yaml_marshal(&list(&[map(&[("k", "x\ny".into())])])),
            "- k: |-\n    x\n    y\n"
        );
        // A multi-line string that needs quoting is quoted with Go escapes instead.
        assert_eq!(
            yaml_marshal(&map(&[("k", "a: b\nc".into())])),
            "k: \"a: b\\nc\"\n"
        );
    }

    #[test]
    fn yaml_floats_keep_their_kind() {
        let v = list(&[
            Value::Float(3.0),
            Value::Float(1e6),
            Value::Float(0.5),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NAN),
        ]);
        assert_eq!(yaml_marshal(&v), "- 3.0\n- 1e+06\n- 0.5\n- .inf\n- .nan\n");
    }

    #[test]
    fn yaml_of_scalars_and_empty_collections() {
        assert_eq!(yaml_marshal(&map(&[])), "{}\n");
        assert_eq!(yaml_marshal(&list(&[])), "[]\n");
        assert_eq!(yaml_marshal(&"true".into()), "\"true\"\n");
        assert_eq!(yaml_marshal(&"".into()), "\"\"\n");
        assert_eq!(yaml_marshal(&Value::Nil), "null\n");
        assert_eq!(
            yaml_marshal(&list(&[
                Value::Int(1),
                "two".into(),
                Value::Float(3.0),
                Value::Bool(true),
                Value::Nil
            ])),
            "- 1\n- two\n- 3.0\n- true\n- null\n"
        );
        assert_eq!(yaml_marshal(&list(&[map(&[]), list(&[])])), "- {}\n- []\n");
    }

    #[test]
    fn go_quote_escapes() {
        let mut quoted = String::new();
        text::quote(&mut quoted, "a\"b\\c\n\t\u{1}é\u{200b}", Escape::GoQuote);
        assert_eq!(quoted, "\"a\\\"b\\\\c\\n\\t\\x01é\\u200b\"");
    }

    #[test]
    fn deep_values_do_not_overflow_the_stack() {
        let mut v = Value::Int(1);
        for _ in 0..5000 {
            v = list(&[v]);
        }
        let text = yaml_marshal(&v);
        assert!(text.len() > 1000);
        let _ = go_format(&v);
        // Dropping a deeply nested Arc chain recursively is the caller's concern; unwind
        // it iteratively here so the test itself stays within the stack.
        let mut cur = v;
        while let Value::List(items) = cur {
            cur = match std::sync::Arc::try_unwrap(items) {
                Ok(mut vec) => vec.pop().unwrap_or(Value::Nil),
                Err(_) => Value::Nil,
            };
        }
    }

    #[test]
    fn type_names_match_go() {
        assert_eq!(crate::expr::ops::go_type(&Value::Nil), "<nil>");
        assert_eq!(crate::expr::ops::go_type(&Value::Uint(1)), "uint64");
        assert_eq!(crate::expr::ops::go_type(&list(&[])), "[]interface {}");
    }
}
