//! Provenance: where every composed value came from. Each value in the composed
//! blueprint points at one [`Origin`]; `explain` and `--provenance` read them.

use crate::files::Span;
use crate::template::{FacetId, Strategy, TemplateId};
use std::sync::Arc;

/// Index into [`Origins`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct OriginId(pub u32);

/// Who contributed a value (not to be confused with a local *source*, an upstream
/// template: see the vocabulary in docs/semantics.md).
#[derive(Clone, Debug, PartialEq)]
pub enum Contributor {
    /// The template's `blueprint.yaml`.
    Base,
    /// A facet of one of the composition's templates.
    Facet(FacetId),
    /// Context values (schema defaults, windsor.yaml, values.yaml, --values, --set).
    Context,
    /// The context's own blueprint (`contexts/<ctx>/blueprint.yaml`), laid over the
    /// composed components (S12).
    Overlay,
    /// A file of the context's `patches/<name>/` directory (S13).
    ContextPatch,
    /// Computed by bpc itself (defaults such as a kustomization `path` from its name).
    Derived,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub contributor: Contributor,
    /// Where the value is written.
    pub span: Span,
    pub ordinal: i64,
    pub strategy: Strategy,
    /// The text of the `${…}` string that produced the value, when one did.
    pub expression: Option<Arc<str>>,
    /// The value stays a deferred `terraform_output` expression until apply time.
    pub deferred: bool,
}

/// The origin table of one composition.
///
/// Stored in fixed-size chunks shared copy-on-write: cloning a table copies one
/// pointer per chunk, not the origins, and a clone that adds origins copies only its
/// last, unfinished chunk. Incremental recomposition keeps the table of the last
/// composition and goes on from it, so the origin ids of what it replays stay valid
/// (see `compose::memo`).
#[derive(Clone, Debug)]
pub struct Origins {
    chunks: Vec<Arc<Vec<Entry>>>,
    len: usize,
    /// The template being composed: the one new origins belong to.
    composing: TemplateId,
}

/// An origin and the template whose composition added it.
#[derive(Clone, Debug)]
struct Entry {
    origin: Origin,
    template: TemplateId,
}

/// Origins per chunk: large enough that a table of a million origins is a few
/// hundred pointers, small enough that copying the last chunk is cheap.
const CHUNK: usize = 4096;

impl Default for Origins {
    fn default() -> Origins {
        Origins {
            chunks: Vec::new(),
            len: 0,
            composing: TemplateId::Composing,
        }
    }
}

impl Origins {
    /// An origin for what bpc computes itself (a default, a resolved dependency).
    pub fn add_derived(&mut self) -> OriginId {
        self.add(Origin {
            contributor: Contributor::Derived,
            span: Default::default(),
            ordinal: 0,
            strategy: Strategy::Merge,
            expression: None,
            deferred: false,
        })
    }

    /// Origins added from now on belong to template `id` (one template of a
    /// multi-source composition is composed at a time).
    pub fn begin(&mut self, id: TemplateId) {
        self.composing = id;
    }

    /// The template whose composition added `id`.
    pub fn template_of(&self, id: OriginId) -> TemplateId {
        self.entry(id).template
    }

    pub fn add(&mut self, origin: Origin) -> OriginId {
        let id = OriginId(self.len as u32);
        let entry = Entry {
            origin,
            template: self.composing,
        };
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(entry),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(entry);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
        id
    }

    pub fn get(&self, id: OriginId) -> &Origin {
        &self.entry(id).origin
    }

    fn entry(&self, id: OriginId) -> &Entry {
        let at = id.0 as usize;
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    /// Forgets every origin from `len` on (ids below it stay as they are).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.chunks.truncate(len.div_ceil(CHUNK));
        if let Some(last) = self.chunks.last_mut() {
            if len % CHUNK != 0 {
                Arc::make_mut(last).truncate(len % CHUNK);
            }
        }
        self.len = len;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
