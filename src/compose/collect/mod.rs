//! Stage 5, collect: every component contribution of the base blueprint and of the
//! active facets, evaluated against the full scope (S5: a component's `when` sees
//! context and config), each with its origin. Components a facet would have defined
//! but that a `when` excluded are recorded too, so errors can say why one is missing.

pub mod facet_outputs;
pub mod memo;
pub mod parallel;
pub mod part;
pub mod requires;

pub use part::{gather, part, Contributions, Part};

use crate::compose::config::Resolver;
use crate::compose::model::activation::{Activated, Activation};
use crate::compose::model::fields::{sort_in_order, substitution_text, FieldMap};
use crate::compose::model::origin::{Contributor, Origin, OriginId, Origins};
use crate::compose::model::tracked::{Tracked, TrackedMap};
use crate::compose::shared::evaluate::{eval_condition, expr_diagnostic};
use crate::compose::shared::host::TemplateHost;
use crate::expr::windsor::format::go_format;
use crate::expr::Value;
use crate::files::Diagnostic;
use crate::template::bodies::FacetBodies;
use crate::template::fields::{canonical, field_for, Eval, Field};
use crate::template::identity::node_merge_key;
use crate::template::{ComponentEntry, ComponentKind, FacetId, Strategy, Template, TemplateId};
use crate::yaml::{Node, NodeKind};
use std::sync::Arc;

/// One contribution to one component identity.
#[derive(Clone, Debug)]
pub struct Contribution {
    pub kind: ComponentKind,
    /// Shared: a replayed contribution, the memo's and the component merged from it
    /// hold one text.
    pub id: Arc<str>,
    /// Application order (S3): effective ordinal, facet order, position in the file.
    pub order: (i64, usize, usize),
    pub strategy: Strategy,
    /// Shared: a replayed contribution (`memo`) and the component merge makes of it
    /// point at the same fields.
    pub fields: Arc<FieldMap>,
    /// Only identity fields were given (a `remove` of the whole component).
    pub identity_only: bool,
    pub origin: OriginId,
}

impl Contribution {
    /// What is left where a contribution was moved out of a list it stays in for a
    /// moment (`part::gather`); its clones share its two allocations.
    pub(crate) fn moved_out() -> Contribution {
        Contribution {
            kind: ComponentKind::Terraform,
            id: Arc::from(""),
            order: (0, 0, 0),
            strategy: Strategy::Merge,
            fields: Arc::default(),
            identity_only: false,
            origin: OriginId(0),
        }
    }

    /// Every origin id it holds mapped by `f` (its origins moved to other ids).
    pub fn map_origins(&mut self, f: impl Fn(OriginId) -> OriginId + Copy) {
        self.origin = f(self.origin);
        for tracked in Arc::make_mut(&mut self.fields).values_mut() {
            tracked.map_origins(f);
        }
    }
}

/// A component a facet defines but that was left out, and why.
#[derive(Clone, Debug)]
pub struct Exclusion {
    pub kind: ComponentKind,
    pub id: Arc<str>,
    pub facet: FacetId,
    /// Shared by every component of a facet left out for the same reason.
    pub reason: Arc<str>,
    /// Shared by every component of a facet left out by the facet's `when`, and
    /// with the memo's copy (`memo`).
    pub when: Option<Arc<crate::template::Condition>>,
}

struct Collector<'a, 't> {
    id: TemplateId,
    template: &'t Template,
    resolver: &'a Resolver<'t>,
    origins: &'a mut Origins,
    errors: Vec<Diagnostic>,
    /// Estimated bytes of expression results copied into components so far (the
    /// output budget bounds their sum, not only each one).
    spent: usize,
}

pub fn collect(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    origins: &mut Origins,
) -> Result<(Vec<Contribution>, Vec<Exclusion>), Vec<Diagnostic>> {
    let mut base = collect_base(id, template, resolver, origins);
    // Every facet's contributions go into this one list, reserved once: grown as they
    // came, its earlier copies were most of what collection left behind unused.
    base.contributions
        .reserve(most_contributions(template, activated));
    let part = parallel::facets(id, template, resolver, activated, origins, base);
    if !part.errors.is_empty() {
        return Err(part.errors);
    }
    let mut contributions = part.contributions;
    in_application_order(&mut contributions);
    Ok((contributions, part.exclusions))
}

