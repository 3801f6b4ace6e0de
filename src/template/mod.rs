//! Stage 1, load: a template directory or archive into facets, schema and base
//! blueprint (docs/semantics.md S2, S3).

pub(crate) mod bodies;
pub(crate) mod facet;
pub(crate) mod fields;
pub(crate) mod identity;
pub(crate) mod keys;
pub(crate) mod ordinal;
pub(crate) mod parse_facet;
pub(crate) mod prune;
pub(crate) mod source_entry;
pub(crate) mod sources;

pub use facet::*;
pub use sources::{load_with_sources, load_with_sources_cached, Upstream};

use crate::files::{Diagnostic, FileMap, FileTree, TreeError};
use crate::yaml::{Interner, Node};
use std::collections::HashSet;
use std::sync::Arc;

/// Everything composition reads from a template. Immutable once loaded, so many
/// compositions (test cases, contexts) can share one; one loaded for a single
/// composition lends that composition its component bodies ([`bodies`]), and any
/// later one reads them again from the files.
pub struct Template {
    pub tree: Arc<FileTree>,
    pub files: Arc<FileMap>,
    /// `blueprint.yaml`, if the template has one.
    pub base: Option<Node>,
    /// `schema.yaml`, if the template has one.
    pub schema: Option<Node>,
    /// Facets in processing order: (ordinal, name, path) ascending (S3). Shared, so
    /// that a reload after an edit reuses every facet whose file did not change.
    pub facets: Vec<Arc<Facet>>,
    /// Warnings found while loading (unknown keys, …).
    pub warnings: Vec<Diagnostic>,
    /// Local sources listed in `blueprint.yaml`, in merge order (every source after the
    /// sources it references); empty unless loaded with [`load_with_sources`].
    pub upstream: Vec<Upstream>,
    /// The published blueprint this template was pulled from (S14), when it is one:
    /// its components default to `source: <name>` and `sources:` lists it by URL.
    pub published: Option<Published>,
    /// Some facets were left hollow at load ([`prune`]): activation checks that none
    /// of them applies.
    pub has_hollow_facets: bool,
    /// Loaded for one composition: the facets' component bodies, lent to it
    /// ([`bodies`]); their entries hold null nodes.
    pub bodies: Option<bodies::Bodies>,
}

/// A template pulled from an `oci://` source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// The `sources:` entry's name (what its components get as `source:`).
    pub name: String,
    /// The `oci://` URL it was pulled from.
    pub url: String,
    /// The `sources:` entry that names it (in the context's `blueprint.yaml`).
    pub entry: crate::files::Span,
}

/// One template of a composition: the composing template itself, or the upstream
/// local source at this index of [`Template::upstream`] (merge order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TemplateId {
    Composing,
    /// An index into [`Template::upstream`]; `u32` keeps every origin of a composition
    /// (over half a million of them at 10 000 facets) 8 bytes smaller.
    Upstream(u32),
}

impl TemplateId {
    /// The upstream source at index `k`.
    pub fn upstream(k: usize) -> TemplateId {
        TemplateId::Upstream(u32::try_from(k).expect("fewer than 2^32 local sources"))
    }

    /// Its index into [`Template::upstream`], for an upstream source.
    pub(crate) fn upstream_index(self) -> Option<usize> {
        match self {
            TemplateId::Composing => None,
            TemplateId::Upstream(k) => Some(k as usize),
        }
    }
}

/// A facet of a composition: the template it belongs to and its index in that
/// template's processing order. Ids never need renumbering when templates combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FacetId {
    pub template: TemplateId,
    pub index: usize,
}

impl Template {
    /// The template `id` names: this one or one of its upstream sources.
    pub fn part(&self, id: TemplateId) -> Option<&Template> {
        match id {
            TemplateId::Composing => Some(self),
            TemplateId::Upstream(k) => self.upstream.get(k as usize).map(|u| &u.template),
        }
    }

    pub fn facet(&self, id: FacetId) -> Option<&Facet> {
        self.part(id.template)?.facets.get(id.index).map(|f| &**f)
    }

    /// The name of upstream source `id`; `None` for the composing template.
    pub(crate) fn upstream_name(&self, id: TemplateId) -> Option<&str> {
        match id {
            TemplateId::Composing => None,
            TemplateId::Upstream(k) => self.upstream.get(k as usize).map(|u| u.name.as_str()),
        }
    }
}

