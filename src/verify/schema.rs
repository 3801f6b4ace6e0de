//! Validating built objects: against the `openAPIV3Schema` of their CRD when the CRD is
//! in the context's build, else the vendored Flux CRDs for the Flux kinds bpc renders,
//! else the vendored Kubernetes OpenAPI definitions (one minor version, see
//! `schemas/README.md`). A kind with none of these is unchecked, and said so.

use serde_json::Value as Json;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// The Kubernetes version whose definitions are vendored.
pub const KUBERNETES_VERSION: &str = "1.32";

const KUBERNETES: &[u8] = include_bytes!("schemas/kubernetes-v1.32.json.gz");

const FLUX_CRDS: [&str; 3] = [
    include_str!("schemas/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
    include_str!("schemas/flux/source.toolkit.fluxcd.io_gitrepositories.yaml"),
    include_str!("schemas/flux/source.toolkit.fluxcd.io_ocirepositories.yaml"),
];

/// Where an object's schema came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A CRD of the context's build, by name.
    Crd(String),
    /// A CRD given with `--crds`, by name and the file it was read from.
    Given { name: String, file: String },
    /// A Flux CRD bpc vendors.
    Flux(String),
    /// The vendored Kubernetes definitions.
    Kubernetes,
}

impl Origin {
    pub fn describe(&self) -> String {
        match self {
            Origin::Crd(name) => format!("the openAPIV3Schema of CRD `{name}`"),
            Origin::Given { name, file } => {
                format!("the openAPIV3Schema of CRD `{name}` (given with --crds, {file})")
            }
            Origin::Flux(name) => format!("the openAPIV3Schema of Flux's CRD `{name}` (vendored)"),
            Origin::Kubernetes => format!("the Kubernetes {KUBERNETES_VERSION} OpenAPI schema"),
        }
    }
}

/// The result of validating one object.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Valid,
    /// What is wrong (`/spec/replicas: "x" is not of type "integer"`), with the schema.
    Invalid(Vec<String>, Origin),
    /// No schema knows the kind.
    Unchecked,
}

/// CRDs by the kinds they define: `(apiVersion, kind)` → (schema, where it is from).
/// The first definition of a kind stays.
#[derive(Clone, Default)]
pub struct Crds {
    by_kind: HashMap<(String, String), (Arc<Json>, Origin)>,
}

impl Crds {
    /// Adds the versions of `object` when it is a CustomResourceDefinition of the
    /// context's build.
    pub fn add(&mut self, object: &Json) {
        self.add_from(object, Origin::Crd);
    }

    /// Adds the versions of `object` when it is a CustomResourceDefinition read from
    /// `file` (given with `--crds`); whether it was one.
    pub fn add_given(&mut self, object: &Json, file: &str) -> bool {
        self.add_from(object, |name| Origin::Given {
            name,
            file: file.to_string(),
        })
    }

    fn add_from(&mut self, object: &Json, origin: impl Fn(String) -> Origin) -> bool {
        if object.get("kind").and_then(Json::as_str) != Some("CustomResourceDefinition") {
            return false;
        }
        for (key, schema, name) in crd_versions(object) {
            self.by_kind.entry(key).or_insert((schema, origin(name)));
        }
        true
    }

    /// Adds the kinds of `other` that these CRDs do not define.
    pub fn fill_from(&mut self, other: &Crds) {
        for (key, value) in &other.by_kind {
            self.by_kind
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
    }

    /// How many kinds (and versions) are defined.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_kind.len()
    }

    fn get(&self, api_version: &str, kind: &str) -> Option<&(Arc<Json>, Origin)> {
        self.by_kind
            .get(&(api_version.to_string(), kind.to_string()))
    }
}

