//! Checking a composed blueprint against a case's `expect` and `exclude` (S11), with
//! the Windsor CLI's rules:
//!
//! * `terraform`: found by `name` or `path`; `source` and `path` exact, `dependsOn` by
//!   containment, `inputs` key by key (maps by subset, lists item by item, scalars
//!   with Windsor's loose equality: `2` matches `2.0` and `"2"`).
//! * `kustomize`: any Flux Kustomization of the blueprint, a system's tiers included
//!   (`cni-install`), found by `name`; `path`, `source`, `dependsOn`, `components` (by
//!   containment) and `substitutions` (key by key).
//! * `flux`: a system, found by `name`; `path`, `source`, `dependsOn`, the `install`
//!   tier's `components` and `substitutions`, and `resources` variants (found by
//!   `name`, an unnamed one by its components).
//! * `exclude`: the entry must not exist, or with `components` listed, the entry must
//!   not contain them.
//! * `config`: each named config block's composed value, compared as `inputs` are
//!   (Windsor after 0.9, windsorcli/cli#3268); `exclude.config` fails for a block whose
//!   value matches. Not compared under `--windsor-compat 0.9`.
//!
//! Any other key of an expectation is not compared, and is never silently ignored: it
//! is a warning naming the file and line.

use crate::expr::windsor::format::go_format;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::fields;
use crate::template::identity::component_id_of;
use crate::template::ComponentKind;
use crate::value::Equality;
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
    /// Every Flux Kustomization, systems' tiers included.
    pub kustomizations: Vec<Value>,
    /// The notes of the composition, rendered (what `expect.messages` is checked
    /// against; the blueprint carries them unrendered).
    pub messages: Vec<String>,
    /// The composed config scope: each config block's value after composition, by
    /// block name (what `expect.config` is checked against); `None` when config
    /// expectations are not compared (`--windsor-compat 0.9`).
    pub config: Option<&'a Map>,
}

impl Composed<'_> {
    fn list(&self, kind: ComponentKind) -> &[Value] {
        if kind == ComponentKind::Kustomize {
            return &self.kustomizations;
        }
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
        let name = text("name");
        if kind == ComponentKind::Terraform {
            // Windsor's lookup: the first component with the expected name, or with
            // the expected path.
            let path = text("path");
            let found = items.iter().find(|c| {
                name.is_some_and(|n| field(c, "name").as_deref() == Some(n))
                    || path.is_some_and(|p| field(c, "path").as_deref() == Some(p))
            });
            return (found, name.or(path).unwrap_or_default().to_string());
        }
        match name {
            Some(name) => (
                items
                    .iter()
                    .find(|c| field(c, "name").as_deref() == Some(name)),
                name.to_string(),
            ),
            None => (None, String::new()),
        }
    }

    fn names(&self, kind: ComponentKind) -> Vec<String> {
        self.list(kind).iter().filter_map(component_id_of).collect()
    }
}

pub struct Outcome {
    pub mismatches: Vec<Mismatch>,
    pub warnings: Vec<Diagnostic>,
}

/// Windsor's loose scalar equality (docs/testing.md): equal values, or equal text.
fn loose_eq(expected: &Value, actual: &Value) -> bool {
    if expected.equals(actual, Equality::DATA) {
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
        Value::List(_) | Value::Map(_) => crate::value::json::compact(v),
        other => go_format(other),
    }
}