/// How many contributions the active facets can make at most: one per component.
fn most_contributions(template: &Template, activated: &Activated) -> usize {
    activated
        .active
        .iter()
        .map(|&i| template.facets[i].components.len())
        .sum()
}

/// Sorts contributions by their application order (S3), stably. The keys are sorted
/// with their positions, and the contributions are then moved in place along the
/// permutation's cycles: sorting the contributions themselves moved each of them
/// many times.
pub fn in_application_order(contributions: &mut [Contribution]) {
    if contributions.windows(2).all(|w| w[0].order <= w[1].order) {
        return;
    }
    // Collected facet by facet, in the template's order, a facet's contributions are
    // together but kind after kind (its Terraform components, then its
    // Kustomizations), each kind by position: only each facet's own need sorting.
    let facet = |c: &Contribution| (c.order.0, c.order.1);
    if contributions
        .windows(2)
        .all(|w| facet(&w[0]) <= facet(&w[1]))
    {
        for own in contributions.chunk_by_mut(|a, b| facet(a) == facet(b)) {
            own.sort_by_key(|c| c.order.2);
        }
        return;
    }
    let mut keys: Vec<((i64, usize, usize), usize)> = contributions
        .iter()
        .enumerate()
        .map(|(i, c)| (c.order, i))
        .collect();
    // Positions make every key distinct, so an unstable sort keeps equal orders in
    // collection order.
    keys.sort_unstable();
    // Moved in place, along each cycle of the permutation (`keys[j].1` is where the
    // contribution for place `j` is now): no second list of them.
    let mut from: Vec<usize> = keys.into_iter().map(|(_, i)| i).collect();
    for start in 0..from.len() {
        let mut place = start;
        while from[place] != start {
            let source = from[place];
            contributions.swap(place, source);
            from[place] = place;
            place = source;
        }
        from[place] = place;
    }
}

/// What collecting part of a template found, in collection order (unsorted).
#[derive(Debug, Default)]
pub struct Step {
    pub contributions: Vec<Contribution>,
    pub exclusions: Vec<Exclusion>,
    pub errors: Vec<Diagnostic>,
    /// Estimated bytes of expression results copied into components, running total.
    pub spent: usize,
}

impl Step {
    /// Appends what a later step of the same collection found (its `spent` is the
    /// running total).
    pub fn absorb(&mut self, later: Step) {
        self.contributions.extend(later.contributions);
        self.exclusions.extend(later.exclusions);
        self.errors.extend(later.errors);
        self.spent = later.spent;
    }
}

/// The components of the template's `blueprint.yaml`: the first step of [`collect`].
pub fn collect_base(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    origins: &mut Origins,
) -> Step {
    let mut c = Collector {
        id,
        template,
        resolver,
        origins,
        errors: Vec::new(),
        spent: 0,
    };
    let mut contributions = Vec::new();
    if let Some(base) = &template.base {
        for kind in [ComponentKind::Terraform, ComponentKind::Kustomize] {
            if let Some(NodeKind::Seq(items)) = base.get(kind.list_key()).map(|n| &n.kind) {
                for (pos, item) in items.iter().enumerate() {
                    if let Some(contribution) = c.base_component(kind, item, pos) {
                        contributions.push(contribution);
                    }
                }
            }
        }
    }
    Step {
        contributions,
        exclusions: Vec::new(),
        errors: c.errors,
        spent: c.spent,
    }
}

/// The facets of `range`, one after another: steps of [`collect`] added to `steps`,
/// what the ones before found (and the output budget they used).
pub fn collect_facets(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    range: std::ops::Range<usize>,
    origins: &mut Origins,
    mut steps: Step,
) -> Step {
    for i in range {
        let step = collect_facet(id, template, resolver, activated, i, origins, steps.spent);
        steps.absorb(step);
    }
    steps
}

