//! What every expression of a composition is evaluated with, borrowed from its
//! `Inputs` and shared by the stages that evaluate expressions.

use crate::compose::model::inputs::{Environment, Limits};
use crate::compose::model::precedence::Precedence;
use crate::compose::shared::memory::Memory;
use crate::expr::host::TerraformOutputs;
use crate::expr::Engine;

/// What activation, config and collection evaluate with (borrowed from the
/// composition's `Inputs`).
#[derive(Clone, Copy)]
pub struct Expressions<'a> {
    pub engine: &'a Engine,
    pub environment: &'a Environment,
    pub terraform: &'a TerraformOutputs,
    pub limits: Limits,
    /// Context values over facet config (Windsor), or the reverse.
    pub precedence: Precedence,
    /// The work budget of the composition, when the expressions belong to one.
    pub work: Option<&'a crate::expr::work::Work>,
    /// Whether the stages hand memory back after their large steps.
    pub memory: Memory,
}
