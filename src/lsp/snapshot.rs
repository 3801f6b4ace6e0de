//! One analysis of the project as the editor has it: the template loaded with the
//! open documents laid over the files on disk, checked, and composed for every
//! context the project defines. Requests read the latest snapshot; a new one is built
//! after every burst of edits.

use super::documents::Documents;
use super::position::LineIndex;
use super::settings::Settings;
use crate::check::{Allow, Report};
use crate::compose::face::Composition;
use crate::files::{Diagnostic, FileId, FileMap, FileOverlay, FileTree, Span};
use crate::session::{Options, Recomposer, Session};
use lsp_types::Range;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The project-level config whose `check.allow` silences findings (as `bpc check`).
const PROJECT_CONFIG: &str = "bpc.yaml";

pub struct Snapshot {
    /// Counts the snapshots of this server; a later one supersedes this.
    pub generation: u64,
    /// The project root: files are named relative to it.
    pub root: PathBuf,
    pub files: Arc<FileMap>,
    /// The loaded project, or why it could not be loaded.
    pub session: Result<Session, Vec<Diagnostic>>,
    /// The context hovers and completions use.
    pub context: String,
    /// Every context composed, the current one first.
    pub compositions: Vec<(String, Result<Composition, Vec<Diagnostic>>)>,
    /// `bpc check`'s findings (`None` when the template did not load).
    pub report: Option<Report>,
    /// Problems with `bpc.yaml` itself.
    pub config_errors: Vec<Diagnostic>,
    /// The findings of the `bpc.policies` on the current context, and the policies'
    /// own errors.
    pub policies: Vec<Diagnostic>,
    /// How long each step of the analysis took, for the client's log.
    pub timings: Vec<(&'static str, Duration)>,
    /// Line indexes of the files read, made on first use.
    lines: Mutex<HashMap<FileId, Arc<LineIndex>>>,
}

impl Snapshot {
    /// Loads, checks and composes the project at `root` with `documents` overlaid.
    pub fn build(
        root: &Path,
        settings: &Settings,
        documents: &Documents,
        generation: u64,
        reuse: &mut Reuse,
        cancel: &Arc<AtomicBool>,
    ) -> Snapshot {
        let mut options = Options::at(root);
        options.cancel = Some(Arc::clone(cancel));
        options.locate.context = settings.context.clone();
        options.limits.jsonnet = settings.jsonnet;
        options.locate.oci = crate::oci::Settings {
            offline_by: Some(crate::oci::OfflineBy {
                what: "the language server's setting `bpc.pull` (off)".to_string(),
                help: "pull it once from a terminal (`bpc compose`, `windsor init`), or set `bpc.pull: true` in the editor's settings for this server".to_string(),
            }),
            failed: Some(reuse.failed_pulls.clone()),
            ..crate::oci::Settings::from_process(!settings.pull)
        };
        options.env_context = std::env::var("WINDSOR_CONTEXT").ok();
        *reuse.engine.options_mut() = options;
        if !settings.incremental {
            reuse.engine.forget();
            reuse.check = crate::check::Memo::default();
        }
        let overlay = |tree: &FileTree| overlay_of(tree, documents);
        let started = Instant::now();
        let session = reuse.engine.open_overlaid(overlay);
        if let Ok(session) = &session {
            reuse.check_watched(&session.template.tree);
        }
        let sources = reuse.engine.sources().clone();
        let mut snapshot = Snapshot {
            generation,
            root: root.to_path_buf(),
            files: sources.clone(),
            context: String::new(),
            compositions: Vec::new(),
            report: None,
            config_errors: Vec::new(),
            policies: Vec::new(),
            timings: vec![("load", started.elapsed())],
            lines: Mutex::default(),
            session,
        };
        let Ok(session) = &snapshot.session else {
            return snapshot;
        };
        snapshot.root = session.project.root.clone();
        snapshot.context = session.project.context.clone();
        let allow = match project_allows(&session.project.root, &sources) {
            Ok(allow) => allow,
            Err(errors) => {
                snapshot.config_errors = errors;
                Vec::new()
            }
        };
        let checking = Instant::now();
        snapshot.report = Some(crate::check::check_incremental(
            &session.template,
            &session.engine,
            &allow,
            &mut reuse.check,
        ));
        snapshot.timings.push(("check", checking.elapsed()));
        let composing = Instant::now();
        let others: Vec<String> = session
            .contexts()
            .into_iter()
            .filter(|c| *c != snapshot.context)
            .collect();
        let current = reuse.engine.compose(session);
        let rest = reuse.engine.compose_contexts(session, &others);
        snapshot.compositions = std::iter::once((snapshot.context.clone(), current))
            .chain(others.into_iter().zip(rest))
            .collect();
        snapshot.timings.push(("compose", composing.elapsed()));
        if !settings.policies.is_empty() {
            let checking = Instant::now();
            if let Some((_, Ok(composition))) = snapshot.compositions.first() {
                snapshot.policies =
                    policy_diagnostics(session, &settings.policies, &snapshot.context, composition);
            }
            snapshot.timings.push(("policies", checking.elapsed()));
        }
        snapshot
    }

