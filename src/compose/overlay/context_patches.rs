//! Context patches (S13): every `*.yaml` / `*.yml` file directly inside
//! `contexts/<ctx>/patches/<name>/` becomes one more patch of kustomization `<name>`,
//! after every facet and the context's own blueprint, as the Windsor CLI's composer
//! adds them. `<name>` may also name a flux system's tier (`<system>-install`,
//! `<system>-resources[-<variant>]`) or the system itself (its install tier).
//!
//! A file whose top-level map has a `patches` list and a non-empty `kind` is a
//! JSON 6902 patch: the list, written as YAML, with a target built from `kind`,
//! `metadata.name` and `metadata.namespace`. Any other file is a strategic-merge patch:
//! its whole text, no target. Empty files are skipped. *bpc differs:* a file that does
//! not parse, or cannot be read, is a warning naming it (Windsor skips it silently).

use crate::compose::model::component::{Effect, Merged, Step};
use crate::compose::model::fields::{sort_in_order, FieldMap};
use crate::compose::model::origin::{Contributor, Origin, OriginId, Origins};
use crate::compose::model::tier_names;
use crate::compose::model::tracked::{Tracked, TrackedMap};
use crate::expr::windsor::format::yaml_marshal;
use crate::files::{Diagnostic, FileMap, FileTree, Span};
use crate::template::{ComponentKind, Strategy};
use crate::value::{Map, Value};
use crate::yaml::NodeKind;
use std::sync::Arc;

/// The patch files of one context, read and turned into patches.
#[derive(Debug, Default)]
pub struct ContextPatches {
    /// The directory as messages name it (`contexts/<ctx>/patches`).
    pub dir: String,
    /// One group per sub-directory, in name order.
    pub groups: Vec<PatchGroup>,
    /// Files that could not be read or parsed.
    pub warnings: Vec<Diagnostic>,
}

/// The patches of one sub-directory, in file-name order.
#[derive(Debug)]
pub struct PatchGroup {
    /// The sub-directory's name: the kustomization (or tier, or system) it patches.
    pub name: String,
    pub patches: Vec<(Value, Span)>,
}

impl ContextPatches {
    /// Reads the patch files under `dir` of `tree` (a missing directory has none),
    /// registering their text in `sources` so messages can point into them.
    pub fn read(tree: &FileTree, dir: &str, sources: &FileMap) -> ContextPatches {
        read(tree, dir, sources)
    }
}

