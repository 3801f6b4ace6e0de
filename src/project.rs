//! Finding the project, its template and the context (S1), and reading the context's
//! value layers (S4). This is the only place that looks at the current directory or
//! the process environment; composition itself gets everything through its inputs.

use crate::compose::face::ContextPatches;
use crate::compose::face::Overlay;
use crate::compose::model::inputs::{Builtins, Layer, LayerYaml};
use crate::expr::Value;
use crate::files::{Diagnostic, FileMap, FileTree};
use crate::yaml::{Node, NodeKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub project: Option<PathBuf>,
    pub template: Option<PathBuf>,
    pub context: Option<String>,
    pub values: Vec<PathBuf>,
    pub set: Vec<String>,
    /// How `oci://` sources are pulled (S14).
    pub oci: crate::oci::Settings,
}

pub struct Project {
    pub root: PathBuf,
    pub template: Arc<FileTree>,
    pub context: String,
    /// `windsor.yaml`, when the project has one.
    pub windsor: Option<Node>,
    /// Found while discovering (a context nothing defines); fatal under --strict.
    pub warnings: Vec<Diagnostic>,
    /// The published blueprint the template was pulled from, when the project has no
    /// template of its own (S14).
    pub published: Option<crate::oci::load::Pulled>,
    /// Where the project's own files are read: the directory `root` on disk (`None`),
    /// or a tree standing for it (a commit's files, `bpc diff`). `root` still names
    /// the project in the scope (`project_root`), so both read the same way.
    pub files: Option<Arc<FileTree>>,
    /// Put before the project's own file names in messages and origins (`sub/` for a
    /// project in a sub-directory of its repository; empty otherwise).
    pub shown_prefix: String,
}