/// A file of the tree that could not be read, named once (the tree's error names the
/// path too).
fn unreadable(tree: &FileTree, path: &str, e: TreeError) -> Diagnostic {
    let reason = if e.path == path {
        e.message
    } else {
        e.to_string()
    };
    Diagnostic::error(format!("cannot read {}: {reason}", tree.describe(path)))
}

/// Reads and parses one YAML file of the tree into the source map.
pub(crate) fn read_yaml(tree: &FileTree, files: &FileMap, path: &str) -> Result<Node, Diagnostic> {
    let text = tree
        .read_to_string(path)
        .map_err(|e| unreadable(tree, path, e))?;
    let file = files.add(tree.describe(path), text);
    let text = files.text(file).unwrap_or_default();
    crate::yaml::parse(&text, file).map_err(Diagnostic::from)
}

/// A facet file parsed: the facet (`None` when it does not load) and what was found.
type Parsed = (Option<Arc<Facet>>, Vec<Diagnostic>);

/// Below this many facet files, reading them on one thread is quicker than starting
/// more.
const PARALLEL_READS: usize = 64;

/// The fewest facet files a thread reads and parses.
const RUN: usize = 64;

/// A facet file to parse: its path in the tree, its id in the map, and the text read
/// (taken when parsed).
type ToParse<'p> = (&'p str, crate::files::FileId, Option<Arc<str>>);

/// Reads every facet file (on all cores), registers the texts in path order (so file
/// ids, and with them every message, are the same from run to run), then parses them
/// on all cores: at 10 000 facets parsing is most of the load time. Results come back
/// in path order.
///
/// With `inactive`, a facet it finds certainly inactive is kept hollow
/// ([`prune::hollow`]); one whose `when` turns out to read a config block name is
/// parsed again in full.
fn parse_facets(
    tree: &FileTree,
    sources: &FileMap,
    paths: &[String],
    diagnostics: &mut Vec<Diagnostic>,
    cache: Option<(&FacetCache, Option<&std::collections::BTreeSet<String>>)>,
    inactive: Option<&prune::Inactive<'_>>,
) -> Vec<Arc<Facet>> {
    let (cache, fresh) = match cache {
        Some((cache, fresh)) => (Some(cache), fresh),
        None => (None, None),
    };
    let mut files = Vec::with_capacity(paths.len());
    // Slots in path order: a facet the cache still holds, or one to parse.
    let mut slots: Vec<Result<Parsed, usize>> = Vec::new();
    // Told which files changed, the cache's facets of the others stand as they are.
    let kept: Vec<Option<Parsed>> = match (cache, fresh) {
        (Some(cache), Some(fresh)) => cache.unchanged(tree, paths, fresh),
        _ => paths.iter().map(|_| None).collect(),
    };
    let to_read: Vec<&String> = paths
        .iter()
        .zip(&kept)
        .filter(|(_, hit)| hit.is_none())
        .map(|(path, _)| path)
        .collect();
    let threads = crate::parallel::cores();
    let texts = read_texts(tree, sources, &to_read, inactive.is_some());
    let mut guessed: HashSet<String> = HashSet::new();
    let mut texts = texts.into_iter();
    for (path, hit) in paths.iter().zip(kept) {
        if let Some(hit) = hit {
            slots.push(Ok(hit));
            continue;
        }
        let Some(text) = texts.next() else {
            break;
        };
        match text {
            Ok((text, names, held)) => {
                guessed.extend(names);
                let shown = tree.describe(path);
                if let Some(hit) = cache.and_then(|c| c.get(&shown, &text)) {
                    slots.push(Ok(hit));
                    continue;
                }
                slots.push(Err(files.len()));
                files.push((path.as_str(), sources.add_held(shown, held), Some(text)));
            }
            Err(e) => diagnostics.push(unreadable(tree, path, e)),
        }
    }
    // One interner per thread: facets repeat keys and short expressions, so each
    // distinct text is allocated once per thread rather than once per file.
    let parse_one = |file: &mut ToParse<'_>,
                     interner: &mut Interner,
                     pruner: Option<&mut prune::Pruner<'_, '_>>| {
        parse_file(tree, sources, file, interner, pruner)
    };
    let run = files.len().div_ceil(threads).max(RUN);
    let parse_run = |run: &mut [ToParse<'_>]| {
        let mut interner = Interner::default();
        let mut pruner = inactive.map(|inactive| prune::Pruner::new(inactive, &guessed));
        run.iter_mut()
            .map(|f| parse_one(f, &mut interner, pruner.as_mut()))
            .collect::<Vec<_>>()
    };
    let parsed: Vec<(Parsed, Option<HashSet<String>>)> = if files.len() <= run {
        parse_run(&mut files)
    } else {
        // A panic in a parser is passed on (`parallel::each`): no facet is dropped.
        crate::parallel::each(files.chunks_mut(run).collect(), parse_run)
            .into_iter()
            .flatten()
            .collect()
    };
    let (mut parsed, reads): (Vec<Parsed>, Vec<_>) = parsed.into_iter().unzip();
    if inactive.is_some() {
        let kept: Vec<&Facet> = slots
            .iter()
            .filter_map(|slot| match slot {
                Ok((facet, _)) => facet.as_deref(),
                Err(i) => parsed[*i].0.as_deref(),
            })
            .collect();
        let restore = prune::to_restore(&kept, &reads);
        let mut interner = Interner::default();
        for i in restore {
            parsed[i] = parse_one(&mut files[i], &mut interner, None).0;
        }
    }
    if let Some(cache) = cache {
        for ((_, file, _), (facet, found)) in files.iter().zip(&parsed) {
            cache.put(sources, *file, facet, found);
        }
    }
    in_path_order(slots, parsed, diagnostics)
}

