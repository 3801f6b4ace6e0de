//! Source files, spans and diagnostics shared by every stage.

pub(crate) mod diagnostic;
pub(crate) mod exchange;
pub(crate) mod listing;
pub(crate) mod map;
pub(crate) mod out_path;
pub(crate) mod relative_path;
pub mod render;
mod source_text;
pub mod span;
pub(crate) mod tree;

pub use diagnostic::{strict_failure, Diagnostic, Label, Severity};
pub use map::{line_and_column, FileMap, Held, Location, SourceFile};
pub use render::{render, render_all};
pub use span::{FileId, Span};
pub use tree::{FileOverlay, FileTree, ResolvedDirs, TreeError, TreeErrorKind};
