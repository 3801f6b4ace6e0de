//! Building a Flux Kustomization offline, as kustomize-controller does: its `path` in
//! the source tree, with its `components`, `patches` and `targetNamespace` added to the
//! path's `kustomization.yaml` (or to one generated listing the path's manifests, when
//! it has none), built with a real kustomize. `commonMetadata` is not part of the build:
//! the controller sets it on the built objects, and so does verify, per context.
//!
//! Nothing is written into the project: each source tree's `kustomize/` is copied once
//! into a temporary workspace, with remote resources (`https://…`, `git@…`) taken out
//! of its kustomizations (they are reported as not checked, never fetched). Each build
//! gets a directory of its own beside its path, whose entries link to the path's, so
//! `../` references resolve as in the source and builds of one path run in parallel.

use super::confine::{self, is_remote};
use super::tool::Tool;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The file names kustomize reads as a kustomization, in its order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The annotation kustomize adds under `buildMetadata: [originAnnotations]`: the file
/// an object came from.
const ORIGIN: &str = "config.kubernetes.io/origin";

/// One distinct build: what of a Flux Kustomization decides kustomize's output.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Request {
    /// Index of the source tree in the [`Workspace`].
    pub tree: usize,
    /// `spec.path`, `/`-separated, relative to the source root (`kustomize/cni`).
    pub path: String,
    pub components: Vec<String>,
    /// `spec.patches`, as compact JSON (each `{patch, target}`).
    pub patches: Vec<String>,
    pub target_namespace: Option<String>,
}

/// One object of a build: its YAML document, parsed, and the tree file it came from.
#[derive(Clone, Debug)]
pub struct Object {
    pub text: String,
    pub value: Json,
    /// `kustomize/<…>` relative to the source root, when kustomize says.
    pub file: Option<String>,
}

/// What a build produced.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub objects: Vec<Object>,
    /// Documents of the output that did not parse: (index, message).
    pub unparsed: Vec<(usize, String)>,
    /// Remote resources of the kustomizations involved, left out of the build.
    pub remote: Vec<String>,
}

/// The temporary copies of the source trees every build of a run reads.
pub struct Workspace {
    dir: tempfile::TempDir,
    /// Each tree: the source root on disk (holding `kustomize/`) and its copy.
    trees: Vec<(PathBuf, PathBuf)>,
    /// Remote resources by kustomization directory of a copy (`kustomize/x/y`).
    remote: Vec<BTreeMap<String, Vec<String>>>,
}

