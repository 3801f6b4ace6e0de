//! Find references: every expression of the template that reads a name path (the
//! path itself, something below it, or the whole value above it), every `requires:`
//! entry naming it, and with the declaration the config blocks that write it.

use super::cursor::{Cursor, Segment, Token};
use super::definition::location;
use super::lookup;
use super::snapshot::Snapshot;
use crate::check::{reads, sites};
use crate::files::Span;
use lsp_types::Location;

pub fn references(
    snapshot: &Snapshot,
    text: &str,
    offset: usize,
    declaration: bool,
) -> Vec<Location> {
    let Ok(session) = &snapshot.session else {
        return Vec::new();
    };
    let cursor = Cursor::new(text, offset);
    let path = match cursor.token() {
        Some(Token::Path { path, .. }) => path,
        Some(_) => return Vec::new(),
        None => match (cursor.path.as_slice(), &cursor.scalar) {
            (
                [Segment::Key(config), Segment::Index(_), Segment::Key(name)],
                Some((value, _, _)),
            ) if config == "config" && name == "name" && !cursor.on_key => value.clone(),
            _ => return Vec::new(),
        },
    };
    let related = |read: &str| {
        read == path
            || read
                .strip_prefix(path.as_str())
                .is_some_and(|r| r.starts_with('.'))
            || path.strip_prefix(read).is_some_and(|r| r.starts_with('.'))
    };
    let template = &session.template;
    let found = sites::collect(template, &session.engine);
    let mut spans: Vec<Span> = Vec::new();
    if declaration {
        spans.extend(
            lookup::contributions(template, &path)
                .iter()
                .map(|c| c.span),
        );
    }
    for site in &found.expressions {
        let Ok(ast) = &site.parsed else {
            continue;
        };
        for read in reads::reads(ast).paths {
            let joined = read.segments.join(".");
            if related(&joined) {
                spans.push(sites::span_of(site, read.span.clone(), &template.files));
            }
        }
    }
    spans.extend(
        found
            .required
            .iter()
            .filter(|r| related(r.path))
            .map(|r| r.span),
    );
    spans.dedup();
    spans
        .into_iter()
        .filter_map(|s| location(snapshot, s))
        .collect()
}