/// The facets of `slots` in path order (a cached one, or the index of one `parsed`),
/// their diagnostics into `diagnostics`.
fn in_path_order(
    slots: Vec<Result<Parsed, usize>>,
    parsed: Vec<Parsed>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Arc<Facet>> {
    let mut parsed: Vec<Option<Parsed>> = parsed.into_iter().map(Some).collect();
    let mut facets = Vec::with_capacity(slots.len());
    for slot in slots {
        let (facet, found) = match slot {
            Ok(hit) => hit,
            Err(i) => parsed[i].take().unwrap_or_default(),
        };
        diagnostics.extend(found);
        facets.extend(facet);
    }
    facets
}

/// A text read from the template, with the block names it writes (when facets may be
/// left hollow) and its hold in the file map.
type ReadText = (Arc<str>, Vec<String>, crate::files::Held);

/// The texts of `to_read`, in order. Reading is mostly system calls (opening the file,
/// checking that the path stays inside the tree), so it goes on all cores as well; the
/// texts are registered in path order by the caller. Each thread reads the same run of
/// the files it parses after: a text is then read, parsed and let go of by one thread,
/// so its memory serves that thread's next allocations rather than staying behind in
/// another thread's heap (7 MB of the peak at 10 000 facets). When facets may be left
/// hollow (`names`), each text is read for block names as well, while it is at hand
/// ([`prune::block_names_written`]).
fn read_texts(
    tree: &FileTree,
    sources: &FileMap,
    to_read: &[&String],
    names: bool,
) -> Vec<Result<ReadText, TreeError>> {
    let threads = crate::parallel::cores();
    let dirs = crate::files::ResolvedDirs::default();
    let read = |path: &&String| {
        tree.read_text(path, &dirs).map(|text| {
            let names = match names {
                true => prune::block_names_written(&text),
                false => Vec::new(),
            };
            let disk = match sources.lets_go_of_texts() {
                true => tree.to_read_again(path),
                false => None,
            };
            let held = sources.holding(&text, disk);
            (text, names, held)
        })
    };
    if to_read.len() >= PARALLEL_READS {
        let run = to_read.len().div_ceil(threads).max(RUN);
        crate::parallel::each(to_read.chunks(run).collect(), |paths| {
            paths.iter().map(read).collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect()
    } else {
        to_read.iter().map(read).collect::<Vec<_>>()
    }
}

/// Parses one facet file: the text read is taken and dropped once parsed; a facet
/// parsed again (restored from hollow) reads its text from the map. With `pruner`,
/// the facet may be left hollow; then also the names its expressions read.
fn parse_file(
    tree: &FileTree,
    sources: &FileMap,
    (path, file, text): &mut ToParse<'_>,
    interner: &mut Interner,
    pruner: Option<&mut prune::Pruner<'_, '_>>,
) -> (Parsed, Option<HashSet<String>>) {
    let mut found = Vec::new();
    let Some(text) = text.take().or_else(|| sources.text(*file)) else {
        found.push(Diagnostic::error(format!(
            "{} changed on disk while bpc ran: it cannot be parsed again",
            tree.describe(path)
        )));
        return ((None, found), None);
    };
    let facet = match crate::yaml::parse_interned(&text, *file, interner) {
        Ok((node, warnings)) => {
            found.extend(warnings.into_iter().map(|w| {
                let mut d = Diagnostic::from(w);
                d.severity = crate::files::Severity::Warning;
                d
            }));
            parse_facet::Reader {
                diagnostics: &mut found,
            }
            .facet(node, path, *file)
            .map(Arc::new)
        }
        Err(e) => {
            found.push(Diagnostic::from(e));
            None
        }
    };
    drop(text);
    let (facet, read) = match (facet, pruner) {
        (Some(facet), Some(pruner)) => {
            let (facet, read) = pruner.take(facet);
            (Some(facet), read)
        }
        (facet, _) => (facet, None),
    };
    ((facet, found), read)
}

/// Facets parsed by earlier loads, by file (as messages name it) with the text they
/// were parsed from, so that a load parses only the files whose text changed: the
/// language server loads the template again after every edit. Cached facets' spans
/// name files of the [`FileMap`] they were parsed into, so a cache serves loads into
/// that one map only (it checks, and parses anew for any other).
///
/// When its owner tells it every change ([`FacetCache::tell_changes`]), it also keeps
/// what the last load listed under each directory tree's `facets/`, and a load then
/// lists nothing and reads only the files it was told changed (see
/// [`FacetCache::changed`]); anything it cannot account for lists and reads the whole
/// directory again.
#[derive(Debug, Default)]
pub struct FacetCache {
    /// By file as messages name it (FxHash: a told reload looks up every facet file).
    parsed: std::sync::Mutex<rustc_hash::FxHashMap<String, CachedFacet>>,
    told: std::sync::Mutex<Told>,
}

/// The changes the owner of a [`FacetCache`] told it about.
#[derive(Debug, Default)]
struct Told {
    /// The owner tells every change of a file.
    on: bool,
    /// By directory tree (its root on disk): the facet files its last load listed,
    /// and the tree paths told changed since.
    trees: std::collections::HashMap<std::path::PathBuf, Listing>,
}

#[derive(Debug, Default)]
struct Listing {
    paths: std::collections::BTreeSet<String>,
    changed: std::collections::BTreeSet<String>,
    /// `paths` as a list, shared with the loads while no file comes or goes: a told
    /// reload of a large template copies no path.
    listed: Option<Arc<[String]>>,
}

/// Where the facet files of a load come from: listed and read in full, or the last
/// listing with the files told changed.
struct FacetPaths {
    /// Sorted.
    paths: Arc<[String]>,
    /// `None`: every file is read (and its text compared with the cache's); else
    /// only these are, the others are the cache's as they are.
    fresh: Option<std::collections::BTreeSet<String>>,
}

/// `path` with its directories' symlinks resolved as far as they exist (the file
/// itself may be gone, or be a link), as loads name tree roots.
fn resolved_dirs(path: &std::path::Path) -> std::path::PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
            let parent = parent
                .canonicalize()
                .unwrap_or_else(|_| resolved_dirs(parent));
            parent.join(name)
        }
        _ => path.to_path_buf(),
    }
}

