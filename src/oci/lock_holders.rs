//! Who holds a lock file: on Linux, the processes `/proc/locks` lists as holding a
//! `flock` on it, each as its command line and pid, so that a run which gave up
//! waiting for a cache entry can say which process is in the way (a language server,
//! a `--watch` run). Elsewhere, or when `/proc` cannot be read, nobody is named.

use std::path::Path;

/// The processes other than this one holding a lock on the file at `path`, as
/// `` `command line` (pid N) ``.
pub fn holders(path: &Path) -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let (Ok(meta), Ok(locks)) = (
            std::fs::metadata(path),
            std::fs::read_to_string("/proc/locks"),
        ) else {
            return Vec::new();
        };
        let mut pids = pids_locking(&locks, meta.ino());
        pids.retain(|pid| *pid != std::process::id());
        pids.sort_unstable();
        pids.dedup();
        pids.into_iter().map(described).collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Vec::new()
    }
}

/// The pids of the locks `/proc/locks` lists on inode `ino` (lines such as
/// `1: FLOCK  ADVISORY  READ 4242 fd:01:123456 0 EOF`); a process still waiting for
/// one (`1: -> FLOCK …`) holds nothing.
fn pids_locking(locks: &str, ino: u64) -> Vec<u32> {
    locks
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) == Some(&"->") {
                return None;
            }
            let pid = fields.get(4)?.parse::<u32>().ok()?;
            let inode = fields.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
            (inode == ino).then_some(pid)
        })
        .collect()
}

/// `` `command line` (pid N) ``, or `pid N` when the process is gone or hidden.
fn described(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    match words.is_empty() {
        true => format!("pid {pid}"),
        false => format!("`{}` (pid {pid})", words.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_proc_locks_name_the_holders_of_one_inode() {
        let locks = "1: FLOCK  ADVISORY  READ 4242 fd:01:777 0 EOF\n\
                     2: FLOCK  ADVISORY  READ 4343 fd:01:888 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 4444 fd:01:777 0 EOF\n\
                     3: POSIX  ADVISORY  WRITE 4545 fd:01:777 0 EOF\n";
        assert_eq!(pids_locking(locks, 777), [4242, 4545]);
        assert!(pids_locking(locks, 999).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_holding_the_lock_is_named_by_its_command_line() {
        let Ok(flock) = which("flock") else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("entry.lock");
        std::fs::write(&lock, b"").unwrap();
        let mut child = std::process::Command::new(flock)
            .arg("-s")
            .arg(&lock)
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        // Until `flock` has the lock, /proc/locks does not list it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut named = holders(&lock);
        while named.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            named = holders(&lock);
        }
        let _ = child.kill();
        let _ = child.wait();
        let want = format!("-s {} sleep 30` (pid {})", lock.display(), child.id());
        assert_eq!(named.len(), 1, "{named:?}");
        assert!(named[0].ends_with(&want), "{named:?}");
    }

    fn which(name: &str) -> Result<std::path::PathBuf, ()> {
        let path = std::env::var_os("PATH").ok_or(())?;
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .ok_or(())
    }
}
