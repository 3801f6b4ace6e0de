//! Checking a composed blueprint against a case's `expect` and `exclude` (S11).
//!
//! Every field written in an expectation is compared — none is decorative: maps by
//! subset, lists of scalars by containment, component lists by identity, scalars by
//! value with Windsor's loose equality (`2` matches `2.0` and `"2"`, `true` matches
//! `"true"`). A key that is not a field of the composed blueprint (the corpus writes
//! the facet directive `strategy:` there) is a warning naming file and line.

use crate::compose::evaluate::plain_value;
use crate::compose::fields::field_for;
use crate::compose::tracked::same;
use crate::expr::windsor::format::go_format;
use crate::expr::Value;
use crate::source::Diagnostic;
use crate::template::ComponentKind;
use crate::yaml::{Node, NodeKind};

/// One failed expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Where in the blueprint: `kustomize[ingress].components`.
    pub path: String,
    pub message: String,
}

/// The composed blueprint as the matcher sees it.
pub struct Composed<'a> {
    pub blueprint: &'a Value,
}

impl Composed<'_> {
    fn list(&self, kind: ComponentKind) -> &[Value] {
        self.blueprint
            .as_map()
            .and_then(|m| m.get(kind.list_key()))
            .and_then(Value::as_list)
            .unwrap_or(&[])
    }

    /// The component an expectation entry names (S9 identity).
    fn find(&self, kind: ComponentKind, entry: &Node) -> (Option<&Value>, String) {
        let text = |k: &str| {
            entry
                .get(k)
                .and_then(Node::as_str)
                .filter(|s| !s.is_empty())
        };
        let field = |v: &Value, k: &str| {
            v.as_map()
                .and_then(|m| m.get(k))
                .and_then(|f| f.as_str().map(str::to_string))
        };
        let items = self.list(kind);
        match (kind, text("name")) {
            (_, Some(name)) => (
                items
                    .iter()
                    .find(|c| field(c, "name").as_deref() == Some(name)),
                name.to_string(),
            ),
            (ComponentKind::Terraform, None) => {
                let path = text("path").unwrap_or_default();
                let source = text("source");
                let found = items.iter().find(|c| {
                    field(c, "name").is_none()
                        && field(c, "path").as_deref() == Some(path)
                        && (source.is_none() || field(c, "source").as_deref() == source)
                });
                (found, path.to_string())
            }
            (_, None) => (None, String::new()),
        }
    }

    fn names(&self, kind: ComponentKind) -> Vec<String> {
        self.list(kind)
            .iter()
            .filter_map(|c| {
                let m = c.as_map()?;
                m.get("name")
                    .or_else(|| m.get("path"))
                    .and_then(|v| v.as_str().map(str::to_string))
            })
            .collect()
    }
}

/// A terraform component's identity in a composed blueprint: `name`, else `path`.
pub fn terraform_id(component: &Value) -> Option<String> {
    let m = component.as_map()?;
    m.get("name")
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .or_else(|| m.get("path"))
        .and_then(|v| v.as_str().map(str::to_string))
}

pub struct Outcome {
    pub mismatches: Vec<Mismatch>,
    pub warnings: Vec<Diagnostic>,
}

/// Windsor's loose scalar equality (reference 12.5): equal values, or equal text.
pub fn loose_eq(expected: &Value, actual: &Value) -> bool {
    if same(expected, actual) {
        return true;
    }
    let scalar = |v: &Value| !matches!(v, Value::List(_) | Value::Map(_) | Value::Nil);
    let numeric = |v: &Value| matches!(v, Value::Int(_) | Value::Uint(_) | Value::Float(_));
    if numeric(expected) && numeric(actual) {
        return as_f64(expected) == as_f64(actual);
    }
    scalar(expected) && scalar(actual) && go_format(expected) == go_format(actual)
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(n) => *n as f64,
        Value::Uint(n) => *n as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("{s:?}"),
        Value::List(_) | Value::Map(_) => crate::emit::json::compact(v),
        other => go_format(other),
    }
}

