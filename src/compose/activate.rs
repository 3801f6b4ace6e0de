//! Stage 3, activate: which facets apply (S5).
//!
//! A facet's `when` sees the context values plus the config blocks of the facets that
//! are active, so activation is a fixed point: start with no facet active, evaluate
//! every `when` against that, repeat with the new set until it stops changing. A set
//! that keeps changing after (facets + 1) rounds is an error naming the facets that flip.

use crate::compose::config::{BlockIndex, Reads, Resolver};
use crate::compose::model::activation::{Activated, Activation};
use crate::compose::shared::evaluate::eval_condition;
use crate::compose::shared::expressions::Expressions;
use crate::expr::Map;
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The indices set in `flags`.
fn indices(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter_map(|(i, &on)| on.then_some(i))
        .collect()
}

/// Which facets' `when`s read a name, as recorded while they were evaluated. Reads
/// only grow: a stale entry costs one needless evaluation, a missing one would be
/// wrong.
#[derive(Default)]
struct Readers {
    by_name: HashMap<String, Vec<usize>>,
    /// Facets whose `when` read the whole scope (every name).
    whole_scope: Vec<usize>,
}

impl Readers {
    fn note(&mut self, facet: usize, read: Reads) {
        if read.all && !self.whole_scope.contains(&facet) {
            self.whole_scope.push(facet);
        }
        for name in read.names {
            let list = self.by_name.entry(name).or_default();
            if list.last() != Some(&facet) && !list.contains(&facet) {
                list.push(facet);
            }
        }
    }

    /// The facets whose `when` read one of `changed`, in processing order.
    fn of(&self, changed: &HashSet<&str>) -> Vec<usize> {
        let mut list: Vec<usize> = changed
            .iter()
            .filter_map(|n| self.by_name.get(*n))
            .flatten()
            .chain(&self.whole_scope)
            .copied()
            .collect();
        list.sort_unstable();
        list.dedup();
        list
    }
}

/// The facets active in `context` (S5): `when`s evaluated round after round until the
/// set of active facets stops changing.
pub fn activate(
    with: &Expressions<'_>,
    template: &Template,
    context: &Arc<Map>,
) -> Result<Activated, Vec<Diagnostic>> {
    let all: Vec<usize> = (0..template.facets.len()).collect();
    let index = Arc::new(BlockIndex::new(template, &all));
    activate_over(with, template, context, index).map(|(activated, _)| activated)
}