impl Workspace {
    pub fn new() -> Result<Workspace, String> {
        let dir = tempfile::Builder::new()
            .prefix("bpc-verify-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        Ok(Workspace {
            dir,
            trees: Vec::new(),
            remote: Vec::new(),
        })
    }

    /// The index of the tree at `root` (a source root holding `kustomize/`), copied on
    /// first use.
    pub fn tree(&mut self, root: &Path) -> Result<usize, String> {
        if let Some(i) = self.trees.iter().position(|(r, _)| r == root) {
            return Ok(i);
        }
        let i = self.trees.len();
        let copy = self.dir.path().join(i.to_string());
        let mut remote = BTreeMap::new();
        let from = root.join("kustomize");
        if from.is_dir() {
            let bound = std::fs::canonicalize(root)
                .map_err(|e| format!("cannot read {}: {e}", root.display()))?;
            let mut copying = Copying {
                remote: &mut remote,
                bound: &bound,
            };
            copying.tree(&from, &copy.join("kustomize"), "kustomize")?;
        }
        self.trees.push((root.to_path_buf(), copy));
        self.remote.push(remote);
        Ok(i)
    }

    /// The source root of tree `i` on disk.
    pub fn root(&self, i: usize) -> &Path {
        &self.trees[i].0
    }

    /// Runs `request` with `tool`; `slot` names its build directory (unique per run).
    pub fn build(&self, tool: &Tool, request: &Request, slot: usize) -> Result<Built, String> {
        if confine::leaves("", &request.path) {
            return Err(format!(
                "the path `{}` is outside the source tree; kustomize-controller cannot \
                 build it, and verify does not",
                request.path
            ));
        }
        if let Some(c) = request
            .components
            .iter()
            .find(|c| confine::leaves(&request.path, c))
        {
            return Err(format!(
                "the component `{c}` is outside the source tree; kustomize-controller \
                 cannot read it, and verify does not"
            ));
        }
        let copy = &self.trees[request.tree].1;
        let dir = copy.join(&request.path);
        let parent = dir.parent().unwrap_or(copy);
        let own = parent.join(format!(".bpc-build-{slot}"));
        let result = self.build_in(tool, request, &dir, &own);
        let _ = std::fs::remove_dir_all(&own);
        result
    }

    fn build_in(
        &self,
        tool: &Tool,
        request: &Request,
        dir: &Path,
        own: &Path,
    ) -> Result<Built, String> {
        std::fs::create_dir(own).map_err(|e| format!("cannot create {}: {e}", own.display()))?;
        let mut existing = None;
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", request.path))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let text_name = name.to_string_lossy();
            if KUSTOMIZATION_FILES.contains(&text_name.as_ref()) {
                existing.get_or_insert(entry.path());
                continue;
            }
            link(&entry.path(), &own.join(&name))?;
        }
        let mut kustomization = match existing {
            Some(file) => read_kustomization(&file)?,
            None => generated(dir)?,
        };
        let map = kustomization
            .as_object_mut()
            .ok_or_else(|| format!("{}: the kustomization is not a map", request.path))?;
        if !request.components.is_empty() {
            let list = map
                .entry("components")
                .or_insert_with(|| Json::Array(Vec::new()));
            if let Json::Array(items) = list {
                items.extend(request.components.iter().map(|c| Json::String(c.clone())));
            }
        }
        if !request.patches.is_empty() {
            let list = map
                .entry("patches")
                .or_insert_with(|| Json::Array(Vec::new()));
            if let Json::Array(items) = list {
                for p in &request.patches {
                    items.push(serde_json::from_str(p).map_err(|e| e.to_string())?);
                }
            }
        }
        if let Some(ns) = &request.target_namespace {
            map.insert("namespace".into(), Json::String(ns.clone()));
        }
        let meta = map
            .entry("buildMetadata")
            .or_insert_with(|| Json::Array(Vec::new()));
        if let Json::Array(items) = meta {
            if !items.iter().any(|i| i == "originAnnotations") {
                items.push(Json::String("originAnnotations".into()));
            }
        }
        // JSON is YAML: kustomize reads it as it reads the original.
        let text = serde_json::to_string_pretty(&kustomization).map_err(|e| e.to_string())?;
        std::fs::write(own.join("kustomization.yaml"), text)
            .map_err(|e| format!("cannot write the generated kustomization: {e}"))?;
        let output = tool.build(own)?;
        let mut built = split(&output, |origin| {
            origin_file(origin, own, dir, &self.trees[request.tree].1)
        });
        built.remote = self.remote_of(request);
        Ok(built)
    }

    /// The remote resources of the path's kustomization, its components' and those
    /// below them.
    pub fn remote_of(&self, request: &Request) -> Vec<String> {
        let mut dirs = vec![request.path.clone()];
        for c in &request.components {
            dirs.push(normalize(&format!("{}/{c}", request.path)));
        }
        let mut out = Vec::new();
        for (dir, urls) in &self.remote[request.tree] {
            if dirs
                .iter()
                .any(|d| dir == d || dir.starts_with(&format!("{d}/")))
            {
                for url in urls {
                    out.push(format!("{url} (in {dir})"));
                }
            }
        }
        out
    }
}

/// A build's objects, one per YAML document of `output`, each with the tree file its
/// origin annotation names (through `file_of`), the annotation removed.
fn split(output: &str, file_of: impl Fn(&str) -> Option<String>) -> Built {
    let mut built = Built::default();
    for (index, doc) in documents(output).into_iter().enumerate() {
        match parse(doc) {
            Ok(Json::Null) => {}
            Ok(mut value) => {
                let file = take_origin(&mut value).and_then(|o| file_of(&o));
                built.objects.push(Object {
                    text: doc.to_string(),
                    value,
                    file,
                });
            }
            Err(e) => built.unparsed.push((index, e)),
        }
    }
    built
}

