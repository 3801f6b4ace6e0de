//! What policies read: one document per thing bpc produces for a context, each with a
//! `kind` saying what it is, and the context itself as `data.bpc.context`.
//!
//! * the composed blueprint (`kind: Blueprint`), as `bpc compose` writes it;
//! * every rendered Flux object (`Kustomization`, `ConfigMap`, `GitRepository`, …), as
//!   `bpc render` writes it under `flux/`;
//! * every Terraform component's variables, as `terraform.tfvars.json` holds them,
//!   wrapped as `{kind: TerraformVariables, component, variables}` (a tfvars file has
//!   no `kind` of its own).

use crate::compose::face::Composition;
use crate::files::Diagnostic;
use crate::value::json::compact;
use crate::value::{Map, Value};
use std::collections::BTreeMap;

/// What an input document is, for the summary and for tracing findings back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The composed blueprint.
    Blueprint,
    /// A rendered object made from the Flux Kustomization with this name (the
    /// Kustomization itself, or its `values-<name>` ConfigMap).
    Kustomization(String),
    /// Any other rendered Flux object (a source, a shared ConfigMap, the namespace).
    FluxObject,
    /// The variables of the Terraform component with this id.
    Terraform(String),
}

/// One input document: where it was rendered, what it is, and its JSON text.
#[derive(Clone, Debug)]
pub struct Input {
    /// `blueprint.yaml`, or the path the render writes it to
    /// (`flux/kustomizations/dns.json`, `terraform/cluster/terraform.tfvars.json`).
    pub name: String,
    pub subject: Subject,
    pub json: String,
}

/// The inputs of one composed and rendered context, in a fixed order: the blueprint,
/// the Flux objects, then the Terraform variables, each group in path order.
pub fn gather(
    composition: &Composition,
    rendered: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<Input>, Diagnostic> {
    let mut inputs = vec![Input {
        name: "blueprint.yaml".to_string(),
        subject: Subject::Blueprint,
        json: compact(&composition.blueprint),
    }];
    let text = |path: &str, bytes: &[u8]| {
        String::from_utf8(bytes.to_vec())
            .map_err(|_| Diagnostic::error(format!("the rendered {path} is not UTF-8 text")))
    };
    for (path, bytes) in rendered {
        let Some(rest) = path.strip_prefix("flux/") else {
            continue;
        };
        // The kustomize index and the list of what waits on Terraform are bpc's
        // bookkeeping, not objects Flux applies.
        if !rest.ends_with(".json") || rest == "deferred.json" {
            continue;
        }
        let subject = flux_subject(rest, composition);
        inputs.push(Input {
            name: path.clone(),
            subject,
            json: text(path, bytes)?,
        });
    }
    for (path, bytes) in rendered {
        let Some(id) = path
            .strip_prefix("terraform/")
            .and_then(|p| p.strip_suffix("/terraform.tfvars.json"))
        else {
            continue;
        };
        let variables = text(path, bytes)?;
        let json = format!(
            "{{\"kind\":\"TerraformVariables\",\"component\":{},\"variables\":{}}}",
            serde_json::Value::String(id.to_string()),
            variables.trim()
        );
        inputs.push(Input {
            name: path.clone(),
            subject: Subject::Terraform(id.to_string()),
            json,
        });
    }
    Ok(inputs)
}

/// Which Kustomization a rendered Flux file (path under `flux/`) was made from.
fn flux_subject(rest: &str, composition: &Composition) -> Subject {
    let stem = rest.strip_suffix(".json").unwrap_or(rest);
    let named = |name: &str| composition.kustomizations.components.contains_key(name);
    if let Some(name) = stem.strip_prefix("kustomizations/") {
        if named(name) {
            return Subject::Kustomization(name.to_string());
        }
    }
    if let Some(name) = stem.strip_prefix("configmaps/values-") {
        if named(name) {
            return Subject::Kustomization(name.to_string());
        }
    }
    Subject::FluxObject
}

/// `data.bpc.context`: the context's name and effective values, masked where the
/// schema says a value is sensitive.
pub fn context_data(
    name: &str,
    values: &Map,
    schema: Option<&crate::compose::face::Schema>,
) -> String {
    let masked = crate::emit::values::masked(&Value::map(values.clone()), schema);
    let mut context = Map::default();
    context.insert("name".into(), Value::str(name));
    context.insert("values".into(), masked);
    let mut bpc = Map::default();
    bpc.insert("context".into(), Value::map(context));
    let mut data = Map::default();
    data.insert("bpc".into(), Value::map(bpc));
    compact(&Value::map(data))
}
