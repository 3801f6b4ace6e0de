//! One template's part of a composition — its components, checked against their
//! `requires:`, its blueprint-wide outputs and messages, its config evaluated whole —
//! and every part taken together for the stages after this one.

use super::facet_outputs::{self, FacetOutputs};
use super::requires;
use super::{collect, Contribution, Exclusion};
use crate::compose::config::{self, BlockRecord, Resolver};
use crate::compose::model::activation::Activated;
use crate::compose::model::origin::Origins;
use crate::expr::Map;
use crate::files::Diagnostic;
use crate::template::{ComponentKind, Template, TemplateId};
use std::sync::Arc;

/// One template's share of a composition (the composing template's or one local
/// source's): its facets activated, config resolved and components collected on
/// their own, ready for the shared merge.
pub struct Part {
    /// In application order (S3) within this template.
    contributions: Vec<Contribution>,
    exclusions: Vec<Exclusion>,
    outputs: FacetOutputs,
    messages: Vec<String>,
    /// Config block values by block name; an error is reported only if merging and
    /// validating the components found nothing worse.
    config: Result<Map, Diagnostic>,
    activation: Activated,
    context: Arc<Map>,
    config_log: Vec<BlockRecord>,
}

impl Part {
    /// This template's evaluated config blocks (what downstream sources see).
    pub fn config(&self) -> Result<Map, Vec<Diagnostic>> {
        self.config.clone().map_err(|d| vec![d])
    }
}

/// Collects one template's part: its components, checked against their
/// `requires:`, the blueprint-wide outputs and messages of its active facets, and its
/// config blocks evaluated whole.
pub fn part(
    id: TemplateId,
    resolver: &Resolver<'_>,
    activation: Activated,
    context: Arc<Map>,
    origins: &mut Origins,
) -> Result<Part, Vec<Diagnostic>> {
    let template = resolver.template;
    origins.begin(id);
    let (contributions, exclusions) = collect(id, template, resolver, &activation, origins)?;
    let owners = requirement_owners(template, resolver, &activation, &contributions)?;
    requires::check(resolver, &owners)?;
    let outputs = facet_outputs::collect(resolver, &activation.active)?;
    let messages = facet_outputs::messages(resolver, &activation.active)?;
    let config = resolver.materialize_all().map(|config| {
        config
            .into_iter()
            // A lookup per key: scanning every block name for each was quadratic.
            .filter(|(k, _)| resolver.has_block(k))
            .collect()
    });
    let mut config_log = resolver.block_log();
    // In block order, not in the order expressions happened to read them first (which
    // an incremental composition, skipping unchanged facets, cannot reproduce).
    config::canonical_log(
        &config::block_order(template, &activation.active),
        &mut config_log,
    );
    Ok(Part {
        contributions,
        exclusions,
        outputs,
        messages,
        config,
        activation,
        context,
        config_log,
    })
}

/// What [`Part`] holds, as the incremental collection ([`super::memo`]) puts it
/// together: components already sorted, requirements checked.
pub(crate) struct Pieces {
    pub contributions: Vec<Contribution>,
    pub exclusions: Vec<Exclusion>,
    pub outputs: FacetOutputs,
    pub messages: Vec<String>,
    pub config: Map,
    pub activation: Activated,
    pub context: Arc<Map>,
    pub config_log: Vec<BlockRecord>,
}

impl From<Pieces> for Part {
    fn from(p: Pieces) -> Part {
        Part {
            contributions: p.contributions,
            exclusions: p.exclusions,
            outputs: p.outputs,
            messages: p.messages,
            config: Ok(p.config),
            activation: p.activation,
            context: p.context,
            config_log: p.config_log,
        }
    }
}

/// The owners of requirements that count: every active facet, the config blocks
/// their `when`s let in and the components that made it into `contributions`.
pub(crate) fn requirement_owners<'t>(
    template: &'t Template,
    resolver: &Resolver<'_>,
    activation: &Activated,
    contributions: &[Contribution],
) -> Result<Vec<requires::Owner<'t>>, Vec<Diagnostic>> {
    let included = |name: &str, facet, position, _| resolver.block_included(name, facet, position);
    owners_with(template, activation, contributions, included)
}

