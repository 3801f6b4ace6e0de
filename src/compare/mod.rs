//! `bpc diff`: what a change does to every context of a project, between two
//! versions of it (two commits, or a commit and the work tree). Each side is loaded
//! once ([`sides`], a commit read by [`git`]); every context of either side is then
//! composed and rendered on both, all contexts in parallel; the two results are
//! flattened ([`snapshot`]) and compared ([`changes`]), and [`report`] writes what
//! differs as text, JSON, Markdown or the affected matrix.

pub mod changes;
pub mod git;
mod inputs;
pub mod report;
pub mod sides;
pub mod snapshot;

use crate::files::{Diagnostic, FileMap};
use crate::render::ManifestFormat;
use crate::session::Options;
use changes::{Change, Changes};
use sides::{Revision, Side};
use snapshot::{Secrets, Snapshot};

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The base revision; `None` for the merge base of HEAD and the default branch.
    pub base: Option<String>,
    /// The head revision; `None` for the work tree.
    pub head: Option<String>,
    /// The contexts; empty for every context of either side.
    pub contexts: Vec<String>,
    /// How the work tree's project is found, and how every context composes.
    pub options: Options,
}

/// How one context differs.
#[derive(Debug)]
pub struct ContextDiff {
    pub context: String,
    /// `None`: the same on both sides.
    pub change: Option<Change>,
    pub changes: Changes,
    /// Why the context could not be compared (its composition failed on a side):
    /// `(side, rendered diagnostics)`.
    pub failed: Vec<(String, String)>,
}

/// The whole comparison.
#[derive(Debug)]
pub struct Diff {
    pub base: String,
    pub head: String,
    /// The template on each side, when it differs (a new `oci://` tag, another
    /// local template).
    pub template: Option<(String, String)>,
    pub contexts: Vec<ContextDiff>,
}

impl Diff {
    /// Whether anything differs.
    pub fn differs(&self) -> bool {
        self.template.is_some() || self.contexts.iter().any(|c| c.change.is_some())
    }

    /// Whether a context could not be compared.
    pub fn failed(&self) -> bool {
        self.contexts.iter().any(|c| !c.failed.is_empty())
    }
}

/// Loads both sides and compares every context asked for.
pub fn diff(request: &Request) -> Result<Diff, (Vec<Diagnostic>, std::sync::Arc<FileMap>)> {
    let scratch = std::sync::Arc::new(FileMap::new());
    let fail = |d: Vec<Diagnostic>| (d, scratch.clone());
    let locate = crate::project::Options {
        context: None,
        ..request.options.locate.clone()
    };
    let options = Options {
        locate,
        for_explain: crate::compose::model::for_explain::ForExplain::Dropped,
        ..request.options.clone()
    };
    let work = crate::project::discover(
        &options.cwd,
        &options.locate,
        options.env_context.clone(),
        &scratch,
    )
    .map_err(|d| fail(vec![d]))?;
    let repo = git::Repository::around(&work.root).map_err(|d| fail(vec![d]))?;
    let prefix = repo.prefix_of(&work.root).map_err(|d| fail(vec![d]))?;
    let base = match &request.base {
        Some(spec) => repo.resolve(spec),
        None => repo.default_base(),
    }
    .map_err(|d| fail(vec![d]))?;
    let head = match &request.head {
        Some(spec) => Revision::Commit(repo.resolve(spec).map_err(|d| fail(vec![d]))?),
        None => Revision::WorkTree,
    };
    // The repository is read on this thread; the two sides then load at once.
    let base = Revision::Commit(base);
    let base_files = sides::files_of(&base, &repo, &prefix).map_err(|d| fail(vec![d]))?;
    let head_files = sides::files_of(&head, &repo, &prefix).map_err(|d| fail(vec![d]))?;
    let open = |revision: Revision, files: Option<crate::files::FileTree>| {
        sides::open(revision, files, &work, &prefix, &options)
    };
    let (old, new) = std::thread::scope(|s| {
        let old = s.spawn(|| open(base, base_files));
        let new = open(head, head_files);
        (old.join(), new)
    });
    let old = old.map_err(|_| fail(vec![Diagnostic::error("loading the base side failed")]))??;
    let new = new?;
    let names = contexts(request, &old, &new).map_err(|d| fail(vec![d]))?;
    // Unchanged inputs, unchanged context: only a context that reads something
    // that changed is composed.
    let shared = inputs::shared(&old.session.project)
        .filter(|a| inputs::shared(&new.session.project).as_ref() == Some(a));
    let contexts = crate::parallel::map(&names, crate::parallel::cores(), |name| {
        let same = shared.is_some() && {
            let a = inputs::context(&old.session.project, name);
            a.is_some() && a == inputs::context(&new.session.project, name)
        };
        match same {
            true => unchanged(name),
            false => compare_context(name, &old, &new),
        }
    });
    let template = Some((old.template(), new.template())).filter(|(a, b)| a != b);
    Ok(Diff {
        base: old.revision.label(),
        head: new.revision.label(),
        template,
        contexts,
    })
}

