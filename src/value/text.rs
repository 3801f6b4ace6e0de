//! Scalars as text: the one place every writer of YAML or JSON text asks how a number,
//! a boolean, nil or a string is spelled. Writers differ in what they imitate, named by
//! a dialect:
//!
//! * [`Dialect::Bpc`]: bpc's own output (`compose`, `render`, `show`): floats exact and
//!   always with a `.` (`2.0`, `1.0e300`, `.nan`), so every reader sees a float;
//! * [`Dialect::GoFmt`]: Go's `fmt` `%v` (`string()`, `${…}` splicing): `<nil>`,
//!   `strconv.FormatFloat(f, 'g', -1, 64)`, `NaN`, `+Inf`;
//! * [`Dialect::GoYaml`]: goccy/go-yaml's `Marshal` (`yamlString()`): `%v` digits with
//!   `.0` added where they would read as an integer, `.nan`, `.inf`;
//! * [`Dialect::GoJson`]: Go's `encoding/json` (`toJSON`, `jsonString()`): plain
//!   decimals from 1e-6 to 1e21, exponent form outside (`1e-7`, `1e+21`).
//!
//! One float formatter ([`float`]), one string escaper ([`quote`], by [`Escape`]) and one
//! decision whether a YAML string may go unquoted ([`needs_quotes`], by [`Plain`]).
//! The writers themselves (layout, key order, depth limits) stay with their users:
//! `emit::yaml`, `emit::json`, `expr::windsor::format`, `expr::windsor::json` and
//! `expr::builtins::json`.

use super::Value;
use crate::yaml::scalar::{self, PlainScalar};
use std::fmt::Write;

/// Whose spelling of scalars a writer imitates (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Bpc,
    GoFmt,
    GoYaml,
    GoJson,
}

/// The text of nil, a boolean or a number in `dialect`, written to `out`; `false` (and
/// nothing written) for strings, lists and maps, which each writer lays out itself.
/// A JSON writer checks [`f64::is_finite`] first: JSON has no NaN or infinity.
pub fn atom(out: &mut String, value: &Value, dialect: Dialect) -> bool {
    match value {
        Value::Nil if dialect == Dialect::GoFmt => out.push_str("<nil>"),
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Uint(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => out.push_str(&float(*f, dialect)),
        Value::Str(_) | Value::List(_) | Value::Map(_) => return false,
    }
    true
}

/// [`atom`] in [`Dialect::GoJson`], failing as Go's `encoding/json` fails on NaN and
/// the infinities (`json: unsupported value: NaN`).
pub fn go_json_atom(out: &mut String, value: &Value) -> Result<bool, String> {
    match value {
        Value::Float(f) if !f.is_finite() => Err(format!(
            "json: unsupported value: {}",
            float(*f, Dialect::GoFmt)
        )),
        other => Ok(atom(out, other, Dialect::GoJson)),
    }
}

/// A float in `dialect`. NaN and the infinities, which JSON cannot hold, are spelled in
/// [`Dialect::GoJson`] as `%v` spells them (what Go's error message shows).
pub fn float(f: f64, dialect: Dialect) -> String {
    if !f.is_finite() {
        let (nan, inf) = match dialect {
            Dialect::Bpc | Dialect::GoYaml => (".nan", ".inf"),
            Dialect::GoFmt | Dialect::GoJson => ("NaN", "+Inf"),
        };
        return match f {
            f if f.is_nan() => nan.to_string(),
            f if f > 0.0 => inf.to_string(),
            _ => format!("-{}", inf.trim_start_matches('+')),
        };
    }
    match dialect {
        Dialect::Bpc => exact(f),
        Dialect::GoFmt => go_g(&Decimal::of(f)),
        Dialect::GoYaml => {
            let mut text = go_g(&Decimal::of(f));
            if !text.contains(['.', 'e']) {
                text.push_str(".0");
            }
            text
        }
        Dialect::GoJson => {
            let abs = f.abs();
            let d = Decimal::of(f);
            if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
                let mut text = d.exponent_form();
                // encoding/json trims `e-07` to `e-7` (but keeps `e+21`).
                if let Some(pos) = text.find("e-0") {
                    text.remove(pos + 2);
                }
                text
            } else {
                d.plain_form()
            }
        }
    }
}

