//! Evaluations on a thread of the calling process, for a process that cannot start a
//! worker of its own (the library linked into another program). The thread is
//! metered (`crate::alloc`); past the deadline or the memory budget it is stopped at
//! its next allocation and abandoned, holding what it allocated until the process
//! exits. The host stays on the calling thread: imports are asked over a channel.

use super::{evaluate, over_memory, over_time, Job, THREAD_STACK};
use crate::alloc::Meter;
use crate::expr::host::{Host, JsonnetLimits};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How often the caller checks the meter while it waits.
const POLL: Duration = Duration::from_millis(20);

/// What the evaluation thread asks of the calling thread.
enum Message {
    /// Read `path` relative to `from` through the host.
    Import {
        from: String,
        path: String,
        reply: mpsc::Sender<Result<(String, Vec<u8>), String>>,
    },
    Done(Result<String, String>),
}

pub(super) fn evaluate_on_thread(
    host: &dyn Host,
    job: Job,
    limits: JsonnetLimits,
) -> Result<String, String> {
    let meter = Arc::new(Meter::new(limits.memory));
    let (tx, rx) = mpsc::channel::<Message>();
    let worker_meter = Arc::clone(&meter);
    std::thread::Builder::new()
        .name("jsonnet".into())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let attached = crate::alloc::attach(&worker_meter);
            let mut import = |from: &str, path: &str| {
                let (reply, answer) = mpsc::channel();
                let asked = tx.send(Message::Import {
                    from: from.to_string(),
                    path: path.to_string(),
                    reply,
                });
                match asked.ok().and_then(|_| answer.recv().ok()) {
                    Some(result) => result,
                    None => Err("the evaluation was abandoned".to_string()),
                }
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                evaluate(&mut import, &job)
            }))
            .unwrap_or_else(|_| Err("the jsonnet evaluator failed internally".to_string()));
            drop(attached);
            let _ = tx.send(Message::Done(result));
        })
        .map_err(|e| format!("cannot start the jsonnet evaluator: {e}"))?;
    let deadline = Instant::now() + limits.timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            meter.stop();
            return Err(over_time(&limits));
        }
        match rx.recv_timeout(left.min(POLL)) {
            Ok(Message::Import { from, path, reply }) => {
                let _ = reply.send(host.read_relative(&from, &path));
            }
            Ok(Message::Done(result)) => return result,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the jsonnet evaluator failed internally".to_string())
            }
        }
        if meter.over_budget() {
            return Err(over_memory(&limits));
        }
    }
}