/// The documents of a YAML stream, split at `---` lines.
pub fn documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(&text[start..at]);
            start = at + line.len();
        }
        at += line.len();
    }
    docs.push(&text[start..]);
    docs.retain(|d| !d.trim().is_empty());
    docs
}

/// One YAML document as JSON, through bpc's YAML loader.
pub fn parse(doc: &str) -> Result<Json, String> {
    let nodes = crate::yaml::parse_all(doc, crate::files::span::FileId(0))
        .map_err(|e| e.message.clone())?;
    Ok(match nodes.first() {
        Some(node) => crate::value::json::to_json(
            &node.to_value(),
            crate::value::json::ToJson::NonFiniteAsText,
        ),
        None => Json::Null,
    })
}

/// Removes the origin annotation from an object (and an `annotations` map it leaves
/// empty); its `path:` line.
pub fn take_origin(value: &mut Json) -> Option<String> {
    let meta = value.get_mut("metadata")?.as_object_mut()?;
    let annotations = meta.get_mut("annotations")?.as_object_mut()?;
    let origin = annotations.remove(ORIGIN)?;
    if annotations.is_empty() {
        meta.remove("annotations");
    }
    origin
        .as_str()?
        .lines()
        .find_map(|l| l.trim().strip_prefix("path: "))
        .map(|p| p.trim_matches(['"', '\'']).to_string())
}

/// The tree file (`kustomize/…`) an origin path names: relative to the build
/// directory `own`, which stands in for the path's directory `dir`.
fn origin_file(origin: &str, own: &Path, dir: &Path, copy: &Path) -> Option<String> {
    let joined = lexical(&own.join(origin));
    let real = match joined.strip_prefix(own) {
        Ok(rest) => dir.join(rest),
        Err(_) => joined,
    };
    let real = std::fs::canonicalize(&real).unwrap_or(real);
    let copy = std::fs::canonicalize(copy).unwrap_or_else(|_| copy.to_path_buf());
    let rel = real.strip_prefix(&copy).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// `path` with `.` and `..` resolved without reading the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A `/`-separated relative path with `.` and `..` resolved.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

fn read_kustomization(file: &Path) -> Result<Json, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    match parse(&text)? {
        Json::Null => Ok(Json::Object(Default::default())),
        other => Ok(other),
    }
}

/// The kustomization kustomize-controller generates for a path without one: every
/// manifest file below it (a subdirectory holding a kustomization is listed as such and
/// not entered).
fn generated(dir: &Path) -> Result<Json, String> {
    let mut resources = Vec::new();
    list_manifests(dir, "", &mut resources)?;
    Ok(serde_json::json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }))
}

fn list_manifests(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().to_string();
        let rel = format!("{prefix}{name}");
        let path = entry.path();
        if path.is_dir() {
            if KUSTOMIZATION_FILES.iter().any(|k| path.join(k).is_file()) {
                out.push(rel);
            } else {
                list_manifests(&path, &format!("{rel}/"), out)?;
            }
        } else if [".yaml", ".yml", ".json"].iter().any(|x| name.ends_with(x)) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let manifest = documents(&text).iter().any(|d| {
                parse(d).is_ok_and(|v| v.get("apiVersion").is_some() && v.get("kind").is_some())
            });
            if manifest {
                out.push(rel);
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, at).map_err(|e| format!("cannot link {}: {e}", at.display()))
}

#[cfg(not(unix))]
fn link(target: &Path, at: &Path) -> Result<(), String> {
    if target.is_dir() {
        copy_tree(target, at, "", &mut BTreeMap::new())
    } else {
        std::fs::copy(target, at)
            .map(|_| ())
            .map_err(|e| format!("cannot copy {}: {e}", at.display()))
    }
}

/// A source tree's `kustomize/` being copied into the workspace.
struct Copying<'a> {
    /// Remote resources taken out, by kustomization directory.
    remote: &'a mut BTreeMap<String, Vec<String>>,
    /// The source root, links resolved: nothing outside it is copied.
    bound: &'a Path,
}

