//! One way to spread independent work over threads: test cases, contexts. Items are
//! claimed one at a time from a shared counter (so a slow item does not hold up a
//! fixed share of the rest) and results come back in the items' order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on up to `threads` scoped threads; results in item order.
/// A panic in `f` is passed on to the caller once every thread has stopped.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, items.len().max(1));
    let mut indexed: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        let mut all = Vec::with_capacity(items.len());
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

/// How many threads to use: one per core (two if that cannot be read).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_item_order_on_any_thread_count() {
        let items: Vec<u32> = (0..100).collect();
        for threads in [0, 1, 3, 200] {
            let doubled = super::map(&items, threads, |n| n * 2);
            assert_eq!(doubled, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        }
        assert!(super::map(&[] as &[u32], 4, |n| *n).is_empty());
    }
}
