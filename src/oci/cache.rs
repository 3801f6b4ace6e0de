//! The pull cache, shared with the Windsor CLI: `<project>/.windsor/cache/oci/<key>/`
//! holds `artifact.tar` (the decompressed layer, byte for byte) and the extracted
//! `metadata.yaml`, `_template/`, `kustomize/` and `terraform/`. An entry whose
//! `artifact.tar` exists and is not empty is complete and reused without asking the
//! registry.
//!
//! Several bpc processes may pull and read one entry at once; none of them ever sees
//! a partial entry:
//!
//! * An entry is written whole in a staging directory and moved into place in one
//!   rename, so an interrupted pull never leaves an entry that looks complete.
//! * Each entry has a lock file, `.bpc/<key>.lock` beside the entries (a name holding
//!   no `_` is never an entry's). A process reading an entry holds it shared until
//!   it exits (the loaded template is read lazily, so for as long as it may read);
//!   a process writing one holds it exclusively, and takes it only after the pull,
//!   for the time it takes to write the files.
//! * A writer that finds the entry complete once it holds the lock (another process
//!   pulled it meanwhile) keeps that entry and writes nothing. Under `NO_CACHE` it
//!   keeps it too when its `artifact.tar` has the same bytes; only different bytes (a
//!   tag that moved) replace it: in one atomic exchange on Linux, else by renaming the
//!   old entry away and the new one in; the old one is deleted after. Replacing waits
//!   for the entry's readers to finish, [`LOCK_WAIT`] at most.
//! * Staging directories (`.bpc/<key>.staging-*`) and replaced entries
//!   (`.bpc/<key>.old-*`) that a killed process left are deleted by the next writer
//!   of that key, under the lock, where no live writer can own them.
//!
//! The Windsor CLI takes no lock: a Windsor pull that replaces an entry a bpc run is
//! reading can still be seen half-way. On systems without `flock` bpc takes no lock
//! either, and leftover staging directories are deleted once an hour old.

use super::archive;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a process waits for an entry's lock (docs/limits.md).
pub const LOCK_WAIT: Duration = Duration::from_secs(60);

/// The directory beside the entries holding their lock files and staging directories.
const PRIVATE: &str = ".bpc";

/// The cache directory of `reference` in the project at `root`.
pub fn dir(root: &Path, reference: &super::Reference) -> PathBuf {
    root.join(".windsor")
        .join("cache")
        .join("oci")
        .join(reference.cache_key())
}

/// Whether the entry at `dir` is complete (a non-empty `artifact.tar`).
pub fn complete(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("artifact.tar")).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// The entries this process reads, each with its lock file held shared until the
/// process exits.
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Whether this process already reads the entry at `dir` (it is complete).
pub fn held(dir: &Path) -> bool {
    HELD.lock()
        .map(|h| h.iter().any(|(d, _)| d == dir))
        .unwrap_or(false)
}

fn hold(dir: &Path, lock: Lock) {
    if let Ok(mut h) = HELD.lock() {
        h.push((dir.to_path_buf(), lock.file));
    }
}

/// Opens the entry at `dir` for reading: `Ok(true)`, with the entry held until the
/// process exits, when it is complete; `Ok(false)` (nothing held) when it is not.
pub fn open(dir: &Path) -> Result<bool, String> {
    if held(dir) {
        return Ok(true);
    }
    if !complete(dir) {
        return Ok(false);
    }
    // A cache that cannot take a lock file (a read-only project) is read unlocked.
    let Ok(lock) = Lock::open(dir) else {
        return Ok(complete(dir));
    };
    let deadline = Instant::now() + LOCK_WAIT;
    // Only a writer excludes a reader, and a writer holds the lock only while it
    // writes files.
    while !lock.try_lock(Mode::Shared)? {
        if Instant::now() > deadline {
            return Err(busy(dir, "is being written"));
        }
        std::thread::sleep(POLL);
    }
    if complete(dir) {
        hold(dir, lock);
        Ok(true)
    } else {
        Ok(false)
    }
}

const POLL: Duration = Duration::from_millis(10);

fn busy(dir: &Path, doing: &str) -> String {
    format!(
        "the OCI cache entry {} {doing} by another process, still after {} s (its lock: \
         {})",
        dir.display(),
        LOCK_WAIT.as_secs(),
        lock_path(dir).display()
    )
}

