//! Incremental composition: what the activate → config → collect stages
//! found for one composition, kept for the next, so that after an edit only what the
//! edit reached is evaluated again.
//!
//! The rule is Salsa's: a facet's contributions are a function of the facet (its
//! parsed content, shared as one `Arc` while its file's text is unchanged), of
//! whether it is active, and of the values of the top-level names its expressions
//! read — directly, or through the config values and block `when`s they read, which
//! the [`Resolver`] records. If none of these changed, collecting it again would
//! give the same contributions, exclusions and origins, so they are replayed (an
//! inactive facet's exclusions read nothing: unchanged and still inactive, it is
//! replayed too). What "changed" means for a name:
//!
//! * the context values or the environment and Terraform outputs changed: every name;
//! * a config block name may have changed when a facet contributing to it was
//!   edited, added, removed or switched on or off, or when the previous
//!   composition's value of the block read a name that changed (transitively); it
//!   has changed if its value now differs from the one the previous composition
//!   read (an edit elsewhere in the facet, or one that leaves the value as it was,
//!   changes nothing that reads it), and always when its facet calls a function that
//!   reads files or the environment (those are read anew each time);
//! * a block name that no facet of the previous template had is read without being
//!   recorded (it was a plain context value then): nothing is reused.
//!
//! A facet that read a changed name is still replayed if what it saw did not change
//! (early cutoff): every lookup its expressions made themselves under a changed name
//! (`cfg.key`, not the whole block) finds what it found last time, compared as
//! identical values. So editing one key of a block many facets read collects again
//! only the facets that read that key.
//!
//! A config block name that may not have changed (its contributions are the same,
//! and it read no name that changed) keeps its value in the scope, what it read and
//! its records in the block log — where every facet is where it was (the log names
//! facets by index); requirements are checked again every time, a kept block's
//! `when` answered from its log.
//!
//! Activation is a fixed point (S5), so it is kept only in the simple case: when no
//! facet's `when` read a config block name (nor the whole scope), it settled in its
//! first round, each `when` a function of its facet and the context values alone. An
//! unchanged facet then keeps its outcome and only the others' `when`s are evaluated,
//! as long as none of them reads a block name either and the template has no block
//! name the last one lacked; otherwise activation runs whole, over the block index
//! collection uses too (built once).
//!
//! A replayed facet keeps its origin ids: the next composition's origin table goes on
//! from this one's (shared in chunks, copy-on-write), and only the facets collected
//! again add origins to it; a table that has grown to twice its fresh length is
//! started afresh, the replayed facets' origins then copied under new ids. Keeping
//! the ids is what lets merging, validation and assembly take what an edit did not
//! reach from their own memos (`merge::identities`, `validate::unchanged`,
//! `assemble::component_values`).
//!
//! With nothing to replay (the first composition, or context values that changed),
//! every facet is collected, on all cores as a cold composition collects
//! ([`super::parallel`]): each thread records what each of its facets read, and the
//! facets collected from the back are put after the front ones with their origins
//! renumbered, so what is kept is what one thread would keep.
//!
//! Sorting the contributions into application order, finding and checking the
//! requirements, and the facets' blueprint-wide outputs and messages run whole every
//! time (each one pass). Any error on the way (a failing expression, a cycle, the
//! output budget, an unmet requirement) composes cold instead, so a failure reads
//! exactly as a cold composition's; this memo is only ever updated by a composition
//! that succeeded up to merging.

use super::part::{owners_with, Pieces};
use super::Part;
use super::{collect_base, collect_facet, facet_outputs, requires, Contribution, Exclusion, Step};
use crate::compose::activate;
use crate::compose::config::{block_order, BlockIndex, BlockRecord, Observations, Resolver};
use crate::compose::model::activation::{Activated, Activation};
use crate::compose::model::origin::{Contributor, OriginId, Origins};
pub(crate) use crate::compose::model::reuse::Reuse;
use crate::compose::shared::expressions::Expressions;
use crate::expr::host::TerraformOutputs;
use crate::expr::{Map, Scope, Value};
use crate::template::{Facet, Template, TemplateId};
use crate::value::Equality;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// What stage 5 of one composition leaves for the next (see the module
/// documentation). Empty until the first composition.
#[derive(Default)]
pub struct Memo {
    state: Option<State>,
    /// How the last composition went: facets replayed and collected again.
    pub last: Reuse,
}

