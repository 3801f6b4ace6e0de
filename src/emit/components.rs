//! The blueprint written with its components converted on the way
//! (`Composition::components_apart`, a plain `bpc compose`).
//!
//! Converted all at once before the text was written, every component's value was
//! held at the same time, and making room for them by letting go of each component
//! as it was converted cost half of the conversion's time (docs/performance.md,
//! seventeenth round). Here each thread converts a run of components one at a time:
//! it measures the value for the output budget, writes it as a list item
//! (`emit::yaml::Items`) and lets go of it, so the next value reuses its memory. The
//! text is the one the whole value gives, and a blueprint over the budget fails with
//! the same message: that message is worked out from the whole value, converted
//! again. JSON is written from the whole value.

use super::yaml::{self, Items};
use super::{budget, Format, Pieces};
use crate::compose::merge::{Component, Merged};
use crate::compose::shared::blueprint::{component_value, COMPONENTS_PER_THREAD};
use crate::compose::Composition;
use crate::files::Diagnostic;

/// The components' lists as text, and what the output budget counts for them.
struct Written {
    /// Each non-empty list's items, by its key.
    lists: Vec<(&'static str, Pieces)>,
    /// What [`budget::check_knowing`] adds for the components: each one's estimated
    /// size, plus one.
    size: usize,
}

/// The blueprint of `composition` (whose components are apart) in `format`, within
/// `budget` bytes; `what` names it in messages.
pub fn text(
    composition: &Composition,
    format: Format,
    budget: usize,
    what: &str,
) -> Result<Pieces, Diagnostic> {
    if format == Format::Json {
        let whole = composition.whole_blueprint();
        budget::check_knowing(&whole, budget, &budget::Sizes::default())?;
        return super::text_within_budget(&whole, format, budget, what);
    }
    let written = written(composition, budget);
    let blueprint = &composition.blueprint;
    budget::check_apart(blueprint, budget, written.size, || {
        composition.whole_blueprint()
    })?;
    match yaml::to_yaml_within_apart(blueprint, budget, written.lists) {
        Some(text) => Ok(text),
        None => Err(budget::text_over(
            &composition.whole_blueprint(),
            budget,
            what,
        )),
    }
}

/// Every non-empty list of components of `composition` written as the items of its
/// key, long lists in runs on several threads.
fn written(composition: &Composition, limit: usize) -> Written {
    let mut out = Written {
        lists: Vec::new(),
        size: 0,
    };
    for (key, merged) in composition.component_lists() {
        if merged.components.is_empty() {
            continue;
        }
        let (items, size) = list(merged, limit);
        out.lists.push((key, items));
        out.size = out.size.saturating_add(size);
    }
    out
}

/// The items of one list of components, and what the budget counts for them.
fn list(merged: &Merged, limit: usize) -> (Pieces, usize) {
    let components: Vec<&Component> = merged.components.values().collect();
    let threads = crate::parallel::cores().min(components.len() / COMPONENTS_PER_THREAD);
    if threads < 2 {
        return run(&components, limit);
    }
    let runs: Vec<&[&Component]> = (0..threads)
        .map(|k| &components[components.len() * k / threads..components.len() * (k + 1) / threads])
        .collect();
    let mut items = Pieces::default();
    let mut size = 0usize;
    for (text, measured) in crate::parallel::each(runs, |run_of| run(run_of, limit)) {
        items.append(text);
        size = size.saturating_add(measured);
    }
    (items, size)
}

/// A run of components, each converted, measured, written and let go of in turn.
/// Past `limit` the rest are measured but not written: the text is then over the
/// budget anyway, and the measure decides which message says so.
fn run(components: &[&Component], limit: usize) -> (Pieces, usize) {
    let mut items = Items::new(limit);
    let mut size = 0usize;
    for component in components {
        let value = component_value(component);
        let measured = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
        size = size.saturating_add(measured).saturating_add(1);
        if !items.over() {
            items.push(&value);
        }
    }
    (items.into_pieces(), size)
}
