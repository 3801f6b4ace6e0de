//! Writing a rendered tree, and comparing one with a directory for `--check`.
//!
//! **Where.** `--out DIR` follows symlinks as `compose --out` does
//! ([`crate::files::out_path`]): when DIR is a link, the directory it leads to is
//! replaced and the link stays.
//!
//! **Atomic.** The new tree is written whole into a sibling `.<name>.bpc-new-<pid>`,
//! then swapped with DIR in one step: on Linux `renameat2(RENAME_EXCHANGE)` trades the
//! two directories atomically, so after a crash or `kill -9` at any instant DIR holds
//! the old tree or the new one, never nothing and never half. Where the exchange is not
//! available (other systems, file systems without it) two renames are used and DIR is
//! missing between them. The sibling then holds the old tree and is deleted.
//!
//! **Leftovers.** Each run first removes the `.<name>.bpc-new-<pid>` and
//! `.<name>.bpc-old-<pid>` siblings of runs that are no longer alive (a killed run's
//! half-written or superseded tree); those of a live process are left to it.
//!
//! **Check.** Only regular files are compared. Symlinks, FIFOs, devices and sockets in
//! the checked tree are reported as differences without being opened (a link to a
//! secret is never printed, a FIFO never blocks), and every read is bounded.

use super::{Rendered, MARKER};
use crate::files::exchange::exchange;
use crate::files::out_path;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Largest file `--check` reads from the checked tree (the string limit).
pub const MAX_CHECKED_FILE: u64 = 16 * 1024 * 1024;
/// Most bytes one `--check` reads from the checked tree in all.
pub(crate) const MAX_CHECKED_TOTAL: u64 = 256 * 1024 * 1024;
/// Most entries (files, directories, anything) one `--check` looks at.
pub(crate) const MAX_CHECKED_ENTRIES: usize = 100_000;

/// Replaces `dir` (or the directory it links to) with `tree`. A non-empty directory
/// without bpc's marker file is refused unless `force`: files bpc did not write are
/// never deleted by accident.
pub fn write_tree(dir: &Path, tree: &Rendered, force: bool) -> Result<(), String> {
    let target = out_path::follow_symlinks(dir)
        .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    let shown = shown(dir, &target);
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            let empty = std::fs::read_dir(&target)
                .map_err(|e| format!("cannot read {shown}: {e}"))?
                .next()
                .is_none();
            let marked = std::fs::symlink_metadata(target.join(MARKER)).is_ok_and(|m| m.is_file());
            if !empty && !marked && !force {
                return Err(format!(
                    "{shown} is not empty and was not written by `bpc render` (no {MARKER}); \
                     choose another --out or pass --force to replace it"
                ));
            }
        }
        Ok(_) => return Err(format!("{shown} exists and is not a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            let why = out_path::parent_problem(dir, &target, false);
            return Err(format!(
                "cannot write {shown}: {}",
                why.unwrap_or_else(|| e.to_string())
            ));
        }
        Err(e) => return Err(format!("cannot write {shown}: {e}")),
    }
    if let Some(why) = out_path::parent_problem(dir, &target, false) {
        return Err(format!("cannot write {shown}: {why}"));
    }
    let parent = out_path::parent_dir(&target);
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "render".to_string());
    remove_leftovers(&parent, &name);
    let pid = std::process::id();
    let tmp = parent.join(format!(".{name}.bpc-new-{pid}"));
    let _ = std::fs::remove_dir_all(&tmp);
    if let Err(e) = fill(&tmp, tree) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("cannot write {}: {e}", tmp.display()));
    }
    swap_in(&tmp, &target, &parent, &name, &shown)?;
    sync_dir(&parent);
    Ok(())
}

/// `dir`, or `dir (→ target)` when a link was followed.
fn shown(dir: &Path, target: &Path) -> String {
    if dir == target {
        dir.display().to_string()
    } else {
        format!("{} (a link to {})", dir.display(), target.display())
    }
}

