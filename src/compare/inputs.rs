//! What a context's composition and render read, fingerprinted per side: when both
//! sides read the same bytes, the context cannot differ, and neither side composes it.
//!
//! A context reads the template's files (its facets, schema, `file()` and `jsonnet()`
//! files, patches), or for a published blueprint the `oci://` address it was pulled
//! from; the project's `windsor.yaml`; and its own directory `contexts/<ctx>/`.
//! Everything else a composition sees is the same on both sides by construction:
//! the command line's `--values` and `--set`, the environment, the project root's
//! name, and the Terraform modules' variables (read from the work tree). A context
//! with its own `blueprint.yaml` may read any file of the project (its inputs'
//! relative paths), so it has no fingerprint and is always composed.

use crate::files::FileTree;
use crate::project::Project;
use sha2::{Digest, Sha256};

/// The fingerprint of what every context of a side reads.
pub fn shared(project: &Project) -> Option<Vec<u8>> {
    let mut hash = Sha256::new();
    match &project.published {
        Some(p) => hash.update(format!("published {}\n", p.url)),
        None => files(&project.template, "", &mut hash)?,
    }
    hash.update(b"\x00windsor.yaml\x00");
    let own = own_files(project)?;
    if own.is_file("windsor.yaml") {
        hash.update(own.read("windsor.yaml").ok()?);
    }
    Some(hash.finalize().to_vec())
}

/// The fingerprint of context `name`'s own files.
pub fn context(project: &Project, name: &str) -> Option<Vec<u8>> {
    let own = own_files(project)?;
    if own.exists(&format!("contexts/{name}/blueprint.yaml")) {
        return None;
    }
    let mut hash = Sha256::new();
    files(&own, &format!("contexts/{name}"), &mut hash)?;
    Some(hash.finalize().to_vec())
}

/// The project's own files as a tree (the commit's, or the directory on disk).
fn own_files(project: &Project) -> Option<FileTree> {
    match &project.files {
        Some(tree) => Some(FileTree::clone(tree)),
        None => FileTree::open(&project.root).ok(),
    }
}

/// Every file under `dir` of `tree`, path and contents, into `hash`; `None` when one
/// cannot be read (the context is then composed, and the error shows there).
fn files(tree: &FileTree, dir: &str, hash: &mut Sha256) -> Option<()> {
    let (paths, links) = tree.list_noting_links(dir).ok()?;
    if links {
        // A link may stand for a file anywhere in the tree: compare by composing.
        return None;
    }
    for path in paths {
        let bytes = tree.read(&path).ok()?;
        hash.update((path.len() as u64).to_le_bytes());
        hash.update(path.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Some(())
}
