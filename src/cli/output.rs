//! Writing results: stdout, or `--out FILE` (S10). A regular file is replaced
//! atomically — a temp file beside it, created exclusively under an unpredictable name,
//! then a rename — so a failed run never leaves a half-written file, and the file keeps
//! its permissions. A symlink is followed and its target written. Anything else that
//! already exists at the path is never replaced by a rename: character devices and
//! FIFOs are written in place (as a shell redirect would), other kinds are refused.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` as described in the module comment.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let target = crate::files::out_path::follow_symlinks(path)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_file() => replace(&target, contents, Some(&meta)),
        Ok(meta) if meta.is_dir() => Err(std::io::Error::other("is a directory")),
        Ok(meta) => write_special(&target, &meta, contents),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(why) = crate::files::out_path::parent_problem(path, &target, true) {
                return Err(std::io::Error::other(why));
            }
            replace(&target, contents, None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            match crate::files::out_path::parent_problem(path, &target, false) {
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
    contents: &[u8],
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
    tmp.write_all(contents)?;
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
fn write_special(target: &Path, meta: &std::fs::Metadata, contents: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_char_device() || kind.is_fifo() {
        let mut file = std::fs::OpenOptions::new().write(true).open(target)?;
        file.write_all(contents)?;
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
fn write_special(_: &Path, _: &std::fs::Metadata, _: &[u8]) -> std::io::Result<()> {
    Err(std::io::Error::other("is not a regular file"))
}

/// Prints to stdout (also for `--out -`), or writes `--out FILE` as above.
pub fn emit(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        Some(path) if path.as_os_str() != "-" => write_atomically(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        _ => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush())
                .map_err(|e| format!("cannot write output: {e}"))
        }
    }
}
