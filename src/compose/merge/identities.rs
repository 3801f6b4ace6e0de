//! Merging one kind's contributions identity by identity, and remembering the result.
//!
//! A component's merge depends only on the contributions to its identity, in order:
//! so each identity is merged on its own, and the order of the merged list (creation
//! order, a component created again after a delete taking a new slot at the end) is
//! put together afterwards from what each contribution did ([`Event`]). That split is
//! what lets incremental recomposition take a component from the last
//! composition when its contributions are the very same ones (the same shared fields,
//! strategy and origin), and merge only the identities an edit reached.

use super::{apply, Event, LetGo};
use crate::compose::collect::Contribution;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::fields::FieldMap;
use crate::compose::model::for_explain::ForExplain;
use crate::compose::model::origin::OriginId;
use crate::template::{ComponentKind, Strategy};
use indexmap::IndexMap;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The last composition's merge, per kind and identity.
#[derive(Default)]
pub struct Memo {
    pub(crate) terraform: KindMemo,
    pub(crate) kustomize: KindMemo,
    pub(crate) flux: KindMemo,
}

/// One kind's merged identities, numbered in order of first appearance.
#[derive(Default)]
pub struct KindMemo {
    /// Per contribution merged, the number of its identity.
    which: Vec<u32>,
    /// Per identity number, its id and what merging its contributions gave.
    ids: Vec<Arc<str>>,
    outcomes: Vec<Option<Outcome>>,
}

impl KindMemo {
    /// Whether `contributions` are for the same identities, one by one, as the ones
    /// merged last (then they are numbered alike, and nothing needs hashing).
    fn numbers_alike(&self, contributions: &[Contribution]) -> bool {
        self.which.len() == contributions.len()
            && contributions.iter().zip(&self.which).all(|(c, &g)| {
                let id = &self.ids[g as usize];
                Arc::ptr_eq(id, &c.id) || **id == *c.id
            })
    }

    /// Takes what merging identity `id` (numbered `g` now) gave last time.
    fn take(
        &mut self,
        g: usize,
        id: &str,
        alike: bool,
        by_id: &mut Option<FxHashMap<Arc<str>, usize>>,
    ) -> Option<Outcome> {
        if alike {
            return self.outcomes.get_mut(g)?.take();
        }
        let ids = &self.ids;
        let by_id = by_id.get_or_insert_with(|| {
            ids.iter()
                .enumerate()
                .map(|(g, id)| (Arc::clone(id), g))
                .collect()
        });
        let at = *by_id.get(id)?;
        self.outcomes.get_mut(at)?.take()
    }
}

/// What merging one identity's contributions gave.
#[derive(Clone)]
struct Outcome {
    /// The contributions merged (the memo's key).
    said: Vec<Said>,
    /// What each of them did to the list.
    events: Vec<Event>,
    /// The component at the end, if it exists then.
    live: Option<Component>,
    /// In the order they left: each [`Event::Left`] pushed the next one.
    deleted: Vec<Component>,
    /// What merging them let go of ([`ForExplain::Dropped`]; never in a memo).
    let_go: LetGo,
}

/// One contribution as the memo compares it: the same fields (the same allocation,
/// which the memo keeps alive), strategy, kind and origin give the same merge.
#[derive(Clone)]
struct Said {
    fields: Arc<FieldMap>,
    kind: ComponentKind,
    strategy: Strategy,
    identity_only: bool,
    origin: OriginId,
}

impl Said {
    fn of(c: &Contribution) -> Said {
        Said {
            fields: Arc::clone(&c.fields),
            kind: c.kind,
            strategy: c.strategy,
            identity_only: c.identity_only,
            origin: c.origin,
        }
    }

    fn is(&self, c: &Contribution) -> bool {
        Arc::ptr_eq(&self.fields, &c.fields)
            && self.kind == c.kind
            && self.strategy == c.strategy
            && self.identity_only == c.identity_only
            && self.origin == c.origin
    }
}

/// Applies the contributions of one component kind, already in application order;
/// with `memo`, an identity whose contributions are the memo's is not merged again,
/// and the memo is left holding this merge.
pub fn merge(
    contributions: Vec<Contribution>,
    memo: Option<&mut KindMemo>,
    for_explain: ForExplain,
) -> (Merged, LetGo) {
    let threads = crate::parallel::cores().min(contributions.len() / CONTRIBUTIONS_PER_THREAD);
    merge_on(threads.max(1), contributions, memo, for_explain)
}

