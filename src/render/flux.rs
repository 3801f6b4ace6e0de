//! Flux: under `flux/`, one Kustomization per Flux Kustomization of the blueprint
//! (plain entries, then each system's tiers, then the `crds` layer), the ConfigMaps
//! they substitute from and the GitRepository/OCIRepository of every source they use
//! (docs/render.md, Flux), plus a `kustomization.yaml` listing them all.

use super::terraform::sources;
use super::{json, lookup, obj, waits_for, ManifestFormat, Rendered};
use crate::compose::face::Composition;
use crate::compose::model::blueprint::component_value;
use crate::compose::model::duration::canonical;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::{BTreeMap, BTreeSet};

const KUSTOMIZE_API: &str = "kustomize.toolkit.fluxcd.io/v1";
const SOURCE_API: &str = "source.toolkit.fluxcd.io/v1";
/// Windsor's default gitops namespace (`constants.DefaultGitopsNamespace`).
const GITOPS_NAMESPACE: &str = "system-gitops";

struct Ctx<'a> {
    format: ManifestFormat,
    namespace: String,
    context: String,
    labels: Value,
    sources: BTreeMap<String, Map>,
    template: &'a Template,
    /// The project's git origin (host/path), for a primary repository with no URL.
    origin: Option<&'a str>,
    /// Blueprint ConfigMaps every Kustomization references: `values-common` first,
    /// then the rest by name (Windsor's order is random, reference Q4).
    shared_maps: Vec<String>,
    install_tiers: BTreeSet<String>,
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn text(m: &Map, key: &str) -> Option<String> {
    m.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A duration in Go's canonical spelling, as the API server stores it.
fn duration(m: &Map, key: &str, default: &str) -> Value {
    let given = text(m, key);
    let d = given.as_deref().unwrap_or(default);
    s(&canonical(d).unwrap_or_else(|| d.to_string()))
}

/// A substitution value as ConfigMap data holds it: a string.
fn data_string(v: &Value) -> String {
    match v {
        Value::Nil => String::new(),
        Value::Str(t) => t.to_string(),
        other => crate::value::json::compact(other),
    }
}

/// Writes the Flux inputs of `composition` into `out`: the gitops namespace, one
/// Kustomization (with its ConfigMap) per component, the CRD layers, the shared
/// ConfigMaps, the sources read, what waits for Terraform, and the index of it all.
pub fn render(
    composition: &Composition,
    template: &Template,
    format: ManifestFormat,
    origin: Option<&str>,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    let blueprint = composition.blueprint.as_map().cloned().unwrap_or_default();
    let config_maps = blueprint
        .get("configMaps")
        .and_then(Value::as_map)
        .cloned()
        .unwrap_or_default();
    let cx = Ctx::of(
        composition,
        &blueprint,
        &config_maps,
        template,
        format,
        origin,
    )?;
    let mut w = Written::default();
    w.resources.push(namespace(&cx, out)?);
    component_kustomizations(&cx, composition, &mut w, out)?;
    crd_layers(&cx, &blueprint, &mut w);
    shared_config_maps(&cx, &config_maps, &mut w, out)?;
    write_kustomizations(&cx, &mut w, out)?;
    write_sources(&cx, &blueprint, &mut w, out)?;
    write_index(w, out)
}

/// What the steps of [`render`] build up.
#[derive(Default)]
struct Written {
    /// The files the index lists.
    resources: Vec<String>,
    /// The sources (kind, name) the Kustomizations read.
    used: BTreeSet<(String, String)>,
    /// ConfigMap entries waiting for Terraform, by ConfigMap.
    deferred: Map,
    /// The Kustomizations to write, by name, with their specs.
    kustomizations: Vec<(std::sync::Arc<str>, Value)>,
}

impl<'a> Ctx<'a> {
    /// What every object of the render is written with.
    fn of(
        composition: &Composition,
        blueprint: &Map,
        config_maps: &Map,
        template: &'a Template,
        format: ManifestFormat,
        origin: Option<&'a str>,
    ) -> Result<Ctx<'a>, Vec<Diagnostic>> {
        let context = lookup(blueprint, &["metadata", "name"])
            .and_then(Value::as_str)
            .unwrap_or("local")
            .to_string();
        let namespace = lookup(&composition.context, &["gitops", "namespace"])
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(GITOPS_NAMESPACE)
            .to_string();
        if !is_dns_label(&namespace) {
            return Err(vec![Diagnostic::error(format!(
                "gitops.namespace `{namespace}` is not a Kubernetes namespace name (lowercase \
                 letters, digits and `-`, at most 63, starting and ending with a letter or digit)"
            ))]);
        }
        let mut labels = Map::default();
        labels.insert("windsorcli.dev/context".into(), s(&context));
        if let Some(id) = lookup(&composition.context, &["id"]).filter(|v| !v.is_nil()) {
            labels.insert("windsorcli.dev/context-id".into(), s(&data_string(id)));
        }
        let mut shared_maps: Vec<String> = config_maps.keys().map(|k| k.to_string()).collect();
        shared_maps.sort_by_key(|n| (n != "values-common", n.clone()));
        Ok(Ctx {
            format,
            namespace,
            context,
            labels: Value::map(labels),
            sources: sources(blueprint),
            template,
            origin,
            shared_maps,
            install_tiers: composition
                .flux
                .components
                .keys()
                .map(|k| crate::compose::model::tier_names::install(k))
                .collect(),
        })
    }
}

