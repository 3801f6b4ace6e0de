//! Stage 4, config: facet config blocks merged by name and evaluated lazily (S6).
//!
//! A [`Resolver`] is the scope every expression of a composition reads. Names that are
//! config blocks resolve into the blocks; everything else reads the context values.
//! Block values are computed on first read, one leaf at a time, and memoised:
//!
//! * a reference to the path being computed, or to one of its ancestors, reads the
//!   context value underneath (`workers: ${cluster.workers ?? 2}` inside block
//!   `cluster` reads the input `cluster.workers`);
//! * any other reference to a path still being computed is a cycle, reported whole;
//! * a block's `when` does not see the block itself (a "set when unset" guard would
//!   otherwise cancel itself);
//! * where a context value and a block set the same path, [`Precedence`] decides (S4).

use crate::compose::model::precedence::Precedence;
use crate::compose::shared::evaluate::{eval_condition, eval_node, nest};
use crate::compose::{model::inputs::Environment, shared::host::TemplateHost};
use crate::compose::{model::inputs::Limits, shared::expressions::Expressions};
use crate::expr::host::{Host, TerraformOutputs};
use crate::expr::{Engine, ExprError, Map, Peek, Scope, Value};
use crate::files::Diagnostic;
use crate::template::{ConfigBlock, Facet, Strategy, Template};
use crate::yaml::{Node, NodeKind};
use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Stack left before a config leaf is evaluated on a fresh segment (an unoptimised
/// build spends tens of KiB per link of a chain), and the size of each new segment.
const STACK_RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 8 * 1024 * 1024;

/// A merged, unevaluated config value: maps merge key by key, anything else is a leaf
/// written by one block.
#[derive(Clone, Debug)]
enum Raw {
    Map(IndexMap<Arc<str>, Raw, FxBuildHasher>),
    Leaf(Leaf),
}

#[derive(Clone, Debug)]
pub struct Leaf {
    pub node: Node,
    /// Index of the facet (processing order) that wrote it.
    pub facet: usize,
}

impl Raw {
    fn from_node(node: &Node, facet: usize) -> Raw {
        match &node.kind {
            NodeKind::Map(entries) => Raw::Map(
                entries
                    .iter()
                    .map(|(k, v)| (Arc::clone(&k.name), Raw::from_node(v, facet)))
                    .collect(),
            ),
            _ => Raw::Leaf(Leaf {
                node: node.clone(),
                facet,
            }),
        }
    }

    /// S6: maps deep-merge, later keys win; anything else replaces.
    fn merge(&mut self, overlay: Raw) {
        match (self, overlay) {
            (Raw::Map(base), Raw::Map(over)) => {
                for (k, v) in over {
                    match base.get_mut(&k) {
                        Some(existing) => existing.merge(v),
                        None => {
                            base.insert(k, v);
                        }
                    }
                }
            }
            (base, over) => *base = over,
        }
    }
}

/// One block contribution of an active facet, in application order.
#[derive(Clone, Debug)]
struct BlockContribution<'t> {
    pub facet: usize,
    pub block: &'t ConfigBlock,
}

/// What happened to one config block contribution (for `explain`).
#[derive(Clone, Debug)]
pub struct BlockRecord {
    pub name: String,
    pub facet: usize,
    pub position: usize,
    pub strategy: Strategy,
    /// False when the block's `when` excluded it.
    pub included: bool,
}

#[derive(Clone, Debug)]
enum Frame {
    /// Computing the config leaf at this path.
    Leaf(Vec<Arc<str>>),
    /// Evaluating the `when`s of this block: its own name reads the context.
    Guard(String),
}

