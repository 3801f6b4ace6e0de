//! The process allocator, with a meter for work that bpc cannot interrupt otherwise.
//!
//! The Jsonnet library evaluates to completion with no hook for a deadline or a memory
//! cap. Its evaluation therefore runs on a thread with a [`Meter`]: every allocation
//! on that thread is counted, and once the meter is stopped (budget spent, or the
//! caller's deadline passed) the thread never gets its next allocation. What happens
//! instead is the meter's [`OnStop`]: in a worker process made for the evaluation, the
//! process exits at once and the system takes back all it held; on a thread of the
//! calling process, the thread sleeps forever and holds at most the budget until the
//! process exits. Threads without a meter pay one thread-local read per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What a stopped meter does to its thread at the thread's next allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnStop {
    /// The thread sleeps forever (its memory is lost until the process exits).
    Park,
    /// The whole process exits at once with this status, without running any
    /// destructor or exit handler (they could allocate).
    ExitProcess(i32),
}

/// Allocation accounting for one thread.
#[derive(Debug)]
pub struct Meter {
    used: AtomicUsize,
    peak: AtomicUsize,
    limit: usize,
    stop: AtomicBool,
    over_budget: AtomicBool,
    on_stop: OnStop,
}

impl Meter {
    /// A meter whose stopped thread is parked.
    pub fn new(limit: usize) -> Meter {
        Meter::with_stop(limit, OnStop::Park)
    }

    pub(crate) fn with_stop(limit: usize, on_stop: OnStop) -> Meter {
        Meter {
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            limit,
            stop: AtomicBool::new(false),
            over_budget: AtomicBool::new(false),
            on_stop,
        }
    }

    /// Stops the metered thread at its next allocation.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Whether the thread allocated past its limit (and was stopped for it).
    pub fn over_budget(&self) -> bool {
        self.over_budget.load(Ordering::SeqCst)
    }

    /// Largest number of live bytes the thread held.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    fn grow(&self, n: usize) {
        let used = self.used.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        self.peak.fetch_max(used, Ordering::Relaxed);
        if used > self.limit {
            self.over_budget.store(true, Ordering::SeqCst);
            self.stop.store(true, Ordering::SeqCst);
        }
        if self.stop.load(Ordering::Relaxed) {
            match self.on_stop {
                OnStop::ExitProcess(status) => exit_now(status),
                // Never returns: sleeping allocates nothing and holds no lock.
                OnStop::Park => loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                },
            }
        }
    }

    fn shrink(&self, n: usize) {
        // Memory allocated before the meter was attached may be freed under it.
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(n))
            });
    }
}

/// Ends the process from inside the allocator: nothing that could allocate runs.
fn exit_now(status: i32) -> ! {
    #[cfg(unix)]
    // SAFETY: `_exit` takes no locks and runs no handlers; it cannot fail.
    unsafe {
        libc::_exit(status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        std::process::abort()
    }
}

thread_local! {
    static METER: Cell<*const Meter> = const { Cell::new(std::ptr::null()) };
}

/// Meters the current thread with `meter` until the guard is dropped. The meter must
/// outlive the guard (it is an `Arc` held by the caller in practice).
pub fn attach(meter: &Meter) -> Attached {
    METER.with(|m| m.set(meter as *const Meter));
    Attached(())
}

pub struct Attached(());

impl Drop for Attached {
    fn drop(&mut self) {
        METER.with(|m| m.set(std::ptr::null()));
    }
}

fn current() -> Option<&'static Meter> {
    // `try_with`: allocations during thread teardown see no meter.
    let ptr = METER.try_with(|m| m.get()).unwrap_or(std::ptr::null());
    // SAFETY: `attach` stores a pointer to a meter that outlives the guard, and the
    // guard clears it before the meter can go away.
    unsafe { ptr.as_ref() }
}

/// The system allocator plus the per-thread meter above.
struct Metered;

// SAFETY: every call is forwarded to `System`; the meter only counts, or parks the
// calling thread before it allocates.
unsafe impl GlobalAlloc for Metered {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(m) = current() {
            m.grow(layout.size());
        }
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if let Some(m) = current() {
            m.grow(layout.size());
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(m) = current() {
            m.shrink(layout.size());
        }
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if let Some(m) = current() {
            if new_size > layout.size() {
                m.grow(new_size - layout.size());
            } else {
                m.shrink(layout.size() - new_size);
            }
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Metered = Metered;

/// Why [`run_metered`] gave up on its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The job held more than its memory budget at once.
    OverMemory,
    /// The job was still running at its deadline.
    OverTime,
    /// The job panicked.
    Failed,
}

/// Runs `job` on a thread of its own, metered with a budget of `memory` bytes, and
/// waits for it until `deadline`. A job past either budget is stopped at its next
/// allocation and abandoned: its thread sleeps holding at most the budget until the
/// process exits, and the caller gets [`Stopped`] at once. For work that checks no
/// budget of its own, or whose own checks cannot see everything it allocates. A job
/// that panics reports the panic on its own thread: budgets of a few MiB can be spent
/// by the report itself.
pub(crate) fn run_metered<T: Send + 'static>(
    name: &str,
    memory: usize,
    deadline: std::time::Instant,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    use std::sync::{mpsc, Arc};
    /// How often the caller looks at the meter while it waits.
    const POLL: std::time::Duration = std::time::Duration::from_millis(20);
    let meter = Arc::new(Meter::new(memory));
    let (tx, rx) = mpsc::channel();
    let worker_meter = Arc::clone(&meter);
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let attached = attach(&worker_meter);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            drop(attached);
            let _ = tx.send(result);
        })
        .map_err(|_| Stopped::Failed)?;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            meter.stop();
            return Err(Stopped::OverTime);
        }
        match rx.recv_timeout(left.min(POLL)) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(if meter.over_budget() {
                    Stopped::OverMemory
                } else {
                    Stopped::Failed
                })
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if meter.over_budget() {
            return Err(Stopped::OverMemory);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{run_metered, Stopped};
    use std::time::{Duration, Instant};

    #[test]
    fn a_metered_job_returns_or_stops_at_its_budgets() {
        let soon = || Instant::now() + Duration::from_secs(30);
        assert_eq!(run_metered("sum", 1 << 20, soon(), || 2 + 2), Ok(4));
        // Holds 64 MiB against a budget of 1 MiB: stopped at that allocation.
        let hungry = run_metered("hungry", 1 << 20, soon(), || vec![0u8; 64 << 20].len());
        assert_eq!(hungry, Err(Stopped::OverMemory));
        // Sleeps past its deadline: the caller stops waiting then.
        let started = Instant::now();
        let slow = run_metered(
            "slow",
            1 << 20,
            Instant::now() + Duration::from_millis(100),
            || std::thread::sleep(Duration::from_secs(5)),
        );
        assert_eq!(slow, Err(Stopped::OverTime));
        assert!(started.elapsed() < Duration::from_secs(4));
        // A panic's message and backtrace are made on the job's thread: the budget
        // must leave room for them (a thread stopped while it holds the panic lock
        // would block every later panic of the process).
        assert_eq!(
            run_metered("panics", 256 << 20, soon(), || -> u8 { panic!("no") }),
            Err(Stopped::Failed)
        );
    }
}
