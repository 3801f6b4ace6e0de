//! Writing a rendered tree: the output directory is replaced as a whole (a sibling
//! temp directory, then renames), so a failed run never leaves half a tree; and
//! comparing a tree with a directory for `--check`.

use super::{Rendered, MARKER};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Replaces `dir` with `tree`. A non-empty `dir` without bpc's marker file is refused
/// unless `force`: files bpc did not write are never deleted by accident.
pub fn write_tree(dir: &Path, tree: &Rendered, force: bool) -> Result<(), String> {
    let shown = dir.display();
    if dir.exists() {
        if !dir.is_dir() {
            return Err(format!("{shown} exists and is not a directory"));
        }
        let empty = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {shown}: {e}"))?
            .next()
            .is_none();
        if !empty && !dir.join(MARKER).is_file() && !force {
            return Err(format!(
                "{shown} is not empty and was not written by `bpc render` (no {MARKER}); \
                 choose another --out or pass --force to replace it"
            ));
        }
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "render".to_string());
    let pid = std::process::id();
    let tmp = parent.join(format!(".{name}.bpc-new-{pid}"));
    let old = parent.join(format!(".{name}.bpc-old-{pid}"));
    let _ = std::fs::remove_dir_all(&tmp);
    if let Err(e) = fill(&tmp, tree) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("cannot write {}: {e}", tmp.display()));
    }
    // Two renames: the old tree aside, the new one in. Between them `dir` is briefly
    // missing, never half-written; on failure the old tree is put back.
    let had_old = dir.exists();
    if had_old {
        if let Err(e) = std::fs::rename(dir, &old) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(format!("cannot move {shown} aside: {e}"));
        }
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        if had_old {
            let _ = std::fs::rename(&old, dir);
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("cannot move the new render to {shown}: {e}"));
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

fn fill(root: &Path, tree: &Rendered) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    for (path, bytes) in &tree.files {
        let full = crate::files::relative_path::join_inside(root, path)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        if let Some(p) = full.parent() {
            std::fs::create_dir_all(p)?;
        }
        let mut f = std::fs::File::create(&full)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    Ok(())
}

/// Every file under `dir`, by `/`-separated relative path; empty when `dir` is absent.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", d.display()))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .map_err(|e| e.to_string())?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().to_string())
                    .collect::<Vec<_>>()
                    .join("/");
                let bytes = std::fs::read(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                out.insert(rel, bytes);
            }
        }
    }
    Ok(out)
}

/// A unified diff from what `dir` holds to `tree`; empty when they are the same.
pub fn check(dir: &Path, tree: &Rendered) -> Result<String, String> {
    let current = read_tree(dir)?;
    let mut diff = String::new();
    let paths: std::collections::BTreeSet<&String> =
        current.keys().chain(tree.files.keys()).collect();
    for path in paths {
        let old = current.get(path);
        let new = tree.files.get(path);
        if old == new {
            continue;
        }
        let text =
            |b: Option<&Vec<u8>>| String::from_utf8_lossy(b.map_or(&[][..], |v| v)).to_string();
        let old_name = if old.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".into()
        };
        let new_name = if new.is_some() {
            format!("b/{path}")
        } else {
            "/dev/null".into()
        };
        diff.push_str(&crate::diff::unified_diff(
            &text(old),
            &text(new),
            &old_name,
            &new_name,
        ));
    }
    Ok(diff)
}
