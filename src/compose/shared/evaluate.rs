//! Evaluating YAML nodes whose strings hold `${…}` (S7), and turning expression errors
//! into diagnostics that point at the column inside the `${…}`.

use crate::compose::shared::host::TemplateHost;
use crate::expr::{Engine, ExprError, Scope, Value};
use crate::files::{Diagnostic, FileId, FileMap, Span};
use crate::yaml::{Node, NodeKind};
use std::fmt;
use std::sync::Arc;

/// A diagnostic travelling through the expression engine as the cause of an
/// [`ExprError`] (a config value that failed while another expression read it).
#[derive(Debug)]
pub struct Nested(pub Diagnostic);

impl fmt::Display for Nested {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Nested {}

/// Wraps a diagnostic so a [`Scope`] lookup can return it.
pub fn nest(diagnostic: Diagnostic) -> ExprError {
    let mut e = ExprError::run(diagnostic.message.clone(), 0..0);
    e.cause = Some(Arc::new(Nested(diagnostic)));
    e
}

/// The diagnostic for an expression error in `node` (a scalar holding the expression
/// text). An error that arrived through a nested lookup is returned as it was found,
/// since that is where the problem is written.
pub fn expr_diagnostic(
    err: &ExprError,
    node: &Node,
    files: &FileMap,
    context: impl Fn() -> String,
) -> Diagnostic {
    if let Some(found) = nested(err, || format!("needed {}", context())) {
        return found;
    }
    let text = files.text(node.span.file).unwrap_or_default();
    let start = crate::yaml::content_offset(node, &text, err.span.start);
    let end = crate::yaml::content_offset(node, &text, err.span.end.max(err.span.start));
    let span = Span::new(node.span.file, start, end.max(start));
    let written = match &node.kind {
        NodeKind::Str(written) => written,
        _ => "",
    };
    described(err, span, written).with_context(context())
}

/// The diagnostic for an expression error in `text`, the whole of source `file` (an
/// expression given on the command line).
pub fn text_diagnostic(err: &ExprError, file: FileId, text: &str) -> Diagnostic {
    if let Some(found) = nested(err, || "needed by the expression evaluated".to_string()) {
        return found;
    }
    let span = Span::new(file, err.span.start, err.span.end.max(err.span.start));
    described(err, span, text)
}

/// The diagnostic a config value's failure carried through the engine, if any.
fn nested(err: &ExprError, note: impl FnOnce() -> String) -> Option<Diagnostic> {
    let cause = err.cause.as_ref()?;
    let Nested(d) = cause.downcast_ref::<Nested>()?;
    Some(d.clone().with_note(note()))
}

/// `err` at `span` of the expression text `written`.
fn described(err: &ExprError, span: Span, written: &str) -> Diagnostic {
    let kind = match err.kind {
        crate::expr::ErrorKind::Compile => "invalid expression",
        crate::expr::ErrorKind::Run => "expression failed",
        crate::expr::ErrorKind::Deferred => "expression deferred",
    };
    match unknown_function(err, written) {
        Some((name, hint)) => {
            let d = Diagnostic::error(format!("{kind}: unknown function `{name}`"))
                .with_primary(span, format!("no function named `{name}`"))
                .with_note(format!("(the expression engine says: {})", err.message));
            match hint {
                Some(h) => d.with_help(format!("did you mean `{h}`?")),
                None => d,
            }
        }
        None => Diagnostic::error(format!("{kind}: {}", err.message))
            .with_primary(span, err.message.clone()),
    }
}

/// `nosuch(1)` fails as "cannot call nil" (expr-lang's wording, kept for
/// conformance); name the function instead, with the closest known one.
fn unknown_function(err: &ExprError, written: &str) -> Option<(String, Option<&'static str>)> {
    if err.message != "invalid operation: cannot call nil" {
        return None;
    }
    let called = written.get(err.span.clone())?;
    let name: String = called
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let known: Vec<&'static str> = crate::expr::builtin_names()
        .chain(crate::expr::windsor::functions().iter().map(|f| f.name))
        .collect();
    Some((name.clone(), crate::template::keys::suggest(&name, &known)))
}

/// Evaluates every string of `node` as a template; keys are never evaluated (S7).
pub fn eval_node(
    engine: &Engine,
    node: &Node,
    scope: &dyn Scope,
    host: &TemplateHost<'_>,
    files: &FileMap,
    context: &dyn Fn() -> String,
) -> Result<Value, Diagnostic> {
    match &node.kind {
        NodeKind::Str(s) => {
            if !crate::expr::template::contains_expression(s) {
                return Ok(Value::Str(Arc::clone(s)));
            }
            engine
                .render_template(s, scope, host)
                .map_err(|e| expr_diagnostic(&e, node, files, context))
        }
        NodeKind::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(eval_node(engine, item, scope, host, files, context)?);
            }
            Ok(Value::list(out))
        }
        NodeKind::Map(entries) => {
            let mut map = crate::expr::Map::with_capacity(entries.len());
            for (k, v) in entries {
                map.insert(
                    Arc::clone(&k.name),
                    eval_node(engine, v, scope, host, files, context)?,
                );
            }
            Ok(Value::map(map))
        }
        _ => Ok(node.to_value()),
    }
}

/// Evaluates a `when` (S5): one expression, or a `${…}` template; null is false, and
/// anything but a boolean or null is an error.
pub fn eval_condition(
    engine: &Engine,
    cond: &crate::template::Condition,
    scope: &dyn Scope,
    host: &TemplateHost<'_>,
    files: &FileMap,
    context: &dyn Fn() -> String,
) -> Result<bool, Diagnostic> {
    let run = |host: &TemplateHost<'_>| {
        if crate::expr::template::contains_expression(&cond.text) {
            engine.render_template(&cond.text, scope, host)
        } else {
            engine.eval(&cond.text, scope, host)
        }
    };
    let result = match run(host) {
        // A condition needs its answer now, so a deferred `terraform_output` is looked
        // up instead (Windsor's "deferred on" lookup, docs/semantics.md S7): with no outputs known yet, the
        // component has none and the call gives null.
        Err(e) if e.kind == crate::expr::ErrorKind::Deferred => {
            let none =
                crate::expr::host::TerraformOutputs::Provider(Value::map(Default::default()));
            run(&TemplateHost {
                terraform: &none,
                ..*host
            })
        }
        other => other,
    };
    let value = result.map_err(|e| expr_diagnostic(&e, &cond.node, files, context))?;
    match value {
        Value::Bool(b) => Ok(b),
        Value::Nil => Ok(false),
        other => Err(Diagnostic::error(format!(
            "`when` must evaluate to a boolean, got {} ({})",
            other.type_name(),
            crate::expr::windsor::format::go_format(&other)
        ))
        .with_primary(cond.node.span, "this condition")
        .with_context(context())
        .with_help("compare explicitly, e.g. `x == 'value'`, or use `x ?? false`")),
    }
}
