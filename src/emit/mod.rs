//! Writing the composed blueprint: YAML (the default) and JSON, both deterministic.

mod components;
pub(crate) mod json;
pub(crate) mod path;
pub(crate) mod pieces;
pub mod provenance;
pub(crate) mod values;
pub(crate) mod yaml;

#[cfg(test)]
mod roundtrip_tests;

pub use json::to_json;
pub use path::{format_path, PathSegment};
pub(crate) use pieces::Pieces;
pub use yaml::{to_yaml, to_yaml_with_comments, to_yaml_with_leading_comments, CommentHook};

use crate::compose::face::{BlueprintAlone, Composition};
use crate::compose::model::budget;
use crate::files::{Diagnostic, FileMap};
use crate::template::Template;
use std::fmt;

/// The text formats bpc writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Yaml,
    Json,
}

/// `value` as a document in `format`, ending in a newline, or `None` once the text
/// passes `limit` bytes (the writer stops there).
pub(crate) fn to_text_within(
    value: &crate::value::Value,
    format: Format,
    limit: usize,
) -> Result<Option<Pieces>, EmitError> {
    match format {
        Format::Yaml => Ok(yaml::to_yaml_within(value, limit)),
        Format::Json => Ok(json::to_json_within(value, limit)?.map(Pieces::from)),
    }
}

/// `value` as a document in `format` of at most `budget` bytes, or the error naming
/// `what` and where the budget was crossed ([`budget::text_over`]).
pub(crate) fn text_within_budget(
    value: &crate::value::Value,
    format: Format,
    budget: usize,
    what: &str,
) -> Result<Pieces, Diagnostic> {
    match to_text_within(value, format, budget) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(budget::text_over(value, budget, what)),
        Err(e) => Err(Diagnostic::error(e.to_string())),
    }
}

/// A composed blueprint as text, with or without `--provenance`; `output_bytes` bounds
/// it: the writer stops once past it (with provenance, whose comments are not
/// counted, the blueprint is measured before the text exists).
pub(crate) fn blueprint_text(
    template: &Template,
    composition: &Composition,
    files: &FileMap,
    output_bytes: usize,
    format: Format,
    provenance: bool,
) -> Result<Pieces, Vec<Diagnostic>> {
    let blueprint = &composition.blueprint;
    if !provenance {
        return text_within_budget(blueprint, format, output_bytes, WHAT).map_err(|d| vec![d]);
    }
    budget::check_text(blueprint, output_bytes, WHAT).map_err(|d| vec![d])?;
    let text = match format {
        Format::Yaml => Ok(provenance::yaml(template, composition, files)),
        Format::Json => provenance::json(template, composition, files).map(Pieces::from),
    };
    text.map_err(|e| vec![Diagnostic::error(e)])
}

/// The blueprint of a composition read for it alone, as text in `format`, its
/// components converted as they are written; `output_bytes` bounds it as
/// [`blueprint_text`]'s, with the same messages.
pub(crate) fn blueprint_alone_text(
    alone: &BlueprintAlone,
    output_bytes: usize,
    format: Format,
) -> Result<Pieces, Vec<Diagnostic>> {
    components::text(alone, format, output_bytes, WHAT).map_err(|d| vec![d])
}

/// How messages about the output budget name the blueprint.
const WHAT: &str = "the composed blueprint";

/// A value that cannot be written in the requested format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitError {
    /// Where in the document, e.g. `terraform[0].inputs.ratio`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for EmitError {}
