//! Go's `fmt.Sprint` for scalars, needed where expr-lang turns interface-typed map
//! keys (`groupBy`, `fromPairs`) into text and for expr-lang's own `string()`.

use crate::value::Value;

/// Go `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits,
/// exponent form below 1e-4 and from 1e6 up.
pub fn float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let (digits, exp) = shortest(f);
    let neg = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let mut out = String::from(neg);
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
        return out;
    }
    format!("{neg}{}", f.abs())
}

/// Shortest round-trip decimal digits of |f| and the decimal exponent of the first digit.
pub fn shortest(f: f64) -> (String, i32) {
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// `fmt.Sprint` of a value used as a map key.
pub fn sprint_key(v: &Value) -> String {
    match v {
        Value::Nil => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Float(f) => float_v(*f),
        Value::Str(s) => s.to_string(),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(sprint_key).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Map(m) => {
            let mut parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", sprint_key(v)))
                .collect();
            parts.sort();
            format!("map[{}]", parts.join(" "))
        }
    }
}
