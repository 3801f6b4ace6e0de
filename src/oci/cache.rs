//! The pull cache, shared with the Windsor CLI: `<project>/.windsor/cache/oci/<key>/`
//! holds `artifact.tar` (the decompressed layer, byte for byte) and the extracted
//! `metadata.yaml`, `_template/`, `kustomize/` and `terraform/`. An entry whose
//! `artifact.tar` exists and is not empty is complete and reused without asking the
//! registry.
//!
//! Several bpc processes may pull and read one entry at once; none of them ever sees
//! a partial entry:
//!
//! * An entry is written whole in a staging directory (`.bpc/<key>.staging-*`, beside
//!   the entries, so on the same file system), then moved into place in one rename,
//!   so an interrupted pull never leaves an entry that looks complete. A layer streams
//!   to disk and from there into the staging directory; it is never whole in memory.
//! * Each entry has a lock file, `.bpc/<key>.lock` beside the entries (a name holding
//!   no `_` is never an entry's). A process reading an entry holds it shared until
//!   it exits (the loaded template is read lazily, so for as long as it may read);
//!   a process writing one holds it exclusively, and only to move its staged entry
//!   into place.
//! * A writer that finds the entry complete once it holds the lock (another process
//!   pulled it meanwhile) keeps that entry and drops its own. Under `NO_CACHE` it
//!   keeps it too when its `artifact.tar` has the same bytes; only different bytes (a
//!   tag that moved) replace it: in one atomic exchange on Linux, else by renaming the
//!   old entry away and the new one in; the old one is deleted after. Replacing waits
//!   for the entry's readers to finish, [`LOCK_WAIT`] at most.
//! * Staging directories and replaced entries (`.bpc/<key>.old-*`) that a killed
//!   process left are deleted by the next writer of that key, under the lock. A live
//!   writer keeps its staging directory locked, so it is never taken for a leftover.
//!
//! The Windsor CLI takes no lock: a Windsor pull that replaces an entry a bpc run is
//! reading can still be seen half-way. On systems without `flock` bpc takes no lock
//! either, and leftover staging directories are deleted once an hour old.

use super::archive::read_up_to;
use crate::files::exchange::exchange;
use std::fs::File;
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

/// Why a run gave up on the entry at `dir`, naming the processes that hold it where
/// the system says (a language server or a `--watch` run holds the entries it loaded
/// until it exits).
fn busy(dir: &Path, doing: &str) -> String {
    let lock = lock_path(dir);
    let by = match super::lock_holders::holders(&lock)[..] {
        [] => "another process".to_string(),
        ref named => named.join(", "),
    };
    format!(
        "the OCI cache entry {} {doing} by {by}, still after {} s (its lock: {})",
        dir.display(),
        LOCK_WAIT.as_secs(),
        lock.display()
    )
}

