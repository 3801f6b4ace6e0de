//! Incremental composition (issue 25): what the activate → config → collect stages
//! found for one composition, kept for the next, so that after an edit only the
//! facets whose inputs changed are collected again.
//!
//! The rule is Salsa's: a facet's contributions are a function of the facet (its
//! parsed content, shared as one `Arc` while its file's text is unchanged), of
//! whether it is active, and of the values of the top-level names its expressions
//! read — directly, or through the config values and block `when`s they read, which
//! the [`Resolver`] records. If none of these changed, collecting it again would
//! give the same contributions, exclusions and origins, so they are replayed. What
//! "changed" means for a name:
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
//! A replayed facet keeps its origin ids: the next composition's origin table goes on
//! from this one's (shared in chunks, copy-on-write), and only the facets collected
//! again add origins to it; a table that has grown to twice its fresh length is
//! started afresh, the replayed facets' origins then copied under new ids. Keeping
//! the ids is what lets merging, validation and assembly take what an edit did not
//! reach from their own memos (`merge::identities`, `validate::unchanged`,
//! `assemble::component_values`).
//!
//! Activation and the finishing of the lists run whole every time. Any
//! error on the way (a failing expression, a cycle, the output budget) composes cold
//! instead, so a failure reads exactly as a cold composition's; this memo is only
//! ever updated by a composition that succeeded up to merging.

use super::part::{requirement_owners, Pieces};
use super::Part;
use super::{collect_base, collect_facet, facet_outputs, requires, Contribution, Exclusion, Step};
use crate::compose::activate::{Activated, Activation};
use crate::compose::config::{block_order, canonical_log, BlockIndex, Resolver};
use crate::compose::shared::inputs::Expressions;
use crate::compose::shared::origin::{Contributor, OriginId, Origins};
use crate::compose::shared::tracked::Tracked;
use crate::expr::host::TerraformOutputs;
use crate::expr::{Map, Scope};
use crate::template::{Facet, Template, TemplateId};
use crate::value::Equality;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

/// What stage 5 of one composition leaves for the next (see the module
/// documentation). Empty until the first composition.
#[derive(Default)]
pub struct Memo {
    state: Option<State>,
    /// How the last composition went: facets replayed and collected again.
    pub last: Reuse,
}

/// How much of the last composition came from the memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Active facets whose contributions were replayed.
    pub replayed: usize,
    /// Facets collected (again): changed, reading a changed name, or inactive.
    pub collected: usize,
    /// The composition ran cold (first run, an error, or inputs the memo cannot use).
    pub cold: bool,
}

struct State {
    context: Arc<Map>,
    /// The environment and Terraform outputs as text: any change invalidates all.
    fingerprint: String,
    /// Per facet path: the facet, whether it was active and whether it reads files
    /// or the environment (see [`reads_outside`]; found once per parsed facet).
    facets: FxHashMap<String, (Arc<Facet>, bool, bool)>,
    /// Every config block name of the template, of active facets or not.
    names: FxHashSet<String>,
    /// For each name, the blocks whose value read it.
    readers: Readers,
    /// Blocks whose value read the whole scope: changed whenever anything is.
    whole_scope: Vec<String>,
    /// The value of each block name of the active facets, as an expression read it.
    values: FxHashMap<String, Option<crate::expr::Value>>,
    /// Active facets collected without error, by path.
    entries: FxHashMap<String, Entry>,
    /// The origin table as collection left it: the entries' origin ids are ids in it.
    /// The next composition goes on from it, so a replayed facet keeps its ids.
    origins: Origins,
    /// How long the table was after the last collection that started it afresh: a
    /// table grown to twice that (the origins of facets collected again are left
    /// behind, unused) is started afresh by the next composition.
    fresh_len: usize,
}

/// One active facet's collection.
struct Entry {
    facet: Arc<Facet>,
    /// The facet's index in processing order when it was collected: its origins and
    /// exclusions name the facet by it.
    index: usize,
    reads: HashSet<String>,
    /// Sharing their fields with the composition's contributions.
    contributions: Vec<Contribution>,
    exclusions: Vec<Exclusion>,
    /// Its origins: these ids of the state's table, one after another.
    origins: Range<u32>,
    spent: usize,
}

