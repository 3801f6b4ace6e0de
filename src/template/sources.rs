//! Loading a template together with its local sources: the `sources:` entries of its
//! `blueprint.yaml` whose URL is a path (see [`super::source_entry`]), each loaded as a
//! template of its own, recursively. The result is flat and already in merge order —
//! every source after the sources it references, `sources:` list order otherwise — so
//! composition only has to walk a list.
//!
//! Local paths resolve against the directory of the template that lists them. An
//! archive cannot list local sources: it has no directory on disk to resolve against,
//! and an archive reaching into the filesystem of whoever composes it would be a leak.

use super::source_entry::{local_entries, LocalEntry};
use super::{load, Template};
use crate::files::{Diagnostic, FileMap, FileTree, Span};
use std::path::Path;
use std::sync::Arc;

/// At most this many local sources in one composition (a runaway chain is an error,
/// not a hang).
const MAX_SOURCES: usize = 64;

/// One local source of a composing template.
pub struct Upstream {
    /// The name its `sources:` entry gives it (what components get as `source:`).
    pub name: String,
    pub template: Template,
    /// 0 for a source that references no local source, else one more than its deepest
    /// reference.
    pub depth: usize,
    /// The local sources it lists, as indices into the composing template's `upstream`
    /// (always lower than its own index).
    pub references: Vec<usize>,
    /// The `sources:` entry that first listed it.
    pub entry: Span,
    /// Merged into the blueprint (always, for a local source); an `oci://` source with
    /// `install: false`, or one only a pulled blueprint lists, is loaded but adds
    /// nothing (S14).
    pub install: bool,
}

/// Loads the template at `tree` and, recursively, its local sources into
/// [`Template::upstream`]. Warnings of the sources are added to the template's.
pub fn load_with_sources(
    tree: Arc<FileTree>,
    map: Arc<FileMap>,
) -> Result<Template, Vec<Diagnostic>> {
    load_with_sources_cached(tree, map, None)
}

/// As [`load_with_sources`], the composing template's facets through `cache` (see
/// [`super::load_cached`]); local sources are parsed anew.
pub fn load_with_sources_cached(
    tree: Arc<FileTree>,
    map: Arc<FileMap>,
    cache: Option<&super::FacetCache>,
) -> Result<Template, Vec<Diagnostic>> {
    let how = cache.map_or(super::Facets::Whole, super::Facets::Cached);
    load_with_sources_as(tree, map, how)
}

/// As [`load_with_sources`], the composing template's facets loaded as `how` says.
pub(crate) fn load_with_sources_as(
    tree: Arc<FileTree>,
    map: Arc<FileMap>,
    how: super::Facets<'_, '_>,
) -> Result<Template, Vec<Diagnostic>> {
    let mut root = super::load_facets(tree, map.clone(), how)?;
    let mut walk = Walk {
        map,
        loaded: Vec::new(),
        keys: Vec::new(),
        stack: vec![Open {
            key: location_key(&root.tree, None),
            name: String::new(),
            entry: None,
        }],
    };
    walk.entries(&root)?;
    for up in &walk.loaded {
        root.warnings.extend(up.template.warnings.iter().cloned());
    }
    root.upstream = walk.loaded;
    Ok(root)
}

struct Walk {
    map: Arc<FileMap>,
    /// Sources loaded so far, in merge order, and where each lives.
    loaded: Vec<Upstream>,
    keys: Vec<String>,
    /// The templates being loaded (location, name), the composing template first: an
    /// entry that leads back to one of them closes a cycle.
    stack: Vec<Open>,
}

/// A template whose sources are being loaded.
struct Open {
    key: String,
    name: String,
    /// The `sources:` entry that led to it; `None` for the composing template.
    entry: Option<Span>,
}

