//! Provenance: where every composed value came from. Each value in the composed
//! blueprint points at one [`Origin`]; `explain` and `--provenance` read them.

use crate::source::Span;
use crate::template::Strategy;
use std::sync::Arc;

/// Index into [`Origins`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct OriginId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The template's `blueprint.yaml`.
    Base,
    /// A facet, by index into the template's processing order.
    Facet(usize),
    /// Context values (schema defaults, windsor.yaml, values.yaml, --values, --set).
    Context,
    /// The context's own blueprint (`contexts/<ctx>/blueprint.yaml`), laid over the
    /// composed components (S12).
    Overlay,
    /// Computed by bpc itself (defaults such as a kustomization `path` from its name).
    Derived,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub source: Source,
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
#[derive(Clone, Debug, Default)]
pub struct Origins {
    items: Vec<Origin>,
}

impl Origins {
    /// An origin for what bpc computes itself (a default, a resolved dependency).
    pub fn add_derived(&mut self) -> OriginId {
        self.add(Origin {
            source: Source::Derived,
            span: Default::default(),
            ordinal: 0,
            strategy: Strategy::Merge,
            expression: None,
            deferred: false,
        })
    }

    pub fn add(&mut self, origin: Origin) -> OriginId {
        self.items.push(origin);
        OriginId((self.items.len() - 1) as u32)
    }

    pub fn get(&self, id: OriginId) -> &Origin {
        &self.items[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Renumbers the facets of the origins from `start` on by `offset`: a source is
    /// composed with its own facet indices, which become composition-wide ones here.
    pub fn shift_facets(&mut self, start: usize, offset: usize) {
        for origin in self.items.iter_mut().skip(start) {
            if let Source::Facet(i) = &mut origin.source {
                *i += offset;
            }
        }
    }
}
