//! `${…}` interpolation inside strings (tests/conformance/expr/README.md "tmpl mode";
//! docs/semantics.md S6, S7).
//!
//! Two dialects share the scanner and the rendering of values into text:
//!
//! * [`Dialect::Bpc`] (composition): one left-to-right pass. Every `${…}` is evaluated
//!   once; text a substitution produces is never evaluated again (S6); `$${` is a
//!   literal `${` (S7); error spans are exact offsets into the original string.
//! * [`Dialect::Windsor`] (expression conformance): Windsor's loop — after each
//!   substitution scanning restarts at the beginning, so substituted text containing
//!   `${…}` is evaluated too, at most [`WINDSOR_MAX_SUBSTITUTIONS`] times, with no
//!   escape syntax.
//!
//! In both, a string that is exactly one `${…}` (surrounding whitespace allowed) is that
//! expression's typed value, and a deferred expression (`terraform_output` at compose
//! time) stays in the text verbatim while the others are substituted.

use super::error::{ErrorKind, ExprError};
use super::windsor::format::interpolation_text;
use crate::value::Value;

/// Windsor evaluates at most this many `${…}` per string; the rest stay verbatim.
const WINDSOR_MAX_SUBSTITUTIONS: usize = 20;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// bpc's rules (S6, S7): single pass, `$${` escapes, exact spans.
    #[default]
    Bpc,
    /// Windsor's loop, for conformance with the Go implementation.
    Windsor,
}

/// True when `text` needs the renderer: it has a `${` (an expression or an escape).
pub(crate) fn contains_expression(text: &str) -> bool {
    // A byte scan for `$`: most texts are short, where setting up a substring search
    // cost more than the search (composing asks this of every string, twice).
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes[from..].iter().position(|&b| b == b'$') {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'{') {
            return true;
        }
        from = at + 1;
    }
    false
}

/// True when `text` holds at least one complete `${…}` (a `${` with its closing `}`).
fn contains_complete_expression(text: &str) -> bool {
    let mut from = 0;
    while let Some(i) = text[from..].find("${") {
        let start = from + i;
        if expression_end(text, start + 2).is_some() {
            return true;
        }
        from = start + 2;
    }
    false
}

