//! The one error type of the YAML loader: a message, the span it is about and, for
//! errors that involve two places (a duplicate key), the other place.

use crate::files::{Diagnostic, Span};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub span: Span,
    pub message: String,
    /// A second position that explains the error, with its own short label
    /// (e.g. where a duplicate key was first defined).
    pub related: Option<(Span, String)>,
    /// A suggestion for the author, when the mistake is a common one.
    pub help: Option<String>,
}

impl YamlError {
    pub fn new(span: Span, message: impl Into<String>) -> YamlError {
        YamlError {
            span,
            message: message.into(),
            related: None,
            help: None,
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
        if let Some(help) = err.help {
            diagnostic = diagnostic.with_help(help);
        }
        diagnostic
    }
}

/// Adds a hint when the error is on a line holding an unquoted `${…}`: YAML reads
/// `: `, ` #`, `{` and `[` inside a plain scalar as structure, the commonest way a facet
/// expression breaks its file — so the hint takes the place of a more general one.
pub(crate) fn hint_unquoted_expression(mut err: YamlError, text: &str) -> YamlError {
    let at = (err.span.start as usize).min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    // An expression that opens a plain scalar: `${` right after `key: ` or `- `.
    let unquoted = line.find("${").is_some_and(|i| {
        line[..i].ends_with(": ") || line[..i].trim_start() == "-" || line[..i].ends_with("- ")
    });
    if unquoted {
        err.help = Some(
            "quote a value that holds an expression (`key: \"${…}\"` or `key: '${…}'`): \
             unquoted, YAML reads `: `, ` #`, `{` and `[` inside it as structure"
                .to_string(),
        );
    }
    err
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for YamlError {}