/// [`merge`], identities that need merging merged on up to `threads` threads.
fn merge_on(
    threads: usize,
    contributions: Vec<Contribution>,
    mut memo: Option<&mut KindMemo>,
    for_explain: ForExplain,
) -> (Merged, LetGo) {
    // What the memo kept is moved out, not copied: it is replaced by this merge.
    let mut old = memo.as_deref_mut().map(std::mem::take);
    let alike = old
        .as_ref()
        .is_some_and(|m| m.numbers_alike(&contributions));
    let (which, count) = match &old {
        Some(m) if alike => (m.which.clone(), m.ids.len()),
        _ => numbered(&contributions),
    };
    // The contributions grouped by identity, as positions into one list (a counting
    // sort): no list per identity to allocate.
    let mut starts = vec![0u32; count + 1];
    for &g in &which {
        starts[g as usize + 1] += 1;
    }
    for g in 0..count {
        starts[g + 1] += starts[g];
    }
    let mut filled = starts.clone();
    let mut grouped = vec![0u32; which.len()];
    for (j, &g) in which.iter().enumerate() {
        grouped[filled[g as usize] as usize] = j as u32;
        filled[g as usize] += 1;
    }
    drop(filled);
    let keep = Keep {
        memo: memo.is_some(),
        for_explain,
    };
    if old.as_ref().is_none_or(|m| m.outcomes.is_empty()) {
        // Nothing remembered: every identity is merged.
        let slots = contributions.into_iter().map(Some).collect();
        let outcomes = merge_groups(threads, slots, &grouped, &starts, keep);
        return finish(memo, which, outcomes, None);
    }
    // After an edit most identities are the memo's: only those merged again take
    // their contributions (copies sharing the fields), the rest are only compared.
    let mut by_id = None;
    let outcomes: Vec<Outcome> = (0..count)
        .map(|g| {
            let members = &grouped[starts[g] as usize..starts[g + 1] as usize];
            let first = &contributions[members[0] as usize].id;
            let kept = old
                .as_mut()
                .and_then(|m| m.take(g, first, alike, &mut by_id));
            let same = |o: &Outcome| {
                o.said.len() == members.len()
                    && o.said
                        .iter()
                        .zip(members)
                        .all(|(s, &j)| s.is(&contributions[j as usize]))
            };
            match kept {
                Some(o) if same(&o) => o,
                _ => merge_one(
                    members.iter().map(|&j| contributions[j as usize].clone()),
                    keep,
                ),
            }
        })
        .collect();
    // Numbered alike, the identities are the last ones.
    let same_ids = old.filter(|_| alike).map(|m| m.ids);
    drop(contributions);
    finish(memo, which, outcomes, same_ids)
}

/// The merged list of `outcomes`, the memo (if any) left holding them. `same_ids`:
/// the identities' ids, when the memo's are still theirs.
fn finish(
    memo: Option<&mut KindMemo>,
    which: Vec<u32>,
    outcomes: Vec<Outcome>,
    same_ids: Option<Vec<Arc<str>>>,
) -> (Merged, LetGo) {
    let mut outcomes = outcomes;
    let mut let_go = LetGo::default();
    for outcome in &mut outcomes {
        let_go.append(std::mem::take(&mut outcome.let_go));
    }
    let merged = match memo {
        None => in_list_order(&which, &mut outcomes, Live::Move),
        Some(memo) => {
            let merged = in_list_order(&which, &mut outcomes, Live::Copy);
            // Every identity has a contribution, so a component live or deleted.
            memo.ids = same_ids.unwrap_or_else(|| {
                outcomes
                    .iter()
                    .filter_map(|o| o.live.as_ref().or(o.deleted.first()))
                    .map(|c| Arc::clone(&c.id))
                    .collect()
            });
            if memo.ids.len() == outcomes.len() {
                memo.which = which;
                memo.outcomes = outcomes.into_iter().map(Some).collect();
            } else {
                *memo = KindMemo::default();
            }
            merged
        }
    };
    (merged, let_go)
}