/// The contributions (or, for an inactive facet, the exclusions) of facet `i` alone:
/// one step of [`collect`], after the facets before it. `spent` is the output budget
/// used by the steps before; the result carries the new total.
pub fn collect_facet(
    id: TemplateId,
    template: &Template,
    resolver: &Resolver<'_>,
    activated: &Activated,
    i: usize,
    origins: &mut Origins,
    spent: usize,
) -> Step {
    let mut c = Collector {
        id,
        template,
        resolver,
        origins,
        errors: Vec::new(),
        spent,
    };
    let mut contributions = Vec::new();
    let mut exclusions = Vec::new();
    let facet = &template.facets[i];
    // A template loaded for this one composition lent it the bodies: dropped at the
    // end of this step, on this thread, whose next allocations reuse their memory.
    let bodies = match &template.bodies {
        Some(bodies) => match bodies.take(i, facet, &template.files) {
            Ok(bodies) => bodies,
            Err(d) => {
                c.errors.push(d);
                return Step {
                    errors: c.errors,
                    spent: c.spent,
                    ..Step::default()
                };
            }
        },
        None => FacetBodies::InFacet(facet),
    };
    let entries = facet
        .components
        .iter()
        .enumerate()
        .map(|(k, entry)| (entry, bodies.get(k).unwrap_or(&entry.node)));
    if activated.outcome[i] == Activation::Inactive {
        let reason: Arc<str> = Arc::from(format!("facet `{}` is not active", facet.name));
        let when = facet.when.clone().map(Arc::new);
        for (entry, node) in entries {
            if let Some(id) = node_merge_key(entry.kind, node) {
                exclusions.push(Exclusion {
                    kind: entry.kind,
                    id,
                    facet: FacetId {
                        template: c.id,
                        index: i,
                    },
                    reason: Arc::clone(&reason),
                    when: when.clone(),
                });
            }
        }
    } else {
        for (entry, node) in entries {
            match c.facet_component(i, entry, node) {
                Ok(Some(contribution)) => contributions.push(contribution),
                Ok(None) => {
                    if let Some(id) = node_merge_key(entry.kind, node) {
                        exclusions.push(Exclusion {
                            kind: entry.kind,
                            id,
                            facet: FacetId {
                                template: c.id,
                                index: i,
                            },
                            reason: Arc::from(format!(
                                "its `when` in facet `{}` is false",
                                facet.name
                            )),
                            when: entry.when.as_deref().cloned().map(Arc::new),
                        });
                    }
                }
                Err(d) => c.errors.push(d),
            }
        }
    }
    Step {
        contributions,
        exclusions,
        errors: c.errors,
        spent: c.spent,
    }
}

