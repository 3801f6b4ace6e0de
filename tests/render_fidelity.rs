//! Render fidelity: every context of `tests/conformance/windsor-render-eaa2bcea/` renders
//! to what the Windsor CLI applies and writes (its `objects.yaml` and tfvars values),
//! object by object and field by field. The template is the windsor-core eaa2bcea corpus
//! already in `tests/conformance/windsor-core-eaa2bcea/` (the same files); the set's
//! README says where the expected files come from.
//!
//! The only tolerance is the documented one (docs/render.md, Flux): a ConfigMap key
//! Windsor writes as raw `${terraform_output(…)}` text is one bpc leaves out and lists in
//! `flux/deferred.json`. Windsor's API-server noise (`status: {}`, a null
//! `creationTimestamp`) is dropped before comparing.

use crate::common::*;
use bpc::files::{render as show, FileMap};
use bpc::render::{ManifestFormat, Rendered};
use bpc::session::{Options, Session};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

const SET: &str = "tests/conformance/windsor-render-eaa2bcea";

/// Every YAML document of `text` as JSON, through bpc's own loader.
fn documents(text: &str) -> Vec<Value> {
    let nodes = bpc::yaml::parse_all(text, bpc::files::span::FileId(0)).expect("yaml");
    nodes
        .iter()
        .map(|n| serde_json::from_str(&bpc::value::json::compact(&n.to_value())).expect("json"))
        .filter(|v: &Value| !v.is_null())
        .collect()
}

fn key(object: &Value) -> (String, String) {
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (kind, name)
}

/// Drops what the API server adds or ignores: an empty `status`, a null
/// `metadata.creationTimestamp`.
fn without_noise(mut object: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        if map.get("status") == Some(&Value::Object(Map::new())) {
            map.remove("status");
        }
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            if meta.get("creationTimestamp") == Some(&Value::Null) {
                meta.remove("creationTimestamp");
            }
        }
    }
    object
}

