//! Document symbols (a facet's outline: config blocks, terraform components,
//! kustomizations, flux systems; a test file's cases) and workspace symbols (the
//! same for every facet, filtered by the query).

use super::snapshot::Snapshot;
use crate::files::Span;
use crate::template::{ComponentKind, Facet};
use lsp_types::{DocumentSymbol, Location, SymbolInformation, SymbolKind};
use std::path::Path;

/// One named thing of a facet: name, what it is, its whole extent and its name's.
struct Item {
    name: String,
    detail: &'static str,
    kind: SymbolKind,
    span: Span,
    name_span: Span,
}

fn items(facet: &Facet) -> Vec<Item> {
    let mut out = Vec::new();
    for block in &facet.config {
        out.push(Item {
            name: block.name.clone(),
            detail: "config block",
            kind: SymbolKind::NAMESPACE,
            span: block.name_span.to(block.body.span),
            name_span: block.name_span,
        });
    }
    for entry in &facet.components {
        let field = |k: &str| entry.node.get(k).and_then(crate::yaml::Node::as_str);
        let Some(name) = crate::template::identity::component_id(field) else {
            continue;
        };
        let name_span = entry
            .node
            .get("name")
            .or_else(|| entry.node.get("path"))
            .map_or(entry.node.span, |n| n.span);
        let kind = match entry.kind {
            ComponentKind::Terraform => SymbolKind::PACKAGE,
            ComponentKind::Kustomize => SymbolKind::CLASS,
            ComponentKind::FluxSystem => SymbolKind::STRUCT,
        };
        out.push(Item {
            name,
            detail: entry.kind.noun(),
            kind,
            span: entry.node.span,
            name_span,
        });
    }
    out
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be set.
pub fn document(snapshot: &Snapshot, path: &Path) -> Vec<DocumentSymbol> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let sources = &snapshot.files;
    let symbol = |name: String, detail: &str, kind, span: Span, name_span: Span, children| {
        let range = snapshot.range(span)?;
        let selection = snapshot.range(name_span)?;
        Some(DocumentSymbol {
            name,
            detail: Some(detail.to_string()),
            kind,
            tags: None,
            deprecated: None,
            range: lsp_types::Range::new(
                range.start.min(selection.start),
                range.end.max(selection.end),
            ),
            selection_range: selection,
            children,
        })
    };
    if let Some(facet) = session
        .template
        .facets
        .iter()
        .find(|f| snapshot.path_of(f.file).as_deref() == Some(path))
    {
        let children: Vec<DocumentSymbol> = items(facet)
            .into_iter()
            .filter_map(|i| symbol(i.name, i.detail, i.kind, i.span, i.name_span, None))
            .collect();
        let whole = Span::new(
            facet.file,
            0,
            sources.text(facet.file).map_or(0, |t| t.len()),
        );
        return symbol(
            facet.name.clone(),
            "facet",
            SymbolKind::MODULE,
            whole,
            facet.name_span,
            Some(children),
        )
        .into_iter()
        .collect();
    }
    // A test file: its cases.
    let Some(dir) = session.template.tree.root_dir() else {
        return Vec::new();
    };
    let Some(tree_path) = path
        .strip_prefix(&dir)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
    else {
        return Vec::new();
    };
    match crate::testing::case::load(&session.template.tree, sources, &tree_path) {
        Ok((file, _)) => file
            .cases
            .iter()
            .filter_map(|c| {
                symbol(
                    c.name.clone(),
                    "test case",
                    SymbolKind::EVENT,
                    c.span,
                    c.span,
                    None,
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[allow(deprecated)] // `SymbolInformation::deprecated` must still be set.
pub fn workspace(snapshot: &Snapshot, query: &str) -> Vec<SymbolInformation> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for facet in &session.template.facets {
        let facet_item = Item {
            name: facet.name.clone(),
            detail: "facet",
            kind: SymbolKind::MODULE,
            span: facet.name_span,
            name_span: facet.name_span,
        };
        for item in std::iter::once(facet_item).chain(items(facet)) {
            if !item.name.to_lowercase().contains(&query) {
                continue;
            }
            let Some(location) = super::definition::location(snapshot, item.name_span) else {
                continue;
            };
            out.push(SymbolInformation {
                name: item.name,
                kind: item.kind,
                tags: None,
                deprecated: None,
                location: Location { ..location },
                container_name: Some(if item.detail == "facet" {
                    facet.path.clone()
                } else {
                    format!("{} of facet {}", item.detail, facet.name)
                }),
            });
        }
    }
    out
}