/// The gitops namespace, which Windsor applies first: everything else lives in it.
/// Beside the sources it is the prerequisite of, named `<kind>-<name>` as they are.
fn namespace(cx: &Ctx<'_>, out: &mut Rendered) -> Result<String, Vec<Diagnostic>> {
    let ns = obj([
        ("apiVersion", s("v1")),
        ("kind", s("Namespace")),
        (
            "metadata",
            obj([
                (
                    "labels",
                    obj([("app.kubernetes.io/managed-by", s("windsor-cli"))]),
                ),
                ("name", s(&cx.namespace)),
            ]),
        ),
    ]);
    cx.write(&format!("sources/namespace-{}", cx.namespace), &ns, out)
}

/// A Kustomization, with the ConfigMap of its substitutions, for each of the plain
/// kustomizations and the systems' tiers, as compose compiled and validated them.
fn component_kustomizations(
    cx: &Ctx<'_>,
    composition: &Composition,
    w: &mut Written,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    let all = &composition.kustomizations;
    let misnamed: Vec<Diagnostic> = all
        .components
        .values()
        .filter_map(|c| misnamed(c, composition))
        .collect();
    if !misnamed.is_empty() {
        return Err(misnamed);
    }
    for component in all.components.values() {
        let k = match component_value(component) {
            Value::Map(m) => (*m).clone(),
            _ => continue,
        };
        // Not applied on the way up: `destroyOnly` runs at teardown, and bpc honours a
        // literal `enabled: false` (Windsor ignores it, reference Q9).
        if matches!(k.get("destroyOnly"), Some(Value::Bool(true)))
            || matches!(k.get("enabled"), Some(Value::Bool(false)))
        {
            continue;
        }
        let name = component.id.clone();
        let mut refs = Vec::new();
        if let Some(Value::Map(subs)) = k.get("substitutions") {
            let cm_name = format!("values-{name}");
            let (data, waiting) = config_data(subs);
            if !waiting.is_empty() {
                for key in waiting.keys() {
                    out.deferred.push(format!("{cm_name}.{key}"));
                }
                w.deferred
                    .insert(cm_name.as_str().into(), Value::map(waiting));
            }
            let file = cx.write_config_map(&cm_name, data, out)?;
            w.resources.push(file);
            refs.push(cm_name);
        }
        for shared in &cx.shared_maps {
            if !refs.contains(shared) {
                refs.push(shared.clone());
            }
        }
        let spec = cx.spec(&k, component, composition, refs, &mut w.used, out)?;
        w.kustomizations.push((name, spec));
    }
    Ok(())
}

