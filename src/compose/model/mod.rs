//! The composition's data: what goes in besides the template (value layers, budgets,
//! the environment) and what comes out (components with their histories, tracked
//! values and their origins, which facets applied). The lowest floor of
//! [`crate::compose`]: nothing here names a stage, and every module outside the
//! composition reads its results through these types. The modules other crates
//! name (the inputs of a composition and the output budget) are public; the rest
//! they reach through a [`crate::compose::face::Composition`]'s fields.

pub(crate) mod activation;
pub(crate) mod blueprint;
pub mod budget;
pub(crate) mod component;
pub(crate) mod duration;
pub(crate) mod fields;
pub mod for_explain;
pub mod inputs;
pub(crate) mod origin;
pub mod precedence;
pub(crate) mod reuse;
pub(crate) mod tier_names;
pub(crate) mod tracked;