    /// The protocol range of a span, in the text this snapshot read.
    pub fn range(&self, span: Span) -> Option<Range> {
        let index = {
            let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
            match lines.get(&span.file) {
                Some(index) => index.clone(),
                None => {
                    let index = Arc::new(LineIndex::shared(self.files.text(span.file)?));
                    lines.insert(span.file, index.clone());
                    index
                }
            }
        };
        Some(index.range(span.start as usize, span.end as usize))
    }

    /// The file on disk a source file of this snapshot stands for.
    pub fn path_of(&self, file: FileId) -> Option<PathBuf> {
        let name = self.files.path(file)?;
        if name.starts_with('<') {
            return None;
        }
        Some(self.root.join(name))
    }

    /// The composition of the current context, if it composed.
    pub fn composition(&self) -> Option<&Composition> {
        self.compositions.first()?.1.as_ref().ok()
    }

    /// The template directory on disk.
    pub fn template_dir(&self) -> Option<PathBuf> {
        self.session.as_ref().ok()?.template.tree.root_dir()
    }
}

/// The policies' findings on the current context as diagnostics (or the policies'
/// errors): loaded afresh each analysis, as the policy files may have changed.
fn policy_diagnostics(
    session: &Session,
    paths: &[String],
    context: &str,
    composition: &Composition,
) -> Vec<Diagnostic> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| session.project.root.join(p)).collect();
    let namespaces = ["main".to_string()];
    let checked = crate::policy::load(&paths, &namespaces, &session.files).and_then(|policies| {
        let rendered = session.render_kept(composition, crate::render::ManifestFormat::Json)?;
        crate::policy::check_context(
            &policies,
            context,
            composition,
            &rendered.files,
            session.schema.as_ref(),
            crate::policy::Budget::default(),
        )
        .map_err(|d| vec![d])
    });
    match checked {
        Ok(checked) => checked
            .findings
            .iter()
            .map(|f| f.diagnostic(&[context.to_string()]))
            .collect(),
        Err(errors) => errors,
    }
}

/// What one analysis hands the next: the engine that keeps the files read so far,
/// the facets parsed from them and each context's last composition, so a reload
/// parses only the files whose text changed and a composition collects only the
/// facets whose inputs changed ([`Recomposer`]; it starts afresh now and then).
///
/// When the client watches the workspace's files for the server
/// (`workspace/didChangeWatchedFiles`, registered at start), the engine is told every
/// change (documents opened, edited, saved or closed, files changed on disk) and a
/// reload reads only those files; otherwise every reload lists and reads the
/// template.
pub struct Reuse {
    pub engine: Recomposer,
    /// The last check's findings per facet.
    pub check: crate::check::Memo,
    /// The directory the client watches for the server, if it does.
    watched: Option<PathBuf>,
    /// Pulls that failed in this session: not tried again on every analysis.
    pub failed_pulls: crate::oci::FailedPulls,
}

