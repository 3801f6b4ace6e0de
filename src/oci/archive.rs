//! The artifact's layer: decompression (sniffed from the bytes, as the Windsor CLI
//! does), the tar's entries checked before anything is written, and the entries the
//! cache keeps (`metadata.yaml`, `_template/`, `kustomize/`, `terraform/`).

use std::io::Read;
use std::path::Path;

/// Budgets of one pulled artifact (docs/limits.md).
pub const MAX_LAYER_BYTES: u64 = 256 * 1024 * 1024;
/// The decompressed tar.
pub const MAX_TAR_BYTES: u64 = 1024 * 1024 * 1024;
pub const MAX_ENTRIES: usize = 100_000;

/// One entry the cache keeps, its name cleaned.
pub struct Entry {
    pub path: String,
    pub dir: bool,
    pub mode: u32,
    pub data: Vec<u8>,
}

/// The layer's bytes as a plain tar: gzip is unpacked, anything else is taken as a tar
/// already (zstd is refused by name: bpc has no zstd decoder).
pub fn decompress(layer: &[u8]) -> Result<Vec<u8>, String> {
    if layer.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(layer)
            .take(MAX_TAR_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("failed to read layer data: {e}"))?;
        if out.len() as u64 > MAX_TAR_BYTES {
            return Err(format!(
                "the layer unpacks to more than {} MiB (the limit, docs/limits.md)",
                MAX_TAR_BYTES >> 20
            ));
        }
        return Ok(out);
    }
    if layer.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Err("the layer is zstd-compressed; bpc reads gzip or plain tar layers".into());
    }
    Ok(layer.to_vec())
}

/// A tar entry's name, cleaned as the Windsor CLI cleans it; an absolute name or one
/// that still holds `..` is refused (the whole artifact with it).
pub fn clean_path(name: &str) -> Result<String, String> {
    let drive =
        name.len() >= 2 && name.as_bytes()[1] == b':' && name.as_bytes()[0].is_ascii_alphabetic();
    if name.starts_with('/') || name.starts_with('\\') || drive {
        return Err(format!(
            "invalid path in tar archive: absolute paths are not allowed: {name}"
        ));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let cleaned = parts.join("/");
    if cleaned.contains("..") {
        return Err(format!(
            "invalid path in tar archive: path contains directory traversal sequence: {name}"
        ));
    }
    Ok(cleaned)
}

/// Whether the cache keeps an entry of this (cleaned) path.
pub fn kept(path: &str) -> bool {
    path == "metadata.yaml"
        || ["_template/", "kustomize/", "terraform/"]
            .iter()
            .any(|p| path.starts_with(p))
}

/// Every entry of `tar` the cache keeps, in archive order, after checking every
/// entry's name (one bad name anywhere refuses the artifact).
pub fn entries(tar: &[u8]) -> Result<Vec<Entry>, String> {
    let mut archive = tar::Archive::new(tar);
    let mut out = Vec::new();
    let iter = archive
        .entries()
        .map_err(|e| format!("failed to read tar header: {e}"))?;
    for (count, entry) in iter.enumerate() {
        if count >= MAX_ENTRIES {
            return Err(format!(
                "the artifact has more than {MAX_ENTRIES} tar entries (the limit, docs/limits.md)"
            ));
        }
        let mut entry = entry.map_err(|e| format!("failed to read tar header: {e}"))?;
        let kind = entry.header().entry_type();
        if matches!(
            kind,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader
        ) {
            continue;
        }
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8(raw)
            .map_err(|_| "invalid path in tar archive: a name is not UTF-8".to_string())?;
        let path = clean_path(&name)?;
        if !kept(&path) {
            continue;
        }
        let dir = kind.is_dir();
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        let mut data = Vec::new();
        if !dir {
            entry
                .read_to_end(&mut data)
                .map_err(|e| format!("failed to read tar entry {name}: {e}"))?;
        }
        out.push(Entry {
            path,
            dir,
            mode,
            data,
        });
    }
    Ok(out)
}

/// Writes the kept entries under `dir` (which exists): directories 0755, files 0755
/// when the tar gives them an execute bit and 0644 otherwise, whatever else the tar
/// says (no entry is ever writable by others); links and devices become regular files
/// of their data, as the Windsor CLI writes them.
pub fn write(dir: &Path, entries: &[Entry]) -> Result<(), String> {
    for entry in entries {
        let target = dir.join(&entry.path);
        if entry.dir {
            create_dirs(&target)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            create_dirs(parent)?;
        }
        // A directory entry of the same name as a file (or the reverse) is an error,
        // not something to resolve silently.
        std::fs::write(&target, &entry.data).map_err(|e| format!("{}: {e}", target.display()))?;
        set_mode(&target, entry.mode);
    }
    Ok(())
}

fn create_dirs(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o755);
    }
    builder
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_and_traversal_refused() {
        assert_eq!(clean_path("./_template/x").unwrap(), "_template/x");
        assert_eq!(clean_path("a/../_template/x").unwrap(), "_template/x");
        assert!(clean_path("../x")
            .unwrap_err()
            .contains("directory traversal"));
        assert!(clean_path("_template/../../x").is_err());
        assert!(clean_path("_template/notes..md").is_err());
        assert!(clean_path("/etc/x").unwrap_err().contains("absolute"));
        assert!(clean_path("C:x").is_err());
        assert!(kept("_template/blueprint.yaml"));
        assert!(kept("metadata.yaml"));
        assert!(!kept("artifact-manifest.yaml"));
        assert!(!kept("_template"));
        assert!(!kept("blueprint.yaml"));
    }
}
