//! The C heap set up for a command that runs once and exits (`compose`, `render`,
//! `test`, …), not for the language server or `--watch`, which run for hours.
//!
//! glibc's malloc gives each thread that allocates an arena of its own and grows it a
//! page at a time, with one `mprotect` call per 4 KiB; every call takes the process's
//! memory map lock, which the page faults of the other threads wait on. A 10 000-facet
//! composition made 33 000 of those calls, most of them on the threads that parse and
//! collect. Set up for one run:
//!
//! * [`for_one_run`] fixes the size from which allocations get a mapping of their own
//!   (glibc otherwise raises it as large blocks are freed), keeps freed memory instead
//!   of giving it back to the system (the process is about to exit) and grows the main
//!   heap 16 MiB at a time instead of a page at a time;
//! * [`worker_started`], called first thing on every worker thread, makes the thread's
//!   arena reserve room once: one block as large as an arena may serve, allocated and
//!   freed at once. The arena keeps the room, so what the thread allocates next needs
//!   no more `mprotect` until it has used it. Nothing is touched, so this costs
//!   address space, not memory; where the system refuses the block (a strict
//!   overcommit limit), `malloc` returns null and the worker goes on as before;
//! * [`give_back`], called where a stage has just freed much that the next stages
//!   will not reuse (it sits in the arenas of threads that have finished), hands the
//!   free pages back to the system: the heap keeps what it frees, so without it the
//!   process's peak would be what the stages held plus what they left behind.
//!
//! Elsewhere (other C libraries, other systems) they do nothing.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`for_one_run`] was called: only then do workers reserve room and stages
/// give pages back.
static ONE_RUN: AtomicBool = AtomicBool::new(false);

/// Blocks up to this size come from the arenas (glibc's largest fixed setting).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// What a worker's arena reserves: just under [`MMAP_THRESHOLD`], so it is served by
/// the arena itself and not mapped on its own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const WORKER_RESERVE: usize = (32 << 20) - (1 << 20);

/// Sets the heap up for a run that ends when its command does. Call before any
/// worker thread starts.
pub fn for_one_run() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes malloc's parameters; called before other threads
    // exist, and a refused setting leaves the default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
    ONE_RUN.store(true, Ordering::Relaxed);
}

/// Called first on a worker thread: after [`for_one_run`], reserves room in the
/// thread's arena (see the module's comment).
pub fn worker_started() {
    if !ONE_RUN.load(Ordering::Relaxed) {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a block from `malloc` handed straight back to `free`; `black_box` keeps
    // the compiler from removing the pair, whose effect is on the arena.
    unsafe {
        let block = std::hint::black_box(libc::malloc(WORKER_RESERVE));
        libc::free(block);
    }
}

/// After [`for_one_run`], hands the pages no arena uses back to the system (see the
/// module's comment); the arenas keep their address space, so a later allocation
/// there costs a page fault, not a system call. Walks every arena's free lists: call
/// it after a stage of a large composition, not per item.
pub fn give_back() {
    if !ONE_RUN.load(Ordering::Relaxed) {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free memory of malloc's own arenas to the
    // system; it takes each arena's lock, so other threads may allocate meanwhile.
    unsafe {
        libc::malloc_trim(0);
    }
}
