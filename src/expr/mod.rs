//! The expression engine: Windsor's dialect of expr-lang (v1.17.8). Knows nothing of
//! facets; the embedder supplies the scope and a [`host::Host`].

pub(crate) mod error;
pub mod host;
pub(crate) mod native;
pub(crate) mod scope;
pub mod template;
pub(crate) mod windsor;

pub use crate::value::{Map, Value};
pub use error::{ErrorKind, ExprError};
pub use scope::{Peek, Scope};

pub(crate) mod ast;
mod budget;
mod builtins;
mod compiler;
pub(crate) mod engine;
mod eval;
mod lexer;
pub(crate) mod limits;
pub(crate) mod ops;
mod parser;
pub(crate) mod program;
mod reentry;
mod types;
pub(crate) mod work;

pub use builtins::names as builtin_names;
pub use engine::{Engine, EngineConfig};
pub use program::Program;
