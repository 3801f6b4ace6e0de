//! Source files, spans and diagnostics shared by every stage.

pub mod span;

pub use span::{FileId, Span};
