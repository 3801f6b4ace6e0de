//! The facets of a large template collected on several threads.
//!
//! Given the scope, collecting one facet does not depend on collecting another: the
//! resolver only caches what lookups find. So facets are collected at once from both
//! ends of the list: the calling thread takes runs from the front, with the
//! composition's own resolver and origin table, and every other thread takes runs
//! from the back, with a [`Resolver::fresh`] one and an origin table per run. Claims
//! meet wherever the threads' speeds make them meet (the calling thread is often the
//! slower: its heap is the one still growing). The back runs are then put after the
//! front ones in facet order, their origins appended and renumbered: contributions,
//! exclusions and origins come out as collecting one facet after another gives them,
//! in the same order.
//!
//! What is reported must not depend on the threads either. A back run that found an
//! error, or runs that together pass the output budget, are thrown away and their
//! facets collected again after the front, one after another: the errors, and where
//! the budget was crossed, are then the serial collection's own.

use super::{collect_facets, Step};
use crate::compose::config::Resolver;
use crate::compose::model::activation::Activated;
use crate::compose::model::origin::{OriginId, Origins};
use crate::template::{Template, TemplateId};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Facets per thread below which a thread costs more than it saves (a facet takes a
/// few microseconds to collect, a thread tens to start).
const FACETS_PER_THREAD: usize = 256;

/// Facets per claim: small enough for the claims to meet close to where the threads'
/// speeds say, large enough that a run's origin table and step cost little.
pub(super) const FACETS_PER_CLAIM: usize = 64;

/// The threads for collecting `n` facets: one per core, as long as each has enough.
pub(super) fn threads_for(n: usize) -> usize {
    crate::parallel::cores().min(n / FACETS_PER_THREAD)
}

/// Every facet's step of [`super::collect`] added to `steps`, what was collected
/// before them; the same as [`collect_facets`] over all of them.
pub fn facets(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    origins: &mut Origins,
    steps: Step,
) -> Step {
    let spread = Spread {
        threads: threads_for(template.facets.len()),
        claim: FACETS_PER_CLAIM,
    };
    facets_on(spread, id, template, resolver, activated, origins, steps)
}

/// What a thread collected from the back: one run of facets, its own origins.
struct BackRun {
    step: Step,
    origins: Origins,
}

/// How a collection spreads over threads.
#[derive(Clone, Copy)]
struct Spread {
    threads: usize,
    /// Facets a thread claims at a time.
    claim: usize,
}

/// [`facets`] spread as `spread` says.
fn facets_on(
    Spread { threads, claim }: Spread,
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    origins: &mut Origins,
    mut steps: Step,
) -> Step {
    let n = template.facets.len();
    // Both ends of the facets left fit in one word only below 2^32 facets.
    if threads < 2 || n < 2 || u32::try_from(n).is_err() {
        return collect_facets(id, template, resolver, activated, 0..n, origins, steps);
    }
    let workers = (1..threads).map(|_| resolver.fresh()).collect();
    let texts = origins.texts();
    // The front runs add to `steps` in place: its list is reserved for all of them.
    let front = |facets: Range<usize>| {
        let before = std::mem::take(&mut steps);
        steps = collect_facets(id, template, resolver, activated, facets, origins, before);
    };
    let back = |resolver: &mut Resolver<'_>, facets: Range<usize>| {
        let mut own = Origins::with(texts);
        own.begin(id);
        let step = collect_facets(
            id,
            template,
            resolver,
            activated,
            facets,
            &mut own,
            Step::default(),
        );
        BackRun { step, origins: own }
    };
    let (front_end, back) = from_both_ends(n, claim, workers, front, back);
    // The workers have finished: what they freed (the bodies they were lent, their
    // resolvers' caches) would stay in their arenas while `put_after` copies.
    resolver.memory.give_back();
    let back: Vec<BackRun> = back.into_iter().map(|(_, run)| run).collect();
    let limit = resolver.limits.output_bytes;
    if !back_runs_stand(back.iter().map(|run| &run.step), steps.spent, limit) {
        let rest = front_end..n;
        return collect_facets(id, template, resolver, activated, rest, origins, steps);
    }
    put_after(&mut steps, back, origins);
    // The back runs' own origin tables, copied into `origins`, are free now.
    resolver.memory.give_back();
    steps
}

/// Whether what the back runs collected (`steps`) stands: none found an error, and
/// after the `spent` of the front they stay within the output budget `limit`. If not,
/// their facets are collected again one after another, so that the diagnostics and
/// where the budget is crossed are the serial collection's own.
pub(super) fn back_runs_stand<'s>(
    mut steps: impl Iterator<Item = &'s Step> + Clone,
    spent: usize,
    limit: usize,
) -> bool {
    let total = steps
        .clone()
        .try_fold(spent, |sum, step| sum.checked_add(step.spent));
    let clean = steps.all(|step| step.errors.is_empty());
    clean && total.is_some_and(|t| t <= limit)
}

