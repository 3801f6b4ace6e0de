//! `file://` URIs and paths. Editors percent-encode paths in URIs; bpc names files by
//! path, so both directions are needed, with the encoding kept exact.

use lsp_types::Uri;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The path of a `file://` URI; `None` for any other scheme.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://")?;
    // `file://host/path` is not a local file; `file:///path` has an empty host.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    Some(PathBuf::from(decode(path)?))
}

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&out).ok()
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_encoding() {
        let path = Path::new("/tmp/my project/facets/é.yaml");
        let uri = from_path(path).expect("uri");
        assert_eq!(uri.as_str(), "file:///tmp/my%20project/facets/%C3%A9.yaml");
        assert_eq!(to_path(&uri).as_deref(), Some(path));
        let other = Uri::from_str("untitled:Untitled-1").expect("uri");
        assert_eq!(to_path(&other), None);
    }
}
