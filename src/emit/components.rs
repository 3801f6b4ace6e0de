//! The blueprint written with its components converted on the way
//! (a [`BlueprintAlone`], a plain `bpc compose`).
//!
//! Converting every component before writing would hold every value at once, and
//! making room by letting go of each component as it is converted costs about half
//! of the conversion's time (docs/performance.md). Here each thread converts a run of
//! components one at a time:
//! it measures the value for the output budget, writes it as a list item
//! (`emit::yaml::Items`) and lets go of it, so the next value reuses its memory. The
//! text is the one the whole value gives, and a blueprint over the budget fails with
//! the same message: that message is worked out from the whole value, converted
//! again. JSON goes the same way, except that when anything stops it (the budget, a
//! value JSON cannot hold) the whole value is written instead, so that the message
//! is the one the whole document's writer gives first.

use super::{budget, json, yaml, Format, Pieces};
use crate::compose::face::BlueprintAlone;
use crate::compose::model::blueprint::{component_value, COMPONENTS_PER_THREAD};
use crate::compose::model::component::{Component, Merged};
use crate::expr::Value;
use crate::files::Diagnostic;

/// The components' lists as text, and what the output budget counts for them.
struct Written<T> {
    /// Each non-empty list's items, by its key.
    lists: Vec<(&'static str, T)>,
    /// What [`budget::check_knowing`] adds for the components: each one's estimated
    /// size, plus one.
    size: usize,
}

/// The blueprint of `alone` in `format`, within
/// `budget` bytes; `what` names it in messages.
pub fn text(
    alone: &BlueprintAlone,
    format: Format,
    budget: usize,
    what: &str,
) -> Result<Pieces, Diagnostic> {
    match format {
        Format::Yaml => yaml_text(alone, budget, what),
        Format::Json => json_text(alone, budget, what),
    }
}

fn yaml_text(alone: &BlueprintAlone, budget: usize, what: &str) -> Result<Pieces, Diagnostic> {
    let written = written::<yaml::Items>(alone, budget);
    let blueprint = alone.blueprint();
    budget::check_apart(blueprint, budget, written.size, || alone.whole_blueprint())?;
    match yaml::to_yaml_within_apart(blueprint, budget, written.lists) {
        Some(text) => Ok(text),
        None => Err(budget::text_over(&alone.whole_blueprint(), budget, what)),
    }
}

/// As YAML, except that a value JSON cannot hold is an error too: when the items
/// do not all fit, or one cannot be written, the whole value is written the way a
/// composition that keeps everything writes it, and its writer says what is wrong
/// first.
fn json_text(alone: &BlueprintAlone, budget: usize, what: &str) -> Result<Pieces, Diagnostic> {
    let written = written::<json::Items>(alone, budget);
    let blueprint = alone.blueprint();
    let lists: Option<Vec<(&str, Pieces)>> = written
        .lists
        .into_iter()
        .map(|(key, items)| items.map(|items| (key, items)))
        .collect();
    if let (true, Some(lists)) = (budget::fits_apart(blueprint, budget, written.size), lists) {
        if let Ok(Some(text)) = json::to_json_within_apart(blueprint, budget, lists) {
            return Ok(text);
        }
    }
    let whole = alone.whole_blueprint();
    budget::check_knowing(&whole, budget, &budget::Sizes::default())?;
    super::text_within_budget(&whole, Format::Json, budget, what)
}

/// How each format writes a list's items one at a time ([`yaml::Items`],
/// [`json::Items`]).
trait ItemWriter: Sized {
    /// The items written, joined with the runs after them by [`ItemWriter::join`].
    type Text: Send;
    fn new(limit: usize) -> Self;
    /// Writes the list's item at `index`.
    fn push(&mut self, index: usize, item: &Value);
    /// Whether the rest need not be written.
    fn stopped(&self) -> bool;
    fn into_text(self) -> Self::Text;
    fn join(texts: Vec<Self::Text>) -> Self::Text;
}

impl ItemWriter for yaml::Items {
    type Text = Pieces;
    fn new(limit: usize) -> Self {
        yaml::Items::new(limit)
    }
    fn push(&mut self, _: usize, item: &Value) {
        yaml::Items::push(self, item);
    }
    fn stopped(&self) -> bool {
        self.over()
    }
    fn into_text(self) -> Pieces {
        self.into_pieces()
    }
    fn join(texts: Vec<Pieces>) -> Pieces {
        joined(texts)
    }
}

impl ItemWriter for json::Items {
    /// `None` if an item could not be written.
    type Text = Option<Pieces>;
    fn new(limit: usize) -> Self {
        json::Items::new(limit)
    }
    fn push(&mut self, index: usize, item: &Value) {
        json::Items::push(self, index, item);
    }
    fn stopped(&self) -> bool {
        json::Items::stopped(self)
    }
    fn into_text(self) -> Option<Pieces> {
        json::Items::into_text(self)
    }
    fn join(texts: Vec<Option<Pieces>>) -> Option<Pieces> {
        let texts: Option<Vec<Pieces>> = texts.into_iter().collect();
        texts.map(joined)
    }
}

/// The runs' pieces, one after another (moved, not copied).
fn joined(texts: Vec<Pieces>) -> Pieces {
    texts.into_iter().fold(Pieces::default(), |mut all, text| {
        all.append(text);
        all
    })
}

/// Every non-empty list of components of `alone` written as the items of its
/// key, long lists in runs on several threads.
fn written<W: ItemWriter>(alone: &BlueprintAlone, limit: usize) -> Written<W::Text> {
    let mut out = Written {
        lists: Vec::new(),
        size: 0,
    };
    for (key, merged) in alone.component_lists() {
        if merged.components.is_empty() {
            continue;
        }
        let (items, size) = list::<W>(merged, limit);
        out.lists.push((key, items));
        out.size = out.size.saturating_add(size);
    }
    out
}

/// The items of one list of components, and what the budget counts for them.
fn list<W: ItemWriter>(merged: &Merged, limit: usize) -> (W::Text, usize) {
    let components: Vec<&Component> = merged.components.values().collect();
    let threads = crate::parallel::cores().min(components.len() / COMPONENTS_PER_THREAD);
    if threads < 2 {
        let (text, size) = run::<W>(0, &components, limit);
        return (W::join(vec![text]), size);
    }
    let runs: Vec<(usize, &[&Component])> = crate::parallel::even_runs(components.len(), threads)
        .map(|run| (run.start, &components[run]))
        .collect();
    let (texts, sizes): (Vec<W::Text>, Vec<usize>) =
        crate::parallel::each(runs, |(start, run_of)| run::<W>(start, run_of, limit))
            .into_iter()
            .unzip();
    let size = sizes.into_iter().fold(0usize, usize::saturating_add);
    (W::join(texts), size)
}

/// A run of components from the list's item `start` on, each converted, measured,
/// written and let go of in turn. Once the writer stops the rest are measured but not
/// written: the text is then over the budget (or not to be had) anyway, and the
/// measure decides which message says so.
fn run<W: ItemWriter>(start: usize, components: &[&Component], limit: usize) -> (W::Text, usize) {
    let mut items = W::new(limit);
    let mut size = 0usize;
    for (i, component) in components.iter().enumerate() {
        let value = component_value(component);
        let measured = budget::size_within(&value, usize::MAX).unwrap_or(usize::MAX);
        size = size.saturating_add(measured).saturating_add(1);
        if !items.stopped() {
            items.push(start + i, &value);
        }
    }
    (items.into_text(), size)
}
