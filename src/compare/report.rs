//! A [`Diff`] written out: text for a terminal, JSON for tools, Markdown for a pull
//! request comment, and the affected contexts as a CI matrix.

use super::changes::{Change, Changes, Field};
use super::{ContextDiff, Diff};
use serde_json::{json, Value};
use std::fmt::Write;

/// How an absent value reads in text and Markdown.
const ABSENT: &str = "(none)";

fn counts(diff: &Diff) -> String {
    let count = |change: Option<Change>| {
        diff.contexts
            .iter()
            .filter(|c| c.failed.is_empty() && c.change == change)
            .count()
    };
    let failed = diff
        .contexts
        .iter()
        .filter(|c| !c.failed.is_empty())
        .count();
    let mut line = format!(
        "{} context(s): {} changed, {} added, {} removed, {} unchanged",
        diff.contexts.len(),
        count(Some(Change::Changed)),
        count(Some(Change::Added)),
        count(Some(Change::Removed)),
        count(None),
    );
    if failed > 0 {
        let _ = write!(line, ", {failed} failed");
    }
    line
}

fn or_absent(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or(ABSENT)
}

/// Text: each context that differs, its sources and items, each changed field with
/// old and new value and where the new one came from; then a count line.
pub fn text(diff: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "base: {}", diff.base);
    let _ = writeln!(out, "head: {}", diff.head);
    if let Some((old, new)) = &diff.template {
        let _ = writeln!(out, "template: {old} -> {new}");
    }
    for context in &diff.contexts {
        for (side, errors) in &context.failed {
            let _ = writeln!(out, "context {}: failed on {side}", context.context);
            for line in errors.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        let Some(change) = context.change.filter(|_| context.failed.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "context {}: {}", context.context, change.name());
        text_changes(&context.changes, &mut out);
    }
    out.push_str(&counts(diff));
    out.push('\n');
    out
}

fn text_changes(changes: &Changes, out: &mut String) {
    for source in &changes.sources {
        let _ = writeln!(
            out,
            "  source {}: {} -> {}",
            source.name,
            or_absent(&source.old),
            or_absent(&source.new)
        );
    }
    for item in &changes.items {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            item.kind.name(),
            item.id,
            item.change.name()
        );
        for field in &item.fields {
            let _ = writeln!(
                out,
                "    {}: {} -> {}",
                field.path,
                or_absent(&field.old),
                or_absent(&field.new)
            );
            if let Some(origin) = &field.origin {
                let _ = writeln!(out, "      from {origin}");
            }
        }
    }
}

fn field_json(field: &Field) -> Value {
    json!({
        "path": field.path,
        "old": field.old_value,
        "new": field.new_value,
        "deferred": field.deferred,
        "origin": field.origin,
    })
}

