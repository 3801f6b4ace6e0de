//! What the rest of bpc uses of the composition besides its data ([`super::model`]):
//! what a composition is given ([`Inputs`], with the context's [`Values`], its
//! [`Schema`], its [`Overlay`] and [`ContextPatches`]), the three ways to run it
//! ([`Inputs::compose`], [`Inputs::compose_blueprint`], [`Inputs::recompose`] with a
//! [`Memo`]), what comes out ([`Composition`], [`BlueprintAlone`]), and the two steps a
//! session runs on its own: the load's test of facets certainly inactive
//! ([`inactive_at_load`], evaluated with [`Expressions`]) and an expression's message
//! ([`text_diagnostic`]). Every module outside `compose` imports from here or from the
//! model, never from a stage.

pub(crate) use super::inactive_at_load;
pub use super::overlay::context_patches::ContextPatches;
pub use super::overlay::Overlay;
pub use super::scope::Values;
pub use super::shared::evaluate::text_diagnostic;
pub use super::shared::expressions::Expressions;
pub use super::shared::schema::Schema;
pub use super::{BlueprintAlone, Composition, Inputs, Memo};
