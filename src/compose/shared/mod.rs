//! What several stages of the composition use: the inputs every expression is
//! evaluated with, the evaluation of `${…}` nodes and its host, composed values with
//! their origins, the field order, tier names, the schema, the blueprint's value form
//! and the output budget. Nothing here calls a stage.

pub(crate) mod blueprint;
pub mod budget;
pub(crate) mod by_position;
pub(crate) mod evaluate;
pub(crate) mod fields;
pub mod for_explain;
pub mod host;
pub(crate) mod inputs;
pub(crate) mod list_strategy;
pub(crate) mod origin;
pub mod precedence;
pub(crate) mod schema;
mod schema_instance;
pub(crate) mod tier_names;
pub(crate) mod tracked;
#[cfg(test)]
mod windsor_functions_tests;