struct State {
    context: Arc<Map>,
    /// The environment and Terraform outputs as text: any change invalidates all.
    fingerprint: String,
    /// Per facet of the template, in processing order.
    slots: Vec<Slot>,
    /// Every config block name of the template, of active facets or not: the names
    /// whose reads the resolver recorded.
    names: FxHashSet<String>,
    /// No facet's `when` read a config block name or the whole scope: activation
    /// settled in its first round, each `when` read only context values.
    single_round: bool,
    /// Per config block name of the active facets, what the composition found.
    blocks: FxHashMap<String, Block>,
    /// For each name, the blocks whose value read it.
    readers: Readers,
    /// Blocks whose value read the whole scope: changed whenever anything is.
    whole_scope: Vec<String>,
    /// The origin table as collection left it: the entries' origin ids are ids in it.
    /// The next composition goes on from it, so a replayed facet keeps its ids.
    origins: Origins,
    /// How long the table was after the last collection that started it afresh: a
    /// table grown to twice that (the origins of facets collected again are left
    /// behind, unused) is started afresh by the next composition.
    fresh_len: usize,
}

/// One facet as the last composition saw it.
struct Slot {
    /// Its parsed content: the same `Arc` while its file's text is unchanged.
    facet: Arc<Facet>,
    /// What its `when` gave.
    outcome: Activation,
    active: bool,
    /// Whether it reads files or the environment (see [`reads_outside`]; found once
    /// per parsed facet).
    volatile: bool,
    /// Its collection, where it can be replayed: an inactive facet's, and an active
    /// one's collected without error, reading neither files, the environment nor the
    /// whole scope.
    entry: Option<Entry>,
}

/// One facet's collection.
struct Entry {
    /// The facet's index in processing order when it was collected: its origins and
    /// exclusions name the facet by it.
    index: usize,
    reads: FxHashSet<String>,
    /// Its expressions' own lookups under block names, with what they found.
    observed: Observations,
    /// Sharing their fields with the composition's contributions.
    contributions: Vec<Contribution>,
    exclusions: Vec<Exclusion>,
    /// Its origins: these ids of the state's table, one after another.
    origins: Range<u32>,
    spent: usize,
}

/// One config block name of the active facets, as the composition found it.
struct Block {
    /// What the whole scope holds at the name ([`Resolver::scope_value`]).
    value: Option<Value>,
    /// The names its value read, itself left out.
    reads: Vec<String>,
    /// Whether its value read the whole scope.
    all: bool,
    /// Its contributions' records in the block log, in application order.
    log: Vec<BlockRecord>,
}

impl Memo {
    /// Forgets everything because this composition runs cold (and says so in
    /// [`Memo::last`]).
    pub fn run_cold(&mut self) {
        self.state = None;
        self.last = Reuse {
            cold: true,
            ..Reuse::default()
        };
    }
}

/// Whether a composition of `template` can use a memo at all: one without local
/// sources, with Terraform outputs the memo can fingerprint.
pub fn usable(template: &Template, terraform: &TerraformOutputs) -> bool {
    template.upstream.is_empty()
        && matches!(
            terraform,
            TerraformOutputs::Unregistered
                | TerraformOutputs::Deferred
                | TerraformOutputs::Provider(_)
        )
}

