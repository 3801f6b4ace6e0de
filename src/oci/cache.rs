//! The pull cache, shared with the Windsor CLI: `<project>/.windsor/cache/oci/<key>/`
//! holds `artifact.tar` (the decompressed layer, byte for byte) and the extracted
//! `metadata.yaml`, `_template/`, `kustomize/` and `terraform/`. An entry whose
//! `artifact.tar` exists and is not empty is complete and reused without asking the
//! registry. bpc writes an entry in a fresh sibling directory and renames it into
//! place last, so an interrupted pull never leaves an entry that looks complete.

use super::archive;
use super::reference::Reference;
use std::path::{Path, PathBuf};

/// The cache directory of `reference` in the project at `root`.
pub fn dir(root: &Path, reference: &Reference) -> PathBuf {
    root.join(".windsor")
        .join("cache")
        .join("oci")
        .join(reference.cache_key())
}

/// Whether the entry at `dir` is complete (a non-empty `artifact.tar`).
pub fn complete(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("artifact.tar")).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Writes the entry for a pulled layer (`tar` is the decompressed layer). Every tar
/// entry is checked before anything is written.
pub fn store(dir: &Path, tar: &[u8]) -> Result<(), String> {
    if tar.is_empty() {
        return Err("the artifact's layer is empty".to_string());
    }
    let entries = archive::entries(tar)?;
    let parent = dir
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", dir.display()))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let key = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // The Windsor CLI's own staging directory, left by an interrupted pull of its.
    let _ = std::fs::remove_dir_all(parent.join(format!("{key}.tmp")));
    let staging = tempfile::Builder::new()
        .prefix(&format!("{key}.tmp-"))
        .tempdir_in(parent)
        .map_err(|e| {
            format!(
                "cannot create a staging directory in {}: {e}",
                parent.display()
            )
        })?;
    archive::write(staging.path(), &entries)?;
    // artifact.tar last: it is what marks an entry complete.
    let tar_path = staging.path().join("artifact.tar");
    std::fs::write(&tar_path, tar).map_err(|e| format!("{}: {e}", tar_path.display()))?;
    if let Ok(file) = std::fs::File::open(&tar_path) {
        let _ = file.sync_all();
    }
    if std::fs::symlink_metadata(dir).is_ok() {
        std::fs::remove_dir_all(dir).map_err(|e| {
            format!(
                "failed to remove OCI cache directory {}: {e}",
                dir.display()
            )
        })?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        format!(
            "cannot move the pulled artifact into {}: {e}",
            dir.display()
        )
    })?;
    Ok(())
}
