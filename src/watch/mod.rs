//! Watch mode: run a job (compose, render, test) once, then again after every burst of
//! changes to its inputs, until stopped. Each round loads everything anew and writes
//! only if all of it succeeds, so a failed round leaves the previous output in place;
//! the round's outcome goes to the caller as an [`Event`], which is how the command
//! line prints and how tests wait.

pub(crate) mod changes;
pub(crate) mod inputs;

pub use inputs::Inputs;

use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How a round ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The output was written (or the tests ran): a one-line summary, and warnings
    /// and notes as text (often empty).
    Done { summary: String, report: String },
    /// Nothing was written; the errors as text, each with file:line:col.
    Failed { report: String },
}

/// One round of a job: how it ended and what to watch from now on.
pub struct Round {
    pub outcome: Outcome,
    pub inputs: Inputs,
}

/// What watch mode runs.
pub trait Job {
    /// Loads everything anew and writes the output only if all of it succeeds.
    fn round(&mut self) -> Round;

    /// What changed since the last round, told before the next one: every path the
    /// watcher named (inputs or not), or `unknown` when it cannot say (it overflowed
    /// or failed, or paths were not watched yet while the last round read them).
    fn changes(&mut self, _paths: &[PathBuf], _unknown: bool) {}
}

/// What the watcher tells its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A round ran: its number (1 on start), the changed inputs that started it, and
    /// how it ended. Sent once the inputs it found are watched.
    Round {
        number: usize,
        changed: Vec<PathBuf>,
        outcome: Outcome,
    },
    /// A path could not be watched, or the file watcher failed; watching goes on.
    Trouble(String),
}

enum Signal {
    Changed(Vec<PathBuf>),
    /// The watcher lost events (its queue overflowed): anything may have changed.
    Rescan,
    Failed(String),
    /// Only tests stop a watch; `bpc --watch` runs until it is interrupted.
    #[cfg(test)]
    Stop,
}

/// Stops a running [`watch`] from another thread.
#[cfg(test)]
#[derive(Clone)]
pub struct Stopper(Sender<Signal>);

#[cfg(test)]
impl Stopper {
    pub fn stop(&self) {
        // A watch that has already ended has nothing to stop.
        let _ = self.0.send(Signal::Stop);
    }
}

/// The receiving end of a watch's changes and its stop signal.
pub struct Signals {
    sender: Sender<Signal>,
    receiver: Receiver<Signal>,
}

/// The signals [`watch`] listens to.
pub fn signals() -> Signals {
    let (sender, receiver) = channel();
    Signals { sender, receiver }
}

#[cfg(test)]
impl Signals {
    /// A handle that stops the watch these signals are given to.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.sender.clone())
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Changes closer together than this are one burst, one round (an editor's save
    /// is several events).
    pub debounce: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            debounce: Duration::from_millis(200),
        }
    }
}

/// Runs `job` once, then after each debounced burst of changes to its inputs, until
/// the process is interrupted (or, in tests, a `Stopper` is used). Fails only when the file watcher cannot be started.
pub fn watch(
    job: &mut dyn Job,
    settings: Settings,
    signals: Signals,
    mut on_event: impl FnMut(Event),
) -> Result<(), String> {
    let sender = signals.sender.clone();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        let signal = match result {
            // Opening and reading a file is no change, and every round reads its
            // inputs: counting those would start the next round, forever.
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
            Ok(event) if event.need_rescan() => Signal::Rescan,
            Ok(event) => Signal::Changed(event.paths),
            Err(e) => Signal::Failed(e.to_string()),
        };
        // The receiver is gone only once watch has returned.
        let _ = sender.send(signal);
    })
    .map_err(|e| format!("cannot start watching files: {e}"))?;
    let mut watched: Vec<(PathBuf, RecursiveMode)> = Vec::new();
    let mut changed = Vec::new();
    let mut told = Told::default();
    for number in 1.. {
        if number > 1 {
            job.changes(&told.paths, told.unknown);
        }
        told = Told::default();
        let round = job.round();
        // A change between the round's reads and this registration would be missed;
        // the first round's inputs are only known once it has run, and later rounds
        // only add paths (new local sources) to what is already watched.
        let wanted = watch_list(&round.inputs);
        // What the round read under paths not watched yet may have changed unseen.
        told.unknown = wanted.iter().any(|w| !watched.contains(w));
        for trouble in update(&mut watcher, &mut watched, wanted) {
            on_event(Event::Trouble(trouble));
        }
        on_event(Event::Round {
            number,
            changed: std::mem::take(&mut changed),
            outcome: round.outcome,
        });
        match next_change(
            &signals.receiver,
            &round.inputs,
            settings.debounce,
            &mut told,
            &mut on_event,
        ) {
            Some(paths) => changed = paths,
            None => break,
        }
    }
    Ok(())
}

/// Every change the watcher reported since a round started, for the job.
#[derive(Default)]
struct Told {
    paths: Vec<PathBuf>,
    unknown: bool,
}

