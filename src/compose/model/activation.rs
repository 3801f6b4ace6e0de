//! Which facets of a template apply in a context (S5).

/// The outcome of one facet's `when` in the settled round.
#[derive(Clone, Debug, PartialEq)]
pub enum Activation {
    /// No `when`: always active.
    Always,
    Active,
    Inactive,
}

pub struct Activated {
    /// Indices (processing order) of active facets.
    pub active: Vec<usize>,
    /// Per facet, what its `when` gave.
    pub outcome: Vec<Activation>,
}
