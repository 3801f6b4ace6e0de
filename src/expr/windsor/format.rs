//! Turning values into text the way Windsor's Go code does: `fmt`'s `%v` for scalars and
//! goccy/go-yaml's `Marshal` for maps and lists. `string()`, `yamlString()` and `${…}`
//! splicing all go through here, so their output matches Windsor byte for byte on the
//! shapes templates produce.
//!
//! goccy's rules reproduced here: map keys sorted bytewise, two-space indentation, a list
//! under a key is not indented (`key:\n- a`), empty collections as `{}`/`[]`, strings
//! double-quoted (Go escapes) when they would read back as something else, multi-line
//! strings as literal blocks (`|`, `|-`, `|+`), floats always with a `.` or an exponent.

use crate::value::Value;
use crate::yaml::scalar;
use std::fmt::Write;

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
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Uint(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => out.push_str(&go_float(*f)),
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

/// The decimal digits and exponent of the shortest representation that reads back as
/// `f` (finite, non-negative): `digits` has no leading zeros (except `"0"`), and the
/// value is `0.d1d2… × 10^(exp+1)`, i.e. `exp` is the exponent of the first digit.
struct Decimal {
    negative: bool,
    digits: String,
    exp: i32,
}

fn decimal(f: f64) -> Decimal {
    // Rust's `{:e}` prints the shortest round-tripping digits, as Go's 'g'/-1 does.
    let text = format!("{:e}", f);
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    Decimal {
        negative,
        digits: mantissa.replace('.', ""),
        exp: exp.parse().unwrap_or(0),
    }
}

/// `%e` with the shortest digits: `1e+06`, `1.234567e+06`, `5e-07`.
fn exponent_form(d: &Decimal) -> String {
    let mut out = String::new();
    if d.negative {
        out.push('-');
    }
    let (first, rest) = d.digits.split_at(1);
    out.push_str(first);
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    let sign = if d.exp < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", d.exp.unsigned_abs());
    out
}

/// `%f` with the shortest digits: `100000`, `0.0001`, `2.5`.
fn plain_form(d: &Decimal) -> String {
    let mut out = String::new();
    if d.negative {
        out.push('-');
    }
    if d.exp < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-d.exp - 1) as usize));
        out.push_str(&d.digits);
    } else {
        let int_len = d.exp as usize + 1;
        if d.digits.len() <= int_len {
            out.push_str(&d.digits);
            out.extend(std::iter::repeat_n('0', int_len - d.digits.len()));
        } else {
            out.push_str(&d.digits[..int_len]);
            out.push('.');
            out.push_str(&d.digits[int_len..]);
        }
    }
    out
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which is also what `%v` prints:
/// exponent form below 1e-4 and from 1e6 up.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let d = decimal(f);
    if d.exp < -4 || d.exp >= 6 {
        exponent_form(&d)
    } else {
        plain_form(&d)
    }
}

/// Go's `encoding/json` float text: plain between 1e-6 and 1e21, exponent outside,
/// with a one-digit negative exponent (`1e-7`). `None` for NaN and infinities, which
/// JSON cannot hold.
pub fn go_json_float(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let abs = f.abs();
    let d = decimal(f);
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut text = exponent_form(&d);
        // Go trims `e-07` to `e-7` (but keeps two digits after `e+`).
        if let Some(pos) = text.find("e-0") {
            text.remove(pos + 2);
        }
        Some(text)
    } else {
        Some(plain_form(&d))
    }
}

/// goccy's float text: `%v` digits, `.inf`/`.nan` spellings, and `.0` appended when the
/// number would otherwise read back as an integer.
fn yaml_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let mut text = go_float(f);
    if !text.contains(['.', 'e']) {
        text.push_str(".0");
    }
    text
}