/// Stages 3–5 with the memo, for a template whose context values stage 2 found:
/// its facets activated, and its part as [`super::part`] collects it, facets whose
/// inputs did not change replayed; this composition is kept in `memo` for the next.
/// `None` where a cold composition must decide (the memo is then left for the caller
/// to clear).
pub fn part(
    with: &Expressions<'_>,
    id: TemplateId,
    template: &Template,
    context: Arc<Map>,
    memo: &mut Memo,
    origins: &mut Origins,
) -> Option<Part> {
    let fingerprint = format!("{:?}\n{:?}", with.environment, with.terraform);
    let mut old = memo.state.take();
    let prior = old.as_ref().map(|s| s.align(template));
    let volatile = volatile(template, old.as_ref().zip(prior.as_ref()));
    let same_inputs = old
        .as_ref()
        .is_some_and(|s| s.same_inputs(&context, &fingerprint));
    // One index over every facet's blocks, for activation and collection alike, so
    // that every block name read goes through the resolver (and is recorded), active
    // or not.
    let all: Vec<usize> = (0..template.facets.len()).collect();
    let index = Arc::new(BlockIndex::new(template, &all));
    let names: FxHashSet<String> = index.names().map(str::to_string).collect();
    let last = old.as_ref().zip(prior.as_ref()).filter(|_| same_inputs);
    let (activation, when_reads) =
        activate(with, template, &context, &index, &names, last, &volatile)?;
    let active: Vec<bool> = activation
        .outcome
        .iter()
        .map(|o| *o != Activation::Inactive)
        .collect();
    let went_on = go_on(old.as_ref(), origins);
    let afresh = went_on.is_none();
    let resolver = Resolver::over(
        with,
        template,
        context.clone(),
        index,
        Some(Arc::new(active.clone())),
    );
    let changes = last.and_then(|(s, p)| s.changed(template, p, &active, &volatile, &resolver));
    let changed = changes.as_ref().map(|c| &c.changed);
    origins.begin(id);
    let run = Run {
        id,
        template,
        resolver: &resolver,
        activation: &activation,
        active: &active,
        volatile: &volatile,
    };
    let (collected, slots, reuse) =
        run.collect(changed, old.as_mut(), prior.as_ref(), afresh, origins);
    let fresh_len = went_on.unwrap_or(origins.len());
    if !collected.errors.is_empty() || collected.spent > with.limits.output_bytes {
        return None;
    }
    let kept_origins = origins.clone();
    let mut contributions = collected.contributions;
    super::in_application_order(&mut contributions);

    let considered = changes.as_ref().map(|c| &c.considered);
    let known = known_blocks(considered, prior.as_ref(), old.as_mut());
    drop(old);

    // The rest of the stage as `super::part` runs it.
    let (outputs, messages) = check_and_list(&resolver, &activation, &contributions, &known)?;
    let order = block_order(template, &activation.active);
    let blocks = evaluate_blocks(&resolver, &order, known)?;
    drop(resolver);
    let config = ordered_config(&blocks, &context, &order);
    let config_log = log_in_order(&order, &blocks);
    let (readers, whole_scope) = block_readers(&blocks);
    memo.state = Some(State {
        context: context.clone(),
        fingerprint,
        slots,
        names,
        single_round: when_reads.iter().all(|r| !r),
        blocks,
        readers,
        whole_scope,
        origins: kept_origins,
        fresh_len,
    });
    memo.last = reuse;
    Some(Part::from(Pieces {
        contributions,
        exclusions: collected.exclusions,
        outputs,
        messages,
        config,
        activation,
        context,
        config_log,
    }))
}

/// What the last composition found for the block names no change reached (not
/// `considered`, see [`Changes`]): what evaluating them again would find, where the
/// facets are where they were (the block log names them by index). Taken from `old`.
fn known_blocks(
    considered: Option<&FxHashSet<String>>,
    prior: Option<&Prior>,
    old: Option<&mut State>,
) -> FxHashMap<String, Block> {
    let (Some(considered), Some(true), Some(old)) = (considered, prior.map(|p| p.aligned), old)
    else {
        return FxHashMap::default();
    };
    let mut known = std::mem::take(&mut old.blocks);
    known.retain(|name, _| !considered.contains(name));
    known
}

/// The requirements of the active facets, their blocks and their components checked
/// (a block of `known` answers whether its `when`s let it in from its log: they were
/// evaluated without error and read nothing changed), and the facets'
/// blueprint-wide outputs and messages. `None` on an error.
fn check_and_list(
    resolver: &Resolver<'_>,
    activation: &Activated,
    contributions: &[Contribution],
    known: &FxHashMap<String, Block>,
) -> Option<(facet_outputs::FacetOutputs, Vec<String>)> {
    let included = |name: &str, facet, position, needed| match known.get(name) {
        Some(block) => Ok(needed
            && block
                .log
                .iter()
                .any(|r| r.facet == facet && r.position == position && r.included)),
        None => resolver.block_included(name, facet, position),
    };
    let owners = owners_with(resolver.template, activation, contributions, included).ok()?;
    requires::check(resolver, &owners).ok()?;
    let outputs = facet_outputs::collect(resolver, &activation.active).ok()?;
    let messages = facet_outputs::messages(resolver, &activation.active).ok()?;
    Some((outputs, messages))
}

