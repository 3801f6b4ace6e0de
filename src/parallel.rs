//! One way to spread independent work over threads: test cases, contexts. Items are
//! claimed one at a time from a shared counter (so a slow item does not hold up a
//! fixed share of the rest) and results come back in the items' order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on up to `threads` threads, the calling thread one of
/// them; results in item order. A panic in `f` is passed on to the caller once every
/// thread has stopped.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, items.len().max(1));
    let claim = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut indexed: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers)
            .map(|_| {
                s.spawn(|| {
                    crate::heap::worker_started();
                    claim()
                })
            })
            .collect();
        let mut all = Vec::with_capacity(items.len());
        all.extend(claim());
        for handle in handles {
            match handle.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    indexed.sort_unstable_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, r)| r).collect()
}

/// `len` items cut into `threads` runs of (nearly) equal length, in order: the
/// index ranges, for [`each`].
pub fn even_runs(len: usize, threads: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let threads = threads.max(1);
    (0..threads).map(move |k| len * k / threads..len * (k + 1) / threads)
}

/// `f` applied to each of `parts`, the first on the calling thread and every other on
/// a thread of its own; results in the parts' order. For work already cut into a few
/// large pieces that `f` consumes. A panic in `f` is passed on once every thread has
/// stopped.
pub fn each<T: Send, R: Send>(parts: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Vec::new();
    };
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .map(|part| {
                s.spawn(move || {
                    crate::heap::worker_started();
                    f(part)
                })
            })
            .collect();
        let mut results = Vec::with_capacity(handles.len() + 1);
        results.push(f(first));
        for handle in handles {
            match handle.join() {
                Ok(r) => results.push(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results
    })
}

/// `f` applied to every item in place, the items cut into up to `threads` runs, each
/// on a thread of its own (the first on the calling thread).
pub fn for_each_mut<T: Send>(items: &mut [T], threads: usize, f: impl Fn(&mut T) + Sync) {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        items.iter_mut().for_each(f);
        return;
    }
    let runs: Vec<&mut [T]> = items.chunks_mut(items.len().div_ceil(threads)).collect();
    each(runs, |run| run.iter_mut().for_each(&f));
}

/// How many threads to use: one per core (two if that cannot be read).
/// Items of a list below which writing or measuring them on several threads costs more
/// than it saves (a blueprint's long component lists).
pub const ITEMS_PER_THREAD: usize = 512;

/// Asked once per process: the answer reads cgroup files, which costs more than the
/// small compositions that ask it several times over.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_keep_item_order_on_any_thread_count() {
        let items: Vec<u32> = (0..100).collect();
        for threads in [0, 1, 3, 200] {
            let doubled = super::map(&items, threads, |n| n * 2);
            assert_eq!(doubled, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        }
        assert!(super::map(&[] as &[u32], 4, |n| *n).is_empty());
    }

    #[test]
    fn the_calling_thread_is_one_of_the_threads() {
        // Its heap is where the rest of the run allocates: work done there leaves no
        // freed memory in another thread's heap (and one thread starts no other).
        let caller = std::thread::current().id();
        let items: Vec<u32> = (0..100).collect();
        let on = super::map(&items, 1, |_| std::thread::current().id());
        assert!(on.iter().all(|&id| id == caller));
        // On two threads, both take items: the first item waits (up to ten seconds)
        // for the second, which only the other thread can then take.
        let entered = AtomicUsize::new(0);
        let first_waits = |_: &u32| {
            if entered.fetch_add(1, Ordering::SeqCst) == 0 {
                let start = std::time::Instant::now();
                while entered.load(Ordering::SeqCst) < 2 && start.elapsed().as_secs() < 10 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            std::thread::current().id()
        };
        let on = super::map(&items, 2, first_waits);
        assert!(on.contains(&caller));
        assert!(on.iter().any(|&id| id != caller));
    }

    #[test]
    fn every_item_is_changed_once_on_any_thread_count() {
        for threads in [0, 1, 2, 3, 150] {
            let mut items: Vec<u32> = (0..100).collect();
            super::for_each_mut(&mut items, threads, |n| *n *= 3);
            assert_eq!(items, (0..100).map(|n| n * 3).collect::<Vec<_>>());
        }
    }

    #[test]
    fn each_part_is_consumed_once_and_results_keep_the_parts_order() {
        let parts: Vec<Vec<u32>> = (0..5).map(|k| (k * 10..k * 10 + 3).collect()).collect();
        let sums = super::each(parts, |part| part.into_iter().sum::<u32>());
        assert_eq!(sums, vec![3, 33, 63, 93, 123]);
        assert!(super::each(Vec::<u32>::new(), |n| n).is_empty());
    }
}