/// [`activate`] with a block index over every facet of `template`, built by the
/// caller (the incremental collection shares it, see `collect::memo`). Also says,
/// per facet, whether its `when` read a config block name of the index or the whole
/// scope in any round (a `when` that read neither does not depend on which facets are
/// active).
pub(crate) fn activate_over<'t>(
    with: &Expressions<'t>,
    template: &'t Template,
    context: &Arc<Map>,
    index: Arc<BlockIndex<'t>>,
) -> Result<(Activated, Vec<bool>), Vec<Diagnostic>> {
    // Templates whose `when`s read no config block settle in the first round.
    let reads_config = template.facets.iter().any(|f| f.when.is_some())
        && template.facets.iter().any(|f| !f.config.is_empty());
    // Rounds are the fixed-point iteration of S5, but a round re-evaluates only the
    // `when`s that read a name whose blocks changed in the round before (every read is
    // recorded, through config values and block `when`s too); the others would give
    // the same answer. With the block index built once, a chain of facets each
    // switched on by the previous one costs about linear time instead of quadratic.
    let all: Vec<usize> = (0..template.facets.len()).collect();
    let mut reads_blocks = vec![false; template.facets.len()];
    let block_names: Vec<Vec<&str>> = template
        .facets
        .iter()
        .map(|f| f.config.iter().map(|b| b.name.as_str()).collect())
        .collect();
    // Shared with each round's resolver, changed in place between rounds.
    let mut active = Arc::new(vec![false; template.facets.len()]);
    // The switches of the last round (what keeps flipping if nothing settles).
    let mut last_changes: Vec<usize> = Vec::new();
    let mut outcome: Vec<Activation> = vec![Activation::Inactive; template.facets.len()];
    let mut readers = Readers::default();
    // Names whose contributions changed since the last round; None: evaluate all.
    let mut changed: Option<HashSet<&str>> = None;
    let limit = template.facets.len() + 1;
    for _round in 0..limit {
        let resolver = Resolver::over(
            with,
            template,
            context.clone(),
            Arc::clone(&index),
            Some(Arc::clone(&active)),
        );
        let mut changes: Vec<(usize, bool)> = Vec::new();
        let mut errors = Vec::new();
        // The first round evaluates everything; later ones what read a changed name.
        let stale: Vec<usize> = match &changed {
            None => all.clone(),
            Some(names) => readers.of(names),
        };
        for i in stale {
            let Some((result, read)) = evaluate_when(with, &resolver, i) else {
                if !active[i] {
                    changes.push((i, true));
                }
                outcome[i] = Activation::Always;
                continue;
            };
            reads_blocks[i] |= read.all || read.names.iter().any(|n| index.contains(n));
            readers.note(i, read);
            let on = result.unwrap_or_else(|d| {
                errors.push(d);
                false
            });
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
        let flags = Arc::make_mut(&mut active);
        for &(i, on) in &changes {
            flags[i] = on;
            names.extend(block_names[i].iter().copied());
        }
        if settled || !reads_config {
            let activated = Activated {
                active: indices(&active),
                outcome,
            };
            return hollow_check(template, &activated).map(|()| (activated, reads_blocks));
        }
        last_changes = changes.iter().map(|&(i, _)| i).collect();
        changed = Some(names);
    }
    Err(vec![unsettled(template, last_changes, limit)])
}

/// A facet kept hollow at load must not be active (`template::prune` decides that
/// only where no round can switch it on): were one ever, its components would be
/// missing from the blueprint without a word, so this is an error instead.
fn hollow_check(template: &Template, activated: &Activated) -> Result<(), Vec<Diagnostic>> {
    if !template.has_hollow_facets {
        return Ok(());
    }
    let Some(&i) = activated
        .active
        .iter()
        .find(|&&i| template.facets[i].hollow)
    else {
        return Ok(());
    };
    let facet = &template.facets[i];
    Err(vec![Diagnostic::error(format!(
        "internal error: facet `{}` ({}) was left out at load as inactive, but it is active",
        facet.name, facet.path
    ))
    .with_help(
        "compose with --provenance, which loads every facet in full, and please report this",
    )])
}

/// Facet `i`'s `when` evaluated by `resolver`, with what it read; `None` for a facet
/// without one.
fn evaluate_when(
    with: &Expressions<'_>,
    resolver: &Resolver<'_>,
    i: usize,
) -> Option<(Result<bool, Diagnostic>, Reads)> {
    let template = resolver.template;
    let facet = &template.facets[i];
    let cond = facet.when.as_ref()?;
    let host = resolver.host_for(i);
    let context = || format!("in the `when` of facet `{}`", facet.name);
    resolver.record();
    let result = eval_condition(
        with.engine,
        cond,
        resolver,
        &host,
        &template.files,
        &context,
    );
    Some((result, resolver.recorded()))
}

/// What facet `i`'s `when` gives in the first round of activation (no facet
/// active yet: `resolver` is over an index of every facet with none marked active),
/// and whether it read a config block name or the whole scope.
pub(crate) fn first_round(
    with: &Expressions<'_>,
    resolver: &Resolver<'_>,
    i: usize,
) -> Result<(Activation, bool), Diagnostic> {
    let Some((result, read)) = evaluate_when(with, resolver, i) else {
        return Ok((Activation::Always, false));
    };
    let on = result?;
    let reads_blocks = read.all || read.names.iter().any(|n| resolver.has_block_name(n));
    let outcome = if on {
        Activation::Active
    } else {
        Activation::Inactive
    };
    Ok((outcome, reads_blocks))
}

/// Activation did not settle: the error names the facets whose activation changed
/// between the last rounds.
fn unsettled(template: &Template, mut flipping: Vec<usize>, limit: usize) -> Diagnostic {
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
    let verb = if names.len() == 1 { "keeps" } else { "keep" };
    let mut d = Diagnostic::error(format!(
        "facet activation does not settle after {limit} rounds: {} {verb} switching on and off",
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
    d
}

/// Which facets apply, and when activation gives up.
#[cfg(test)]
mod tests {
    use super::Activation;
    use crate::compose::fixture::{facet, messages, Fixture};

    #[test]
    fn a_facet_without_when_always_applies_and_a_false_when_leaves_one_out() {
        let fx = Fixture::new(&[
            ("facets/a.yaml", &facet("a", "")),
            ("facets/b.yaml", &facet("b", "when: provider == 'aws'\n")),
        ])
        .values("values.yaml", "provider: gcp\n");
        let (_, activated) = fx.activated();
        assert_eq!(activated.active, vec![0]);
        assert_eq!(
            activated.outcome,
            vec![Activation::Always, Activation::Inactive]
        );
    }

    #[test]
    fn a_facet_switched_on_by_another_facets_config_is_active() {
        // `b` reads a block only `a` writes, and `a` applies only once `c` has said so:
        // rounds continue until the set stops changing (S5).
        let fx = Fixture::new(&[
            (
                "facets/a.yaml",
                &facet(
                    "a",
                    "when: stage.ready\nconfig:\n  - name: feature\n    value: {on: true}\n",
                ),
            ),
            ("facets/b.yaml", &facet("b", "when: feature?.on ?? false\n")),
            (
                "facets/c.yaml",
                &facet("c", "config:\n  - name: stage\n    value: {ready: true}\n"),
            ),
        ]);
        let (_, activated) = fx.activated();
        assert_eq!(activated.active, vec![0, 1, 2]);
    }

    /// The error activating `fx`'s template gives.
    #[track_caller]
    fn activation_error(fx: &Fixture) -> String {
        let context = fx.context();
        let errors = super::activate(&fx.with(), &fx.template, &context)
            .err()
            .expect("activation fails");
        messages(&errors)
    }

    #[test]
    fn an_active_facet_left_hollow_at_load_is_an_error_not_a_missing_component() {
        let mut fx = Fixture::new(&[("facets/a.yaml", &facet("a", "when: provider == 'aws'\n"))])
            .values("values.yaml", "provider: aws\n");
        std::sync::Arc::make_mut(&mut fx.template.facets[0]).hollow = true;
        fx.template.has_hollow_facets = true;
        assert_eq!(
            activation_error(&fx),
            "internal error: facet `a` (facets/a.yaml) was left out at load as inactive, but it \
             is active"
        );
    }

    #[test]
    fn a_facet_whose_when_undoes_itself_is_an_error_naming_it() {
        // Active while `flag` is unset, and setting it when active.
        let fx = Fixture::new(&[(
            "facets/flip.yaml",
            &facet(
                "flip",
                "when: flag == nil\nconfig:\n  - name: flag\n    value: true\n",
            ),
        )]);
        assert_eq!(
            activation_error(&fx),
            "facet activation does not settle after 2 rounds: `flip` (facets/flip.yaml) keeps \
             switching on and off"
        );
    }
}