/// `path → leaf` of a JSON value (an empty map or list is a leaf).
fn flatten(value: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(v, p, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(v, format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

/// The differing paths of two values, field by field.
fn field_diffs(windsor: &Value, bpc: &Value) -> Vec<String> {
    let (mut w, mut b) = (BTreeMap::new(), BTreeMap::new());
    flatten(windsor, String::new(), &mut w);
    flatten(bpc, String::new(), &mut b);
    let paths: std::collections::BTreeSet<&String> = w.keys().chain(b.keys()).collect();
    paths
        .into_iter()
        .filter(|p| w.get(*p) != b.get(*p))
        .map(|p| {
            let shown = |v: Option<&Value>| {
                v.map_or("(absent)".to_string(), |v| {
                    let t = v.to_string();
                    t.chars().take(120).collect()
                })
            };
            format!("{p}: windsor={} bpc={}", shown(w.get(p)), shown(b.get(p)))
        })
        .collect()
}

/// The rendered Flux objects by (kind, name), and the deferred ConfigMap keys.
fn rendered_objects(r: &Rendered) -> (BTreeMap<(String, String), Value>, Value) {
    let mut objects = BTreeMap::new();
    for (path, bytes) in &r.files {
        let Some(rest) = path.strip_prefix("flux/") else {
            continue;
        };
        if !rest.contains('/') || !rest.ends_with(".yaml") {
            continue;
        }
        for doc in documents(&String::from_utf8_lossy(bytes)) {
            objects.insert(key(&doc), doc);
        }
    }
    let deferred = r
        .files
        .get("flux/deferred.json")
        .map(|b| serde_json::from_slice(b).expect("deferred.json"))
        .unwrap_or(Value::Null);
    (objects, deferred)
}

/// Every difference between Windsor's render of `context` and bpc's.
fn differences(project: &Path, context: &str) -> Vec<String> {
    let sources = Arc::new(FileMap::new());
    let mut options = Options::at(project.to_path_buf());
    options.locate.project = Some(project.to_path_buf());
    options.locate.context = Some(context.to_string());
    let rendered = Session::open(options, sources.clone())
        .and_then(|session| session.render(ManifestFormat::Yaml));
    let rendered = match rendered {
        Ok(r) => r,
        Err(d) => {
            let text: Vec<String> = d.iter().map(|d| show(d, &sources, false)).collect();
            return vec![format!("bpc render failed:\n{}", text.join("\n"))];
        }
    };
    let expected = repo().join(SET).join("expected").join(context);
    let text = std::fs::read_to_string(expected.join("objects.yaml")).expect("objects.yaml");
    let windsor: BTreeMap<_, _> = documents(&text)
        .into_iter()
        .map(|o| (key(&o), without_noise(o)))
        .collect();
    let (ours, deferred) = rendered_objects(&rendered);
    let mut out = Vec::new();
    for k in windsor
        .keys()
        .chain(ours.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (kind, name) = k;
        let (Some(w), Some(b)) = (windsor.get(k), ours.get(k)) else {
            let side = if windsor.contains_key(k) {
                "Windsor"
            } else {
                "bpc"
            };
            out.push(format!("{kind} {name}: only {side} has it"));
            continue;
        };
        let mut w = w.clone();
        // A ConfigMap key bpc lists as deferred instead of writing its raw expression.
        if kind == "ConfigMap" {
            if let (Some(Value::Object(keys)), Some(Value::Object(data))) =
                (deferred.get(name), w.get_mut("data"))
            {
                for key in keys.keys() {
                    let raw = data.get(key).and_then(Value::as_str).unwrap_or_default();
                    if raw.contains("${") && b["data"].get(key).is_none() {
                        data.remove(key);
                    }
                }
            }
        }
        out.extend(
            field_diffs(&w, b)
                .into_iter()
                .map(|d| format!("{kind} {name}: {d}")),
        );
    }
    // tfvars: Windsor's values (its HCL parsed) against bpc's JSON, component by component.
    let mut windsor_tf = BTreeMap::new();
    for entry in std::fs::read_dir(expected.join("tfvars")).expect("tfvars dir") {
        let path = entry.expect("entry").path();
        let id = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        let value: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("tfvars json");
        windsor_tf.insert(id, value);
    }
    let mut ours_tf = BTreeMap::new();
    for (path, bytes) in &rendered.files {
        if let Some(id) = path
            .strip_prefix("terraform/")
            .and_then(|p| p.strip_suffix("/terraform.tfvars.json"))
        {
            ours_tf.insert(
                id.to_string(),
                serde_json::from_slice::<Value>(bytes).expect("json"),
            );
        }
    }
    for id in windsor_tf
        .keys()
        .chain(ours_tf.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        match (windsor_tf.get(id), ours_tf.get(id)) {
            (Some(w), Some(b)) => out.extend(
                field_diffs(w, b)
                    .into_iter()
                    .map(|d| format!("tfvars {id}: {d}")),
            ),
            (w, _) => out.push(format!(
                "tfvars {id}: only {} writes it",
                if w.is_some() { "Windsor" } else { "bpc" }
            )),
        }
    }
    out
}

/// A project folder named `project` (Windsor names the dev repository after it):
/// windsor-core's template and `windsor.yaml`, and the set's contexts.
fn assemble(dir: &Path) -> std::path::PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir") {
            let entry = entry.expect("entry");
            let target = to.join(entry.file_name());
            if entry.file_type().expect("type").is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy");
            }
        }
    }
    let project = dir.join("project");
    let core = repo().join("tests/conformance/windsor-core-eaa2bcea");
    copy(
        &core.join("contexts/_template"),
        &project.join("contexts/_template"),
    );
    std::fs::copy(core.join("windsor.yaml"), project.join("windsor.yaml")).expect("copy");
    copy(
        &repo().join(SET).join("contexts"),
        &project.join("contexts"),
    );
    project
}

#[test]
fn every_context_renders_as_the_windsor_cli_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = assemble(dir.path());
    let mut contexts: Vec<String> = std::fs::read_dir(repo().join(SET).join("expected"))
        .expect("expected/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    contexts.sort();
    assert_eq!(contexts.len(), 46, "the set has 46 contexts");
    let mut report = Vec::new();
    for context in &contexts {
        let diffs = differences(&project, context);
        if !diffs.is_empty() {
            report.push(format!("{context}:\n  {}", diffs.join("\n  ")));
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} contexts render differently from the Windsor CLI:\n{}",
        report.len(),
        contexts.len(),
        report.join("\n")
    );
}

/// The comparison itself sees a difference: one changed field, one missing object.
#[test]
fn the_comparison_reports_fields_and_missing_objects() {
    let w = documents("kind: A\nmetadata: {name: x}\nspec: {a: 1, b: [1, 2]}\nstatus: {}\n");
    let b = documents("kind: A\nmetadata: {name: x}\nspec: {a: 1, b: [2, 1]}\n");
    let diffs = field_diffs(&without_noise(w[0].clone()), &b[0]);
    assert_eq!(
        diffs,
        vec![
            "spec.b[0]: windsor=1 bpc=2".to_string(),
            "spec.b[1]: windsor=2 bpc=1".to_string()
        ]
    );
    assert!(field_diffs(&without_noise(w[0].clone()), &w[0]).len() == 1);
}