/// bpc's float: the shortest text that parses back to the same bits (Rust's `Debug`),
/// with a `.` always, so it reads back as a float.
fn exact(f: f64) -> String {
    let text = format!("{f:?}");
    if text.contains('.') {
        text
    } else if let Some((mantissa, exponent)) = text.split_once('e') {
        format!("{mantissa}.0e{exponent}")
    } else {
        format!("{text}.0")
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: exponent form below 1e-4 and from 1e6 up.
fn go_g(d: &Decimal) -> String {
    if d.exp < -4 || d.exp >= 6 {
        d.exponent_form()
    } else {
        d.plain_form()
    }
}

/// The shortest decimal digits that read back as a finite float, and the exponent of
/// the first digit: the value is `d1.d2d3… × 10^exp`.
struct Decimal {
    negative: bool,
    digits: String,
    exp: i32,
}

impl Decimal {
    fn of(f: f64) -> Decimal {
        // Rust's `{:e}` prints the shortest round-tripping digits, as Go's 'g'/-1 does.
        let text = format!("{f:e}");
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
    fn exponent_form(&self) -> String {
        let mut out = String::new();
        if self.negative {
            out.push('-');
        }
        let (first, rest) = self.digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let sign = if self.exp < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", self.exp.unsigned_abs());
        out
    }

    /// `%f` with the shortest digits: `100000`, `0.0001`, `2.5`.
    fn plain_form(&self) -> String {
        let mut out = String::new();
        if self.negative {
            out.push('-');
        }
        if self.exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-self.exp - 1) as usize));
            out.push_str(&self.digits);
        } else {
            let int_len = self.exp as usize + 1;
            if self.digits.len() <= int_len {
                out.push_str(&self.digits);
                out.extend(std::iter::repeat_n('0', int_len - self.digits.len()));
            } else {
                out.push_str(&self.digits[..int_len]);
                out.push('.');
                out.push_str(&self.digits[int_len..]);
            }
        }
        out
    }
}

/// Whose escapes a quoted string uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escape {
    /// JSON as bpc writes it: the escapes JSON requires, and U+2028/U+2029 (which some
    /// JavaScript readers take for line ends).
    Json,
    /// Go's `encoding/json` (HTML-safe, its default): also `<`, `>`, `&`, `\b`, `\f`.
    GoJson,
    /// Go's `strconv.Quote`, as goccy/go-yaml quotes: `\a`, `\v`, `\x7f`, and every
    /// character Go does not print as `\u`/`\U`.
    GoQuote,
    /// A YAML double-quoted scalar as bpc writes it: `\0`, `\xXX`, `\uXXXX` for what
    /// YAML does not allow unescaped.
    Yaml,
}

