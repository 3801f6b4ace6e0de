//! A side of `bpc diff` read from git: the repository around the project, a revision
//! resolved to a commit, and the project's files at that commit as an in-memory tree.
//! Everything is read from the repository's objects in process: nothing is checked
//! out, and nothing is written in the repository.

use crate::files::{Diagnostic, FileTree};
use std::path::{Path, PathBuf};

/// Largest total size of the project's files read from one commit.
const MAX_COMMIT_BYTES: u64 = 512 * 1024 * 1024;

/// The repository a project lives in.
pub struct Repository {
    repo: gix::Repository,
    /// The work tree's root, canonical.
    workdir: PathBuf,
}

/// A revision resolved: what the user wrote and the commit it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The revision as given (`main`, `HEAD~1`), or how the default was found.
    pub spec: String,
    /// The commit id, in full hex.
    pub id: String,
}

impl Commit {
    /// The id's first 12 hex digits.
    pub fn short(&self) -> &str {
        &self.id[..self.id.len().min(12)]
    }
}

impl Repository {
    /// The repository whose work tree holds `project_root`.
    pub fn around(project_root: &Path) -> Result<Repository, Diagnostic> {
        let repo = gix::discover(project_root).map_err(|e| {
            Diagnostic::error(format!(
                "{} is not in a git repository: {e}",
                project_root.display()
            ))
            .with_help("bpc diff compares commits of the repository that holds the project")
        })?;
        let workdir = repo
            .workdir()
            .and_then(|w| w.canonicalize().ok())
            .ok_or_else(|| {
                Diagnostic::error(format!(
                    "the repository at {} has no work tree (a bare repository)",
                    repo.git_dir().display()
                ))
            })?;
        Ok(Repository { repo, workdir })
    }

    /// Where the project lies in the repository: `""` at its root, else `dir/sub/`.
    pub fn prefix_of(&self, project_root: &Path) -> Result<String, Diagnostic> {
        let root = project_root.canonicalize().map_err(|e| {
            Diagnostic::error(format!("cannot read {}: {e}", project_root.display()))
        })?;
        let relative = root.strip_prefix(&self.workdir).map_err(|_| {
            Diagnostic::error(format!(
                "the project {} is not inside the repository's work tree {}",
                root.display(),
                self.workdir.display()
            ))
        })?;
        let mut prefix = String::new();
        for part in relative.components() {
            let part = part.as_os_str().to_str().ok_or_else(|| {
                Diagnostic::error(format!(
                    "the project's path {} is not UTF-8",
                    relative.display()
                ))
            })?;
            prefix.push_str(part);
            prefix.push('/');
        }
        Ok(prefix)
    }

    /// Whether the repository is a shallow clone (its history cut off).
    fn shallow(&self) -> bool {
        self.repo.is_shallow().unwrap_or(false)
    }

    /// `spec` resolved to a commit, or an error that names it.
    pub fn resolve(&self, spec: &str) -> Result<Commit, Diagnostic> {
        let found = self
            .repo
            .rev_parse_single(spec)
            .map_err(|e| e.to_string())
            .and_then(|id| {
                let commit = id
                    .object()
                    .map_err(|e| e.to_string())?
                    .peel_to_commit()
                    .map_err(|e| e.to_string())?;
                Ok(commit.id.to_string())
            });
        match found {
            Ok(id) => Ok(Commit {
                spec: spec.to_string(),
                id,
            }),
            Err(why) => {
                let mut diagnostic = Diagnostic::error(format!(
                    "`{spec}` does not name a commit of the repository at {}: {why}",
                    self.workdir.display()
                ))
                .with_help("give a branch, tag or commit (`--base origin/main`, `--head HEAD`)");
                if self.shallow() {
                    diagnostic = diagnostic.with_note(
                        "the repository is a shallow clone: older commits are not in it (fetch with `--unshallow`, or `fetch-depth: 0` in CI)",
                    );
                }
                Err(diagnostic)
            }
        }
    }

