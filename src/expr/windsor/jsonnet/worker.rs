//! Evaluations in worker processes: copies of the running executable started with
//! the hidden command `jsonnet-worker` ([`serve`]), which evaluate one file at a time
//! for as long as their parent keeps them.
//!
//! A worker meters what its evaluation allocates and exits at once with
//! [`OVER_BUDGET`] when the memory budget is spent; past the deadline the parent kills
//! it. Either way the system takes back everything the evaluation held, so a process
//! that runs for hours (the language server, `--watch`) stays as small after a
//! thousand runaway evaluations as after none. Idle workers are kept for the next
//! evaluation (starting one costs a few milliseconds), at most [`IDLE_KEPT`] of them,
//! and one that grew large is not kept. A worker whose parent goes away reads the end
//! of its input and exits.

use super::wire::{self, FromWorker, ToWorker};
use super::{evaluate as evaluate_job, over_memory, over_time, Job, THREAD_STACK};
use crate::alloc::{Meter, OnStop};
use crate::expr::host::{Host, JsonnetLimits};
use std::io::{self, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Instant;

/// The hidden command that makes the executable a worker.
pub const COMMAND: &str = "jsonnet-worker";

/// The status a worker exits with when its evaluation spent the memory budget.
const OVER_BUDGET: i32 = 86;

/// Idle workers kept for later evaluations.
const IDLE_KEPT: usize = 4;

/// A worker whose evaluation held more than this at once is not kept: its heap may
/// keep the pages.
const KEPT_PEAK: u64 = 64 * 1024 * 1024;

static EXECUTABLE: OnceLock<PathBuf> = OnceLock::new();
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Makes every later `jsonnet()` of this process run in workers started from
/// `executable`, which must answer [`COMMAND`] with [`serve`].
pub fn run_in_processes(executable: PathBuf) {
    let _ = EXECUTABLE.set(executable);
}

/// The executable to start workers from, once [`run_in_processes`] named one.
pub(super) fn executable() -> Option<&'static Path> {
    EXECUTABLE.get().map(PathBuf::as_path)
}

/// A started worker: its process, the pipe to it, and the frames it sent (read by a
/// thread of their own, so the parent can wait with a deadline).
struct Worker {
    process: Child,
    to: BufWriter<ChildStdin>,
    from: mpsc::Receiver<io::Result<FromWorker>>,
}

impl Worker {
    fn start(executable: &Path) -> Result<Worker, String> {
        let mut process = Command::new(executable)
            .arg(COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the jsonnet evaluator ({} {COMMAND}): {e}",
                    executable.display()
                )
            })?;
        let (Some(to), Some(out)) = (process.stdin.take(), process.stdout.take()) else {
            let _ = process.kill();
            let _ = process.wait();
            return Err("cannot talk to the jsonnet evaluator".to_string());
        };
        let (sender, from) = mpsc::channel();
        let reader = std::thread::Builder::new()
            .name("jsonnet-reader".into())
            .spawn(move || {
                let mut out = BufReader::new(out);
                loop {
                    match wire::receive_from_worker(&mut out) {
                        Ok(Some(message)) => {
                            if sender.send(Ok(message)).is_err() {
                                return;
                            }
                        }
                        Ok(None) => return,
                        Err(e) => {
                            let _ = sender.send(Err(e));
                            return;
                        }
                    }
                }
            });
        if let Err(e) = reader {
            let _ = process.kill();
            let _ = process.wait();
            return Err(format!("cannot start the jsonnet evaluator: {e}"));
        }
        Ok(Worker {
            process,
            to: BufWriter::new(to),
            from,
        })
    }

    fn send(&mut self, message: &ToWorker) -> io::Result<()> {
        wire::send_to_worker(&mut self.to, message)
    }

    /// Kills the process (if it still runs) and reaps it: how it ended.
    fn end(mut self) -> Option<std::process::ExitStatus> {
        let _ = self.process.kill();
        self.process.wait().ok()
    }
}

fn idle_worker() -> Option<Worker> {
    IDLE.lock().ok().and_then(|mut idle| idle.pop())
}

fn keep(worker: Worker) {
    let refused = match IDLE.lock() {
        Ok(mut idle) if idle.len() < IDLE_KEPT => {
            idle.push(worker);
            None
        }
        _ => Some(worker),
    };
    if let Some(worker) = refused {
        worker.end();
    }
}