/// `((apiVersion, kind), schema, CRD name)` of every version of a CRD with a schema.
fn crd_versions(object: &Json) -> Vec<((String, String), Arc<Json>, String)> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let (Some(group), Some(kind)) = (
        object.pointer("/spec/group").and_then(Json::as_str),
        object.pointer("/spec/names/kind").and_then(Json::as_str),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for version in object
        .pointer("/spec/versions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(v), Some(schema)) = (
            version.get("name").and_then(Json::as_str),
            version.pointer("/schema/openAPIV3Schema"),
        ) else {
            continue;
        };
        let mut schema = schema.clone();
        openapi_to_json_schema(&mut schema);
        out.push((
            (format!("{group}/{v}"), kind.to_string()),
            Arc::new(schema),
            name.clone(),
        ));
    }
    out
}

/// OpenAPI's `nullable: true` as JSON Schema's `null` type, recursively; a `pattern`
/// with Go's inline flags (`(?i)`), which ECMA regular expressions lack, is dropped.
fn openapi_to_json_schema(schema: &mut Json) {
    match schema {
        Json::Object(map) => {
            if map
                .get("pattern")
                .and_then(Json::as_str)
                .is_some_and(|p| p.contains("(?"))
            {
                map.remove("pattern");
            }
            if map.get("nullable") == Some(&Json::Bool(true)) {
                if let Some(Json::String(t)) = map.get("type").cloned() {
                    map.insert("type".into(), serde_json::json!([t, "null"]));
                }
            }
            for v in map.values_mut() {
                openapi_to_json_schema(v);
            }
        }
        Json::Array(items) => items.iter_mut().for_each(openapi_to_json_schema),
        _ => {}
    }
}

/// The vendored Kubernetes definitions and an index from kind to definition.
struct Kubernetes {
    document: Json,
    by_kind: HashMap<(String, String), String>,
}

fn kubernetes() -> Option<&'static Kubernetes> {
    static LOADED: OnceLock<Option<Kubernetes>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            use std::io::Read;
            let mut text = String::new();
            flate2::read::GzDecoder::new(KUBERNETES)
                .read_to_string(&mut text)
                .ok()?;
            let document: Json = serde_json::from_str(&text).ok()?;
            let mut by_kind = HashMap::new();
            for (name, def) in document.get("$defs")?.as_object()? {
                for gvk in def
                    .get("x-kubernetes-group-version-kind")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    let group = gvk.get("group").and_then(Json::as_str).unwrap_or_default();
                    let version = gvk
                        .get("version")
                        .and_then(Json::as_str)
                        .unwrap_or_default();
                    let kind = gvk.get("kind").and_then(Json::as_str).unwrap_or_default();
                    let api = if group.is_empty() {
                        version.to_string()
                    } else {
                        format!("{group}/{version}")
                    };
                    by_kind.insert((api, kind.to_string()), name.clone());
                }
            }
            Some(Kubernetes { document, by_kind })
        })
        .as_ref()
}

/// The Flux CRDs bpc vendors, parsed once.
fn flux() -> &'static Crds {
    static LOADED: OnceLock<Crds> = OnceLock::new();
    LOADED.get_or_init(|| {
        let mut crds = Crds::default();
        for text in FLUX_CRDS {
            for doc in super::build::documents(text) {
                if let Ok(object) = super::build::parse(doc) {
                    crds.add_from(&object, Origin::Flux);
                }
            }
        }
        crds
    })
}

type Compiled = Arc<Result<jsonschema::Validator, String>>;

/// Compiled validators and results, shared by every context of a run: one object built
/// once and substituted the same way in many contexts is validated once.
#[derive(Default)]
pub struct Validators {
    compiled: Mutex<HashMap<String, Compiled>>,
    verdicts: Mutex<HashMap<(String, u64), Verdict>>,
}