/// What a composition's expressions see (S4, S6). Not shared between threads: its
/// memos are plain cells. A thread of its own gets a [`Resolver::fresh`] one, which
/// computes again what it reads.
pub struct Resolver<'t> {
    pub template: &'t Template,
    pub engine: &'t Engine,
    pub context: Arc<Map>,
    pub environment: &'t Environment,
    pub terraform: &'t TerraformOutputs,
    pub limits: Limits,
    pub work: Option<&'t crate::expr::work::Work>,
    pub memory: crate::compose::shared::memory::Memory,
    /// Block contributions by name, in application order (of every facet of `index`;
    /// `active` says which count).
    blocks: Arc<BlockIndex<'t>>,
    /// Per facet, whether its blocks count; `None`: all of `blocks` do.
    active: Option<Arc<Vec<bool>>>,
    /// Whether reads are recorded at all: only activation needs them (a resolver
    /// over a filtered index), and recording costs allocations per config leaf.
    tracking: bool,
    /// Names read while recording (see [`Resolver::record`]), innermost last.
    reads: RefCell<Vec<Reads>>,
    /// What each memoised leaf and merged block read while it was computed, so a
    /// cache hit still records the reads behind it.
    /// (These caches are looked up for every config value an expression reads:
    /// hashed with FxHash, not SipHash.)
    memo_reads: RefCell<FxHashMap<Vec<Arc<str>>, Reads>>,
    merged_reads: RefCell<FxHashMap<String, Reads>>,
    merged: RefCell<FxHashMap<String, Option<Arc<Raw>>>>,
    merging: RefCell<FxHashSet<String>>,
    memo: RefCell<FxHashMap<Vec<Arc<str>>, Value>>,
    stack: RefCell<Vec<Frame>>,
    /// The leaves on `stack`, so that finding a cycle costs one lookup per leaf, not
    /// a scan of the stack (a chain of n blocks was quadratic).
    open: RefCell<FxHashSet<Vec<Arc<str>>>>,
    log: RefCell<Vec<BlockRecord>>,
    /// `(facet, position)` of every logged block its `when` let in: answering
    /// `block_included` by scanning the log made a template of many blocks quadratic.
    included: RefCell<FxHashSet<(usize, usize)>>,
    /// Whether a context value or a block's value wins at the same path.
    pub precedence: Precedence,
    /// While observing, the lookups expressions made (see [`Resolver::observe`]).
    observed: RefCell<Option<Observations>>,
    /// Values of `${…}` strings that call no host function, by the string's shared
    /// text (see [`Resolver::render_shared`]).
    rendered: RefCell<Rendered>,
}

/// Rendered strings by the address of their text, each entry keeping its text alive
/// so that the address cannot be reused by another string while it is in the map.
type Rendered = FxHashMap<usize, (Arc<str>, Value)>;

/// Rendered strings remembered before the map starts over: the repeated texts of a
/// template come back at once, one-off texts are not kept at all.
const RENDERED_LIMIT: usize = 4096;

