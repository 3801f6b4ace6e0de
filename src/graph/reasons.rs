//! Why an edge exists and where a node was defined, from the composition's origins:
//! a `dependsOn` a facet wrote names the facet and line; one bpc added names its rule.

use super::NodeKind;
use crate::compose::face::Composition;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::origin::{Contributor, Origin};
use crate::compose::model::tier_names::belongs_to;
use crate::compose::model::tracked::Tracked;
use crate::files::FileMap;
use crate::template::Template;
use crate::value::Value;

pub(crate) struct Reasons<'a> {
    composition: &'a Composition,
    template: &'a Template,
    files: &'a FileMap,
}

impl<'a> Reasons<'a> {
    pub fn new(composition: &'a Composition, template: &'a Template, files: &'a FileMap) -> Self {
        Reasons {
            composition,
            template,
            files,
        }
    }

    fn merged(&self, kind: NodeKind) -> &'a Merged {
        match kind {
            NodeKind::Terraform => &self.composition.terraform,
            _ => &self.composition.kustomizations,
        }
    }

    fn component(&self, kind: NodeKind, name: &str) -> Option<&'a Component> {
        self.merged(kind).components.get(name)
    }

    fn written(&self, origin: &Origin) -> Option<String> {
        let at = self.files.describe(origin.span);
        match &origin.contributor {
            Contributor::Facet(id) => {
                let facet = self.template.facet(*id).map_or("?", |f| f.name.as_str());
                Some(format!("written by facet `{facet}` at {at}"))
            }
            Contributor::Overlay => Some(format!("written in the context's blueprint at {at}")),
            Contributor::Base => Some(format!("written in blueprint.yaml at {at}")),
            Contributor::ContextPatch => Some(format!("written in a context patch at {at}")),
            Contributor::Context | Contributor::Derived(_) => None,
        }
    }

    /// `facet` and `provenance` of a component, where a facet defined it.
    pub fn defined(&self, kind: NodeKind, name: &str) -> Vec<(String, String)> {
        let Some(component) = self.component(kind, name) else {
            if kind == NodeKind::Kustomization && name == "crds" {
                return vec![(
                    "defined".into(),
                    "the CRD layer bpc renders from `crds`".into(),
                )];
            }
            return Vec::new();
        };
        let field = component.get("name").or_else(|| component.get("path"));
        let Some(origin) = field.map(|f| self.composition.origins.get(f.origin())) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Contributor::Facet(id) = &origin.contributor {
            if let Some(facet) = self.template.facet(*id) {
                out.push(("facet".to_string(), facet.name.clone()));
            }
        }
        out.push((
            "provenance".to_string(),
            crate::emit::provenance::describe(&origin, self.template, self.files),
        ));
        out
    }

    /// Why `name` (of `kind`) waits for `dep`.
    pub fn depends_on(&self, kind: NodeKind, name: &str, dep: &str) -> String {
        if kind == NodeKind::Kustomization {
            if let Some(why) = self.flux_rule(name, dep) {
                return why;
            }
        }
        let item = self
            .component(kind, name)
            .and_then(|c| match c.get("dependsOn") {
                Some(Tracked::List(items, _)) => items.iter().find(|i| i.as_str() == Some(dep)),
                _ => None,
            });
        item.and_then(|i| self.written(&self.composition.origins.get(i.origin())))
            .unwrap_or_else(|| "added by bpc".to_string())
    }

    /// The rules that add Kustomization dependencies of their own accord.
    fn flux_rule(&self, name: &str, dep: &str) -> Option<String> {
        if dep == "crds" {
            return Some("CRD layer: applied before the kustomizations that use the CRDs".into());
        }
        for system in self.composition.flux.components.values() {
            let id = system.id.as_ref();
            if !belongs_to(dep, id) {
                continue;
            }
            if belongs_to(name, id) {
                return Some(format!(
                    "tier link: tiers of flux system `{id}` run in order"
                ));
            }
            if let Some(Tracked::Leaf(Value::Bool(true), origin)) = system.get("globalDependency") {
                let at = self
                    .written(&self.composition.origins.get(*origin))
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default();
                return Some(format!(
                    "global dependency: flux system `{id}` comes before every kustomization outside its own dependencies{at}"
                ));
            }
        }
        None
    }
}
