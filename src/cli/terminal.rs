//! What the commands print besides their results: diagnostics on stderr, in colour when
//! `--color` and the stream allow. This file uses no other file of `cli/` but
//! [`super::args`].

use super::args::ColorChoice;
use crate::files::{Diagnostic, FileMap};
use std::io::IsTerminal;

/// The `--color` of this process (set once, by [`set_color`]).
static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Sets the `--color` of this process; the first call wins.
pub fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// Whether a stream gets colour, decided for the stream itself: `terminal` says
/// whether it is one.
fn color_for(terminal: bool) -> bool {
    match COLOR.get().copied().unwrap_or_default() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Whether what goes to stdout (reports, findings) gets colour.
pub fn color_stdout() -> bool {
    color_for(std::io::stdout().is_terminal())
}

/// Whether what goes to stderr (diagnostics) gets colour.
pub fn color_stderr() -> bool {
    color_for(std::io::stderr().is_terminal())
}

/// Prints diagnostics to stderr, errors and warnings alike, in order.
pub fn report(diagnostics: &[Diagnostic], sources: &FileMap) {
    let color = color_stderr();
    for d in diagnostics {
        eprintln!("{}", crate::files::render(d, sources, color));
    }
}