/// Go's `strconv.Quote`.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unprintable(c) => {
                if (c as u32) <= 0xffff {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters Go's `unicode.IsPrint` rejects, approximated: C1 controls, the
/// non-space separators and format characters such as zero-width spaces.
fn is_unprintable(c: char) -> bool {
    let n = c as u32;
    c.is_control()
        || (0x2028..=0x2029).contains(&n)
        || (0x200b..=0x200f).contains(&n)
        || (0x202a..=0x202e).contains(&n)
        || (0x2060..=0x2064).contains(&n)
        || n == 0xfeff
        || n == 0xad
        || (0xd800..=0xdfff).contains(&n)
        || (0xfff9..=0xfffb).contains(&n)
}

/// Words goccy quotes because some YAML reader takes them for null, a boolean or a
/// special float.
fn is_reserved_word(s: &str) -> bool {
    matches!(
        s,
        "~" | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    ) || scalar::is_yaml11_bool(s)
}

/// Numbers in any spelling a YAML reader might accept, including `1e3` (goccy's number
/// scanner takes exponents without a dot).
fn looks_like_number(s: &str) -> bool {
    if scalar::parse_number(s).is_some() {
        return true;
    }
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body.bytes().any(|b| b.is_ascii_digit())
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'))
        && body.replace('_', "").parse::<f64>().is_ok()
}

/// Times and dates (`12:30`, `2001-12-14`) that YAML 1.1 readers turn into timestamps or
/// sexagesimal numbers.
fn looks_like_time(s: &str) -> bool {
    let b = s.as_bytes();
    let sexagesimal = b.contains(&b':') && b.iter().all(|c| c.is_ascii_digit() || *c == b':');
    let date = b.len() >= 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5].is_ascii_digit()
        && (b[6] == b'-' || (b[6].is_ascii_digit() && b.get(7) == Some(&b'-')));
    sexagesimal || date
}

/// goccy's `IsNeedQuoted`: would this string, written plain, read back as something
/// else (or not parse)?
fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || is_reserved_word(s) || looks_like_number(s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if matches!(
        first,
        b'*' | b'&'
            | b'['
            | b'{'
            | b'}'
            | b']'
            | b','
            | b'!'
            | b'|'
            | b'>'
            | b'%'
            | b'\''
            | b'"'
            | b'@'
            | b' '
            | b'`'
            | b'?'
            | b'\t'
    ) {
        return true;
    }
    if s.ends_with([':', ' ', '\t']) || looks_like_time(s) {
        return true;
    }
    let bytes = s.as_bytes();
    bytes.iter().enumerate().any(|(i, &c)| match c {
        b'#' | b'\\' => true,
        b':' | b'-' => matches!(bytes.get(i + 1), Some(b' ' | b'\t')),
        _ => false,
    }) || (first == b'-' && s.len() == 1)
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
        if needs_quotes(key) || key.contains(['\n', '\r']) {
            self.out.push_str(&go_quote(key));
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
            Value::Nil => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(n) => {
                let _ = write!(self.out, "{n}");
            }
            Value::Uint(n) => {
                let _ = write!(self.out, "{n}");
            }
            Value::Float(f) => self.out.push_str(&yaml_float(*f)),
            Value::Str(s) => self.string(s, block_indent),
            Value::List(_) => self.out.push_str("[]"),
            Value::Map(_) => self.out.push_str("{}"),
        }
        self.newline();
    }

    fn string(&mut self, s: &str, block_indent: usize) {
        if needs_quotes(s) {
            self.out.push_str(&go_quote(s));
        } else if s.contains('\n') {
            self.literal_block(s, block_indent);
        } else {
            self.out.push_str(s);
        }
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
            assert_eq!(go_float(f), want, "{f:e}");
        }
    }

    #[test]
    fn json_floats_follow_encoding_json() {
        assert_eq!(go_json_float(1.0).as_deref(), Some("1"));
        assert_eq!(go_json_float(1e6).as_deref(), Some("1000000"));
        assert_eq!(go_json_float(1e21).as_deref(), Some("1e+21"));
        assert_eq!(go_json_float(1e-7).as_deref(), Some("1e-7"));
        assert_eq!(go_json_float(1.5e-10).as_deref(), Some("1.5e-10"));
        assert_eq!(go_json_float(0.000001).as_deref(), Some("0.000001"));
        assert_eq!(go_json_float(f64::NAN), None);
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
        assert_eq!(
            go_quote("a\"b\\c\n\t\u{1}é\u{200b}"),
            "\"a\\\"b\\\\c\\n\\t\\x01é\\u200b\""
        );
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
