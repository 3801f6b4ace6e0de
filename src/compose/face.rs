//! What the rest of bpc uses of the composition besides its data ([`super::model`]):
//! the composition itself, and the few steps a session runs on its own (the values a
//! context sees, an expression's message). Every module outside
//! `compose` imports from here or from the model, never from a stage.

pub use super::collect::memo::Reuse;
pub use super::inactive_at_load::test as inactive_at_load;
pub use super::overlay::context_patches::{read as read_context_patches, ContextPatches};
pub use super::overlay::Overlay;
pub use super::scope::Values;
pub use super::scope::{effective_values, for_template, schema_warnings};
pub use super::shared::evaluate::text_diagnostic;
pub use super::shared::expressions::Expressions;
pub use super::shared::schema::Schema;
pub(crate) use super::with_scope;
pub use super::{compose, compose_blueprint, compose_incremental};
pub use super::{BlueprintAlone, Composition, Inputs, Memo};
