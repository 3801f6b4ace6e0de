//! Recomposing a project again and again, reusing what did not change.

use super::{Options, Session};
use crate::compose::face::{Composition, Memo};
use crate::files::{Diagnostic, FileMap, FileOverlay, FileTree};
use crate::template::FacetCache;
use std::sync::Arc;

/// One engine for recomposing a project again and again (watch mode, the language
/// server, benchmarks): each [`Recomposer::open`] discovers and loads the project
/// anew, but parses only the facet files whose text changed (the facets of the others
/// are shared with the last load), and each [`Recomposer::compose`] collects only the
/// facets whose inputs changed (see `compose::collect::memo`). Results are those of a
/// fresh [`Session::open`] and [`Session::compose`]. The files read and the facets
/// parsed accumulate, so it starts afresh every [`Recomposer::RENEW_AFTER`] loads.
pub struct Recomposer {
    options: Options,
    sources: Arc<FileMap>,
    facets: Arc<FacetCache>,
    memos: std::collections::HashMap<String, Memo>,
    loads: usize,
}

impl Recomposer {
    pub const RENEW_AFTER: usize = 200;

    /// An engine for the project `options` locate; `options.facet_cache` is replaced
    /// by the engine's own.
    pub fn new(options: Options) -> Recomposer {
        Recomposer {
            options,
            sources: Arc::new(FileMap::new()),
            facets: Arc::new(FacetCache::default()),
            memos: Default::default(),
            loads: 0,
        }
    }

    /// The files read so far: what diagnostics of the last load and composition name.
    pub fn sources(&self) -> &Arc<FileMap> {
        &self.sources
    }

    /// Discovers and loads the project as [`Session::open`] does.
    pub fn open(&mut self) -> Result<Session, Vec<Diagnostic>> {
        self.open_overlaid(|_| FileOverlay::new())
    }

    /// As [`Session::open_overlaid`].
    pub fn open_overlaid(
        &mut self,
        overlay: impl FnOnce(&FileTree) -> FileOverlay,
    ) -> Result<Session, Vec<Diagnostic>> {
        self.loads += 1;
        if self.loads > Self::RENEW_AFTER {
            let tells = self.facets.tells_changes();
            self.sources = Arc::new(FileMap::new());
            self.facets = Arc::new(FacetCache::default());
            self.facets.tell_changes(tells);
            self.memos.clear();
            self.loads = 1;
        }
        let mut options = self.options.clone();
        options.facet_cache = Some(self.facets.clone());
        Session::open_overlaid(options, self.sources.clone(), overlay)
    }

    /// Composes the session's context (a session this engine opened), reusing the
    /// last composition of that context where nothing it depended on changed.
    pub fn compose(&mut self, session: &Session) -> Result<Composition, Vec<Diagnostic>> {
        let memo = self
            .memos
            .entry(session.project.context.clone())
            .or_default();
        session.compose_incremental(memo)
    }

    /// Composes context `name` over the session's template, as
    /// [`Session::compose_context`], with that context's memo.
    pub fn compose_context(
        &mut self,
        session: &Session,
        name: &str,
    ) -> Result<Composition, Vec<Diagnostic>> {
        let memo = self.memos.entry(name.to_string()).or_default();
        session.compose_context_incremental(name, memo)
    }

    /// Composes every context of `names` over the session's template, each with its
    /// own memo, on all cores (as [`Session::compose_context`] each).
    pub fn compose_contexts(
        &mut self,
        session: &Session,
        names: &[String],
    ) -> Vec<Result<Composition, Vec<Diagnostic>>> {
        let jobs: Vec<(String, std::sync::Mutex<Memo>)> = names
            .iter()
            .map(|n| {
                let memo = self.memos.remove(n).unwrap_or_default();
                (n.clone(), std::sync::Mutex::new(memo))
            })
            .collect();
        let results = crate::parallel::map(&jobs, crate::parallel::cores(), |(name, memo)| {
            let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
            session.compose_context_incremental(name, &mut memo)
        });
        for (name, memo) in jobs {
            self.memos
                .insert(name, memo.into_inner().unwrap_or_else(|p| p.into_inner()));
        }
        results
    }

    /// `on`: from now on the caller tells the engine about every change of a file of
    /// the template ([`Recomposer::changed`], or [`Recomposer::unknown_changes`] when
    /// it cannot say what changed) before the next [`Recomposer::open`], which then
    /// reads only those files and keeps the last listing and texts of the others
    /// (watch mode and the language server know what changed). Off by default:
    /// every open lists the template and reads and compares every facet file.
    pub fn tell_changes(&mut self, on: bool) {
        self.facets.tell_changes(on);
    }

    /// Files (absolute paths) changed, created or removed since the last open; a
    /// directory named here is listed again. Paths outside the template need no
    /// telling: everything but the template's facet files is read on every open.
    pub fn changed<'p>(&mut self, paths: impl IntoIterator<Item = &'p std::path::Path>) {
        self.facets.changed(paths);
    }

    /// Something changed that the caller cannot name: the next open lists and reads
    /// everything (and later ones go back to reading what they are told).
    pub fn unknown_changes(&mut self) {
        self.facets.unknown_changes();
    }

    /// The options the next [`Recomposer::open`] uses (a changed context setting).
    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.options
    }

    /// How much the last composition of `context` reused.
    pub fn reuse(&self, context: &str) -> crate::compose::model::reuse::Reuse {
        self.memos.get(context).map(Memo::last).unwrap_or_default()
    }

    /// Forgets the compositions kept (the parsed facets stay).
    pub fn forget(&mut self) {
        self.memos.clear();
    }
}
