//! The expression engine: Windsor's dialect of expr-lang (v1.17.8). Knows nothing of
//! facets; the embedder supplies the scope and a [`host::Host`].

pub mod host;
pub mod native;
pub mod value;

pub use value::{Map, Value};