fn is_facet_file(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

#[derive(Debug)]
struct CachedFacet {
    /// The map the facet's spans point into (compared by address).
    map: usize,
    text: Arc<str>,
    facet: Option<Arc<Facet>>,
    diagnostics: Vec<Diagnostic>,
}

impl FacetCache {
    fn get(&self, shown: &str, text: &str) -> Option<Parsed> {
        let parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        let hit = parsed.get(shown).filter(|c| &*c.text == text)?;
        Some((hit.facet.clone(), hit.diagnostics.clone()))
    }

    fn put(
        &self,
        sources: &FileMap,
        file: crate::files::FileId,
        facet: &Option<Arc<Facet>>,
        diagnostics: &[Diagnostic],
    ) {
        let (Some(source), Some(text)) = (sources.get(file), sources.text(file)) else {
            return;
        };
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        parsed.insert(
            source.path.clone(),
            CachedFacet {
                map: sources as *const FileMap as usize,
                text,
                facet: facet.clone(),
                diagnostics: diagnostics.to_vec(),
            },
        );
    }

    /// For each of `paths` (in `tree`) not in `fresh`, the facet as last parsed,
    /// whatever the file holds now (the owner did not tell it changed); `None` where
    /// the file is to be read. One look at the cache for the whole listing.
    fn unchanged(
        &self,
        tree: &FileTree,
        paths: &[String],
        fresh: &std::collections::BTreeSet<String>,
    ) -> Vec<Option<Parsed>> {
        let parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        let mut shown = String::new();
        paths
            .iter()
            .map(|path| {
                if fresh.contains(path) {
                    return None;
                }
                tree.describe_into(path, &mut shown);
                let hit = parsed.get(shown.as_str())?;
                Some((hit.facet.clone(), hit.diagnostics.clone()))
            })
            .collect()
    }

    /// `on`: from now on the owner calls [`FacetCache::changed`] (or
    /// [`FacetCache::unknown_changes`]) for every change of a file under a template
    /// loaded through this cache — created, written, removed or renamed, on disk or
    /// in the overlay — before the next load. Loads then read only those files.
    /// `false` goes back to listing and reading everything.
    pub fn tell_changes(&self, on: bool) {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        told.on = on;
        told.trees.clear();
    }

    /// Whether the owner tells changes.
    pub(crate) fn tells_changes(&self) -> bool {
        self.told.lock().unwrap_or_else(|p| p.into_inner()).on
    }

    /// Files (absolute paths) that changed, were created or removed since the last
    /// load. Paths outside the trees loaded so far need no telling (and are ignored).
    pub fn changed<'p>(&self, paths: impl IntoIterator<Item = &'p std::path::Path>) {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        if !told.on || told.trees.is_empty() {
            return;
        }
        for path in paths {
            let path = resolved_dirs(path);
            let mut relist = Vec::new();
            for (root, listing) in told.trees.iter_mut() {
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                match relative.to_str() {
                    Some(r) if !r.is_empty() => {
                        listing.changed.insert(r.replace('\\', "/"));
                    }
                    // The root itself, or a name bpc cannot list anyway.
                    _ => relist.push(root.clone()),
                }
            }
            for root in relist {
                told.trees.remove(&root);
            }
        }
    }

    /// Something changed that the owner cannot name (the watcher overflowed, failed):
    /// the next load lists and reads everything.
    pub fn unknown_changes(&self) {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        told.trees.clear();
    }

    /// The facet files of `tree` (`facets/**.{yaml,yml}`, sorted): from the last
    /// listing and the changes told since where that accounts for everything, else
    /// listed anew (and remembered when changes are told).
    fn facet_paths(&self, tree: &FileTree) -> Result<FacetPaths, TreeError> {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        let root = tree.root_dir().filter(|_| told.on);
        // Only the composing template loads through the cache: a listing of another
        // tree (the project pointed elsewhere meanwhile) may have gone unwatched.
        told.trees.retain(|r, _| Some(r) == root.as_ref());
        if let Some(root) = &root {
            if let Some(listing) = told.trees.get_mut(root) {
                let changed = std::mem::take(&mut listing.changed);
                if let Some((fresh, came_or_went)) =
                    apply_changes(tree, root, &mut listing.paths, &changed)
                {
                    if came_or_went {
                        listing.listed = None;
                    }
                    let paths = listing
                        .listed
                        .get_or_insert_with(|| listing.paths.iter().cloned().collect());
                    return Ok(FacetPaths {
                        paths: Arc::clone(paths),
                        fresh: Some(fresh),
                    });
                }
                told.trees.remove(root);
            }
        }
        let (listed, links) = if tree.is_dir("facets") {
            tree.list_noting_links("facets")?
        } else {
            (Vec::new(), false)
        };
        let mut paths: Vec<String> = listed.into_iter().filter(|p| is_facet_file(p)).collect();
        paths.sort();
        let paths: Arc<[String]> = paths.into();
        if let Some(root) = root {
            // Behind a symlink a file can change under another name than the one
            // listed: such trees are listed every time.
            if !links {
                let listing = Listing {
                    paths: paths.iter().cloned().collect(),
                    changed: Default::default(),
                    listed: Some(Arc::clone(&paths)),
                };
                told.trees.insert(root, listing);
            }
        }
        Ok(FacetPaths { paths, fresh: None })
    }

    /// Forgets entries made with another map than `sources`.
    fn keep_only(&self, files: &FileMap) {
        let map = files as *const FileMap as usize;
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        parsed.retain(|_, c| c.map == map);
    }
}

