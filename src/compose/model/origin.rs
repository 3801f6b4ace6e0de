//! Provenance: where every composed value came from. Each value in the composed
//! blueprint points at one [`Origin`]; `explain` and `--provenance` read them.

use crate::compose::model::for_explain::ForExplain;
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

/// An origin as the table keeps it: where its value is written, beside the index of
/// what it shares with the values around it (who contributed it, and how). Its
/// expression's text is kept apart, and only where it may be shown.
#[derive(Clone, Debug)]
struct Stored {
    span: Span,
    /// Index into [`Origins::whos`].
    who: u32,
}

/// What the origins of one contribution have in common: a facet's component gives
/// dozens of values one contributor, ordinal and strategy.
#[derive(Clone, Debug, PartialEq)]
struct Who {
    contributor: Contributor,
    ordinal: i64,
    strategy: Strategy,
    /// Deferred values are few: a run of them is a run of its own.
    deferred: bool,
}

// A composition of 10 000 facets holds over half a million origins (an `Origin` is
// 56 bytes): keep the stored form from growing unnoticed.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Stored>() == 16);

/// The origin table of one composition.
///
/// Stored in fixed-size chunks shared copy-on-write: cloning a table copies one
/// pointer per chunk, not the origins, and a clone that adds origins copies only its
/// last, unfinished chunk. Incremental recomposition keeps the table of the last
/// composition and goes on from it, so the origin ids of what it replays stay valid
/// (see `compose::memo`).
#[derive(Clone, Debug)]
pub struct Origins {
    stored: Chunked<Stored>,
    /// Each origin's expression text, in step with `stored`; `None` when the table
    /// drops them ([`ForExplain::Dropped`]).
    expressions: Option<Chunked<Option<Arc<str>>>>,
    /// What runs of consecutive origins share, each run once.
    whos: Chunked<Who>,
    /// The template whose composition added each origin, as runs: the first id of
    /// each run and its template, ascending (templates are composed one after
    /// another, so there are a few runs for a million origins, not 16 bytes each).
    templates: Vec<(u32, TemplateId)>,
    /// The template being composed: the one new origins belong to.
    composing: TemplateId,
}

/// Items per chunk: large enough that a table of a million origins is a few
/// hundred pointers, small enough that copying the last chunk is cheap.
const CHUNK: usize = 4096;

/// A list in chunks of [`CHUNK`] items, each shared copy-on-write.
#[derive(Clone, Debug)]
struct Chunked<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Chunked<T> {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> Chunked<T> {
    fn push(&mut self, item: T) -> usize {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(item),
            last => {
                // The first chunk grows as it fills (to `CHUNK` at most: capacities
                // double): most tables are small, one per claim of a parallel
                // collection, and a full first chunk each was 5 MB at 10 000 facets.
                let mut chunk = match last {
                    None => Vec::new(),
                    Some(_) => Vec::with_capacity(CHUNK),
                };
                chunk.push(item);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
        self.len - 1
    }

    fn get(&self, at: usize) -> &T {
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|c| c.last())
    }

    /// The items in order, taken from chunks nothing else shares, copied from others.
    fn into_items(self) -> impl Iterator<Item = T> {
        self.chunks
            .into_iter()
            .flat_map(|chunk| Arc::try_unwrap(chunk).unwrap_or_else(|shared| (*shared).clone()))
    }
}

impl Default for Origins {
    fn default() -> Origins {
        Origins::with(ForExplain::Kept)
    }
}

impl Origins {
    /// An empty table that keeps its expressions' texts or not.
    pub fn with(texts: ForExplain) -> Origins {
        Origins {
            stored: Chunked::default(),
            expressions: (texts == ForExplain::Kept).then(Chunked::default),
            whos: Chunked::default(),
            templates: Vec::new(),
            composing: TemplateId::Composing,
        }
    }
}

impl Origins {
    /// Whether this table keeps its expressions' texts.
    pub fn texts(&self) -> ForExplain {
        match self.expressions {
            Some(_) => ForExplain::Kept,
            None => ForExplain::Dropped,
        }
    }

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
        assert!((id.0 as usize) < self.len(), "origin {} out of range", id.0);
        let run = self.templates.partition_point(|&(first, _)| first <= id.0);
        self.templates[run - 1].1
    }