/// [`requirement_owners`], asking `included(name, facet, position, needed)` whether
/// a config block's `when` let it in; `needed`: the block has requirements (when it
/// has none, the answer only matters for the errors asking may find).
pub(crate) fn owners_with<'t>(
    template: &'t Template,
    activation: &Activated,
    contributions: &[Contribution],
    mut block_included: impl FnMut(&str, usize, usize, bool) -> Result<bool, Diagnostic>,
) -> Result<Vec<requires::Owner<'t>>, Vec<Diagnostic>> {
    let mut owners = Vec::new();
    // Owners without requirements are left out: they would check nothing, and
    // describing each of them (a string per component) was most of this stage.
    // Which (kind, facet, position) made it into the contributions, and as what: a
    // map, built only if a component has requirements, so this stays linear in the
    // components. The identity is the contribution's: a template loaded for one
    // composition lent it the component's body (`template::bodies`).
    let mut included: Option<std::collections::HashMap<_, &str>> = None;
    for &i in &activation.active {
        let facet = &template.facets[i];
        if !facet.requires.is_empty() {
            owners.push(requires::Owner {
                facet: i,
                what: format!("facet `{}`", facet.name),
                requirements: &facet.requires,
            });
        }
        for block in &facet.config {
            // A block whose own `when` is false requires nothing (later format:
            // requires); the `when` is evaluated all the same, so an error in it is
            // reported as before.
            let needed = !block.requires.is_empty();
            if !block_included(&block.name, i, block.position, needed).map_err(|d| vec![d])?
                || !needed
            {
                continue;
            }
            owners.push(requires::Owner {
                facet: i,
                what: format!("config block `{}` of facet `{}`", block.name, facet.name),
                requirements: &block.requires,
            });
        }
        for c in &facet.components {
            if c.requires.is_empty() {
                continue;
            }
            let included = included.get_or_insert_with(|| {
                contributions
                    .iter()
                    .map(|k| ((k.kind, k.order.1, k.order.2), &*k.id))
                    .collect()
            });
            let Some(id) = included.get(&(c.kind, i + 1, c.position)) else {
                continue;
            };
            owners.push(requires::Owner {
                facet: i,
                what: format!("{} `{id}` of facet `{}`", c.kind.noun(), facet.name),
                requirements: &c.requires,
            });
        }
    }
    Ok(owners)
}

/// The contributions of every part, by kind, in merge order.
#[derive(Default)]
pub struct Contributions {
    pub terraform: Vec<Contribution>,
    pub kustomize: Vec<Contribution>,
    pub systems: Vec<Contribution>,
}

/// The kinds in the order of their lists.
const KINDS: [ComponentKind; 3] = [
    ComponentKind::Terraform,
    ComponentKind::Kustomize,
    ComponentKind::FluxSystem,
];

impl Contributions {
    /// Of every kind.
    pub fn count(&self) -> usize {
        self.terraform.len() + self.kustomize.len() + self.systems.len()
    }

    fn of_kind(&mut self, kind: ComponentKind) -> &mut Vec<Contribution> {
        match kind {
            ComponentKind::Terraform => &mut self.terraform,
            ComponentKind::Kustomize => &mut self.kustomize,
            ComponentKind::FluxSystem => &mut self.systems,
        }
    }
}

/// Every part of a composition taken together, for the stages after this one.
pub struct Collected {
    pub contributions: Contributions,
    pub exclusions: Vec<Exclusion>,
    pub outputs: FacetOutputs,
    pub messages: Vec<String>,
    /// Each part's config blocks, in merge order.
    pub configs: Vec<Result<Map, Diagnostic>>,
    /// The composing template's (the last part's) activation, context values and
    /// config log.
    pub activation: Activated,
    pub context: Arc<Map>,
    pub config_log: Vec<BlockRecord>,
}

/// The parts, sources first and the composing template last, taken together.
pub fn gather(parts: Vec<Part>) -> Result<Collected, Vec<Diagnostic>> {
    let mut contributions = Contributions::default();
    let mut exclusions = Vec::new();
    let mut outputs = FacetOutputs::default();
    let mut messages = Vec::new();
    let mut configs = Vec::new();
    let mut last = None;
    let count = |kind| {
        parts
            .iter()
            .flat_map(|p| &p.contributions)
            .filter(|c| c.kind == kind)
            .count()
    };
    let counts = KINDS.map(count);
    // The most common kind keeps the parts' own lists, the others moved out of them
    // in place: moving every contribution into new lists held them twice at once (at
    // 10 000 facets, 7 MB). Each list is reserved once, at its size.
    let most_at = (0..KINDS.len()).max_by_key(|&k| counts[k]).unwrap_or(0);
    let most = KINDS[most_at];
    for (kind, n) in KINDS.into_iter().zip(counts) {
        if kind != most {
            contributions.of_kind(kind).reserve_exact(n);
        }
    }
    let moved_out = Contribution::moved_out();
    for part in parts {
        let mut own = part.contributions;
        own.retain_mut(|c| {
            if c.kind == most {
                return true;
            }
            let c = std::mem::replace(c, moved_out.clone());
            contributions.of_kind(c.kind).push(c);
            false
        });
        let list = contributions.of_kind(most);
        if list.is_empty() {
            own.reserve_exact(counts[most_at] - own.len());
            *list = own;
        } else {
            list.append(&mut own);
        }
        exclusions.extend(part.exclusions);
        outputs.absorb(part.outputs);
        messages.extend(part.messages);
        configs.push(part.config);
        last = Some((part.activation, part.context, part.config_log));
    }
    let Some((activation, context, config_log)) = last else {
        return Err(vec![Diagnostic::error("nothing to compose")]);
    };
    Ok(Collected {
        contributions,
        exclusions,
        outputs,
        messages,
        configs,
        activation,
        context,
        config_log,
    })
}
