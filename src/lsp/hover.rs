//! Hover: on a name an expression reads, its value in the current context (and,
//! compactly, in the others), its type and where it came from (`bpc explain`'s
//! account when the context composes, else the config blocks that write it); on a
//! function, its signature and help; on a schema key, its description, type and
//! default; on a component field, how the field table evaluates and combines it.

use super::cursor::{Cursor, Segment, Token};
use super::lookup;
use super::snapshot::Snapshot;
use crate::session::{Session, Syntax};
use crate::template::ComponentKind;
use crate::value::Value;
use std::fmt::Write;
use std::path::Path;

/// Values longer than this are cut in hovers.
const MAX_VALUE_CHARS: usize = 600;

/// The Markdown of a hover at byte `offset` of `text` (the document at `path`), and
/// the byte range it is about.
pub fn hover(
    snapshot: &Snapshot,
    path: &Path,
    text: &str,
    offset: usize,
) -> Option<(String, usize, usize)> {
    let session = snapshot.session.as_ref().ok()?;
    let cursor = Cursor::new(text, offset);
    if let Some(token) = cursor.token() {
        return match token {
            Token::Call { name, start, end } => {
                let f = super::functions::find(&name)?;
                let origin = if f.windsor {
                    "Windsor function"
                } else {
                    "expr-lang builtin"
                };
                Some((
                    format!("```\n{}\n```\n{} — {origin}", f.signature, f.help),
                    start,
                    end,
                ))
            }
            Token::Path { path, start, end } => {
                Some((reference(snapshot, session, &path), start, end))
            }
            Token::StringArgument {
                function,
                index: 0,
                value,
                start,
                end,
            } if function == "terraform_output" => Some((
                component(session, ComponentKind::Terraform, &value)?,
                start,
                end,
            )),
            Token::StringArgument { .. } => None,
        };
    }
    if let Some((start, end)) = cursor.expression {
        let text = format!("${{{}}}", &text[start..end]);
        return Some((
            evaluated(snapshot, session, &text, Syntax::Text),
            start,
            end,
        ));
    }
    let is_schema = snapshot
        .template_dir()
        .is_some_and(|dir| path == dir.join("schema.yaml"));
    if is_schema {
        return schema_key(session, &cursor);
    }
    facet_structure(snapshot, session, &cursor)
}

/// Hover inside a facet's YAML: config block names and keys, dependsOn entries,
/// component fields.
fn facet_structure(
    snapshot: &Snapshot,
    session: &Session,
    cursor: &Cursor<'_>,
) -> Option<(String, usize, usize)> {
    let root = cursor.root.as_ref()?;
    let (first, rest) = cursor.path.split_first()?;
    let Segment::Key(section) = first else {
        return None;
    };
    let (_, start, end) = cursor.scalar.clone().unwrap_or_default();
    let key_range = || word_range(cursor.text, cursor.offset);
    match (section.as_str(), rest) {
        ("config", [Segment::Index(i), keys @ ..]) => {
            let block = root.get("config")?.kind_seq()?.get(*i)?;
            let name = block.get("name")?.as_str()?;
            let mut path = name.to_string();
            let inner: Vec<&str> = keys
                .iter()
                .filter_map(|s| match s {
                    Segment::Key(k) => Some(k.as_str()),
                    Segment::Index(_) => None,
                })
                .collect();
            match inner.as_slice() {
                ["name"] => {}
                ["value", more @ ..] => more.iter().for_each(|k| {
                    let _ = write!(path, ".{k}");
                }),
                [key, more @ ..] if !["when", "ordinal", "strategy", "requires"].contains(key) => {
                    std::iter::once(key).chain(more).for_each(|k| {
                        let _ = write!(path, ".{k}");
                    })
                }
                _ => return None,
            }
            let (s, e) = if cursor.on_key {
                key_range()
            } else {
                (start, end)
            };
            Some((reference(snapshot, session, &path), s, e))
        }
        (
            list @ ("terraform" | "kustomize" | "flux"),
            [Segment::Index(_), Segment::Key(field), more @ ..],
        ) => {
            let kind = kind_of(list);
            if field == "dependsOn" && !cursor.on_key && !more.is_empty() {
                let (name, s, e) = cursor.scalar.clone()?;
                return Some((component(session, kind, &name)?, s, e));
            }
            if !cursor.on_key || !more.is_empty() {
                return None;
            }
            let f = crate::template::fields::field_for(kind, field)?;
            let (s, e) = key_range();
            Some((
                format!(
                    "`{}` of a {}: evaluated as {:?}, contributions combine by {:?}{}",
                    f.name,
                    kind.noun(),
                    f.eval,
                    f.combine,
                    if f.identity {
                        " (part of its identity)"
                    } else {
                        ""
                    }
                ),
                s,
                e,
            ))
        }
        _ => None,
    }
}

fn kind_of(list: &str) -> ComponentKind {
    match list {
        "terraform" => ComponentKind::Terraform,
        "flux" => ComponentKind::FluxSystem,
        _ => ComponentKind::Kustomize,
    }
}

/// The word at `offset` (a key), as a byte range.
fn word_range(text: &str, offset: usize) -> (usize, usize) {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
    let start = text[..offset]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !is_word(c))
        .map_or(text.len(), |(i, _)| offset + i);
    (start, end)
}

trait SeqItems {
    fn kind_seq(&self) -> Option<&[crate::yaml::Node]>;
}