/// `s` double-quoted with the escapes of `escape`, appended to `out`.
pub fn quote(out: &mut String, s: &str, escape: Escape) {
    out.push('"');
    for c in s.chars() {
        if let Some(short) = short_escape(c, escape) {
            out.push_str(short);
        } else if needs_code(c, escape) {
            write_code(out, c, escape);
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// The two-character escape of `c`, where the dialect has one.
fn short_escape(c: char, escape: Escape) -> Option<&'static str> {
    use Escape::*;
    Some(match (c, escape) {
        ('"', _) => "\\\"",
        ('\\', _) => "\\\\",
        ('\n', _) => "\\n",
        ('\r', _) => "\\r",
        ('\t', _) => "\\t",
        ('\0', Yaml) => "\\0",
        ('\u{7}', GoQuote) => "\\a",
        ('\u{b}', GoQuote) => "\\v",
        ('\u{8}', GoQuote | GoJson) => "\\b",
        ('\u{c}', GoQuote | GoJson) => "\\f",
        _ => return None,
    })
}

/// Whether `c` (with no short escape) is written as a numeric escape.
fn needs_code(c: char, escape: Escape) -> bool {
    let json = (c as u32) < 0x20 || matches!(c, '\u{2028}' | '\u{2029}');
    match escape {
        Escape::Json => json,
        Escape::GoJson => json || matches!(c, '<' | '>' | '&'),
        Escape::GoQuote => !go_prints(c),
        Escape::Yaml => !yaml_prints(c),
    }
}

fn write_code(out: &mut String, c: char, escape: Escape) {
    let n = c as u32;
    let _ = match escape {
        Escape::Json | Escape::GoJson => write!(out, "\\u{n:04x}"),
        Escape::GoQuote if n < 0x80 => write!(out, "\\x{n:02x}"),
        Escape::GoQuote if n <= 0xffff => write!(out, "\\u{n:04x}"),
        Escape::GoQuote => write!(out, "\\U{n:08x}"),
        Escape::Yaml if n <= 0xff => write!(out, "\\x{n:02X}"),
        Escape::Yaml => write!(out, "\\u{n:04X}"),
    };
}

/// Characters YAML allows unescaped (and that survive copy and paste).
pub fn yaml_prints(c: char) -> bool {
    !(c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
        ))
}

/// Characters Go's `unicode.IsPrint` accepts, approximated: not C0/C1 controls, the
/// non-space separators, or format characters such as zero-width spaces.
fn go_prints(c: char) -> bool {
    let n = c as u32;
    !(c.is_control()
        || (0x2028..=0x2029).contains(&n)
        || (0x200b..=0x200f).contains(&n)
        || (0x202a..=0x202e).contains(&n)
        || (0x2060..=0x2064).contains(&n)
        || n == 0xfeff
        || n == 0xad
        || (0xd800..=0xdfff).contains(&n)
        || (0xfff9..=0xfffb).contains(&n))
}

/// Whose rule says when a YAML string must be quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plain {
    /// bpc's output: quoted when bpc's loader *or* a YAML 1.1 reader would read the
    /// plain text as something else (`"yes"`, `"1e3"`, `"22:22"`, dates), or could not
    /// read it back exactly.
    Bpc,
    /// goccy/go-yaml's `IsNeedQuoted`.
    Goccy,
}

/// Whether `s`, written plain, would read back as something else (or not parse): then
/// the writer double-quotes it.
pub fn needs_quotes(s: &str, plain: Plain) -> bool {
    // Most strings a blueprint holds are names, words and paths: answered at a glance.
    if plain == Plain::Bpc && plain_word(s) {
        return false;
    }
    quoted_by_rules(s, plain)
}

/// A name, word or path that every reader takes as the string it is: longer than any
/// keyword (`false`, five letters), starting with a letter other than `i` and `n`
/// (which begin `inf` and `nan`), and made only of ASCII letters, digits, `-`, `_`,
/// `.` and `/` (no indicator, no `: `, no ` #`, nothing a number or date needs first).
fn plain_word(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 5
        && b[0].is_ascii_alphabetic()
        && !matches!(b[0], b'i' | b'I' | b'n' | b'N')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
}

/// [`needs_quotes`] by the rules, for any string.
fn quoted_by_rules(s: &str, plain: Plain) -> bool {
    let Some(first) = s.chars().next() else {
        return true;
    };
    if reads_as_other_scalar(s, plain) || looks_like_time(s, plain) {
        return true;
    }
    let second = s[first.len_utf8()..].chars().next();
    let indicator = match plain {
        Plain::Bpc => matches!(
            first,
            '#' | ','
                | '['
                | ']'
                | '{'
                | '}'
                | '&'
                | '*'
                | '!'
                | '|'
                | '>'
                | '\''
                | '"'
                | '%'
                | '@'
                | '`'
                | ' '
                | '\t'
        ),
        Plain::Goccy => matches!(
            first,
            '*' | '&'
                | '['
                | '{'
                | '}'
                | ']'
                | ','
                | '!'
                | '|'
                | '>'
                | '%'
                | '\''
                | '"'
                | '@'
                | ' '
                | '`'
                | '?'
                | '\t'
        ),
    };
    if indicator || s.ends_with([':', ' ', '\t']) {
        return true;
    }
    match plain {
        Plain::Bpc => {
            (matches!(first, '-' | '?' | ':') && second.is_none_or(|c| c == ' '))
                || s.starts_with("---")
                || s.starts_with("...")
                || plain_breaks(s.as_bytes())
                || (!s.is_ascii() && s.chars().any(|c| !yaml_prints(c)))
        }
        Plain::Goccy => {
            let bytes = s.as_bytes();
            s == "-"
                || bytes.iter().enumerate().any(|(i, &c)| match c {
                    b'#' | b'\\' => true,
                    b':' | b'-' => matches!(bytes.get(i + 1), Some(b' ' | b'\t')),
                    _ => false,
                })
        }
    }
}