/// Every block name of `order` as the composition finds it: taken from `known`
/// where it has the name, evaluated by `resolver` (with its reads recorded and its
/// log records) where not. `None` when a block's value fails.
fn evaluate_blocks(
    resolver: &Resolver<'_>,
    order: &[String],
    mut known: FxHashMap<String, Block>,
) -> Option<FxHashMap<String, Block>> {
    let mut blocks: FxHashMap<String, Block> = FxHashMap::default();
    blocks.reserve(order.len());
    let mut evaluated: FxHashSet<&str> = FxHashSet::default();
    for name in order {
        if let Some(block) = known.remove(name) {
            blocks.insert(name.clone(), block);
            continue;
        }
        resolver.record();
        let value = resolver.scope_value(name);
        let reads = resolver.recorded();
        let block = Block {
            value: value.ok()?,
            reads: reads.names.into_iter().filter(|r| r != name).collect(),
            all: reads.all,
            log: Vec::new(),
        };
        blocks.insert(name.clone(), block);
        evaluated.insert(name);
    }
    // Every block evaluated now was merged, so logged, once (a block taken from
    // `known` may have been merged too, while collecting: it keeps its records).
    for record in resolver.block_log() {
        if evaluated.contains(record.name.as_str()) {
            if let Some(block) = blocks.get_mut(&record.name) {
                block.log.push(record);
            }
        }
    }
    Some(blocks)
}

/// Stage 3 with the memo: which facets apply, and per facet whether its `when` read
/// a config block name or the whole scope. `last`: the last composition, if its
/// inputs were the same. If no `when` of it read a block name, activation settled in
/// one round, every `when` a function of its facet and the context values alone: an
/// unchanged facet then keeps its outcome, and only the others' `when`s are evaluated
/// — as long as none of those reads a block name either, and the template has no
/// block name the last one lacked (reads of such a name were not recorded).
/// Otherwise activation runs whole. `None` on an error.
fn activate<'t>(
    with: &Expressions<'t>,
    template: &'t Template,
    context: &Arc<Map>,
    index: &Arc<BlockIndex<'t>>,
    names: &FxHashSet<String>,
    last: Option<(&State, &Prior)>,
    volatile: &[bool],
) -> Option<(Activated, Vec<bool>)> {
    let one_round = last.filter(|(s, _)| s.single_round && names.is_subset(&s.names));
    if let Some((state, prior)) = one_round {
        let n = template.facets.len();
        let none = Some(Arc::new(vec![false; n]));
        let resolver = Resolver::over(with, template, context.clone(), Arc::clone(index), none);
        let mut outcome = Vec::with_capacity(n);
        let mut settled = true;
        for (i, facet) in template.facets.iter().enumerate() {
            let known = prior.of[i]
                .map(|k| &state.slots[k])
                .filter(|s| Arc::ptr_eq(&s.facet, facet) && !volatile[i]);
            if let Some(slot) = known {
                outcome.push(slot.outcome.clone());
                continue;
            }
            match activate::first_round(with, &resolver, i) {
                Ok((found, false)) => outcome.push(found),
                _ => {
                    settled = false;
                    break;
                }
            }
        }
        if settled {
            let active = (0..n)
                .filter(|&i| outcome[i] != Activation::Inactive)
                .collect();
            return Some((Activated { active, outcome }, vec![false; n]));
        }
    }
    activate::activate_over(with, template, context, Arc::clone(index)).ok()
}

/// The block log as [`super::part`] puts it: by block name in `order`, each name's
/// records in application order.
fn log_in_order(order: &[String], blocks: &FxHashMap<String, Block>) -> Vec<BlockRecord> {
    order
        .iter()
        .filter_map(|name| blocks.get(name))
        .flat_map(|b| b.log.iter().cloned())
        .collect()
}

/// Makes `origins` go on from the last composition's table (see [`State::origins`])
/// and returns that table's fresh length; `None`, leaving `origins` empty, when there
/// is none or it is mostly origins nothing uses any more.
fn go_on(old: Option<&State>, origins: &mut Origins) -> Option<usize> {
    let old = old.filter(|s| s.origins.len() <= 2 * s.fresh_len)?;
    *origins = old.origins.clone();
    Some(old.fresh_len)
}

/// Per facet, whether it reads files or the environment (found once per parsed
/// facet: a facet the last composition saw as the same `Arc` keeps its answer).
fn volatile(template: &Template, old: Option<(&State, &Prior)>) -> Vec<bool> {
    template
        .facets
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let known = old.and_then(|(s, p)| p.of[i].map(|k| &s.slots[k]));
            match known {
                Some(slot) if Arc::ptr_eq(&slot.facet, f) => slot.volatile,
                _ => reads_outside(template, f),
            }
        })
        .collect()
}

/// For each name, the blocks whose value read it.
type Readers = HashMap<String, Vec<String>>;

/// For each name, the blocks whose value read it; and the blocks whose value read
/// the whole scope.
fn block_readers(blocks: &FxHashMap<String, Block>) -> (Readers, Vec<String>) {
    let mut readers = Readers::new();
    let mut whole_scope = Vec::new();
    for (name, block) in blocks {
        if block.all {
            whole_scope.push(name.clone());
        }
        for read in &block.reads {
            readers.entry(read.clone()).or_default().push(name.clone());
        }
    }
    (readers, whole_scope)
}