impl Walk {
    /// Loads every local source `lister` lists; returns their indices.
    fn entries(&mut self, lister: &Template) -> Result<Vec<usize>, Vec<Diagnostic>> {
        let Some(base) = &lister.base else {
            return Ok(Vec::new());
        };
        let mut references = Vec::new();
        for entry in local_entries(base) {
            let index = self.entry(lister, &entry)?;
            if !references.contains(&index) {
                references.push(index);
            }
        }
        Ok(references)
    }

    fn entry(&mut self, lister: &Template, entry: &LocalEntry) -> Result<usize, Vec<Diagnostic>> {
        let at = format!(
            "sources[{}] of {}",
            entry.index,
            lister.tree.describe("blueprint.yaml")
        );
        if entry.name.is_empty() {
            return Err(vec![Diagnostic::error(format!(
                "the local source at {at} has no name"
            ))
            .with_primary(entry.span, "needs a `name`")
            .with_help(
                "components from a source are tagged with its name (`source: <name>`)",
            )]);
        }
        let name = entry.name.as_str();
        let Some(dir) = lister.tree.root_dir() else {
            return Err(vec![Diagnostic::error(format!(
                "local source `{name}` ({at}) is listed by an archive, which cannot reference the filesystem"
            ))
            .with_primary(entry.url_span, "a path outside the archive")
            .with_help("list this source in the composing template instead, or give it an oci:// URL")]);
        };
        if entry.path.is_empty() {
            return Err(vec![Diagnostic::error(format!(
                "local source `{name}` ({at}) has an empty path"
            ))
            .with_primary(
                entry.url_span,
                "expected a directory or a .tar.gz archive",
            )]);
        }
        let path = dir.join(&entry.path);
        // Messages name paths as the user sees them, not canonical absolute ones.
        let display = display_path(&lister.tree.describe(""), &entry.path);
        if !path.exists() {
            return Err(vec![Diagnostic::error(format!(
                "local source `{name}` ({at}) not found: {display} does not exist"
            ))
            .with_primary(entry.url_span, "no such directory or archive")
            .with_note(format!(
                "a relative path is resolved against the directory of the template that lists it ({})",
                display_path(&lister.tree.describe(""), ".")
            ))]);
        }
        let (tree, key) = open(&path, display).map_err(|e| {
            vec![
                Diagnostic::error(format!("cannot open local source `{name}` ({at}): {e}"))
                    .with_primary(entry.url_span, "listed here"),
            ]
        })?;

        if let Some(pos) = self.stack.iter().position(|o| o.key == key) {
            return Err(vec![self.cycle(pos, name, entry)]);
        }
        if let Some(i) = self.keys.iter().position(|k| *k == key) {
            let first = &self.loaded[i];
            if first.name != name {
                return Err(vec![Diagnostic::error(format!(
                    "the same template is listed as source `{}` and as source `{name}`",
                    first.name
                ))
                .with_primary(entry.span, format!("listed as `{name}` here"))
                .with_secondary(first.entry, format!("listed as `{}` here", first.name))
                .with_help("give a template the same name everywhere it is listed")]);
            }
            return Ok(i);
        }
        if let Some(d) = self.name_taken(name, entry) {
            return Err(vec![d]);
        }
        self.room_for(name, &at, entry)?;

        let template = load(Arc::new(tree), self.map.clone())?;
        self.stack.push(Open {
            key: key.clone(),
            name: name.to_string(),
            entry: Some(entry.span),
        });
        let references = self.entries(&template);
        self.stack.pop();
        let references = references?;
        let depth = references
            .iter()
            .map(|&r| self.loaded[r].depth + 1)
            .max()
            .unwrap_or(0);
        self.keys.push(key);
        self.loaded.push(Upstream {
            name: name.to_string(),
            template,
            depth,
            references,
            entry: entry.span,
            install: true,
        });
        Ok(self.loaded.len() - 1)
    }