impl Memo {
    /// Forgets everything: the next composition runs cold.
    pub fn clear(&mut self) {
        self.state = None;
    }

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

/// Stage 5 with the memo, for a template activated by stages 2–3: its part as
/// [`super::part`] collects it, facets whose inputs did not change replayed, and
/// this composition kept in `memo` for the next. `None` where a cold composition
/// must decide (the memo is then left for the caller to clear).
pub fn part(
    with: &Expressions<'_>,
    id: TemplateId,
    template: &Template,
    activation: Activated,
    context: Arc<Map>,
    memo: &mut Memo,
    origins: &mut Origins,
) -> Option<Part> {
    let fingerprint = format!("{:?}\n{:?}", with.environment, with.terraform);
    let active: Vec<bool> = activation
        .outcome
        .iter()
        .map(|o| *o != Activation::Inactive)
        .collect();
    let mut old = memo.state.take();
    let went_on = go_on(old.as_ref(), origins);
    let afresh = went_on.is_none();
    let volatile = volatile(template, old.as_ref());
    let resolver = over_every_block(with, template, &context, &active);
    let changed = old.as_ref().and_then(|s| {
        s.changed(
            template,
            &context,
            &fingerprint,
            &active,
            &volatile,
            &resolver,
        )
    });
    origins.begin(id);
    let run = Run {
        id,
        template,
        resolver: &resolver,
        activation: &activation,
        memoisable: active
            .iter()
            .zip(&volatile)
            .map(|(a, v)| *a && !v)
            .collect(),
    };
    let (collected, entries, reuse) = run.collect(changed.as_ref(), old.as_mut(), afresh, origins);
    drop(old);
    let fresh_len = went_on.unwrap_or(origins.len());
    if !collected.errors.is_empty() || collected.spent > with.limits.output_bytes {
        return None;
    }
    let kept_origins = origins.clone();
    let mut contributions = collected.contributions;
    super::in_application_order(&mut contributions);

    // The rest of the stage as `super::part` runs it.
    let owners = requirement_owners(template, &resolver, &activation, &contributions).ok()?;
    requires::check(&resolver, &owners).ok()?;
    let outputs = facet_outputs::collect(&resolver, &activation.active).ok()?;
    let messages = facet_outputs::messages(&resolver, &activation.active).ok()?;
    let order = block_order(template, &activation.active);
    let scope = resolver.materialize_all().ok()?;
    // The order a resolver over the active facets alone gives (see `ordered_config`).
    let config = ordered_config(&scope, &context, &order, &resolver);
    let mut config_log = resolver.block_log();
    canonical_log(&order, &mut config_log);
    let (readers, whole_scope, values) = block_readers(&resolver, &order)?;
    drop(resolver);
    memo.state = Some(State {
        context: context.clone(),
        fingerprint,
        facets: template
            .facets
            .iter()
            .zip(active.iter().zip(&volatile))
            .map(|(f, (a, v))| (f.path.clone(), (f.clone(), *a, *v)))
            .collect(),
        names: template
            .facets
            .iter()
            .flat_map(|f| f.config.iter().map(|b| b.name.clone()))
            .collect(),
        readers,
        whole_scope,
        values,
        entries,
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

/// A resolver with one index over every facet's blocks, so that every block name
/// read goes through it (and is recorded), active or not.
fn over_every_block<'t>(
    with: &Expressions<'t>,
    template: &'t Template,
    context: &Arc<Map>,
    active: &[bool],
) -> Resolver<'t> {
    let all: Vec<usize> = (0..template.facets.len()).collect();
    Resolver::over(
        with,
        template,
        context.clone(),
        Rc::new(BlockIndex::new(template, &all)),
        Some(Rc::new(active.to_vec())),
    )
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
fn volatile(template: &Template, old: Option<&State>) -> Vec<bool> {
    template
        .facets
        .iter()
        .map(|f| {
            let known = old.and_then(|s| s.facets.get(&f.path));
            match known {
                Some((was, _, volatile)) if Arc::ptr_eq(was, f) => *volatile,
                _ => reads_outside(template, f),
            }
        })
        .collect()
}

/// For each name, the blocks whose value read it.
type Readers = HashMap<String, Vec<String>>;

/// For each name, the blocks (of `order`) whose value read it; the blocks whose
/// value read the whole scope; and each block's value. `None` when a block's value
/// fails.
fn block_readers(resolver: &Resolver<'_>, order: &[String]) -> Option<BlockReads> {
    let mut readers = Readers::new();
    let mut whole_scope = Vec::new();
    let mut values = FxHashMap::default();
    for name in order {
        resolver.record();
        let looked = resolver.lookup(&[name.as_str()]);
        let reads = resolver.recorded();
        values.insert(name.clone(), looked.ok()?.map(|(value, _)| value));
        if reads.all {
            whole_scope.push(name.clone());
        }
        for read in reads.names {
            if read != *name {
                readers.entry(read).or_default().push(name.clone());
            }
        }
    }
    Some((readers, whole_scope, values))
}

/// What [`block_readers`] finds.
type BlockReads = (
    Readers,
    Vec<String>,
    FxHashMap<String, Option<crate::expr::Value>>,
);

/// One incremental collection of a template's facets.
struct Run<'a, 't> {
    id: TemplateId,
    template: &'t Template,
    resolver: &'a Resolver<'t>,
    activation: &'a Activated,
    /// Per facet: active, and reading neither files nor the environment.
    memoisable: Vec<bool>,
}

impl Run<'_, '_> {
    /// The base blueprint's components and every facet's, in collection order: a
    /// facet `old` kept whose reads miss `changed` replayed, the others collected.
    /// Returns the new entries and how many facets were replayed.
    ///
    /// `afresh`: `origins` starts empty, not from `old`'s table, so replayed facets'
    /// origins are copied into it under new ids.
    fn collect(
        &self,
        changed: Option<&HashSet<String>>,
        mut old: Option<&mut State>,
        afresh: bool,
        origins: &mut Origins,
    ) -> (Step, FxHashMap<String, Entry>, Reuse) {
        let (template, resolver) = (self.template, self.resolver);
        let mut collected = collect_base(self.id, template, resolver, origins);
        let mut entries = FxHashMap::default();
        let mut reuse = Reuse::default();
        for (i, facet) in template.facets.iter().enumerate() {
            let memoisable = self.memoisable[i];
            if let (true, Some(changed), Some(state)) = (memoisable, changed, old.as_deref_mut()) {
                let fits = state
                    .entries
                    .get(&facet.path)
                    .is_some_and(|e| Arc::ptr_eq(&e.facet, facet) && e.reads.is_disjoint(changed));
                if let Some(entry) = fits.then(|| state.entries.remove(&facet.path)).flatten() {
                    let entry = if afresh || entry.index != i {
                        entry.relocate(i, &state.origins, origins)
                    } else {
                        entry
                    };
                    collected.absorb(entry.replay(collected.spent));
                    entries.insert(facet.path.clone(), entry);
                    reuse.replayed += 1;
                    continue;
                }
            }
            reuse.collected += 1;
            let start = origins.len();
            resolver.record();
            let step = collect_facet(
                self.id,
                template,
                resolver,
                self.activation,
                i,
                origins,
                collected.spent,
            );
            let reads = resolver.recorded();
            if memoisable && step.errors.is_empty() && !reads.all {
                let kept = Kept {
                    facet,
                    index: i,
                    reads: reads.names,
                    origins: start as u32..origins.len() as u32,
                    spent_before: collected.spent,
                };
                let entry = Entry::keep(kept, &step);
                entries.insert(facet.path.clone(), entry);
            }
            collected.absorb(step);
        }
        (collected, entries, reuse)
    }
}

impl State {
    /// The block names whose value may differ from this state's; `None`: any may.
    fn changed(
        &self,
        template: &Template,
        context: &Arc<Map>,
        fingerprint: &str,
        active: &[bool],
        volatile: &[bool],
        resolver: &Resolver<'_>,
    ) -> Option<HashSet<String>> {
        let same_context = Arc::ptr_eq(&self.context, context)
            || crate::expr::Value::map((*self.context).clone()).equals(
                &crate::expr::Value::map((**context).clone()),
                Equality::IDENTICAL,
            );
        if !same_context || self.fingerprint != fingerprint {
            return None;
        }
        let names_of = |f: &Facet| f.config.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
        let mut changed: HashSet<String> = HashSet::new();
        // Read anew each time, whatever their value.
        let mut volatile_names: HashSet<String> = HashSet::new();
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        for (i, facet) in template.facets.iter().enumerate() {
            if facet.config.iter().any(|b| !self.names.contains(&b.name)) {
                return None;
            }
            seen.insert(facet.path.as_str());
            let before = self.facets.get(&facet.path);
            let unchanged = before.is_some_and(|(was, was_active, _)| {
                Arc::ptr_eq(was, facet) && *was_active == active[i]
            });
            if unchanged {
                // Its blocks read files or the environment: read anew each time.
                if active[i] && volatile[i] {
                    volatile_names.extend(names_of(facet));
                }
                continue;
            }
            if let Some((was, true, _)) = before {
                changed.extend(names_of(was));
            }
            if active[i] {
                changed.extend(names_of(facet));
            }
        }
        for (path, (was, was_active, _)) in &self.facets {
            if *was_active && !seen.contains(path.as_str()) {
                changed.extend(names_of(was));
            }
        }
        // A name may have changed: one whose value now is the one the last
        // composition saw changes nothing that reads it, and is not followed.
        let mut queue: Vec<String> = changed
            .into_iter()
            .chain(volatile_names.iter().cloned())
            .collect();
        let mut changed: HashSet<String> = HashSet::new();
        let mut considered: HashSet<String> = HashSet::new();
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
        Some(changed)
    }

    /// Whether `name` reads now as the last composition read it.
    fn same_value(&self, name: &str, resolver: &Resolver<'_>) -> bool {
        let Some(was) = self.values.get(name) else {
            return false;
        };
        match (was, resolver.lookup(&[name])) {
            (Some(was), Ok(Some((now, _)))) => was.equals(&now, Equality::IDENTICAL),
            (None, Ok(None)) => true,
            _ => false,
        }
    }
}

/// What [`Entry::keep`] keeps of a facet collected, besides its step.
struct Kept<'a> {
    facet: &'a Arc<Facet>,
    index: usize,
    reads: HashSet<String>,
    origins: Range<u32>,
    spent_before: usize,
}

impl Entry {
    /// Keeps what collecting a facet gave (`step`).
    fn keep(kept: Kept<'_>, step: &Step) -> Entry {
        Entry {
            facet: kept.facet.clone(),
            index: kept.index,
            reads: kept.reads,
            contributions: step.contributions.clone(),
            exclusions: step.exclusions.clone(),
            origins: kept.origins,
            spent: step.spent - kept.spent_before,
        }
    }

    /// This facet's contributions as collecting it now gives them (its origins are
    /// in the table already).
    fn replay(&self, spent_before: usize) -> Step {
        Step {
            contributions: self.contributions.clone(),
            exclusions: self.exclusions.clone(),
            errors: Vec::new(),
            spent: spent_before + self.spent,
        }
    }

    /// The entry as collecting the facet at index `i` now would keep it: its origins
    /// (in `from`) copied into `origins` under new ids, its facet index `i`.
    fn relocate(self, i: usize, from: &Origins, origins: &mut Origins) -> Entry {
        let start = origins.len() as u32;
        for k in self.origins.clone() {
            let mut origin = from.get(OriginId(k)).clone();
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
    Contribution {
        kind: c.kind,
        id: c.id.clone(),
        order: c.order,
        strategy: c.strategy,
        fields: Arc::new(
            c.fields
                .iter()
                .map(|(k, v)| (*k, relocate_tracked(v, shift)))
                .collect(),
        ),
        identity_only: c.identity_only,
        origin: shift(c.origin),
    }
}

fn relocate_tracked(t: &Tracked, shift: impl Fn(OriginId) -> OriginId + Copy) -> Tracked {
    match t {
        Tracked::Leaf(v, o) => Tracked::Leaf(v.clone(), shift(*o)),
        Tracked::List(items, o) => Tracked::List(
            items.iter().map(|t| relocate_tracked(t, shift)).collect(),
            shift(*o),
        ),
        Tracked::Map(entries, o) => Tracked::Map(
            Box::new(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), relocate_tracked(v, shift)))
                    .collect(),
            ),
            shift(*o),
        ),
    }
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
/// value in `order`. `scope` is the resolver's whole scope.
fn ordered_config(scope: &Map, context: &Map, order: &[String], resolver: &Resolver<'_>) -> Map {
    let mut config = Map::default();
    for key in context.keys() {
        if resolver.has_block(key) {
            if let Some(v) = scope.get(key) {
                config.insert(key.clone(), v.clone());
            }
        }
    }
    for name in order {
        if !context.contains_key(name.as_str()) {
            if let Some((key, v)) = scope.get_key_value(name.as_str()) {
                config.insert(key.clone(), v.clone());
            }
        }
    }
    config
}