/// [`ContextPatches::read`].
fn read(tree: &FileTree, dir: &str, sources: &FileMap) -> ContextPatches {
    let mut out = ContextPatches {
        dir: tree.describe(dir),
        ..ContextPatches::default()
    };
    let files = match tree.list(dir) {
        Ok(files) => files,
        Err(e) => {
            out.warnings.push(Diagnostic::warning(format!(
                "cannot list {}: {}",
                out.dir, e.message
            )));
            return out;
        }
    };
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    for path in files {
        let Some(rest) = path.strip_prefix(&prefix) else {
            continue;
        };
        // Only files directly inside a sub-directory count, as in Windsor.
        let Some((name, file)) = rest.split_once('/') else {
            continue;
        };
        if file.contains('/') || !(file.ends_with(".yaml") || file.ends_with(".yml")) {
            continue;
        }
        if out.groups.last().is_none_or(|g| g.name != name) {
            out.groups.push(PatchGroup {
                name: name.to_string(),
                patches: Vec::new(),
            });
        }
        let display = tree.describe(&path);
        match read_patch(tree, &path, &display, sources) {
            Ok(Some(patch)) => {
                if let Some(group) = out.groups.last_mut() {
                    group.patches.push(patch);
                }
            }
            Ok(None) => {}
            Err(d) => out.warnings.push(d.with_help(
                "the file is skipped (the Windsor CLI skips it silently); fix or remove it",
            )),
        }
    }
    // Directories in name order, as Windsor reads them (`gitops` before
    // `gitops-install`, which byte order of the full paths would reverse).
    out.groups.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One file as a patch; `None` when it holds nothing.
fn read_patch(
    tree: &FileTree,
    path: &str,
    display: &str,
    sources: &FileMap,
) -> Result<Option<(Value, Span)>, Diagnostic> {
    let text = tree.read_to_string(path).map_err(|e| {
        Diagnostic::warning(format!("cannot read patch file {display}: {}", e.message))
    })?;
    let file = sources.add(display.to_string(), text);
    let text = sources.text(file).unwrap_or_default();
    let span = Span::new(file, 0, text.len());
    // Windsor decodes the first document; a file of several is still one patch.
    let documents = crate::yaml::parse_all(&text, file).map_err(|e| {
        let mut d = Diagnostic::from(e);
        d.severity = crate::files::Severity::Warning;
        d.message = format!("patch file {display} is not valid YAML: {}", d.message);
        d
    })?;
    let Some(node) = documents.into_iter().next() else {
        return Ok(None);
    };
    let empty = match &node.kind {
        NodeKind::Null => true,
        NodeKind::Map(entries) => entries.is_empty(),
        _ => false,
    };
    if empty {
        return Ok(None);
    }
    let mut patch = Map::default();
    let kind = node.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    match node.get("patches").map(|p| &p.kind) {
        Some(NodeKind::Seq(_)) if !kind.is_empty() => {
            let list = node
                .get("patches")
                .map(|p| p.to_value())
                .unwrap_or_default();
            patch.insert("patch".into(), Value::str(yaml_marshal(&list)));
            let mut target = Map::default();
            target.insert("kind".into(), Value::str(kind));
            let metadata = node.get("metadata");
            for key in ["namespace", "name"] {
                let field = metadata.and_then(|m| m.get(key)).and_then(|v| v.as_str());
                if let Some(text) = field.filter(|t| !t.is_empty()) {
                    target.insert(key.into(), Value::str(text));
                }
            }
            patch.insert("target".into(), Value::map(target));
        }
        _ => {
            patch.insert("patch".into(), Value::str(&*text));
        }
    }
    Ok(Some((Value::map(patch), span)))
}

/// Appends each group's patches to what it names; returns a warning for each group
/// that names nothing.
pub fn apply(
    patches: &ContextPatches,
    kustomize: &mut Merged,
    flux: &mut Merged,
    origins: &mut Origins,
) -> Vec<Diagnostic> {
    let mut warnings = patches.warnings.clone();
    for group in &patches.groups {
        // A directory whose files all hold nothing changes nothing, but must still
        // name something.
        if group.patches.is_empty() {
            let names_something = kustomize.components.contains_key(group.name.as_str())
                || locate_tier(flux, &group.name).is_some();
            if !names_something {
                warnings.push(names_nothing(&patches.dir, &group.name));
            }
            continue;
        }
        let ids: Vec<OriginId> = group
            .patches
            .iter()
            .map(|(_, span)| origins.add(origin(*span)))
            .collect();
        let items = || {
            group
                .patches
                .iter()
                .zip(&ids)
                .map(|((value, _), id)| Tracked::from_value(value, *id))
        };
        let list_origin = ids[0];
        if let Some(k) = kustomize.components.get_mut(group.name.as_str()) {
            let fields = Arc::make_mut(&mut k.fields);
            append(
                fields
                    .entry("patches")
                    .or_insert_with(|| Tracked::List(Vec::new(), list_origin)),
                items(),
            );
            sort_in_order(ComponentKind::Kustomize, fields);
            // One step per file, so `explain` lists each where it is written.
            for item in items() {
                Arc::make_mut(&mut k.history).push(step(item, |patches| {
                    FieldMap::from_iter([("patches", patches)])
                }));
            }
        } else if let Some((system_id, variant)) = locate_tier(flux, &group.name) {
            let Some(system) = flux.components.get_mut(system_id.as_str()) else {
                continue;
            };
            let fields = Arc::make_mut(&mut system.fields);
            let tier = match variant {
                None => fields.get_mut("install"),
                Some(i) => match fields.get_mut("resources") {
                    Some(Tracked::List(variants, _)) => variants.get_mut(i),
                    _ => None,
                },
            };
            let Some(Tracked::Map(entries, _)) = tier else {
                continue;
            };
            append(
                Arc::make_mut(entries)
                    .entry(Arc::from("patches"))
                    .or_insert_with(|| Tracked::List(Vec::new(), list_origin)),
                items(),
            );
            let variant_name = variant.map(|_| {
                entries
                    .get("name")
                    .cloned()
                    .unwrap_or_else(|| Tracked::Leaf(Value::str(""), list_origin))
            });
            for item in items() {
                Arc::make_mut(&mut system.history).push(step(item, |patches| {
                    tier_said(variant_name.clone(), patches, list_origin)
                }));
            }
        } else {
            warnings.push(names_nothing(&patches.dir, &group.name));
        }
    }
    warnings
}

fn names_nothing(dir: &str, name: &str) -> Diagnostic {
    Diagnostic::warning(format!(
        "{dir}/{name} matches no kustomization and no flux system or tier; its patches are ignored"
    ))
    .with_help("name the directory after a kustomization, `<system>-install` or `<system>-resources[-<variant>]`")
}

/// The history step of one patch file: what it said, as `said` shapes it.
fn step(item: Tracked, said: impl FnOnce(Tracked) -> FieldMap) -> Step {
    let origin = item.origin();
    Step {
        origin,
        strategy: Strategy::Merge,
        effect: Effect::Merged,
        said: Some(Arc::new(said(Tracked::List(vec![item], origin)))),
        lists: Vec::new(),
    }
}

fn origin(span: Span) -> Origin {
    Origin {
        contributor: Contributor::ContextPatch,
        span,
        ordinal: i64::MAX,
        strategy: Strategy::Merge,
        expression: None,
        deferred: false,
    }
}

fn append(list: &mut Tracked, items: impl Iterator<Item = Tracked>) {
    if let Tracked::List(existing, _) = list {
        existing.extend(items);
    }
}

/// The flux system whose tier `name` names — `<system>-install`,
/// `<system>-resources[-<variant>]`, or the system itself (its install tier) — and
/// which tier: `None` for install, else the index of the resources variant.
fn locate_tier(flux: &Merged, name: &str) -> Option<(String, Option<usize>)> {
    let (id, system) = flux
        .components
        .iter()
        .find(|(id, _)| tier_names::belongs_to(name, id))?;
    if name == &**id || name == tier_names::install(id) {
        return system.get("install").map(|_| (id.to_string(), None));
    }
    let Some(Tracked::List(variants, _)) = system.get("resources") else {
        return None;
    };
    let index = variants.iter().position(|v| {
        let variant = v.get("name").and_then(Tracked::as_str).unwrap_or("");
        tier_names::variant(id, variant) == name
    })?;
    Some((id.to_string(), Some(index)))
}

/// What a patch file said to a system, for its history: `install: {patches}` or
/// `resources: [{name, patches}]`.
fn tier_said(variant: Option<Tracked>, patches: Tracked, origin: OriginId) -> FieldMap {
    let mut tier = TrackedMap::default();
    if let Some(name) = &variant {
        tier.insert(Arc::from("name"), name.clone());
    }
    tier.insert(Arc::from("patches"), patches);
    let tier = Tracked::Map(Arc::new(tier), origin);
    match variant {
        Some(_) => FieldMap::from_iter([("resources", Tracked::List(vec![tier], origin))]),
        None => FieldMap::from_iter([("install", tier)]),
    }
}
