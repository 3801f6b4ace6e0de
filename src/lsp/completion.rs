//! Completion: inside an expression, the names the scope has below what is typed
//! (schema properties, config block keys, built-ins; keys of the composed value) and
//! every function with its signature; at a facet key, the keys the facet format
//! allows there (component keys from the field table); in `dependsOn`, the names of
//! the template's components; after `strategy:`, the strategies.

use super::cursor::Cursor;
use super::lookup;
use super::snapshot::Snapshot;
use crate::check::names::{self, Resolution};
use crate::template::fields::component_keys;
use crate::template::keys;
use crate::template::ComponentKind;
use lsp_types::{CompletionItem, CompletionItemKind, Documentation};
use std::collections::BTreeSet;
use std::sync::Arc;

pub fn completion(snapshot: &Snapshot, text: &str, offset: usize) -> Vec<CompletionItem> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let cursor = Cursor::new(text, offset);
    if cursor.expression.is_some() {
        return match cursor.typed_path() {
            Some((segments, _)) => expression(snapshot, &segments),
            None => Vec::new(),
        };
    }
    let parents = indent_parents(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..offset];
    let trimmed = line.trim_start().trim_start_matches("- ");
    // A value after `key:` on this line.
    if let Some((key, _)) = trimmed.split_once(':') {
        return match key.trim() {
            "strategy" => words(
                &["merge", "replace", "remove"],
                CompletionItemKind::ENUM_MEMBER,
            ),
            "dependsOn" => dependency_names(session, &parents),
            _ => Vec::new(),
        };
    }
    let parent: Vec<&str> = parents.iter().map(String::as_str).collect();
    match parent.as_slice() {
        [.., list, "-", "dependsOn", "-"] if ["terraform", "kustomize", "flux"].contains(list) => {
            dependency_names(session, &parents)
        }
        [.., "dependsOn"] if line.trim_start().starts_with('-') => {
            dependency_names(session, &parents)
        }
        [] => words(keys::FACET, CompletionItemKind::FIELD),
        ["metadata"] => words(keys::METADATA, CompletionItemKind::FIELD),
        ["config", "-"] => words(keys::CONFIG_BLOCK, CompletionItemKind::FIELD),
        ["terraform", "-"] => fields(ComponentKind::Terraform),
        ["kustomize", "-"] => fields(ComponentKind::Kustomize),
        ["flux", "-"] => fields(ComponentKind::FluxSystem),
        [.., "requires", "-"] => words(keys::REQUIREMENT, CompletionItemKind::FIELD),
        ["messages", "-"] => words(keys::MESSAGE, CompletionItemKind::FIELD),
        _ => Vec::new(),
    }
}

/// Names below `segments` in the scope, and at the root the functions too.
fn expression(snapshot: &Snapshot, segments: &[String]) -> Vec<CompletionItem> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let tree = names::names(&session.template);
    let path: Vec<Arc<str>> = segments.iter().map(|s| Arc::from(s.as_str())).collect();
    let mut items = Vec::new();
    let mut seen = BTreeSet::new();
    if let Resolution::Known(shape) = tree.resolve(&path) {
        for (name, child) in &shape.children {
            seen.insert(name.to_string());
            let kind = if child.written {
                CompletionItemKind::VARIABLE
            } else {
                CompletionItemKind::PROPERTY
            };
            let mut detail = child.types.join(" | ");
            if child.written {
                detail = format!("config {detail}").trim().to_string();
            }
            let doc = session.template.schema.as_ref().and_then(|schema| {
                let mut full: Vec<&str> = segments.iter().map(String::as_str).collect();
                full.push(name);
                let lines = lookup::schema_summary(&lookup::schema_node(schema, &full)?);
                (!lines.is_empty()).then(|| lines.join("\n\n"))
            });
            items.push(CompletionItem {
                label: name.to_string(),
                kind: Some(kind),
                detail: (!detail.is_empty()).then_some(detail),
                documentation: doc.map(Documentation::String),
                ..CompletionItem::default()
            });
        }
    }
    // Keys the composed value has (values files may add keys nothing declares).
    if let Some(composition) = snapshot.composition() {
        let mut value: Option<&crate::value::Value> = None;
        let roots = [&composition.config, &*composition.context];
        for root in roots {
            let mut cur = match segments.first() {
                Some(first) => root.get(first.as_str()),
                None => None,
            };
            for s in segments.iter().skip(1) {
                cur = cur.and_then(|v| v.as_map()).and_then(|m| m.get(s.as_str()));
            }
            if segments.is_empty() {
                for key in root.keys() {
                    if seen.insert(key.to_string()) {
                        items.push(simple(key, CompletionItemKind::VARIABLE));
                    }
                }
            }
            value = value.or(cur);
        }
        if let Some(map) = value.and_then(|v| v.as_map()) {
            for key in map.keys() {
                if seen.insert(key.to_string()) {
                    items.push(simple(key, CompletionItemKind::PROPERTY));
                }
            }
        }
    }
    if segments.is_empty() {
        for f in super::functions::all() {
            items.push(CompletionItem {
                label: f.name.to_string(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(f.signature.clone()),
                documentation: Some(Documentation::String(f.help.to_string())),
                ..CompletionItem::default()
            });
        }
    }
    items
}

