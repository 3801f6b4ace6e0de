//! Where a finding came from in the template: for a value of the blueprint, the
//! facet line that wrote it (the composition's origins, as `bpc explain` reads them);
//! for a rendered Flux object, the facet that defined its Kustomization; for a
//! component's Terraform variables, the facet line that wrote the variable, or the
//! one that defined the component.

use super::evaluate::PathSeg;
use super::input::Subject;
use crate::compose::face::Composition;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::origin::Contributor;
use crate::compose::model::tracked::Tracked;
use crate::files::Span;

/// A finding's place in the template and what the label there says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub span: Span,
    pub label: String,
}

/// The place of a finding on `subject` at `path` (keys and indices into the input
/// document), if the composition knows one.
pub fn place(
    composition: &Composition,
    subject: &Subject,
    path: Option<&[PathSeg]>,
) -> Option<Place> {
    let path = path.unwrap_or_default();
    match subject {
        Subject::Blueprint => {
            let (list, rest) = path.split_first()?;
            let (name, merged) = match list {
                PathSeg::Key(k) if k == "terraform" => ("terraform", &composition.terraform),
                PathSeg::Key(k) if k == "kustomize" => ("kustomize", &composition.kustomize),
                _ => return None,
            };
            let (which, rest) = rest.split_first()?;
            let component = pick(merged, which)?;
            let what = format!("{name}[{}]{}", component.id, suffix(rest));
            value_or_definition(composition, component, rest, &what)
        }
        Subject::Kustomization(name) => {
            let component = composition.kustomizations.components.get(name.as_str())?;
            // `spec.<field>` of the Kustomization and `data.<key>` of its values
            // ConfigMap are the blueprint's `<field>` and `substitutions.<key>`.
            let fields: Vec<PathSeg> = match path.split_first() {
                Some((PathSeg::Key(k), rest)) if k == "spec" => rest.to_vec(),
                Some((PathSeg::Key(k), rest)) if k == "data" => {
                    let mut f = vec![PathSeg::Key("substitutions".to_string())];
                    f.extend_from_slice(rest);
                    f
                }
                _ => Vec::new(),
            };
            let what = format!("kustomize[{name}]{}", suffix(&fields));
            value_or_definition(composition, component, &fields, &what)
        }
        Subject::Terraform(id) => {
            let component = composition.terraform.components.get(id.as_str())?;
            let fields: Vec<PathSeg> = match path.split_first() {
                Some((PathSeg::Key(k), rest)) if k == "variables" && !rest.is_empty() => {
                    let mut f = vec![PathSeg::Key("inputs".to_string())];
                    f.extend_from_slice(rest);
                    f
                }
                _ => Vec::new(),
            };
            let what = format!("terraform[{id}]{}", suffix(&fields));
            value_or_definition(composition, component, &fields, &what)
        }
        Subject::FluxObject => None,
    }
}

/// A component by list index or by id.
fn pick<'m>(merged: &'m Merged, which: &PathSeg) -> Option<&'m Component> {
    match which {
        PathSeg::Index(i) => merged.components.values().nth(*i),
        PathSeg::Key(id) => merged.components.get(id.as_str()),
    }
}

/// The origin of the value at `fields` of `component` (as deep as the path goes);
/// the component's definition when no facet wrote that value.
fn value_or_definition(
    composition: &Composition,
    component: &Component,
    fields: &[PathSeg],
    what: &str,
) -> Option<Place> {
    if let Some((PathSeg::Key(field), rest)) = fields.split_first() {
        if let Some(mut node) = component.get(field) {
            for seg in rest {
                let next = match (node, seg) {
                    (Tracked::Map(entries, _), PathSeg::Key(k)) => entries.get(k.as_str()),
                    (Tracked::List(items, _), PathSeg::Index(i)) => items.get(*i),
                    _ => None,
                };
                match next {
                    Some(n) => node = n,
                    None => break,
                }
            }
            let origin = composition.origins.get(node.origin());
            if !matches!(origin.contributor, Contributor::Derived(_)) {
                return Some(Place {
                    span: origin.span,
                    label: format!("{what} is written here"),
                });
            }
        }
    }
    let step = component.history.first()?;
    let origin = composition.origins.get(step.origin);
    if matches!(origin.contributor, Contributor::Derived(_)) {
        return None;
    }
    let kind = match component.kind {
        crate::template::ComponentKind::Terraform => "terraform",
        _ => "kustomize",
    };
    Some(Place {
        span: origin.span,
        label: format!("{kind}[{}] is defined here", component.id),
    })
}

fn suffix(fields: &[PathSeg]) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        format!(".{}", shown(fields))
    }
}

/// `terraform.2.inputs.region` for a path.
pub fn shown(path: &[PathSeg]) -> String {
    path.iter()
        .map(|s| match s {
            PathSeg::Key(k) => k.clone(),
            PathSeg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}