/// Stores a pulled layer (`tar` is the decompressed layer) as the entry at `dir`, and
/// holds it for reading until the process exits. Every tar entry is checked before
/// anything is written. A complete entry found in place is kept, unless `refresh`
/// (`NO_CACHE`) is set and its `artifact.tar` differs from `tar`.
pub fn store(dir: &Path, tar: &[u8], refresh: bool) -> Result<(), String> {
    if tar.is_empty() {
        return Err("the artifact's layer is empty".to_string());
    }
    let entries = archive::entries(tar)?;
    let lock = Lock::open(dir)?;
    let keep = |dir: &Path| complete(dir) && (!refresh || same(dir, tar));
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        // Another thread of this process stored it meanwhile.
        if held(dir) {
            return Ok(());
        }
        if lock.try_lock(Mode::Exclusive)? {
            break;
        }
        // Others read it (or one writes it): a complete entry they read may be
        // what this pull would write.
        if lock.try_lock(Mode::Shared)? {
            if keep(dir) {
                hold(dir, lock);
                return Ok(());
            }
            lock.unlock();
        }
        if Instant::now() > deadline {
            return Err(busy(dir, "is in use"));
        }
        std::thread::sleep(POLL);
    }
    // Exclusive from here: no other bpc process reads or writes this entry.
    remove_leftovers(dir);
    if !keep(dir) {
        write(dir, tar, &entries)?;
    }
    // Downgraded: the entry is held for reading from now on. The change is not
    // atomic everywhere; a writer that slips in between leaves a complete entry too.
    let deadline = Instant::now() + LOCK_WAIT;
    while !lock.try_lock(Mode::Shared)? {
        if Instant::now() > deadline {
            return Err(busy(dir, "is being written"));
        }
        std::thread::sleep(POLL);
    }
    if !complete(dir) {
        return Err(format!(
            "the OCI cache entry {} went away while it was stored",
            dir.display()
        ));
    }
    hold(dir, lock);
    Ok(())
}

/// Writes the entry into a staging directory, then moves it into place.
fn write(dir: &Path, tar: &[u8], entries: &[archive::Entry]) -> Result<(), String> {
    let private = private_dir(dir)?;
    let key = key(dir);
    let staging = tempfile::Builder::new()
        .prefix(&format!("{key}.staging-"))
        .tempdir_in(&private)
        .map_err(|e| {
            format!(
                "cannot create a staging directory in {}: {e}",
                private.display()
            )
        })?;
    archive::write(staging.path(), entries)?;
    // artifact.tar last: it is what marks an entry complete.
    let tar_path = staging.path().join("artifact.tar");
    std::fs::write(&tar_path, tar).map_err(|e| format!("{}: {e}", tar_path.display()))?;
    if let Ok(file) = File::open(&tar_path) {
        let _ = file.sync_all();
    }
    // The staging directory is private (0700) until it is complete; the cache's
    // modes do not depend on the umask.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&tar_path, std::fs::Permissions::from_mode(0o644));
        let _ = std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755));
    }
    let moved = |e: std::io::Error| {
        format!(
            "cannot move the pulled artifact into {}: {e}",
            dir.display()
        )
    };
    if std::fs::symlink_metadata(dir).is_err() {
        let staged = staging.keep();
        return std::fs::rename(&staged, dir).map_err(|e| {
            let _ = std::fs::remove_dir_all(&staged);
            moved(e)
        });
    }
    // An entry is in place (incomplete, or with other bytes): swapped out whole,
    // then deleted.
    if exchange(staging.path(), dir).map_err(moved)? {
        // The staging path now holds the old entry (a file, maybe): deleted, or left
        // for the next writer of the key.
        let old = staging.keep();
        if std::fs::remove_dir_all(&old).is_err() {
            let _ = std::fs::remove_file(&old);
        }
        return Ok(());
    }
    let old = tempfile::Builder::new()
        .prefix(&format!("{key}.old-"))
        .tempdir_in(&private)
        .map_err(|e| format!("cannot create a directory in {}: {e}", private.display()))?;
    std::fs::rename(dir, old.path().join("entry")).map_err(moved)?;
    let staged = staging.keep();
    std::fs::rename(&staged, dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        moved(e)
    })?;
    drop(old);
    Ok(())
}