impl<'t> Collector<'_, 't> {
    fn base_component(
        &mut self,
        kind: ComponentKind,
        node: &Node,
        pos: usize,
    ) -> Option<Contribution> {
        let Some(id) = node_merge_key(kind, node) else {
            self.errors.push(
                Diagnostic::error(format!(
                    "a {} in blueprint.yaml has no identity",
                    kind.noun()
                ))
                .with_primary(node.span, "needs a `name` (or a `path` for terraform)"),
            );
            return None;
        };
        let entry_origin = Origin {
            contributor: Contributor::Base,
            span: node.span,
            ordinal: i64::MIN,
            strategy: Strategy::Merge,
            expression: None,
            deferred: false,
        };
        let origin = self.origins.add(entry_origin.clone());
        let host = TemplateHost {
            tree: &self.template.tree,
            file: "blueprint.yaml",
            environment: self.resolver.environment,
            terraform: self.resolver.terraform,
            jsonnet: self.resolver.limits.jsonnet,
            work: self.resolver.work,
        };
        let what = || format!("{} `{id}` of blueprint.yaml", kind.noun());
        match self.fields(kind, node, &host, &entry_origin, &what) {
            Ok((fields, identity_only)) => Some(Contribution {
                kind,
                id,
                order: (i64::MIN, 0, pos),
                strategy: Strategy::Merge,
                fields: Arc::new(fields),
                identity_only,
                origin,
            }),
            Err(d) => {
                self.errors.push(d);
                None
            }
        }
    }

    fn facet_component(
        &mut self,
        facet_index: usize,
        entry: &ComponentEntry,
        node: &Node,
    ) -> Result<Option<Contribution>, Diagnostic> {
        let facet = &self.template.facets[facet_index];
        let host = self.resolver.host_for(facet_index);
        let id = node_merge_key(entry.kind, node).unwrap_or_default();
        // What messages call the component: written only if one is.
        let what = || format!("{} `{id}` of facet `{}`", entry.kind.noun(), facet.name);
        if let Some(cond) = &entry.when {
            let context = || format!("in the `when` of {}", what());
            if !eval_condition(
                self.resolver.engine,
                cond,
                self.resolver,
                &host,
                &self.template.files,
                &context,
            )? {
                return Ok(None);
            }
        }
        let ordinal = entry.ordinal.unwrap_or(facet.ordinal);
        let contributor = Contributor::Facet(FacetId {
            template: self.id,
            index: facet_index,
        });
        let entry_origin = Origin {
            contributor,
            span: node.span,
            ordinal,
            strategy: entry.strategy,
            expression: None,
            deferred: false,
        };
        let origin = self.origins.add(entry_origin.clone());
        let (fields, identity_only) = self.fields(entry.kind, node, &host, &entry_origin, &what)?;
        Ok(Some(Contribution {
            kind: entry.kind,
            id,
            order: (ordinal, facet_index + 1, entry.position),
            strategy: entry.strategy,
            fields: Arc::new(fields),
            identity_only,
            origin,
        }))
    }

    /// Evaluates the fields of one entry. Keys that are not component fields (`when`,
    /// `strategy`, unknown keys already warned about at load) are skipped. Each
    /// field's origin is the entry's, at the field's own span.
    fn fields(
        &mut self,
        kind: ComponentKind,
        node: &Node,
        host: &TemplateHost<'_>,
        entry: &Origin,
        what: &dyn Fn() -> String,
    ) -> Result<(FieldMap, bool), Diagnostic> {
        let NodeKind::Map(entries) = &node.kind else {
            return Ok((FieldMap::default(), true));
        };
        // Room for the fields alone: keys such as `strategy` or `when` are not fields,
        // and a component's map is held until the blueprint is written.
        let fields = entries
            .iter()
            .filter(|(key, value)| !value.is_null() && field_for(kind, &key.name).is_some())
            .count();
        let mut out = FieldMap::with_capacity(fields);
        let mut identity_only = true;
        for (key, value) in entries {
            let Some(field) = field_for(kind, &key.name) else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            // Only lists and maps name things to remove; scalar fields (`path`,
            // `timeout`) merely describe the component (S9).
            if !field.identity && is_collection(value) {
                identity_only = false;
            }
            let context = || format!("in `{}` of {}", key.name, what());
            let origin = Origin {
                span: value.span,
                ..entry.clone()
            };
            let tracked = self.field(field, value, host, origin, &context)?;
            match out.get_mut(field.name) {
                // `substitute` and `substitutions` in one entry feed one map.
                Some(existing) => existing.merge_from(&tracked),
                None => {
                    out.insert(field.name, tracked);
                }
            }
        }
        // In the field table's order (S10), whatever order the entry wrote them in:
        // a component created by this one contribution shares these fields.
        sort_in_order(kind, &mut out);
        Ok((out, identity_only))
    }

    fn field(
        &mut self,
        field: &Field,
        node: &Node,
        host: &TemplateHost<'_>,
        origin: Origin,
        context: &dyn Fn() -> String,
    ) -> Result<Tracked, Diagnostic> {
        match field.eval {
            Eval::Literal => {
                let id = self.origins.add(origin);
                Ok(Tracked::from_value(&node.to_value(), id))
            }
            Eval::Template => self.tracked(node, host, origin, context),
            Eval::Names => {
                let items: Vec<&Node> = match &node.kind {
                    NodeKind::Seq(items) => items.iter().collect(),
                    _ => vec![node],
                };
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let t = self.tracked(item, host, origin.clone(), context)?;
                    flatten_names(t, &mut out);
                }
                let id = self.origins.add(origin);
                Ok(Tracked::List(out, id))
            }
            Eval::Bool => {
                let t = self.tracked(node, host, origin, context)?;
                as_bool(field, t, node, context)
            }
            Eval::Int => {
                let t = self.tracked(node, host, origin, context)?;
                as_int(field, t, node, context)
            }
            Eval::Strings => {
                let t = self.tracked(node, host, origin, context)?;
                as_strings(field, t, node, context)
            }
            Eval::Tier => self.tier(node, host, origin, context),
            Eval::Variants => self.variants(node, host, origin, context),
            Eval::Patches => self.patches(node, host, origin, context),
        }
    }

    /// A system's `resources`: the variants whose `when` holds, each a tier.
    fn variants(
        &mut self,
        node: &Node,
        host: &TemplateHost<'_>,
        origin: Origin,
        context: &dyn Fn() -> String,
    ) -> Result<Tracked, Diagnostic> {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(Diagnostic::error("`resources` must be a list of variants")
                .with_primary(node.span, "expected a list")
                .with_context(context()));
        };
        let mut out = Vec::new();
        for item in items {
            // A variant's `when` is ANDed with its system's (already true here).
            if let Some(w) = item.get("when") {
                let cond = crate::template::Condition {
                    text: match w.to_value() {
                        Value::Str(s) => s.to_string(),
                        other => go_format(&other),
                    },
                    node: w.clone(),
                };
                if !eval_condition(
                    self.resolver.engine,
                    &cond,
                    self.resolver,
                    host,
                    &self.template.files,
                    context,
                )? {
                    continue;
                }
            }
            out.push(self.tier(item, host, origin.clone(), context)?);
        }
        let id = self.origins.add(origin);
        Ok(Tracked::List(out, id))
    }

    /// A kustomization's `patches`: maps kept as written, `patch` text evaluated.
    fn patches(
        &mut self,
        node: &Node,
        host: &TemplateHost<'_>,
        origin: Origin,
        context: &dyn Fn() -> String,
    ) -> Result<Tracked, Diagnostic> {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(Diagnostic::error("`patches` must be a list")
                .with_primary(node.span, "expected a list")
                .with_context(context()));
        };
        let mut out = Vec::new();
        for item in items {
            let mut patch = match &item.kind {
                NodeKind::Map(_) => {
                    let id = self.origins.add(Origin {
                        span: item.span,
                        ..origin.clone()
                    });
                    Tracked::from_value(&item.to_value(), id)
                }
                _ => {
                    return Err(
                        Diagnostic::error("a patch must be a map with `path` or `patch`")
                            .with_primary(item.span, "expected a map")
                            .with_context(context()),
                    )
                }
            };
            // `patch` text supports `${…}` (docs/format.md).
            if let (Some(text_node), Tracked::Map(entries, _)) = (item.get("patch"), &mut patch) {
                let t = self.tracked(text_node, host, origin.clone(), context)?;
                let text = match t.to_value() {
                    Value::Str(s) => Value::Str(s),
                    other => Value::str(crate::expr::windsor::format::yaml_marshal(&other)),
                };
                Arc::make_mut(entries).insert(Arc::from("patch"), Tracked::Leaf(text, t.origin()));
            }
            out.push(patch);
        }
        let id = self.origins.add(origin);
        Ok(Tracked::List(out, id))
    }

    /// An install tier or resources variant: its keys evaluated as the same keys of a
    /// kustomization are; `name` kept as written.
    fn tier(
        &mut self,
        node: &Node,
        host: &TemplateHost<'_>,
        origin: Origin,
        context: &dyn Fn() -> String,
    ) -> Result<Tracked, Diagnostic> {
        let NodeKind::Map(entries) = &node.kind else {
            return Err(Diagnostic::error("a flux tier must be a map")
                .with_primary(node.span, "expected a map")
                .with_context(context()));
        };
        let mut out = TrackedMap::default();
        for (key, value) in entries {
            if value.is_null() || &*key.name == "when" {
                continue;
            }
            let tracked = if &*key.name == "name" {
                let id = self.origins.add(Origin {
                    span: value.span,
                    ..origin.clone()
                });
                Tracked::Leaf(value.to_value(), id)
            } else {
                let Some(field) = field_for(ComponentKind::Kustomize, &key.name) else {
                    continue;
                };
                let o = Origin {
                    span: value.span,
                    ..origin.clone()
                };
                self.field(field, value, host, o, context)?
            };
            let name: Arc<str> = Arc::from(canonical(ComponentKind::Kustomize, &key.name));
            match out.get_mut(&name) {
                Some(existing) => existing.merge_from(&tracked),
                None => {
                    out.insert(name, tracked);
                }
            }
        }
        let id = self.origins.add(Origin {
            span: node.span,
            ..origin
        });
        Ok(Tracked::Map(Arc::new(out), id))
    }

    /// Evaluates `node` (templates in every string) into a tracked value whose leaves
    /// point at the scalar that produced them.
    fn tracked(
        &mut self,
        node: &Node,
        host: &TemplateHost<'_>,
        origin: Origin,
        context: &dyn Fn() -> String,
    ) -> Result<Tracked, Diagnostic> {
        match &node.kind {
            NodeKind::Map(entries) => {
                let mut out = TrackedMap::with_capacity(entries.len());
                for (k, v) in entries {
                    out.insert(
                        Arc::clone(&k.name),
                        self.tracked(v, host, origin.clone(), context)?,
                    );
                }
                let id = self.origins.add(Origin {
                    span: node.span,
                    ..origin
                });
                Ok(Tracked::Map(Arc::new(out), id))
            }
            NodeKind::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.tracked(item, host, origin.clone(), context)?);
                }
                let id = self.origins.add(Origin {
                    span: node.span,
                    ..origin
                });
                Ok(Tracked::List(out, id))
            }
            NodeKind::Str(s) if crate::expr::template::contains_expression(s) => {
                let value = self
                    .resolver
                    .render_shared(s, host)
                    .map_err(|e| expr_diagnostic(&e, node, &self.template.files, context))?;
                // Copying the shared result into a component is where repetition
                // multiplies; stop before that if it is over the output budget.
                let budget = self.resolver.limits.output_bytes;
                let left = budget.saturating_sub(self.spent);
                let size = crate::compose::model::budget::size_within(&value, left);
                if let Err(at) = &size {
                    let span = node.span;
                    return Err(Diagnostic::error(format!(
                        "this value takes the blueprint past the output budget of {} (crossed at `{}`)",
                        crate::compose::model::budget::amount(budget),
                        if at.is_empty() {
                            "the value itself".to_string()
                        } else {
                            format!("(value){at}")
                        }
                    ))
                    .with_primary(span, "expands past the output budget")
                    .with_context(context())
                    .with_help(crate::compose::model::budget::HELP));
                }
                self.spent += size.unwrap_or(0);
                let deferred = matches!(&value, Value::Str(out) if crate::expr::template::contains_expression(out));
                let id = self.origins.add(Origin {
                    span: node.span,
                    expression: Some(Arc::clone(s)),
                    deferred,
                    ..origin
                });
                Ok(Tracked::from_value(&value, id))
            }
            _ => {
                let id = self.origins.add(Origin {
                    span: node.span,
                    ..origin
                });
                Ok(Tracked::Leaf(node.to_value(), id))
            }
        }
    }
}

