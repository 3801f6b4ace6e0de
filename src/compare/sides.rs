//! The two sides of `bpc diff`, each a session over one version of the project: the
//! work tree as it is on disk (uncommitted changes included), or a commit's files
//! read from the repository. Both name the project by the same root, so the scope's
//! paths agree, and both name files by their path in the repository.

use super::git::{Commit, Repository};
use crate::files::FileTree;
use crate::files::{Diagnostic, FileMap};
use crate::project::{self, Project};
use crate::session::{Options, Session};
use std::sync::Arc;

/// Which version of the project a side reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// The files on disk now.
    WorkTree,
    Commit(Commit),
}

impl Revision {
    /// How reports name the side: `work tree`, or `REV (commit 0123456789ab)`.
    pub fn label(&self) -> String {
        match self {
            Revision::WorkTree => "work tree".to_string(),
            Revision::Commit(c) => format!("{} (commit {})", c.spec, c.short()),
        }
    }
}

/// One side, loaded.
pub struct Side {
    pub revision: Revision,
    pub session: Session,
    pub files: Arc<FileMap>,
}

impl Side {
    /// Where the side's template comes from: its directory in the repository, or
    /// the published blueprint's `oci://` address.
    pub fn template(&self) -> String {
        match &self.session.project.published {
            Some(p) => p.url.clone(),
            None => {
                let shown = self.session.project.template.describe("");
                shown.trim_end_matches('/').to_string()
            }
        }
    }
}

/// A revision's files: none to read for the work tree, the commit's read from `repo`.
pub fn files_of(
    revision: &Revision,
    repo: &Repository,
    prefix: &str,
) -> Result<Option<FileTree>, Diagnostic> {
    match revision {
        Revision::WorkTree => Ok(None),
        Revision::Commit(commit) => repo.files_at(commit, prefix).map(Some),
    }
}

/// Loads `revision` of the project `work` (the work tree's), whose directory in the
/// repository is `prefix`; `tree` is the revision's files ([`files_of`]).
pub fn open(
    revision: Revision,
    tree: Option<FileTree>,
    work: &Project,
    prefix: &str,
    options: &Options,
) -> Result<Side, (Vec<Diagnostic>, Arc<FileMap>)> {
    let files = Arc::new(FileMap::letting_go_of_texts());
    load(revision, tree, work, prefix, options, &files).map_err(|d| (d, files))
}

fn load(
    revision: Revision,
    tree: Option<FileTree>,
    work: &Project,
    prefix: &str,
    options: &Options,
    files: &Arc<FileMap>,
) -> Result<Side, Vec<Diagnostic>> {
    let project = match tree {
        None => {
            let mut project = project::discover(
                &options.cwd,
                &options.locate,
                options.env_context.clone(),
                files,
            )
            .map_err(|d| vec![d])?;
            project.shown_prefix = prefix.to_string();
            if project.published.is_none() {
                let mut template = FileTree::clone(&project.template);
                let shown = template.describe("");
                template.set_display_root(format!("{prefix}{}", shown.trim_end_matches('/')));
                project.template = Arc::new(template);
            }
            project
        }
        Some(tree) => project::discover_in(
            work.root.clone(),
            tree,
            prefix,
            &options.locate,
            options.env_context.clone(),
            files,
        )
        .map_err(|d| vec![d])?,
    };
    let session = Session::of_project(project, options.clone(), files.clone())?;
    Ok(Side {
        revision,
        session,
        files: files.clone(),
    })
}
