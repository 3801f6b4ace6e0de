//! The checks of a context's deployment as a whole, over every object it applies (the
//! rendered Flux objects and what each Kustomization builds): an object two
//! Kustomizations own, a HelmRelease whose chart source is not among the objects, an
//! object in a namespace nothing creates; and the directories a Kustomization names.

use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Namespaces a cluster has before anything is applied.
pub const PRE_EXISTING: [&str; 3] = ["default", "kube-system", "kube-public"];

/// One object the context applies.
#[derive(Clone, Debug)]
pub struct Placed {
    pub value: Json,
    /// The Flux Kustomization that builds it; `None` for a rendered object.
    pub owner: Option<String>,
    /// The tree file it came from (`kustomize/…`).
    pub file: Option<String>,
    /// Variables substituted into it with an empty value.
    pub empty: Vec<String>,
}

impl Placed {
    fn text(&self, pointer: &str) -> Option<&str> {
        self.value.pointer(pointer).and_then(Json::as_str)
    }

    pub fn kind(&self) -> &str {
        self.text("/kind").unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.text("/metadata/name").unwrap_or_default()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.text("/metadata/namespace").filter(|n| !n.is_empty())
    }

    /// `Kind/namespace/name` (`Kind/name` without a namespace).
    pub fn id(&self) -> String {
        match self.namespace() {
            Some(ns) => format!("{}/{ns}/{}", self.kind(), self.name()),
            None => format!("{}/{}", self.kind(), self.name()),
        }
    }

    /// The API group (`apps`, `` for the core group).
    fn group(&self) -> &str {
        let api = self.text("/apiVersion").unwrap_or_default();
        api.rsplit_once('/').map_or("", |(g, _)| g)
    }
}

/// A problem of the deployment, by index into the objects.
#[derive(Clone, Debug, PartialEq)]
pub enum Issue {
    /// `object` is also built by the owner of `first`.
    TwoOwners { object: usize, first: usize },
    /// The HelmRelease `object` reads its chart from `kind/namespace/name`, which no
    /// object is; `near` is the closest name of that kind.
    MissingChartSource {
        object: usize,
        field: &'static str,
        kind: String,
        namespace: String,
        name: String,
        near: Option<String>,
    },
    /// `object` lives in a namespace no object creates and no cluster has.
    MissingNamespace { object: usize, namespace: String },
    /// The HelmRelease `object` waits for the HelmRelease `namespace/name`, which no
    /// object is: Flux never installs it.
    MissingDependency {
        object: usize,
        namespace: String,
        name: String,
    },
}

/// The whole-deployment checks over `objects`; `gitops` is the gitops namespace
/// (created by Windsor before anything else).
pub fn check(objects: &[Placed], gitops: &str) -> Vec<Issue> {
    let mut issues = Vec::new();
    two_owners(objects, &mut issues);
    missing_namespaces(objects, gitops, &mut issues);
    helm_releases(objects, &mut issues);
    issues
}

/// An object that two Kustomizations apply.
fn two_owners(objects: &[Placed], issues: &mut Vec<Issue>) {
    let mut owners: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    for (i, o) in objects.iter().enumerate() {
        if o.owner.is_none() {
            continue;
        }
        let key = (
            o.group().to_string(),
            o.kind().to_string(),
            o.namespace().unwrap_or_default().to_string(),
            o.name().to_string(),
        );
        match owners.get(&key) {
            Some(&first) if objects[first].owner != o.owner => {
                issues.push(Issue::TwoOwners { object: i, first });
            }
            Some(_) => {}
            None => {
                owners.insert(key, i);
            }
        }
    }
}

/// An object in a namespace nothing creates (nor was there before).
fn missing_namespaces(objects: &[Placed], gitops: &str, issues: &mut Vec<Issue>) {
    let namespaces: BTreeSet<&str> = objects
        .iter()
        .filter(|o| o.kind() == "Namespace")
        .map(Placed::name)
        .chain(PRE_EXISTING)
        .chain([gitops])
        .collect();
    for (i, o) in objects.iter().enumerate() {
        if let Some(ns) = o.namespace() {
            if !namespaces.contains(ns) {
                issues.push(Issue::MissingNamespace {
                    object: i,
                    namespace: ns.to_string(),
                });
            }
        }
    }
}