impl<'t> Resolver<'t> {
    /// A resolver over the config blocks of `active` facets (indices in processing order).
    pub fn new(
        with: &Expressions<'t>,
        template: &'t Template,
        context: Arc<Map>,
        active: &[usize],
    ) -> Resolver<'t> {
        let blocks = Arc::new(BlockIndex::new(template, active));
        Resolver::over(with, template, context, blocks, None)
    }

    /// A resolver over a prebuilt index with the facets `active` marks: building it
    /// costs nothing per round of activation.
    pub fn over(
        with: &Expressions<'t>,
        template: &'t Template,
        context: Arc<Map>,
        blocks: Arc<BlockIndex<'t>>,
        active: Option<Arc<Vec<bool>>>,
    ) -> Resolver<'t> {
        Resolver {
            template,
            engine: with.engine,
            context,
            environment: with.environment,
            terraform: with.terraform,
            limits: with.limits,
            work: with.work,
            memory: with.memory,
            blocks,
            tracking: active.is_some(),
            active,
            reads: RefCell::new(Vec::new()),
            memo_reads: RefCell::default(),
            merged_reads: RefCell::default(),
            merged: RefCell::default(),
            merging: RefCell::default(),
            memo: RefCell::default(),
            stack: RefCell::new(Vec::new()),
            open: RefCell::default(),
            log: RefCell::new(Vec::new()),
            included: RefCell::default(),
            observed: RefCell::new(None),
            precedence: with.precedence,
            rendered: RefCell::default(),
        }
    }

    /// A resolver over the same blocks, context and facets with nothing computed yet,
    /// to be moved to another thread: it gives every lookup the answer this one gives.
    pub fn fresh(&self) -> Resolver<'t> {
        let with = Expressions {
            engine: self.engine,
            environment: self.environment,
            terraform: self.terraform,
            limits: self.limits,
            precedence: self.precedence,
            work: self.work,
            memory: self.memory,
        };
        Resolver::over(
            &with,
            self.template,
            self.context.clone(),
            Arc::clone(&self.blocks),
            self.active.clone(),
        )
    }

    /// `text` (a string holding `${…}`) rendered against this resolver's scope.
    ///
    /// Templates repeat the same expression strings in facet after facet, and a
    /// parsed template shares each repeated text (one allocation: see
    /// `yaml::intern`). Such a text that calls no host function renders to the same
    /// value every time against one scope, so it is rendered once and its value
    /// remembered by the text's address. Not while reads are recorded (the told path
    /// needs each facet's own reads), and not for a text held only once: it will not
    /// come again.
    pub fn render_shared(&self, text: &Arc<str>, host: &dyn Host) -> Result<Value, ExprError> {
        if self.tracking || Arc::strong_count(text) < 2 {
            return self.engine.render_template(text, self, host);
        }
        let key = Arc::as_ptr(text) as *const u8 as usize;
        if let Some((_, value)) = self.rendered.borrow().get(&key) {
            return Ok(value.clone());
        }
        let (value, pure) = self.engine.render_template_pure(text, self, host)?;
        if pure {
            let mut rendered = self.rendered.borrow_mut();
            if rendered.len() >= RENDERED_LIMIT {
                rendered.clear();
            }
            rendered.insert(key, (Arc::clone(text), value.clone()));
        }
        Ok(value)
    }

    /// Starts recording the top-level names expressions look up (directly or through
    /// the config values and block `when`s they read).
    pub fn record(&self) {
        if !self.tracking {
            return;
        }
        self.reads.borrow_mut().push(Reads::default());
    }

    /// Stops the innermost recording and returns what it saw; the reads also count
    /// for the recording around it.
    pub fn recorded(&self) -> Reads {
        if !self.tracking {
            return Reads::default();
        }
        let mut stack = self.reads.borrow_mut();
        let reads = stack.pop().unwrap_or_default();
        if let Some(outer) = stack.last_mut() {
            outer.absorb(&reads);
        }
        reads
    }

    fn note_read(&self, name: &str) {
        if !self.tracking {
            return;
        }
        if let Some(top) = self.reads.borrow_mut().last_mut() {
            if !top.names.contains(name) {
                top.names.insert(name.to_string());
            }
        }
    }

    fn note_reads(&self, reads: &Reads) {
        if let Some(top) = self.reads.borrow_mut().last_mut() {
            top.absorb(reads);
        }
    }

    /// The contributions to block `name` that count, in application order.
    fn block(&self, name: &str) -> Option<Vec<BlockContribution<'t>>> {
        let all = self.blocks.by_name.get(name)?;
        let counted: Vec<BlockContribution<'t>> = match &self.active {
            None => all.clone(),
            Some(active) => all
                .iter()
                .filter(|c| active.get(c.facet).copied().unwrap_or(false))
                .cloned()
                .collect(),
        };
        (!counted.is_empty()).then_some(counted)
    }

    /// Whether a block of the index (of an active facet or not) has this name.
    pub fn has_block_name(&self, name: &str) -> bool {
        self.blocks.contains(name)
    }

    /// Whether a block of an active facet has this name.
    pub fn has_block(&self, name: &str) -> bool {
        match (&self.active, self.blocks.by_name.get(name)) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(active), Some(all)) => all
                .iter()
                .any(|c| active.get(c.facet).copied().unwrap_or(false)),
        }
    }
}

