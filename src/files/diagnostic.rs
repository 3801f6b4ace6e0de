//! The one error/warning type of the whole tool. Stages build diagnostics with spans;
//! turning spans into `file:line:col` and drawing carets happens once, in
//! [`super::render`].

use super::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A span with a short text drawn next to its underline.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Where the problem is (`^^^` under it).
    pub primary: Option<Label>,
    /// Other places that explain it (`---` under them), in any file.
    pub secondary: Vec<Label>,
    /// What was being done when it happened, outermost first, e.g. "while evaluating facet
    /// `aws` (facets/provider-aws.yaml), terraform component `cluster`, input `name`".
    pub context: Option<String>,
    pub notes: Vec<String>,
    /// A suggestion such as "did you mean `strategy`?".
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            context: None,
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }

    pub fn note(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Note, message)
    }

    /// Sets the primary span; `label` may be empty.
    pub fn with_primary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: label.into(),
        });
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: label.into(),
        });
        self
    }

    /// Sets the context line, or prefixes an existing one with an outer layer.
    pub fn with_context(mut self, context: impl Into<String>) -> Diagnostic {
        let outer = context.into();
        self.context = Some(match self.context.take() {
            Some(inner) => format!("{outer}, {inner}"),
            None => outer,
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The message with its context, notes and help, as plain text (for matching an
    /// expected error text and for de-duplicating).
    pub fn full_text(&self) -> String {
        let mut out = self.message.clone();
        for part in self
            .context
            .iter()
            .chain(self.notes.iter())
            .chain(self.help.iter())
        {
            out.push('\n');
            out.push_str(part);
        }
        if let Some(label) = &self.primary {
            out.push('\n');
            out.push_str(&label.message);
        }
        out
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The `--strict` rule, one for every command that writes a result: a run that leaves
/// warnings (or, for `render`, deferred values) fails and writes nothing. `None` when
/// the run may go on.
pub fn strict_failure(strict: bool, warnings: usize, deferred: usize) -> Option<Diagnostic> {
    if !strict || warnings + deferred == 0 {
        return None;
    }
    let what = match deferred {
        0 => format!("{warnings} warning(s)"),
        _ => format!("{warnings} warning(s) and {deferred} deferred value(s)"),
    };
    Some(Diagnostic::error(format!(
        "{what} with --strict; nothing written"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileId;

    #[test]
    fn strict_fails_only_on_warnings_or_deferred_values() {
        assert!(strict_failure(false, 3, 1).is_none());
        assert!(strict_failure(true, 0, 0).is_none());
        let one = strict_failure(true, 2, 0).map(|d| d.message);
        assert_eq!(
            one.as_deref(),
            Some("2 warning(s) with --strict; nothing written")
        );
        let both = strict_failure(true, 0, 1).map(|d| d.message);
        assert_eq!(
            both.as_deref(),
            Some("0 warning(s) and 1 deferred value(s) with --strict; nothing written")
        );
    }

    #[test]
    fn builder_and_context_layers() {
        let span = Span::new(FileId(1), 2, 4);
        let d = Diagnostic::warning("unknown key `stratgy`")
            .with_primary(span, "unknown key")
            .with_context("input `x`")
            .with_context("while evaluating facet `aws`")
            .with_help("did you mean `strategy`?");
        assert!(!d.is_error());
        assert_eq!(
            d.context.as_deref(),
            Some("while evaluating facet `aws`, input `x`")
        );
        assert_eq!(d.primary.as_ref().map(|l| l.span), Some(span));
    }
}