impl Validators {
    /// Validates `object` against the schema of its kind; `crds` are the context's.
    pub fn check(&self, crds: &Crds, object: &Json) -> Verdict {
        let api = object
            .get("apiVersion")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let kind = object
            .get("kind")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let (key, origin, schema): (String, Origin, Box<dyn Fn() -> Json>) =
            if let Some((schema, origin)) = crds.get(api, kind) {
                let s = schema.clone();
                (
                    format!("crd:{api}/{kind}:{:x}", hash_json(schema)),
                    origin.clone(),
                    Box::new(move || (*s).clone()),
                )
            } else if let Some((schema, origin)) = flux().get(api, kind) {
                let s = schema.clone();
                (
                    format!("flux:{api}/{kind}"),
                    origin.clone(),
                    Box::new(move || (*s).clone()),
                )
            } else if let Some(k8s) = kubernetes() {
                let Some(def) = k8s.by_kind.get(&(api.to_string(), kind.to_string())) else {
                    return Verdict::Unchecked;
                };
                let def = def.clone();
                (
                    format!("k8s:{def}"),
                    Origin::Kubernetes,
                    Box::new(move || {
                        let mut root = serde_json::Map::new();
                        root.insert("$ref".into(), Json::String(format!("#/$defs/{def}")));
                        root.insert("$defs".into(), k8s.document["$defs"].clone());
                        Json::Object(root)
                    }),
                )
            } else {
                return Verdict::Unchecked;
            };
        let memo_key = (key.clone(), hash_json(object));
        if let Some(v) = self.lock_verdicts().get(&memo_key) {
            return v.clone();
        }
        let validator = self.compiled(&key, &origin, schema);
        let verdict = match validator.as_ref() {
            // A schema the validator cannot take checks nothing.
            Err(_) => Verdict::Unchecked,
            Ok(v) => {
                let errors: Vec<String> = v
                    .iter_errors(object)
                    .take(5)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        if at.is_empty() {
                            e.to_string()
                        } else {
                            format!("{at}: {e}")
                        }
                    })
                    .collect();
                if errors.is_empty() {
                    Verdict::Valid
                } else {
                    Verdict::Invalid(errors, origin)
                }
            }
        };
        self.lock_verdicts().insert(memo_key, verdict.clone());
        verdict
    }

    fn lock_verdicts(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Verdict>> {
        self.verdicts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn compiled(&self, key: &str, origin: &Origin, schema: Box<dyn Fn() -> Json>) -> Compiled {
        if let Some(c) = self
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return c.clone();
        }
        let draft = match origin {
            Origin::Kubernetes => jsonschema::Draft::Draft202012,
            _ => jsonschema::Draft::Draft4,
        };
        let built = jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(false)
            .build(&schema())
            .map_err(|e| e.to_string());
        let compiled = Arc::new(built);
        self.compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), compiled.clone());
        compiled
    }
}

fn hash_json(value: &Json) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn core_kinds_are_checked_against_the_kubernetes_definitions() {
        let v = Validators::default();
        let crds = Crds::default();
        let good = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
        assert_eq!(v.check(&crds, &good), Verdict::Valid);
        let bad = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": 1}});
        assert!(
            matches!(v.check(&crds, &bad), Verdict::Invalid(e, Origin::Kubernetes) if e[0].starts_with("/data/k"))
        );
        let unknown = json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "a"}});
        assert_eq!(v.check(&crds, &unknown), Verdict::Unchecked);
    }

    #[test]
    fn flux_kinds_are_checked_against_the_vendored_crds() {
        let v = Validators::default();
        let bad = json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "a"}, "spec": {"interval": "5m", "prune": "yes",
            "sourceRef": {"kind": "GitRepository", "name": "x"}}});
        assert!(
            matches!(v.check(&Crds::default(), &bad), Verdict::Invalid(e, Origin::Flux(_)) if e[0].contains("/spec/prune"))
        );
    }

    #[test]
    fn a_crd_of_the_build_checks_its_kind() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.x.io"},
            "spec": {"group": "x.io", "names": {"kind": "Thing"}, "versions": [{"name": "v1",
              "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"size": {"type": "integer", "nullable": true}}}}}}}]}});
        let mut crds = Crds::default();
        crds.add(&crd);
        let v = Validators::default();
        let ok = json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": {"size": null}});
        assert_eq!(v.check(&crds, &ok), Verdict::Valid);
        let bad = json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": {"size": "big"}});
        assert!(
            matches!(v.check(&crds, &bad), Verdict::Invalid(_, Origin::Crd(n)) if n == "things.x.io")
        );
    }
}