/// Waits for a burst of changes that concern `inputs`: the first one, then more until
/// `quiet` passes without any. The changed paths sorted, without repeats; `None` when
/// stopped. Every path reported on the way, input or not, goes into `told`.
fn next_change(
    receiver: &Receiver<Signal>,
    inputs: &Inputs,
    quiet: Duration,
    told: &mut Told,
    on_event: &mut impl FnMut(Event),
) -> Option<Vec<PathBuf>> {
    let mut relevant: Vec<PathBuf> = Vec::new();
    loop {
        let signal = if relevant.is_empty() {
            receiver.recv().ok()?
        } else {
            match receiver.recv_timeout(quiet) {
                Ok(signal) => signal,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        };
        match signal {
            Signal::Changed(paths) => {
                relevant.extend(paths.iter().filter(|p| inputs.covers(p)).cloned());
                told.paths.extend(paths);
            }
            Signal::Rescan => {
                told.unknown = true;
                // Which inputs changed is not known: the round names none.
                if relevant.is_empty() {
                    relevant.extend(inputs.dirs.first().cloned());
                }
            }
            Signal::Failed(message) => {
                told.unknown = true;
                on_event(Event::Trouble(message));
            }
            #[cfg(test)]
            Signal::Stop => return None,
        }
    }
    relevant.sort();
    relevant.dedup();
    told.paths.sort();
    told.paths.dedup();
    Some(relevant)
}

/// What to hand the file watcher for `inputs`: directories recursively, single files
/// through their directory; a path that does not exist yet through its nearest
/// existing ancestor, so its creation is seen.
fn watch_list(inputs: &Inputs) -> Vec<(PathBuf, RecursiveMode)> {
    let nearest = |path: &Path| path.ancestors().find(|p| p.is_dir()).map(Path::to_path_buf);
    let mut list: Vec<(PathBuf, RecursiveMode)> = Vec::new();
    for dir in &inputs.dirs {
        if dir.is_dir() {
            list.push((dir.clone(), RecursiveMode::Recursive));
        } else if let Some(existing) = nearest(dir) {
            list.push((existing, RecursiveMode::NonRecursive));
        }
    }
    for file in &inputs.files {
        if let Some(existing) = file.parent().and_then(nearest) {
            list.push((existing, RecursiveMode::NonRecursive));
        }
    }
    // A directory watched recursively needs no other watch below it.
    let recursive: Vec<PathBuf> = list
        .iter()
        .filter(|(_, mode)| *mode == RecursiveMode::Recursive)
        .map(|(p, _)| p.clone())
        .collect();
    list.retain(|(path, mode)| {
        *mode == RecursiveMode::Recursive || !recursive.iter().any(|r| path.starts_with(r))
    });
    list.sort_by(|a, b| a.0.cmp(&b.0));
    list.dedup_by(|a, b| a.0 == b.0);
    list
}

/// Brings the watcher from `watched` to `wanted`; what failed, as messages.
fn update(
    watcher: &mut dyn Watcher,
    watched: &mut Vec<(PathBuf, RecursiveMode)>,
    wanted: Vec<(PathBuf, RecursiveMode)>,
) -> Vec<String> {
    let mut troubles = Vec::new();
    for old in watched.iter().filter(|w| !wanted.contains(w)) {
        // Gone already when its directory was removed.
        let _ = watcher.unwatch(&old.0);
    }
    for new in wanted.iter().filter(|w| !watched.contains(w)) {
        if let Err(e) = watcher.watch(&new.0, new.1) {
            troubles.push(format!("cannot watch {}: {e}", new.0.display()));
        }
    }
    *watched = wanted;
    troubles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_changes_is_one_round_and_stop_ends_the_wait() {
        let signals = signals();
        let stopper = signals.stopper();
        let inputs = Inputs {
            dirs: vec![PathBuf::from("/p/t")],
            ..Inputs::default()
        };
        for path in ["/p/t/b.yaml", "/elsewhere/x", "/p/t/a.yaml", "/p/t/b.yaml"] {
            let _ = signals
                .sender
                .send(Signal::Changed(vec![PathBuf::from(path)]));
        }
        let mut events = Vec::new();
        let mut told = Told::default();
        let changed = next_change(
            &signals.receiver,
            &inputs,
            Duration::from_millis(1),
            &mut told,
            &mut |e| events.push(e),
        );
        assert_eq!(
            changed,
            Some(vec![
                PathBuf::from("/p/t/a.yaml"),
                PathBuf::from("/p/t/b.yaml")
            ])
        );
        let _ = signals
            .sender
            .send(Signal::Changed(vec![PathBuf::from("/elsewhere/y")]));
        stopper.stop();
        // Every path the watcher named is told to the job, inputs or not.
        assert_eq!(told.paths.len(), 3);
        assert!(!told.unknown);
        let stopped = next_change(
            &signals.receiver,
            &inputs,
            Duration::from_millis(1),
            &mut told,
            &mut |e| events.push(e),
        );
        assert_eq!(stopped, None);
        assert!(events.is_empty());
    }
}