/// S1: the nearest ancestor of `cwd` holding `windsor.yaml`, else `cwd`; the template
/// is `contexts/_template` if present, else `_template`; the context comes from
/// `--context`, `WINDSOR_CONTEXT`, windsor.yaml `context:`, else `local`.
pub fn discover(
    cwd: &Path,
    options: &Options,
    env_context: Option<String>,
    sources: &FileMap,
) -> Result<Project, Diagnostic> {
    let root = root_of(cwd, options);
    if !root.is_dir() {
        return Err(Diagnostic::error(format!(
            "project directory {} does not exist",
            root.display()
        )));
    }
    let windsor = read_optional(&root.join("windsor.yaml"), "windsor.yaml", sources)?;
    let (context, explicit) = chosen_context(options, env_context, &windsor)?;
    let template_path = template_of(cwd, &root, options);
    if !template_path.exists() && options.template.is_none() {
        let found = published_project(&root, &windsor, &context, explicit, options, sources)?;
        if let Some(project) = found {
            return Ok(project);
        }
    }
    // Messages name the template relative to the project when it lies inside.
    let shown = template_path
        .strip_prefix(&root)
        .map_or(template_path.as_path(), |rel| rel)
        .display()
        .to_string();
    if !template_path.exists() {
        return Err(Diagnostic::error(format!(
            "no template found: {shown} does not exist"
        ))
        .with_help("run bpc in a project with `contexts/_template` or `_template`, or pass --template DIR|FILE.tar.gz"));
    }
    let mut template = FileTree::open(&template_path)
        .map_err(|e| Diagnostic::error(format!("cannot open template {shown}: {e}")))?;
    // An archive made with `tar czf t.tgz -C contexts _template` holds the template one
    // level down; look inside as local sources do.
    let looks_like_template = |t: &FileTree| {
        t.is_dir("facets") || t.is_file("blueprint.yaml") || t.is_file("schema.yaml")
    };
    if !looks_like_template(&template) && template.is_dir("_template") {
        if let Ok(inner) = template.subtree("_template") {
            template = inner;
        }
    }
    // Messages name files relative to the project, whatever the working directory.
    if let Ok(rel) = template_path.strip_prefix(&root) {
        if !rel.as_os_str().is_empty() {
            template.set_display_root(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    let project = Project {
        root,
        template: Arc::new(template),
        context: String::new(),
        windsor,
        warnings: Vec::new(),
        published: None,
        files: None,
        shown_prefix: String::new(),
    };
    Ok(project.for_context(&context, explicit))
}

/// The context to compose: `--context`, else `WINDSOR_CONTEXT`, else `windsor.yaml`'s
/// `context`, else `local`; and whether one was named at all.
fn chosen_context(
    options: &Options,
    env_context: Option<String>,
    windsor: &Option<Node>,
) -> Result<(String, bool), Diagnostic> {
    let chosen = options
        .context
        .clone()
        .or(env_context.filter(|c| !c.is_empty()))
        .or_else(|| {
            windsor
                .as_ref()
                .and_then(|w| w.get("context"))
                .and_then(Node::as_str)
                .map(str::to_string)
        });
    let explicit = chosen.is_some();
    let context = chosen.unwrap_or_else(|| "local".to_string());
    check_context_name(&context)?;
    Ok((context, explicit))
}

/// The template of a pulled blueprint, its files named as the project sees them.
fn pulled_tree(pulled: &crate::oci::load::Pulled) -> Result<FileTree, Diagnostic> {
    let mut tree = FileTree::open(&pulled.template_dir).map_err(|e| {
        Diagnostic::error(format!(
            "cannot open the template pulled from {}: {e}",
            pulled.url
        ))
    })?;
    tree.set_display_root(pulled.display.clone());
    Ok(tree)
}

/// The project at `root` without a template of its own: on the blueprint the context's
/// sources publish (S14), `None` when they publish none.
fn published_project(
    root: &Path,
    windsor: &Option<Node>,
    context: &str,
    explicit: bool,
    options: &Options,
    sources: &FileMap,
) -> Result<Option<Project>, Diagnostic> {
    let path = format!("contexts/{context}/blueprint.yaml");
    let user = read_optional(&root.join(&path), &path, sources)?;
    let Some(pulled) = crate::oci::load::published(root, user.as_ref(), &path, &options.oci)?
    else {
        return Ok(None);
    };
    let project = Project {
        root: root.to_path_buf(),
        template: Arc::new(pulled_tree(&pulled)?),
        context: String::new(),
        windsor: windsor.clone(),
        warnings: Vec::new(),
        published: Some(pulled),
        files: None,
        shown_prefix: String::new(),
    };
    let mut project = project.for_context(context, explicit);
    if let Some(p) = &project.published {
        project.warnings.splice(0..0, p.warnings.iter().cloned());
    }
    Ok(Some(project))
}

/// The project whose files are `files` (a commit's, for `bpc diff`), named `root` in
/// the scope as the project on disk is, its file names prefixed by `shown_prefix` in
/// messages. As [`discover`], without `--template`: the template is the tree's
/// `contexts/_template` or `_template`, else the published blueprint the context's
/// `blueprint.yaml` chooses.
pub fn discover_in(
    root: PathBuf,
    files: FileTree,
    shown_prefix: &str,
    options: &Options,
    env_context: Option<String>,
    sources: &FileMap,
) -> Result<Project, Diagnostic> {
    let mut files = files;
    files.set_display_root(match shown_prefix.trim_end_matches('/') {
        "" => ".",
        prefix => prefix,
    });
    let mut project = Project {
        root,
        template: Arc::new(files.clone()),
        context: String::new(),
        windsor: None,
        warnings: Vec::new(),
        published: None,
        files: Some(Arc::new(files.clone())),
        shown_prefix: shown_prefix.to_string(),
    };
    project.windsor = project.read_own("windsor.yaml", sources)?;
    let (context, explicit) = chosen_context(options, env_context, &project.windsor)?;
    let dir = ["contexts/_template", "_template"]
        .into_iter()
        .find(|dir| files.is_dir(dir));
    match dir {
        Some(dir) => {
            let mut template = files
                .subtree(dir)
                .map_err(|e| Diagnostic::error(format!("cannot open template {dir}: {e}")))?;
            // The tree names its files from the project root down, `dir/` included.
            template.set_display_root(project.shown_root());
            project.template = Arc::new(template);
        }
        None => {
            let path = format!("contexts/{context}/blueprint.yaml");
            let user = project.read_own(&path, sources)?;
            let shown = project.shown(&path);
            let Some(pulled) =
                crate::oci::load::published(&project.root, user.as_ref(), &shown, &options.oci)?
            else {
                return Err(Diagnostic::error(format!(
                    "no template found: {} has neither contexts/_template nor _template, and {shown} names no oci:// source",
                    project.shown_root()
                )));
            };
            project.template = Arc::new(pulled_tree(&pulled)?);
            project.published = Some(pulled);
        }
    }
    let mut project = project.for_context(&context, explicit);
    if let Some(p) = &project.published {
        project.warnings.splice(0..0, p.warnings.iter().cloned());
    }
    Ok(project)
}

/// Whether there is a project to discover from `cwd`: the options name one (its
/// directory, template or context), the default template exists there, or a
/// `windsor.yaml` project whose contexts list `oci://` sources (S14).
pub fn present(cwd: &Path, options: &Options) -> bool {
    let named =
        options.project.is_some() || options.template.is_some() || options.context.is_some();
    let root = root_of(cwd, options);
    named || template_of(cwd, &root, options).exists() || lists_oci_sources(&root)
}

/// Whether `root` holds `windsor.yaml` and a `contexts/<ctx>/blueprint.yaml` naming an
/// `oci://` source.
fn lists_oci_sources(root: &Path) -> bool {
    if !root.join("windsor.yaml").is_file() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(root.join("contexts")) else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::read_to_string(e.path().join("blueprint.yaml"))
            .is_ok_and(|text| text.contains("oci://"))
    })
}

/// `--project`, else the nearest ancestor of `cwd` holding `windsor.yaml`, else `cwd`.
fn root_of(cwd: &Path, options: &Options) -> PathBuf {
    match &options.project {
        // Lexically cleaned, so `--project .` or `a/..` still names the folder: the
        // dev repository URL and `projectName` use its last component.
        Some(p) => clean_path(&cwd.join(p)),
        None => cwd
            .ancestors()
            .find(|dir| dir.join("windsor.yaml").is_file())
            .unwrap_or(cwd)
            .to_path_buf(),
    }
}

/// `path` without `.` components, each `..` taking away the component before it
/// (a `..` at the root stays at the root).
fn clean_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `--template`, else `contexts/_template` if it is a directory, else `_template`.
fn template_of(cwd: &Path, root: &Path, options: &Options) -> PathBuf {
    match &options.template {
        Some(t) => cwd.join(t),
        None => {
            let nested = root.join("contexts").join("_template");
            if nested.is_dir() {
                nested
            } else {
                root.join("_template")
            }
        }
    }
}

/// Context names become path components (`contexts/<name>/values.yaml`), so only
/// plain names are accepted: letters, digits, `-`, `_` and `.`, not starting with `.`.
pub fn check_context_name(name: &str) -> Result<(), Diagnostic> {
    let plain = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(())
    } else {
        Err(Diagnostic::error(format!("invalid context name {name:?}"))
            .with_help("a context name is letters, digits, `-`, `_` and `.`, not starting with `.` (it names the directory contexts/<name>/)"))
    }
}

