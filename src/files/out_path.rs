//! Where an `--out` path writes, one rule for `compose` and `render`: a symlink at the
//! path (or a chain of them) is followed and its final target is what gets written or
//! replaced; the link itself stays. Also the plain-language reasons a path cannot hold
//! output (a parent that is a file, a link that leads nowhere), instead of the bare OS
//! errors ("File exists", "Not a directory").

use std::io;
use std::path::{Path, PathBuf};

/// The marker file that says `bpc render` wrote a directory (and may replace it); such
/// a directory is never read as an input.
pub const RENDER_MARKER: &str = ".bpc-render";

/// Longest symlink chain followed before giving up (the kernel's own limit).
pub const MAX_SYMLINKS: usize = 40;

/// The final target of a chain of symlinks at `path` (which need not exist yet).
pub fn follow_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_SYMLINKS} levels of symbolic links"
    )))
}

/// The directory an entry named `path` lives in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Why nothing can be created at `target` (reached from `given`, the path as the user
/// wrote it): an ancestor that exists but is not a directory, or, when `must_exist`,
/// a missing parent directory. `None` when the parent can hold it (or can be made).
pub fn parent_problem(given: &Path, target: &Path, must_exist: bool) -> Option<String> {
    let parent = parent_dir(target);
    let via = if given != target {
        format!(
            "{} is a symbolic link to {}, and ",
            given.display(),
            target.display()
        )
    } else {
        String::new()
    };
    for ancestor in parent.ancestors() {
        // A relative path's last ancestor is the empty path: the current directory.
        let ancestor = if ancestor.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ancestor
        };
        match std::fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => {
                if must_exist && ancestor != parent {
                    return Some(format!(
                        "{via}its directory {} does not exist",
                        parent.display()
                    ));
                }
                return None;
            }
            Ok(_) => {
                return Some(format!(
                    "{via}{} is a file, not a directory, so nothing can be created below it",
                    ancestor.display()
                ))
            }
            Err(_) => continue,
        }
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn names_the_file_in_the_way_and_the_missing_directory() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").expect("write");
        let below = file.join("out");
        let why = parent_problem(&below, &below, false).expect("a problem");
        assert!(why.contains("is a file, not a directory"), "{why}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("gone/x.yaml"), &link).expect("link");
        let target = follow_symlinks(&link).expect("follow");
        assert_eq!(target, dir.path().join("gone/x.yaml"));
        let why = parent_problem(&link, &target, true).expect("a problem");
        assert!(why.contains("is a symbolic link to"), "{why}");
        assert!(why.contains("does not exist"), "{why}");
        assert_eq!(parent_problem(&link, &target, false), None);
    }
}