/// Stores a pulled artifact as the entry at `dir`, and holds it for reading until the
/// process exits. `fill` writes the entry's files into a staging directory no reader
/// sees: `artifact.tar` and what is extracted from it. A complete entry found in
/// place is kept, unless `refresh` (`NO_CACHE`) is set and its `artifact.tar` differs
/// from the staged one.
pub fn store(
    dir: &Path,
    refresh: bool,
    fill: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let staging = Staging::new(dir)?;
    fill(staging.path())?;
    staging.finish()?;
    let lock = Lock::open(dir)?;
    let keep = |dir: &Path| complete(dir) && (!refresh || same(dir, staging.path()));
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
        staging.move_to(dir)?;
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

/// An anonymous file beside the entries (on the same disk as the cache, never in
/// memory) for a layer while it downloads; it has no name, so nothing is left behind.
pub fn spool(dir: &Path) -> Result<File, String> {
    let private = private_dir(dir)?;
    tempfile::tempfile_in(&private).map_err(|e| {
        format!(
            "cannot create a file for the download in {}: {e}",
            private.display()
        )
    })
}

/// Removes the directory [`spool`] made for `dir`'s download when a failed pull
/// leaves it empty (no other entry has a lock file there).
pub fn tidy(dir: &Path) {
    let _ = std::fs::remove_dir(private_path(dir));
}

/// One writer's staging directory, `.bpc/<key>.staging-XXXXXX`: filled before the
/// entry's lock is taken, then moved into place under it. The writer keeps it locked
/// for as long as it lives, so that another writer's clean-up of leftovers (which
/// deletes only what no live process holds) passes it by.
struct Staging {
    dir: tempfile::TempDir,
    _alive: Lock,
}

impl Staging {
    fn new(entry: &Path) -> Result<Staging, String> {
        let private = private_dir(entry)?;
        // Another writer's clean-up may take a directory between its creation and its
        // lock: then it is made again.
        for _ in 0..8 {
            let dir = tempfile::Builder::new()
                .prefix(&format!("{}.staging-", key(entry)))
                .tempdir_in(&private)
                .map_err(|e| {
                    format!(
                        "cannot create a staging directory in {}: {e}",
                        private.display()
                    )
                })?;
            let Ok(alive) = Lock::at(dir.path()) else {
                continue;
            };
            if alive.try_lock(Mode::Exclusive)? && alive.is(dir.path()) {
                return Ok(Staging { dir, _alive: alive });
            }
        }
        Err(format!(
            "cannot keep a staging directory in {}: other writers took each one away",
            private.display()
        ))
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Checks that the staged entry is complete and gives it the cache's modes.
    fn finish(&self) -> Result<(), String> {
        let tar_path = self.path().join("artifact.tar");
        let file = File::open(&tar_path).map_err(|e| format!("{}: {e}", tar_path.display()))?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            return Err("the artifact's layer is empty".to_string());
        }
        let _ = file.sync_all();
        // The staging directory is private (0700) until it is complete; the cache's
        // modes do not depend on the umask.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&tar_path, std::fs::Permissions::from_mode(0o644));
            let _ = std::fs::set_permissions(self.path(), std::fs::Permissions::from_mode(0o755));
        }
        Ok(())
    }

    /// Moves the staged entry into place at `dir`, under the entry's exclusive lock.
    fn move_to(self, dir: &Path) -> Result<(), String> {
        let moved = |e: std::io::Error| {
            format!(
                "cannot move the pulled artifact into {}: {e}",
                dir.display()
            )
        };
        if std::fs::symlink_metadata(dir).is_err() {
            let staged = self.dir.keep();
            return std::fs::rename(&staged, dir).map_err(|e| {
                let _ = std::fs::remove_dir_all(&staged);
                moved(e)
            });
        }
        // An entry is in place (incomplete, or with other bytes): swapped out whole,
        // then deleted.
        if exchange(self.path(), dir).map_err(moved)? {
            // The staging path now holds the old entry (a file, maybe): deleted, or
            // left for the next writer of the key.
            let old = self.dir.keep();
            if std::fs::remove_dir_all(&old).is_err() {
                let _ = std::fs::remove_file(&old);
            }
            return Ok(());
        }
        let private = private_dir(dir)?;
        let old = tempfile::Builder::new()
            .prefix(&format!("{}.old-", key(dir)))
            .tempdir_in(&private)
            .map_err(|e| format!("cannot create a directory in {}: {e}", private.display()))?;
        std::fs::rename(dir, old.path().join("entry")).map_err(moved)?;
        let staged = self.dir.keep();
        std::fs::rename(&staged, dir).map_err(|e| {
            let _ = std::fs::remove_dir_all(&staged);
            moved(e)
        })?;
        drop(old);
        Ok(())
    }
}