fn read_optional(path: &Path, display: &str, files: &FileMap) -> Result<Option<Node>, Diagnostic> {
    // Anything at the path is read (or refused if it is not a regular file); only a
    // missing file is skipped.
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    read_yaml_file(path, display, files).map(Some)
}

/// Reads and parses a YAML file named on the command line or found in the project.
/// Only regular files are read (a FIFO would block, a device never end).
pub fn read_yaml_file(path: &Path, display: &str, sources: &FileMap) -> Result<Node, Diagnostic> {
    let read = || -> Result<String, String> {
        let mut file =
            crate::files::tree::open_regular(path, display, None).map_err(|e| e.message)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| e.to_string())?;
        crate::files::tree::utf8_text(bytes)
    };
    let text = read().map_err(|e| Diagnostic::error(format!("cannot read {display}: {e}")))?;
    let file = sources.add(display.to_string(), text);
    let text = sources.text(file).unwrap_or_default();
    crate::yaml::parse(&text, file).map_err(Diagnostic::from)
}

impl Project {
    /// Whether the project defines context `name`: a `contexts/<name>/` directory or a
    /// `contexts.<name>` entry in windsor.yaml.
    pub fn defines(&self, name: &str) -> bool {
        self.own_is_dir(&format!("contexts/{name}"))
            || self
                .windsor
                .as_ref()
                .and_then(|w| w.get("contexts"))
                .and_then(|c| c.get(name))
                .is_some()
    }

