//! The `oci://` sources of a project built on a published blueprint, pulled in turn:
//! the context's own, then those each pulled blueprint lists (S14).

use super::load::{pull, Pulled};
use super::sources::Entry;
use super::Settings;
use crate::files::Diagnostic;
use std::collections::VecDeque;
use std::path::Path;

/// At most this many `oci://` sources besides the composing one (S14).
const MOST_SOURCES: usize = 64;

/// A source to pull.
pub struct Wanted {
    pub entry: Entry,
    /// How messages name the file that lists it.
    pub listed_in: String,
    /// Whether its components are merged in (only the context's own entries can be),
    /// or it is only loaded.
    pub install: bool,
}

/// Pulls `wanted`, then the sources each pulled blueprint lists, breadth first.
/// Source identity is the name, as in the Windsor CLI: a name already pulled, or
/// `composing` (the published blueprint the project is built on), is not pulled
/// again. `loaded` takes each pull (with whether it is installed) and gives the
/// sources its blueprint lists.
pub fn pull_all(
    root: &Path,
    composing: &str,
    wanted: Vec<Wanted>,
    settings: &Settings,
    mut loaded: impl FnMut(&Entry, Pulled, bool) -> Result<Vec<Wanted>, Vec<Diagnostic>>,
) -> Result<(), Vec<Diagnostic>> {
    let mut names = vec![composing.to_string()];
    let mut todo = VecDeque::from(wanted);
    while let Some(Wanted {
        entry,
        listed_in,
        install,
    }) = todo.pop_front()
    {
        if names.contains(&entry.name) {
            continue;
        }
        if names.len() > MOST_SOURCES {
            return Err(vec![Diagnostic::error(format!(
                "more than {MOST_SOURCES} oci:// sources; stopped at `{}` ({listed_in})",
                entry.name
            ))
            .with_primary(entry.span, "one too many")]);
        }
        names.push(entry.name.clone());
        let pulled = pull(
            root,
            &entry.name,
            &entry.url,
            entry.url_span,
            &listed_in,
            settings,
        )
        .map_err(|d| vec![d])?;
        todo.extend(loaded(&entry, pulled, install)?);
    }
    Ok(())
}
