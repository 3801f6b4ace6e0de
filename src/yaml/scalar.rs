//! How an untagged plain scalar is typed, following goccy/go-yaml (the YAML library
//! Windsor uses), which is the YAML 1.2 core schema with a few extras:
//!
//! * null: `null`, `Null`, `NULL`, `~` and the empty scalar;
//! * booleans: `true`/`True`/`TRUE`, `false`/`False`/`FALSE` — never `yes`/`on`;
//! * integers: optional sign, `_` separators, `0x`/`0o`/`0b` prefixes and a leading `0`
//!   meaning octal (`0755`); a positive integer above `i64::MAX` is a `Uint`; one that does
//!   not fit 64 bits stays a string;
//! * floats: exactly one `.` (`1.5`, `.5`, `1.`, `1.5e3`); `1e3` without a dot is a string,
//!   as is a float that overflows; `.inf`, `-.inf`, `+.inf` and `.nan` in three spellings.
//!
//! Quoted and block scalars are always strings. The emitter uses [`resolve_plain`] to
//! decide when a string must be quoted, so reading and writing agree by construction.

/// The typed value of a plain scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum PlainScalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

pub fn resolve_plain(text: &str) -> PlainScalar<'_> {
    if let Some(keyword) = resolve_keyword(text) {
        return keyword;
    }
    match parse_number(text) {
        Some(Number::Int(n)) => PlainScalar::Int(n),
        Some(Number::Uint(n)) => PlainScalar::Uint(n),
        Some(Number::Float(f)) => PlainScalar::Float(f),
        None => PlainScalar::Str(text),
    }
}

/// Null, boolean, infinity and NaN spellings.
pub fn resolve_keyword(text: &str) -> Option<PlainScalar<'static>> {
    Some(match text {
        "" | "~" | "null" | "Null" | "NULL" => PlainScalar::Null,
        "true" | "True" | "TRUE" => PlainScalar::Bool(true),
        "false" | "False" | "FALSE" => PlainScalar::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => PlainScalar::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => PlainScalar::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => PlainScalar::Float(f64::NAN),
        _ => return None,
    })
}

/// Words YAML 1.1 readers take as booleans. bpc reads them as strings (like goccy) but
/// quotes them on output so that older tools read the same thing back.
pub fn is_yaml11_bool(text: &str) -> bool {
    matches!(
        text,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Uint(u64),
    Float(f64),
}

/// A number as goccy reads it, or `None` when the text is not one (or does not fit).
pub fn parse_number(text: &str) -> Option<Number> {
    let first = *text.as_bytes().first()?;
    if first == b'_' {
        return None;
    }
    // Cheap rejection: every number starts with a digit, a sign or a dot.
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return None;
    }
    let dots = text.bytes().filter(|&b| b == b'.').count();
    if dots > 1 {
        return None;
    }
    let negative = first == b'-';
    let unsigned = text
        .strip_prefix('+')
        .or_else(|| text.strip_prefix('-'))
        .unwrap_or(text);
    let digits: std::borrow::Cow<'_, str> = if unsigned.contains('_') {
        unsigned.replace('_', "").into()
    } else {
        unsigned.into()
    };
    let (body, radix) = if let Some(rest) = digits.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = digits.strip_prefix("0o") {
        (rest, 8)
    } else if let Some(rest) = digits.strip_prefix("0b") {
        (rest, 2)
    } else if digits.starts_with('0') && digits.len() > 1 && dots == 0 {
        (&digits[..], 8)
    } else if dots == 1 {
        return parse_float(&digits, negative);
    } else {
        (&digits[..], 10)
    };
    // from_str_radix accepts a leading '+', which must not sneak in after the prefix.
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if negative {
        // The most negative i64 has no positive counterpart, so compare in i128.
        let value = -(magnitude as i128);
        i64::try_from(value).ok().map(Number::Int)
    } else if let Ok(small) = i64::try_from(magnitude) {
        Some(Number::Int(small))
    } else {
        Some(Number::Uint(magnitude))
    }
}

