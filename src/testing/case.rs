//! Test files (`<template>/tests/**/*.test.yaml`, S11): discovery and parsing into
//! cases, with positions for every problem. Top-level keys other than `cases` (such
//! as `x-defaults` holding anchors) are ignored.

use crate::expr::{Map, Value};
use crate::files::{Diagnostic, FileMap, FileTree, Span};
use crate::value::edit::set_path;
use crate::yaml::{Node, NodeKind};
use std::collections::BTreeMap;

const CASE_KEYS: &[&str] = &[
    "name",
    "values",
    "terraformOutputs",
    "env",
    "applySchemaDefaults",
    "expect",
    "exclude",
    "expectError",
    "policies",
];

/// What a failing composition must say, if anything.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectError {
    No,
    Any,
    Containing(String),
}

#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub span: Span,
    /// Tree path of the file, for headers and snapshot names.
    pub file: String,
    pub values: Value,
    pub values_node: Option<Node>,
    pub terraform_outputs: Option<Value>,
    pub env: BTreeMap<String, String>,
    pub apply_schema_defaults: bool,
    pub expect: Option<Node>,
    pub exclude: Option<Node>,
    pub expect_error: ExpectError,
    /// What the policies of `bpc test --policy` must find (`policies:`).
    pub policies: Option<super::policies::PolicyExpect>,
}

#[derive(Clone, Debug)]
pub struct TestFile {
    pub path: String,
    pub cases: Vec<Case>,
}

