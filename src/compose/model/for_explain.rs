//! What a composition keeps only so that `explain` can show it.

/// Whether a composition keeps what only `explain` reads:
///
/// * the text of the `${…}` behind each value, in the origin table (16 bytes an
///   origin, over half a million origins at 10 000 facets);
/// * what each contribution said, in the history of the component it went into
///   (without it, a contribution that a later one merged into or replaced is let go
///   of once merged: at 10 000 facets, more than half of them).
///
/// A composition whose blueprint is written once and forgotten does without both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ForExplain {
    #[default]
    Kept,
    Dropped,
}