/// Brings `paths` (the facet files of the last listing of `tree`, rooted at `root`
/// on disk) up to date with the tree paths told `changed`: the files to read again,
/// and whether a file came or went; or `None` when the changes need the directory
/// listed again (a directory or a symlink changed, something could not be looked at).
fn apply_changes(
    tree: &FileTree,
    root: &std::path::Path,
    paths: &mut std::collections::BTreeSet<String>,
    changed: &std::collections::BTreeSet<String>,
) -> Option<(std::collections::BTreeSet<String>, bool)> {
    let mut fresh = std::collections::BTreeSet::new();
    let mut came_or_went = false;
    for path in changed {
        if path == "facets" || "facets".starts_with(&format!("{path}/")) {
            return None;
        }
        if !path.starts_with("facets/") {
            continue;
        }
        // As the listing would see it: the overlay's files, else the disk's entry
        // itself (a link is not followed here).
        let exists = if tree.is_overlaid(path) {
            true
        } else {
            match std::fs::symlink_metadata(root.join(path)) {
                Ok(meta) if meta.is_dir() || meta.file_type().is_symlink() => return None,
                Ok(_) => true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(_) => return None,
            }
        };
        if exists {
            if is_facet_file(path) {
                came_or_went |= paths.insert(path.clone());
                fresh.insert(path.clone());
            }
        } else {
            let below = format!("{path}/");
            if paths
                .range(below.clone()..)
                .next()
                .is_some_and(|p| p.starts_with(&below))
            {
                return None; // a directory went away
            }
            came_or_went |= paths.remove(path);
        }
    }
    Some((fresh, came_or_went))
}

