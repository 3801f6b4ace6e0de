//! Which local source each composed value came from, and what follows from it:
//! a component without a `source:` gets the name of the source that created it, and
//! components are ordered by source depth (docs/semantics.md S9 "Local sources") so a
//! downstream template's components come after
//! the core they build on.
//!
//! Every origin records the template whose composition added it
//! ([`Origins::template_of`]), so a value's source is looked up, not inferred.

use crate::compose::model::component::{Component, Effect, Merged};
use crate::compose::model::origin::{Contributor, Origin, OriginId, Origins, Rule};
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use crate::files::Span;
use crate::template::{Strategy, TemplateId};

/// One local source of a composition.
#[derive(Clone, Debug)]
pub struct SourceTag {
    pub name: String,
    /// 0 for a source referencing no local source; one more than its deepest reference.
    pub depth: usize,
    /// The `sources:` entry that names it.
    pub entry: Span,
    /// Which of the composition's templates it is.
    pub template: TemplateId,
}

/// The local sources of a composition; empty for a single template.
#[derive(Clone, Debug, Default)]
pub struct SourceTags {
    pub tags: Vec<SourceTag>,
    /// The composing template's depth: deeper than every source.
    pub own_depth: usize,
}

impl SourceTags {
    /// These tags plus the composing template's own when it is a published blueprint
    /// (S14): its components then default to `source: <its name>` too.
    pub fn with_published(mut self, template: &crate::template::Template) -> SourceTags {
        if let Some(p) = &template.published {
            self.tags.push(SourceTag {
                name: p.name.clone(),
                depth: self.own_depth,
                entry: p.entry,
                template: TemplateId::Composing,
            });
        }
        self
    }

    /// The source an origin belongs to; `None` for the composing template (and for
    /// values bpc derived after merging).
    fn source_of(&self, origin: OriginId, origins: &Origins) -> Option<&SourceTag> {
        // What the context's own blueprint adds is the context's, not a template's:
        // it reads from the context's repository, as in the Windsor CLI (S14).
        if matches!(
            origins.contributor(origin),
            Contributor::Overlay | Contributor::ContextPatch
        ) {
            return None;
        }
        let template = origins.template_of(origin);
        self.tags.iter().find(|t| t.template == template)
    }

    /// The source whose contribution created `component` (or last replaced it
    /// wholesale); `None` for the composing template.
    pub fn owner(&self, component: &Component, origins: &Origins) -> Option<&SourceTag> {
        let step = component
            .history
            .iter()
            .rev()
            .find(|s| matches!(s.effect, Effect::Created | Effect::Replaced))?;
        self.source_of(step.origin, origins)
    }

    /// Defaults `source:` to the owning source's name and sorts components stably by
    /// the depth of their owner.
    pub fn apply(&self, merged: &mut Merged, origins: &mut Origins) {
        for component in merged.components.values_mut() {
            let Some(tag) = self.owner(component, origins) else {
                continue;
            };
            let unset = match component.get("source") {
                None => true,
                Some(t) => t.as_str() == Some(""),
            };
            if !unset {
                continue;
            }
            let origin = origins.add(Origin {
                contributor: Contributor::Derived(Rule::SourceName),
                span: tag.entry,
                ordinal: 0,
                strategy: Strategy::Merge,
                expression: None,
                deferred: false,
            });
            let fields = std::sync::Arc::make_mut(&mut component.fields);
            fields.insert(
                "source",
                Tracked::Leaf(Value::str(tag.name.as_str()), origin),
            );
            crate::compose::model::fields::sort_in_order(component.kind, fields);
        }
        merged
            .components
            .sort_by_cached_key(|_, c| self.owner(c, origins).map_or(self.own_depth, |t| t.depth));
    }
}