/// Which identity each contribution is for, numbered in order of first appearance;
/// and how many there are.
fn numbered(contributions: &[Contribution]) -> (Vec<u32>, usize) {
    let mut numbers: FxHashMap<&str, u32> = FxHashMap::default();
    let which = contributions
        .iter()
        .map(|c| {
            let next = numbers.len() as u32;
            *numbers.entry(c.id.as_ref()).or_insert(next)
        })
        .collect();
    (which, numbers.len())
}

/// What a merge keeps besides the merged list: the memo's record of what it merged,
/// and what each contribution said, in the components' histories.
#[derive(Clone, Copy)]
struct Keep {
    memo: bool,
    for_explain: ForExplain,
}

/// Contributions per thread below which a thread costs more than it saves.
const CONTRIBUTIONS_PER_THREAD: usize = 4096;

/// Every identity merged, in identity order: identity `g`'s contributions are
/// `grouped[starts[g]..starts[g + 1]]` (positions into `slots`). The list is cut
/// into `threads` runs of whole identities with about as many contributions each,
/// merged on threads of their own: an identity's merge reads its contributions alone.
fn merge_groups(
    threads: usize,
    mut slots: Vec<Option<Contribution>>,
    grouped: &[u32],
    starts: &[u32],
    keep: Keep,
) -> Vec<Outcome> {
    let count = starts.len() - 1;
    let total = grouped.len();
    let mut runs = Vec::with_capacity(threads);
    let mut from = 0;
    for k in 1..=threads {
        let to = if k == threads {
            count
        } else {
            let target = (total * k / threads) as u32;
            starts.partition_point(|&s| s < target).clamp(from, count)
        };
        let members = &grouped[starts[from] as usize..starts[to] as usize];
        let contributions: Vec<Contribution> = members
            .iter()
            .filter_map(|&j| slots[j as usize].take())
            .collect();
        runs.push((from..to, contributions));
        from = to;
    }
    drop(slots);
    // Each run writes its outcomes into its own stretch of one list, allocated once
    // the slots are freed: a list per run joined afterwards would hold every outcome
    // twice for a moment.
    let mut outcomes: Vec<Option<Outcome>> = (0..count).map(|_| None).collect();
    let mut rest: &mut [Option<Outcome>] = &mut outcomes;
    let runs: Vec<_> = runs
        .into_iter()
        .map(|(identities, contributions)| {
            let (into, after) = std::mem::take(&mut rest).split_at_mut(identities.len());
            rest = after;
            (identities, contributions, into)
        })
        .collect();
    crate::parallel::each(runs, |(identities, contributions, into)| {
        let mut rest = contributions.into_iter();
        for (g, outcome) in identities.zip(into) {
            let n = (starts[g + 1] - starts[g]) as usize;
            *outcome = Some(merge_one(rest.by_ref().take(n), keep));
        }
    });
    // Every stretch was written. `filter_map`, unlike `flatten`, lets the standard
    // library take the outcomes out in place, without a second list.
    #[allow(clippy::filter_map_identity)]
    outcomes.into_iter().filter_map(|o| o).collect()
}

/// Merges the contributions to one identity, in order.
fn merge_one(group: impl Iterator<Item = Contribution>, keep: Keep) -> Outcome {
    let mut said = Vec::new();
    let mut live = None;
    let mut deleted = Vec::new();
    let mut let_go = LetGo::default();
    let events = group
        .map(|c| {
            if keep.memo {
                said.push(Said::of(&c));
            }
            let letting_go = (keep.for_explain == ForExplain::Dropped).then_some(&mut let_go);
            apply(&mut live, &mut deleted, c, letting_go)
        })
        .collect();
    Outcome {
        said,
        events,
        live,
        deleted,
        let_go,
    }
}

/// Whether the merged list takes the outcomes' components or copies them (when the
/// memo keeps the outcomes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Live {
    Move,
    Copy,
}