/// A boolean field: `true`/`false` text becomes a boolean. An unresolved (deferred) expression is carried as written.
fn as_bool(
    field: &Field,
    t: Tracked,
    node: &Node,
    context: &dyn Fn() -> String,
) -> Result<Tracked, Diagnostic> {
    match t {
        Tracked::Leaf(Value::Bool(_), _) => Ok(t),
        Tracked::Leaf(Value::Str(s), o) if &*s == "true" || &*s == "false" => {
            Ok(Tracked::Leaf(Value::Bool(&*s == "true"), o))
        }
        // Still an unresolved (deferred) expression: carried as written.
        Tracked::Leaf(Value::Str(s), o) if crate::expr::template::contains_expression(&s) => {
            Ok(Tracked::Leaf(Value::Str(s), o))
        }
        other => Err(Diagnostic::error(format!(
            "`{}` must be a boolean, got {}",
            field.name,
            describe(&other.to_value())
        ))
        .with_primary(node.span, "expected true or false")
        .with_context(context())),
    }
}

/// An integer field: whole floats and integer text become integers. An unresolved (deferred) expression is carried as written.
fn as_int(
    field: &Field,
    t: Tracked,
    node: &Node,
    context: &dyn Fn() -> String,
) -> Result<Tracked, Diagnostic> {
    let o = t.origin();
    match t.to_value() {
        Value::Int(n) => Ok(Tracked::Leaf(Value::Int(n), o)),
        Value::Uint(n) if i64::try_from(n).is_ok() => Ok(Tracked::Leaf(Value::Int(n as i64), o)),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            Ok(Tracked::Leaf(Value::Int(f as i64), o))
        }
        Value::Str(s) if s.trim().parse::<i64>().is_ok() => Ok(Tracked::Leaf(
            Value::Int(s.trim().parse::<i64>().unwrap_or_default()),
            o,
        )),
        Value::Str(s) if crate::expr::template::contains_expression(&s) => {
            Ok(Tracked::Leaf(Value::Str(s), o))
        }
        other => Err(Diagnostic::error(format!(
            "`{}` must be an integer, got {}",
            field.name,
            describe(&other)
        ))
        .with_primary(node.span, "expected an integer")
        .with_context(context())),
    }
}