/// Top-level names an evaluation looked up; `all` when it read the whole scope.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    pub names: FxHashSet<String>,
    pub all: bool,
}

impl Reads {
    fn absorb(&mut self, other: &Reads) {
        self.all |= other.all;
        for n in &other.names {
            if !self.names.contains(n) {
                self.names.insert(n.clone());
            }
        }
    }
}

/// Config block contributions by name, in application order (S3).
pub struct BlockIndex<'t> {
    by_name: IndexMap<String, Vec<BlockContribution<'t>>, FxBuildHasher>,
}

impl<'t> BlockIndex<'t> {
    /// The contributions of the facets `facets` (indices in processing order).
    pub fn new(template: &'t Template, facets: &[usize]) -> BlockIndex<'t> {
        let active = facets;
        let mut contributions: Vec<(i64, usize, usize, BlockContribution<'t>)> = Vec::new();
        for &i in active {
            let facet: &Facet = &template.facets[i];
            for block in &facet.config {
                let ordinal = block.ordinal.unwrap_or(facet.ordinal);
                contributions.push((
                    ordinal,
                    i,
                    block.position,
                    BlockContribution { facet: i, block },
                ));
            }
        }
        // S3: (effective ordinal, facet order, position in file); later wins.
        contributions.sort_by_key(|(o, f, p, _)| (*o, *f, *p));
        let mut by_name: IndexMap<String, Vec<BlockContribution<'t>>, FxBuildHasher> =
            IndexMap::default();
        for (_, _, _, c) in contributions {
            // A name is copied once, not once per block of that name.
            match by_name.get_mut(c.block.name.as_str()) {
                Some(list) => list.push(c),
                None => {
                    by_name.insert(c.block.name.clone(), vec![c]);
                }
            }
        }
        BlockIndex { by_name }
    }

    /// Whether a block of the index's facets has this name.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Every block name of the index's facets.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

impl<'t> Resolver<'t> {
    pub fn host_for(&self, facet: usize) -> TemplateHost<'_> {
        TemplateHost {
            tree: &self.template.tree,
            file: &self.template.facets[facet].path,
            environment: self.environment,
            terraform: self.terraform,
            jsonnet: self.limits.jsonnet,
            work: self.work,
        }
    }

    /// The merged raw value of block `name`, or `None` when no included block defines
    /// it (absent, every `when` false, or removed).
    fn merged(&self, name: &str) -> Result<Option<Arc<Raw>>, Diagnostic> {
        if let Some(m) = self.merged.borrow().get(name) {
            if let Some(reads) = self.merged_reads.borrow().get(name) {
                self.note_reads(reads);
            }
            return Ok(m.clone());
        }
        let Some(contributions) = self.block(name) else {
            return Ok(None);
        };
        if !self.merging.borrow_mut().insert(name.to_string()) {
            return Err(Diagnostic::error(format!(
                "the `when` of config block `{name}` depends on the block itself"
            ))
            .with_primary(contributions[0].block.name_span, "this block")
            .with_help("a block's `when` may read other blocks, but not through a chain that leads back to it"));
        }
        self.stack.borrow_mut().push(Frame::Guard(name.to_string()));
        self.record();
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.merge_block(name, &contributions)
        });
        let reads = self.recorded();
        self.stack.borrow_mut().pop();
        self.merging.borrow_mut().remove(name);
        if self.tracking {
            self.merged_reads
                .borrow_mut()
                .insert(name.to_string(), reads);
        }
        let merged = result?.map(Arc::new);
        self.merged
            .borrow_mut()
            .insert(name.to_string(), merged.clone());
        Ok(merged)
    }