/// Whether the complete entry at `dir` has the same `artifact.tar` as `staged`.
fn same(dir: &Path, staged: &Path) -> bool {
    let open = |d: &Path| File::open(d.join("artifact.tar")).ok();
    let (Some(a), Some(b)) = (open(dir), open(staged)) else {
        return false;
    };
    let len = |f: &File| f.metadata().map(|m| m.len()).ok();
    if len(&a).is_none() || len(&a) != len(&b) {
        return false;
    }
    let (mut a, mut b) = (std::io::BufReader::new(a), std::io::BufReader::new(b));
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let (Ok(n), Ok(m)) = (read_up_to(&mut a, &mut x), read_up_to(&mut b, &mut y)) else {
            return false;
        };
        if n != m || x[..n] != y[..m] {
            return false;
        }
        if n == 0 {
            return true;
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
        if !leftover || !stale(&item) {
            continue;
        }
        // Held while it is deleted, so that no writer can take it up meanwhile.
        let path = item.path();
        if let Some(_held) = abandoned(&path) {
            // A swapped-out entry may have been a file.
            if std::fs::remove_dir_all(&path).is_err() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// The lock of the leftover at `path`, taken, when no live process holds it (see
/// [`Staging`]; a swapped-out entry is held by nobody); `None` when one does.
fn abandoned(path: &Path) -> Option<Lock> {
    let lock = Lock::at(path).ok()?;
    matches!(lock.try_lock(Mode::Exclusive), Ok(true)).then_some(lock)
}

/// Whether a leftover may be deleted: always where locks are real (a live writer's
/// staging directory is locked); elsewhere only once it is an hour old.
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
    /// A lock on `path` itself (a staging directory), to say a writer is alive.
    fn at(path: &Path) -> Result<Lock, String> {
        File::open(path)
            .map(|file| Lock { file })
            .map_err(|e| format!("cannot open {}: {e}", path.display()))
    }

    /// Whether the locked file is still the one at `path` (not deleted meanwhile).
    #[cfg(unix)]
    fn is(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is(&self, path: &Path) -> bool {
        path.exists()
    }

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
    use crate::oci::archive;

    fn tar_of(name: &str, data: &[u8]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, data).unwrap();
        builder.into_inner().unwrap()
    }

    /// What a pull stages: an artifact holding one blueprint of `text`.
    fn staged(text: &str) -> impl FnOnce(&Path) -> Result<(), String> {
        let tar = tar_of("_template/blueprint.yaml", text.as_bytes());
        move |staging: &Path| {
            std::fs::write(staging.join("artifact.tar"), &tar).unwrap();
            archive::extract(&tar[..], staging)
        }
    }

    #[test]
    fn a_live_writers_staging_directory_is_not_a_leftover() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("oci").join("reg_acme_demo_v3");
        let busy = Staging::new(&dir).unwrap();
        std::fs::write(busy.path().join("artifact.tar"), b"half").unwrap();
        store(&dir, false, staged("kind: Blueprint\n")).unwrap();
        assert!(busy.path().join("artifact.tar").is_file());
    }

    /// An entry another process (or the Windsor CLI) wrote, with one blueprint.
    fn written_by_another(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        staged(text)(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_refresh_replaces_an_entry_only_when_its_bytes_differ() {
        use std::os::unix::fs::MetadataExt;
        let root = tempfile::tempdir().unwrap();
        let inode = |dir: &Path| std::fs::metadata(dir.join("artifact.tar")).unwrap().ino();
        let same = root.path().join("oci").join("reg_acme_demo_v4");
        written_by_another(&same, "a: 1\n");
        let before = inode(&same);
        store(&same, true, staged("a: 1\n")).unwrap();
        assert_eq!(inode(&same), before);
        let moved = root.path().join("oci").join("reg_acme_demo_v5");
        written_by_another(&moved, "a: 1\n");
        store(&moved, true, staged("a: 2\n")).unwrap();
        let text = std::fs::read_to_string(moved.join("_template/blueprint.yaml")).unwrap();
        assert_eq!(text, "a: 2\n");
    }

    #[test]
    fn an_empty_layer_is_refused_and_nothing_is_left() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("oci").join("reg_acme_demo_v6");
        let empty = |staging: &Path| {
            std::fs::write(staging.join("artifact.tar"), b"").map_err(|e| e.to_string())
        };
        assert_eq!(
            store(&dir, false, empty).unwrap_err(),
            "the artifact's layer is empty"
        );
        assert!(!dir.exists());
        let private = root.path().join("oci").join(PRIVATE);
        let staged: Vec<_> = std::fs::read_dir(&private)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".staging-"))
            .collect();
        assert!(staged.is_empty());
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
        store(&dir, false, staged("kind: Blueprint\n")).unwrap();
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
