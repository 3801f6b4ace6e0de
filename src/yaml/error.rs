//! The one error type of the YAML loader: a message, the span it is about and, for
//! errors that involve two places (a duplicate key), the other place.

use crate::source::{Diagnostic, Span};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub span: Span,
    pub message: String,
    /// A second position that explains the error, with its own short label
    /// (e.g. where a duplicate key was first defined).
    pub related: Option<(Span, String)>,
}

impl YamlError {
    pub fn new(span: Span, message: impl Into<String>) -> YamlError {
        YamlError {
            span,
            message: message.into(),
            related: None,
        }
    }

    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> YamlError {
        self.related = Some((span, label.into()));
        self
    }
}

impl From<YamlError> for Diagnostic {
    fn from(err: YamlError) -> Diagnostic {
        let mut diagnostic = Diagnostic::error(err.message).with_primary(err.span, "");
        if let Some((span, label)) = err.related {
            diagnostic = diagnostic.with_secondary(span, label);
        }
        diagnostic
    }
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for YamlError {}