/// Facets `0..n` claimed `claim` at a time from both ends until the ends meet: the
/// calling thread runs `front` on the runs it claims from the front, in order; a
/// thread for each of `workers` runs `back` with it on runs claimed from the back.
/// Returns where the front stopped, and each back run with what `back` gave for it,
/// in facet order.
pub(super) fn from_both_ends<W: Send, B: Send>(
    n: usize,
    claim: usize,
    workers: Vec<W>,
    mut front: impl FnMut(Range<usize>),
    back: impl Fn(&mut W, Range<usize>) -> B + Sync,
) -> (usize, Vec<(Range<usize>, B)>) {
    let claims = Claims::new(n);
    let (claims, back) = (&claims, &back);
    std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut worker| {
                s.spawn(move || {
                    crate::heap::worker_started();
                    std::iter::from_fn(|| claims.back(claim))
                        .map(|run| (run.clone(), back(&mut worker, run)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut front_end = 0;
        while let Some(run) = claims.front(claim) {
            front_end = run.end;
            front(run);
        }
        let mut done = Vec::new();
        for handle in handles {
            match handle.join() {
                Ok(runs) => done.extend(runs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done.sort_unstable_by_key(|(run, _)| run.start);
        (front_end, done)
    })
}

/// The back runs (in facet order) put after `steps`, their origins appended to
/// `origins` and renumbered.
fn put_after(steps: &mut Step, back: Vec<BackRun>, origins: &mut Origins) {
    // Where each run's origins will start is known before any is appended, so the
    // contributions are renumbered on the other cores while one thread appends the
    // tables (at 10 000 facets, 7–10 ms and 4–5 ms one after the other).
    let mut at = origins.len();
    let mut tables = Vec::with_capacity(back.len());
    let mut runs: Vec<(u32, Step)> = Vec::with_capacity(back.len());
    for run in back {
        let start = at as u32;
        at += run.origins.len();
        tables.push((start, run.origins));
        runs.push((start, run.step));
    }
    let threads = crate::parallel::cores().saturating_sub(1);
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::heap::worker_started();
            for (start, table) in tables {
                let appended_at = origins.append(table);
                debug_assert_eq!(appended_at, start, "origins appended where foreseen");
            }
        });
        crate::parallel::for_each_mut(&mut runs, threads, |(start, step)| {
            let start = *start;
            for c in &mut step.contributions {
                c.map_origins(|o| OriginId(o.0 + start));
            }
        });
    });
    for (_, mut step) in runs {
        steps.contributions.append(&mut step.contributions);
        steps.exclusions.append(&mut step.exclusions);
        steps.spent += step.spent;
    }
}

/// The facets `0..n` still to collect, claimed in runs from the front (by one thread)
/// or from the back (by any other) until the two ends meet; both ends in one word, so
/// that a claim is one compare-and-swap.
struct Claims(AtomicU64);

impl Claims {
    fn new(n: usize) -> Claims {
        Claims(AtomicU64::new(n as u64))
    }

    /// The next `claim` facets from the front, or what is left if fewer.
    fn front(&self, claim: usize) -> Option<Range<usize>> {
        self.take(|front, back| (front, (front + claim).min(back)))
    }

    /// The last `claim` facets not claimed yet, or what is left if fewer.
    fn back(&self, claim: usize) -> Option<Range<usize>> {
        self.take(|front, back| (back.saturating_sub(claim).max(front), back))
    }

    /// Claims the range `pick(front, back)` gives, at one end of what is left.
    fn take(&self, pick: impl Fn(usize, usize) -> (usize, usize)) -> Option<Range<usize>> {
        let mut now = self.0.load(Ordering::Relaxed);
        loop {
            let (front, back) = ((now >> 32) as usize, (now & u64::from(u32::MAX)) as usize);
            if front >= back {
                return None;
            }
            let (start, end) = pick(front, back);
            let (front, back) = if start == front {
                (end, back)
            } else {
                (front, start)
            };
            let next = ((front as u64) << 32) | back as u64;
            match self
                .0
                .compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Some(start..end),
                Err(seen) => now = seen,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{facets_on, Claims, Spread, Step};
    use crate::compose::config::Resolver;
    use crate::compose::fixture::{facet, Fixture};
    use crate::compose::model::origin::Origins;
    use crate::template::TemplateId;

    #[test]
    fn claims_from_both_ends_cover_every_facet_once() {
        for (n, claim) in [(10, 3), (1000, 64), (5, 8), (1, 1)] {
            let claims = Claims::new(n);
            let mut front = Vec::new();
            let mut back = Vec::new();
            std::thread::scope(|s| {
                let from_back =
                    s.spawn(|| std::iter::from_fn(|| claims.back(claim)).collect::<Vec<_>>());
                front.extend(std::iter::from_fn(|| claims.front(claim)));
                back = from_back.join().expect("no panic");
            });
            // The front is one run from 0, in order; the back runs fill the rest.
            assert!(
                front.windows(2).all(|w| w[0].end == w[1].start),
                "{front:?}"
            );
            assert!(front.first().is_none_or(|r| r.start == 0));
            let mut all: Vec<usize> = front.iter().chain(&back).flat_map(|r| r.clone()).collect();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "{front:?} {back:?}");
            assert!(front
                .iter()
                .chain(&back)
                .all(|r| !r.is_empty() && r.len() <= claim));
        }
    }

    /// Facet `k` of a template where facets read their own block and a shared one,
    /// some are off, some components are left out by their own `when`, and `faulty`
    /// names the facets whose component reads an undefined function.
    fn facet_text(k: usize, faulty: &[usize]) -> String {
        let when = if k % 5 == 4 { "when: false\n" } else { "" };
        let call = if faulty.contains(&k) {
            "nope(1)"
        } else {
            "cfg.size"
        };
        facet(
            &format!("f{k:02}"),
            &format!(
                "{when}config:\n  - name: cfg{k}\n    size: \"${{shared.base + {k}}}\"\n\
                 terraform:\n  - name: tf{k}\n    inputs:\n      size: \"${{cfg{k}.size}}\"\n\
                 \x20     list: [a, \"${{provider}}-{k}\", {{deep: \"${{{call}}}\"}}]\n\
                 \x20 - name: tf{}\n    when: \"{}\"\n    inputs:\n      from: f{k}\n\
                 kustomize:\n  - name: k{k}\n    components: [\"${{provider}}\"]\n",
                k % 7,
                k % 3 == 0,
            )
            .replace("cfg.size", &format!("cfg{k}.size")),
        )
    }

    fn template(n: usize, faulty: &[usize]) -> Fixture {
        let mut files: Vec<(String, String)> = (0..n)
            .map(|k| (format!("facets/f{k:02}.yaml"), facet_text(k, faulty)))
            .collect();
        files.push((
            "facets/shared.yaml".into(),
            facet("shared", "config:\n  - name: shared\n    base: 100\n"),
        ));
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (&**p, &**t)).collect();
        Fixture::new(&files).values("values.yaml", "provider: aws\n")
    }

    /// Everything a collection gives, as text: the step (contributions with their
    /// origin ids, exclusions, errors, budget used) and the origin table.
    fn collected(fx: &Fixture, threads: usize, budget: Option<usize>) -> String {
        let (context, activation) = fx.activated();
        let mut with = fx.with();
        if let Some(bytes) = budget {
            with.limits.output_bytes = bytes;
        }
        let resolver = Resolver::new(&with, &fx.template, context, &activation.active);
        let mut origins = Origins::default();
        let id = TemplateId::Composing;
        let step: Step = facets_on(
            Spread { threads, claim: 2 },
            id,
            &fx.template,
            &resolver,
            &activation,
            &mut origins,
            Step {
                spent: 7,
                ..Step::default()
            },
        );
        let table: Vec<_> = (0..origins.len())
            .map(|k| {
                origins
                    .get(crate::compose::model::origin::OriginId(k as u32))
                    .clone()
            })
            .collect();
        format!("{step:#?}\n{table:#?}")
    }

    /// The same template loaded whole, and loaded for one composition: its bodies
    /// lent to the first collection, and read again from the files by every later
    /// one (including the facets collected again after an error or the budget).
    fn whole_and_lending(n: usize, faulty: &[usize]) -> [Fixture; 2] {
        [template(n, faulty), template(n, faulty).lending()]
    }

    #[test]
    fn several_threads_collect_what_one_collects_with_the_same_origin_ids() {
        let one = collected(&template(23, &[]), 1, None);
        assert!(one.contains("tf22") && one.contains("aws-21"), "{one}");
        for fx in whole_and_lending(23, &[]) {
            for threads in [1, 2, 3, 8, 40] {
                assert_eq!(collected(&fx, threads, None), one, "{threads} threads");
            }
        }
    }

    #[test]
    fn errors_in_later_runs_are_reported_as_one_thread_reports_them() {
        let one = collected(&template(23, &[2, 17, 21]), 1, None);
        assert!(one.matches("nope").count() >= 3, "{one}");
        for fx in whole_and_lending(23, &[2, 17, 21]) {
            for threads in [2, 1, 3, 8] {
                assert_eq!(collected(&fx, threads, None), one, "{threads} threads");
            }
        }
    }

    #[test]
    fn the_budget_is_crossed_where_one_thread_crosses_it() {
        // The 23 facets use about 550 bytes: 450 is crossed in the last run.
        let one = collected(&template(23, &[]), 1, Some(450));
        assert!(one.contains("output budget"), "{one}");
        for fx in whole_and_lending(23, &[]) {
            for threads in [2, 1, 3, 8] {
                assert_eq!(collected(&fx, threads, Some(450)), one, "{threads} threads");
            }
        }
    }
}