/// Swaps the directories `a` and `b` in one step; `Ok(false)` where the system or
/// the file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// Whether the complete entry at `dir` has `tar` as its `artifact.tar`.
fn same(dir: &Path, tar: &[u8]) -> bool {
    let path = dir.join("artifact.tar");
    let Ok(file) = File::open(&path) else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.len() == tar.len() as u64) {
        return false;
    }
    let mut reader = std::io::BufReader::new(file);
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return at == tar.len(),
            Ok(n) => {
                if at + n > tar.len() || buf[..n] != tar[at..at + n] {
                    return false;
                }
                at += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The entry's name under `.windsor/cache/oci/`.
fn key(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

fn private_path(dir: &Path) -> PathBuf {
    dir.parent().unwrap_or(Path::new(".")).join(PRIVATE)
}

fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    let private = private_path(dir);
    std::fs::create_dir_all(&private)
        .map_err(|e| format!("cannot create {}: {e}", private.display()))?;
    Ok(private)
}

fn lock_path(dir: &Path) -> PathBuf {
    private_path(dir).join(format!("{}.lock", key(dir)))
}

/// Deletes the staging directories and replaced entries of `dir`'s key that killed
/// processes left. Names are matched exactly (`<key>.staging-` or `<key>.old-` and
/// the six random characters), so another key's files never match.
fn remove_leftovers(dir: &Path) {
    let private = private_path(dir);
    let key = key(dir);
    let Ok(listing) = std::fs::read_dir(&private) else {
        return;
    };
    for item in listing.flatten() {
        let name = item.file_name().to_string_lossy().to_string();
        let leftover = [".staging-", ".old-"].iter().any(|kind| {
            name.strip_prefix(&key)
                .and_then(|rest| rest.strip_prefix(kind))
                .is_some_and(|r| r.len() == 6 && r.bytes().all(|b| b.is_ascii_alphanumeric()))
        });
        if leftover && stale(&item) {
            // A swapped-out entry may have been a file.
            let path = item.path();
            if std::fs::remove_dir_all(&path).is_err() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Whether a leftover may be deleted: always under a real lock; elsewhere only once
/// it is an hour old.
fn stale(item: &std::fs::DirEntry) -> bool {
    if cfg!(unix) {
        return true;
    }
    item.metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > Duration::from_secs(3600))
}

#[derive(Clone, Copy)]
enum Mode {
    Shared,
    Exclusive,
}

/// An entry's lock file, open.
struct Lock {
    file: File,
}

impl Lock {
    fn open(dir: &Path) -> Result<Lock, String> {
        private_dir(dir)?;
        let path = lock_path(dir);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o644).custom_flags(libc::O_NOFOLLOW);
        }
        let file = options
            .open(&path)
            .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
        Ok(Lock { file })
    }

    /// Takes (or converts to) `mode` without waiting; `Ok(false)` when another
    /// process's lock is in the way.
    #[cfg(unix)]
    fn try_lock(&self, mode: Mode) -> Result<bool, String> {
        use std::os::unix::io::AsRawFd;
        let op = match mode {
            Mode::Shared => libc::LOCK_SH,
            Mode::Exclusive => libc::LOCK_EX,
        };
        loop {
            // SAFETY: flock on a descriptor this struct owns.
            if unsafe { libc::flock(self.file.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
                return Ok(true);
            }
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock => return Ok(false),
                std::io::ErrorKind::Interrupted => continue,
                _ => return Err(format!("cannot lock the OCI cache entry: {e}")),
            }
        }
    }

    #[cfg(not(unix))]
    fn try_lock(&self, _mode: Mode) -> Result<bool, String> {
        Ok(true)
    }

    #[cfg(unix)]
    fn unlock(&self) {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a descriptor this struct owns.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }

    #[cfg(not(unix))]
    fn unlock(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(name: &str, data: &[u8]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, data).unwrap();
        builder.into_inner().unwrap()
    }

    #[test]
    fn a_writer_deletes_the_leftovers_of_its_key_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("oci").join("reg_acme_demo_v1");
        let private = root.path().join("oci").join(PRIVATE);
        let leftovers = [
            "reg_acme_demo_v1.staging-a1B2c3",
            "reg_acme_demo_v1.old-Zz9yX8",
        ];
        // Another key's (tag `v1.staging-x`), and names not bpc's.
        let others = [
            "reg_acme_demo_v1.staging-x.staging-a1B2c3",
            "reg_acme_demo_v1.staging-a1B2c3d",
            "reg_acme_demo_v1.tmp-a1B2c3",
        ];
        for name in leftovers.iter().chain(&others) {
            std::fs::create_dir_all(private.join(name).join("_template")).unwrap();
        }
        store(
            &dir,
            &tar_of("_template/blueprint.yaml", b"kind: Blueprint\n"),
            false,
        )
        .unwrap();
        assert!(complete(&dir));
        assert!(held(&dir));
        assert!(dir.join("_template/blueprint.yaml").is_file());
        for name in leftovers {
            assert!(!private.join(name).exists(), "{name} stayed");
        }
        for name in others {
            assert!(private.join(name).exists(), "{name} went");
        }
    }

    #[test]
    fn an_entry_is_opened_only_when_complete() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("oci").join("reg_acme_demo_v2");
        assert!(!open(&dir).unwrap());
        // Nothing is created for an entry that is not there.
        assert!(!root.path().join("oci").exists());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("artifact.tar"), b"").unwrap();
        assert!(!open(&dir).unwrap());
        std::fs::write(dir.join("artifact.tar"), b"x").unwrap();
        assert!(open(&dir).unwrap());
        assert!(held(&dir));
    }
}
