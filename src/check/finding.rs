//! What `bpc check` reports: a finding has an id (stable, for silencing and scripts),
//! a severity and a diagnostic that points at the template.

use crate::files::{Diagnostic, Severity, Span};

/// Every kind of finding. The ids are the contract with template authors (they write
/// them in `# bpc:allow` comments), so they never change once published.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingId {
    UnknownReference,
    UnknownFunction,
    TypeMismatch,
    UnknownEnumValue,
    NeverActive,
    UnknownDependency,
    UnknownFluxSystem,
    UnusedConfigKey,
    UnreadSchemaProperty,
    InvalidExpression,
}

impl FindingId {
    pub const ALL: &'static [FindingId] = &[
        FindingId::UnknownReference,
        FindingId::UnknownFunction,
        FindingId::TypeMismatch,
        FindingId::UnknownEnumValue,
        FindingId::NeverActive,
        FindingId::UnknownDependency,
        FindingId::UnknownFluxSystem,
        FindingId::UnusedConfigKey,
        FindingId::UnreadSchemaProperty,
        FindingId::InvalidExpression,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FindingId::UnknownReference => "unknown-reference",
            FindingId::UnknownFunction => "unknown-function",
            FindingId::TypeMismatch => "type-mismatch",
            FindingId::UnknownEnumValue => "unknown-enum-value",
            FindingId::NeverActive => "never-active",
            FindingId::UnknownDependency => "unknown-dependency",
            FindingId::UnknownFluxSystem => "unknown-flux-system",
            FindingId::UnusedConfigKey => "unused-config-key",
            FindingId::UnreadSchemaProperty => "unread-schema-property",
            FindingId::InvalidExpression => "invalid-expression",
        }
    }

    pub fn parse(text: &str) -> Option<FindingId> {
        FindingId::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == text)
    }

    /// Mistakes that break a context are warnings; what is merely unused is a note
    /// (a schema property may be read by the Windsor CLI itself, not by expressions).
    pub fn severity(self) -> Severity {
        match self {
            FindingId::InvalidExpression => Severity::Error,
            FindingId::UnusedConfigKey | FindingId::UnreadSchemaProperty => Severity::Note,
            _ => Severity::Warning,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Finding {
    pub id: FindingId,
    pub diagnostic: Diagnostic,
}

impl Finding {
    /// A finding at `span`: the message says what is wrong, the label what is there.
    pub fn at(id: FindingId, span: Span, message: String, label: &str) -> Finding {
        let diagnostic = Diagnostic::new(id.severity(), format!("{message} [{}]", id.as_str()))
            .with_primary(span, label);
        Finding { id, diagnostic }
    }

    pub fn with_help(mut self, help: Option<String>) -> Finding {
        if let Some(help) = help {
            self.diagnostic = self.diagnostic.with_help(help);
        }
        self
    }

    pub fn span(&self) -> Option<Span> {
        self.diagnostic.primary.as_ref().map(|l| l.span)
    }
}