    /// Every context the project defines, sorted: the `contexts/<name>/` directories
    /// (not `_template`, which holds the template) and the keys of windsor.yaml
    /// `contexts:`. Names that are not valid context names are left out.
    pub fn contexts(&self) -> Vec<String> {
        let mut names = std::collections::BTreeSet::new();
        if let Some(tree) = &self.files {
            let marker = crate::files::out_path::RENDER_MARKER;
            for path in tree.list("contexts").unwrap_or_default() {
                let mut parts = path.splitn(3, '/').skip(1);
                let (Some(name), Some(_)) = (parts.next(), parts.next()) else {
                    continue;
                };
                let rendered = tree.is_file(&format!("contexts/{name}/{marker}"));
                if name != "_template" && !rendered {
                    names.insert(name.to_string());
                }
            }
        } else if let Ok(entries) = std::fs::read_dir(self.root.join("contexts")) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                // A tree `bpc render` wrote (its marker file) is output, not a context.
                let rendered = entry
                    .path()
                    .join(crate::files::out_path::RENDER_MARKER)
                    .is_file();
                if name != "_template" && entry.path().is_dir() && !rendered {
                    names.insert(name);
                }
            }
        }
        if let Some(NodeKind::Map(entries)) = self
            .windsor
            .as_ref()
            .and_then(|w| w.get("contexts"))
            .map(|c| &c.kind)
        {
            names.extend(entries.iter().map(|(key, _)| key.name.to_string()));
        }
        names
            .into_iter()
            .filter(|name| check_context_name(name).is_ok())
            .collect()
    }

    /// The same project composing context `name` instead (the template is shared, not
    /// reloaded). `named` says the user chose the name, so an undefined context is
    /// worth a warning.
    pub fn for_context(&self, name: &str, named: bool) -> Project {
        let mut warnings = Vec::new();
        if named && !self.defines(name) {
            warnings.push(
                Diagnostic::warning(format!(
                    "context `{name}` is not defined: there is no contexts/{name}/ and no `contexts.{name}` in windsor.yaml, so it has no values"
                ))
                .with_help("check the name; --strict makes this an error"),
            );
        }
        warnings.extend(self.invalid_context_keys());
        Project {
            root: self.root.clone(),
            template: self.template.clone(),
            context: name.to_string(),
            windsor: self.windsor.clone(),
            warnings,
            published: self.published.clone(),
            files: self.files.clone(),
            shown_prefix: self.shown_prefix.clone(),
        }
    }

    /// For a project built on a published blueprint: an error when context `name`'s
    /// `blueprint.yaml` chooses another one than the loaded template (S14; one loaded
    /// template serves every context of a run).
    pub fn same_published(&self, name: &str, files: &FileMap) -> Result<(), Diagnostic> {
        let Some(published) = &self.published else {
            return Ok(());
        };
        let path = format!("contexts/{name}/blueprint.yaml");
        let user = self.read_own(&path, files)?;
        let chosen = user.as_ref().and_then(|u| {
            crate::oci::sources::entries(u)
                .into_iter()
                .rev()
                .find(|e| e.install)
        });
        match chosen {
            Some(e) if e.url == published.url => Ok(()),
            Some(e) => Err(Diagnostic::error(format!(
                "context `{name}` is built on {}, but this run loaded {} (from context `{}`)",
                e.url, published.url, self.context
            ))
            .with_primary(e.url_span, "another published blueprint")
            .with_help("compose that context on its own (--context), not in one run with the others")),
            None => Err(Diagnostic::error(format!(
                "context `{name}` lists no oci:// source to build on ({path}), but this run loaded {}",
                published.url
            ))
            .with_help("list the same source in its blueprint.yaml, or compose it on its own")),
        }
    }

    /// A warning (an error under `--strict`, as every warning) for each key of
    /// windsor.yaml `contexts:` that is not a valid context name: such a context can
    /// never be composed, and `--all-contexts` leaves it out.
    fn invalid_context_keys(&self) -> Vec<Diagnostic> {
        let Some(NodeKind::Map(entries)) = self
            .windsor
            .as_ref()
            .and_then(|w| w.get("contexts"))
            .map(|c| &c.kind)
        else {
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(key, _)| {
                let invalid = check_context_name(&key.name).err()?;
                Some(
                    Diagnostic::warning(format!(
                        "windsor.yaml: `contexts.{}` is not a valid context name, so this context is skipped",
                        key.name.escape_debug()
                    ))
                    .with_primary(key.span, "not a valid context name")
                    .with_help(invalid.help.unwrap_or_default()),
                )
            })
            .collect()
    }

    /// How project file `rel` is named in messages and origins.
    pub fn shown(&self, rel: &str) -> String {
        format!("{}{rel}", self.shown_prefix)
    }

    /// How the project root is named in messages: `.`, or the prefix without its `/`.
    fn shown_root(&self) -> String {
        match self.shown_prefix.trim_end_matches('/') {
            "" => ".".to_string(),
            prefix => prefix.to_string(),
        }
    }

    /// Whether the project holds directory `rel` (on disk, or in its tree).
    fn own_is_dir(&self, rel: &str) -> bool {
        match &self.files {
            Some(tree) => tree.is_dir(rel),
            None => self.root.join(rel).is_dir(),
        }
    }

    /// The project's own files as a tree.
    fn own_tree(&self) -> Result<FileTree, Diagnostic> {
        match &self.files {
            Some(tree) => Ok(FileTree::clone(tree)),
            None => FileTree::from_dir(&self.root).map_err(|e| {
                Diagnostic::error(format!("cannot open project {}: {e}", self.root.display()))
            }),
        }
    }

    /// Project file `rel` parsed as YAML, when there is one (from disk or the tree).
    pub fn read_own(&self, rel: &str, files: &FileMap) -> Result<Option<Node>, Diagnostic> {
        let shown = self.shown(rel);
        let Some(tree) = &self.files else {
            return read_optional(&self.root.join(rel), &shown, files);
        };
        if !tree.exists(rel) {
            return Ok(None);
        }
        let text = tree
            .read_to_string(rel)
            .map_err(|e| Diagnostic::error(format!("cannot read {shown}: {}", e.message)))?;
        let file = files.add(shown, text);
        let text = files.text(file).unwrap_or_default();
        crate::yaml::parse(&text, file)
            .map(Some)
            .map_err(Diagnostic::from)
    }

    pub fn builtins(&self) -> Builtins {
        let root = self.root.to_string_lossy().replace('\\', "/");
        Builtins {
            context: self.context.clone(),
            context_path: format!("{root}/contexts/{}", self.context),
            project_root: root,
        }
    }

    /// The context's own blueprint, `contexts/<ctx>/blueprint.yaml`, when there is one
    /// (S12). Read at each call, so a composition sees the file as it is now.
    pub fn overlay(&self, files: &FileMap) -> Result<Option<Overlay>, Diagnostic> {
        let path = format!("contexts/{}/blueprint.yaml", self.context);
        let Some(node) = self.read_own(&path, files)? else {
            return Ok(None);
        };
        // Relative paths in its inputs start at the file's directory and stay inside
        // the project (S8 confines the template the same way).
        let tree = self.own_tree()?;
        Ok(Some(Overlay { node, tree, path }))
    }

    /// The context's patch files, `contexts/<ctx>/patches/<name>/*.yaml` (S13). Read at
    /// each call, as the overlay is.
    pub fn context_patches(&self, sources: &FileMap) -> Result<ContextPatches, Diagnostic> {
        let dir = format!("contexts/{}/patches", self.context);
        if !self.own_is_dir(&dir) {
            return Ok(ContextPatches::default());
        }
        let mut tree = self.own_tree()?;
        // Messages name the files relative to the project, as they do the overlay.
        tree.set_display_root(self.shown_root());
        Ok(ContextPatches::read(&tree, &dir, sources))
    }

    /// The context's value layers in precedence order (S4, schema defaults excluded).
    /// Relative `--values` paths are taken from `cwd`; messages name them as given.
    pub fn layers(
        &self,
        options: &Options,
        cwd: &Path,
        files: &FileMap,
    ) -> Result<Vec<Layer>, Diagnostic> {
        let mut layers = Vec::new();
        if let Some(section) = self
            .windsor
            .as_ref()
            .and_then(|w| w.get("contexts"))
            .and_then(|c| c.get(&self.context))
        {
            layers.push(Layer {
                name: format!("windsor.yaml contexts.{}", self.context),
                value: section.to_value(),
                yaml: Some(LayerYaml {
                    span: section.span,
                    within: vec!["contexts".to_string(), self.context.clone()],
                }),
            });
        }
        let values_rel = format!("contexts/{}/values.yaml", self.context);
        if let Some(node) = self.read_own(&values_rel, files)? {
            layers.push(Layer::of_file(self.shown(&values_rel), node));
        }
        for file in &options.values {
            let display = file.to_string_lossy().to_string();
            let node = read_yaml_file(&cwd.join(file), &display, files)?;
            layers.push(Layer::of_file(display, node));
        }
        if !options.set.is_empty() {
            layers.push(Layer {
                name: "--set".to_string(),
                value: parse_sets(&options.set, files)?,
                yaml: None,
            });
        }
        Ok(layers)
    }
}