/// Does `actual` satisfy `expected` (maps by subset, lists by containment)?
/// Returns the mismatches under `path`.
fn subset(expected: &Value, actual: Option<&Value>, path: &str, out: &mut Vec<Mismatch>) {
    let Some(actual) = actual else {
        out.push(Mismatch {
            path: path.to_string(),
            message: format!("expected {}, but it is not set", show(expected)),
        });
        return;
    };
    match (expected, actual) {
        (Value::Map(e), Value::Map(a)) => {
            for (k, v) in e.iter() {
                subset(v, a.get(k), &format!("{path}.{k}"), out);
            }
        }
        (Value::List(e), Value::List(a)) => {
            for item in e.iter() {
                let found = a.iter().any(|candidate| {
                    let mut probe = Vec::new();
                    subset(item, Some(candidate), "", &mut probe);
                    probe.is_empty()
                });
                if !found {
                    out.push(Mismatch {
                        path: path.to_string(),
                        message: format!("missing {} (has {})", show(item), show(actual)),
                    });
                }
            }
        }
        (Value::Nil, Value::Nil) => {}
        (e, a) if !matches!(e, Value::Map(_) | Value::List(_)) && loose_eq(e, a) => {}
        (e, a) => out.push(Mismatch {
            path: path.to_string(),
            message: format!("expected {}, got {}", show(e), show(a)),
        }),
    }
}

/// Checks `expect` (present = true) or `exclude` (present = false).
pub fn check(composed: &Composed<'_>, spec: &Node, present: bool, file: &str) -> Outcome {
    let mut out = Outcome {
        mismatches: Vec::new(),
        warnings: Vec::new(),
    };
    let NodeKind::Map(entries) = &spec.kind else {
        out.warnings.push(
            Diagnostic::warning(format!(
                "`{}` should be a map with `terraform` and/or `kustomize`",
                if present { "expect" } else { "exclude" }
            ))
            .with_primary(spec.span, format!("in {file}")),
        );
        return out;
    };
    for (key, node) in entries {
        let kind = match &*key.name {
            "terraform" => ComponentKind::Terraform,
            "kustomize" => ComponentKind::Kustomize,
            "flux" => {
                // Plain entries are kustomizations; systems are checked tier by tier.
                if let NodeKind::Seq(items) = &node.kind {
                    for item in items {
                        for entry in flux_entries(item) {
                            check_component(
                                composed,
                                ComponentKind::Kustomize,
                                &entry,
                                present,
                                &mut out,
                            );
                        }
                    }
                }
                continue;
            }
            other => {
                let actual = composed.blueprint.as_map().and_then(|m| m.get(other));
                match actual {
                    Some(actual) if present => subset(&plain_value(node), Some(actual), other, &mut out.mismatches),
                    Some(actual) => exclude_value(&plain_value(node), actual, other, &mut out.mismatches),
                    None => out.warnings.push(
                        Diagnostic::warning(format!("`{other}` is not a field of the composed blueprint; this expectation checks nothing"))
                            .with_primary(key.span, "not compared"),
                    ),
                }
                continue;
            }
        };
        let NodeKind::Seq(items) = &node.kind else {
            out.warnings.push(
                Diagnostic::warning(format!("`{}` should be a list", key.name))
                    .with_primary(node.span, "not compared"),
            );
            continue;
        };
        for item in items {
            check_component(composed, kind, item, present, &mut out);
        }
    }
    out
}

