//! Where an `--out` path writes, one rule for `compose` and `render`: a symlink at the
//! path (or a chain of them) is followed and its final target is what gets written or
//! replaced; the link itself stays. Also the plain-language reasons a path cannot hold
//! output (a parent that is a file, a link that leads nowhere), instead of the bare OS
//! errors ("File exists", "Not a directory").
//!
//! Writing a result (S10): a regular file is replaced atomically — a temp file beside
//! it, created exclusively under an unpredictable name, then a rename — so a failed run
//! never leaves a half-written file, and the file keeps its permissions. Anything else
//! that already exists at the path is never replaced by a rename: character devices and
//! FIFOs are written in place (as a shell redirect would), other kinds are refused.

use std::io;
use std::io::Write;
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
    fn parts_are_written_one_after_another_over_the_old_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("out.yaml");
        std::fs::write(&file, "old text, longer than the new one\n").expect("write");
        super::write_parts_atomically(&file, &[b"kind: ", b"", b"Blueprint\n"]).expect("written");
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            "kind: Blueprint\n"
        );
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
        assert_eq!(names.len(), 1);
    }

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

/// Writes `contents` to `path` as described in the module comment.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_parts_atomically(path, &[contents])
}

/// [`write_atomically`] for contents in parts, written one after another (a long
/// document is not joined in memory first).
pub fn write_parts_atomically(path: &Path, contents: &[&[u8]]) -> std::io::Result<()> {
    let target = follow_symlinks(path)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_file() => replace(&target, contents, Some(&meta)),
        Ok(meta) if meta.is_dir() => Err(std::io::Error::other("is a directory")),
        Ok(meta) => write_special(&target, &meta, contents),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(why) = parent_problem(path, &target, true) {
                return Err(std::io::Error::other(why));
            }
            replace(&target, contents, None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            match parent_problem(path, &target, false) {
                Some(why) => Err(std::io::Error::other(why)),
                None => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// Temp file beside `target`, then rename over it; the existing file's mode (and,
/// where allowed, owner) carries over.
fn replace(
    target: &Path,
    contents: &[&[u8]],
    existing: Option<&std::fs::Metadata>,
) -> std::io::Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "output".to_string());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".bpc-tmp");
    #[cfg(unix)]
    if existing.is_none() {
        // A new file gets the mode a plain create would give it (0666 less umask);
        // tempfile's own default is 0600.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // `tempfile_in` opens with O_EXCL under a random name and removes the file if
    // anything below fails before the rename.
    let mut tmp = builder.tempfile_in(dir)?;
    contents.iter().try_for_each(|part| tmp.write_all(part))?;
    if let Some(meta) = existing {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Only root can give a file away; for anyone else this is a no-op or fails
            // harmlessly (the file then belongs to whoever ran bpc, as with any editor).
            let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid()));
        }
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Devices and FIFOs: written in place, never replaced.
#[cfg(unix)]
fn write_special(
    target: &Path,
    meta: &std::fs::Metadata,
    contents: &[&[u8]],
) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_char_device() || kind.is_fifo() {
        let mut file = std::fs::OpenOptions::new().write(true).open(target)?;
        contents.iter().try_for_each(|part| file.write_all(part))?;
        return file.flush();
    }
    let what = if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(std::io::Error::other(format!(
        "is {what}; refusing to write the blueprint there"
    )))
}

#[cfg(not(unix))]
fn write_special(_: &Path, _: &std::fs::Metadata, _: &[&[u8]]) -> std::io::Result<()> {
    Err(std::io::Error::other("is not a regular file"))
}
