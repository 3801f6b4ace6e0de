//! Trading two directory entries in one step, for writers that replace a whole tree
//! (the render's output directory, an OCI cache entry) so that a reader sees the old
//! tree or the new one, never half of each.

use std::path::Path;

/// Swaps the entries `a` and `b` (both must exist) atomically: `Ok(true)` when done,
/// `Ok(false)` where the system or the file system cannot (the caller falls back to
/// two renames), an error otherwise.
#[cfg(target_os = "linux")]
pub fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both pointers are valid NUL-terminated strings that outlive the call;
    // the system call only reads them.
    let result = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if result == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn exchange(_a: &Path, _b: &Path) -> std::io::Result<bool> {
    Ok(false)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn two_directories_trade_places() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(a.join("from-a"), "").unwrap();
        std::fs::write(b.join("from-b"), "").unwrap();
        assert!(exchange(&a, &b).unwrap());
        assert!(a.join("from-b").exists() && b.join("from-a").exists());
    }

    #[test]
    fn a_missing_side_is_an_error_not_a_fallback() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let e = exchange(&a, &root.path().join("missing")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