/// The merged list: components in the slots their last creation took, in order, and
/// the deleted ones in the order they left. `which[j]` is the identity of
/// contribution `j`.
fn in_list_order(which: &[u32], outcomes: &mut [Outcome], live: Live) -> Merged {
    let mut next_event = vec![0usize; outcomes.len()];
    let mut next_deleted = vec![0usize; outcomes.len()];
    let mut slot = vec![usize::MAX; outcomes.len()];
    let mut slots = 0;
    let mut deleted = Vec::new();
    for &g in which {
        let g = g as usize;
        let o = &outcomes[g];
        match o.events[next_event[g]] {
            Event::Created => {
                slot[g] = slots;
                slots += 1;
            }
            Event::Left => {
                // Rare: copied either way.
                deleted.push(o.deleted[next_deleted[g]].clone());
                next_deleted[g] += 1;
            }
            Event::Changed => {}
        }
        next_event[g] += 1;
    }
    // Each slot was taken once: the live identities by slot, without a sort.
    let mut by_slot = vec![usize::MAX; slots];
    for (g, o) in outcomes.iter().enumerate() {
        // A live component was created, so it took a slot.
        if let (Some(_), Some(place)) = (&o.live, by_slot.get_mut(slot[g])) {
            *place = g;
        }
    }
    by_slot.retain(|&g| g != usize::MAX);
    let mut components = IndexMap::with_capacity_and_hasher(by_slot.len(), Default::default());
    for g in by_slot {
        let component = match live {
            Live::Move => outcomes[g].live.take(),
            Live::Copy => outcomes[g].live.clone(),
        };
        if let Some(c) = component {
            components.insert(c.id.clone(), c);
        }
    }
    Merged {
        components,
        deleted,
    }
}

/// The list's order, and a memo that hands back what did not change.
#[cfg(test)]
mod tests {
    use super::{merge, merge_on, KindMemo};
    use crate::compose::fixture::{facet, ids, Fixture};
    use crate::compose::merge::{Effect, Merged};
    use crate::compose::model::for_explain::ForExplain;
    use crate::compose::model::origin::Origins;
    use std::sync::Arc;

    fn contributions(fx: &Fixture) -> Vec<crate::compose::collect::Contribution> {
        fx.collected(&mut Origins::default())
            .contributions
            .terraform
    }

    #[test]
    fn a_component_created_again_after_a_delete_comes_last() {
        let fx = Fixture::new(&[
            (
                "facets/a.yaml",
                &facet("a", "ordinal: 100\nterraform:\n  - name: x\n    path: x\n  - name: y\n    path: y\n  - name: gone\n    strategy: remove\n"),
            ),
            (
                "facets/b.yaml",
                &facet("b", "ordinal: 200\nterraform:\n  - name: x\n    strategy: remove\n"),
            ),
            (
                "facets/c.yaml",
                &facet("c", "ordinal: 300\nterraform:\n  - name: x\n    path: x2\n"),
            ),
        ]);
        let merged = merge(contributions(&fx), None, ForExplain::Kept).0;
        assert_eq!(ids(&merged), ["y", "x"]);
        let deleted: Vec<&str> = merged.deleted.iter().map(|c| c.id.as_ref()).collect();
        // In the order they left: the remove that missed first, then x.
        assert_eq!(deleted, ["gone", "x"]);
    }