/// Whether plain text holds `: ` or ` #` (a mapping value, a comment) or an ASCII
/// control character (a tab included): one pass over the bytes, the writer asks this of
/// every string it writes.
fn plain_breaks(b: &[u8]) -> bool {
    b.iter().enumerate().any(|(i, &c)| match c {
        b':' => b.get(i + 1) == Some(&b' '),
        b' ' => b.get(i + 1) == Some(&b'#'),
        0..=0x1f | 0x7f => true,
        _ => false,
    })
}

/// Nulls, booleans and numbers: what some YAML reader takes the plain text for.
fn reads_as_other_scalar(s: &str, plain: Plain) -> bool {
    if scalar::is_yaml11_bool(s) {
        return true;
    }
    match plain {
        Plain::Bpc => {
            !matches!(scalar::resolve_plain(s), PlainScalar::Str(_))
                || s == "<<"
                || s == "="
                || parses_as_float(s)
        }
        Plain::Goccy => is_reserved_word(s) || looks_like_number(s),
    }
}

/// Whether `s` without its underscores parses as a Rust `f64` (copied only when it
/// has underscores to drop).
fn parses_as_float(s: &str) -> bool {
    // The only floats Rust reads that start with a letter are `inf`, `infinity` and
    // `nan` (any case); dropping underscores does not change the first letter. Most
    // strings written start with some other letter: no copy, no parse.
    if s.as_bytes()
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() && !matches!(b, b'i' | b'I' | b'n' | b'N'))
    {
        return false;
    }
    if s.contains('_') {
        s.replace('_', "").parse::<f64>().is_ok()
    } else {
        s.parse::<f64>().is_ok()
    }
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
    )
}

/// Numbers in any spelling goccy's scanner accepts, including `1e3` (exponents without
/// a dot).
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

/// Times and dates that YAML 1.1 readers turn into sexagesimal numbers (`1:30`) or
/// timestamps (`2001-12-14`).
fn looks_like_time(s: &str, plain: Plain) -> bool {
    let b = s.as_bytes();
    let date_head = b.len() >= 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5].is_ascii_digit();
    match plain {
        // Base 60 needs a `:`; only then are the underscores dropped (a copy).
        Plain::Bpc => date_head || (b.contains(&b':') && sexagesimal(&s.replace('_', ""))),
        Plain::Goccy => {
            let all_time = b.contains(&b':') && b.iter().all(|c| c.is_ascii_digit() || *c == b':');
            all_time
                || (date_head
                    && (b[6] == b'-' || (b[6].is_ascii_digit() && b.get(7) == Some(&b'-'))))
        }
    }
}