fn check_component(
    composed: &Composed<'_>,
    kind: ComponentKind,
    entry: &Node,
    present: bool,
    out: &mut Outcome,
) {
    let NodeKind::Map(fields) = &entry.kind else {
        out.warnings.push(
            Diagnostic::warning(format!("a {} expectation should be a map", kind.noun()))
                .with_primary(entry.span, "not compared"),
        );
        return;
    };
    let (found, id) = composed.find(kind, entry);
    if id.is_empty() {
        out.warnings.push(
            Diagnostic::warning(format!("a {} expectation without identity (`name`, or `path` for terraform) checks nothing", kind.noun()))
                .with_primary(entry.span, "not compared"),
        );
        return;
    }
    let label = format!("{}[{id}]", kind.list_key());
    let mut compared: Vec<(&str, &Node)> = Vec::new();
    for (key, value) in fields {
        match field_for(kind, &key.name) {
            Some(f) if f.identity && f.name == "name" => {}
            Some(f) => compared.push((f.name, value)),
            None => out.warnings.push(
                Diagnostic::warning(format!(
                    "`{}` is not a field of a composed {}; it is not compared",
                    key.name,
                    kind.noun()
                ))
                .with_primary(key.span, "ignored by the matcher")
                .with_help(
                    "facet directives such as `strategy` and `when` never reach the blueprint",
                ),
            ),
        }
    }
    match (found, present) {
        (None, true) => {
            let mut names = composed.names(kind);
            names.sort_by_key(|n| crate::template::keys::edit_distance(&id, n));
            names.truncate(3);
            let hint = if names.is_empty() {
                String::new()
            } else {
                format!(" (closest present: {})", names.join(", "))
            };
            out.mismatches.push(Mismatch {
                path: label,
                message: format!("{} `{id}` not found{hint}", kind.noun()),
            });
        }
        (None, false) => {}
        (Some(_), false)
            if compared
                .iter()
                .all(|(name, _)| field_for(kind, name).is_some_and(|f| f.identity)) =>
        {
            out.mismatches.push(Mismatch {
                path: label,
                message: format!("{} `{id}` should not exist", kind.noun()),
            });
        }
        (Some(actual), present) => {
            let actual_fields = actual.as_map();
            for (name, node) in compared {
                let expected = plain_value(node);
                let got = actual_fields.and_then(|m| m.get(name));
                let path = format!("{label}.{name}");
                if present {
                    subset(&expected, got, &path, &mut out.mismatches);
                } else if let Some(got) = got {
                    let identity = field_for(kind, name).is_some_and(|f| f.identity);
                    if !identity {
                        exclude_value(&expected, got, &path, &mut out.mismatches);
                    }
                }
            }
        }
    }
}

/// The kustomization expectations a `flux:` expectation stands for: a plain entry as
/// it is; a system's `install` as `<name>-install` and each `resources` variant as
/// `<name>-resources[-<variant>]`; a system with neither names all its tiers by prefix
/// (checked as `<name>-install`).
fn flux_entries(item: &Node) -> Vec<Node> {
    let system = crate::template::keys::FLUX_SYSTEM_ONLY
        .iter()
        .any(|k| item.get(k).is_some());
    let Some(name) = item.get("name").and_then(Node::as_str) else {
        return vec![item.clone()];
    };
    if !system {
        return vec![item.clone()];
    }
    let with_name = |tier: Option<&Node>, tier_name: String| -> Node {
        let mut entries = match tier.map(|t| &t.kind) {
            Some(NodeKind::Map(e)) => e
                .iter()
                .filter(|(k, _)| &*k.name != "name" && &*k.name != "when")
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let span = tier.map_or(item.span, |t| t.span);
        entries.insert(
            0,
            (
                crate::yaml::Key {
                    name: "name".into(),
                    span,
                },
                Node {
                    kind: NodeKind::Str(tier_name.into()),
                    span,
                    style: None,
                },
            ),
        );
        Node {
            kind: NodeKind::Map(entries),
            span,
            style: None,
        }
    };
    let mut out = Vec::new();
    if let Some(install) = item.get("install") {
        out.push(with_name(Some(install), format!("{name}-install")));
    }
    if let Some(NodeKind::Seq(variants)) = item.get("resources").map(|r| &r.kind) {
        for v in variants {
            let tier = match v.get("name").and_then(Node::as_str) {
                Some(n) if !n.is_empty() => format!("{name}-resources-{n}"),
                _ => format!("{name}-resources"),
            };
            out.push(with_name(Some(v), tier));
        }
    }
    out
}

/// `exclude` with fields: none of the listed items may be present.
fn exclude_value(expected: &Value, actual: &Value, path: &str, out: &mut Vec<Mismatch>) {
    match (expected, actual) {
        (Value::List(e), Value::List(a)) => {
            for item in e.iter() {
                if a.iter().any(|x| loose_eq(item, x) || same(item, x)) {
                    out.push(Mismatch {
                        path: path.to_string(),
                        message: format!("{} should not be present", show(item)),
                    });
                }
            }
        }
        (Value::Map(e), Value::Map(a)) => {
            for (k, v) in e.iter() {
                if let Some(av) = a.get(k) {
                    match v {
                        Value::Map(_) | Value::List(_) => {
                            exclude_value(v, av, &format!("{path}.{k}"), out)
                        }
                        _ => out.push(Mismatch {
                            path: format!("{path}.{k}"),
                            message: format!("should not be set (is {})", show(av)),
                        }),
                    }
                }
            }
        }
        (e, a) if loose_eq(e, a) => out.push(Mismatch {
            path: path.to_string(),
            message: format!("should not be {}", show(e)),
        }),
        _ => {}
    }
}
