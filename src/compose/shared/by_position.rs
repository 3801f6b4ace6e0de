//! What a stage made of each component, remembered in list order.
//!
//! The stages after merging are functions of a component's kind and fields (and of
//! origins that keep their meaning). Fields are shared copy-on-write from merging on,
//! so a component an edit did not reach comes with the very fields (the same
//! allocation) it came with last time. Lists keep their order from one composition to
//! the next, so a component's entry is looked for at the same position first; only
//! where the lists moved is it looked up by the address of its fields.

use crate::compose::model::component::Component;
use crate::compose::model::fields::FieldMap;
use crate::template::ComponentKind;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Per component, in the order they were given, what a stage made of it.
pub struct ByPosition<T> {
    kept: Vec<Kept<T>>,
    /// Where the next list given starts in `kept` (several lists go through one).
    cursor: usize,
    /// The position of each entry by the address of its fields, built the first time
    /// a component is not where the last composition had it.
    by_fields: Option<FxHashMap<usize, usize>>,
}

impl<T> Default for ByPosition<T> {
    fn default() -> Self {
        ByPosition {
            kept: Vec::new(),
            cursor: 0,
            by_fields: None,
        }
    }
}

/// One component's entry, with the fields it was made from: holding them keeps their
/// address from being reused by other fields while the entry exists.
struct Kept<T> {
    id: Arc<str>,
    kind: ComponentKind,
    fields: Arc<FieldMap>,
    value: T,
}

impl<T> Kept<T> {
    fn is_of(&self, c: &Component) -> bool {
        self.kind == c.kind && Arc::ptr_eq(&self.fields, &c.fields)
    }
}

impl<T> ByPosition<T> {
    /// Starts the next list of `len` components: positions given to [`Self::find`]
    /// count from its start. Returns that start.
    pub fn start_list(&mut self, len: usize) -> usize {
        let start = self.cursor;
        self.cursor += len;
        start
    }

    /// What was kept for `c`, given at position `at` of the lists given so far.
    pub fn find(&mut self, at: usize, c: &Component) -> Option<&T> {
        match self.kept.get(at) {
            Some(kept) if kept.is_of(c) => return self.kept.get(at).map(|k| &k.value),
            // The same component with other fields: it changed.
            Some(kept) if kept.id == c.id => return None,
            _ => {}
        }
        let kept = &self.kept;
        let by_fields = self.by_fields.get_or_insert_with(|| {
            kept.iter()
                .enumerate()
                .map(|(i, k)| (Arc::as_ptr(&k.fields) as usize, i))
                .collect()
        });
        let i = *by_fields.get(&(Arc::as_ptr(&c.fields) as usize))?;
        self.kept.get(i).filter(|k| k.is_of(c)).map(|k| &k.value)
    }

    /// Keeps `value` for `c`, made of `fields` (the fields `c` came with).
    pub fn keep(&mut self, c: &Component, fields: Arc<FieldMap>, value: T) {
        self.kept.push(Kept {
            id: Arc::clone(&c.id),
            kind: c.kind,
            fields,
            value,
        });
    }

    pub fn reserve(&mut self, more: usize) {
        self.kept.reserve(more);
    }
}