/// The contexts to compare: those asked for, else every context of either side.
fn contexts(request: &Request, old: &Side, new: &Side) -> Result<Vec<String>, Diagnostic> {
    if !request.contexts.is_empty() {
        let mut names: Vec<String> = Vec::new();
        for name in &request.contexts {
            crate::project::check_context_name(name)?;
            if !old.session.project.defines(name) && !new.session.project.defines(name) {
                return Err(Diagnostic::error(format!(
                    "context `{name}` is defined on neither side ({} nor {})",
                    old.revision.label(),
                    new.revision.label()
                ))
                .with_help("a context is a directory contexts/<name>/ or an entry `contexts.<name>` in windsor.yaml"));
            }
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        return Ok(names);
    }
    let mut names: std::collections::BTreeSet<String> =
        old.session.contexts().into_iter().collect();
    names.extend(new.session.contexts());
    if names.is_empty() {
        return Err(Diagnostic::error(
            "the project defines no context on either side",
        )
        .with_help("a context is a directory contexts/<name>/ or an entry `contexts.<name>` in windsor.yaml"));
    }
    Ok(names.into_iter().collect())
}

/// One side's snapshot of `name`: `None` when the side does not define it.
fn snapshot_of(side: &Side, name: &str) -> Result<Option<Snapshot>, String> {
    if !side.session.project.defines(name) {
        return Ok(None);
    }
    let session = &side.session;
    let run = || {
        let composition = session.compose_context(name)?;
        let rendered = session.render_kept(&composition, ManifestFormat::Json)?;
        let secrets = Secrets::of(&composition, session.schema.as_ref());
        Ok::<_, Vec<Diagnostic>>(Snapshot::of(
            &session.template,
            &composition,
            &rendered,
            &side.files,
            &secrets,
        ))
    };
    run()
        .map(Some)
        .map_err(|diagnostics| crate::files::render::render_all(&diagnostics, &side.files, false))
}

fn unchanged(name: &str) -> ContextDiff {
    ContextDiff {
        context: name.to_string(),
        change: None,
        changes: Changes::default(),
        failed: Vec::new(),
    }
}

fn compare_context(name: &str, old: &Side, new: &Side) -> ContextDiff {
    let (a, b) = (snapshot_of(old, name), snapshot_of(new, name));
    let mut failed = Vec::new();
    if let Err(e) = &a {
        failed.push((old.revision.label(), e.clone()));
    }
    if let Err(e) = &b {
        failed.push((new.revision.label(), e.clone()));
    }
    let (Ok(a), Ok(b)) = (a, b) else {
        return ContextDiff {
            context: name.to_string(),
            change: None,
            changes: Changes::default(),
            failed,
        };
    };
    // A context on one side only lists its components and Kustomizations.
    let whole = |s: &Snapshot| Changes {
        sources: Vec::new(),
        items: changes::compare(&Snapshot::default(), s)
            .items
            .into_iter()
            .filter(|i| i.kind != snapshot::Kind::Rendered)
            .collect(),
    };
    let (change, changes) = match (&a, &b) {
        (None, None) => (None, Changes::default()),
        (Some(a), None) => {
            let mut listed = whole(a);
            listed
                .items
                .iter_mut()
                .for_each(|i| i.change = Change::Removed);
            (Some(Change::Removed), listed)
        }
        (None, Some(b)) => (Some(Change::Added), whole(b)),
        (Some(a), Some(b)) => {
            let changes = changes::compare(a, b);
            (
                Some(Change::Changed).filter(|_| !changes.is_empty()),
                changes,
            )
        }
    };
    ContextDiff {
        context: name.to_string(),
        change,
        changes,
        failed,
    }
}
