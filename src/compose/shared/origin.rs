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
#[derive(Clone, Debug)]
pub struct Origins {
    items: Vec<Origin>,
    /// The template whose composition added each origin.
    templates: Vec<TemplateId>,
    /// The template being composed: the one new origins belong to.
    composing: TemplateId,
}

impl Default for Origins {
    fn default() -> Origins {
        Origins {
            items: Vec::new(),
            templates: Vec::new(),
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
        self.templates[id.0 as usize]
    }

    pub fn add(&mut self, origin: Origin) -> OriginId {
        self.items.push(origin);
        self.templates.push(self.composing);
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
}