    /// The default base: the merge base of HEAD and the default branch
    /// (`origin/HEAD`, else `main`, `master`, `origin/main`, `origin/master`).
    pub fn default_base(&self) -> Result<Commit, Diagnostic> {
        let head = self.resolve("HEAD")?;
        let candidates = [
            "origin/HEAD",
            "main",
            "master",
            "origin/main",
            "origin/master",
        ];
        let Some(branch) = candidates.iter().find_map(|name| self.resolve(name).ok()) else {
            return Err(Diagnostic::error(
                "no default branch to compare with: the repository has no origin/HEAD, main or master",
            )
            .with_help("name the base: `bpc diff --base REF`"));
        };
        let (Ok(one), Ok(two)) = (
            gix::ObjectId::from_hex(head.id.as_bytes()),
            gix::ObjectId::from_hex(branch.id.as_bytes()),
        ) else {
            return Err(Diagnostic::error(
                "a commit id the repository gave is not hex",
            ));
        };
        let base = self.repo.merge_base(one, two).map_err(|e| {
            Diagnostic::error(format!(
                "cannot find the merge base of HEAD and {}: {e}",
                branch.spec
            ))
        })?;
        match base {
            Some(id) => Ok(Commit {
                spec: format!("merge base of HEAD and {}", branch.spec),
                id: id.to_string(),
            }),
            None => {
                let mut diagnostic =
                    Diagnostic::error(format!("HEAD and {} have no commit in common", branch.spec))
                        .with_help("name the base: `bpc diff --base REF`");
                if self.shallow() {
                    diagnostic = diagnostic.with_note(
                        "the repository is a shallow clone, so their common commit may be cut off (fetch with `--unshallow`, or `fetch-depth: 0` in CI)",
                    );
                }
                Err(diagnostic)
            }
        }
    }

    /// The files under `prefix` at `commit`, paths relative to `prefix`, named in
    /// messages by their path in the repository (`prefix` then the path). Symbolic
    /// links and submodules are left out: a tree of files holds neither.
    pub fn files_at(&self, commit: &Commit, prefix: &str) -> Result<FileTree, Diagnostic> {
        let failed = |e: &dyn std::fmt::Display| {
            Diagnostic::error(format!(
                "cannot read commit {} ({}): {e}",
                commit.short(),
                commit.spec
            ))
        };
        let id = gix::ObjectId::from_hex(commit.id.as_bytes()).map_err(|e| failed(&e))?;
        let root = self
            .repo
            .find_object(id)
            .map_err(|e| failed(&e))?
            .peel_to_tree()
            .map_err(|e| failed(&e))?;
        let dir = prefix.trim_end_matches('/');
        let tree = if dir.is_empty() {
            root
        } else {
            let Some(entry) = root.lookup_entry_by_path(dir).map_err(|e| failed(&e))? else {
                return Err(Diagnostic::error(format!(
                    "the project's directory {dir} does not exist at {} ({})",
                    commit.short(),
                    commit.spec
                )));
            };
            entry
                .object()
                .map_err(|e| failed(&e))?
                .peel_to_tree()
                .map_err(|e| failed(&e))?
        };
        let entries = tree
            .traverse()
            .breadthfirst
            .files()
            .map_err(|e| failed(&e))?;
        let mut files = Vec::new();
        let mut total: u64 = 0;
        for entry in entries {
            if !entry.mode.is_blob() {
                continue;
            }
            let path = String::from_utf8(entry.filepath.to_vec()).map_err(|_| {
                Diagnostic::error(format!(
                    "a path under {dir}/ at {} is not UTF-8",
                    commit.short()
                ))
            })?;
            let blob = self.repo.find_blob(entry.oid).map_err(|e| failed(&e))?;
            total += blob.data.len() as u64;
            if total > MAX_COMMIT_BYTES {
                return Err(Diagnostic::error(format!(
                    "the project's files at {} are larger than {} MiB together",
                    commit.short(),
                    MAX_COMMIT_BYTES / 1024 / 1024
                )));
            }
            files.push((path, blob.data.clone()));
        }
        let shown = match dir {
            "" => ".",
            dir => dir,
        };
        FileTree::from_files_named_as_dir(files, shown).map_err(|e| failed(&e))
    }
}