/// Loads a template: facets under `facets/` (recursively, `.yaml`/`.yml`, byte-wise
/// path order), `schema.yaml` and `blueprint.yaml` at the root.
pub fn load(tree: Arc<FileTree>, files: Arc<FileMap>) -> Result<Template, Vec<Diagnostic>> {
    load_cached(tree, files, None)
}

/// As [`load`], reusing the facets of files `cache` holds with the same text.
pub(crate) fn load_cached(
    tree: Arc<FileTree>,
    sources: Arc<FileMap>,
    cache: Option<&FacetCache>,
) -> Result<Template, Vec<Diagnostic>> {
    load_facets(tree, sources, cache.map_or(Facets::Whole, Facets::Cached))
}

/// As [`load`], keeping hollow the facets `pruning`'s test finds certainly inactive
/// (see [`prune`]): for a run that composes one context once. `with_sources`: the
/// template's local sources are loaded too (their values are in the composing
/// template's scope, so then nothing is pruned if it lists any).
pub(crate) fn load_pruned(
    tree: Arc<FileTree>,
    sources: Arc<FileMap>,
    with_sources: bool,
    pruning: &prune::Pruning<'_>,
) -> Result<Template, Vec<Diagnostic>> {
    let how = Facets::Pruned {
        pruning,
        with_sources,
    };
    if with_sources {
        sources::load_with_sources_as(tree, sources, how)
    } else {
        load_facets(tree, sources, how)
    }
}

