//! `unknown-reference` and `unknown-function`: every path an expression reads (also
//! under `?.` and `??`, where a typo silently reads nothing) and every path `requires:`
//! names must exist in the schema, a config block, the built-ins; every function called
//! must exist.

use super::finding::{Finding, FindingId};
use super::names::{Resolution, Shape};
use super::reads::Reads;
use super::sites::{span_of, RequiredPath, Site};
use crate::expr::Engine;
use crate::files::{FileMap, Span};
use std::collections::HashMap;
use std::sync::Arc;

/// The did-you-mean of each unknown name met so far (by the path up to and including
/// it): a template repeats its typos, and comparing a name with every sibling each time
/// was most of the check's time on large templates.
#[derive(Default)]
pub struct Suggestions(HashMap<Vec<Arc<str>>, Option<Arc<str>>>);

pub fn check_paths(
    site: &Site<'_>,
    reads: &Reads,
    names: &Shape,
    files: &FileMap,
    suggestions: &mut Suggestions,
    out: &mut Vec<Finding>,
) {
    for read in &reads.paths {
        if let Some(finding) = unknown_path(
            names,
            &read.segments,
            span_of(site, read.span.clone(), files),
            suggestions,
        ) {
            out.push(finding);
        }
    }
}

pub fn check_required(
    required: &RequiredPath<'_>,
    names: &Shape,
    suggestions: &mut Suggestions,
    out: &mut Vec<Finding>,
) {
    let segments: Vec<Arc<str>> = required.path.split('.').map(Arc::from).collect();
    out.extend(unknown_path(names, &segments, required.span, suggestions));
}

fn unknown_path(
    names: &Shape,
    segments: &[Arc<str>],
    span: Span,
    suggestions: &mut Suggestions,
) -> Option<Finding> {
    let Resolution::Unknown { at, parent } = names.resolve(segments) else {
        return None;
    };
    let path = segments.join(".");
    let missing = &segments[at];
    let message = if at == 0 {
        format!("`{path}` reads `{missing}`, which is no schema property, config block or built-in")
    } else {
        format!(
            "`{path}` reads `{missing}`, which `{}` does not have",
            segments[..at].join(".")
        )
    };
    let suggested = suggestions
        .0
        .entry(segments[..=at].to_vec())
        .or_insert_with(|| crate::template::keys::suggest(missing, &parent.names()).map(Arc::from))
        .clone();
    let help = suggested.map(|s| {
        let mut fixed: Vec<&str> = segments.iter().map(|s| &**s).collect();
        fixed[at] = &s;
        format!("did you mean `{}`?", fixed.join("."))
    });
    Some(Finding::at(FindingId::UnknownReference, span, message, "unknown name").with_help(help))
}

pub fn check_calls(
    site: &Site<'_>,
    reads: &Reads,
    engine: &Engine,
    files: &FileMap,
    out: &mut Vec<Finding>,
) {
    for (name, range) in &reads.calls {
        if engine.is_function(name) {
            continue;
        }
        let known: Vec<&str> = crate::expr::builtin_names()
            .chain(crate::expr::windsor::functions().iter().map(|f| f.name))
            .collect();
        let help =
            crate::template::keys::suggest(name, &known).map(|s| format!("did you mean `{s}`?"));
        out.push(
            Finding::at(
                FindingId::UnknownFunction,
                span_of(site, range.clone(), files),
                format!("`{name}` is not a function"),
                "unknown function",
            )
            .with_help(help),
        );
    }
}