/// The index of the `}` that closes an expression whose body starts at `from`: braces
/// are counted, `'…'` and `"…"` literals skipped (a backslash skips the next
/// character). Backtick literals are not recognised, as in Windsor.
fn expression_end(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 1usize;
    let mut quote: Option<u8> = None;
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// Evaluates one expression body; `offset` is the byte offset of the body inside the
/// whole string, for error spans.
pub type Evaluate<'a> = dyn FnMut(&str, usize) -> Result<Value, ExprError> + 'a;

/// Renders `text`, evaluating each `${…}` body with `eval`.
pub fn render(text: &str, dialect: Dialect, eval: &mut Evaluate<'_>) -> Result<Value, ExprError> {
    if !contains_expression(text) {
        return Ok(Value::str(text));
    }
    match dialect {
        Dialect::Bpc => render_single_pass(text, eval),
        Dialect::Windsor => render_windsor(text, eval),
    }
}

/// Finds the body of the expression opening at `start` (the `$`), or the error for an
/// unclosed or empty one. `origin` maps the position into the original string.
fn body_at(text: &str, start: usize, origin: usize) -> Result<(usize, &str), ExprError> {
    let Some(end) = expression_end(text, start + 2) else {
        return Err(ExprError::compile(
            "unclosed expression: `${` has no matching `}`",
            origin..origin + 2,
        ));
    };
    let body = &text[start + 2..end];
    if body.is_empty() {
        return Err(ExprError::compile(
            "expression cannot be empty",
            origin..origin + 3,
        ));
    }
    Ok((end, body))
}

fn render_single_pass(text: &str, eval: &mut Evaluate<'_>) -> Result<Value, ExprError> {
    // Whole-string form first: its value is returned as it is, so rendering it as text
    // (below) would be wasted work, and for a large shared value, a large allocation.
    let lead = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    if trimmed.starts_with("${") {
        if let Some(end) = expression_end(trimmed, 2) {
            if end + 1 == trimmed.len() && end > 2 {
                return match eval(&trimmed[2..end], lead + 2) {
                    Ok(value) => Ok(value),
                    Err(e) if e.kind == ErrorKind::Deferred => Ok(Value::str(text)),
                    Err(e) => Err(e),
                };
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    // Whole-string form: the one expression's value and whether anything else (besides
    // whitespace) was written.
    let mut only: Option<Value> = None;
    let mut expressions = 0usize;
    let mut other_text = false;
    let mut deferred_any = false;
    let mut pos = 0;
    while let Some(i) = text[pos..].find("${") {
        let start = pos + i;
        let literal = &text[pos..start];
        if let Some(kept) = literal.strip_suffix('$') {
            // `$${` is a literal `${` (S7): drop one `$`, keep scanning after the brace.
            out.push_str(kept);
            out.push_str("${");
            other_text = true;
            pos = start + 2;
            continue;
        }
        out.push_str(literal);
        other_text |= !literal.trim().is_empty();
        let (end, body) = body_at(text, start, start)?;
        expressions += 1;
        match eval(body, start + 2) {
            Ok(value) => {
                let indent = indentation_before(&out);
                out.push_str(&splice_text(&value, indent));
                only = Some(value);
            }
            Err(e) if e.kind == ErrorKind::Deferred => {
                // Kept verbatim for apply time.
                out.push_str(&text[start..=end]);
                deferred_any = true;
                only = None;
            }
            Err(e) => return Err(e),
        }
        pos = end + 1;
    }
    let rest = &text[pos..];
    out.push_str(rest);
    other_text |= !rest.trim().is_empty();
    if expressions == 1 && !other_text {
        if let Some(value) = only {
            return Ok(value);
        }
        if deferred_any {
            return Ok(Value::str(text));
        }
    }
    Ok(Value::str(out))
}

fn render_windsor(text: &str, eval: &mut Evaluate<'_>) -> Result<Value, ExprError> {
    let mut result = text.to_string();
    // Spans are exact while `result` is still the original text; after a substitution
    // positions no longer map, so errors point at the whole string.
    let mut pristine = true;
    let mut search = 0;
    for _ in 0..WINDSOR_MAX_SUBSTITUTIONS {
        let Some(i) = result.get(search..).and_then(|r| r.find("${")) else {
            break;
        };
        let start = search + i;
        let origin = if pristine { start } else { 0 };
        let span_all = |e: ExprError| {
            if pristine {
                e
            } else {
                ExprError {
                    span: 0..text.len(),
                    ..e
                }
            }
        };
        let (end, body) = body_at(&result, start, origin).map_err(span_all)?;
        let value = match eval(body, if pristine { start + 2 } else { 0 }) {
            Ok(value) => value,
            Err(e) if e.kind == ErrorKind::Deferred => {
                search = end + 1;
                continue;
            }
            Err(e) => return Err(span_all(e)),
        };
        let (before, after) = (&result[..start], &result[end + 1..]);
        if before.trim().is_empty() && after.trim().is_empty() {
            if let Value::Str(s) = &value {
                if contains_complete_expression(s) && **s != *result {
                    result = s.to_string();
                    pristine = false;
                    search = 0;
                    continue;
                }
            }
            return Ok(value);
        }
        let replacement = splice_text(&value, indentation_before(before));
        let mut next = String::with_capacity(before.len() + replacement.len() + after.len());
        next.push_str(before);
        next.push_str(&replacement);
        next.push_str(after);
        result = next;
        pristine = false;
        search = 0;
    }
    Ok(Value::str(result))
}

/// The indentation a multi-line value is spliced in at (docs/semantics.md S7): the spaces directly after the last newline before the `${`
/// (0 when the `${` is on the first line).
fn indentation_before(before: &str) -> usize {
    match before.rfind('\n') {
        Some(nl) => before[nl + 1..].bytes().take_while(|b| *b == b' ').count(),
        None => 0,
    }
}

/// A value as spliced into text: scalars as `%v`, nil as nothing, maps and lists as
/// YAML — when that (or a string) takes several lines it starts on a new line and
/// every non-empty line is indented by `indent + 2`, as the Windsor CLI does, so a
/// multi-line value lands inside the block scalar it is written in.
fn splice_text(value: &Value, indent: usize) -> String {
    let text = interpolation_text(value);
    if !matches!(value, Value::List(_) | Value::Map(_) | Value::Str(_)) || !text.contains('\n') {
        return text;
    }
    let pad = " ".repeat(indent + 2);
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    out
}

/// The `${…}` bodies of `text` as composition reads them ([`Dialect::Bpc`]): each with
/// the byte offset of the body in `text`, `$${` escapes skipped; an unclosed or empty
/// one is its error. For static checks, which read expressions without running them.
pub fn bodies(text: &str) -> Vec<Result<(usize, &str), ExprError>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find("${") {
        let start = pos + i;
        if text[pos..start].ends_with('$') {
            pos = start + 2;
            continue;
        }
        match body_at(text, start, start) {
            Ok((end, body)) => {
                out.push(Ok((start + 2, body)));
                pos = end + 1;
            }
            Err(e) => {
                out.push(Err(e));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_simple(body: &str, offset: usize) -> Result<Value, ExprError> {
        match body.trim() {
            "n" => Ok(Value::Int(7)),
            "s" => Ok(Value::str("hi")),
            "inner" => Ok(Value::str("${n}")),
            "later" => Err(ExprError::new(
                ErrorKind::Deferred,
                "deferred",
                offset..offset,
            )),
            "list" => Ok(Value::list(vec![Value::Int(1), Value::Int(2)])),
            "lines" => Ok(Value::str("one\ntwo")),
            "bad" => Err(ExprError::run("boom", offset..offset + 3)),
            other => Ok(Value::str(other)),
        }
    }

    /// The rendered value in Debug form (Value has no `PartialEq`), or the error text.
    fn show(dialect: Dialect, text: &str) -> String {
        match render(text, dialect, &mut eval_simple) {
            Ok(v) => format!("{v:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    fn bpc(text: &str) -> String {
        show(Dialect::Bpc, text)
    }

    fn windsor(text: &str) -> String {
        show(Dialect::Windsor, text)
    }

    fn text(s: &str) -> String {
        format!("{:?}", Value::str(s))
    }

    #[test]
    fn whole_string_keeps_the_type() {
        assert_eq!(bpc("  ${n}\n"), format!("{:?}", Value::Int(7)));
        assert_eq!(windsor("${n}"), format!("{:?}", Value::Int(7)));
    }

    #[test]
    fn dollar_dollar_is_a_literal_in_bpc_only() {
        assert_eq!(bpc("$${n}"), text("${n}"));
        assert_eq!(bpc("a $${n} ${n}"), text("a ${n} 7"));
        assert_eq!(windsor("$${n}"), text("$7"));
    }

    #[test]
    fn substituted_text_is_evaluated_again_only_in_windsor() {
        assert_eq!(bpc("${inner}"), text("${n}"));
        assert_eq!(bpc("a-${inner}"), text("a-${n}"));
        assert_eq!(windsor("${inner}"), format!("{:?}", Value::Int(7)));
        assert_eq!(windsor("a-${inner}"), text("a-7"));
    }

    #[test]
    fn deferred_expressions_stay_verbatim() {
        assert_eq!(bpc("pre ${later} post ${s}"), text("pre ${later} post hi"));
        assert_eq!(
            windsor("pre ${later} post ${s}"),
            text("pre ${later} post hi")
        );
        assert_eq!(bpc(" ${later} "), text(" ${later} "));
    }

    #[test]
    fn errors_point_into_the_whole_string() {
        let span = |t: &str| {
            render(t, Dialect::Bpc, &mut eval_simple)
                .err()
                .map(|e| (e.kind, e.span))
        };
        assert_eq!(span("ab ${bad}"), Some((ErrorKind::Run, 5..8)));
        assert_eq!(span("ab ${ n"), Some((ErrorKind::Compile, 3..5)));
        assert_eq!(span("x ${}").map(|e| e.0), Some(ErrorKind::Compile));
    }

    #[test]
    fn windsor_stops_after_twenty_substitutions() {
        let input = "${n}".repeat(25);
        let expected = format!("{}{}", "7".repeat(20), "${n}".repeat(5));
        assert_eq!(windsor(&input), text(&expected));
        assert_eq!(bpc(&input), text(&"7".repeat(25)));
    }

    #[test]
    fn lists_are_indented_under_their_line() {
        assert_eq!(bpc("k:\n  v: ${list}"), text("k:\n  v: \n    - 1\n    - 2"));
    }

    #[test]
    fn multi_line_strings_are_indented_under_their_line_too() {
        assert_eq!(
            bpc("k:\n  v: ${lines}\nz"),
            text("k:\n  v: \n    one\n    two\nz")
        );
        assert_eq!(bpc("a ${lines} b"), text("a \n  one\n  two b"));
        assert_eq!(bpc("one line: ${s}"), text("one line: hi"));
    }

    #[test]
    fn braces_in_quotes_do_not_close() {
        assert_eq!(expression_end("${'}'}", 2), Some(5));
        assert_eq!(expression_end("${\"a\\\"}\"}", 2), Some(8));
        assert!(contains_complete_expression("x ${a}"));
        assert!(!contains_complete_expression("x ${a"));
    }
}
