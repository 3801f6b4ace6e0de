//! The graph of a rendered tree: nodes and edges read from the files `bpc render`
//! writes (rendered with JSON manifests, so every file is JSON).

use super::reasons::Reasons;
use super::{Change, Edge, EdgeKind, Graph, Node, NodeKind};
use crate::compose::face::Composition;
use crate::files::{Diagnostic, FileMap};
use crate::render::Rendered;
use crate::template::Template;
use crate::value::json::{parse, FromJson};
use crate::value::Value;
use std::collections::BTreeMap;

/// The deployment graph of `rendered`, which `composition` (of `template`) produced.
/// `rendered` must have been rendered with JSON manifests.
pub fn build(
    rendered: &Rendered,
    composition: &Composition,
    template: &Template,
    files: &FileMap,
) -> Result<Graph, Diagnostic> {
    let reasons = Reasons::new(composition, template, files);
    let context = composition
        .context
        .get("context")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            composition
                .blueprint
                .as_map()
                .and_then(|b| crate::render::lookup(b, &["metadata", "name"]))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default();
    let mut graph = Graph {
        context,
        ..Graph::default()
    };
    terraform(rendered, &reasons, &mut graph)?;
    flux(rendered, &reasons, &mut graph)?;
    graph.edges.retain(|e| {
        let known = |id: &str| graph.nodes.iter().any(|n| n.id == id);
        known(&e.from) && known(&e.to)
    });
    graph.cycles = composition
        .cycles
        .iter()
        .map(|d| match &d.primary {
            Some(label) => format!("{}: {}", files.describe(label.span), d.message),
            None => d.message.clone(),
        })
        .collect();
    super::cycles::mark(&mut graph);
    Ok(graph)
}

fn file(rendered: &Rendered, path: &str) -> Result<Option<Value>, Diagnostic> {
    let Some(bytes) = rendered.files.get(path) else {
        return Ok(None);
    };
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Diagnostic::error(format!("graph: {path} is not UTF-8: {e}")))?;
    parse(text, FromJson::IntOrFloat)
        .map(Some)
        .map_err(|e| Diagnostic::error(format!("graph: cannot read {path}: {e}")))
}

fn text<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    crate::render::lookup(v.as_map()?, path).and_then(Value::as_str)
}

fn list<'v>(v: &'v Value, path: &[&str]) -> &'v [Value] {
    v.as_map()
        .and_then(|m| crate::render::lookup(m, path))
        .and_then(Value::as_list)
        .unwrap_or_default()
}

fn id(kind: NodeKind, name: &str) -> String {
    format!("{}/{name}", kind.prefix())
}

/// Terraform components from `terraform/plan.json`, in apply order; `dependsOn` and
/// the components their deferred inputs read outputs from.
fn terraform(rendered: &Rendered, reasons: &Reasons, graph: &mut Graph) -> Result<(), Diagnostic> {
    let Some(plan) = file(rendered, "terraform/plan.json")? else {
        return Ok(());
    };
    for component in list(&plan, &["components"]) {
        let Some(name) = text(component, &["id"]) else {
            continue;
        };
        let mut details = Vec::new();
        if let Some(path) = text(component, &["path"]) {
            details.push(("path".to_string(), path.to_string()));
        }
        if let Some(source) = text(component, &["source"]).or(text(component, &["module"])) {
            details.push(("source".to_string(), source.to_string()));
        }
        details.extend(reasons.defined(NodeKind::Terraform, name));
        let node = id(NodeKind::Terraform, name);
        for dep in list(component, &["dependsOn"]) {
            if let Some(dep) = dep.as_str() {
                graph.edges.push(Edge {
                    from: id(NodeKind::Terraform, dep),
                    to: node.clone(),
                    kind: EdgeKind::DependsOn,
                    why: reasons.depends_on(NodeKind::Terraform, name, dep),
                    change: Change::Same,
                    in_cycle: false,
                });
            }
        }
        let dir = text(component, &["dir"]).unwrap_or_default();
        if let Some(deferred) = file(rendered, &format!("{dir}/deferred.json"))? {
            for (input, entry) in deferred.as_map().into_iter().flatten() {
                for from in waited_for(entry) {
                    push_output(
                        graph,
                        &from,
                        &node,
                        &format!("input `{input}` reads its outputs"),
                    );
                }
            }
        }
        graph.nodes.push(Node {
            id: node,
            kind: NodeKind::Terraform,
            name: name.to_string(),
            details,
            change: Change::Same,
        });
    }
    Ok(())
}

