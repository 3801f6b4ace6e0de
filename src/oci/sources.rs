//! Which `oci://` sources a blueprint names, with the Windsor CLI's rules: an entry
//! needs a `name`; its `url` is pulled as written (a `ref:` is never appended); it is
//! merged when `install` is true or, for an `oci://` URL, when `install` is omitted.

use crate::files::Span;
use crate::yaml::{Node, NodeKind};

/// One `oci://` entry of a `sources:` list.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub url: String,
    /// Merged into the blueprint (`install` true or omitted), or only loaded.
    pub install: bool,
    pub index: usize,
    pub span: Span,
    pub url_span: Span,
}

/// The `oci://` entries of `blueprint`'s `sources:`, in list order. Entries without a
/// name are skipped, as the Windsor CLI skips them; entries named `template` mean the
/// local template and are skipped too.
pub fn entries(blueprint: &Node) -> Vec<Entry> {
    let Some(NodeKind::Seq(items)) = blueprint.get("sources").map(|n| &n.kind) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(url) = item.get("url") else { continue };
        let Some(text) = url.as_str().filter(|u| u.starts_with("oci://")) else {
            continue;
        };
        let name = item.get("name").and_then(Node::as_str).unwrap_or_default();
        if name.is_empty() || name == "template" {
            continue;
        }
        let install = match item.get("install").map(|n| &n.kind) {
            Some(NodeKind::Bool(b)) => *b,
            _ => true,
        };
        out.push(Entry {
            name: name.to_string(),
            url: text.to_string(),
            install,
            index,
            span: item.span,
            url_span: url.span,
        });
    }
    out
}
