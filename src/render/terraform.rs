//! Terraform: per component `terraform/<ID>/terraform.tfvars.json` (resolved inputs),
//! `deferred.json` (inputs that wait on another component) and `backend.tf.json`; and
//! `terraform/plan.json`, the components in apply order (docs/render.md, Terraform).

use super::module_variables;
use super::shim::{self, Remote};
use super::{json, lookup, obj, waits_for, Place, Rendered};
use crate::compose::face::Composition;
use crate::compose::model::component::Component;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use std::collections::BTreeMap;

/// Backend types the Windsor CLI accepts (docs/render.md, Terraform: `backend.tf.json`); `gcs`, `oss`, `http` are not.
const BACKENDS: [&str; 5] = ["none", "local", "s3", "kubernetes", "azurerm"];

pub fn render(
    composition: &Composition,
    place: &Place<'_>,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    let blueprint = composition.blueprint.as_map().cloned().unwrap_or_default();
    let context_name = lookup(&blueprint, &["metadata", "name"])
        .and_then(Value::as_str)
        .unwrap_or("local")
        .to_string();
    let backend = Backend::from_context(composition)?;
    let sources = sources(&blueprint);
    let mut plan = Vec::new();
    let mut ids = Vec::new();
    // What each component waits for: `dependsOn` and the components its deferred
    // inputs read outputs from (Windsor orders by `dependsOn` only).
    let mut waits: Vec<Vec<String>> = Vec::new();
    for component in composition.terraform.components.values() {
        let id = component.id.clone();
        let dir = format!("terraform/{id}");
        let (resolved, deferred) = split_inputs(component);
        waits.push(waits_of(component, &deferred));
        let deferred_names = write_deferred(&id, &dir, &deferred, out)?;
        let tfvars: Map = resolved.into_iter().map(|(k, v)| (k.into(), v)).collect();
        out.add(
            format!("{dir}/terraform.tfvars.json"),
            json(&Value::map(tfvars), &format!("{dir}/terraform.tfvars.json"))?,
        );
        let run_dir = local_module_dir(component, &sources);
        let remote = match &run_dir {
            Some(_) => None,
            None => remote_location(component, &sources),
        };
        // From the directory Terraform runs in back to the project root.
        let up = match (&run_dir, &remote) {
            (Some(run), _) => "../".repeat(segments(run)),
            (None, Some(_)) => shim_up(&id, &place.to_project),
            (None, None) => String::new(),
        };
        if let Some(config) = backend.config(&context_name, &id, &up) {
            out.add(format!("{dir}/backend.tf.json"), json(&config, "backend")?);
        }
        let mut entry = plan_entry(component, &dir, &sources, deferred_names);
        if let Some(location) = &remote {
            // Terraform runs in the shim, `dir` itself (a local module runs in the
            // project's `module` directory; saying so here would tie every plan to
            // where the tree is written).
            if let Value::Map(m) = &mut entry {
                std::sync::Arc::make_mut(m).insert("workdir".into(), Value::str(dir.as_str()));
            }
            let remote = Remote {
                id: &id,
                source: &location.source,
                url: location.url.as_deref(),
                subdir: location.subdir.clone(),
                address: &location.address,
            };
            let module = (place.modules)(&remote);
            let inputs = component.get("inputs").map(|t| t.to_value());
            let made = shim::shim(&remote, module, &dir, &up, inputs.as_ref());
            for (path, text) in made.files {
                out.add(path, text);
            }
            out.warnings.extend(made.warning);
            // Inputs against the module's variables, as for a local module (unless
            // that check already covers it: a published template's own modules).
            if let Some((at, variables)) = &made.variables {
                if !module_variables::checked_here(composition, &id) {
                    out.warnings.extend(module_variables::input_warnings(
                        composition,
                        &id,
                        component,
                        at,
                        variables,
                    ));
                }
            }
            if let Some(note) = made.note {
                if let Value::Map(m) = &mut entry {
                    std::sync::Arc::make_mut(m).insert("note".into(), Value::str(note.as_str()));
                }
                out.notes.push(note);
            }
        }
        plan.push(entry);
        ids.push(id);
    }
    let plan = obj([
        ("context", Value::str(context_name.as_str())),
        (
            "backend",
            Value::map(backend_entry(&backend, &blueprint, &ids)),
        ),
        ("components", Value::list(apply_order(plan, &ids, &waits))),
    ]);
    out.add("terraform/plan.json", json(&plan, "terraform/plan.json")?);
    Ok(())
}

