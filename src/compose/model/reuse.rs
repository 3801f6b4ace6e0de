//! How much of a composition an incremental run took from its memo.

/// How much of the last composition came from the memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Facets whose contributions (or, inactive, exclusions) were replayed.
    pub replayed: usize,
    /// Facets collected (again): changed, reading a changed name, reading files or
    /// the environment, or switched on or off.
    pub collected: usize,
    /// The composition ran cold (first run, an error, or inputs the memo cannot use).
    pub cold: bool,
}