/// A map of strings (`substitutions`): every value as its text (S10).
fn as_strings(
    field: &Field,
    t: Tracked,
    node: &Node,
    context: &dyn Fn() -> String,
) -> Result<Tracked, Diagnostic> {
    match t {
        Tracked::Map(mut entries, o) => {
            for v in Arc::make_mut(&mut entries).values_mut() {
                let text = substitution_text(&v.to_value());
                *v = Tracked::Leaf(Value::str(text), v.origin());
            }
            Ok(Tracked::Map(entries, o))
        }
        other => Err(Diagnostic::error(format!(
            "`{}` must be a map of names to values, got {}",
            field.name,
            describe(&other.to_value())
        ))
        .with_primary(node.span, "expected a map")
        .with_context(context())),
    }
}

fn is_collection(node: &Node) -> bool {
    matches!(node.kind, NodeKind::Seq(_) | NodeKind::Map(_))
}

/// Names lists: list results flattened, nulls dropped, non-strings as text.
fn flatten_names(t: Tracked, out: &mut Vec<Tracked>) {
    match t {
        Tracked::List(items, _) => {
            for item in items {
                flatten_names(item, out);
            }
        }
        Tracked::Leaf(Value::Nil, _) => {}
        Tracked::Leaf(Value::Str(s), o) => out.push(Tracked::Leaf(Value::Str(s), o)),
        Tracked::Leaf(v, o) => out.push(Tracked::Leaf(Value::str(go_format(&v)), o)),
        Tracked::Map(_, o) => {
            let v = t.to_value();
            out.push(Tracked::Leaf(Value::str(substitution_text(&v)), o))
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("the string {s:?}"),
        other => format!("{} `{}`", other.type_name(), go_format(other)),
    }
}

/// What one template contributes, and what its `when`s left out.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, messages, Fixture};
    use crate::compose::model::origin::Origins;

    #[test]
    fn application_order_sorts_by_order_and_keeps_ties_in_collection_order() {
        use super::{in_application_order, Contribution};
        use crate::compose::model::origin::OriginId;
        use crate::template::{ComponentKind, Strategy};
        // (ordinal, facet), and a name saying where each was collected.
        let orders = [
            (5, 2),
            (1, 9),
            (5, 0),
            (3, 1),
            (1, 9),
            (5, 0),
            (0, 4),
            (3, 1),
        ];
        let mut contributions: Vec<Contribution> = orders
            .iter()
            .enumerate()
            .map(|(k, &(ordinal, facet))| Contribution {
                kind: ComponentKind::Terraform,
                id: format!("c{k}").into(),
                order: (ordinal, facet, 0),
                strategy: Strategy::Merge,
                fields: Default::default(),
                identity_only: false,
                origin: OriginId(k as u32),
            })
            .collect();
        in_application_order(&mut contributions);
        let ids: Vec<&str> = contributions.iter().map(|c| &*c.id).collect();
        assert_eq!(ids, ["c6", "c1", "c4", "c3", "c7", "c2", "c5", "c0"]);
    }

    /// Contributions with these orders, named by where they were collected.
    fn with_orders(orders: &[(i64, usize, usize)]) -> Vec<super::Contribution> {
        use crate::compose::model::origin::OriginId;
        use crate::template::{ComponentKind, Strategy};
        orders
            .iter()
            .enumerate()
            .map(|(k, &order)| super::Contribution {
                kind: ComponentKind::Terraform,
                id: format!("c{k}").into(),
                order,
                strategy: Strategy::Merge,
                fields: Default::default(),
                identity_only: false,
                origin: OriginId(k as u32),
            })
            .collect()
    }

    proptest::proptest! {
        /// Whether the facets come in order with each one's contributions together
        /// (kind after kind, as collection gives them) or in any order at all, the
        /// result is a stable sort by application order.
        #[test]
        fn application_order_is_a_stable_sort(
            orders in proptest::collection::vec((0i64..3, 0usize..6, 0usize..4), 0..40),
            grouped in proptest::bool::ANY,
        ) {
            let mut orders = orders;
            if grouped {
                // Facets in order, each facet's own left as generated.
                orders.sort_by_key(|&(ordinal, facet, _)| (ordinal, facet));
            }
            let mut contributions = with_orders(&orders);
            let mut expected: Vec<(i64, usize, usize, String)> = contributions
                .iter()
                .map(|c| (c.order.0, c.order.1, c.order.2, c.id.to_string()))
                .collect();
            expected.sort_by_key(|&(o, f, p, _)| (o, f, p));
            super::in_application_order(&mut contributions);
            let got: Vec<(i64, usize, usize, String)> = contributions
                .iter()
                .map(|c| (c.order.0, c.order.1, c.order.2, c.id.to_string()))
                .collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn components_of_active_facets_contribute_in_application_order() {
        let fx = Fixture::new(&[
            (
                "facets/late.yaml",
                &facet("late", "ordinal: 300\nterraform:\n  - name: dns\n    path: dns\n"),
            ),
            (
                "facets/early.yaml",
                &facet("early", "ordinal: 100\nterraform:\n  - name: network\n    path: network\n    inputs:\n      cidr: ${cidr}\n"),
            ),
        ])
        .values("values.yaml", "cidr: 10.0.0.0/16\n");
        let collected = fx.collected(&mut Origins::default());
        let ids: Vec<&str> = collected
            .contributions
            .terraform
            .iter()
            .map(|c| c.id.as_ref())
            .collect();
        assert_eq!(ids, ["network", "dns"]);
        let inputs = collected.contributions.terraform[0].fields["inputs"].to_value();
        assert_eq!(
            crate::value::json::compact(&inputs),
            r#"{"cidr":"10.0.0.0/16"}"#
        );
    }

    #[test]
    fn a_component_left_out_says_which_when_did_it() {
        let fx = Fixture::new(&[
            (
                "facets/aws.yaml",
                &facet(
                    "aws",
                    "when: provider == 'aws'\nterraform:\n  - name: vpc\n    path: vpc\n",
                ),
            ),
            (
                "facets/dns.yaml",
                &facet(
                    "dns",
                    "terraform:\n  - name: dns\n    path: dns\n    when: dns?.enabled ?? false\n",
                ),
            ),
        ]);
        let collected = fx.collected(&mut Origins::default());
        assert!(collected.contributions.terraform.is_empty());
        let reasons: Vec<(&str, &str)> = collected
            .exclusions
            .iter()
            .map(|e| (e.id.as_ref(), &*e.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("vpc", "facet `aws` is not active"),
                ("dns", "its `when` in facet `dns` is false")
            ]
        );
    }

    #[test]
    fn an_unmet_requirement_of_an_active_facet_is_an_error() {
        let fx = Fixture::new(&[(
            "facets/dns.yaml",
            &facet(
                "dns",
                "requires:\n  - paths: [dns.domain]\n    message: set the DNS domain\n",
            ),
        )]);
        let part = fx.resolved(|resolver, activation| {
            let activation = crate::compose::model::activation::Activated {
                active: activation.active.clone(),
                outcome: activation.outcome.clone(),
            };
            let context = resolver.context.clone();
            let mut origins = Origins::default();
            super::part(
                crate::template::TemplateId::Composing,
                resolver,
                activation,
                context,
                &mut origins,
            )
            .err()
        });
        let errors = part.expect("the requirement is unmet");
        assert_eq!(messages(&errors), "1 required value(s) are missing");
        let said = format!("{errors:?}");
        assert!(
            said.contains("dns.domain") && said.contains("set the DNS domain"),
            "{said}"
        );
    }
}
