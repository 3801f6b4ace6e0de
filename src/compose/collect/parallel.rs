//! The facets of a large template collected on several threads.
//!
//! Given the scope, collecting one facet does not depend on collecting another: the
//! resolver only caches what lookups find. So runs of consecutive facets are collected
//! at once, the first on the calling thread with the composition's own resolver and
//! origin table, every other with a [`Resolver::fresh`] one and an origin table of its
//! own. The runs are then put together in facet order, their origins appended and
//! renumbered: the contributions, exclusions and origins come out as collecting one
//! facet after another gives them, in the same order.
//!
//! What is reported must not depend on the threads either. A later run that found an
//! error, or runs that together pass the output budget, are thrown away and their
//! facets collected again after the first run, one after another: the errors, and
//! where the budget was crossed, are then the serial collection's own.

use super::{collect_facets, Step};
use crate::compose::activate::Activated;
use crate::compose::config::Resolver;
use crate::compose::shared::origin::{OriginId, Origins};
use crate::template::{Template, TemplateId};
use std::ops::Range;

/// Facets per thread below which a thread costs more than it saves (a facet takes a
/// few microseconds to collect, a thread tens to start).
const FACETS_PER_THREAD: usize = 256;

/// Every facet's step of [`super::collect`], after the ones that used `spent` of the
/// output budget; the same as [`collect_facets`] over all of them.
pub fn facets(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    origins: &mut Origins,
    spent: usize,
) -> Step {
    let threads = crate::parallel::cores().min(template.facets.len() / FACETS_PER_THREAD);
    facets_on(threads, id, template, resolver, activated, origins, spent)
}

/// [`facets`] on `threads` threads.
fn facets_on(
    threads: usize,
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    origins: &mut Origins,
    spent: usize,
) -> Step {
    let n = template.facets.len();
    if threads < 2 || n < 2 {
        return collect_facets(id, template, resolver, activated, 0..n, origins, spent);
    }
    let runs = split(n, threads.min(n));
    let (mut steps, later) = std::thread::scope(|s| {
        let handles: Vec<_> = runs[1..]
            .iter()
            .map(|range| {
                let resolver = resolver.fresh();
                let range = range.clone();
                s.spawn(move || {
                    let mut own = Origins::default();
                    own.begin(id);
                    let step =
                        collect_facets(id, template, &resolver, activated, range, &mut own, 0);
                    (step, own)
                })
            })
            .collect();
        let first = collect_facets(
            id,
            template,
            resolver,
            activated,
            runs[0].clone(),
            origins,
            spent,
        );
        let later: Vec<(Step, Origins)> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (first, later)
    });
    let total = later
        .iter()
        .try_fold(steps.spent, |sum, (step, _)| sum.checked_add(step.spent));
    let clean = later.iter().all(|(step, _)| step.errors.is_empty());
    if !clean || total.is_none_or(|t| t > resolver.limits.output_bytes) {
        let rest = runs[0].end..n;
        let step = collect_facets(
            id,
            template,
            resolver,
            activated,
            rest,
            origins,
            steps.spent,
        );
        steps.absorb(step);
        return steps;
    }
    for (mut step, own) in later {
        let at = origins.append(own);
        for c in &mut step.contributions {
            c.map_origins(|o| OriginId(o.0 + at));
        }
        steps.contributions.append(&mut step.contributions);
        steps.exclusions.append(&mut step.exclusions);
        steps.spent += step.spent;
    }
    steps
}

/// `0..n` in `parts` consecutive runs, as even as can be.
fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    (0..parts)
        .map(|k| n * k / parts..n * (k + 1) / parts)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{facets_on, split, Step};
    use crate::compose::config::Resolver;
    use crate::compose::fixture::{facet, Fixture};
    use crate::compose::shared::origin::Origins;
    use crate::template::TemplateId;

    #[test]
    fn runs_cover_every_facet_once_in_order() {
        for (n, parts) in [(10, 3), (512, 2), (1000, 7), (5, 5)] {
            let runs = split(n, parts);
            assert_eq!(runs.len(), parts);
            assert_eq!(runs[0].start, 0);
            assert_eq!(runs[parts - 1].end, n);
            assert!(runs.windows(2).all(|w| w[0].end == w[1].start));
            let (shortest, longest) = (
                runs.iter().map(|r| r.len()).min(),
                runs.iter().map(|r| r.len()).max(),
            );
            assert!(longest.zip(shortest).is_some_and(|(l, s)| l - s <= 1));
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
            threads,
            id,
            &fx.template,
            &resolver,
            &activation,
            &mut origins,
            7,
        );
        let table: Vec<_> = (0..origins.len())
            .map(|k| {
                origins
                    .get(crate::compose::shared::origin::OriginId(k as u32))
                    .clone()
            })
            .collect();
        format!("{step:#?}\n{table:#?}")
    }

    #[test]
    fn several_threads_collect_what_one_collects_with_the_same_origin_ids() {
        let fx = template(23, &[]);
        let one = collected(&fx, 1, None);
        assert!(one.contains("tf22") && one.contains("aws-21"), "{one}");
        for threads in [2, 3, 8, 40] {
            assert_eq!(collected(&fx, threads, None), one, "{threads} threads");
        }
    }

    #[test]
    fn errors_in_later_runs_are_reported_as_one_thread_reports_them() {
        let fx = template(23, &[2, 17, 21]);
        let one = collected(&fx, 1, None);
        assert!(one.matches("nope").count() >= 3, "{one}");
        for threads in [2, 3, 8] {
            assert_eq!(collected(&fx, threads, None), one, "{threads} threads");
        }
    }

    #[test]
    fn the_budget_is_crossed_where_one_thread_crosses_it() {
        let fx = template(23, &[]);
        // The 23 facets use about 550 bytes: 450 is crossed in the last run.
        let one = collected(&fx, 1, Some(450));
        assert!(one.contains("output budget"), "{one}");
        for threads in [2, 3, 8] {
            assert_eq!(collected(&fx, threads, Some(450)), one, "{threads} threads");
        }
    }
}
