//! Stage 3, activate: which facets apply (S5).
//!
//! A facet's `when` sees the context values plus the config blocks of the facets that
//! are active, so activation is a fixed point: start with no facet active, evaluate
//! every `when` against that, repeat with the new set until it stops changing. A set
//! that keeps changing after (facets + 1) rounds is an error naming the facets that flip.

use super::config::{BlockIndex, Resolver};
use super::evaluate::eval_condition;
use super::host::Environment;
use super::Limits;
use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, Map};
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

/// The indices set in `flags`.
fn indices(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter_map(|(i, &on)| on.then_some(i))
        .collect()
}

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
    precedence: super::precedence::Precedence,
    limits: Limits,
) -> Result<Activated, Vec<Diagnostic>> {
    // Templates whose `when`s read no config block settle in the first round.
    let reads_config = template.facets.iter().any(|f| f.when.is_some())
        && template.facets.iter().any(|f| !f.config.is_empty());
    // Rounds are the fixed-point iteration of S5, but a round re-evaluates only the
    // `when`s that read a name whose blocks changed in the round before (every read is
    // recorded, through config values and block `when`s too); the others would give
    // the same answer. With the block index built once, a chain of facets each
    // switched on by the previous one costs about linear time instead of quadratic.
    let all: Vec<usize> = (0..template.facets.len()).collect();
    let index = Rc::new(BlockIndex::new(template, &all));
    let block_names: Vec<Vec<&str>> = template
        .facets
        .iter()
        .map(|f| f.config.iter().map(|b| b.name.as_str()).collect())
        .collect();
    // Shared with each round's resolver, changed in place between rounds.
    let mut active = Rc::new(vec![false; template.facets.len()]);
    // The switches of the last round (what keeps flipping if nothing settles).
    let mut last_changes: Vec<usize> = Vec::new();
    let mut outcome: Vec<Activation> = vec![Activation::Inactive; template.facets.len()];
    // Which facets' `when`s read a name (reads only grow: a stale entry costs one
    // needless evaluation, a missing one would be wrong).
    let mut readers: HashMap<String, Vec<usize>> = HashMap::new();
    let mut whole_scope_readers: Vec<usize> = Vec::new();
    // Names whose contributions changed since the last round; None: evaluate all.
    let mut changed: Option<HashSet<&str>> = None;
    let limit = template.facets.len() + 1;
    for _round in 0..limit {
        let mut resolver = Resolver::over(
            template,
            engine,
            context.clone(),
            environment,
            terraform,
            limits,
            Rc::clone(&index),
            Some(Rc::clone(&active)),
        );
        resolver.precedence = precedence;
        let mut changes: Vec<(usize, bool)> = Vec::new();
        let mut errors = Vec::new();
        // The first round evaluates everything; later ones what read a changed name.
        let stale: Vec<usize> = match &changed {
            None => (0..template.facets.len()).collect(),
            Some(names) => {
                let mut list: Vec<usize> = names
                    .iter()
                    .filter_map(|n| readers.get(*n))
                    .flatten()
                    .chain(&whole_scope_readers)
                    .copied()
                    .collect();
                list.sort_unstable();
                list.dedup();
                list
            }
        };
        for i in stale {
            let facet = &template.facets[i];
            let Some(cond) = &facet.when else {
                if !active[i] {
                    changes.push((i, true));
                }
                outcome[i] = Activation::Always;
                continue;
            };
            let host = resolver.host_for(i);
            let context = || format!("in the `when` of facet `{}`", facet.name);
            resolver.record();
            let result =
                eval_condition(engine, cond, &resolver, &host, &template.sources, &context);
            let read = resolver.recorded();
            if read.all && !whole_scope_readers.contains(&i) {
                whole_scope_readers.push(i);
            }
            for name in read.names {
                let list = readers.entry(name).or_default();
                if list.last() != Some(&i) && !list.contains(&i) {
                    list.push(i);
                }
            }
            let on = match result {
                Ok(on) => on,
                Err(d) => {
                    errors.push(d);
                    false
                }
            };
            outcome[i] = if on {
                Activation::Active
            } else {
                Activation::Inactive
            };
            if on != active[i] {
                changes.push((i, on));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        drop(resolver);
        let settled = changes.is_empty();
        let mut names = HashSet::new();
        let flags = Rc::make_mut(&mut active);
        for &(i, on) in &changes {
            flags[i] = on;
            names.extend(block_names[i].iter().copied());
        }
        if settled || !reads_config {
            return Ok(Activated {
                active: indices(&active),
                outcome,
            });
        }
        last_changes = changes.iter().map(|&(i, _)| i).collect();
        changed = Some(names);
    }
    // Did not settle: name the facets whose activation changed between the last rounds.
    let mut flipping = last_changes;
    flipping.sort_unstable();
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
