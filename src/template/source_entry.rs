//! The `sources:` entries of a template's `blueprint.yaml`, and which of them are local
//! (a path on disk, or `file://…`) and so composed by bpc itself. Every other entry
//! (`oci://`, git URLs, entries without a URL) stays a plain `sources:` entry.

use crate::files::Span;
use crate::yaml::{Node, NodeKind};

/// One local `sources:` entry.
#[derive(Clone, Debug)]
pub struct LocalEntry {
    /// The entry's `name`; empty when it has none (an error for a local entry).
    pub name: String,
    /// The path as written, without a `file://` prefix.
    pub path: String,
    /// Position in the `sources:` list (for messages: `sources[2]`).
    pub index: usize,
    /// The whole entry and its `url` value, for diagnostics.
    pub span: Span,
    pub url_span: Span,
}

/// The path of a local source URL, or `None` for anything bpc leaves to the consumer.
/// Local means `file://…`, or a path written as one: `/…`, `./…`, `../…`, `.`, `..`.
/// A bare `host/owner/repo` is a remote (git) source in Windsor blueprints, so it is
/// not taken for a relative path.
pub(crate) fn local_path(url: &str) -> Option<&str> {
    if let Some(rest) = url.strip_prefix("file://") {
        return Some(rest);
    }
    if url.contains("://") {
        return None;
    }
    let pathlike = url == "."
        || url == ".."
        || url.starts_with("./")
        || url.starts_with("../")
        || url.starts_with('/');
    pathlike.then_some(url)
}

/// The local entries of a blueprint's `sources:` list, in list order.
pub fn local_entries(blueprint: &Node) -> Vec<LocalEntry> {
    let Some(NodeKind::Seq(items)) = blueprint.get("sources").map(|n| &n.kind) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(url) = item.get("url") else { continue };
        let Some(path) = url.as_str().and_then(local_path) else {
            continue;
        };
        out.push(LocalEntry {
            name: item
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string(),
            path: path.to_string(),
            index,
            span: item.span,
            url_span: url.span,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn paths_and_file_urls_are_local() {
        assert_eq!(local_path("../core"), Some("../core"));
        assert_eq!(
            local_path("./vendor/core.tar.gz"),
            Some("./vendor/core.tar.gz")
        );
        assert_eq!(
            local_path("/srv/templates/core"),
            Some("/srv/templates/core")
        );
        assert_eq!(local_path("file:///srv/core"), Some("/srv/core"));
        assert_eq!(local_path("file://rel/core"), Some("rel/core"));
        assert_eq!(local_path(".."), Some(".."));
    }

    #[test]
    fn remote_urls_are_not_local() {
        assert_eq!(local_path("oci://ghcr.io/windsorcli/core:v0.3.0"), None);
        assert_eq!(local_path("github.com/windsorcli/core"), None);
        assert_eq!(local_path("https://github.com/windsorcli/core.git"), None);
        assert_eq!(local_path("git@github.com:windsorcli/core.git"), None);
        assert_eq!(local_path(""), None);
    }
}
