//! Where a Flux Kustomization and its fields came from, as `bpc explain` knows it: the
//! facet (or blueprint, or context file) and the span of the contribution, for the
//! diagnostics of verify to point at.

use crate::compose::face::Composition;
use crate::compose::model::component::Component;
use crate::compose::model::origin::{Contributor, OriginId};
use crate::compose::model::tracked::Tracked;
use crate::files::Span;
use crate::template::Template;

/// A place in the template that wrote something, and who it is.
#[derive(Clone, Debug)]
pub struct Written {
    pub span: Span,
    /// `facet \`cni\``, `blueprint.yaml`, `the context blueprint`.
    pub by: String,
}

/// The composition a context's Kustomizations were rendered from.
pub struct Provenance<'a> {
    pub composition: &'a Composition,
    pub template: &'a Template,
}

impl Provenance<'_> {
    fn component(&self, name: &str) -> Option<&Component> {
        self.composition.kustomizations.components.get(name)
    }

    fn written(&self, id: OriginId) -> Option<Written> {
        let origin = self.composition.origins.get(id);
        let by = match &origin.contributor {
            Contributor::Base => "blueprint.yaml".to_string(),
            Contributor::Facet(id) => {
                let name = self.template.facet(*id).map_or("?", |f| f.name.as_str());
                match self.template.upstream_name(id.template) {
                    Some(source) => format!("facet `{name}` of source `{source}`"),
                    None => format!("facet `{name}`"),
                }
            }
            Contributor::Overlay => "the context blueprint".to_string(),
            Contributor::ContextPatch => "a context patch".to_string(),
            Contributor::Context | Contributor::Derived(_) => return None,
        };
        Some(Written {
            span: origin.span,
            by,
        })
    }

    /// The contribution that created Kustomization `name` (for a system's tier, the
    /// system's).
    pub fn kustomization(&self, name: &str) -> Option<Written> {
        let component = self.component(name)?;
        component
            .history
            .iter()
            .find_map(|step| self.written(step.origin))
    }

    /// The contribution that wrote `field` of Kustomization `name`, else the one that
    /// created it.
    pub fn field(&self, name: &str, field: &str) -> Option<Written> {
        self.component(name)
            .and_then(|c| c.get(field))
            .and_then(|t| self.written(t.origin()))
            .or_else(|| self.kustomization(name))
    }

    /// The entry `entry` of the list `field` of Kustomization `name` (a component of
    /// `components`), else the list, else the Kustomization.
    pub fn entry(&self, name: &str, field: &str, entry: &str) -> Option<Written> {
        let list = self.component(name).and_then(|c| c.get(field));
        if let Some(Tracked::List(items, _)) = list {
            if let Some(item) = items.iter().find(|i| i.as_str() == Some(entry)) {
                if let Some(w) = self.written(item.origin()) {
                    return Some(w);
                }
            }
        }
        self.field(name, field)
    }
}