/// Where each facet of a template was in the last composition's.
struct Prior {
    /// Per facet, its index in the last template (by path).
    of: Vec<Option<usize>>,
    /// Every facet is where it was (same paths in the same order).
    aligned: bool,
    /// The last template's facets this one does not have.
    removed: Vec<usize>,
}

/// One incremental collection of a template's facets.
struct Run<'a, 't> {
    id: TemplateId,
    template: &'t Template,
    resolver: &'a Resolver<'t>,
    activation: &'a Activated,
    active: &'a [bool],
    /// Per facet: it reads files or the environment.
    volatile: &'a [bool],
}

impl Run<'_, '_> {
    /// The base blueprint's components and every facet's, in collection order: a
    /// facet `old` kept whose reads miss `changed` replayed, the others collected.
    /// Returns the new slots and how many facets were replayed.
    ///
    /// `afresh`: `origins` starts empty, not from `old`'s table, so replayed facets'
    /// origins are copied into it under new ids.
    fn collect(
        &self,
        changed: Option<&FxHashSet<String>>,
        old: Option<&mut State>,
        prior: Option<&Prior>,
        afresh: bool,
        origins: &mut Origins,
    ) -> (Step, Vec<Slot>, Reuse) {
        let (template, resolver) = (self.template, self.resolver);
        let mut collected = collect_base(self.id, template, resolver, origins);
        let (mut old_slots, old_origins) = match old {
            Some(s) => (Some(&mut s.slots), Some(&s.origins)),
            None => (None, None),
        };
        if let Some(old) = old_slots.as_deref() {
            let entries = || old.iter().filter_map(|s| s.entry.as_ref());
            let contributions = entries().map(|e| e.contributions.len()).sum::<usize>();
            collected.contributions.reserve(contributions);
            collected
                .exclusions
                .reserve(entries().map(|e| e.exclusions.len()).sum::<usize>());
        }
        let mut slots = Vec::with_capacity(template.facets.len());
        let mut reuse = Reuse::default();
        let facets = self.facets();
        // Nothing to replay (the first composition, or inputs that changed): collected
        // on every core, the slots as one thread would fill them.
        let first = match changed {
            None => facets.on_threads(resolver, &mut collected, &mut slots, origins),
            Some(_) => 0,
        };
        reuse.collected += first;
        for (i, facet) in template.facets.iter().enumerate().skip(first) {
            let active = self.active[i];
            let replay = match (
                facets.memoisable(i),
                changed,
                old_slots.as_deref_mut(),
                prior,
            ) {
                (true, Some(changed), Some(slots), Some(prior)) => prior.of[i].and_then(|k| {
                    let slot = &mut slots[k];
                    let fits = Arc::ptr_eq(&slot.facet, facet)
                        && slot.active == active
                        && slot.entry.as_ref().is_some_and(|e| {
                            e.reads.is_disjoint(changed) || e.sees_the_same(resolver, changed)
                        });
                    fits.then(|| slot.entry.take()).flatten()
                }),
                _ => None,
            };
            if let Some(entry) = replay {
                let entry = match old_origins {
                    Some(from) if afresh || entry.index != i => entry.relocate(i, from, origins),
                    _ => entry,
                };
                collected
                    .contributions
                    .extend(entry.contributions.iter().cloned());
                collected
                    .exclusions
                    .extend(entry.exclusions.iter().cloned());
                collected.spent += entry.spent;
                slots.push(facets.slot(i, Some(entry)));
                reuse.replayed += 1;
                continue;
            }
            reuse.collected += 1;
            let (step, kept) = facets.one(i, resolver, origins, collected.spent);
            slots.push(facets.slot(i, kept.map(|k| Entry::keep(k, &step))));
            collected.absorb(step);
        }
        (collected, slots, reuse)
    }

    fn facets(&self) -> Facets<'_> {
        Facets {
            id: self.id,
            template: self.template,
            activation: self.activation,
            active: self.active,
            volatile: self.volatile,
        }
    }
}

/// What collecting a facet with the memo needs besides a resolver: shared by the
/// threads that collect at once.
struct Facets<'a> {
    id: TemplateId,
    template: &'a Template,
    activation: &'a Activated,
    active: &'a [bool],
    volatile: &'a [bool],
}

/// What a thread collected from the back: per facet its step and what to keep of
/// it, their origins in a table of the run's own.
struct BackRun {
    facets: Vec<(Step, Option<Kept>)>,
    origins: Origins,
}