impl Copying<'_> {
    /// Copies the directory `from` (the tree's `rel`) to `to`: regular files and
    /// directories, links followed only where they stay inside the source root. Every
    /// kustomization's paths are checked to stay inside the tree (`confine.rs`), and
    /// its remote resources are taken out and recorded.
    fn tree(&mut self, from: &Path, to: &Path, rel: &str) -> Result<(), String> {
        std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        let entries =
            std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name_text = name.to_string_lossy().to_string();
            let path = entry.path();
            let here = format!("{rel}/{name_text}");
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                let target = std::fs::canonicalize(&path);
                if target.as_ref().is_ok_and(|t| !t.starts_with(self.bound)) {
                    return Err(format!(
                        "{here} is a link that leads out of the project; verify builds \
                         only what is inside it, as kustomize-controller does"
                    ));
                }
            }
            let dest = to.join(&name);
            if path.is_dir() {
                self.tree(&path, &dest, &here)?;
            } else if path.is_file() {
                if KUSTOMIZATION_FILES.contains(&name_text.as_str()) {
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                    confined(&text, rel, &here)?;
                    let (kept, urls) = without_remote(&text);
                    if !urls.is_empty() {
                        self.remote.insert(rel.to_string(), urls);
                    }
                    std::fs::write(&dest, kept)
                        .map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
                } else {
                    std::fs::copy(&path, &dest)
                        .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
                }
            }
        }
        Ok(())
    }
}

/// Refuses the kustomization `text` (the tree's file `file`, in its directory `dir`)
/// when a path it names leaves the tree, naming the line and column of the entry.
fn confined(text: &str, dir: &str, file: &str) -> Result<(), String> {
    let kustomization = parse(text).map_err(|e| {
        format!("{file}: cannot be read as YAML ({e}); verify builds only what it can check")
    })?;
    let Some((field, entry)) = confine::first_outside(&kustomization, dir) else {
        return Ok(());
    };
    Err(format!(
        "{file}{}: `{field}` names `{entry}`, which is outside the source tree; \
         kustomize-controller cannot read it, and verify does not",
        place_of(text, &entry)
    ))
}

/// `:LINE:COL` of the first occurrence of `needle` in `text`, or nothing.
fn place_of(text: &str, needle: &str) -> String {
    text.find(needle)
        .and_then(|at| crate::files::line_and_column(text, at))
        .map(|at| format!(":{}:{}", at.line, at.column))
        .unwrap_or_default()
}

/// A kustomization's text with remote `resources`/`components`/`bases` taken out (as
/// JSON, which kustomize reads as YAML), and what was taken; the text unchanged when
/// there is nothing remote or it does not parse (kustomize then says why).
fn without_remote(text: &str) -> (String, Vec<String>) {
    let Ok(mut value) = parse(text) else {
        return (text.to_string(), Vec::new());
    };
    let mut urls = Vec::new();
    if let Some(map) = value.as_object_mut() {
        for key in ["resources", "components", "bases"] {
            if let Some(Json::Array(items)) = map.get_mut(key) {
                items.retain(|i| match i.as_str() {
                    Some(s) if is_remote(s) => {
                        urls.push(s.to_string());
                        false
                    }
                    _ => true,
                });
            }
        }
    }
    if urls.is_empty() {
        return (text.to_string(), urls);
    }
    let kept = serde_json::to_string_pretty(&value).unwrap_or_else(|_| text.to_string());
    (kept, urls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_split_at_separator_lines() {
        let docs = documents("a: 1\n---\nb: 2\n---\n\n");
        assert_eq!(docs, vec!["a: 1\n", "b: 2\n"]);
    }

    #[test]
    fn remote_resources_are_taken_out() {
        let (kept, urls) =
            without_remote("resources:\n- https://x/y.yaml\n- local.yaml\n- github.com/a/b\n");
        assert_eq!(urls, vec!["https://x/y.yaml", "github.com/a/b"]);
        assert!(kept.contains("local.yaml") && !kept.contains("https"));
        let plain = "resources:\n- a.yaml\n";
        assert_eq!(without_remote(plain).0, plain);
    }

    #[test]
    fn origin_annotation_is_read_and_removed() {
        let mut v = serde_json::json!({"metadata": {"name": "a", "annotations": {ORIGIN: "path: x/y.yaml\n"}}});
        assert_eq!(take_origin(&mut v).as_deref(), Some("x/y.yaml"));
        assert_eq!(v, serde_json::json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn paths_normalize() {
        assert_eq!(normalize("kustomize/a/./b/../c"), "kustomize/a/c");
    }
}