/// `plan` reordered stably so that every component follows what it waits for; a
/// cycle (which composition would have reported for `dependsOn`) keeps list order.
fn apply_order(plan: Vec<Value>, ids: &[std::sync::Arc<str>], waits: &[Vec<String>]) -> Vec<Value> {
    let mut placed: Vec<bool> = vec![false; plan.len()];
    let mut order = Vec::with_capacity(plan.len());
    while order.len() < plan.len() {
        let ready = (0..plan.len()).find(|&i| {
            !placed[i]
                && waits[i].iter().all(|w| {
                    **w == *ids[i]
                        || ids
                            .iter()
                            .position(|x| **x == **w)
                            .is_none_or(|j| placed[j])
                })
        });
        // No component is ready only on a cycle: take the first left, in list order.
        let i = ready.unwrap_or_else(|| placed.iter().position(|p| !p).unwrap_or(0));
        placed[i] = true;
        order.push(i);
    }
    order.into_iter().map(|i| plan[i].clone()).collect()
}

/// Inputs split into those written to tfvars (keys sorted, nulls left out so the
/// module default applies) and those still holding an expression.
type Inputs = BTreeMap<String, Value>;

/// What a component waits for: its `dependsOn` and the components its deferred inputs
/// read outputs from.
fn waits_of(component: &Component, deferred: &Inputs) -> Vec<String> {
    let mut before: Vec<String> = component
        .get("dependsOn")
        .map(|d| d.to_value())
        .as_ref()
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    for value in deferred.values() {
        let mut texts = Vec::new();
        strings(value, &mut texts);
        before.extend(texts.iter().flat_map(|t| waits_for(t)));
    }
    before
}

/// Writes `<dir>/deferred.json` for the component `id`'s deferred inputs (none when it
/// has none); their names, for its plan entry.
fn write_deferred(
    id: &str,
    dir: &str,
    deferred: &Inputs,
    out: &mut Rendered,
) -> Result<Vec<Value>, Vec<Diagnostic>> {
    let mut names = Vec::new();
    if deferred.is_empty() {
        return Ok(names);
    }
    let mut list = Map::default();
    for (key, value) in deferred {
        names.push(Value::str(key.as_str()));
        out.deferred.push(format!("terraform.{id}.inputs.{key}"));
        list.insert(key.as_str().into(), deferred_entry(value));
    }
    out.add(
        format!("{dir}/deferred.json"),
        json(&Value::map(list), "deferred.json")?,
    );
    Ok(names)
}

/// The plan's `backend`: its type, and the bootstrap tier (`backend: <ID>`): that
/// component and every one before it, applied on local state first, then migrated
/// (docs/render.md, Terraform: `backend.tf.json`).
fn backend_entry(backend: &Backend, blueprint: &Map, ids: &[std::sync::Arc<str>]) -> Map {
    let mut entry = Map::default();
    entry.insert("type".into(), Value::str(backend.kind.as_str()));
    if let Some(tier_end) = blueprint.get("backend").and_then(Value::as_str) {
        if let Some(end) = ids.iter().position(|i| &**i == tier_end) {
            let tier = ids[..=end].iter().map(|i| Value::str(i.as_ref())).collect();
            entry.insert("bootstrap".into(), Value::list(tier));
        }
    }
    entry
}

fn split_inputs(component: &Component) -> (Inputs, Inputs) {
    let (mut resolved, mut deferred) = (Inputs::new(), Inputs::new());
    let Some(Value::Map(inputs)) = component.get("inputs").map(|t| t.to_value()) else {
        return (resolved, deferred);
    };
    for (k, v) in inputs.iter() {
        if v.is_nil() {
            continue;
        }
        if has_expression(v) {
            deferred.insert(k.to_string(), v.clone());
        } else {
            resolved.insert(k.to_string(), tfvars_value(v));
        }
    }
    (resolved, deferred)
}

