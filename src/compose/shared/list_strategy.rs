//! How a list in the context's blueprint combines with the composed list at the same
//! path (S12): declared per dotted path under `listStrategies:`, looked up as exact
//! path, then suffix, then bare key. Paths with no declaration keep the Windsor CLI's
//! own rule for that field, so an overlay without `listStrategies` composes exactly
//! as Windsor does.

use crate::compose::model::tracked::Tracked;
use crate::files::{Diagnostic, Span};
use crate::value::Equality;
use crate::yaml::{Node, NodeKind};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListStrategy {
    /// Composed items, then the overlay's.
    Append,
    /// The overlay's items only.
    Replace,
    /// Composed items, then the overlay's items not already present.
    Union,
    /// Map items with the same value at this key merge; others are appended.
    MergeByKey(Arc<str>),
}

impl ListStrategy {
    pub fn describe(&self) -> String {
        match self {
            ListStrategy::Append => "append".to_string(),
            ListStrategy::Replace => "replace".to_string(),
            ListStrategy::Union => "union".to_string(),
            ListStrategy::MergeByKey(key) => format!("merge-by-key: {key}"),
        }
    }
}

const NAMES: &[&str] = &["append", "replace", "union", "merge-by-key"];

/// One `listStrategies:` entry.
#[derive(Clone, Debug)]
pub struct Rule {
    /// As written: `terraform.cluster.inputs.node_groups`, `inputs.tags`, `tags`.
    pub key: String,
    pub strategy: ListStrategy,
    /// The key in the file, for messages.
    pub span: Span,
}

/// The declared strategies of one overlay file.
#[derive(Clone, Debug, Default)]
pub struct ListStrategies {
    pub rules: Vec<Rule>,
}

/// How a rule matched a path, strongest first (the lookup order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    Exact,
    Suffix,
    Bare,
}

impl Rule {
    /// Whether this rule applies to the list at `path` (dotted, from the blueprint
    /// root: `terraform.cluster.inputs.node_groups`), and how.
    pub fn matches(&self, path: &str) -> Option<Match> {
        if self.key == path {
            Some(Match::Exact)
        } else if self.key.contains('.') {
            path.strip_suffix(self.key.as_str())
                .is_some_and(|head| head.ends_with('.'))
                .then_some(Match::Suffix)
        } else {
            (path.rsplit('.').next() == Some(self.key.as_str())).then_some(Match::Bare)
        }
    }
}

impl ListStrategies {
    /// Parses the `listStrategies:` map; every problem is an error at its position.
    pub fn parse(node: &Node) -> Result<ListStrategies, Vec<Diagnostic>> {
        let NodeKind::Map(entries) = &node.kind else {
            if node.is_null() {
                return Ok(ListStrategies::default());
            }
            return Err(vec![Diagnostic::error("`listStrategies` must be a map")
                .with_primary(
                    node.span,
                    "expected `dotted.path: strategy` entries",
                )]);
        };
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        for (key, value) in entries {
            let name = key.name.to_string();
            if name.is_empty() || name.split('.').any(str::is_empty) {
                errors.push(
                    Diagnostic::error(format!("`{name}` is not a dotted path"))
                        .with_primary(key.span, "expected a path such as `inputs.node_groups`"),
                );
                continue;
            }
            match strategy_of(value) {
                Ok(strategy) => rules.push(Rule {
                    key: name,
                    strategy,
                    span: key.span,
                }),
                Err(d) => errors.push(d.with_context(format!("in `listStrategies.{name}`"))),
            }
        }
        if errors.is_empty() {
            Ok(ListStrategies { rules })
        } else {
            Err(errors)
        }
    }

    /// The rule for the list at `path`: an exact path wins over a suffix (the longest
    /// suffix first), which wins over a bare key.
    pub fn lookup(&self, path: &str) -> Option<&Rule> {
        self.rules
            .iter()
            .filter_map(|r| {
                r.matches(path)
                    .map(|m| (m, std::cmp::Reverse(r.key.len()), r))
            })
            .min_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
            .map(|(_, _, r)| r)
    }
}