    fn merge_block(
        &self,
        name: &str,
        contributions: &[BlockContribution<'t>],
    ) -> Result<Option<Raw>, Diagnostic> {
        let mut merged: Option<Raw> = None;
        for c in contributions {
            let included = match &c.block.when {
                Some(cond) => {
                    let host = self.host_for(c.facet);
                    let facet = &self.template.facets[c.facet];
                    let context = || {
                        format!(
                            "in the `when` of config block `{name}` of facet `{}`",
                            facet.name
                        )
                    };
                    eval_condition(
                        self.engine,
                        cond,
                        self,
                        &host,
                        &self.template.files,
                        &context,
                    )?
                }
                None => true,
            };
            if included {
                self.included
                    .borrow_mut()
                    .insert((c.facet, c.block.position));
            }
            self.log.borrow_mut().push(BlockRecord {
                name: name.to_string(),
                facet: c.facet,
                position: c.block.position,
                strategy: c.block.strategy,
                included,
            });
            if !included {
                continue;
            }
            let raw = Raw::from_node(&c.block.body, c.facet);
            merged = match (c.block.strategy, merged) {
                (Strategy::Remove, _) => None,
                (Strategy::Replace, _) | (Strategy::Merge, None) => Some(raw),
                (Strategy::Merge, Some(mut base)) => {
                    base.merge(raw);
                    Some(base)
                }
            };
        }
        Ok(merged)
    }

    /// True when the expression being evaluated must read `path` from the context:
    /// it is the block guard's own name, or an ancestor-or-self of the leaf computed.
    fn reads_underneath(&self, path: &[&str]) -> bool {
        match self.stack.borrow().last() {
            Some(Frame::Guard(name)) => path.first() == Some(&name.as_str()),
            Some(Frame::Leaf(leaf)) => {
                path.len() <= leaf.len() && path.iter().zip(leaf).all(|(a, b)| *a == &**b)
            }
            None => false,
        }
    }

    fn context_lookup(&self, root: &str) -> Option<(Value, usize)> {
        self.context.get(root).map(|v| (v.clone(), 1))
    }

    /// The value of config leaf `leaf` at `path`, computed once.
    fn leaf_value(&self, path: Vec<Arc<str>>, leaf: &Leaf) -> Result<Value, Diagnostic> {
        if let Some(v) = self.memo.borrow().get(&path) {
            if let Some(reads) = self.memo_reads.borrow().get(&path) {
                self.note_reads(reads);
            }
            return Ok(v.clone());
        }
        let cycle_start = if self.open.borrow().contains(&path) {
            self.stack
                .borrow()
                .iter()
                .position(|f| matches!(f, Frame::Leaf(p) if *p == path))
        } else {
            None
        };
        if let Some(start) = cycle_start {
            let stack = self.stack.borrow();
            let mut chain: Vec<String> = stack[start..]
                .iter()
                .filter_map(|f| match f {
                    Frame::Leaf(p) => Some(p.join(".")),
                    Frame::Guard(_) => None,
                })
                .collect();
            chain.push(path.join("."));
            return Err(Diagnostic::error(format!(
                "config values depend on each other in a cycle: {}",
                chain.join(" -> ")
            ))
            .with_primary(leaf.node.span, "this value is part of the cycle")
            .with_help("break the cycle, or read the input value with the block's own name"));
        }
        self.stack.borrow_mut().push(Frame::Leaf(path.clone()));
        self.open.borrow_mut().insert(path.clone());
        let host = self.host_for(leaf.facet);
        let facet = &self.template.facets[leaf.facet];
        let dotted = path.join(".");
        let context = || format!("in config value `{dotted}` of facet `{}`", facet.name);
        self.record();
        // A value may read a value that reads a value…: a chain as long as the
        // template's blocks, each link several frames deep. The stack grows on the
        // heap as the chain needs, as Go's does for Windsor, instead of overflowing.
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            eval_node(
                self.engine,
                &leaf.node,
                self,
                &host,
                &self.template.files,
                &context,
            )
        });
        let reads = self.recorded();
        self.stack.borrow_mut().pop();
        self.open.borrow_mut().remove(&path);
        let keys: Vec<&str> = path.iter().map(|k| &**k).collect();
        let value = self
            .precedence
            .resolve(result?, context_at(&self.context, &keys).as_ref());
        if self.tracking {
            self.memo_reads.borrow_mut().insert(path.clone(), reads);
        }
        self.memo.borrow_mut().insert(path, value.clone());
        Ok(value)
    }

    /// Evaluates a whole raw subtree at `path` into a value, merged over the context
    /// value at the same path (facet config wins, S4).
    fn materialize(
        &self,
        path: &mut Vec<Arc<str>>,
        raw: &Raw,
        under: Option<&Value>,
    ) -> Result<Value, Diagnostic> {
        match raw {
            Raw::Leaf(leaf) => self.leaf_value(path.clone(), leaf),
            // An operator's non-map value replaces a block's whole map.
            Raw::Map(_)
                if self.precedence == Precedence::ContextWins
                    && under.is_some_and(|u| {
                        !matches!(u, Value::Map(_) | Value::Nil)
                            && !crate::compose::model::precedence::is_empty(u)
                    }) =>
            {
                Ok(under.cloned().unwrap_or(Value::Nil))
            }
            Raw::Map(entries) => {
                let mut map: Map = match under {
                    Some(Value::Map(m)) => (**m).clone(),
                    _ => Map::with_capacity(entries.len()),
                };
                for (k, child) in entries {
                    path.push(k.clone());
                    let below = under.and_then(|u| u.as_map()).and_then(|m| m.get(k));
                    let v = self.materialize(path, child, below);
                    path.pop();
                    map.insert(k.clone(), v?);
                }
                Ok(Value::map(map))
            }
        }
    }

    fn lookup_config(
        &self,
        path: &[&str],
        raw: &Raw,
    ) -> Result<Option<(Value, usize)>, Diagnostic> {
        let root = path[0];
        let mut node = raw;
        let mut depth = 1;
        loop {
            match node {
                Raw::Leaf(leaf) => {
                    let p: Vec<Arc<str>> = path[..depth].iter().map(|s| Arc::from(*s)).collect();
                    return Ok(Some((self.leaf_value(p, leaf)?, depth)));
                }
                Raw::Map(entries) => {
                    if depth == path.len() {
                        let mut p: Vec<Arc<str>> = path.iter().map(|s| Arc::from(*s)).collect();
                        let under = context_at(&self.context, path);
                        let v = self.materialize(&mut p, node, under.as_ref())?;
                        return Ok(Some((v, depth)));
                    }
                    match entries.get(path[depth]) {
                        Some(child) => {
                            node = child;
                            depth += 1;
                        }
                        // Not written by any block: the context value shows through.
                        None => return Ok(self.context_lookup(root)),
                    }
                }
            }
        }
    }

    /// Every block contribution looked at so far, in order.
    /// Whether the block at `position` of `facet` is in effect (its `when` holds),
    /// evaluating the `when`s of the blocks named `name` if nobody has yet.
    pub fn block_included(
        &self,
        name: &str,
        facet: usize,
        position: usize,
    ) -> Result<bool, Diagnostic> {
        self.merged(name)?;
        Ok(self.included.borrow().contains(&(facet, position)))
    }

    pub fn block_log(&self) -> Vec<BlockRecord> {
        self.log.borrow().clone()
    }

    /// What the whole scope ([`Resolver::materialize_all`]) holds at block `name`,
    /// evaluated at the top level (outside any expression): the block's value over
    /// the context value, or the context value alone where no included block defines
    /// it.
    pub fn scope_value(&self, name: &str) -> Result<Option<Value>, Diagnostic> {
        let under = self.context.get(name);
        match self.merged(name)? {
            Some(raw) => {
                let key: Arc<str> = Arc::from(name);
                let v = self.materialize(&mut vec![key], &raw, under)?;
                Ok(Some(v))
            }
            None => Ok(under.cloned()),
        }
    }

    /// The whole scope as a map: context values with every block's value over them.
    pub fn materialize_all(&self) -> Result<Map, Diagnostic> {
        let mut map = (*self.context).clone();
        for name in self.blocks.by_name.keys() {
            if !self.has_block(name) {
                continue;
            }
            if self.reads_underneath(&[name.as_str()]) {
                continue;
            }
            // Where no included block defines the name, the context value stays.
            if let Some(v) = self.scope_value(name)? {
                map.insert(Arc::from(name.as_str()), v);
            }
        }
        Ok(map)
    }
}