impl Facets<'_> {
    /// Facet `i` collected with `resolver`, after `spent` of the output budget, with
    /// what its expressions read recorded: its step, and what to keep for replaying
    /// it (`None` where it cannot be replayed).
    fn one(
        &self,
        i: usize,
        resolver: &Resolver<'_>,
        origins: &mut Origins,
        spent: usize,
    ) -> (Step, Option<Kept>) {
        let start = origins.len();
        resolver.record();
        resolver.observe();
        let step = collect_facet(
            self.id,
            self.template,
            resolver,
            self.activation,
            i,
            origins,
            spent,
        );
        let observed = resolver.observed();
        let reads = resolver.recorded();
        let kept = (self.memoisable(i) && step.errors.is_empty() && !reads.all).then(|| Kept {
            index: i,
            reads: reads.names,
            observed,
            origins: start as u32..origins.len() as u32,
            spent_before: spent,
        });
        (step, kept)
    }

    /// Whether facet `i` can be replayed at all: it reads neither files nor the
    /// environment, or it is inactive (an inactive facet's exclusions read nothing).
    fn memoisable(&self, i: usize) -> bool {
        !self.active[i] || !self.volatile[i]
    }

    fn slot(&self, i: usize, entry: Option<Entry>) -> Slot {
        Slot {
            facet: self.template.facets[i].clone(),
            outcome: self.activation.outcome[i].clone(),
            active: self.active[i],
            volatile: self.volatile[i],
            entry,
        }
    }

    /// Every facet collected as [`Run::collect`] would with nothing to replay, on
    /// several threads as [`super::parallel`] collects (the calling thread from the
    /// front with `resolver` and `origins`, the others from the back with fresh
    /// resolvers and tables of their own, put after in facet order). Returns how many
    /// facets are done: all of them, or where the front stopped if a back run found
    /// an error or the runs together passed the output budget (the rest is then for
    /// the caller to collect one after another, as it would have); 0 for a template
    /// too small for threads.
    fn on_threads(
        &self,
        resolver: &Resolver<'_>,
        collected: &mut Step,
        slots: &mut Vec<Slot>,
        origins: &mut Origins,
    ) -> usize {
        let n = self.template.facets.len();
        let threads = super::parallel::threads_for(n);
        if threads < 2 || u32::try_from(n).is_err() {
            return 0;
        }
        let workers = (1..threads).map(|_| resolver.fresh()).collect();
        let texts = origins.texts();
        let front = |run: Range<usize>| {
            for i in run {
                let (step, kept) = self.one(i, resolver, origins, collected.spent);
                slots.push(self.slot(i, kept.map(|k| Entry::keep(k, &step))));
                collected.absorb(step);
            }
        };
        let back = |resolver: &mut Resolver<'_>, run: Range<usize>| {
            let mut own = Origins::with(texts);
            own.begin(self.id);
            let facets = run.map(|i| self.one(i, resolver, &mut own, 0)).collect();
            BackRun {
                facets,
                origins: own,
            }
        };
        let claim = super::parallel::FACETS_PER_CLAIM;
        let (front_end, back) = super::parallel::from_both_ends(n, claim, workers, front, back);
        let steps = back.iter().flat_map(|(_, run)| &run.facets).map(|(s, _)| s);
        let limit = resolver.limits.output_bytes;
        if !super::parallel::back_runs_stand(steps, collected.spent, limit) {
            return front_end;
        }
        for (run, mut back) in back {
            let at = origins.append(back.origins);
            let shift = |o: OriginId| OriginId(o.0 + at);
            for (i, (mut step, kept)) in run.zip(back.facets.drain(..)) {
                // Collected as if first; its budget and origins go after the others'.
                let before = collected.spent;
                step.spent += before;
                for c in &mut step.contributions {
                    c.map_origins(shift);
                }
                let entry = kept.map(|mut k| {
                    k.origins = k.origins.start + at..k.origins.end + at;
                    k.spent_before = before;
                    Entry::keep(k, &step)
                });
                slots.push(self.slot(i, entry));
                collected.absorb(step);
            }
        }
        n
    }
}

