//! The expression engine: Windsor's dialect of expr-lang (v1.17.8). Knows nothing of
//! facets; the embedder supplies the scope and a [`host::Host`].

pub mod error;
pub mod host;
pub mod native;
pub mod scope;
pub mod template;
pub mod windsor;

pub use crate::value::{Map, Value};
pub use error::{ErrorKind, ExprError};
pub use scope::{Peek, Scope};

mod ast;
mod budget;
mod builtins;
mod compiler;
pub mod engine;
mod eval;
mod lexer;
pub mod limits;
mod ops;
mod parser;
pub mod program;
mod types;

pub use builtins::names as builtin_names;
pub use engine::{Engine, EngineConfig};
pub use program::Program;