/// `--set a.b=value` pairs into one map; each value is parsed as YAML. As in Helm, a
/// segment may index a list, `--set 'hosts[0].name=a'`: the list is made (padded with
/// nulls up to the index) and, like every list of a value layer, replaces the list of
/// the layers below as a whole.
pub fn parse_sets(pairs: &[String], files: &FileMap) -> Result<Value, Diagnostic> {
    let mut out = Value::map(crate::expr::Map::default());
    for pair in pairs {
        let Some((key, raw)) = pair.split_once('=') else {
            return Err(
                Diagnostic::error(format!("--set {pair:?}: expected KEY=VALUE"))
                    .with_help("for example --set cluster.workers.count=3"),
            );
        };
        let steps = set_steps(key).map_err(|why| {
            Diagnostic::error(format!("--set {pair:?}: {why}"))
                .with_help("a key path is names joined by `.`, each optionally followed by list indexes: a.b[0].c")
        })?;
        if steps.len() > crate::yaml::MAX_DEPTH {
            return Err(Diagnostic::error(format!(
                "--set: the key path has {} segments; at most {} are allowed",
                steps.len(),
                crate::yaml::MAX_DEPTH
            )));
        }
        let file = files.add(format!("--set {key}"), raw.to_string());
        let text = files.text(file).unwrap_or_default();
        let node = crate::yaml::parse(&text, file).map_err(Diagnostic::from)?;
        let value = node.to_value();
        // The path's levels and the value's together are one value's depth.
        let room = crate::value::depth::MAX_VALUE_DEPTH.saturating_sub(steps.len());
        if crate::value::depth::deeper_than(&value, room) {
            return Err(Diagnostic::error(format!(
                "--set {key}: the key path and the value nest deeper than {} levels together",
                crate::value::depth::MAX_VALUE_DEPTH
            )));
        }
        set_steps_in(&mut out, &steps, value);
    }
    Ok(out)
}