fn waited_for(entry: &Value) -> Vec<String> {
    list(entry, &["waitsFor"])
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

fn push_output(graph: &mut Graph, component: &str, to: &str, what: &str) {
    let from = id(NodeKind::Terraform, component);
    if graph
        .edges
        .iter()
        .any(|e| e.from == from && e.to == to && e.kind == EdgeKind::Output)
    {
        return;
    }
    graph.edges.push(Edge {
        from,
        to: to.to_string(),
        kind: EdgeKind::Output,
        why: format!("terraform_output(\"{component}\", …): {what}"),
        change: Change::Same,
        in_cycle: false,
    });
}

/// Kustomizations, their sources and the Terraform outputs their substitutions read.
fn flux(rendered: &Rendered, reasons: &Reasons, graph: &mut Graph) -> Result<(), Diagnostic> {
    let mut kustomizations = BTreeMap::new();
    let mut sources = BTreeMap::new();
    for path in rendered.files.keys() {
        if let Some(rest) = path.strip_prefix("flux/kustomizations/") {
            if let Some(object) = file(rendered, path)? {
                let name = text(&object, &["metadata", "name"])
                    .unwrap_or(rest)
                    .to_string();
                kustomizations.insert(name, object);
            }
        } else if path.starts_with("flux/sources/") {
            // The gitops Namespace lives beside the sources; it is none.
            let object = file(rendered, path)?;
            if let Some(object) = object.filter(|o| text(o, &["kind"]) != Some("Namespace")) {
                let name = text(&object, &["metadata", "name"])
                    .unwrap_or_default()
                    .to_string();
                sources.insert(name, object);
            }
        }
    }
    let waiting = deferred_waits(rendered)?;
    for (name, object) in &kustomizations {
        let node = id(NodeKind::Kustomization, name);
        for dep in list(object, &["spec", "dependsOn"]) {
            if let Some(dep) = text(dep, &["name"]) {
                graph.edges.push(Edge {
                    from: id(NodeKind::Kustomization, dep),
                    to: node.clone(),
                    kind: EdgeKind::DependsOn,
                    why: reasons.depends_on(NodeKind::Kustomization, name, dep),
                    change: Change::Same,
                    in_cycle: false,
                });
            }
        }
        if let Some(source) = text(object, &["spec", "sourceRef", "name"]) {
            graph.edges.push(Edge {
                from: id(NodeKind::Source, source),
                to: node.clone(),
                kind: EdgeKind::Source,
                why: format!(
                    "reconciles from {} `{source}`",
                    text(object, &["spec", "sourceRef", "kind"]).unwrap_or("source")
                ),
                change: Change::Same,
                in_cycle: false,
            });
        }
        for from in list(object, &["spec", "postBuild", "substituteFrom"]) {
            let Some(map) = text(from, &["name"]) else {
                continue;
            };
            for (component, key) in waiting.get(map).into_iter().flatten() {
                push_output(
                    graph,
                    component,
                    &node,
                    &format!("substitution `{key}` of ConfigMap `{map}`"),
                );
            }
        }
        let mut details = Vec::new();
        if let Some(path) = text(object, &["spec", "path"]) {
            details.push(("path".to_string(), path.to_string()));
        }
        if let Some(source) = text(object, &["spec", "sourceRef", "name"]) {
            details.push(("source".to_string(), source.to_string()));
        }
        details.extend(reasons.defined(NodeKind::Kustomization, name));
        graph.nodes.push(Node {
            id: node,
            kind: NodeKind::Kustomization,
            name: name.clone(),
            details,
            change: Change::Same,
        });
    }
    for (name, object) in &sources {
        graph.nodes.push(source_node(name, object));
    }
    Ok(())
}

/// ConfigMap → the Terraform components its deferred values wait for, with the key
/// of each (from `flux/deferred.json`).
fn deferred_waits(
    rendered: &Rendered,
) -> Result<BTreeMap<String, Vec<(String, String)>>, Diagnostic> {
    let mut waiting: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    if let Some(deferred) = file(rendered, "flux/deferred.json")? {
        for (map, keys) in deferred.as_map().into_iter().flatten() {
            for (key, entry) in keys.as_map().into_iter().flatten() {
                for component in waited_for(entry) {
                    waiting
                        .entry(map.to_string())
                        .or_default()
                        .push((component, key.to_string()));
                }
            }
        }
    }
    Ok(waiting)
}

/// The node of a Flux source: its kind, URL and reference as details.
fn source_node(name: &str, object: &Value) -> Node {
    let mut details = Vec::new();
    if let Some(kind) = text(object, &["kind"]) {
        details.push(("kind".to_string(), kind.to_string()));
    }
    if let Some(url) = text(object, &["spec", "url"]) {
        details.push(("url".to_string(), url.to_string()));
    }
    for key in ["branch", "tag", "semver", "commit"] {
        if let Some(r) = text(object, &["spec", "ref", key]) {
            details.push((key.to_string(), r.to_string()));
        }
    }
    Node {
        id: id(NodeKind::Source, name),
        kind: NodeKind::Source,
        name: name.to_string(),
        details,
        change: Change::Same,
    }
}
