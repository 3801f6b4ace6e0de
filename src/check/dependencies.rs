//! `unknown-dependency`: a `dependsOn` naming a component no facet, and not the base
//! blueprint, defines (Windsor fails such a blueprint only when a context reaches it).

use super::finding::{Finding, FindingId};
use crate::template::{ComponentKind, Template};
use crate::yaml::{Node, NodeKind};
use std::collections::BTreeSet;

pub fn check(template: &Template, out: &mut Vec<Finding>) {
    let mut terraform = BTreeSet::new();
    let mut kustomize = BTreeSet::new();
    let mut systems = BTreeSet::new();
    let mut add = |kind: ComponentKind, node: &Node| {
        if let Some(id) = crate::template::identity::node_merge_key(kind, node) {
            match kind {
                ComponentKind::Terraform => terraform.insert(id),
                ComponentKind::Kustomize => kustomize.insert(id),
                ComponentKind::FluxSystem => systems.insert(id),
            };
        }
    };
    let facets = template.facets.iter().chain(
        template
            .upstream
            .iter()
            .flat_map(|u| u.template.facets.iter()),
    );
    for facet in facets.clone() {
        for component in &facet.components {
            add(component.kind, &component.node);
        }
    }
    let bases = std::iter::once(template.base.as_ref())
        .chain(template.upstream.iter().map(|u| u.template.base.as_ref()))
        .flatten();
    for base in bases {
        for (key, kind) in [
            ("terraform", ComponentKind::Terraform),
            ("kustomize", ComponentKind::Kustomize),
        ] {
            if let Some(NodeKind::Seq(items)) = base.get(key).map(|n| &n.kind) {
                items.iter().for_each(|item| add(kind, item));
            }
        }
    }
    for facet in &template.facets {
        for component in &facet.components {
            let known = match component.kind {
                ComponentKind::Terraform => &terraform,
                _ => &kustomize,
            };
            let names: Vec<&Node> = match component.node.get("dependsOn").map(|d| &d.kind) {
                Some(NodeKind::Seq(items)) => items.iter().collect(),
                Some(NodeKind::Str(_)) => component.node.get("dependsOn").into_iter().collect(),
                _ => continue,
            };
            for name in names {
                let Some(text) = name.as_str() else { continue };
                // A flux system stands for its tiers too (`<system>-install`, …).
                let a_tier = component.kind != ComponentKind::Terraform
                    && systems
                        .iter()
                        .any(|s| crate::compose::model::tier_names::belongs_to(text, s));
                if crate::expr::template::contains_expression(text)
                    || known.contains(text)
                    || a_tier
                {
                    continue;
                }
                let candidates: Vec<&str> = known
                    .iter()
                    .chain(
                        if component.kind == ComponentKind::Terraform {
                            None
                        } else {
                            Some(&systems)
                        }
                        .into_iter()
                        .flatten(),
                    )
                    .map(AsRef::as_ref)
                    .collect();
                let help = crate::template::keys::suggest(text, &candidates)
                    .map(|s| format!("did you mean `{s}`?"));
                out.push(
                    Finding::at(
                        FindingId::UnknownDependency,
                        name.span,
                        format!(
                            "{} `{}` of facet `{}` depends on `{text}`, which no facet defines",
                            component.kind.noun(),
                            crate::template::identity::node_merge_key(
                                component.kind,
                                &component.node
                            )
                            .unwrap_or_default(),
                            facet.name
                        ),
                        "no such component",
                    )
                    .with_help(help),
                );
            }
        }
    }
}