fn parse_float(digits: &str, negative: bool) -> Option<Number> {
    // Rust's parser also takes "inf"/"nan" words; a float here always has a digit.
    if !digits.bytes().any(|b| b.is_ascii_digit())
        || !digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let value: f64 = digits.parse().ok()?;
    if value.is_infinite() {
        return None;
    }
    Some(Number::Float(if negative { -value } else { value }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> PlainScalar<'_> {
        resolve_plain(text)
    }

    #[test]
    fn keywords() {
        for t in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(plain(t), PlainScalar::Null, "{t:?}");
        }
        assert_eq!(plain("True"), PlainScalar::Bool(true));
        assert_eq!(plain("FALSE"), PlainScalar::Bool(false));
        assert_eq!(plain("yes"), PlainScalar::Str("yes"));
        assert_eq!(plain("nULL"), PlainScalar::Str("nULL"));
        assert_eq!(plain("-.Inf"), PlainScalar::Float(f64::NEG_INFINITY));
        assert!(matches!(plain(".NaN"), PlainScalar::Float(f) if f.is_nan()));
        assert_eq!(plain("+.nan"), PlainScalar::Str("+.nan"));
    }

    #[test]
    fn integers() {
        assert_eq!(plain("0"), PlainScalar::Int(0));
        assert_eq!(plain("-0"), PlainScalar::Int(0));
        assert_eq!(plain("+12"), PlainScalar::Int(12));
        assert_eq!(plain("1_000"), PlainScalar::Int(1000));
        assert_eq!(plain("0x1F"), PlainScalar::Int(31));
        assert_eq!(plain("-0x1F"), PlainScalar::Int(-31));
        assert_eq!(plain("0o17"), PlainScalar::Int(15));
        assert_eq!(plain("0755"), PlainScalar::Int(493));
        assert_eq!(plain("0b101"), PlainScalar::Int(5));
        assert_eq!(plain("09"), PlainScalar::Str("09"));
        assert_eq!(plain("0x"), PlainScalar::Str("0x"));
        assert_eq!(plain("0x+1"), PlainScalar::Str("0x+1"));
        assert_eq!(plain("_1"), PlainScalar::Str("_1"));
        assert_eq!(plain("1e3"), PlainScalar::Str("1e3"));
        assert_eq!(plain("9223372036854775807"), PlainScalar::Int(i64::MAX));
        assert_eq!(
            plain("9223372036854775808"),
            PlainScalar::Uint(9_223_372_036_854_775_808)
        );
        assert_eq!(plain("-9223372036854775808"), PlainScalar::Int(i64::MIN));
        assert_eq!(
            plain("-9223372036854775809"),
            PlainScalar::Str("-9223372036854775809")
        );
        assert_eq!(
            plain("18446744073709551616"),
            PlainScalar::Str("18446744073709551616")
        );
        assert_eq!(plain("1.2.3"), PlainScalar::Str("1.2.3"));
        assert_eq!(plain("12abc"), PlainScalar::Str("12abc"));
        assert_eq!(plain("v1"), PlainScalar::Str("v1"));
    }

    #[test]
    fn floats() {
        assert_eq!(plain("1.5"), PlainScalar::Float(1.5));
        assert_eq!(plain("-1.5"), PlainScalar::Float(-1.5));
        assert_eq!(plain(".5"), PlainScalar::Float(0.5));
        assert_eq!(plain("1."), PlainScalar::Float(1.0));
        assert_eq!(plain("1.5e3"), PlainScalar::Float(1500.0));
        assert_eq!(plain("1.0e999"), PlainScalar::Str("1.0e999"));
        assert_eq!(plain("."), PlainScalar::Str("."));
        assert_eq!(plain("1.inf"), PlainScalar::Str("1.inf"));
        assert_eq!(plain("10.0.0.1"), PlainScalar::Str("10.0.0.1"));
    }
}