fn simple(label: &str, kind: CompletionItemKind) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        ..CompletionItem::default()
    }
}

fn words(list: &[&str], kind: CompletionItemKind) -> Vec<CompletionItem> {
    list.iter().map(|w| simple(w, kind)).collect()
}

/// The keys of a component of `kind`, with how each is evaluated and combined.
fn fields(kind: ComponentKind) -> Vec<CompletionItem> {
    component_keys(kind)
        .iter()
        .map(|key| {
            let detail = crate::template::fields::field_for(kind, key)
                .map(|f| format!("{:?}, combined by {:?}", f.eval, f.combine))
                .unwrap_or_else(|| "directive".to_string());
            CompletionItem {
                label: key.to_string(),
                kind: Some(CompletionItemKind::FIELD),
                detail: Some(detail),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// Component names a `dependsOn` under `parents` may name.
fn dependency_names(session: &crate::session::Session, parents: &[String]) -> Vec<CompletionItem> {
    let kind = match parents.first().map(String::as_str) {
        Some("terraform") => ComponentKind::Terraform,
        _ => ComponentKind::Kustomize,
    };
    let mut names = BTreeSet::new();
    for c in lookup::components(&session.template) {
        let same = match (kind, c.entry.kind) {
            (ComponentKind::Terraform, k) => k == ComponentKind::Terraform,
            (_, ComponentKind::Terraform) => false,
            _ => true,
        };
        if same {
            names.insert((c.id, c.entry.kind));
        }
    }
    names
        .into_iter()
        .map(|(name, kind)| CompletionItem {
            label: name,
            kind: Some(CompletionItemKind::MODULE),
            detail: Some(kind.noun().to_string()),
            ..CompletionItem::default()
        })
        .collect()
}

/// The keys above the cursor's line by indentation, outermost first; `-` stands for
/// a list item. Works on text that does not parse, as text being typed often does.
pub fn indent_parents(text: &str, offset: usize) -> Vec<String> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let current = &text[line_start..offset];
    let mut indent = current.len() - current.trim_start().len();
    let mut out = Vec::new();
    if current.trim_start().starts_with("- ") {
        out.push("-".to_string());
    }
    for line in text[..line_start].lines().rev() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let at = line.len() - content.len();
        if at >= indent {
            continue;
        }
        let (item, key_at, rest) = match content.strip_prefix("- ") {
            Some(rest) => (true, at + 2, rest.trim_start()),
            None => (false, at, content),
        };
        if key_at < indent {
            if let Some((key, _)) = rest.split_once(':') {
                if !key.contains(' ') || key.trim().starts_with('"') {
                    out.push(key.trim().trim_matches('"').to_string());
                }
            }
        }
        if item {
            out.push("-".to_string());
        }
        indent = at;
        if indent == 0 {
            break;
        }
    }
    out.reverse();
    // A `- key: v` line above at the same item level contributes its key only when
    // the cursor is deeper than it; what remains is the chain of containers.
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_by_indentation() {
        let text = "terraform:\n  - name: x\n    dependsOn:\n      - \n";
        let offset = text.find("- \n").map_or(0, |i| i + 2);
        assert_eq!(
            indent_parents(text, offset),
            ["terraform", "-", "dependsOn", "-"]
        );
        let text = "config:\n  - name: a\n    \n";
        let offset = text.rfind("    ").map_or(0, |i| i + 4);
        assert_eq!(indent_parents(text, offset), ["config", "-"]);
        let text = "kind: Facet\n";
        assert!(indent_parents(text, text.len()).is_empty());
    }
}