impl Reuse {
    pub fn new() -> Reuse {
        Reuse {
            engine: Recomposer::new(Options::at(".")),
            check: crate::check::Memo::default(),
            watched: None,
            failed_pulls: crate::oci::FailedPulls::default(),
        }
    }

    /// A new start that keeps only whether the client watches files and which pulls
    /// failed.
    pub fn afresh(&self) -> Reuse {
        let mut reuse = Reuse::new();
        reuse.failed_pulls = self.failed_pulls.clone();
        if let Some(root) = &self.watched {
            reuse.watch_files(root);
        }
        reuse
    }

    /// The client reports every change of the files under `root` from now on.
    pub fn watch_files(&mut self, root: &Path) {
        self.watched = Some(root.to_path_buf());
        self.engine.tell_changes(true);
    }

    /// An open document's text changed, or it was opened, saved or closed (its file
    /// now reads differently, or may).
    pub fn document_changed(&mut self, path: &Path) {
        self.engine.changed([path]);
    }

    /// `workspace/didChangeWatchedFiles`: the files named changed on disk (any that
    /// cannot be read as a path: everything may have).
    pub fn files_changed(&mut self, params: serde_json::Value) {
        let Ok(params) = serde_json::from_value::<lsp_types::DidChangeWatchedFilesParams>(params)
        else {
            self.engine.unknown_changes();
            return;
        };
        for change in params.changes {
            match super::uri::to_path(&change.uri) {
                Some(path) => self.engine.changed([path.as_path()]),
                None => self.engine.unknown_changes(),
            }
        }
    }

    /// A template outside the watched directory changes unseen: then every reload
    /// reads it whole.
    fn check_watched(&mut self, tree: &FileTree) {
        let Some(root) = &self.watched else {
            return;
        };
        let inside = tree.root_dir().is_some_and(|dir| dir.starts_with(root));
        if !inside {
            self.watched = None;
            self.engine.tell_changes(false);
        }
    }
}

/// The `client/registerCapability` request asking the client to report changes of
/// every file under the workspace, when it can (dynamic registration of
/// `workspace/didChangeWatchedFiles`).
pub fn watch_registration(params: &lsp_types::InitializeParams) -> Option<lsp_server::Request> {
    let dynamic = params
        .capabilities
        .workspace
        .as_ref()?
        .did_change_watched_files
        .as_ref()?
        .dynamic_registration?;
    if !dynamic {
        return None;
    }
    let options = lsp_types::DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![lsp_types::FileSystemWatcher {
            glob_pattern: lsp_types::GlobPattern::String("**/*".to_string()),
            kind: None,
        }],
    };
    let registration = lsp_types::Registration {
        id: "bpc-watched-files".to_string(),
        method: "workspace/didChangeWatchedFiles".to_string(),
        register_options: serde_json::to_value(options).ok(),
    };
    let params = lsp_types::RegistrationParams {
        registrations: vec![registration],
    };
    Some(lsp_server::Request::new(
        lsp_server::RequestId::from("bpc-watch-files".to_string()),
        "client/registerCapability".to_string(),
        params,
    ))
}

/// The open documents inside `tree`'s directory, by tree path.
fn overlay_of(tree: &FileTree, documents: &Documents) -> FileOverlay {
    let Some(dir) = tree.root_dir() else {
        return FileOverlay::new();
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    documents
        .iter()
        .filter_map(|(path, doc)| {
            let path = path.canonicalize().unwrap_or_else(|_| path.clone());
            let relative = path.strip_prefix(&dir).ok()?;
            let tree_path = relative.to_string_lossy().replace('\\', "/");
            Some((tree_path, Arc::from(doc.text.as_bytes())))
        })
        .collect()
}

/// `check.allow` of the project's `bpc.yaml`, as `bpc check` reads it.
fn project_allows(root: &Path, files: &FileMap) -> Result<Vec<Allow>, Vec<Diagnostic>> {
    let path = root.join(PROJECT_CONFIG);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let node = crate::project::read_yaml_file(&path, PROJECT_CONFIG, files).map_err(|d| vec![d])?;
    crate::check::silence::project_allows(&node)
}
