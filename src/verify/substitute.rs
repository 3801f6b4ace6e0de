//! Flux's post-build substitution (`spec.postBuild`), applied to one built object's
//! YAML text as kustomize-controller applies it: `${var}`, `${var:=default}`,
//! `${var:-default}` (and `=`, `-` without the colon), `$$` for a literal `$`; the
//! unbraced `$var` is left alone; an object annotated or labelled
//! `kustomize.toolkit.fluxcd.io/substitute: disabled` is not touched. An unset variable
//! with no default fails the reconcile in strict mode (kustomize-controller v1.9 and
//! later, by default) and becomes an empty string otherwise; this reports it.

use std::collections::BTreeMap;

/// The annotation (or label) that turns substitution off for one object.
pub const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// A variable name Flux accepts in `substitute` and `substituteFrom` data.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// What a substitution left behind: the variables it found no value for.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub text: String,
    /// Unset variables without a default, in order of first use.
    pub unresolved: Vec<String>,
    /// `${…}` expressions Flux's parser refuses (`${a.b}`, an unclosed `${`).
    pub malformed: Vec<String>,
    /// Variables that were set, to an empty string (a likely cause of an invalid
    /// object).
    pub empty: Vec<String>,
}

/// Substitutes `vars` into `text`.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Outcome {
    let mut out = Outcome {
        text: String::with_capacity(text.len()),
        ..Outcome::default()
    };
    expand(text, vars, &mut out, 0);
    out
}

/// Expands `text` into `out.text`; `depth` bounds defaults nested in defaults.
fn expand(text: &str, vars: &BTreeMap<String, String>, out: &mut Outcome, depth: usize) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while let Some(offset) = memchr::memchr(b'$', &bytes[i..]) {
        let at = i + offset;
        match bytes.get(at + 1) {
            Some(b'$') => {
                out.text.push_str(&text[copied..=at]);
                i = at + 2;
                copied = i;
            }
            Some(b'{') => {
                let Some(end) = closing_brace(bytes, at + 2) else {
                    push_once(&mut out.malformed, &text[at..]);
                    break;
                };
                out.text.push_str(&text[copied..at]);
                let inner = &text[at + 2..end];
                expression(inner, vars, out, depth);
                i = end + 1;
                copied = i;
            }
            _ => i = at + 1,
        }
    }
    out.text.push_str(&text[copied..]);
}

/// The index of the `}` closing a `${` whose body starts at `from` (nested `${…}` in a
/// default counted).
fn closing_brace(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, b) in bytes.iter().enumerate().skip(from) {
        match b {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(k),
            b'}' => depth -= 1,
            b'\n' => return None,
            _ => {}
        }
    }
    None
}

fn push_once(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_string());
    }
}

/// One `${…}` body.
fn expression(inner: &str, vars: &BTreeMap<String, String>, out: &mut Outcome, depth: usize) {
    let name_len = inner
        .bytes()
        .take_while(|b| *b == b'_' || b.is_ascii_alphanumeric())
        .count();
    let (name, rest) = inner.split_at(name_len);
    let operator =
        rest.is_empty() || rest.starts_with([':', '-', '=', '+', '^', ',', '#', '%', '/']);
    if !valid_name(name) || !operator {
        push_once(&mut out.malformed, &format!("${{{inner}}}"));
        return;
    }
    let value = vars.get(name);
    let default = |op: &str| rest.strip_prefix(op);
    // `:-`/`:=` use the default when the variable is unset or empty, `-`/`=` only when
    // it is unset.
    let fallback = default(":-")
        .or_else(|| default(":="))
        .map(|d| (d, true))
        .or_else(|| default("-").or_else(|| default("=")).map(|d| (d, false)));
    if value.is_some_and(|v| v.is_empty()) && fallback.is_none() {
        push_once(&mut out.empty, name);
    }
    match (value, fallback) {
        (Some(v), Some((_, true))) if !v.is_empty() => out.text.push_str(v),
        (Some(v), Some((_, false))) => out.text.push_str(v),
        (_, Some((d, _))) => {
            if depth < 8 {
                expand(d, vars, out, depth + 1);
            } else {
                out.text.push_str(d);
            }
        }
        (Some(v), None) if rest.is_empty() => out.text.push_str(v),
        // Other operators (case changes, substrings, replacements) keep the value:
        // what matters here is whether there is one.
        (Some(v), None) => out.text.push_str(v),
        (None, None) => push_once(&mut out.unresolved, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn set_variables_are_replaced_and_unset_ones_reported() {
        let out = substitute(
            "host: ${domain}\nport: ${port}\n",
            &vars(&[("domain", "example.com")]),
        );
        assert_eq!(out.text, "host: example.com\nport: \n");
        assert_eq!(out.unresolved, vec!["port".to_string()]);
    }

    #[test]
    fn defaults_apply_to_unset_and_colon_forms_to_empty_values() {
        let v = vars(&[("empty", "")]);
        assert_eq!(substitute("${a:-x}", &v).text, "x");
        assert_eq!(substitute("${a:=x}", &v).text, "x");
        assert_eq!(substitute("${a-x}", &v).text, "x");
        assert_eq!(substitute("${empty:-x}", &v).text, "x");
        assert_eq!(substitute("${empty-x}", &v).text, "");
        assert_eq!(
            substitute("a.${empty}", &v).empty,
            vec!["empty".to_string()]
        );
        assert_eq!(substitute("${a:-/var/${empty:-mnt}}", &v).text, "/var/mnt");
        assert!(substitute("${a:-x}", &v).unresolved.is_empty());
    }

    #[test]
    fn escapes_and_unbraced_dollars_stay_text() {
        let out = substitute("echo $${HOME} $PATH $$ cost$", &vars(&[]));
        assert_eq!(out.text, "echo ${HOME} $PATH $ cost$");
        assert!(out.unresolved.is_empty());
    }

    #[test]
    fn expressions_flux_cannot_parse_are_named() {
        let out = substitute("a: ${record.to_json}\nb: ${1x}", &vars(&[]));
        assert_eq!(
            out.malformed,
            vec!["${record.to_json}".to_string(), "${1x}".to_string()]
        );
    }

    #[test]
    fn variable_names() {
        assert!(valid_name("_a1"));
        assert!(valid_name("CONTEXT_ID"));
        assert!(!valid_name("1a"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name(""));
    }
}
