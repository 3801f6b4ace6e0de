//! Stage 3, activate: which facets apply (S5).
//!
//! A facet's `when` sees the context values plus the config blocks of the facets that
//! are active, so activation is a fixed point: start with no facet active, evaluate
//! every `when` against that, repeat with the new set until it stops changing. A set
//! that keeps changing after (facets + 1) rounds is an error naming the facets that flip.

use super::config::Resolver;
use super::evaluate::eval_condition;
use super::host::Environment;
use super::Limits;
use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, Map};
use crate::source::Diagnostic;
use crate::template::Template;
use std::sync::Arc;

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

pub fn activate(
    template: &Template,
    engine: &Engine,
    context: &Arc<Map>,
    environment: &Environment,
    terraform: &TerraformOutputs,
    limits: Limits,
) -> Result<Activated, Vec<Diagnostic>> {
    // Templates whose `when`s read no config block settle in the first round.
    let reads_config = template.facets.iter().any(|f| f.when.is_some())
        && template.facets.iter().any(|f| !f.config.is_empty());
    let mut active: Vec<usize> = Vec::new();
    let mut history: Vec<Vec<usize>> = Vec::new();
    let limit = template.facets.len() + 1;
    for _round in 0..limit {
        let resolver = Resolver::new(
            template,
            engine,
            context.clone(),
            environment,
            terraform,
            limits,
            &active,
        );
        let mut next = Vec::new();
        let mut outcome = Vec::with_capacity(template.facets.len());
        let mut errors = Vec::new();
        for (i, facet) in template.facets.iter().enumerate() {
            let Some(cond) = &facet.when else {
                next.push(i);
                outcome.push(Activation::Always);
                continue;
            };
            let host = resolver.host_for(i);
            let context = || format!("in the `when` of facet `{}`", facet.name);
            match eval_condition(engine, cond, &resolver, &host, &template.sources, &context) {
                Ok(true) => {
                    next.push(i);
                    outcome.push(Activation::Active);
                }
                Ok(false) => outcome.push(Activation::Inactive),
                Err(d) => {
                    errors.push(d);
                    outcome.push(Activation::Inactive);
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if next == active || !reads_config {
            return Ok(Activated {
                active: next,
                outcome,
            });
        }
        history.push(active);
        active = next;
    }
    // Did not settle: name the facets whose activation changed between the last rounds.
    let last = history.last().cloned().unwrap_or_default();
    let flipping: Vec<usize> = (0..template.facets.len())
        .filter(|i| last.contains(i) != active.contains(i))
        .collect();
    let names: Vec<String> = flipping
        .iter()
        .map(|&i| {
            format!(
                "`{}` ({})",
                template.facets[i].name, template.facets[i].path
            )
        })
        .collect();
    let mut d = Diagnostic::error(format!(
        "facet activation does not settle after {limit} rounds: {} keep switching on and off",
        names.join(", ")
    ))
    .with_help("a facet's `when` reads config that exists only while the facet is inactive (or the reverse)");
    for (n, &i) in flipping.iter().enumerate() {
        if let Some(cond) = &template.facets[i].when {
            d = if n == 0 {
                d.with_primary(cond.node.span, "this condition flips")
            } else {
                d.with_secondary(cond.node.span, "this one too")
            };
        }
    }
    Err(vec![d])
}
