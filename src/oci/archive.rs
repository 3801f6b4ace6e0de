//! The artifact's layer: decompression (sniffed from the bytes, as the Windsor CLI
//! does), the tar's entries checked before anything is written, and the entries the
//! cache keeps (`metadata.yaml`, `_template/`, `kustomize/`, `terraform/`).

use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Budgets of one pulled artifact (docs/limits.md).
pub const MAX_LAYER_BYTES: u64 = 256 * 1024 * 1024;
/// The decompressed tar.
pub(crate) const MAX_TAR_BYTES: u64 = 1024 * 1024 * 1024;
pub(crate) const MAX_ENTRIES: usize = 100_000;

/// Unpacks the layer in `layer` (gzip is sniffed from its first bytes, as the Windsor
/// CLI does; anything else is taken as a plain tar already) into `tar`, in chunks:
/// neither is ever whole in memory. `charge` is told of every chunk unpacked and may
/// stop the unpacking; the tar may not pass [`MAX_TAR_BYTES`]. Returns the tar's size.
pub fn unpack(
    layer: &mut (impl Read + Seek),
    tar: &mut impl Write,
    charge: &mut dyn FnMut(u64) -> Result<(), String>,
) -> Result<u64, String> {
    let failed = |e: std::io::Error| format!("failed to read layer data: {e}");
    let mut magic = [0u8; 4];
    let seen = read_up_to(layer, &mut magic).map_err(failed)?;
    layer.seek(SeekFrom::Start(0)).map_err(failed)?;
    let magic = &magic[..seen];
    if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Err("the layer is zstd-compressed; bpc reads gzip or plain tar layers".into());
    }
    let mut source: Box<dyn Read + '_> = if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(layer)))
    } else {
        Box::new(layer)
    };
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed(e)),
        };
        total += n as u64;
        if total > MAX_TAR_BYTES {
            return Err(format!(
                "the layer unpacks to more than {} MiB (the limit, docs/limits.md)",
                MAX_TAR_BYTES >> 20
            ));
        }
        charge(n as u64)?;
        tar.write_all(&buf[..n])
            .map_err(|e| format!("cannot write the unpacked layer: {e}"))?;
    }
}

/// The piece of a layer or tar read, written or checked at a time.
const CHUNK: usize = 64 * 1024;

/// Reads until `buf` is full or the input ends; how many bytes it holds.
pub(super) fn read_up_to(from: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match from.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A tar entry's name, cleaned as the Windsor CLI cleans it; an absolute name or one
/// that still holds `..` is refused (the whole artifact with it).
pub(crate) fn clean_path(name: &str) -> Result<String, String> {
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

/// Extracts the entries of `tar` the cache keeps into `dir` (which exists), one entry
/// at a time, its bytes streamed from the tar to the file. Every entry's name is
/// checked: one bad name anywhere refuses the artifact, and the caller drops what was
/// written (`dir` is a staging directory no reader sees). Directories are made 0755;
/// files 0755 when the tar gives them an execute bit and 0644 otherwise, whatever else
/// the tar says (no entry is ever writable by others); links and devices become
/// regular files of their data, as the Windsor CLI writes them.
pub fn extract(tar: impl Read, dir: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(tar);
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
        let shown = crate::oci::shown::joined(&name, 200);
        let cannot = |e: String| format!("cannot extract tar entry {shown}: {e}");
        let target = dir.join(&path);
        if kind.is_dir() {
            create_dirs(&target).map_err(cannot)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            create_dirs(parent).map_err(cannot)?;
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        // A directory entry of the same name as a file (or the reverse) is an error,
        // not something to resolve silently.
        let mut file = std::fs::File::create(&target).map_err(|e| cannot(e.to_string()))?;
        std::io::copy(&mut entry, &mut file)
            .map_err(|e| format!("failed to read tar entry {shown}: {e}"))?;
        set_mode(&target, mode);
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
    builder.create(dir).map_err(|e| e.to_string())
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
