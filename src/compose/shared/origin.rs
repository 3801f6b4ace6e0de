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
    /// Set by bpc itself, by the rule named.
    Derived(Rule),
}

/// Why bpc set a value itself: what `explain` and `--provenance` say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// A Flux Kustomization without a `path` gets its name.
    PathFromName,
    /// A flux system without a `source` gets the composing template's.
    SystemSource,
    /// With CRDs in the blueprint, what depends on nothing depends on the CRDs layer.
    CrdsFirst,
    /// A `globalDependency: true` system comes before every kustomization outside
    /// its own dependencies.
    GlobalDependency,
    /// A local source's or published blueprint's component without a `source` gets
    /// that source's name.
    SourceName,
}

impl Rule {
    /// The rule in a sentence.
    pub fn says(self) -> &'static str {
        match self {
            Rule::PathFromName => "a Flux Kustomization's `path` defaults to its name (S9)",
            Rule::SystemSource => {
                "a flux system's `source` defaults to the template's own source (S10)"
            }
            Rule::CrdsFirst => {
                "the blueprint has CRDs: a kustomization that depends on nothing else \
                 depends on the CRDs layer (S10)"
            }
            Rule::GlobalDependency => {
                "a flux system with `globalDependency: true` comes before every \
                 kustomization it does not depend on itself (S10)"
            }
            Rule::SourceName => {
                "a component of a source, without a `source` of its own, gets the \
                 source's name (S9, S14)"
            }
        }
    }
}

// A composition of 10 000 facets holds over half a million: keep them from growing
// unnoticed.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Origin>() == 56);

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
    chunks: Vec<Arc<Vec<Origin>>>,
    len: usize,
    /// The template whose composition added each origin, as runs: the first id of
    /// each run and its template, ascending (templates are composed one after
    /// another, so there are a few runs for a million origins, not 16 bytes each).
    templates: Vec<(u32, TemplateId)>,
    /// The template being composed: the one new origins belong to.
    composing: TemplateId,
}

/// Origins per chunk: large enough that a table of a million origins is a few
/// hundred pointers, small enough that copying the last chunk is cheap.
const CHUNK: usize = 4096;

impl Default for Origins {
    fn default() -> Origins {
        Origins {
            chunks: Vec::new(),
            len: 0,
            templates: Vec::new(),
            composing: TemplateId::Composing,
        }
    }
}

impl Origins {
    /// An origin for what bpc sets itself by `rule` (a default, a dependency).
    pub fn add_derived(&mut self, rule: Rule) -> OriginId {
        self.add(Origin {
            contributor: Contributor::Derived(rule),
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
        assert!((id.0 as usize) < self.len, "origin {} out of range", id.0);
        let run = self.templates.partition_point(|&(first, _)| first <= id.0);
        self.templates[run - 1].1
    }

    pub fn add(&mut self, origin: Origin) -> OriginId {
        let id = OriginId(self.len as u32);
        if self.templates.last().map(|&(_, t)| t) != Some(self.composing) {
            self.templates.push((id.0, self.composing));
        }
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(origin),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(origin);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
        id
    }

    /// Moves the origins of `other` to the end of this table, as origins of the
    /// template being composed: what was `OriginId(k)` there is `OriginId(at + k)`
    /// here, `at` (returned) being this table's length before.
    pub fn append(&mut self, other: Origins) -> u32 {
        let at = self.len as u32;
        for chunk in other.chunks {
            let chunk = Arc::try_unwrap(chunk).unwrap_or_else(|shared| (*shared).clone());
            for origin in chunk {
                self.add(origin);
            }
        }
        at
    }

    pub fn get(&self, id: OriginId) -> &Origin {
        let at = id.0 as usize;
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(ordinal: i64) -> Origin {
        Origin {
            contributor: Contributor::Context,
            span: Span::default(),
            ordinal,
            strategy: Strategy::Merge,
            expression: None,
            deferred: false,
        }
    }

    #[test]
    fn templates_across_chunks_and_clones_that_go_on_apart() {
        let mut origins = Origins::default();
        let total = 2 * CHUNK + 3;
        let upstream = CHUNK - 1..CHUNK + 5;
        for i in 0..total {
            if i == upstream.start {
                origins.begin(TemplateId::Upstream(0));
            }
            if i == upstream.end {
                origins.begin(TemplateId::Composing);
            }
            assert_eq!(origins.add(origin(i as i64)).0 as usize, i);
        }
        let want = |i: usize| {
            if upstream.contains(&i) {
                TemplateId::Upstream(0)
            } else {
                TemplateId::Composing
            }
        };
        let copy = origins.clone();
        for i in 0..total {
            let id = OriginId(i as u32);
            assert_eq!(origins.get(id).ordinal, i as i64);
            assert_eq!(origins.template_of(id), want(i), "origin {i}");
        }
        // A clone goes on on its own (copy-on-write): what one adds, the other does
        // not see, though both give the next origin the same id.
        let mut copy = copy;
        copy.begin(TemplateId::Upstream(1));
        let next = origins.add(origin(-1));
        let other = copy.add(origin(-2));
        assert_eq!(next, other);
        assert_eq!((origins.len(), copy.len()), (total + 1, total + 1));
        assert_eq!(origins.get(next).ordinal, -1);
        assert_eq!(copy.get(next).ordinal, -2);
        assert_eq!(origins.template_of(next), TemplateId::Composing);
        assert_eq!(copy.template_of(next), TemplateId::Upstream(1));
        assert_eq!(copy.get(OriginId(0)).ordinal, 0);
    }
}