/// An input as Terraform receives it from Windsor's HCL tfvars (docs/render.md,
/// Terraform): a multi-line string is a heredoc there, so it ends in a newline; a
/// number is an HCL number, so an integral float is written as an integer (`10`, not
/// `10.0`), at any depth. Windsor also parses heredoc text as YAML and writes it back
/// (reference Q6), which can rewrite it (a `#!` line is dropped, plain lines fold into
/// one); bpc does not.
fn tfvars_value(v: &Value) -> Value {
    let v = integral_numbers(v);
    match v {
        Value::Str(t) if t.contains('\n') && !t.ends_with('\n') => Value::str(format!("{t}\n")),
        other => other,
    }
}

fn integral_numbers(v: &Value) -> Value {
    match v {
        // Within ±2^53 every integral float is exactly an integer.
        Value::Float(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => {
            Value::Int(*f as i64)
        }
        Value::List(items) => Value::list(items.iter().map(integral_numbers).collect()),
        Value::Map(m) => Value::map(
            m.iter()
                .map(|(k, v)| (k.clone(), integral_numbers(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// True when any string in `v` still holds `${` (Windsor leaves such inputs out too).
fn has_expression(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.contains("${"),
        Value::List(items) => items.iter().any(has_expression),
        Value::Map(m) => m.values().any(has_expression),
        _ => false,
    }
}

fn strings<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::Str(s) => out.push(s),
        Value::List(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Map(m) => m.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// `{expression, waitsFor}` for a `{expression: …}` marker (S10) or a plain string;
/// `{value, waitsFor}` when the expression sits inside a list or map.
fn deferred_entry(value: &Value) -> Value {
    let mut texts = Vec::new();
    strings(value, &mut texts);
    let mut waits: Vec<String> = Vec::new();
    for t in &texts {
        for w in waits_for(t) {
            if !waits.contains(&w) {
                waits.push(w);
            }
        }
    }
    let waits = Value::list(waits.into_iter().map(Value::str).collect());
    let marker = value
        .as_map()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.get("expression"))
        .or(matches!(value, Value::Str(_)).then_some(value));
    match marker {
        Some(expression) => obj([("expression", expression.clone()), ("waitsFor", waits)]),
        None => obj([("value", value.clone()), ("waitsFor", waits)]),
    }
}

/// Blueprint sources by name.
pub(crate) fn sources(blueprint: &Map) -> BTreeMap<String, Map> {
    blueprint
        .get("sources")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_map)
        .filter_map(|m| {
            let name = m.get("name")?.as_str()?.to_string();
            Some((name, m.clone()))
        })
        .collect()
}

fn text<'m>(m: &'m Map, key: &str) -> Option<&'m str> {
    m.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Where a remote module is: the source's URL, `<pathPrefix>/<path>` inside it and
/// the address Terraform fetches.
pub(crate) struct Location {
    pub source: String,
    pub url: Option<String>,
    pub subdir: String,
    pub address: String,
}

/// The module address Terraform fetches for a component with a remote source
/// (docs/render.md, Terraform: `plan.json`); `None` for a local module (`terraform/<path>` in the project).
fn module_address(source: &str, path: &str, sources: &BTreeMap<String, Map>) -> Option<String> {
    location(source, path, sources).map(|l| l.address)
}

fn location(source: &str, path: &str, sources: &BTreeMap<String, Map>) -> Option<Location> {
    let (url, prefix, r#ref) = match sources.get(source) {
        Some(s) => {
            let url = text(s, "url")?.to_string();
            let prefix = text(s, "pathPrefix").unwrap_or("terraform").to_string();
            let r = s.get("ref").and_then(Value::as_map);
            let r#ref = ["commit", "semver", "tag", "branch"]
                .iter()
                .find_map(|k| r.and_then(|r| text(r, k)))
                .unwrap_or("")
                .to_string();
            (url, prefix, r#ref)
        }
        // A URL given directly as the source.
        None if source.contains("://") || source.contains('@') => {
            (source.to_string(), "terraform".to_string(), String::new())
        }
        None => return None,
    };
    let subdir = format!("{prefix}/{path}");
    let address = if let Some(rest) = url.strip_prefix("oci://") {
        let tagged = rest
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains(':'));
        if tagged {
            format!("{url}//{subdir}")
        } else {
            format!("{url}:{ref}//{subdir}")
        }
    } else {
        format!("{url}//{subdir}?ref={ref}")
    };
    Some(Location {
        source: source.to_string(),
        url: Some(url),
        subdir,
        address,
    })
}

/// The remote module of a component (one with a `source` that has a URL).
fn remote_location(c: &Component, sources: &BTreeMap<String, Map>) -> Option<Location> {
    let field = |k: &str| {
        c.get(k)
            .map(|t| t.to_value())
            .and_then(|v| v.as_str().map(str::to_string))
    };
    let path = field("path").unwrap_or_default();
    let source = field("source").filter(|s| !s.is_empty())?;
    location(&source, &path, sources)
}

fn segments(path: &str) -> usize {
    path.split('/').filter(|s| !s.is_empty()).count()
}

/// From a shim directory `terraform/<ID>` of the tree back to the project root:
/// `../` for each segment, then the path from the tree to the project.
fn shim_up(id: &str, to_project: &str) -> String {
    let mut up = "../".repeat(1 + segments(id));
    if !to_project.is_empty() {
        up.push_str(to_project.trim_end_matches('/'));
        up.push('/');
    }
    up
}

/// `terraform/<path>` for a component whose module is the project's own (no remote
/// source), when that path is a plain relative one; `None` otherwise.
fn local_module_dir(c: &Component, sources: &BTreeMap<String, Map>) -> Option<String> {
    let field = |k: &str| {
        c.get(k)
            .map(|t| t.to_value())
            .and_then(|v| v.as_str().map(str::to_string))
    };
    let path = field("path").unwrap_or_default();
    let remote = field("source")
        .filter(|s| !s.is_empty())
        .and_then(|s| module_address(&s, &path, sources))
        .is_some();
    let plain = !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    (!remote && plain).then(|| format!("terraform/{path}"))
}

fn plan_entry(
    c: &Component,
    dir: &str,
    sources: &BTreeMap<String, Map>,
    deferred: Vec<Value>,
) -> Value {
    let field = |k: &str| c.get(k).map(|t| t.to_value());
    let path = field("path")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut m = Map::default();
    m.insert("id".into(), Value::str(c.id.as_ref()));
    m.insert("dir".into(), Value::str(dir));
    m.insert("path".into(), Value::str(path.as_str()));
    let source = field("source")
        .and_then(|v| v.as_str().map(str::to_string))
        .filter(|s| !s.is_empty());
    // `template` without a URL and `user` are local (docs/render.md, Terraform: `plan.json`).
    let address = source
        .as_deref()
        .and_then(|s| module_address(s, &path, sources));
    if let Some(s) = &source {
        m.insert("source".into(), Value::str(s.as_str()));
    }
    match address {
        Some(a) => m.insert("module".into(), Value::str(a)),
        None => m.insert("module".into(), Value::str(format!("terraform/{path}"))),
    };
    for key in ["dependsOn", "parallelism", "enabled", "destroy"] {
        if let Some(v) = field(key) {
            m.insert(key.into(), v);
        }
    }
    if !deferred.is_empty() {
        m.insert("deferred".into(), Value::list(deferred));
    }
    Value::map(m)
}

/// The backend the context selects: `terraform.backend.*` of the context values.
struct Backend {
    kind: String,
    prefix: String,
    fields: Option<Map>,
}

impl Backend {
    fn from_context(composition: &Composition) -> Result<Backend, Vec<Diagnostic>> {
        let ctx = &composition.context;
        let kind = match lookup(ctx, &["terraform", "backend", "type"]) {
            None | Some(Value::Nil) => "local".to_string(),
            Some(Value::Str(s)) if BACKENDS.contains(&&**s) => s.to_string(),
            Some(other) => {
                let shown = match other {
                    Value::Str(s) => s.to_string(),
                    v => crate::value::json::compact(v),
                };
                // Name the value layer that set it (the last one holding the key).
                let layer = composition
                    .layers
                    .iter()
                    .rev()
                    .find(|l| {
                        l.value
                            .as_map()
                            .and_then(|m| lookup(m, &["terraform", "backend", "type"]))
                            .is_some()
                    })
                    .map(|l| l.name.clone())
                    .unwrap_or_else(|| "the context values".to_string());
                return Err(vec![Diagnostic::error(format!(
                    "unknown terraform backend type `{shown}` (set in {layer} at \
                     terraform.backend.type); supported: {}",
                    BACKENDS.join(", ")
                ))]);
            }
        };
        let prefix = lookup(ctx, &["terraform", "backend", "prefix"])
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let fields = lookup(ctx, &["terraform", "backend", &kind])
            .and_then(Value::as_map)
            .cloned();
        Ok(Backend {
            kind,
            prefix,
            fields,
        })
    }

    /// `{"terraform": {"backend": {"<type>": {…}}}}` for component `id`; `None` for
    /// `none`. Keys sorted; the context's own fields win over the derived key. `up`
    /// leads from the directory Terraform runs in back to the project root (a local
    /// state path is relative to it).
    fn config(&self, context: &str, id: &str, up: &str) -> Option<Value> {
        let mut config: BTreeMap<String, Value> = BTreeMap::new();
        let p = &self.prefix;
        match self.kind.as_str() {
            "none" => return None,
            "local" => {
                // Windsor's state path, relative to the directory Terraform runs in
                // (`terraform/<path>` of the project for a local module, the shim's
                // `terraform/<ID>` of the tree for a remote one); the
                // `terraform.backend.local.path` setting is ignored, as in Windsor.
                let sub = if p.is_empty() {
                    String::new()
                } else {
                    format!("/{}", p.trim_matches('/'))
                };
                config.insert(
                    "path".into(),
                    Value::str(format!(
                        "{up}.windsor/contexts/{context}/.tfstate{sub}/{id}/terraform.tfstate"
                    )),
                );
            }
            "kubernetes" => {
                config.insert("secret_suffix".into(), Value::str(secret_suffix(p, id)));
            }
            _ => {
                config.insert(
                    "key".into(),
                    Value::str(format!("{p}{id}/terraform.tfstate")),
                );
            }
        }
        if self.kind != "local" {
            for (k, v) in self.fields.iter().flat_map(|m| m.iter()) {
                if !v.is_nil() {
                    config.insert(k.to_string(), v.clone());
                }
            }
        }
        let body: Map = config.into_iter().map(|(k, v)| (k.into(), v)).collect();
        let mut kind = Map::default();
        kind.insert(self.kind.as_str().into(), Value::map(body));
        Some(obj([("terraform", obj([("backend", Value::map(kind))]))]))
    }
}

/// Windsor's `sanitizeForK8s`: prefix (`/` → `-`) and ID joined by `-`, lower-case,
/// runs outside `[a-z0-9-]` become `-`, trimmed, at most 63 characters.
fn secret_suffix(prefix: &str, id: &str) -> String {
    let prefix = prefix.replace('/', "-");
    let joined = if prefix.is_empty() {
        id.to_string()
    } else {
        format!("{prefix}-{id}")
    };
    let mut out = String::new();
    let mut in_run = false;
    for c in joined.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let trimmed = out.trim_matches('-');
    trimmed.chars().take(63).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_secret_suffix() {
        assert_eq!(secret_suffix("acme/", "Cluster_A"), "acme--cluster-a");
        assert_eq!(secret_suffix("", "network/vpc"), "network-vpc");
    }

    #[test]
    fn module_addresses() {
        let mut s = BTreeMap::new();
        let src = |url: &str| {
            let mut m = Map::default();
            m.insert("url".into(), Value::str(url));
            m
        };
        s.insert("core".to_string(), src("oci://ghcr.io/acme/core:v1.2.0"));
        s.insert("git".to_string(), src("github.com/acme/mods"));
        assert_eq!(
            module_address("core", "cluster/talos", &s).as_deref(),
            Some("oci://ghcr.io/acme/core:v1.2.0//terraform/cluster/talos")
        );
        assert_eq!(
            module_address("git", "net", &s).as_deref(),
            Some("github.com/acme/mods//terraform/net?ref=")
        );
        assert_eq!(module_address("template", "net", &s), None);
    }
}