fn context_json(context: &ContextDiff) -> Value {
    let sources: Vec<Value> = context
        .changes
        .sources
        .iter()
        .map(|s| json!({"name": s.name, "old": s.old_value, "new": s.new_value}))
        .collect();
    let items: Vec<Value> = context
        .changes
        .items
        .iter()
        .map(|i| {
            json!({
                "kind": i.kind.name(),
                "id": i.id,
                "change": i.change.name(),
                "fields": i.fields.iter().map(field_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let failed: Vec<Value> = context
        .failed
        .iter()
        .map(|(side, errors)| json!({"side": side, "errors": errors}))
        .collect();
    json!({
        "context": context.context,
        "change": context.change.map(Change::name),
        "sources": sources,
        "items": items,
        "failed": failed,
    })
}

/// JSON: the sides, the template when it changed, and every context compared
/// (`change` null when it is the same on both sides).
pub fn json(diff: &Diff) -> String {
    let template = diff
        .template
        .as_ref()
        .map(|(old, new)| json!({"old": old, "new": new}));
    let doc = json!({
        "base": diff.base,
        "head": diff.head,
        "template": template,
        "differs": diff.differs(),
        "contexts": diff.contexts.iter().map(context_json).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// The contexts that differ, as a GitHub Actions matrix takes it:
/// `{"include": [{"context", "change", "terraform", "kustomizations"}]}`, the last
/// two the ids of the components and Kustomizations that differ.
pub fn affected(diff: &Diff) -> String {
    let include: Vec<Value> = diff
        .contexts
        .iter()
        .filter(|c| c.change.is_some() || !c.failed.is_empty())
        .map(|c| {
            let ids = |kind: super::snapshot::Kind| {
                c.changes
                    .items
                    .iter()
                    .filter(|i| i.kind == kind)
                    .map(|i| i.id.clone())
                    .collect::<Vec<_>>()
            };
            let change = match c.failed.is_empty() {
                true => c.change.map_or("unchanged", Change::name),
                false => "failed",
            };
            json!({
                "context": c.context,
                "change": change,
                "terraform": ids(super::snapshot::Kind::Terraform),
                "kustomizations": ids(super::snapshot::Kind::Kustomization),
            })
        })
        .collect();
    let mut text = serde_json::to_string(&json!({ "include": include })).unwrap_or_default();
    text.push('\n');
    text
}

/// A Markdown value: code, or an em dash when absent. Backticks inside are doubled
/// around so the value cannot end the code span.
fn code(value: &Option<String>) -> String {
    match value {
        None => "—".to_string(),
        Some(v) if v.contains('`') => format!("`` {} ``", v.replace('\n', " ")),
        Some(v) => format!("`{}`", v.replace('\n', " ")),
    }
}

/// Markdown for a pull request: a heading with the count, a table of the contexts
/// that differ, then each one's details folded.
pub fn markdown(diff: &Diff) -> String {
    let mut out = String::new();
    let differ: Vec<&ContextDiff> = diff
        .contexts
        .iter()
        .filter(|c| c.change.is_some() || !c.failed.is_empty())
        .collect();
    let _ = writeln!(
        out,
        "### bpc diff: {} of {} context(s) differ\n",
        differ.len(),
        diff.contexts.len()
    );
    let _ = writeln!(out, "Base: {}. Head: {}.\n", diff.base, diff.head);
    if let Some((old, new)) = &diff.template {
        let _ = writeln!(
            out,
            "The template changed: {} → {}.\n",
            code(&Some(old.clone())),
            code(&Some(new.clone()))
        );
    }
    if differ.is_empty() {
        out.push_str("No context differs.\n");
        return out;
    }
    out.push_str("| context | change | terraform | kustomizations | rendered files |\n");
    out.push_str("|---|---|---|---|---|\n");
    for c in &differ {
        let count =
            |kind: super::snapshot::Kind| c.changes.items.iter().filter(|i| i.kind == kind).count();
        let change = match c.failed.is_empty() {
            true => c.change.map_or("unchanged", Change::name),
            false => "failed",
        };
        let _ = writeln!(
            out,
            "| {} | {change} | {} | {} | {} |",
            c.context,
            count(super::snapshot::Kind::Terraform),
            count(super::snapshot::Kind::Kustomization),
            count(super::snapshot::Kind::Rendered),
        );
    }
    for c in &differ {
        let change = match c.failed.is_empty() {
            true => c.change.map_or("unchanged", Change::name),
            false => "failed",
        };
        let _ = writeln!(
            out,
            "\n<details><summary><b>{}</b>: {change}</summary>\n",
            c.context
        );
        for (side, errors) in &c.failed {
            let _ = writeln!(
                out,
                "Failed on {side}:\n\n```\n{}\n```\n",
                errors.trim_end()
            );
        }
        for source in &c.changes.sources {
            let _ = writeln!(
                out,
                "- source `{}`: {} → {}",
                source.name,
                code(&source.old),
                code(&source.new)
            );
        }
        for item in &c.changes.items {
            let _ = writeln!(
                out,
                "- {} `{}`: {}",
                item.kind.name(),
                item.id,
                item.change.name()
            );
            for field in &item.fields {
                let from = field
                    .origin
                    .as_ref()
                    .map(|o| format!(" (from {o})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  - `{}`: {} → {}{from}",
                    field.path,
                    code(&field.old),
                    code(&field.new)
                );
            }
        }
        out.push_str("\n</details>\n");
    }
    out
}