impl State {
    /// Where each of `template`'s facets was in the last template.
    fn align(&self, template: &Template) -> Prior {
        let n = template.facets.len();
        let same =
            |(f, s): (&Arc<Facet>, &Slot)| Arc::ptr_eq(f, &s.facet) || f.path == s.facet.path;
        if n == self.slots.len() && template.facets.iter().zip(&self.slots).all(same) {
            return Prior {
                of: (0..n).map(Some).collect(),
                aligned: true,
                removed: Vec::new(),
            };
        }
        let by_path: FxHashMap<&str, usize> = self
            .slots
            .iter()
            .enumerate()
            .map(|(k, s)| (s.facet.path.as_str(), k))
            .collect();
        let of: Vec<Option<usize>> = template
            .facets
            .iter()
            .map(|f| by_path.get(f.path.as_str()).copied())
            .collect();
        let mut seen = vec![false; self.slots.len()];
        for &k in of.iter().flatten() {
            seen[k] = true;
        }
        let removed = (0..self.slots.len()).filter(|&k| !seen[k]).collect();
        Prior {
            of,
            aligned: false,
            removed,
        }
    }

    /// Whether the context values, the environment and the Terraform outputs are
    /// this state's (if not, every name may have changed).
    fn same_inputs(&self, context: &Arc<Map>, fingerprint: &str) -> bool {
        let same_context = Arc::ptr_eq(&self.context, context)
            || crate::expr::Value::map((*self.context).clone()).equals(
                &crate::expr::Value::map((**context).clone()),
                Equality::IDENTICAL,
            );
        same_context && self.fingerprint == fingerprint
    }

    /// The block names whose value may differ from this state's (whose inputs are
    /// the same, see [`State::same_inputs`]); `None`: any may.
    fn changed(
        &self,
        template: &Template,
        prior: &Prior,
        active: &[bool],
        volatile: &[bool],
        resolver: &Resolver<'_>,
    ) -> Option<Changes> {
        let names_of = |f: &Facet| f.config.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
        let mut changed: FxHashSet<String> = FxHashSet::default();
        // Read anew each time, whatever their value.
        let mut volatile_names: FxHashSet<String> = FxHashSet::default();
        for (i, facet) in template.facets.iter().enumerate() {
            let before = prior.of[i].map(|k| &self.slots[k]);
            let unchanged =
                before.is_some_and(|s| Arc::ptr_eq(&s.facet, facet) && s.active == active[i]);
            if unchanged {
                // Its blocks read files or the environment: read anew each time.
                if active[i] && volatile[i] {
                    volatile_names.extend(names_of(facet));
                }
                continue;
            }
            // (A facet the last template had as it is has only names it knew.)
            if facet.config.iter().any(|b| !self.names.contains(&b.name)) {
                return None;
            }
            if let Some(s) = before.filter(|s| s.active) {
                changed.extend(names_of(&s.facet));
            }
            if active[i] {
                changed.extend(names_of(facet));
            }
        }
        for &k in &prior.removed {
            let s = &self.slots[k];
            if s.active {
                changed.extend(names_of(&s.facet));
            }
        }
        // A name may have changed: one whose value now is the one the last
        // composition saw changes nothing that reads it, and is not followed.
        let mut queue: Vec<String> = changed
            .into_iter()
            .chain(volatile_names.iter().cloned())
            .collect();
        let mut changed: FxHashSet<String> = FxHashSet::default();
        let mut considered: FxHashSet<String> = FxHashSet::default();
        while let Some(name) = queue.pop() {
            if !considered.insert(name.clone()) {
                continue;
            }
            if !volatile_names.contains(&name) && self.same_value(&name, resolver) {
                continue;
            }
            if changed.is_empty() {
                queue.extend(self.whole_scope.iter().cloned());
            }
            queue.extend(self.readers.get(&name).into_iter().flatten().cloned());
            changed.insert(name);
        }
        Some(Changes {
            changed,
            considered,
        })
    }

    /// Whether `name` reads now as the last composition read it.
    fn same_value(&self, name: &str, resolver: &Resolver<'_>) -> bool {
        let Some(block) = self.blocks.get(name) else {
            return false;
        };
        match (&block.value, resolver.scope_value(name)) {
            (Some(was), Ok(Some(now))) => was.equals(&now, Equality::IDENTICAL),
            (None, Ok(None)) => true,
            _ => false,
        }
    }
}

/// The block names an edit reached (see [`State::changed`]).
struct Changes {
    /// Those whose value differs from the last composition's (or that read files or
    /// the environment): what reads them may see something else.
    changed: FxHashSet<String>,
    /// Those that may have changed, whatever their value: their contributions
    /// changed, or they read a name of `changed`. Their `when`s and what they read
    /// may differ even where their value does not.
    considered: FxHashSet<String>,
}

