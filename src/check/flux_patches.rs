//! `unknown-flux-system`: a `flux:` entry that only patches a system (`{name: csi,
//! dependsOn: [cni]}`: no `install`, `resources`, `globalDependency` or `secrets`)
//! whose name no facet defines a system for. The Windsor CLI composes it as a system of
//! its own with nothing to install, so what it meant to add (a `dependsOn`, a
//! `source`) silently goes nowhere; a misspelt system name is the usual cause.

use super::finding::{Finding, FindingId};
use crate::template::keys::FLUX_SYSTEM_ONLY;
use crate::template::{ComponentEntry, ComponentKind, Template};
use std::collections::BTreeSet;

pub fn check(template: &Template, out: &mut Vec<Finding>) {
    let everyone = template.facets.iter().chain(
        template
            .upstream
            .iter()
            .flat_map(|u| u.template.facets.iter()),
    );
    let defined: BTreeSet<&str> = everyone
        .flat_map(|f| f.components.iter())
        .filter(|c| defines_a_system(c))
        .filter_map(|c| c.node.get("name").and_then(|n| n.as_str()))
        .collect();
    let candidates: Vec<&str> = defined.iter().copied().collect();
    // Only the template's own facets are the author's to edit.
    for facet in &template.facets {
        for component in &facet.components {
            if component.kind != ComponentKind::FluxSystem || defines_a_system(component) {
                continue;
            }
            let Some(name_node) = component.node.get("name") else {
                continue;
            };
            let Some(name) = name_node.as_str() else {
                continue;
            };
            if defined.contains(name) || crate::expr::template::contains_expression(name) {
                continue;
            }
            let help = match crate::template::keys::suggest(name, &candidates) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "a system is defined by an entry with `install` or `resources`".to_string(),
            };
            out.push(
                Finding::at(
                    FindingId::UnknownFluxSystem,
                    name_node.span,
                    format!(
                        "flux entry `{name}` of facet `{}` patches a system no facet defines: \
                         it composes as a system with nothing to install",
                        facet.name
                    ),
                    "no such flux system",
                )
                .with_help(Some(help)),
            );
        }
    }
}

/// Whether a `flux:` entry defines its system rather than only patching it.
fn defines_a_system(component: &ComponentEntry) -> bool {
    component.kind == ComponentKind::FluxSystem
        && FLUX_SYSTEM_ONLY
            .iter()
            .any(|k| component.node.get(k).is_some())
}