/// The blueprint's CRDs (`crds`, from the local template's source), then those a
/// source entry carries (a published blueprint's, S14: `crds-<source>`, read from
/// that source, reconciled hourly as the Windsor CLI writes it).
fn crd_layers(cx: &Ctx<'_>, blueprint: &Map, w: &mut Written) {
    let mut layers: Vec<(String, Option<String>, &str, &[Value])> = Vec::new();
    if let Some(crds) = blueprint.get("crds").and_then(Value::as_list) {
        layers.push(("crds".to_string(), None, "5m0s", crds));
    }
    for entry in blueprint
        .get("sources")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let Some(m) = entry.as_map() else { continue };
        let (Some(name), Some(crds)) = (text(m, "name"), m.get("crds").and_then(Value::as_list))
        else {
            continue;
        };
        layers.push((format!("crds-{name}"), Some(name), "1h0m0s", crds));
    }
    for (layer, source, interval, crds) in layers {
        if !crds.is_empty() {
            let (kind, src) = cx.source_ref(source.as_deref());
            w.used.insert((kind.clone(), src.clone()));
            let mut spec = Map::default();
            spec.insert(
                "sourceRef".into(),
                obj([("kind", s(&kind)), ("name", s(&src))]),
            );
            spec.insert("path".into(), s("kustomize/crds"));
            spec.insert("interval".into(), s(interval));
            spec.insert("retryInterval".into(), s("2m0s"));
            spec.insert("timeout".into(), s("5m0s"));
            spec.insert("wait".into(), Value::Bool(true));
            spec.insert("prune".into(), Value::Bool(false));
            spec.insert("deletionPolicy".into(), s("WaitForTermination"));
            spec.insert("components".into(), Value::list(crds.to_vec()));
            spec.insert(
                "commonMetadata".into(),
                obj([("labels", cx.labels.clone())]),
            );
            (w.kustomizations).push((std::sync::Arc::from(layer), Value::map(spec)));
        }
    }
}

/// The blueprint's `configMaps`, which every Kustomization references.
fn shared_config_maps(
    cx: &Ctx<'_>,
    config_maps: &Map,
    w: &mut Written,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    for (name, data) in config_maps {
        let (data, waiting) = config_data(data.as_map().unwrap_or(&Map::default()));
        if !waiting.is_empty() {
            for key in waiting.keys() {
                out.deferred.push(format!("{name}.{key}"));
            }
            w.deferred.insert(name.clone(), Value::map(waiting));
        }
        w.resources.push(cx.write_config_map(name, data, out)?);
    }
    Ok(())
}

/// Each Kustomization as a Flux object.
fn write_kustomizations(
    cx: &Ctx<'_>,
    w: &mut Written,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    for (name, spec) in std::mem::take(&mut w.kustomizations) {
        let object = obj([
            ("apiVersion", s(KUSTOMIZE_API)),
            ("kind", s("Kustomization")),
            (
                "metadata",
                cx.labelled_metadata(&name, spec_namespace(&spec, cx)),
            ),
            ("spec", strip_namespace(spec)),
        ]);
        w.resources
            .push(cx.write(&format!("kustomizations/{name}"), &object, out)?);
    }
    Ok(())
}

/// The sources the Kustomizations read. The blueprint's own repository is applied
/// whenever it has a URL, whether or not a kustomization reads it (as the Windsor CLI
/// does; with a published blueprint every kustomization may read that instead, S14).
fn write_sources(
    cx: &Ctx<'_>,
    blueprint: &Map,
    w: &mut Written,
    out: &mut Rendered,
) -> Result<(), Vec<Diagnostic>> {
    let own_url = blueprint
        .get("repository")
        .and_then(Value::as_map)
        .and_then(|m| text(m, "url"))
        .is_some_and(|u| !u.is_empty());
    if own_url {
        w.used.insert(cx.source_ref(None));
    }
    for (kind, name) in &w.used {
        if let Some(object) = cx.source_object(kind, name, blueprint, out) {
            let file = format!("sources/{}-{name}", kind.to_lowercase());
            w.resources.push(cx.write(&file, &object, out)?);
        }
    }
    Ok(())
}

/// What waits for Terraform (`flux/deferred.json`), and the index of every file.
fn write_index(w: Written, out: &mut Rendered) -> Result<(), Vec<Diagnostic>> {
    if !w.deferred.is_empty() {
        out.add(
            "flux/deferred.json",
            json(&Value::map(w.deferred), "flux/deferred.json")?,
        );
    }
    let mut resources = w.resources;
    resources.sort();
    let index = obj([
        ("apiVersion", s("kustomize.config.k8s.io/v1beta1")),
        ("kind", s("Kustomization")),
        (
            "resources",
            Value::list(resources.into_iter().map(Value::str).collect()),
        ),
    ]);
    out.add("flux/kustomization.yaml", crate::emit::to_yaml(&index));
    Ok(())
}