/// The context value at `path`, if every step is a map key.
fn context_at(context: &Map, path: &[&str]) -> Option<Value> {
    let mut cur = context.get(path[0])?.clone();
    for seg in &path[1..] {
        cur = cur.as_map()?.get(seg)?.clone();
    }
    Some(cur)
}

impl Scope for Resolver<'_> {
    fn lookup(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError> {
        let found = self.look_up(path);
        if self.tracking {
            self.note_observed(path, &found);
        }
        found
    }

    fn all(&self) -> Result<Value, ExprError> {
        if let Some(top) = self.reads.borrow_mut().last_mut() {
            top.all = true;
        }
        self.materialize_all().map(Value::map).map_err(nest)
    }

    /// Names no config block defines read straight from the context values.
    fn peek(&self, root: &str) -> Peek<'_> {
        if self.blocks.by_name.contains_key(root) {
            return Peek::Lookup;
        }
        match self.context.get(root) {
            Some(v) => Peek::Value(v),
            None => Peek::Undefined,
        }
    }
}

/// A lookup of a path under a config block name that an expression made itself (not
/// one made while a config value or a block's `when` was computed for it), and what
/// it found.
#[derive(Clone, Debug)]
pub struct Observed {
    pub path: Box<[Arc<str>]>,
    pub found: Option<(Value, usize)>,
}