    /// The cycle that `entry` (named `name`) closes with the open sources from `pos`
    /// on, every link of the chain on screen.
    fn cycle(&self, pos: usize, name: &str, entry: &LocalEntry) -> Diagnostic {
        let mut chain = vec![name.to_string()];
        chain.extend(self.stack[pos + 1..].iter().map(|o| o.name.clone()));
        chain.push(name.to_string());
        let mut d = Diagnostic::error(format!(
            "local sources reference each other in a cycle: {}",
            chain.join(" -> ")
        ))
        .with_primary(entry.span, "this entry closes the cycle");
        for open in &self.stack[pos..] {
            if let Some(span) = open.entry {
                d = d.with_secondary(span, format!("`{}` listed here", open.name));
            }
        }
        d.with_help("a source cannot depend on a template that depends on it")
    }

    /// An error when `name` (listed at `at`) would be one source too many.
    fn room_for(&self, name: &str, at: &str, entry: &LocalEntry) -> Result<(), Vec<Diagnostic>> {
        if self.loaded.len() + self.stack.len() <= MAX_SOURCES {
            return Ok(());
        }
        Err(vec![Diagnostic::error(format!(
            "more than {MAX_SOURCES} local sources; stopped at `{name}` ({at})"
        ))
        .with_primary(entry.span, "one too many")])
    }

    /// An error when another template already goes by `name`.
    fn name_taken(&self, name: &str, entry: &LocalEntry) -> Option<Diagnostic> {
        let first = self
            .loaded
            .iter()
            .find(|u| u.name == name)
            .map(|u| Some(u.entry))
            .or_else(|| self.stack.iter().any(|o| o.name == name).then_some(None))?;
        let d = Diagnostic::error(format!("two different local sources are named `{name}`"))
            .with_primary(entry.span, "this one")
            .with_help("source names must be unique: components are tagged with them");
        Some(match first {
            Some(span) => d.with_secondary(span, "and this one"),
            None => d,
        })
    }
}

/// Opens a source directory or archive, descending into its `_template/` when it has
/// one; also returns a key that is equal for two paths naming the same template.
fn open(path: &Path, display: String) -> Result<(FileTree, String), String> {
    let canonical = path.canonicalize().map_err(|e| e.to_string())?;
    let mut tree = FileTree::open(&canonical).map_err(|e| e.to_string())?;
    tree.set_display_root(display);
    let nested = tree.is_dir("_template");
    if nested {
        tree = tree.subtree("_template").map_err(|e| e.to_string())?;
    }
    let key = location_key(&tree, Some((&canonical, nested)));
    Ok((tree, key))
}

/// Directory trees are keyed by their canonical directory; archives by the archive's
/// canonical path (and whether its `_template/` was used).
fn location_key(tree: &FileTree, archive: Option<(&Path, bool)>) -> String {
    match (tree.root_dir(), archive) {
        (Some(dir), _) => dir.display().to_string(),
        (None, Some((path, nested))) => format!("{}!{}", path.display(), nested),
        (None, None) => format!("archive {}", tree.describe("")),
    }
}

/// How a source is named in messages: its path joined to the listing template's as
/// written (so a project-relative template gives project-relative source paths).
fn display_path(lister: &str, path: &str) -> String {
    if path.starts_with('/') {
        return path.to_string();
    }
    let mut parts: Vec<&str> = lister
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let absolute = lister.starts_with('/');
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::display_path;

    #[test]
    fn display_paths_are_joined_lexically() {
        assert_eq!(display_path("_template/", "../vendor/core"), "vendor/core");
        assert_eq!(display_path("contexts/_template", "../../core"), "core");
        assert_eq!(display_path("_template", "../../up"), "../up");
        assert_eq!(display_path("/srv/t/", "./a"), "/srv/t/a");
        assert_eq!(display_path("", "../a"), "../a");
        assert_eq!(display_path("x", "/abs/y"), "/abs/y");
        assert_eq!(display_path("x", ".."), ".");
    }
}