/// How a load treats facets: all parsed in full, taken from a cache where their
/// text is unchanged, or kept hollow where certainly inactive.
pub(crate) enum Facets<'c, 'p> {
    Whole,
    Cached(&'c FacetCache),
    Pruned {
        pruning: &'c prune::Pruning<'p>,
        /// The local sources will be loaded as well.
        with_sources: bool,
    },
}

pub(crate) fn load_facets(
    tree: Arc<FileTree>,
    sources: Arc<FileMap>,
    how: Facets<'_, '_>,
) -> Result<Template, Vec<Diagnostic>> {
    let (cache, pruning) = match how {
        Facets::Whole => (None, None),
        Facets::Cached(cache) => (Some(cache), None),
        Facets::Pruned {
            pruning,
            with_sources,
        } => (None, Some((pruning, with_sources))),
    };
    if let Some(cache) = cache {
        cache.keep_only(&sources);
    }
    let mut diagnostics = Vec::new();
    let optional = |name: &str, diagnostics: &mut Vec<Diagnostic>| {
        if !tree.exists(name) {
            return None;
        }
        match read_yaml(&tree, &sources, name) {
            Ok(node) => Some(node),
            Err(d) => {
                diagnostics.push(d);
                None
            }
        }
    };
    let base = optional("blueprint.yaml", &mut diagnostics);
    let schema = optional("schema.yaml", &mut diagnostics);
    if let Some(base) = &base {
        parse_facet::Reader {
            diagnostics: &mut diagnostics,
        }
        .blueprint(base);
    }
    // An empty or wrong directory would otherwise compose an empty blueprint.
    if base.is_none() && schema.is_none() && !tree.is_dir("facets") {
        return Err(vec![Diagnostic::error(format!(
            "{} is not a template: it has no facets/, blueprint.yaml or schema.yaml",
            tree.describe("")
        ))
        .with_help("pass the directory (or archive) that holds facets/, or an archive whose top level is _template/")]);
    }

    let mut facets: Vec<Arc<Facet>> = Vec::new();
    let listed = match cache {
        Some(cache) => cache.facet_paths(&tree),
        None => FacetCache::default().facet_paths(&tree),
    };
    let FacetPaths { paths, fresh } = listed.map_err(|e| vec![Diagnostic::error(e.to_string())])?;
    let lists_sources = |base: &Option<Node>| {
        base.as_ref()
            .is_some_and(|b| !source_entry::local_entries(b).is_empty())
    };
    let inactive = pruning
        .filter(|_| paths.len() >= prune::FROM_FACETS)
        .filter(|&(_, with_sources)| !(with_sources && lists_sources(&base)))
        .and_then(|(pruning, _)| pruning(schema.as_ref()));
    facets.extend(parse_facets(
        &tree,
        &sources,
        &paths,
        &mut diagnostics,
        cache.map(|c| (c, fresh.as_ref())),
        inactive.as_deref(),
    ));
    let has_hollow_facets = inactive.is_some() && facets.iter().any(|f| f.hollow);

    duplicate_names(&facets, &mut diagnostics);

    facets.sort_by(|a, b| (a.ordinal, &a.name, &a.path).cmp(&(b.ordinal, &b.name, &b.path)));
    let bodies = pruning.map(|_| bodies::Bodies::lend(&mut facets));

    let (errors, warnings): (Vec<_>, Vec<_>) = diagnostics.into_iter().partition(|d| d.is_error());
    if !errors.is_empty() {
        return Err(errors.into_iter().chain(warnings).collect());
    }
    Ok(Template {
        tree,
        files: sources,
        base,
        schema,
        facets,
        warnings,
        upstream: Vec::new(),
        published: None,
        has_hollow_facets,
        bodies,
    })
}

/// S2: facet names are unique; a name used twice is an error at both definitions.
fn duplicate_names(facets: &[Arc<Facet>], diagnostics: &mut Vec<Diagnostic>) {
    let mut by_name: rustc_hash::FxHashMap<&str, &Arc<Facet>> =
        rustc_hash::FxHashMap::with_capacity_and_hasher(facets.len(), Default::default());
    for facet in facets {
        if let Some(first) = by_name.insert(&facet.name, facet) {
            diagnostics.push(
                Diagnostic::error(format!("duplicate facet name `{}`", facet.name))
                    .with_primary(facet.name_span, "defined again here")
                    .with_secondary(first.name_span, "first defined here")
                    .with_help("facet names must be unique within a template"),
            );
        }
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    const HEAD: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";

    fn tree(b: &str) -> Arc<FileTree> {
        let files = [
            (
                "facets/a.yaml",
                "metadata:\n  name: a\nconfig:\n  - name: x\n    v: 1\n",
            ),
            ("facets/b.yaml", b),
        ];
        let files = files.map(|(p, t)| (p.to_string(), format!("{HEAD}{t}").into_bytes()));
        Arc::new(FileTree::from_files(files, "t").expect("tree"))
    }

    #[test]
    fn a_reload_parses_only_the_changed_file() {
        let sources = Arc::new(FileMap::new());
        let cache = FacetCache::default();
        let first = load_cached(
            tree("metadata:\n  name: b\n"),
            sources.clone(),
            Some(&cache),
        );
        let first = first.expect("loads");
        assert_eq!(sources.len(), 2);
        let b2 = "metadata:\n  name: b2\n";
        let second = load_cached(tree(b2), sources.clone(), Some(&cache)).expect("loads");
        // Only b.yaml was read into the map again; a keeps its file and its facet.
        assert_eq!(sources.len(), 3);
        let names: Vec<&str> = second.facets.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b2"]);
        assert_eq!(first.facets[0].file, second.facets[0].file);
        assert_eq!(
            first.facets[0].config[0].body,
            second.facets[0].config[0].body
        );
        // Another map: nothing is reused, everything is read into it.
        let other = Arc::new(FileMap::new());
        let third = load_cached(tree(b2), other.clone(), Some(&cache)).expect("loads");
        assert_eq!(other.len(), 2);
        assert_eq!(third.facets.len(), 2);
    }
}

#[cfg(test)]
mod sharing_tests {
    use super::*;
    use crate::yaml::NodeKind;

    /// The text of `inputs.<key>` in the first component of `facet`.
    fn input<'f>(facet: &'f Facet, key: &str) -> &'f Arc<str> {
        let inputs = facet.components[0].node.get("inputs").expect("inputs");
        match &inputs.get(key).expect("the input").kind {
            NodeKind::Str(text) => text,
            other => panic!("{key} is {other:?}"),
        }
    }