/// Every `*.test.yaml` under `tests/`, in byte-wise path order.
pub fn discover(tree: &FileTree) -> Vec<String> {
    let listed = if tree.is_dir("tests") {
        tree.list("tests").unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut files: Vec<String> = listed
        .into_iter()
        .filter(|p| p.ends_with(".test.yaml") || p.ends_with(".test.yml"))
        .collect();
    files.sort();
    files
}

pub fn load(
    tree: &FileTree,
    files: &FileMap,
    path: &str,
) -> Result<(TestFile, Vec<Diagnostic>), Vec<Diagnostic>> {
    let node = crate::template::read_yaml(tree, files, path).map_err(|d| vec![d])?;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut cases = Vec::new();
    match node.get("cases").map(|c| &c.kind) {
        Some(NodeKind::Seq(items)) => {
            for item in items {
                match parse_case(item, path, &mut warnings) {
                    Ok(case) => cases.push(case),
                    Err(d) => errors.push(d),
                }
            }
        }
        Some(NodeKind::Null) | None => {
            warnings.push(
                Diagnostic::warning(format!("{path} has no `cases:` list"))
                    .with_primary(node.span, "no cases in this file"),
            );
        }
        Some(_) => {
            let c = node.get("cases").map_or(node.span, |c| c.span);
            errors.push(
                Diagnostic::error("`cases` must be a list")
                    .with_primary(c, "expected a list of cases"),
            );
        }
    }
    let mut seen: BTreeMap<&str, Span> = BTreeMap::default();
    for case in &cases {
        if let Some(first) = seen.insert(&case.name, case.span) {
            errors.push(
                Diagnostic::error(format!("duplicate case name `{}` in {path}", case.name))
                    .with_primary(case.span, "defined again here")
                    .with_secondary(first, "first defined here"),
            );
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok((
        TestFile {
            path: path.to_string(),
            cases,
        },
        warnings,
    ))
}

fn parse_case(node: &Node, file: &str, warnings: &mut Vec<Diagnostic>) -> Result<Case, Diagnostic> {
    if !matches!(node.kind, NodeKind::Map(_)) {
        return Err(Diagnostic::error("a test case must be a map")
            .with_primary(node.span, "expected `name:` and fields"));
    }
    let name = match node.get("name").map(|n| (n, n.as_str())) {
        Some((_, Some(n))) if !n.is_empty() => n.to_string(),
        Some((n, _)) => {
            return Err(
                Diagnostic::error("a test case's `name` must be a non-empty string")
                    .with_primary(n.span, "here"),
            )
        }
        None => {
            return Err(Diagnostic::error("a test case needs a `name`")
                .with_primary(node.span, "no `name:` here"))
        }
    };
    if let NodeKind::Map(entries) = &node.kind {
        for (key, _) in entries {
            if !CASE_KEYS.contains(&&*key.name) {
                let mut d = Diagnostic::warning(format!(
                    "unknown key `{}` in test case `{name}`",
                    key.name
                ))
                .with_primary(key.span, "ignored");
                if let Some(hint) = crate::template::keys::suggest(&key.name, CASE_KEYS) {
                    d = d.with_help(format!("did you mean `{hint}`?"));
                }
                warnings.push(d);
            }
        }
    }
    let (values, values_node) = case_values(node)?;
    let terraform_outputs = match node.get("terraformOutputs") {
        Some(t) if matches!(t.kind, NodeKind::Map(_)) => Some(t.to_value()),
        Some(t) if t.is_null() => None,
        Some(t) => {
            return Err(Diagnostic::error(
                "`terraformOutputs` must be a map of component → output → value",
            )
            .with_primary(t.span, "expected a map"))
        }
        None => None,
    };
    let env = case_env(node)?;
    let apply_schema_defaults = match node.get("applySchemaDefaults").map(|n| (n, &n.kind)) {
        Some((_, NodeKind::Bool(b))) => *b,
        Some((_, NodeKind::Null)) | None => false,
        Some((n, _)) => {
            return Err(
                Diagnostic::error("`applySchemaDefaults` must be true or false")
                    .with_primary(n.span, "expected a boolean"),
            )
        }
    };
    let expect_error = match node.get("expectError").map(|n| (n, &n.kind)) {
        Some((_, NodeKind::Bool(true))) => ExpectError::Any,
        Some((_, NodeKind::Bool(false))) | Some((_, NodeKind::Null)) | None => ExpectError::No,
        Some((_, NodeKind::Str(s))) => ExpectError::Containing(s.to_string()),
        Some((n, _)) => {
            return Err(Diagnostic::error(
                "`expectError` must be true, false or the text the error must contain",
            )
            .with_primary(n.span, "here"))
        }
    };
    let expect = node.get("expect").filter(|n| !n.is_null()).cloned();
    let exclude = node.get("exclude").filter(|n| !n.is_null()).cloned();
    if expect_error != ExpectError::No && (expect.is_some() || exclude.is_some()) {
        warnings.push(
            Diagnostic::warning(format!(
                "case `{name}` expects an error, so its `expect`/`exclude` are never checked"
            ))
            .with_primary(node.span, "here"),
        );
    }
    let policies = match node.get("policies") {
        Some(p) if !p.is_null() => Some(super::policies::parse(p)?),
        _ => None,
    };
    Ok(Case {
        policies,
        name,
        span: node.span,
        file: file.to_string(),
        values,
        values_node,
        terraform_outputs,
        env,
        apply_schema_defaults,
        expect,
        exclude,
        expect_error,
    })
}

/// A case's `values:`, dotted keys (`cluster.driver: talos`) setting nested values;
/// and the node they were read from.
fn case_values(node: &Node) -> Result<(Value, Option<Node>), Diagnostic> {
    let mut values = Value::map(Map::default());
    let values_node = node.get("values").cloned();
    if let Some(v) = &values_node {
        match &v.kind {
            NodeKind::Map(entries) => {
                for (k, val) in entries {
                    let path: Vec<&str> = k.name.split('.').collect();
                    if path.iter().any(|s| s.is_empty()) {
                        return Err(Diagnostic::error(format!(
                            "`{}` is not a valid value path",
                            k.name
                        ))
                        .with_primary(k.span, "empty segment"));
                    }
                    set_path(&mut values, &path, val.to_value());
                }
            }
            NodeKind::Null => {}
            _ => {
                return Err(Diagnostic::error("`values` must be a map")
                    .with_primary(v.span, "expected a map"))
            }
        }
    }
    Ok((values, values_node))
}

/// A case's `env:`, each value as the text the environment would hold.
fn case_env(node: &Node) -> Result<BTreeMap<String, String>, Diagnostic> {
    let mut env = BTreeMap::default();
    if let Some(e) = node.get("env") {
        match &e.kind {
            NodeKind::Map(entries) => {
                for (k, v) in entries {
                    let text = match v.to_value() {
                        Value::Str(s) => s.to_string(),
                        Value::Nil => String::new(),
                        other => crate::expr::windsor::format::go_format(&other),
                    };
                    env.insert(k.name.to_string(), text);
                }
            }
            NodeKind::Null => {}
            _ => {
                return Err(Diagnostic::error("`env` must be a map of names to strings")
                    .with_primary(e.span, "expected a map"))
            }
        }
    }
    Ok(env)
}