    #[test]
    fn several_threads_merge_what_one_merges() {
        // Identities with one contribution and with several (merged, replaced,
        // removed and created again), spread over many facets.
        let texts: Vec<(String, String)> = (0..12)
            .map(|k| {
                let body = format!(
                    "ordinal: {}\nterraform:\n  - name: own{k}\n    path: p{k}\n\
                     \x20 - name: shared{}\n    strategy: {}\n    inputs: {{k{k}: {k}}}\n\
                     \x20 - name: flip\n    {}\n",
                    100 + k,
                    k % 4,
                    ["merge", "replace", "remove", "merge"][k % 3 + usize::from(k % 5 == 0)],
                    if k % 3 == 1 {
                        "strategy: remove"
                    } else {
                        "path: flipped"
                    },
                );
                (
                    format!("facets/f{k:02}.yaml"),
                    facet(&format!("f{k}"), &body),
                )
            })
            .collect();
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (&**p, &**t)).collect();
        let fx = Fixture::new(&files);
        let one = format!(
            "{:#?}",
            merge_on(1, contributions(&fx), None, ForExplain::Kept).0
        );
        for effect in ["Removed", "Replaced", "Deleted"] {
            assert!(one.contains(effect), "{effect}: {one}");
        }
        for threads in [2, 3, 5, 40] {
            let many = format!(
                "{:#?}",
                merge_on(threads, contributions(&fx), None, ForExplain::Kept).0
            );
            assert_eq!(many, one, "{threads} threads");
        }
        // Without a record for `explain`: the same components and steps on any number
        // of threads, histories that do not say what each contribution said, and the
        // fields of every contribution that no component holds let go of.
        let shape = |merged: &Merged| -> Vec<String> {
            let all = merged.components.values().chain(&merged.deleted);
            all.map(|c| {
                let steps: Vec<_> = c
                    .history
                    .iter()
                    .map(|s| (s.origin, s.strategy, &s.effect))
                    .collect();
                format!("{} {:?} {steps:?}", c.id, c.fields)
            })
            .collect()
        };
        let kept = merge_on(1, contributions(&fx), None, ForExplain::Kept).0;
        for threads in [1, 2, 5, 40] {
            let contributions = contributions(&fx);
            let held = contributions.len();
            let (merged, let_go) = merge_on(threads, contributions, None, ForExplain::Dropped);
            assert_eq!(shape(&merged), shape(&kept), "{threads} threads");
            let all = || merged.components.values().chain(&merged.deleted);
            assert!(all()
                .flat_map(|c| c.history.iter())
                .all(|step| step.said.is_none()));
            // A remove that missed holds no contribution's fields.
            let holding = all()
                .filter(|c| c.history[0].effect != Effect::Missed)
                .count();
            assert_eq!(holding + let_go.0.len(), held, "{threads} threads");
        }
    }

    #[test]
    fn as_many_contributions_for_other_identities_are_numbered_anew() {
        let template = |second: &str| {
            Fixture::new(&[
                (
                    "facets/a.yaml",
                    &facet("a", "ordinal: 100\nterraform:\n  - name: x\n    path: x\n"),
                ),
                (
                    "facets/b.yaml",
                    &facet(
                        "b",
                        &format!("ordinal: 200\nterraform:\n  - name: {second}\n    path: b\n"),
                    ),
                ),
                (
                    "facets/c.yaml",
                    &facet("c", "ordinal: 300\nterraform:\n  - name: y\n    path: y\n"),
                ),
            ])
        };
        let mut memo = KindMemo::default();
        merge(
            contributions(&template("x")),
            Some(&mut memo),
            ForExplain::Kept,
        );
        // Three contributions again, the second now for y: x and y merge apart.
        let after = merge(
            contributions(&template("y")),
            Some(&mut memo),
            ForExplain::Kept,
        )
        .0;
        assert_eq!(ids(&after), ["x", "y"]);
        assert_eq!(after.components["x"].history.len(), 1);
        assert_eq!(after.components["y"].history.len(), 2);
    }

    #[test]
    fn the_memo_gives_back_the_components_whose_contributions_are_the_same() {
        // Both components are merged from two contributions: merging makes new fields.
        let fx = Fixture::new(&[
            (
                "facets/a.yaml",
                &facet("a", "ordinal: 100\nterraform:\n  - name: x\n    path: x\n  - name: y\n    path: y\n"),
            ),
            (
                "facets/b.yaml",
                &facet("b", "ordinal: 200\nterraform:\n  - name: x\n    inputs: {a: 1}\n  - name: y\n    inputs: {a: 1}\n"),
            ),
        ]);
        let first = contributions(&fx);
        let mut memo = KindMemo::default();
        let before = merge(first.clone(), Some(&mut memo), ForExplain::Kept).0;
        // The same contributions for x; one of y's collected again (new fields).
        let again: Vec<_> = first
            .into_iter()
            .map(|mut c| {
                if &*c.id == "y" && c.fields.contains_key("inputs") {
                    c.fields = Arc::new((*c.fields).clone());
                }
                c
            })
            .collect();
        let after = merge(again, Some(&mut memo), ForExplain::Kept).0;
        assert_eq!(ids(&after), ["x", "y"]);
        let same =
            |id: &str| Arc::ptr_eq(&before.components[id].fields, &after.components[id].fields);
        assert!(same("x"), "x is taken from the memo");
        assert!(!same("y"), "y is merged again");
    }
}