    #[test]
    fn facets_read_on_one_thread_share_their_repeated_short_strings() {
        // Enough facets for the loader to read them on several threads.
        let files = (0..300).map(|i| {
            let text = format!(
                "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n\
                 metadata:\n  name: f{i}\nterraform:\n  - name: c{i}\n    inputs:\n      \
                 region: \"${{region ?? 'us-east-1'}}\"\n      label: \"${{provider}}-{i}\"\n"
            );
            (format!("facets/f{i:03}.yaml"), text.into_bytes())
        });
        let tree = FileTree::from_files(files, "t").expect("tree");
        let template = load(Arc::new(tree), Arc::new(FileMap::new())).expect("loads");
        assert_eq!(template.facets.len(), 300);
        let mut regions: Vec<*const u8> = template
            .facets
            .iter()
            .map(|f| input(f, "region").as_ptr())
            .collect();
        regions.sort();
        regions.dedup();
        // One text per thread that read facets, not one per facet.
        assert!(
            regions.len() <= crate::parallel::cores(),
            "{}",
            regions.len()
        );
        // Texts that differ stay apart, and each is what its file says.
        for facet in &template.facets {
            let i = facet.name.trim_start_matches('f');
            assert_eq!(&**input(facet, "label"), format!("${{provider}}-{i}"));
            assert_eq!(&**input(facet, "region"), "${region ?? 'us-east-1'}");
        }
    }
}

#[cfg(test)]
mod restore_tests {
    use super::*;

    const HEAD: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";

    /// A template on disk of enough facets to be pruned: `late` applies only once
    /// `zz-enabler`'s block `feature`, written in flow style where the guess at block
    /// names misses it, says so.
    fn template_on_disk(dir: &std::path::Path) {
        let facets = dir.join("facets");
        std::fs::create_dir_all(&facets).expect("mkdir");
        let write = |name: &str, body: &str| {
            std::fs::write(facets.join(name), format!("{HEAD}{body}")).expect("write");
        };
        for k in 0..prune::FROM_FACETS {
            write(
                &format!("filler-{k:03}.yaml"),
                &format!("metadata:\n  name: filler-{k}\nwhen: provider == 'azure'\n"),
            );
        }
        write(
            "late.yaml",
            "metadata:\n  name: late\nwhen: feature.on == true\nterraform:\n  - name: late-net\n",
        );
        write(
            "zz-enabler.yaml",
            "metadata:\n  name: enabler\nconfig: [{name: feature, value: {on: true}}]\n",
        );
    }

    /// The template at `dir` loaded for one composition into a map that lets go of
    /// texts, the fillers and `late` found inactive while parsed; `meanwhile` runs
    /// when `late` is.
    fn load_with_late_inactive(
        dir: &std::path::Path,
        meanwhile: impl Fn() + Sync,
    ) -> Result<Template, Vec<Diagnostic>> {
        let inactive = |facet: &Arc<Facet>| match facet.name.as_str() {
            "late" => {
                meanwhile();
                Some(HashSet::from(["feature".to_string()]))
            }
            name if name.starts_with("filler-") => Some(HashSet::new()),
            _ => None,
        };
        let pruning = |_: Option<&Node>| Some(Box::new(inactive) as Box<prune::Inactive<'_>>);
        let tree = Arc::new(FileTree::open(dir).expect("tree"));
        load_facets(
            tree,
            Arc::new(FileMap::letting_go_of_texts()),
            Facets::Pruned {
                pruning: &pruning,
                with_sources: false,
            },
        )
    }

    #[test]
    fn a_facet_restored_from_hollow_is_read_again_from_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        template_on_disk(dir.path());
        let template = load_with_late_inactive(dir.path(), || {}).expect("loads");
        let late = template.facets.iter().find(|f| f.name == "late");
        let late = late.expect("late is loaded");
        assert!(!late.hollow, "late reads a block, so it is whole");
        assert_eq!(late.components.len(), 1);
        assert!(
            template.facets.iter().any(|f| f.hollow),
            "the fillers are hollow"
        );
    }

    #[test]
    fn a_facet_file_changed_before_it_is_parsed_again_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        template_on_disk(dir.path());
        let late = dir.path().join("facets/late.yaml");
        let errors = load_with_late_inactive(dir.path(), || {
            std::fs::write(&late, format!("{HEAD}metadata:\n  name: other\n")).expect("write");
        })
        .err()
        .expect("an error");
        let shown: Vec<String> = errors.iter().map(|d| d.message.clone()).collect();
        assert!(
            shown.iter().any(|m| m.ends_with(
                "facets/late.yaml changed on disk while bpc ran: it cannot be parsed again"
            )),
            "{shown:?}"
        );
    }
}