/// A HelmRelease whose dependencies or chart source are not there.
fn helm_releases(objects: &[Placed], issues: &mut Vec<Issue>) {
    for (i, o) in objects.iter().enumerate() {
        if o.kind() != "HelmRelease" || !o.group().starts_with("helm.toolkit.fluxcd.io") {
            continue;
        }
        let reference = [
            ("spec.chartRef", "/spec/chartRef"),
            ("spec.chart.spec.sourceRef", "/spec/chart/spec/sourceRef"),
        ]
        .into_iter()
        .find_map(|(field, p)| Some((field, o.value.pointer(p)?)));
        for dep in o
            .value
            .pointer("/spec/dependsOn")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let name = dep.get("name").and_then(Json::as_str).unwrap_or_default();
            let namespace = dep
                .get("namespace")
                .and_then(Json::as_str)
                .or(o.namespace())
                .unwrap_or("default");
            let found = objects.iter().any(|s| {
                s.kind() == "HelmRelease"
                    && s.name() == name
                    && s.namespace().unwrap_or("default") == namespace
            });
            if !found {
                issues.push(Issue::MissingDependency {
                    object: i,
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                });
            }
        }
        let Some((field, reference)) = reference else {
            continue;
        };
        let text = |k: &str| reference.get(k).and_then(Json::as_str).unwrap_or_default();
        let (kind, name) = (text("kind"), text("name"));
        let namespace = match text("namespace") {
            "" => o.namespace().unwrap_or("default"),
            ns => ns,
        };
        let found = objects.iter().any(|s| {
            s.kind() == kind && s.name() == name && s.namespace().unwrap_or("default") == namespace
        });
        if !found {
            let near = closest(
                name,
                objects
                    .iter()
                    .filter(|s| s.kind() == kind)
                    .map(Placed::name),
            );
            issues.push(Issue::MissingChartSource {
                object: i,
                field,
                kind: kind.to_string(),
                namespace: namespace.to_string(),
                name: name.to_string(),
                near,
            });
        }
    }
}

/// The closest of `candidates` to `name`, when close enough to be a misspelling.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .filter(|c| *c != name)
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}

/// For a directory `rel` (`/`-separated) of `root` that does not exist: the closest
/// existing directory of the same parent, spelled as `rel` is. `None` when it exists.
pub fn missing_dir(root: &Path, rel: &str) -> Option<Option<String>> {
    if root.join(rel).is_dir() {
        return None;
    }
    let (parent, leaf) = rel.rsplit_once('/').unwrap_or(("", rel));
    let dirs: Vec<String> = std::fs::read_dir(root.join(parent))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .collect();
    Some(closest(leaf, dirs.iter().map(String::as_str)).map(|near| {
        if parent.is_empty() {
            near
        } else {
            format!("{parent}/{near}")
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn placed(value: Json, owner: Option<&str>) -> Placed {
        Placed {
            value,
            owner: owner.map(str::to_string),
            file: None,
            empty: Vec::new(),
        }
    }

    #[test]
    fn an_object_of_two_kustomizations_is_found_once() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}});
        let objects = vec![
            placed(cm.clone(), Some("one")),
            placed(cm.clone(), Some("two")),
        ];
        assert_eq!(
            check(&objects, "system-gitops"),
            vec![Issue::TwoOwners {
                object: 1,
                first: 0
            }]
        );
    }

    #[test]
    fn namespaces_must_be_created_or_pre_exist() {
        let objects = vec![
            placed(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
                Some("k"),
            ),
            placed(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "apps"}}),
                Some("k"),
            ),
            placed(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "kube-system"}}),
                Some("k"),
            ),
            placed(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "appz"}}),
                Some("k"),
            ),
        ];
        assert_eq!(
            check(&objects, "system-gitops"),
            vec![Issue::MissingNamespace {
                object: 3,
                namespace: "appz".into()
            }]
        );
    }

    #[test]
    fn a_helm_release_needs_its_chart_source() {
        let repo = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": {"name": "jetstack", "namespace": "pki"}});
        let release = |name: &str| {
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "cert-manager", "namespace": "pki"},
            "spec": {"chart": {"spec": {"chart": "x", "sourceRef": {"kind": "HelmRepository", "name": name}}}}})
        };
        let ok = vec![
            placed(repo.clone(), Some("k")),
            placed(release("jetstack"), Some("k")),
        ];
        assert!(check(&ok, "pki").is_empty());
        let wrong = vec![
            placed(repo, Some("k")),
            placed(release("jetstak"), Some("k")),
        ];
        assert_eq!(
            check(&wrong, "pki"),
            vec![Issue::MissingChartSource {
                object: 1,
                field: "spec.chart.spec.sourceRef",
                kind: "HelmRepository".into(),
                namespace: "pki".into(),
                name: "jetstak".into(),
                near: Some("jetstack".into()),
            }]
        );
    }
}
