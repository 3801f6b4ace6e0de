//! Writing the composed blueprint: YAML (the default) and JSON, both deterministic.

pub(crate) mod json;
pub(crate) mod path;
pub(crate) mod provenance;
pub(crate) mod yaml;

#[cfg(test)]
mod roundtrip_tests;

pub use json::to_json;
pub use path::{format_path, PathSegment};
pub use yaml::{to_yaml, to_yaml_with_comments, to_yaml_with_leading_comments, CommentHook};

use std::fmt;

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