/// A worker that took `request`: an idle one, else (none idle, or the idle one went
/// away meanwhile) a fresh one.
fn send_to_a_worker(executable: &Path, request: &ToWorker) -> Result<Worker, String> {
    if let Some(mut idle) = idle_worker() {
        if idle.send(request).is_ok() {
            return Ok(idle);
        }
        idle.end();
    }
    let mut fresh = Worker::start(executable)?;
    match fresh.send(request) {
        Ok(()) => Ok(fresh),
        Err(e) => {
            fresh.end();
            Err(format!("cannot talk to the jsonnet evaluator: {e}"))
        }
    }
}

/// Evaluates `job` in a worker, answering its imports through `host`.
pub(super) fn evaluate(
    executable: &Path,
    host: &dyn Host,
    job: Job,
    limits: JsonnetLimits,
) -> Result<String, String> {
    let request = ToWorker::Evaluate {
        memory: limits.memory as u64,
        name: job.name,
        source: job.source,
        context: job.context,
    };
    let mut worker = send_to_a_worker(executable, &request)?;
    let deadline = Instant::now() + limits.timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = match worker.from.recv_timeout(left) {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                worker.end();
                return Err(over_time(&limits));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(match worker.end().and_then(|s| s.code()) {
                    Some(OVER_BUDGET) => over_memory(&limits),
                    _ => "the jsonnet evaluator stopped unexpectedly".to_string(),
                });
            }
        };
        match message {
            Ok(FromWorker::Import { from, path }) => {
                let answer = ToWorker::Imported(host.read_relative(&from, &path));
                if let Err(e) = worker.send(&answer) {
                    worker.end();
                    return Err(format!("cannot talk to the jsonnet evaluator: {e}"));
                }
            }
            Ok(FromWorker::Done { result, peak }) => {
                if peak <= KEPT_PEAK {
                    keep(worker);
                } else {
                    worker.end();
                }
                return result;
            }
            Err(e) => {
                worker.end();
                return Err(format!("the jsonnet evaluator answered wrongly: {e}"));
            }
        }
    }
}

/// The worker's side: evaluates what the parent sends on stdin, one file at a time,
/// until stdin ends. Its answers go to stdout; nothing else is written there.
pub fn serve() -> ExitCode {
    let served = std::thread::Builder::new()
        .name("jsonnet".into())
        .stack_size(THREAD_STACK)
        .spawn(serve_on_this_thread)
        .map_err(|e| e.to_string())
        .and_then(|thread| thread.join().map_err(|_| "panicked".to_string()));
    match served {
        Ok(Ok(())) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

fn serve_on_this_thread() -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    while let Some(message) = wire::receive_in_worker(&mut input)? {
        let ToWorker::Evaluate {
            memory,
            name,
            source,
            context,
        } = message
        else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an import answer came with no import asked",
            ));
        };
        let job = Job {
            name,
            source,
            context,
        };
        let limit = usize::try_from(memory).unwrap_or(usize::MAX);
        let meter = Meter::with_stop(limit, OnStop::ExitProcess(OVER_BUDGET));
        let mut import = |from: &str, path: &str| ask_parent(&mut input, &mut output, from, path);
        let result = {
            let _attached = crate::alloc::attach(&meter);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                evaluate_job(&mut import, &job)
            }))
            .unwrap_or_else(|_| Err("the jsonnet evaluator failed internally".to_string()))
        };
        let done = FromWorker::Done {
            result,
            peak: meter.peak() as u64,
        };
        wire::send_from_worker(&mut output, &done)?;
    }
    Ok(())
}

fn ask_parent(
    input: &mut impl io::Read,
    output: &mut impl io::Write,
    from: &str,
    path: &str,
) -> Result<(String, Vec<u8>), String> {
    let asked = FromWorker::Import {
        from: from.to_string(),
        path: path.to_string(),
    };
    wire::send_from_worker(output, &asked).map_err(|e| e.to_string())?;
    match wire::receive_in_worker(input) {
        Ok(Some(ToWorker::Imported(answer))) => answer,
        Ok(_) => Err("the parent answered an import wrongly".to_string()),
        Err(e) => Err(e.to_string()),
    }
}