/// `[+-]DIGITS:DD[:DD…]`, base 60 in YAML 1.1.
fn sexagesimal(s: &str) -> bool {
    let digits = s.trim_start_matches(['+', '-']);
    let mut parts = digits.split(':');
    let head_ok = parts
        .next()
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()));
    let mut count = 0;
    let rest_ok = parts.all(|p| {
        count += 1;
        !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit())
    });
    head_ok && count > 0 && rest_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A word Rust reads as a float (`inf`, `infinity`, `nan`) in any case, with
    /// underscores anywhere, or almost such a word.
    fn float_words() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("inf"),
            Just("infinity"),
            Just("nan"),
            Just("na"),
            Just("infinit")
        ];
        (word, any::<u64>(), any::<u64>()).prop_map(|(word, case, gaps)| {
            let mut out = String::new();
            for (k, c) in word.chars().enumerate() {
                if gaps >> k & 1 == 1 {
                    out.push('_');
                }
                out.push(if case >> k & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                });
            }
            out
        })
    }

    proptest! {
        /// The glance at names, words and paths answers as the rules do.
        #[test]
        fn a_plain_word_is_quoted_as_the_rules_say(
            s in prop_oneof![
                "[a-zA-Z][a-zA-Z0-9_./-]{4,12}",
                "[a-zA-Z0-9_./:# -]{0,12}",
                float_words(),
                "(yes|no|on|off|true|false|null|Null|TRUE|FALSE)[a-z_]{0,3}",
            ]
        ) {
            prop_assert_eq!(needs_quotes(&s, Plain::Bpc), quoted_by_rules(&s, Plain::Bpc), "{}", s);
        }

        /// The shortcut for strings that start with a letter answers as parsing does.
        #[test]
        fn a_float_is_recognised_as_parsing_recognises_it(
            s in prop_oneof![float_words(), "[a-zA-Z_.+-][a-zA-Z0-9_.+-]{0,9}"]
        ) {
            let parsed = s.replace('_', "").parse::<f64>().is_ok();
            prop_assert_eq!(parses_as_float(&s), parsed, "{}", s);
        }
    }

    #[test]
    fn floats_in_each_dialect() {
        let cases = [
            (2.0, "2.0", "2", "2.0", "2"),
            (1e-7, "1.0e-7", "1e-07", "1e-07", "1e-7"),
            (1e300, "1.0e300", "1e+300", "1e+300", "1e+300"),
            (
                1234567.0,
                "1234567.0",
                "1.234567e+06",
                "1.234567e+06",
                "1234567",
            ),
            (
                0.1 + 0.2,
                "0.30000000000000004",
                "0.30000000000000004",
                "0.30000000000000004",
                "0.30000000000000004",
            ),
            (-0.0, "-0.0", "-0", "-0.0", "-0"),
            (f64::NAN, ".nan", "NaN", ".nan", "NaN"),
            (f64::NEG_INFINITY, "-.inf", "-Inf", "-.inf", "-Inf"),
        ];
        for (f, bpc, fmt, yaml, json) in cases {
            assert_eq!(float(f, Dialect::Bpc), bpc, "{f:e}");
            assert_eq!(float(f, Dialect::GoFmt), fmt, "{f:e}");
            assert_eq!(float(f, Dialect::GoYaml), yaml, "{f:e}");
            assert_eq!(float(f, Dialect::GoJson), json, "{f:e}");
        }
    }

    #[test]
    fn escapes_in_each_dialect() {
        let s = "a\"\\\n\u{0}\u{7}\u{8}<\u{7f}\u{85}\u{2028}é";
        let quoted = |e| {
            let mut out = String::new();
            quote(&mut out, s, e);
            out
        };
        assert_eq!(
            quoted(Escape::Json),
            "\"a\\\"\\\\\\n\\u0000\\u0007\\u0008<\u{7f}\u{85}\\u2028é\""
        );
        assert_eq!(
            quoted(Escape::GoJson),
            "\"a\\\"\\\\\\n\\u0000\\u0007\\b\\u003c\u{7f}\u{85}\\u2028é\""
        );
        assert_eq!(
            quoted(Escape::GoQuote),
            "\"a\\\"\\\\\\n\\x00\\a\\b<\\x7f\\u0085\\u2028é\""
        );
        assert_eq!(
            quoted(Escape::Yaml),
            "\"a\\\"\\\\\\n\\0\\x07\\x08<\\x7F\\x85\\u2028é\""
        );
    }

    #[test]
    fn quoting_decisions() {
        for s in [
            "",
            "null",
            "yes",
            "1e3",
            "12:30",
            "2024-01-31",
            "- a",
            "a: b",
            "'x",
            " x",
            "x:",
        ] {
            assert!(needs_quotes(s, Plain::Bpc), "bpc {s:?}");
            assert!(needs_quotes(s, Plain::Goccy), "goccy {s:?}");
        }
        for s in ["plain", "a-b", "10.0.0.0/16", "x y"] {
            assert!(!needs_quotes(s, Plain::Bpc), "bpc {s:?}");
            assert!(!needs_quotes(s, Plain::Goccy), "goccy {s:?}");
        }
        // Where the two differ: goccy quotes any `#` or backslash; bpc only ` #`.
        assert!(needs_quotes("a#b", Plain::Goccy) && !needs_quotes("a#b", Plain::Bpc));
        assert!(needs_quotes("a\\b", Plain::Goccy) && !needs_quotes("a\\b", Plain::Bpc));
        assert!(needs_quotes("<<", Plain::Bpc) && !needs_quotes("<<", Plain::Goccy));
    }
}