impl SeqItems for crate::yaml::Node {
    fn kind_seq(&self) -> Option<&[crate::yaml::Node]> {
        match &self.kind {
            crate::yaml::NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }
}

/// A schema.yaml key: what the schema says of the property it declares.
fn schema_key(session: &Session, cursor: &Cursor<'_>) -> Option<(String, usize, usize)> {
    if !cursor.on_key {
        return None;
    }
    let keys = cursor.keys();
    // …properties.<name>: the property `name`; the path is every name after a
    // `properties`.
    let mut path = Vec::new();
    let mut expect_name = false;
    for key in &keys {
        if expect_name {
            path.push(*key);
            expect_name = false;
        } else if *key == "properties" {
            expect_name = true;
        } else if *key != "additionalProperties" && !keys.starts_with(&["$defs"]) {
            return None;
        }
    }
    let schema = session.template.schema.as_ref()?;
    let entry = if keys.first() == Some(&"$defs") {
        let mut node = schema;
        for key in &keys {
            node = node.get(key)?;
        }
        lookup::SchemaEntry {
            written: node,
            resolved: node,
        }
    } else {
        lookup::schema_node(schema, &path)?
    };
    let mut out = format!(
        "**`{}`**",
        if path.is_empty() {
            keys.join(".")
        } else {
            path.join(".")
        }
    );
    for line in lookup::schema_summary(&entry) {
        let _ = write!(out, "\n\n{line}");
    }
    let (s, e) = word_range(cursor.text, cursor.offset);
    Some((out, s, e))
}

/// A dependency or `terraform_output` target: where the component is defined.
fn component(session: &Session, kind: ComponentKind, name: &str) -> Option<String> {
    let targets = lookup::dependency_targets(&session.template, kind, name);
    let mut out = format!("**{} `{name}`**", kind.noun());
    if targets.is_empty() {
        out.push_str("\n\nno facet of the template defines it");
        return Some(out);
    }
    for t in targets {
        let when = t
            .entry
            .when
            .as_ref()
            .map(|w| format!(", when `{}`", w.text.trim()));
        let _ = write!(
            out,
            "\n- facet `{}` ({}), {}{}",
            t.facet.name,
            session.files.describe(t.span),
            t.entry.strategy.as_str(),
            when.unwrap_or_default()
        );
    }
    Some(out)
}

/// A name path: value, type, value in the other contexts, provenance, schema.
fn reference(snapshot: &Snapshot, session: &Session, path: &str) -> String {
    let mut out = evaluated(snapshot, session, path, Syntax::Expression);
    let others: Vec<&String> = snapshot
        .compositions
        .iter()
        .skip(1)
        .map(|(c, _)| c)
        .collect();
    if !others.is_empty() {
        out.push_str("\n\nother contexts:");
        for context in others {
            let shown = match session.eval_context(context, path, Syntax::Expression) {
                Ok(v) => format!("`{}`", cut(&crate::value::json::compact(&v))),
                Err(e) => format!("error: {}", e.first().map_or("", |d| d.message.as_str())),
            };
            let _ = write!(out, "\n- `{context}`: {shown}");
        }
    }
    match snapshot.composition() {
        Some(composition) => {
            let explainer = crate::explain::Explainer {
                template: &session.template,
                composition,
                files: &session.files,
            };
            if let Ok(text) = explainer.explain(path) {
                let _ = write!(out, "\n\n```text\n{}\n```", text.trim_end());
            }
        }
        None => {
            let found = lookup::contributions(&session.template, path);
            if !found.is_empty() {
                out.push_str("\n\nwritten by:");
            }
            for c in found {
                let when = c
                    .block
                    .when
                    .as_ref()
                    .map(|w| format!(", when `{}`", w.text.trim()));
                let _ = write!(
                    out,
                    "\n- config block `{}` of facet `{}` ({}), {}{}",
                    c.block.name,
                    c.facet.name,
                    session.files.describe(c.span),
                    c.block.strategy.as_str(),
                    when.unwrap_or_default()
                );
            }
        }
    }
    if let Some(schema) = &session.template.schema {
        let segments: Vec<&str> = path.split('.').collect();
        if let Some(entry) = lookup::schema_node(schema, &segments) {
            let lines = lookup::schema_summary(&entry);
            if !lines.is_empty() {
                let _ = write!(out, "\n\nschema: {}", lines.join(" · "));
            }
        }
    }
    out
}

/// `text` evaluated in the current context: value and type, or the error.
fn evaluated(snapshot: &Snapshot, session: &Session, text: &str, syntax: Syntax) -> String {
    let shown = if syntax == Syntax::Expression {
        format!("**`{text}`**")
    } else {
        format!("**`{}`**", text.replace('`', "'"))
    };
    match session.eval(text, syntax) {
        Ok(value) => format!(
            "{shown} : `{}`\n\nin context `{}`:\n```yaml\n{}\n```",
            value.type_name(),
            snapshot.context,
            cut(show(&value).trim_end())
        ),
        Err(errors) => format!(
            "{shown}\n\nin context `{}`: error: {}",
            snapshot.context,
            errors.first().map_or(String::new(), |d| d.full_text())
        ),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::Map(_) | Value::List(_) => crate::emit::to_yaml(value),
        other => crate::value::json::compact(other),
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_VALUE_CHARS).collect();
    out.push('…');
    out
}
