//! Questions about the loaded template that hover, definition and completion share:
//! which config blocks write a path, which components carry a name, what the schema
//! says of a path.

use crate::files::Span;
use crate::template::{ComponentEntry, ComponentKind, ConfigBlock, Facet, Template};
use crate::yaml::{Node, NodeKind};

/// A config block contribution to a dotted path: the facet, the block, and the span
/// of the key inside the block that writes the path (the block's name when the path
/// is the block itself or not written literally).
pub struct Contribution<'t> {
    pub facet: &'t Facet,
    pub block: &'t ConfigBlock,
    pub span: Span,
}

/// Every config block (of every facet, in processing order) whose name is `path` or
/// a prefix of it, or that `path` is a prefix of.
pub fn contributions<'t>(template: &'t Template, path: &str) -> Vec<Contribution<'t>> {
    let mut out = Vec::new();
    for facet in &template.facets {
        for block in &facet.config {
            let name = block.name.as_str();
            let below = path
                .strip_prefix(name)
                .filter(|rest| rest.is_empty() || rest.starts_with('.'));
            let above = name
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with('.'));
            let span = match below {
                Some(rest) => {
                    let keys: Vec<&str> = rest.split('.').filter(|s| !s.is_empty()).collect();
                    key_span(&block.body, &keys).unwrap_or(block.name_span)
                }
                None if above => block.name_span,
                None => continue,
            };
            out.push(Contribution { facet, block, span });
        }
    }
    out
}

/// The span of the key at `keys` inside a block body (a `value:` body or a map).
fn key_span(body: &Node, keys: &[&str]) -> Option<Span> {
    let mut node = body;
    let mut span = None;
    for key in keys {
        let NodeKind::Map(entries) = &node.kind else {
            return None;
        };
        let (k, v) = entries.iter().find(|(k, _)| &*k.name == *key)?;
        span = Some(k.span);
        node = v;
    }
    span
}

/// A component entry with the name or path that identifies it.
pub struct Named<'t> {
    pub facet: &'t Facet,
    pub entry: &'t ComponentEntry,
    pub id: String,
    /// The `name:` (or `path:`) value, else the whole entry.
    pub span: Span,
}

/// Every component entry of the template, with its id (`name`, else `path`).
pub fn components(template: &Template) -> Vec<Named<'_>> {
    let mut out = Vec::new();
    for facet in &template.facets {
        for entry in &facet.components {
            let field = |k: &str| entry.node.get(k).and_then(Node::as_str);
            let Some(id) = crate::template::identity::component_id(field) else {
                continue;
            };
            let span = entry
                .node
                .get("name")
                .filter(|n| n.as_str().is_some_and(|s| !s.is_empty()))
                .or_else(|| entry.node.get("path"))
                .map_or(entry.node.span, |n| n.span);
            out.push(Named {
                facet,
                entry,
                id,
                span,
            });
        }
    }
    out
}

/// The components a `dependsOn` entry of a `kind` component can name: the same
/// kind; for kustomizations also flux systems' tiers (`<system>-…`).
pub fn dependency_targets<'t>(
    template: &'t Template,
    kind: ComponentKind,
    name: &str,
) -> Vec<Named<'t>> {
    components(template)
        .into_iter()
        .filter(|c| match (kind, c.entry.kind) {
            (ComponentKind::Terraform, ComponentKind::Terraform) => c.id == name,
            (ComponentKind::Terraform, _) | (_, ComponentKind::Terraform) => false,
            (_, ComponentKind::FluxSystem) => name
                .strip_prefix(c.id.as_str())
                .is_some_and(|r| r.starts_with('-')),
            _ => c.id == name,
        })
        .collect()
}

/// What the schema says of dotted `path` (following `properties`, local `$ref`s and
/// `additionalProperties`): the property as written, and what its `$ref` leads to
/// (the same node without one). A property's own `description` beside its `$ref`
/// is the more specific one.
pub struct SchemaEntry<'s> {
    pub written: &'s Node,
    pub resolved: &'s Node,
}

pub fn schema_node<'s>(schema: &'s Node, path: &[&str]) -> Option<SchemaEntry<'s>> {
    let mut written = schema;
    let mut node = resolve_ref(schema, schema, 0)?;
    for segment in path {
        let next = node
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| {
                node.get("additionalProperties")
                    .filter(|a| matches!(a.kind, NodeKind::Map(_)))
            })?;
        written = next;
        node = resolve_ref(schema, next, 0)?;
    }
    Some(SchemaEntry {
        written,
        resolved: node,
    })
}

fn resolve_ref<'s>(schema: &'s Node, node: &'s Node, depth: u32) -> Option<&'s Node> {
    let Some(reference) = node.get("$ref").and_then(Node::as_str) else {
        return Some(node);
    };
    if depth > 16 {
        return None;
    }
    let pointer = reference.strip_prefix("#/")?;
    let mut target = schema;
    for part in pointer.split('/') {
        target = target.get(&part.replace("~1", "/").replace("~0", "~"))?;
    }
    resolve_ref(schema, target, depth + 1)
}

/// description, type, default and enum of a schema entry, as Markdown lines.
pub fn schema_summary(entry: &SchemaEntry<'_>) -> Vec<String> {
    let mut lines = Vec::new();
    let field = |key: &str| entry.written.get(key).or_else(|| entry.resolved.get(key));
    if let Some(d) = field("description").and_then(Node::as_str) {
        lines.push(d.trim().to_string());
    }
    let scalar = |key: &str| -> Option<String> {
        Some(crate::value::json::compact(&field(key)?.to_value()))
    };
    if let Some(t) = scalar("type") {
        lines.push(format!("type: `{}`", t.trim_matches('"')));
    }
    if let Some(d) = scalar("default") {
        lines.push(format!("default: `{d}`"));
    }
    if let Some(e) = scalar("enum") {
        lines.push(format!("one of: `{e}`"));
    }
    lines
}