/// What [`Entry::keep`] keeps of a facet collected, besides its step.
struct Kept {
    index: usize,
    reads: FxHashSet<String>,
    observed: Observations,
    origins: Range<u32>,
    spent_before: usize,
}

impl Entry {
    /// Keeps what collecting a facet gave (`step`).
    fn keep(kept: Kept, step: &Step) -> Entry {
        Entry {
            index: kept.index,
            reads: kept.reads,
            observed: kept.observed,
            contributions: step.contributions.clone(),
            exclusions: step.exclusions.clone(),
            origins: kept.origins,
            spent: step.spent - kept.spent_before,
        }
    }

    /// Whether the facet's expressions would see what they saw, though they read a
    /// `changed` name: every lookup they made themselves under a changed name finds
    /// what it found then (early cutoff). Their evaluation is a function of what
    /// their lookups find — values under other names are the same, the context
    /// values they read without a lookup too — so it would give the same
    /// contributions. What they read through those lookups (a block's value that
    /// reads other names) need not be looked at: a change there changes the
    /// block's name too, and what the lookup finds.
    fn sees_the_same(&self, resolver: &Resolver<'_>, changed: &FxHashSet<String>) -> bool {
        !self.observed.failed
            && self.observed.lookups.iter().all(|o| {
                if !changed.contains(&*o.path[0]) {
                    return true;
                }
                let path: Vec<&str> = o.path.iter().map(|k| &**k).collect();
                match (resolver.lookup(&path), &o.found) {
                    (Ok(None), None) => true,
                    (Ok(Some((now, at))), Some((then, was))) => {
                        at == *was && now.equals(then, Equality::IDENTICAL)
                    }
                    _ => false,
                }
            })
    }

    /// The entry as collecting the facet at index `i` now would keep it: its origins
    /// (in `from`) copied into `origins` under new ids, its facet index `i`.
    fn relocate(self, i: usize, from: &Origins, origins: &mut Origins) -> Entry {
        let start = origins.len() as u32;
        for k in self.origins.clone() {
            let mut origin = from.get(OriginId(k));
            if let Contributor::Facet(id) = &mut origin.contributor {
                id.index = i;
            }
            origins.add(origin);
        }
        let from_start = self.origins.start;
        let shift = |id: OriginId| OriginId(id.0 - from_start + start);
        Entry {
            contributions: self
                .contributions
                .iter()
                .map(|c| {
                    let mut c = relocate(c, shift);
                    c.order.1 = i + 1;
                    c
                })
                .collect(),
            exclusions: self
                .exclusions
                .into_iter()
                .map(|mut e| {
                    e.facet.index = i;
                    e
                })
                .collect(),
            origins: start..origins.len() as u32,
            index: i,
            ..self
        }
    }
}

/// `c` with every origin id mapped by `shift`.
fn relocate(c: &Contribution, shift: impl Fn(OriginId) -> OriginId + Copy) -> Contribution {
    let mut c = c.clone();
    c.map_origins(shift);
    c
}

/// Whether a facet calls a function that reads files or the environment (`file`,
/// `jsonnet`, `yaml`, `yamlString`, `env`): what those read may change with no facet
/// changing, so such a facet is collected every time and its blocks count as changed.
/// Looks at the facet's text, so a mention in a comment counts too (harmless).
fn reads_outside(template: &Template, facet: &Facet) -> bool {
    let Some(text) = template.files.text(facet.file) else {
        return true;
    };
    const NAMES: [&str; 5] = ["file", "jsonnet", "yaml", "yamlString", "env"];
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    NAMES.iter().any(|name| {
        text.match_indices(name).any(|(at, _)| {
            let before = at.checked_sub(1).map(|k| bytes[k]);
            if before.is_some_and(word) {
                return false;
            }
            let rest = &text[at + name.len()..];
            rest.trim_start().starts_with('(')
        })
    })
}

/// The config blocks' values as [`super::part`] keeps them: the context's keys that
/// are block names first (in the context's order), then the other blocks with a
/// value in `order`.
fn ordered_config(blocks: &FxHashMap<String, Block>, context: &Map, order: &[String]) -> Map {
    let mut config = Map::default();
    for key in context.keys() {
        if let Some(v) = blocks.get(&**key).and_then(|b| b.value.as_ref()) {
            config.insert(key.clone(), v.clone());
        }
    }
    for name in order {
        if !context.contains_key(name.as_str()) {
            if let Some(v) = blocks.get(name).and_then(|b| b.value.as_ref()) {
                config.insert(Arc::from(name.as_str()), v.clone());
            }
        }
    }
    config
}
