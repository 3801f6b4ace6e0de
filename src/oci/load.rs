//! A project whose template is a published blueprint: the `oci://` sources of the
//! context's own `blueprint.yaml` pulled (or found in the cache), the one to compose
//! chosen, its `metadata.yaml` checked, and its `_template/` opened (S14).

use super::{fetch, metadata, sources, Reference, Settings};
use crate::files::{Diagnostic, Span};
use crate::yaml::Node;
use std::path::{Path, PathBuf};

/// A pulled template, ready to load.
#[derive(Clone, Debug)]
pub struct Pulled {
    /// The `sources:` entry's name.
    pub name: String,
    /// The `oci://` URL as written.
    pub url: String,
    /// The `sources:` entry that lists it.
    pub entry: Span,
    pub reference: Reference,
    /// `.windsor/cache/oci/<key>/`.
    pub cache_dir: PathBuf,
    /// `<cache_dir>/_template`.
    pub template_dir: PathBuf,
    /// How messages name the template's files (relative to the project).
    pub display: String,
    /// Found while pulling.
    pub warnings: Vec<Diagnostic>,
    /// The other `oci://` sources of the context's blueprint, loaded beside it.
    pub others: Vec<sources::Entry>,
    /// The file that lists it (`contexts/<ctx>/blueprint.yaml`).
    pub listed_in: String,
}

/// The published blueprint of a project without a template of its own: the last
/// `oci://` source of `user` (the context's `blueprint.yaml`, read from `path`) that is
/// merged (`install` true or omitted). `None` when it lists none.
pub fn published(
    root: &Path,
    user: Option<&Node>,
    path: &str,
    settings: &Settings,
) -> Result<Option<Pulled>, Diagnostic> {
    let Some(user) = user else {
        return Ok(None);
    };
    let entries = sources::entries(user);
    let Some(chosen) = entries.iter().rev().find(|e| e.install) else {
        return Ok(None);
    };
    let pulled = pull(
        root,
        chosen.name.as_str(),
        &chosen.url,
        chosen.url_span,
        path,
        settings,
    )?;
    let others = entries
        .iter()
        .filter(|e| e.index != chosen.index)
        .cloned()
        .collect();
    Ok(Some(Pulled {
        entry: chosen.span,
        others,
        ..pulled
    }))
}

/// Pulls (or finds in the cache) `url`, named `name`, listed at `span` of `listed_in`.
pub fn pull(
    root: &Path,
    name: &str,
    url: &str,
    span: Span,
    listed_in: &str,
    settings: &Settings,
) -> Result<Pulled, Diagnostic> {
    let at = |d: Diagnostic| {
        d.with_primary(span, "this source")
            .with_note(format!("source `{name}` of {listed_in}"))
    };
    let reference = Reference::parse(url).map_err(|m| {
        if super::reference::has_credentials(url) {
            // The entry's line holds a password: named, not quoted.
            Diagnostic::error(m).with_note(format!(
                "source `{name}` of {}",
                place(root, listed_in, span.start as usize)
            ))
        } else {
            at(Diagnostic::error(m))
        }
    })?;
    let dir = fetch(root, &reference, settings).map_err(|f| {
        let d = at(Diagnostic::error(f.message));
        match f.help {
            Some(h) => d.with_help(h),
            None => d,
        }
    })?;
    if let Some(meta) = metadata::read(&dir).map_err(|m| at(Diagnostic::error(m)))? {
        if let Some(constraint) = &meta.cli_version {
            metadata::check(&settings.windsor_version, constraint).map_err(|m| {
                at(Diagnostic::error(format!(
                    "{name}:{} is incompatible with this CLI ({m}) — bpc answers cliVersion checks as Windsor {}",
                    reference.tag, settings.windsor_version
                )))
                .with_help("pin an older tag for this source, or set BPC_WINDSOR_VERSION to the Windsor version the project uses")
            })?;
        }
    }
    let template_dir = dir.join("_template");
    if !template_dir.is_dir() {
        return Err(at(Diagnostic::error(format!(
            "{url} is not a Windsor blueprint artifact: it has no _template/ directory ({} holds {})",
            dir.strip_prefix(root).unwrap_or(&dir).display(),
            listing(&dir)
        )))
        .with_help("a blueprint artifact keeps its template under _template/ (what `windsor bundle` and `bpc bundle` write)"));
    }
    let rel = template_dir
        .strip_prefix(root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| template_dir.display().to_string());
    Ok(Pulled {
        name: name.to_string(),
        url: url.to_string(),
        entry: span,
        reference,
        cache_dir: dir,
        template_dir,
        display: rel,
        warnings: Vec::new(),
        others: Vec::new(),
        listed_in: listed_in.to_string(),
    })
}

/// `listed_in:LINE:COL` of byte `offset` when `listed_in` is a file of the project,
/// else `listed_in`.
fn place(root: &Path, listed_in: &str, offset: usize) -> String {
    let Ok(text) = std::fs::read_to_string(root.join(listed_in)) else {
        return listed_in.to_string();
    };
    match crate::files::line_and_column(&text, offset) {
        Some(at) => format!("{listed_in}:{}:{}", at.line, at.column),
        None => listed_in.to_string(),
    }
}

/// What a cache directory holds, for a message.
fn listing(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        "nothing".to_string()
    } else {
        names.join(", ")
    }
}
