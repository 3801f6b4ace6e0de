//! Go to definition: a name an expression reads → every config block that writes it
//! (same-name blocks of every facet; the schema property when no block does); a
//! `dependsOn` entry or `terraform_output('c', …)` → the component's entries; a
//! `file()`/`jsonnet()` path → the file; a config block's name → its other
//! contributions.

use super::cursor::{Cursor, Segment, Token};
use super::lookup;
use super::snapshot::Snapshot;
use crate::files::Span;
use crate::template::ComponentKind;
use lsp_types::{Location, Position, Range};
use std::path::{Component, Path, PathBuf};

pub fn definition(snapshot: &Snapshot, path: &Path, text: &str, offset: usize) -> Vec<Location> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let template = &session.template;
    let cursor = Cursor::new(text, offset);
    let spans: Vec<Span> = match cursor.token() {
        Some(Token::Path { path: name, .. }) => {
            let found: Vec<Span> = lookup::contributions(template, &name)
                .iter()
                .map(|c| c.span)
                .collect();
            if found.is_empty() {
                schema_span(snapshot, &name).into_iter().collect()
            } else {
                found
            }
        }
        Some(Token::StringArgument {
            function,
            index: 0,
            value,
            ..
        }) => match function.as_str() {
            "terraform_output" => {
                lookup::dependency_targets(template, ComponentKind::Terraform, &value)
                    .iter()
                    .map(|c| c.span)
                    .collect()
            }
            "file" | "jsonnet" => return file_target(path, &value).into_iter().collect(),
            _ => Vec::new(),
        },
        Some(_) => Vec::new(),
        None => structural(snapshot, &cursor),
    };
    spans
        .into_iter()
        .filter_map(|span| location(snapshot, span))
        .collect()
}

/// In the YAML outside expressions: dependsOn entries and config block names.
fn structural(snapshot: &Snapshot, cursor: &Cursor<'_>) -> Vec<Span> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let Some((value, _, _)) = &cursor.scalar else {
        return Vec::new();
    };
    if cursor.on_key {
        return Vec::new();
    }
    match cursor.path.as_slice() {
        [Segment::Key(list), Segment::Index(_), Segment::Key(field), Segment::Index(_)]
            if field == "dependsOn" =>
        {
            let kind = match list.as_str() {
                "terraform" => ComponentKind::Terraform,
                _ => ComponentKind::Kustomize,
            };
            lookup::dependency_targets(&session.template, kind, value)
                .iter()
                .map(|c| c.span)
                .collect()
        }
        [Segment::Key(config), Segment::Index(_), Segment::Key(name)]
            if config == "config" && name == "name" =>
        {
            session
                .template
                .facets
                .iter()
                .flat_map(|f| &f.config)
                .filter(|b| &b.name == value)
                .map(|b| b.name_span)
                .collect()
        }
        _ => Vec::new(),
    }
}

fn schema_span(snapshot: &Snapshot, name: &str) -> Option<Span> {
    let session = snapshot.session.as_ref().ok()?;
    let names = crate::check::names::names(&session.template);
    let segments: Vec<std::sync::Arc<str>> = name.split('.').map(std::sync::Arc::from).collect();
    match names.resolve(&segments) {
        crate::check::names::Resolution::Known(shape) => shape.schema_span,
        _ => None,
    }
}

/// `file('x')` in the document at `from`: `x` relative to the document's directory.
fn file_target(from: &Path, relative: &str) -> Option<Location> {
    let dir = from.parent()?;
    let mut target = PathBuf::new();
    for part in dir.join(relative).components() {
        match part {
            Component::ParentDir => {
                target.pop();
            }
            Component::CurDir => {}
            other => target.push(other),
        }
    }
    if !target.is_file() {
        return None;
    }
    Some(Location {
        uri: super::uri::from_path(&target)?,
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
    })
}

pub fn location(snapshot: &Snapshot, span: Span) -> Option<Location> {
    Some(Location {
        uri: super::uri::from_path(&snapshot.path_of(span.file)?)?,
        range: snapshot.range(span)?,
    })
}
