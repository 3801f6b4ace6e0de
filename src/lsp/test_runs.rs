//! Failing test expectations as diagnostics on `tests/*.test.yaml`: the template's
//! cases run as `bpc test` runs them (its defaults), on a thread of their own so the
//! other diagnostics never wait for them. Only the newest snapshot's results are
//! published; this thread owns the diagnostics of the test files.

use super::diagnostics::convert;
use super::snapshot::Snapshot;
use crate::testing::runner::RunOptions;
use crate::testing::suite::Select;
use crossbeam_channel::{Receiver, Sender};
use lsp_server::Message;
use lsp_types as lsp;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Diagnostics of every test file of the snapshot's template (an empty list for a
/// file whose cases all pass, so earlier failures are cleared).
pub fn diagnostics(snapshot: &Snapshot) -> BTreeMap<PathBuf, Vec<lsp::Diagnostic>> {
    let mut out: BTreeMap<PathBuf, Vec<lsp::Diagnostic>> = BTreeMap::new();
    let Ok(session) = &snapshot.session else {
        return out;
    };
    let tree = &session.template.tree;
    let Some(dir) = tree.root_dir() else {
        return out;
    };
    let options = RunOptions {
        precedence: session.options.precedence,
        limits: session.options.limits,
        ..RunOptions::default()
    };
    // Every case is selected: nothing stops the discovery.
    let Ok(suite) = session.suite(options, &Select::default()) else {
        return out;
    };
    for found in &suite.files {
        out.entry(dir.join(&found.path)).or_default();
        for d in &found.diagnostics {
            place(&mut out, convert(d, snapshot, None));
        }
    }
    let cases = suite.cases();
    let results = suite.run(&cases, crate::parallel::cores());
    let mut warned = Vec::new();
    for (case, result) in cases.iter().zip(&results) {
        for w in &result.warnings {
            if !warned.contains(w) {
                warned.push(w.clone());
            }
        }
        if result.passed() {
            continue;
        }
        let mut message = format!("test case `{}` fails", case.name);
        for m in &result.mismatches {
            message.push('\n');
            if !m.path.is_empty() {
                message.push_str(&m.path);
                message.push_str(": ");
            }
            message.push_str(&m.message);
        }
        for e in &result.errors {
            message.push('\n');
            message.push_str(&e.full_text());
        }
        let failure = crate::files::Diagnostic::error(message).with_primary(case.span, "");
        place(&mut out, convert(&failure, snapshot, Some("test-failure")));
    }
    for w in &warned {
        place(&mut out, convert(w, snapshot, None));
    }
    out
}

/// Keeps a diagnostic that belongs to a test file (composition warnings a case
/// repeats belong to the facets, which the main analysis reports).
fn place(
    out: &mut BTreeMap<PathBuf, Vec<lsp::Diagnostic>>,
    (path, diagnostic): (Option<PathBuf>, lsp::Diagnostic),
) {
    if let Some(list) = path.and_then(|p| out.get_mut(&p)) {
        list.push(diagnostic);
    }
}

/// Test results may come later than the diagnostics of an edit, which the editor shows
/// as the user types: this thread (and the workers it starts, which inherit it) runs
/// at a lower scheduling priority, so on a busy machine the analysis gets the cores
/// first. Best effort; Linux only (there a nice value belongs to one thread).
fn yield_to_diagnostics() {
    #[cfg(target_os = "linux")]
    // SAFETY: changes only the calling thread's nice value (who = 0).
    unsafe {
        let _ = libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// The test thread: give it snapshots; `latest` is the newest generation built, so a
/// run that finishes after a newer snapshot exists publishes nothing.
pub struct TestRuns {
    pub queue: Sender<Arc<Snapshot>>,
    pub latest: Arc<AtomicU64>,
}

impl TestRuns {
    pub fn spawn(out: Sender<Message>) -> TestRuns {
        let (queue, incoming) = crossbeam_channel::unbounded();
        let latest = Arc::new(AtomicU64::new(0));
        let newest = latest.clone();
        std::thread::spawn(move || run(incoming, out, newest));
        TestRuns { queue, latest }
    }
}

fn run(incoming: Receiver<Arc<Snapshot>>, out: Sender<Message>, latest: Arc<AtomicU64>) {
    yield_to_diagnostics();
    let mut published: BTreeSet<PathBuf> = BTreeSet::new();
    while let Ok(mut snapshot) = incoming.recv() {
        while let Ok(newer) = incoming.try_recv() {
            snapshot = newer;
        }
        let found = diagnostics(&snapshot);
        if latest.load(Ordering::SeqCst) != snapshot.generation {
            continue;
        }
        let now: BTreeSet<PathBuf> = found.keys().cloned().collect();
        let cleared: Vec<PathBuf> = published.difference(&now).cloned().collect();
        let all = found
            .into_iter()
            .chain(cleared.into_iter().map(|p| (p, Vec::new())));
        for (path, diagnostics) in all {
            if let Some(message) = super::publish::publish(&path, diagnostics, None) {
                if out.send(message).is_err() {
                    return;
                }
            }
        }
        published = now;
    }
}