/// Puts the complete tree at `tmp` in place of `target`, then deletes what it replaced.
fn swap_in(
    tmp: &Path,
    target: &Path,
    parent: &Path,
    name: &str,
    shown: &str,
) -> Result<(), String> {
    let exists = std::fs::symlink_metadata(target).is_ok();
    if !exists {
        return std::fs::rename(tmp, target).map_err(|e| {
            let _ = std::fs::remove_dir_all(tmp);
            format!("cannot move the new render to {shown}: {e}")
        });
    }
    match exchange(tmp, target) {
        Ok(true) => {
            // `tmp` now holds the old tree.
            let _ = std::fs::remove_dir_all(tmp);
            return Ok(());
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(tmp);
            return Err(format!("cannot move the new render to {shown}: {e}"));
        }
        Ok(false) => {}
    }
    // No atomic exchange here: the old tree aside, the new one in. Between the two
    // renames `target` is missing, never half-written; on failure the old tree is put
    // back.
    let old = parent.join(format!(".{name}.bpc-old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&old);
    if let Err(e) = std::fs::rename(target, &old) {
        let _ = std::fs::remove_dir_all(tmp);
        return Err(format!("cannot move {shown} aside: {e}"));
    }
    if let Err(e) = std::fs::rename(tmp, target) {
        let _ = std::fs::rename(&old, target);
        let _ = std::fs::remove_dir_all(tmp);
        return Err(format!("cannot move the new render to {shown}: {e}"));
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Removes the temporary siblings `.<name>.bpc-new-<pid>` / `.<name>.bpc-old-<pid>`
/// of runs that are no longer alive. Best effort: what cannot be removed stays.
fn remove_leftovers(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let prefixes = [format!(".{name}.bpc-new-"), format!(".{name}.bpc-old-")];
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().to_string();
        let Some(pid) = prefixes
            .iter()
            .find_map(|p| file_name.strip_prefix(p.as_str()))
            .and_then(|rest| rest.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && alive(pid) {
            continue;
        }
        let path = entry.path();
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(_) => {}
        }
    }
}

/// Whether process `pid` exists (on systems where that cannot be asked: yes).
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists and may be signalled.
        let result = unsafe { libc::kill(pid, 0) };
        result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Flushes a directory's entries (the renames) to disk; best effort.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Threads waiting on `fsync` at once: the disk takes many flushes together far
/// faster than one after another (1 000 files: about a tenth of the time here), and
/// waiting threads cost no CPU.
const SYNC_THREADS: usize = 16;

/// Files held open at once while a tree is written: well below the 1 024 descriptors
/// a process may usually hold, however many files the tree has.
const OPEN_AT_ONCE: usize = 256;

fn fill(root: &Path, tree: &Rendered) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    // A large tree is made durable by flushing its file system once (one journal
    // commit, not one per file); a small one file by file, so that a render does not
    // wait on what other programs wrote.
    let whole_file_system = cfg!(target_os = "linux") && tree.files.len() > OPEN_AT_ONCE;
    let mut open = Vec::with_capacity(OPEN_AT_ONCE.min(tree.files.len()));
    let mut dirs = std::collections::BTreeSet::from([root.to_path_buf()]);
    for (path, bytes) in &tree.files {
        let full = crate::files::relative_path::join_inside(root, path)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        if let Some(p) = full.parent() {
            if !dirs.contains(p) {
                std::fs::create_dir_all(p)?;
                // Each new directory's entry lives in its parent: flush those too.
                let mut d = p;
                while d != root && dirs.insert(d.to_path_buf()) {
                    let Some(up) = d.parent() else { break };
                    d = up;
                }
            }
        }
        let mut f = std::fs::File::create(&full)?;
        f.write_all(bytes)?;
        if whole_file_system {
            continue;
        }
        open.push(f);
        if open.len() == OPEN_AT_ONCE {
            sync_files(&open)?;
            open.clear();
        }
    }
    // Durable before the swap publishes it: a power cut must not leave the new tree in
    // place with empty files or missing entries.
    if whole_file_system {
        return sync_file_system(root);
    }
    sync_files(&open)?;
    let dirs: Vec<PathBuf> = dirs.into_iter().collect();
    crate::parallel::map(&dirs, SYNC_THREADS, |d| sync_dir(d));
    Ok(())
}

/// Flushes `files` to disk, several at once.
fn sync_files(files: &[std::fs::File]) -> std::io::Result<()> {
    let synced = crate::parallel::map(files, SYNC_THREADS, |f| f.sync_all());
    synced.into_iter().collect()
}

/// Flushes the whole file system that holds `dir` (every file and directory written
/// under it included).
#[cfg(target_os = "linux")]
fn sync_file_system(dir: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let d = std::fs::File::open(dir)?;
    // SAFETY: `d` is an open descriptor for the duration of the call, which only
    // flushes the file system it is on.
    if unsafe { libc::syncfs(d.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// What `--check` found at a path of the checked tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file and its bytes.
    File(Vec<u8>),
    /// Something that is not compared: a symlink, FIFO, device, socket, or a file over
    /// a read bound; why, in words.
    Unread(String),
}

/// Every entry under `dir` (following a link at `dir` itself, none inside it), by
/// `/`-separated relative path; empty when `dir` is absent. Directories are walked,
/// regular files read within the bounds above, anything else listed unread.
pub fn scan(dir: &Path) -> Result<BTreeMap<String, Entry>, String> {
    let mut out = BTreeMap::new();
    let root = out_path::follow_symlinks(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    match std::fs::symlink_metadata(&root) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(format!("{} exists and is not a directory", dir.display())),
        Err(_) => return Ok(out),
    }
    let mut stack = vec![root.clone()];
    let mut seen = 0usize;
    let mut total = 0u64;
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", d.display()))?;
            seen += 1;
            if seen > MAX_CHECKED_ENTRIES {
                return Err(format!(
                    "{} holds more than {MAX_CHECKED_ENTRIES} entries; --check compares at most that many",
                    dir.display()
                ));
            }
            let path = entry.path();
            let rel = path
                .strip_prefix(&root)
                .map_err(|e| e.to_string())?
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect::<Vec<_>>()
                .join("/");
            // `DirEntry::file_type` does not follow links.
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            let found = if kind.is_file() {
                read_bounded(&path, &mut total)
            } else {
                Entry::Unread(format!("is {}", kind_name(&kind)))
            };
            out.insert(rel, found);
        }
    }
    Ok(out)
}

/// A regular file's bytes, opened without following links and without blocking, and
/// read no further than the bounds allow.
fn read_bounded(path: &Path, total: &mut u64) -> Entry {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) => return Entry::Unread(format!("cannot be read: {e}")),
    };
    // Between the listing and the open the entry may have been swapped for something
    // else: what was opened is what counts.
    let size = match file.metadata() {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => return Entry::Unread("is not a regular file".into()),
        Err(e) => return Entry::Unread(format!("cannot be read: {e}")),
    };
    let left = MAX_CHECKED_TOTAL.saturating_sub(*total);
    let cap = MAX_CHECKED_FILE.min(left);
    // A file already over the bound is not read at all (the read below stays bounded
    // for one that grows while it is read).
    if size > cap {
        return over(cap);
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(cap + 1).read_to_end(&mut bytes) {
        return Entry::Unread(format!("cannot be read: {e}"));
    }
    *total += bytes.len() as u64;
    if bytes.len() as u64 > cap {
        return over(cap);
    }
    Entry::File(bytes)
}

/// The entry for a file over the bound `cap` of [`read_bounded`].
fn over(cap: u64) -> Entry {
    Entry::Unread(if cap < MAX_CHECKED_FILE {
        format!("was not read: --check reads at most {MAX_CHECKED_TOTAL} bytes in all")
    } else {
        format!("is larger than {MAX_CHECKED_FILE} bytes, the most --check reads of one file")
    })
}

fn kind_name(kind: &std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Every regular file under `dir`, by `/`-separated relative path; empty when `dir` is
/// absent. Anything else in the tree (a link, a FIFO, a file over the bounds) is an
/// error naming it.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    scan(dir)?
        .into_iter()
        .map(|(path, entry)| match entry {
            Entry::File(bytes) => Ok((path, bytes)),
            Entry::Unread(why) => Err(format!("{}/{path} {why}", dir.display())),
        })
        .collect()
}

/// A unified diff from what `dir` holds to `tree`; empty when they are the same. An
/// entry that is not a regular file is a difference, shown by a `!` line that says
/// what it is; its contents are never read.
pub fn check(dir: &Path, tree: &Rendered) -> Result<String, String> {
    let current = scan(dir)?;
    let mut diff = String::new();
    let paths: std::collections::BTreeSet<&String> =
        current.keys().chain(tree.files.keys()).collect();
    // What the files hold is shown, never sent to the terminal as it is.
    let text = |b: Option<&Vec<u8>>| {
        let text = String::from_utf8_lossy(b.map_or(&[][..], |v| v));
        crate::files::render::visible(&text).into_owned()
    };
    for path in paths {
        let new = tree.files.get(path);
        let old = match current.get(path) {
            Some(Entry::File(bytes)) => Some(bytes),
            Some(Entry::Unread(why)) => {
                diff.push_str(&format!(
                    "! a/{} {why}; only regular files are compared, so it is not read\n",
                    crate::files::render::visible(path)
                ));
                None
            }
            None => None,
        };
        let unread = matches!(current.get(path), Some(Entry::Unread(_)));
        if old == new && !unread {
            continue;
        }
        if unread && new.is_none() {
            continue;
        }
        let path = crate::files::render::visible(path);
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

/// The directory `--out` names with its links followed (what [`write_tree`] replaces).
pub fn resolved(dir: &Path) -> PathBuf {
    out_path::follow_symlinks(dir).unwrap_or_else(|_| dir.to_path_buf())
}
