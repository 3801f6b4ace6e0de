//! What several stages of the composition use: what every expression is evaluated
//! with, the evaluation of `${…}` nodes and its host, the schema, and list
//! strategies. Nothing here calls a stage.

pub(crate) mod by_position;
pub(crate) mod evaluate;
pub(crate) mod expressions;
pub(crate) mod host;
pub(crate) mod list_strategy;
pub(crate) mod memory;
pub(crate) mod schema;
mod schema_instance;
#[cfg(test)]
mod windsor_functions_tests;