/// The lookups under block names that expressions made while observing (see
/// [`Resolver::observe`]), each path once.
#[derive(Clone, Debug, Default)]
pub struct Observations {
    pub lookups: Vec<Observed>,
    /// A lookup failed (its error is not kept).
    pub failed: bool,
}

impl Resolver<'_> {
    /// Starts keeping the lookups under block names that expressions make
    /// themselves, with what each found (only where reads are recorded): what an
    /// evaluation saw of the config blocks, to tell later whether it would see the
    /// same (see `collect::memo`).
    pub fn observe(&self) {
        if self.tracking {
            *self.observed.borrow_mut() = Some(Observations::default());
        }
    }

    /// Stops observing and returns what was seen since [`Resolver::observe`].
    pub fn observed(&self) -> Observations {
        self.observed.borrow_mut().take().unwrap_or_default()
    }

    fn note_observed(&self, path: &[&str], found: &Result<Option<(Value, usize)>, ExprError>) {
        let Some(root) = path.first() else {
            return;
        };
        // Only an expression's own lookups: none of a config value or `when` computed
        // for it (those are on the stack), and none of a context value alone.
        if !self.stack.borrow().is_empty() || !self.blocks.contains(root) {
            return;
        }
        let mut observed = self.observed.borrow_mut();
        let Some(observed) = observed.as_mut() else {
            return;
        };
        let Ok(found) = found else {
            observed.failed = true;
            return;
        };
        let same = |o: &&Observed| {
            o.path.len() == path.len() && o.path.iter().zip(path).all(|(a, b)| &**a == *b)
        };
        if !observed.lookups.iter().any(|o| same(&o)) {
            observed.lookups.push(Observed {
                path: path.iter().map(|k| Arc::from(*k)).collect(),
                found: found.clone(),
            });
        }
    }

    fn look_up(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError> {
        let Some(root) = path.first() else {
            return Ok(None);
        };
        // Recorded whether or not a block has the name now: one may appear later.
        self.note_read(root);
        if !self.has_block(root) || self.reads_underneath(path) {
            return Ok(self.context_lookup(root));
        }
        match self.merged(root).map_err(nest)? {
            None => Ok(self.context_lookup(root)),
            Some(raw) => self.lookup_config(path, &raw).map_err(nest),
        }
    }
}

