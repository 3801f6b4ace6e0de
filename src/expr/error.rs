//! Errors of the expression engine. Each carries the byte span of the failing token or
//! sub-expression inside the text that was compiled, so a caller can point a caret at
//! the right column inside a YAML scalar.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Parse and type errors found before evaluation (Go's compile step).
    Compile,
    /// Failures while evaluating, including exceeded limits.
    Run,
    /// `terraform_output` at composition time: the caller keeps the text verbatim.
    Deferred,
}

#[derive(Clone, Debug)]
pub struct ExprError {
    pub kind: ErrorKind,
    pub message: String,
    /// Byte range inside the compiled text (for templates: inside the whole string).
    pub span: Range<usize>,
    /// An embedder's own error that surfaced through a scope lookup (for example a
    /// config cycle found while resolving a name); shown instead of `message` detail.
    pub cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ExprError {
    pub fn new(kind: ErrorKind, message: impl Into<String>, span: Range<usize>) -> Self {
        ExprError {
            kind,
            message: message.into(),
            span,
            cause: None,
        }
    }

    pub fn compile(message: impl Into<String>, span: Range<usize>) -> Self {
        Self::new(ErrorKind::Compile, message, span)
    }

    pub fn run(message: impl Into<String>, span: Range<usize>) -> Self {
        Self::new(ErrorKind::Run, message, span)
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExprError {}