/// ConfigMap data and the entries left out because they still hold `${…}` (an
/// unresolved `terraform_output`, docs/render.md, Flux): `key → {expression, waitsFor}`.
fn config_data(subs: &Map) -> (Map, Map) {
    let (mut data, mut waiting) = (Map::default(), Map::default());
    let mut keys: Vec<_> = subs.iter().collect();
    keys.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in keys {
        let text = data_string(v);
        if text.contains("${") {
            let waits = waits_for(&text).into_iter().map(Value::str).collect();
            waiting.insert(
                k.clone(),
                obj([("expression", s(&text)), ("waitsFor", Value::list(waits))]),
            );
        } else {
            data.insert(k.clone(), s(&text));
        }
    }
    (data, waiting)
}

/// The object's namespace, carried in the spec map until the object is assembled.
fn spec_namespace(spec: &Value, cx: &Ctx<'_>) -> String {
    spec.as_map()
        .and_then(|m| text(m, "__namespace"))
        .unwrap_or_else(|| cx.namespace.clone())
}

fn strip_namespace(spec: Value) -> Value {
    match spec {
        Value::Map(m) => {
            let mut m = (*m).clone();
            m.shift_remove("__namespace");
            Value::map(m)
        }
        other => other,
    }
}

impl Ctx<'_> {
    /// A Kustomization's metadata: Windsor labels Kustomizations (and their
    /// `commonMetadata`) with the context, nothing else it applies.
    fn labelled_metadata(&self, name: &str, namespace: String) -> Value {
        obj([
            ("name", s(name)),
            ("namespace", Value::str(namespace)),
            ("labels", self.labels.clone()),
        ])
    }

    fn metadata(&self, name: &str, namespace: String) -> Value {
        obj([("name", s(name)), ("namespace", Value::str(namespace))])
    }

    fn write(
        &self,
        stem: &str,
        object: &Value,
        out: &mut Rendered,
    ) -> Result<String, Vec<Diagnostic>> {
        let (file, text) = match self.format {
            ManifestFormat::Yaml => (format!("{stem}.yaml"), crate::emit::to_yaml(object)),
            ManifestFormat::Json => (format!("{stem}.json"), json(object, stem)?),
        };
        out.add(format!("flux/{file}"), text);
        Ok(file)
    }

    fn write_config_map(
        &self,
        name: &str,
        data: Map,
        out: &mut Rendered,
    ) -> Result<String, Vec<Diagnostic>> {
        let object = obj([
            ("apiVersion", s("v1")),
            ("kind", s("ConfigMap")),
            ("metadata", self.metadata(name, self.namespace.clone())),
            ("data", Value::map(data)),
        ]);
        self.write(&format!("configmaps/{name}"), &object, out)
    }

    /// `(kind, name)` of the source a Kustomization reads: the blueprint's own
    /// repository (named after the context) for no source or a local `template`.
    fn source_ref(&self, source: Option<&str>) -> (String, String) {
        let own = || ("GitRepository".to_string(), self.context.clone());
        let Some(source) = source.filter(|s| !s.is_empty()) else {
            return own();
        };
        let url = self.sources.get(source).and_then(|m| text(m, "url"));
        match url {
            None if source == "template" => own(),
            Some(u) if u.starts_with("oci://") => ("OCIRepository".into(), source.into()),
            _ => ("GitRepository".into(), source.into()),
        }
    }

    /// The Kustomization's `dependsOn`, each in the gitops namespace; `None` when it
    /// has none. Kept as composed, a repeated name included: Windsor puts a resources
    /// tier's install tier first and then the variant's own list, which may name it
    /// again.
    fn depends_on(&self, k: &Map) -> Option<Value> {
        let list: Vec<Value> = k
            .get("dependsOn")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|d| d.as_str().filter(|d| !d.is_empty()))
            .map(|d| obj([("name", s(d)), ("namespace", s(&self.namespace))]))
            .collect();
        (!list.is_empty()).then(|| Value::list(list))
    }

    /// The spec of the Kustomization `component` stands for (`k`, its value).
    fn spec(
        &self,
        k: &Map,
        component: &crate::compose::model::component::Component,
        composition: &Composition,
        refs: Vec<String>,
        used: &mut BTreeSet<(String, String)>,
        out: &mut Rendered,
    ) -> Result<Value, Vec<Diagnostic>> {
        let name = component.id.as_ref();
        let (kind, src) = self.source_ref(text(k, "source").as_deref());
        let own = src == self.context && kind == "GitRepository";
        if let Some(named) = text(k, "source") {
            if named != "template" && !self.sources.contains_key(&named) {
                out.warnings.push(Diagnostic::warning(format!(
                    "kustomization `{name}` uses source `{named}`, which the blueprint's \
                     sources do not list; its {kind} is not rendered"
                )));
            }
        }
        used.insert((kind.clone(), src.clone()));
        let object_ns = text(k, "namespace").unwrap_or_else(|| self.namespace.clone());
        let mut source_ref = Map::default();
        source_ref.insert("kind".into(), s(&kind));
        source_ref.insert("name".into(), s(&src));
        if object_ns != self.namespace {
            source_ref.insert("namespace".into(), s(&self.namespace));
            if !refs.is_empty() {
                out.warnings.push(Diagnostic::warning(format!(
                    "kustomization `{name}` lives in namespace `{object_ns}` but its \
                     ConfigMaps are in `{}`: Flux looks for substituteFrom in the \
                     Kustomization's own namespace",
                    self.namespace
                )));
            }
        }
        let mut spec = Map::default();
        spec.insert("__namespace".into(), s(&object_ns));
        spec.insert("sourceRef".into(), Value::map(source_ref));
        spec.insert("path".into(), s(&flux_path(k, name)));
        spec.insert(
            "interval".into(),
            duration(k, "interval", if own { "5m" } else { "1h" }),
        );
        spec.insert("retryInterval".into(), duration(k, "retryInterval", "2m"));
        let timeout = if self.install_tiers.contains(name) {
            "10m"
        } else {
            "5m"
        };
        spec.insert("timeout".into(), duration(k, "timeout", timeout));
        if let Some(deps) = self.depends_on(k) {
            spec.insert("dependsOn".into(), deps);
        }
        apply_flags(k, &mut spec);
        if let Some(Value::List(c)) = k.get("components") {
            let c: Vec<Value> = c
                .iter()
                .filter(|v| v.as_str() != Some(""))
                .cloned()
                .collect();
            if !c.is_empty() {
                spec.insert("components".into(), Value::list(c));
            }
        }
        let patches = self.patches(name, component, composition)?;
        if !patches.is_empty() {
            spec.insert("patches".into(), Value::list(patches));
        }
        if !refs.is_empty() {
            let from = refs
                .iter()
                .map(|r| obj([("kind", s("ConfigMap")), ("name", s(r))]))
                .collect();
            spec.insert(
                "postBuild".into(),
                obj([("substituteFrom", Value::list(from))]),
            );
        }
        if let Some(t) = text(k, "targetNamespace") {
            spec.insert("targetNamespace".into(), s(&t));
        }
        if let Some(Value::Map(d)) = k.get("decryption") {
            spec.insert("decryption".into(), decryption(d));
        }
        spec.insert(
            "commonMetadata".into(),
            obj([("labels", self.labels.clone())]),
        );
        Ok(Value::map(spec))
    }

    /// `patches[]` as Flux takes them; a `path:` entry is read from the template and
    /// inlined (Windsor leaves it empty, reference Q3). Target fields are kept whole.
    fn patches(
        &self,
        name: &str,
        component: &crate::compose::model::component::Component,
        composition: &Composition,
    ) -> Result<Vec<Value>, Vec<Diagnostic>> {
        let Some(crate::compose::model::tracked::Tracked::List(items, _)) =
            component.get("patches")
        else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for item in items {
            let Value::Map(entry) = item.to_value() else {
                continue;
            };
            let patch = match (text(&entry, "patch"), text(&entry, "path")) {
                (Some(p), _) => p,
                (None, Some(path)) => self.read_patch(name, &path).map_err(|e| {
                    let origin = composition.origins.get(item.origin());
                    let d = Diagnostic::error(e);
                    vec![match origin.contributor {
                        crate::compose::model::origin::Contributor::Facet(_) => {
                            d.with_primary(origin.span, "the patch entry")
                        }
                        _ => d,
                    }]
                })?,
                (None, None) => continue,
            };
            let mut p = Map::default();
            p.insert("patch".into(), s(&patch));
            if let Some(Value::Map(t)) = entry.get("target") {
                p.insert("target".into(), Value::Map(t.clone()));
            }
            out.push(Value::map(p));
        }
        Ok(out)
    }

    fn read_patch(&self, name: &str, path: &str) -> Result<String, String> {
        let tree = &self.template.tree;
        let candidates = [path.to_string(), format!("kustomize/{path}")];
        for c in &candidates {
            if tree.is_file(c) {
                return tree.read_to_string(c).map_err(|e| e.to_string());
            }
        }
        Err(format!(
            "kustomization `{name}`: patch file `{path}` not found in the template \
             (looked for {})",
            candidates
                .iter()
                .map(|c| tree.describe(c))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The GitRepository/OCIRepository for a source (docs/render.md, Flux); `None` (with a
    /// warning) when there is no URL to point it at.
    /// The blueprint's own `repository`; with no URL in it (and not a dev context,
    /// which has one), the project's git origin on branch `main`, as Windsor's
    /// `resolveRepositoryDefaults` does.
    fn primary_repository(&self, blueprint: &Map) -> Option<Map> {
        let own = blueprint.get("repository").and_then(Value::as_map).cloned();
        match (own.as_ref().and_then(|e| text(e, "url")), self.origin) {
            (None, Some(origin)) => {
                let mut entry = own.unwrap_or_default();
                entry.insert("url".into(), s(origin));
                entry
                    .entry("ref".into())
                    .or_insert_with(|| obj([("branch", s("main"))]));
                Some(entry)
            }
            _ => own,
        }
    }

    fn source_object(
        &self,
        kind: &str,
        name: &str,
        blueprint: &Map,
        out: &mut Rendered,
    ) -> Option<Value> {
        let primary = name == self.context && !self.sources.contains_key(name);
        let entry = match primary {
            true => self.primary_repository(blueprint),
            false => self.sources.get(name).cloned(),
        };
        let Some(url) = entry.as_ref().and_then(|e| text(e, "url")) else {
            if self.sources.contains_key(name) || primary {
                out.warnings.push(Diagnostic::warning(format!(
                    "no URL for {kind} `{name}` (blueprint {}): it is not rendered",
                    if primary { "`repository`" } else { "`sources`" }
                )));
            }
            return None;
        };
        let entry = entry.unwrap_or_default();
        let r = entry
            .get("ref")
            .and_then(Value::as_map)
            .cloned()
            .unwrap_or_default();
        let mut spec = Map::default();
        let reference = |keys: &[(&str, &str)]| {
            let mut m = Map::default();
            for (from, to) in keys {
                if let Some(v) = text(&r, from) {
                    m.insert((*to).into(), s(&v));
                }
            }
            m
        };
        if kind == "OCIRepository" {
            let rest = url.trim_start_matches("oci://");
            let (base, tag) = match rest.rsplit_once('/') {
                Some((_, last)) if last.contains(':') => {
                    let (b, t) = url.rsplit_once(':').unwrap_or((url.as_str(), ""));
                    (b.to_string(), Some(t.to_string()))
                }
                _ => (url.clone(), None),
            };
            spec.insert("url".into(), s(&base));
            let mut rf = match tag {
                Some(t) => {
                    let mut m = Map::default();
                    m.insert("tag".into(), s(&t));
                    m
                }
                None => reference(&[("tag", "tag"), ("semver", "semver"), ("commit", "digest")]),
            };
            if rf.is_empty() {
                rf.insert("tag".into(), s("latest"));
            }
            spec.insert("ref".into(), Value::map(rf));
        } else {
            spec.insert("url".into(), s(&normalize_git_url(&url)));
            let mut rf = reference(&[
                ("branch", "branch"),
                ("tag", "tag"),
                ("semver", "semver"),
                ("commit", "commit"),
            ]);
            if rf.is_empty() && primary {
                rf.insert("branch".into(), s("main"));
            }
            if !rf.is_empty() {
                spec.insert("ref".into(), Value::map(rf));
            }
        }
        spec.insert(
            "interval".into(),
            s(if primary { "1m0s" } else { "1h0m0s" }),
        );
        spec.insert("timeout".into(), s("2m0s"));
        if let Some(secret) = text(&entry, "secretName") {
            spec.insert("secretRef".into(), obj([("name", s(&secret))]));
        }
        Some(obj([
            ("apiVersion", s(SOURCE_API)),
            ("kind", s(kind)),
            ("metadata", self.metadata(name, self.namespace.clone())),
            ("spec", Value::map(spec)),
        ]))
    }
}

/// `path`, else the name; `\` → `/`; under `kustomize/` (docs/render.md, Flux).
fn flux_path(k: &Map, name: &str) -> String {
    let p = text(k, "path")
        .unwrap_or_else(|| name.to_string())
        .replace('\\', "/");
    if p == "kustomize" || p.starts_with("kustomize/") {
        p
    } else {
        format!("kustomize/{p}")
    }
}

/// The longest Kustomization name: its `values-<name>` ConfigMap is an object name too.
const MAX_KUSTOMIZATION_NAME: usize = 253 - "values-".len();

/// Why a kustomization's name cannot name the Flux Kustomization (and ConfigMap)
/// render writes for it: Kubernetes would refuse the object at apply time, which the
/// Windsor CLI leaves to the cluster to say.
fn misnamed(
    component: &crate::compose::model::component::Component,
    composition: &Composition,
) -> Option<Diagnostic> {
    let name: &str = &component.id;
    let why = if name.len() > MAX_KUSTOMIZATION_NAME {
        format!("it is longer than {MAX_KUSTOMIZATION_NAME} characters")
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.'))
    {
        format!("it holds {c:?} (U+{:04X})", c as u32)
    } else if !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        "it does not start and end with a letter or digit".to_string()
    } else {
        return None;
    };
    let mut d = Diagnostic::error(format!(
        "kustomization `{}` cannot name a Kubernetes object: {why}",
        name.escape_debug()
    ))
    .with_help("Kubernetes object names are lowercase ASCII letters, digits, `-` and `.`, starting and ending with a letter or digit");
    if let Some(tracked) = component.get("name") {
        d = d.with_primary(
            composition.origins.span(tracked.origin()),
            "this name becomes the Flux Kustomization's metadata.name",
        );
    }
    Some(d)
}

/// An RFC 1123 label, as a Kubernetes namespace name must be.
fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Windsor's `NormalizeRemoteURL`: `git@h:p` → `ssh://git@h/p`; no scheme → https.
fn normalize_git_url(url: &str) -> String {
    if url.contains("://") {
        return url.to_string();
    }
    if let Some(rest) = url.strip_prefix("git@") {
        if let Some((host, path)) = rest.split_once(':') {
            return format!("ssh://git@{host}/{path}");
        }
    }
    format!("https://{url}")
}

/// The Kustomization's switches as Flux spells them: `wait` (omitted when false, as
/// Flux's `omitempty` leaves it), `force`, `prune`, and `destroy` as the deletion
/// policy.
fn apply_flags(k: &Map, spec: &mut Map) {
    let flag = |key: &str, default: bool| match k.get(key) {
        Some(Value::Bool(b)) => *b,
        _ => default,
    };
    if flag("wait", true) {
        spec.insert("wait".into(), Value::Bool(true));
    }
    if flag("force", false) {
        spec.insert("force".into(), Value::Bool(true));
    }
    spec.insert("prune".into(), Value::Bool(flag("prune", true)));
    let policy = if flag("destroy", true) {
        "WaitForTermination"
    } else {
        "MirrorPrune"
    };
    spec.insert("deletionPolicy".into(), s(policy));
}

/// A Kustomization's `decryption`: its provider and secret, as Flux reads them.
fn decryption(d: &Map) -> Value {
    let mut dec = Map::default();
    if let Some(p) = text(d, "provider") {
        dec.insert("provider".into(), s(&p));
    }
    let secret = d
        .get("secretRef")
        .and_then(Value::as_map)
        .and_then(|m| text(m, "name"));
    if let Some(secret) = secret {
        dec.insert("secretRef".into(), obj([("name", s(&secret))]));
    }
    Value::map(dec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names() {
        assert!(is_dns_label("system-gitops"));
        assert!(!is_dns_label("../x"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label("A"));
        assert!(!is_dns_label(""));
    }

    #[test]
    fn git_urls() {
        assert_eq!(
            normalize_git_url("git@github.com:a/b.git"),
            "ssh://git@github.com/a/b.git"
        );
        assert_eq!(
            normalize_git_url("github.com/a/b"),
            "https://github.com/a/b"
        );
        assert_eq!(normalize_git_url("http://x/y"), "http://x/y");
    }
}
