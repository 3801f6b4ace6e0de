//! Inputs of local Terraform modules checked against the modules' `variable` blocks.
//!
//! Windsor hands a component's inputs to Terraform as they are: an input that names no
//! variable of the module is dropped without a word, and a required variable nobody
//! set is found only when Terraform plans. For a component whose module is local
//! (no `source`: the module is `terraform/<path>` in the project) bpc reads the
//! module's `*.tf` files and says both before anything is applied (docs/render.md).
//!
//! The check is pure: the caller reads the module directories (see [`ModuleFiles`]).

use crate::compose::face::Composition;
use crate::compose::model::origin::{Contributor, Origin};
use crate::compose::model::tracked::Tracked;
use crate::files::Diagnostic;
use crate::template::keys::suggest;

/// The `*.tf` files of a local module, read by the caller: `(file name, text)`, or
/// `None` when `terraform/<path>` is not a directory of the project.
pub type ModuleFiles = Option<Vec<(String, String)>>;

/// A module's declared variables, in file and declaration order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Variables {
    pub declared: Vec<Variable>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    /// No `default`: Terraform asks for it.
    pub required: bool,
    /// The file of the module that declares it.
    pub file: String,
    /// `description`, when it is a plain string.
    pub description: Option<String>,
    /// `sensitive = true`.
    pub sensitive: bool,
    /// `default`, when it is a literal (no reference, call or template).
    pub default: Option<serde_json::Value>,
}

/// Reads the `variable` blocks of a module's files. A file that is not valid HCL is
/// an error naming it (Terraform would refuse it too).
pub fn parse(dir: &str, files: &[(String, String)]) -> Result<Variables, Diagnostic> {
    let mut declared = Vec::new();
    for (name, text) in files {
        let body = hcl::parse(text).map_err(|e| {
            Diagnostic::warning(format!("cannot read {dir}/{name} as HCL: {e}"))
                .with_help("bpc checks a local module's variables against the component's inputs; fix the file or ignore this")
        })?;
        for block in body.blocks().filter(|b| b.identifier() == "variable") {
            let Some(label) = block.labels().first() else {
                continue;
            };
            let attribute = |key: &str| {
                block
                    .body()
                    .attributes()
                    .find(|a| a.key() == key)
                    .map(|a| a.expr().clone())
            };
            let default = attribute("default");
            declared.push(Variable {
                name: label.as_str().to_string(),
                required: default.is_none(),
                file: format!("{dir}/{name}"),
                description: match attribute("description") {
                    Some(hcl::Expression::String(d)) => Some(d),
                    _ => None,
                },
                sensitive: matches!(attribute("sensitive"), Some(hcl::Expression::Bool(true))),
                default: default
                    .filter(is_literal)
                    .and_then(|e| serde_json::to_value(hcl::Value::from(e)).ok()),
            });
        }
    }
    Ok(Variables { declared })
}

/// A literal HCL value: null, bool, number, string, or a list or object of them.
fn is_literal(expr: &hcl::Expression) -> bool {
    use hcl::Expression as E;
    match expr {
        E::Null | E::Bool(_) | E::Number(_) | E::String(_) => true,
        E::Array(items) => items.iter().all(is_literal),
        E::Object(entries) => entries.iter().all(|(k, v)| {
            matches!(k, hcl::ObjectKey::Identifier(_))
                || matches!(k, hcl::ObjectKey::Expression(E::String(_)))
        } && is_literal(v)),
        E::Parenthesis(inner) => is_literal(inner),
        _ => false,
    }
}

/// `terraform/<ID>/variables.json` for every local component whose module bpc can
/// read: what the module takes, as Windsor's tfvars file lists it in comments
/// (docs/render.md, Terraform): each variable's description, literal default (not for
/// sensitive ones), whether it is sensitive or required, and where its value comes
/// from (`tfvars`, `deferred`, or `none`: the module default, or nothing). A module
/// that cannot be read gets no file (the check warns).
pub fn companions(
    composition: &Composition,
    read: impl Fn(&str) -> ModuleFiles,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (id, component) in &composition.terraform.components {
        let Some(dir) = local_module_dir(composition, id) else {
            continue;
        };
        let Some(Ok(variables)) = read(&dir).map(|files| parse(&dir, &files)) else {
            continue;
        };
        let inputs = match component.get("inputs").map(Tracked::to_value) {
            Some(crate::expr::Value::Map(m)) => Some(m),
            _ => None,
        };
        if let Some(text) = variables_json(&dir, &variables, inputs.as_deref()) {
            out.push((format!("terraform/{id}/variables.json"), text));
        }
    }
    out
}

/// The `variables.json` of a module (`module` names it): each variable's description,
/// literal default (not for sensitive ones), whether it is sensitive or required, and
/// where its value comes from given the component's `inputs`.
pub fn variables_json(
    module: &str,
    variables: &Variables,
    inputs: Option<&crate::expr::Map>,
) -> Option<String> {
    let mut list = serde_json::Map::new();
    for v in &variables.declared {
        let mut entry = serde_json::Map::new();
        if let Some(d) = &v.description {
            entry.insert("description".into(), d.clone().into());
        }
        if v.sensitive {
            entry.insert("sensitive".into(), true.into());
        } else if let Some(d) = &v.default {
            entry.insert("default".into(), d.clone());
        }
        entry.insert("required".into(), v.required.into());
        let input = inputs.and_then(|m| m.get(v.name.as_str()));
        let from = match input {
            None | Some(crate::expr::Value::Nil) => "none",
            Some(value) if value_has_expression(value) => "deferred",
            Some(_) => "tfvars",
        };
        entry.insert("input".into(), from.into());
        list.insert(v.name.clone(), serde_json::Value::Object(entry));
    }
    let doc = serde_json::json!({"module": module, "variables": list});
    let mut text = serde_json::to_string_pretty(&doc).ok()?;
    text.push('\n');
    Some(text)
}