/// Largest list index `--set` accepts (Helm's own bound): `a[100000000]` would
/// otherwise allocate that many nulls.
pub const MAX_SET_INDEX: usize = 65_536;

/// One step of a `--set` key path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetStep<'k> {
    Key(&'k str),
    Index(usize),
}

/// `a.b[0][2].c` → `a`, `b`, `[0]`, `[2]`, `c`; an error for an empty segment, an
/// index that is not a number or over [`MAX_SET_INDEX`], or a path that starts with
/// an index.
pub fn set_steps(key: &str) -> Result<Vec<SetStep<'_>>, String> {
    let mut steps = Vec::new();
    if key.is_empty() {
        return Err("the key path is empty".to_string());
    }
    for segment in key.split('.') {
        let (name, mut rest) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if name.is_empty() {
            return Err(format!("`{key}` is not a dotted key path (an empty name)"));
        }
        steps.push(SetStep::Key(name));
        while !rest.is_empty() {
            let Some(close) = rest.find(']').filter(|_| rest.starts_with('[')) else {
                return Err(format!("`{key}`: `{rest}` is not a list index like [0]"));
            };
            let digits = &rest[1..close];
            let index: usize = digits
                .parse()
                .ok()
                .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    format!("`{key}`: `[{digits}]` is not a list index (a number from 0)")
                })?;
            if index > MAX_SET_INDEX {
                return Err(format!(
                    "`{key}`: the index {index} is over the largest allowed, {MAX_SET_INDEX}"
                ));
            }
            steps.push(SetStep::Index(index));
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

