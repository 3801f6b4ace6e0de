//! Which side wins when a context value and a facet config block set the same path
//! (S4).

use crate::expr::{Map, Value};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precedence {
    /// The Windsor CLI's rule: values the operator set win over facet config, key by
    /// key; an operator value that is `""`, `[]` or `{}` does not erase a facet's
    /// non-empty value (null does).
    #[default]
    ContextWins,
    /// Facet config wins over context values (the rule the facet format was
    /// first specified with, for templates written against it; docs/semantics.md S4).
    FacetWins,
}

impl Precedence {
    /// The value of a path a config block computed as `block`, given what the context
    /// holds there.
    pub fn resolve(self, block: Value, context: Option<&Value>) -> Value {
        match (self, context) {
            (Precedence::ContextWins, Some(context)) => context_over(block, context),
            _ => block,
        }
    }
}

/// `""`, `[]` or `{}`: what an operator value cannot erase a facet value with.
pub fn is_empty(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        Value::Map(entries) => entries.is_empty(),
        _ => false,
    }
}

fn context_over(base: Value, overlay: &Value) -> Value {
    match (base, overlay) {
        (Value::Map(mut base), Value::Map(overlay)) => {
            let entries: &mut Map = Arc::make_mut(&mut base);
            for (k, v) in overlay.iter() {
                let merged = match entries.get(k) {
                    Some(existing) => context_over(existing.clone(), v),
                    None => v.clone(),
                };
                entries.insert(k.clone(), merged);
            }
            Value::Map(base)
        }
        (base, overlay) if is_empty(overlay) && !base.is_nil() && !is_empty(&base) => base,
        (_, overlay) => overlay.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Value)]) -> Value {
        Value::map(
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), v.clone()))
                .collect(),
        )
    }

    fn json(v: &Value) -> String {
        crate::value::json::compact(v)
    }

    #[test]
    fn operator_values_win_key_by_key() {
        let block = map(&[
            ("a", Value::Int(2)),
            ("b", Value::Int(3)),
            ("n", map(&[("deep", Value::str("facet"))])),
        ]);
        let context = map(&[
            ("a", Value::Int(1)),
            (
                "n",
                map(&[("deep", Value::str("user")), ("other", Value::str("u"))]),
            ),
        ]);
        let out = Precedence::ContextWins.resolve(block.clone(), Some(&context));
        assert_eq!(
            json(&out),
            r#"{"a":1,"b":3,"n":{"deep":"user","other":"u"}}"#
        );
        let out = Precedence::FacetWins.resolve(block, Some(&context));
        assert_eq!(json(&out), r#"{"a":2,"b":3,"n":{"deep":"facet"}}"#);
    }

    #[test]
    fn empty_operator_values_do_not_erase_facet_values_but_null_does() {
        let block = map(&[
            ("e", Value::str("filled")),
            ("l", Value::list(vec![Value::str("f")])),
            ("z", Value::Int(1)),
        ]);
        let context = map(&[
            ("e", Value::str("")),
            ("l", Value::list(vec![])),
            ("z", Value::Nil),
        ]);
        let out = Precedence::ContextWins.resolve(block, Some(&context));
        assert_eq!(json(&out), r#"{"e":"filled","l":["f"],"z":null}"#);
    }
}