fn value_has_expression(v: &crate::expr::Value) -> bool {
    use crate::expr::Value as V;
    match v {
        V::Str(s) => s.contains("${"),
        V::List(items) => items.iter().any(value_has_expression),
        V::Map(m) => m.values().any(value_has_expression),
        _ => false,
    }
}

/// The module directory of a terraform component, relative to the project, when the
/// module is local: no `source`, and a plain relative `path`.
fn local_module_dir(composition: &Composition, id: &str) -> Option<String> {
    let component = composition.terraform.components.get(id)?;
    let text = |k: &str| component.get(k).and_then(Tracked::as_str);
    // A published template's own components read modules of its artifact (S14),
    // which the reader finds; other sources' modules are not at hand.
    let own = composition
        .sources
        .tags
        .iter()
        .find(|t| t.template == crate::template::TemplateId::Composing)
        .map(|t| t.name.as_str());
    if text("source").is_some_and(|s| !s.is_empty() && Some(s) != own) {
        return None;
    }
    let path = text("path").filter(|p| !p.is_empty())?;
    let plain = path
        .split('/')
        .all(|seg| !seg.is_empty() && seg != ".." && seg != ".")
        && !path.starts_with('/');
    plain.then(|| format!("terraform/{path}"))
}

/// Warnings for every local component: inputs no variable declares (naming the facet
/// that set them) and required variables no input sets (naming the module file).
/// `read` gives the files of a module directory.
pub fn check(composition: &Composition, read: impl Fn(&str) -> ModuleFiles) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for (id, component) in &composition.terraform.components {
        let Some(dir) = local_module_dir(composition, id) else {
            continue;
        };
        let Some(files) = read(&dir) else {
            continue;
        };
        let variables = match parse(&dir, &files) {
            Ok(v) => v,
            Err(d) => {
                warnings.push(d);
                continue;
            }
        };
        warnings.extend(input_warnings(composition, id, component, &dir, &variables));
    }
    warnings
}

/// Whether [`check`] and [`companions`] handle component `id` (its module is local, or
/// in a published template's artifact).
pub fn checked_here(composition: &Composition, id: &str) -> bool {
    local_module_dir(composition, id).is_some()
}

/// The warnings of one component against its module's `variables` (`dir` names the
/// module): inputs no variable declares, required variables no input sets.
pub fn input_warnings(
    composition: &Composition,
    id: &str,
    component: &crate::compose::model::component::Component,
    dir: &str,
    variables: &Variables,
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let inputs: Vec<(&str, &Tracked)> = match component.get("inputs") {
        Some(Tracked::Map(entries, _)) => entries.iter().map(|(k, v)| (&**k, v)).collect(),
        _ => Vec::new(),
    };
    let names: Vec<&str> = variables.declared.iter().map(|v| v.name.as_str()).collect();
    for (input, value) in &inputs {
        if names.contains(input) {
            continue;
        }
        let mut d = Diagnostic::warning(format!(
            "input `{input}` of terraform component `{id}` matches no variable of {dir}"
        ));
        d = at_origin(d, &composition.origins.get(value.origin()));
        d = match suggest(input, &names) {
            Some(hint) => d.with_help(format!("did you mean `{hint}`?")),
            None => d.with_help(format!(
                "Terraform never sees it; the module declares: {}",
                if names.is_empty() {
                    "no variables".to_string()
                } else {
                    names.join(", ")
                }
            )),
        };
        warnings.push(d);
    }
    for variable in variables.declared.iter().filter(|v| v.required) {
        if !inputs.iter().any(|(k, _)| *k == variable.name) {
            warnings.push(
                Diagnostic::warning(format!(
                    "required variable `{}` ({}) has no input in terraform component `{id}`",
                    variable.name, variable.file
                ))
                .with_help("set it in the component's `inputs`, or give the variable a `default`"),
            );
        }
    }
    warnings
}

/// Points the diagnostic at the facet (or values file) that wrote the input, when the
/// origin has a place in a file.
fn at_origin(d: Diagnostic, origin: &Origin) -> Diagnostic {
    match origin.contributor {
        Contributor::Derived(_) | Contributor::Context => d,
        Contributor::Base
        | Contributor::Facet(_)
        | Contributor::Overlay
        | Contributor::ContextPatch => d.with_primary(origin.span, "set here"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_without_default_are_required() {
        let files = vec![(
            "variables.tf".to_string(),
            r#"
variable "cluster_name" {
  type = string
}
variable "workers" {
  type    = number
  default = 2
}
resource "null_resource" "x" {}
"#
            .to_string(),
        )];
        let v = parse("terraform/cluster", &files).expect("valid HCL");
        let summary: Vec<(&str, bool, &str)> = v
            .declared
            .iter()
            .map(|v| (v.name.as_str(), v.required, v.file.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("cluster_name", true, "terraform/cluster/variables.tf"),
                ("workers", false, "terraform/cluster/variables.tf")
            ]
        );
    }

    #[test]
    fn invalid_hcl_names_the_file() {
        let files = vec![("main.tf".to_string(), "variable \"x\" {".to_string())];
        let e = parse("terraform/net", &files).expect_err("unclosed block");
        assert!(e.message.contains("terraform/net/main.tf"), "{}", e.message);
    }
}