/// An expected field that asks for nothing: null, `""`, `[]` or `{}`. The Windsor CLI
/// compares a field only when the expectation sets it (a Go zero value is unset), so
/// such a field matches whatever is there, an absent or empty field included — for
/// Windsor an omitted collection and an empty one are the same thing.
fn is_unset(expected: &Node) -> bool {
    match &expected.kind {
        NodeKind::Null => true,
        NodeKind::Str(s) => s.is_empty(),
        NodeKind::Seq(items) => items.is_empty(),
        NodeKind::Map(entries) => entries.is_empty(),
        _ => false,
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
            "flux" => ComponentKind::FluxSystem,
            "messages" => {
                check_messages(composed, node, present, &mut out);
                continue;
            }
            "config" => {
                check_config(composed, key, node, present, &mut out);
                continue;
            }
            other => {
                let actual = composed.blueprint.as_map().and_then(|m| m.get(other));
                match actual {
                    Some(actual) if present => subset(&node.to_value(), Some(actual), other, &mut out.mismatches),
                    Some(actual) => exclude_value(&node.to_value(), actual, other, &mut out.mismatches),
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

/// The fields of an expectation the matcher compares, per kind (the field table's
/// `compared` column).
fn compared_fields(kind: ComponentKind) -> Vec<&'static str> {
    fields::with(kind, |f| f.compared)
}

/// Whether the matcher compares a field of a flux system's tier.
fn compared_in_tier(name: &str) -> bool {
    fields::field_for(ComponentKind::Kustomize, name).is_some_and(|f| f.compared_in_tier)
}

fn not_compared(key: &crate::yaml::Key, what: &str, compared: &[&str]) -> Diagnostic {
    Diagnostic::warning(format!(
        "`{}` of {what} is not compared by the test matcher",
        key.name
    ))
    .with_primary(key.span, "not compared")
    .with_help(format!(
        "the matcher compares {} (as the Windsor CLI does); facet directives such as `strategy` and `when` never reach the blueprint",
        compared
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
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
    let allowed = compared_fields(kind);
    let mut compared: Vec<(&str, &Node)> = Vec::new();
    for (key, value) in fields {
        match allowed.iter().find(|f| **f == &*key.name) {
            Some(f) => compared.push((f, value)),
            None if &*key.name == "name" => {}
            None => out.warnings.push(not_compared(
                key,
                &format!("a {} expectation", kind.noun()),
                &allowed,
            )),
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
        (Some(actual), true) => {
            for (name, node) in compared {
                // `install: {}` still asks for the tier to exist (a pointer in Windsor,
                // nil only when null).
                let tier =
                    kind == ComponentKind::FluxSystem && name == "install" && !node.is_null();
                if is_unset(node) && !tier {
                    continue;
                }
                let got = actual.as_map().and_then(|m| m.get(name));
                let path = format!("{label}.{name}");
                match (kind, name) {
                    (ComponentKind::FluxSystem, "install") => {
                        check_tier(node, got, &path, &mut out.mismatches, &mut out.warnings)
                    }
                    (ComponentKind::FluxSystem, "resources") => {
                        check_variants(node, got, &path, out)
                    }
                    (ComponentKind::Terraform, "inputs") => {
                        input_matches(&node.to_value(), got, &path, &mut out.mismatches)
                    }
                    _ => subset(&node.to_value(), got, &path, &mut out.mismatches),
                }
            }
        }
        (Some(actual), false) => {
            let entity = |what: String| Mismatch {
                path: label.clone(),
                message: format!("{what} should not exist"),
            };
            match kind {
                ComponentKind::Terraform => out
                    .mismatches
                    .push(entity(format!("{} `{id}`", kind.noun()))),
                // Listed components narrow the exclusion to them; none listed (absent,
                // null or `[]`, all one for Windsor) asserts the entry's absence.
                ComponentKind::Kustomize => match listed_components(entry) {
                    Some(components) => exclude_components(components, Some(actual), &label, out),
                    None => out
                        .mismatches
                        .push(entity(format!("{} `{id}`", kind.noun()))),
                },
                ComponentKind::FluxSystem => exclude_system_tiers(entry, actual, &label, &id, out),
            }
        }
    }
}

/// The non-empty `components` list of an exclusion entry or tier.
fn listed_components(entry: &Node) -> Option<&Node> {
    entry.get("components").filter(|c| !is_unset(c))
}

/// None of `components` may be in `holder`'s `components`.
fn exclude_components(components: &Node, holder: Option<&Value>, path: &str, out: &mut Outcome) {
    let got = holder
        .and_then(Value::as_map)
        .and_then(|m| m.get("components"));
    if let Some(got) = got {
        exclude_value(
            &components.to_value(),
            got,
            &format!("{path}.components"),
            &mut out.mismatches,
        );
    }
}

/// A flux-system exclusion, with the Windsor CLI's rules (checked with it on a probe
/// template): an entry naming neither `install` nor any `resources` variant asserts
/// the system's absence. `install` (even `{}`) is checked against the install tier —
/// its listed components must be absent, and with none listed the tier itself must
/// not exist; a system without the tier passes. Each `resources` entry is checked the
/// same way against the variant of its name, or against every variant when unnamed;
/// a named variant that is not there passes.
fn exclude_system_tiers(entry: &Node, actual: &Value, label: &str, id: &str, out: &mut Outcome) {
    let system = actual.as_map();
    let install = entry.get("install").filter(|n| !n.is_null());
    let resources: &[Node] = match entry.get("resources").map(|r| &r.kind) {
        Some(NodeKind::Seq(items)) => items,
        _ => &[],
    };
    if install.is_none() && resources.is_empty() {
        out.mismatches.push(Mismatch {
            path: label.to_string(),
            message: format!("flux system `{id}` should not exist"),
        });
        return;
    }
    let tier =
        |listed: &Node, tier: &Value, path: String, out: &mut Outcome| match listed_components(
            listed,
        ) {
            Some(components) => exclude_components(components, Some(tier), &path, out),
            None => out.mismatches.push(Mismatch {
                path,
                message: "this tier should not exist".to_string(),
            }),
        };
    if let (Some(listed), Some(installed)) = (install, system.and_then(|m| m.get("install"))) {
        tier(listed, installed, format!("{label}.install"), out);
    }
    let variants = system
        .and_then(|m| m.get("resources"))
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    let name_of = |v: &Value| {
        v.as_map()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    for item in resources {
        let name = item
            .get("name")
            .and_then(Node::as_str)
            .filter(|n| !n.is_empty());
        match name {
            Some(name) => {
                if let Some(variant) = variants
                    .iter()
                    .find(|v| name_of(v).as_deref() == Some(name))
                {
                    tier(item, variant, format!("{label}.resources[{name}]"), out);
                }
            }
            None => {
                for (i, variant) in variants.iter().enumerate() {
                    let shown = name_of(variant).unwrap_or_else(|| i.to_string());
                    tier(item, variant, format!("{label}.resources[{shown}]"), out);
                }
            }
        }
    }
}

/// Windsor's input equality: every expected key present; maps by subset, lists of
/// the same length item by item, scalars loosely.
fn input_matches(expected: &Value, actual: Option<&Value>, path: &str, out: &mut Vec<Mismatch>) {
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
                input_matches(v, a.get(k), &format!("{path}.{k}"), out);
            }
        }
        (Value::List(e), Value::List(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a.iter()).enumerate() {
                input_matches(ev, Some(av), &format!("{path}[{i}]"), out);
            }
        }
        (Value::Nil, Value::Nil) => {}
        (e, a) if !matches!(e, Value::Map(_) | Value::List(_) | Value::Nil) && loose_eq(e, a) => {}
        (e, a) => out.push(Mismatch {
            path: path.to_string(),
            message: format!("expected {}, got {}", show(e), show(a)),
        }),
    }
}

/// One tier of a system (`install`, or a `resources` variant): `components` by
/// containment, `substitutions` key by key; other keys are warned about.
fn check_tier(
    expected: &Node,
    actual: Option<&Value>,
    path: &str,
    mismatches: &mut Vec<Mismatch>,
    warnings: &mut Vec<Diagnostic>,
) {
    let NodeKind::Map(keys) = &expected.kind else {
        subset(&expected.to_value(), actual, path, mismatches);
        return;
    };
    let Some(actual) = actual else {
        mismatches.push(Mismatch {
            path: path.to_string(),
            message: "the system has no such tier".to_string(),
        });
        return;
    };
    let fields = actual.as_map();
    for (key, value) in keys {
        if compared_in_tier(&key.name) {
            if is_unset(value) {
                continue;
            }
            subset(
                &value.to_value(),
                fields.and_then(|m| m.get(&key.name)),
                &format!("{path}.{}", key.name),
                mismatches,
            );
        } else if &*key.name != "name" {
            warnings.push(not_compared(
                key,
                "a flux system tier expectation",
                &fields::with(ComponentKind::Kustomize, |f| f.compared_in_tier),
            ));
        }
    }
}

/// Expected `resources` variants: a named one is found by name and then compared; an
/// unnamed one passes when any variant satisfies it (Windsor's rule).
fn check_variants(expected: &Node, actual: Option<&Value>, path: &str, out: &mut Outcome) {
    let NodeKind::Seq(items) = &expected.kind else {
        subset(&expected.to_value(), actual, path, &mut out.mismatches);
        return;
    };
    let variants = actual.and_then(Value::as_list).unwrap_or(&[]);
    for item in items {
        let name = item
            .get("name")
            .and_then(Node::as_str)
            .filter(|n| !n.is_empty());
        if let Some(name) = name {
            let label = format!("{path}[{name}]");
            let found = variants.iter().find(|v| {
                v.as_map()
                    .and_then(|m| m.get("name"))
                    .and_then(Value::as_str)
                    == Some(name)
            });
            match found {
                Some(variant) => check_tier(
                    item,
                    Some(variant),
                    &label,
                    &mut out.mismatches,
                    &mut out.warnings,
                ),
                None => out.mismatches.push(Mismatch {
                    path: label,
                    message: format!("variant not found: {name}"),
                }),
            }
            continue;
        }
        let satisfied = variants.iter().any(|v| {
            let mut probe = Vec::new();
            check_tier(item, Some(v), path, &mut probe, &mut Vec::new());
            probe.is_empty()
        });
        // Warnings for keys the matcher ignores, once, whatever matched.
        check_tier(
            item,
            Some(&Value::Nil),
            path,
            &mut Vec::new(),
            &mut out.warnings,
        );
        if !satisfied {
            let components = item.get("components").map(Node::to_value);
            out.mismatches.push(Mismatch {
                path: path.to_string(),
                message: format!(
                    "no variant has {}",
                    components
                        .as_ref()
                        .map(|c| format!("the components {}", show(c)))
                        .unwrap_or_else(|| "all the expected fields".to_string())
                ),
            });
        }
    }
}

/// `messages`: each listed `text` must (or, excluded, must not) be one of the
/// rendered notes. The Windsor CLI does not compare messages; bpc does, rather than
/// ignore what a case says.
fn check_messages(composed: &Composed<'_>, node: &Node, present: bool, out: &mut Outcome) {
    let NodeKind::Seq(items) = &node.kind else {
        out.warnings.push(
            Diagnostic::warning("`messages` should be a list of `{text: …}`")
                .with_primary(node.span, "not compared"),
        );
        return;
    };
    for item in items {
        let Some(text) = item.get("text").and_then(Node::as_str) else {
            out.warnings.push(
                Diagnostic::warning("a message expectation needs `text`")
                    .with_primary(item.span, "not compared"),
            );
            continue;
        };
        let shown = composed
            .messages
            .iter()
            .any(|m| m.trim_end() == text.trim_end());
        if shown != present {
            out.mismatches.push(Mismatch {
                path: "messages".to_string(),
                message: if present {
                    format!(
                        "no message reads {text:?} (messages: {:?})",
                        composed.messages
                    )
                } else {
                    format!("the message {text:?} should not be shown")
                },
            });
        }
    }
}

/// `config`: each listed block against the composed config scope, as `inputs` are
/// compared (windsorcli/cli#3268, #3270): in `expect` the block must be there and
/// match; in `exclude` a block that is there and matches fails the case.
fn check_config(
    composed: &Composed<'_>,
    key: &crate::yaml::Key,
    node: &Node,
    present: bool,
    out: &mut Outcome,
) {
    let Some(config) = composed.config else {
        out.warnings.push(
            Diagnostic::warning(
                "`config` expectations are not compared under --windsor-compat 0.9; this expectation checks nothing",
            )
            .with_primary(key.span, "not compared")
            .with_help("the Windsor CLI compares them since windsorcli/cli#3270; without --windsor-compat 0.9 bpc does too"),
        );
        return;
    };
    let NodeKind::Map(blocks) = &node.kind else {
        out.warnings.push(
            Diagnostic::warning("`config` should be a map of config block names to values")
                .with_primary(node.span, "not compared"),
        );
        return;
    };
    for (name, expected) in blocks {
        let path = format!("config.{}", name.name);
        let expected = expected.to_value();
        let actual = config.get(&name.name);
        if present {
            input_matches(&expected, actual, &path, &mut out.mismatches);
            continue;
        }
        if let Some(actual) = actual {
            let mut probe = Vec::new();
            input_matches(&expected, Some(actual), &path, &mut probe);
            if probe.is_empty() {
                out.mismatches.push(Mismatch {
                    path,
                    message: format!("should not be {}", show(actual)),
                });
            }
        }
    }
}

/// `exclude` with fields: none of the listed items may be present.
fn exclude_value(expected: &Value, actual: &Value, path: &str, out: &mut Vec<Mismatch>) {
    match (expected, actual) {
        (Value::List(e), Value::List(a)) => {
            for item in e.iter() {
                if a.iter()
                    .any(|x| loose_eq(item, x) || item.equals(x, Equality::DATA))
                {
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