/// The config blocks of every part in one map (later parts over earlier ones); the
/// first part whose config failed fails it.
pub fn merged(configs: &[Result<Map, Diagnostic>]) -> Result<Map, Vec<Diagnostic>> {
    let mut config = Value::map(Map::default());
    for part_config in configs {
        let part = part_config.clone().map_err(|d| vec![d])?;
        crate::value::edit::deep_merge(&mut config, &Value::map(part));
    }
    Ok(match config {
        Value::Map(m) => Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone()),
        _ => Map::default(),
    })
}

/// Config block names of the `active` facets in the order of their first
/// contribution (S3): the order a block index over those facets lists them in.
pub(crate) fn block_order(template: &Template, active: &[usize]) -> Vec<String> {
    let mut firsts: Vec<((i64, usize, usize), &str)> = Vec::new();
    for &i in active {
        let facet = &template.facets[i];
        for block in &facet.config {
            let ordinal = block.ordinal.unwrap_or(facet.ordinal);
            firsts.push(((ordinal, i, block.position), &block.name));
        }
    }
    firsts.sort_by_key(|(order, _)| *order);
    let mut seen = HashSet::new();
    firsts
        .into_iter()
        .filter(|(_, name)| seen.insert(*name))
        .map(|(_, name)| name.to_string())
        .collect()
}

/// Puts the block log in a fixed order, whatever order the blocks were first read
/// in: by block name as `order` lists them, each name's contributions in
/// application order (as they were logged).
pub(crate) fn canonical_log(order: &[String], log: &mut [BlockRecord]) {
    let rank: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(k, n)| (n.as_str(), k))
        .collect();
    log.sort_by_key(|r| rank.get(r.name.as_str()).copied().unwrap_or(usize::MAX));
}

/// Config blocks as expressions read them (S4, S6).
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, Fixture};

    /// Block `name` evaluated whole, as compact JSON.
    fn read(fx: &Fixture, name: &str) -> String {
        fx.resolved(|resolver, _| {
            let config = resolver
                .materialize_all()
                .unwrap_or_else(|d| panic!("the config resolves: {}", d.message));
            config
                .get(name)
                .map_or("none".into(), crate::value::json::compact)
        })
    }

    #[test]
    fn blocks_of_one_name_merge_in_ordinal_order() {
        let fx = Fixture::new(&[
            (
                "facets/a.yaml",
                &facet("a", "ordinal: 200\nconfig:\n  - name: net\n    value: {cidr: 10.1.0.0/16}\n"),
            ),
            (
                "facets/b.yaml",
                &facet("b", "ordinal: 100\nconfig:\n  - name: net\n    value: {cidr: 10.0.0.0/16, mtu: 1500}\n"),
            ),
        ]);
        assert_eq!(read(&fx, "net"), r#"{"cidr":"10.1.0.0/16","mtu":1500}"#);
    }

    #[test]
    fn a_block_value_is_an_expression_over_the_context() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "config:\n  - name: sizing\n    value:\n      nodes: ${workers * 2}\n",
            ),
        )])
        .values("values.yaml", "workers: 3\n");
        assert_eq!(read(&fx, "sizing"), r#"{"nodes":6}"#);
    }

    #[test]
    fn a_value_the_operator_set_wins_over_a_block() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "config:\n  - name: dns\n    value: {domain: test, ttl: 60}\n",
            ),
        )])
        .values("values.yaml", "dns: {domain: example.com}\n");
        assert_eq!(read(&fx, "dns"), r#"{"domain":"example.com","ttl":60}"#);
    }

    #[test]
    fn blocks_that_read_each_other_in_a_circle_are_an_error() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "config:\n  - name: x\n    value: ${y}\n  - name: y\n    value: ${x}\n",
            ),
        )]);
        let error = fx.resolved(|resolver, _| resolver.materialize_all().err());
        let error = error.expect("the circle is found");
        assert!(
            error
                .message
                .starts_with("config values depend on each other in a cycle: "),
            "{}",
            error.message
        );
    }
}