/// Sets the value at `steps`, creating maps and lists on the way; a value of another
/// kind in the way is replaced.
fn set_steps_in(target: &mut Value, steps: &[SetStep<'_>], value: Value) {
    let mut target = target;
    for step in steps {
        target = match step {
            SetStep::Key(name) => {
                if !matches!(target, Value::Map(_)) {
                    *target = Value::map(crate::expr::Map::default());
                }
                let Value::Map(m) = target else { return };
                Arc::make_mut(m)
                    .entry(Arc::from(*name))
                    .or_insert(Value::Nil)
            }
            SetStep::Index(i) => {
                if !matches!(target, Value::List(_)) {
                    *target = Value::list(Vec::new());
                }
                let Value::List(items) = target else { return };
                let items = Arc::make_mut(items);
                if items.len() <= *i {
                    items.resize(*i + 1, Value::Nil);
                }
                &mut items[*i]
            }
        };
    }
    *target = value;
}

#[cfg(test)]
mod clean_path_tests {
    use super::clean_path;
    use std::path::Path;

    #[test]
    fn dots_are_resolved_lexically() {
        assert_eq!(clean_path(Path::new("/w/proj/.")), Path::new("/w/proj"));
        assert_eq!(clean_path(Path::new("/w/a/../proj/")), Path::new("/w/proj"));
        assert_eq!(clean_path(Path::new("/..")), Path::new("/"));
        assert_eq!(clean_path(Path::new("../x/..")), Path::new(".."));
        assert_eq!(clean_path(Path::new(".")), Path::new("."));
    }
}