/// `append`, `replace`, `union`, `{merge-by-key: name}` or `merge-by-key: name`
/// written as one string.
fn strategy_of(node: &Node) -> Result<ListStrategy, Diagnostic> {
    let expected = "one of append, replace, union, merge-by-key: <field>";
    match &node.kind {
        NodeKind::Str(text) => {
            let text = text.trim();
            if let Some(field) = text.strip_prefix("merge-by-key:") {
                return merge_by_key(field.trim(), node.span);
            }
            match text {
                "append" => Ok(ListStrategy::Append),
                "replace" => Ok(ListStrategy::Replace),
                "union" => Ok(ListStrategy::Union),
                "merge-by-key" => Err(Diagnostic::error("`merge-by-key` needs a field name")
                    .with_primary(node.span, "write `merge-by-key: <field>`")),
                other => {
                    // Four short names: any within two edits is the one meant.
                    let hint = NAMES
                        .iter()
                        .map(|n| (crate::template::keys::edit_distance(other, n), n))
                        .filter(|(d, _)| *d <= 2)
                        .min()
                        .map(|(_, h)| format!("did you mean `{h}`? "))
                        .unwrap_or_default();
                    Err(
                        Diagnostic::error(format!("unknown list strategy `{other}`"))
                            .with_primary(node.span, "not a list strategy")
                            .with_help(format!("{hint}expected {expected}")),
                    )
                }
            }
        }
        NodeKind::Map(entries) if entries.len() == 1 && &*entries[0].0.name == "merge-by-key" => {
            let field = &entries[0].1;
            match field.as_str() {
                Some(name) => merge_by_key(name.trim(), field.span),
                None => Err(Diagnostic::error("`merge-by-key` needs a field name")
                    .with_primary(field.span, "expected the name of a field of the items")),
            }
        }
        _ => Err(Diagnostic::error("a list strategy must be a name")
            .with_primary(node.span, "not a list strategy")
            .with_help(format!("expected {expected}"))),
    }
}

fn merge_by_key(field: &str, span: Span) -> Result<ListStrategy, Diagnostic> {
    if field.is_empty() {
        return Err(Diagnostic::error("`merge-by-key` needs a field name")
            .with_primary(span, "expected the name of a field of the items"));
    }
    Ok(ListStrategy::MergeByKey(Arc::from(field)))
}

/// Combines `base` with `overlay` by `strategy`. `merge_item` merges two items that
/// share a key (for `merge-by-key`): the overlay's item into the composed one.
pub fn combine(
    strategy: &ListStrategy,
    base: &mut Vec<Tracked>,
    overlay: Vec<Tracked>,
    merge_item: &mut dyn FnMut(&mut Tracked, Tracked),
) {
    match strategy {
        ListStrategy::Append => base.extend(overlay),
        ListStrategy::Replace => *base = overlay,
        ListStrategy::Union => {
            for item in overlay {
                if !base.iter().any(|b| b.same_value(&item)) {
                    base.push(item);
                }
            }
        }
        ListStrategy::MergeByKey(key) => {
            for item in overlay {
                let wanted = item.get(key).map(Tracked::to_value);
                let existing = wanted.as_ref().and_then(|w| {
                    base.iter_mut().find(|b| {
                        b.get(key)
                            .is_some_and(|v| v.to_value().equals(w, Equality::DATA))
                    })
                });
                match existing {
                    Some(target) => merge_item(target, item),
                    None => base.push(item),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileId;

    fn rules(yaml: &str) -> ListStrategies {
        let node = crate::yaml::parse(yaml, FileId::default()).expect("yaml");
        ListStrategies::parse(&node).expect("rules")
    }

    #[test]
    fn lookup_prefers_exact_then_longest_suffix_then_bare_key() {
        let r = rules(
            "{node_groups: append, inputs.node_groups: union, cluster.inputs.node_groups: replace, terraform.cluster.inputs.node_groups: {merge-by-key: name}}",
        );
        let pick = |p: &str| r.lookup(p).map(|r| r.strategy.describe());
        assert_eq!(
            pick("terraform.cluster.inputs.node_groups").as_deref(),
            Some("merge-by-key: name")
        );
        assert_eq!(
            pick("terraform.other.inputs.node_groups").as_deref(),
            Some("union")
        );
        assert_eq!(
            pick("kustomize.cluster.inputs.node_groups").as_deref(),
            Some("replace")
        );
        assert_eq!(pick("terraform.x.node_groups").as_deref(), Some("append"));
        assert_eq!(pick("terraform.x.groups"), None);
        // A suffix matches whole segments only.
        assert_eq!(
            pick("terraform.x.myinputs.node_groups").as_deref(),
            Some("append")
        );
    }

    #[test]
    fn strategies_parse_in_both_spellings() {
        let r = rules("{a: 'merge-by-key: id', b: {merge-by-key: id}, c: union}");
        assert_eq!(r.rules[0].strategy, r.rules[1].strategy);
        assert_eq!(r.rules[2].strategy, ListStrategy::Union);
    }

    #[test]
    fn a_misspelt_strategy_is_an_error_with_a_hint() {
        let node = crate::yaml::parse("{a: apend}", FileId::default()).expect("yaml");
        let errors = ListStrategies::parse(&node).expect_err("error");
        assert!(errors[0].full_text().contains("did you mean `append`?"));
    }
}
