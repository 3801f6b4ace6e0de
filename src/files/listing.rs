//! The files a command is pointed at with paths that may be files or directories
//! (`--policy PATH`, `--crds PATH`): a file as it is, a directory for the files under
//! it that the command reads, recursively.

use super::Diagnostic;
use std::path::{Path, PathBuf};

/// The files under `paths`, in path order per argument, each once (by its canonical
/// path): a path naming a file is taken as it is; a directory gives the files under
/// it whose names `wanted` accepts, hidden directories left out. `what` names the
/// flag in errors (`--crds`).
pub fn files_under(
    paths: &[PathBuf],
    wanted: impl Fn(&str) -> bool,
    what: &str,
) -> Result<Vec<PathBuf>, Diagnostic> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| {
            Diagnostic::error(format!("cannot read {what} path {}: {e}", path.display()))
        })?;
        if !meta.is_dir() {
            out.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        walk(path, &wanted, what, &mut found)?;
        found.sort();
        out.extend(found);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())));
    Ok(out)
}

fn walk(
    dir: &Path,
    wanted: &impl Fn(&str) -> bool,
    what: &str,
    out: &mut Vec<PathBuf>,
) -> Result<(), Diagnostic> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Diagnostic::error(format!(
            "cannot read {what} directory {}: {e}",
            dir.display()
        ))
    })?;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().to_string();
        if kind.is_dir() && !name.starts_with('.') {
            walk(&entry.path(), wanted, what, out)?;
        } else if kind.is_file() && wanted(&name) {
            out.push(entry.path());
        }
    }
    Ok(())
}