    pub fn add(&mut self, origin: Origin) -> OriginId {
        let id = OriginId(self.len() as u32);
        if self.templates.last().map(|&(_, t)| t) != Some(self.composing) {
            self.templates.push((id.0, self.composing));
        }
        let who = Who {
            contributor: origin.contributor,
            ordinal: origin.ordinal,
            strategy: origin.strategy,
            deferred: origin.deferred,
        };
        let who = match self.whos.last() {
            Some(last) if *last == who => self.whos.len - 1,
            _ => self.whos.push(who),
        };
        self.stored.push(Stored {
            span: origin.span,
            who: who as u32,
        });
        if let Some(expressions) = &mut self.expressions {
            expressions.push(origin.expression);
        }
        id
    }

    /// Moves the origins of `other` to the end of this table, as origins of the
    /// template being composed: what was `OriginId(k)` there is `OriginId(at + k)`
    /// here, `at` (returned) being this table's length before.
    pub fn append(&mut self, other: Origins) -> u32 {
        let at = self.len() as u32;
        if other.stored.len == 0 {
            return at;
        }
        if self.templates.last().map(|&(_, t)| t) != Some(self.composing) {
            self.templates.push((at, self.composing));
        }
        let first_who = self.whos.len as u32;
        for who in other.whos.into_items() {
            self.whos.push(who);
        }
        let added = other.stored.len;
        for stored in other.stored.into_items() {
            self.stored.push(Stored {
                who: stored.who + first_who,
                ..stored
            });
        }
        if let Some(expressions) = &mut self.expressions {
            match other.expressions {
                Some(theirs) => theirs.into_items().for_each(|e| {
                    expressions.push(e);
                }),
                // A table that dropped them cannot give them back.
                None => (0..added).for_each(|_| {
                    expressions.push(None);
                }),
            }
        }
        at
    }

    /// The origin `id`, put together from what it shares with its neighbours.
    pub fn get(&self, id: OriginId) -> Origin {
        let stored = self.stored.get(id.0 as usize);
        let who = self.whos.get(stored.who as usize);
        Origin {
            contributor: who.contributor.clone(),
            span: stored.span,
            ordinal: who.ordinal,
            strategy: who.strategy,
            expression: self
                .expressions
                .as_ref()
                .and_then(|e| e.get(id.0 as usize).clone()),
            deferred: who.deferred,
        }
    }

    /// Where the value of `id` is written.
    pub fn span(&self, id: OriginId) -> Span {
        self.stored.get(id.0 as usize).span
    }

    /// Whether the value of `id` stays a deferred expression until apply time.
    pub fn deferred(&self, id: OriginId) -> bool {
        self.who(id).deferred
    }

    /// Who contributed the value of `id`.
    pub fn contributor(&self, id: OriginId) -> &Contributor {
        &self.who(id).contributor
    }

    fn who(&self, id: OriginId) -> &Who {
        self.whos.get(self.stored.get(id.0 as usize).who as usize)
    }

    pub fn len(&self) -> usize {
        self.stored.len
    }

    pub fn is_empty(&self) -> bool {
        self.stored.len == 0
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

    /// Origins whose shared part changes every few ids (as the values of one
    /// contribution share theirs), with deferred values and expressions among them.
    fn varied(i: usize) -> Origin {
        Origin {
            contributor: if i % 11 == 0 {
                Contributor::Context
            } else {
                Contributor::Facet(FacetId {
                    template: TemplateId::Composing,
                    index: i / 5,
                })
            },
            span: Span::new(crate::files::FileId::default(), i, i + 1),
            ordinal: (i / 5) as i64,
            strategy: if i % 7 == 0 {
                Strategy::Replace
            } else {
                Strategy::Merge
            },
            expression: (i % 3 == 0).then(|| Arc::from(format!("${{x{i}}}").as_str())),
            deferred: i % 13 == 0,
        }
    }

    #[test]
    fn every_origin_reads_back_as_added_after_appending_tables() {
        for texts in [ForExplain::Kept, ForExplain::Dropped] {
            let mut front = Origins::with(texts);
            let mut back = Origins::with(texts);
            let (in_front, in_back) = (CHUNK + 17, 2 * CHUNK + 5);
            for i in 0..in_front {
                front.add(varied(i));
            }
            for i in 0..in_back {
                back.add(varied(in_front + i));
            }
            let at = front.append(back);
            assert_eq!(at as usize, in_front);
            assert_eq!(front.len(), in_front + in_back);
            for i in 0..in_front + in_back {
                let id = OriginId(i as u32);
                let mut want = varied(i);
                if texts == ForExplain::Dropped {
                    want.expression = None;
                }
                assert_eq!(front.get(id), want, "origin {i}, {texts:?}");
                assert_eq!(front.span(id), want.span);
                assert_eq!(front.deferred(id), want.deferred);
                assert_eq!(front.contributor(id), &want.contributor);
            }
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
