//! `type-mismatch` and `unknown-enum-value`: where the schema gives a path's type or
//! enum, the operators and builtins applied to it must fit (`count + 'x'`,
//! `values(dns.domain)`, a boolean compared with a string, `platform == 'awss'`).
//! Paths a config block writes are left alone: the block may give them any value.

use super::finding::{Finding, FindingId};
use super::names::{Resolution, Shape};
use super::reads::{Operand, Reads};
use super::sites::{span_of, Site};
use crate::expr::ast::BinOp;
use crate::files::FileMap;
use std::sync::Arc;

pub fn check(
    site: &Site<'_>,
    reads: &Reads,
    names: &Shape,
    files: &FileMap,
    out: &mut Vec<Finding>,
) {
    for operation in &reads.operations {
        let (path, value, value_span) = match (&operation.left, &operation.right) {
            (Operand::Path(p), Operand::Literal(v, vs))
            | (Operand::Literal(v, vs), Operand::Path(p)) => (p, v, vs),
            _ => continue,
        };
        let Some(shape) = schema_shape(names, path) else {
            continue;
        };
        let shown = path.join(".");
        let span = span_of(site, operation.span.clone(), files);
        match operation.op {
            BinOp::Eq | BinOp::Ne => {
                if !shape.admits(value) {
                    out.push(mismatch(
                        span,
                        format!(
                            "`{shown}` is {} in the schema, compared with {}",
                            types(shape),
                            kind_of(value)
                        ),
                    ));
                } else if let Some(values) = shape.closed_enum() {
                    if !value.is_null() && !values.contains(value) {
                        let listed: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                        let texts: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
                        let help = value
                            .as_str()
                            .and_then(|v| crate::template::keys::suggest(v, &texts))
                            .map(|s| format!("did you mean '{s}'?"));
                        out.push(
                            Finding::at(
                                FindingId::UnknownEnumValue,
                                span_of(site, value_span.clone(), files),
                                format!(
                                    "`{shown}` is never {value}: the schema allows {}",
                                    listed.join(", ")
                                ),
                                "not a value of the enum",
                            )
                            .with_help(help),
                        );
                    }
                }
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow => {
                let numeric = only(shape, &["integer", "number"]);
                let text = only(shape, &["string"]);
                let clash = (numeric && value.is_string())
                    || (text && value.is_number())
                    || (text && operation.op != BinOp::Add)
                    || only(shape, &["boolean"]);
                if clash {
                    out.push(mismatch(
                        span,
                        format!(
                            "`{}` cannot apply to `{shown}` ({} in the schema) and {}",
                            operation.op.symbol(),
                            types(shape),
                            kind_of(value)
                        ),
                    ));
                }
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge
                if !shape.admits(value) || only(shape, &["boolean"]) =>
            {
                out.push(mismatch(
                    span,
                    format!(
                        "`{shown}` ({} in the schema) cannot be ordered against {}",
                        types(shape),
                        kind_of(value)
                    ),
                ));
            }
            _ => {}
        }
    }
    builtin_calls(site, reads, names, files, out);
}

/// A built-in function called on a path the schema types as something it does not
/// take (`len` of a number).
fn builtin_calls(
    site: &Site<'_>,
    reads: &Reads,
    names: &Shape,
    files: &FileMap,
    out: &mut Vec<Finding>,
) {
    for call in &reads.builtins {
        let Some(shape) = schema_shape(names, &call.path) else {
            continue;
        };
        let wants: &[&str] = match &*call.name {
            "keys" | "values" => &["object"],
            "len" => &["object", "array", "string"],
            "upper" | "lower" | "trim" | "split" | "hasPrefix" | "hasSuffix" => &["string"],
            _ => continue,
        };
        if !shape.types.is_empty() && !shape.types.iter().any(|t| wants.contains(&t.as_str())) {
            out.push(mismatch(
                span_of(site, call.span.clone(), files),
                format!(
                    "`{}` takes {}, but `{}` is {} in the schema",
                    call.name,
                    wants.join(" or "),
                    call.path.join("."),
                    types(shape)
                ),
            ));
        }
    }
}

/// The shape of a path the schema types and no config block writes.
fn schema_shape<'a>(names: &'a Shape, path: &[Arc<str>]) -> Option<&'a Shape> {
    match names.resolve(path) {
        Resolution::Known(shape) if !shape.written && !shape.types.is_empty() => Some(shape),
        _ => None,
    }
}

fn only(shape: &Shape, kinds: &[&str]) -> bool {
    !shape.types.is_empty() && shape.types.iter().all(|t| kinds.contains(&t.as_str()))
}

fn types(shape: &Shape) -> String {
    shape.types.join(" or ")
}

fn kind_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => format!("a string ('{s}')"),
        serde_json::Value::Bool(b) => format!("a boolean ({b})"),
        serde_json::Value::Number(n) => format!("a number ({n})"),
        _ => "a value".to_string(),
    }
}

fn mismatch(span: crate::files::Span, message: String) -> Finding {
    Finding::at(FindingId::TypeMismatch, span, message, "types do not fit")
}
