//! Composition: a template plus a context's values to one blueprint.
//!
//! [`compose`] reads top to bottom, one stage a call:
//! scope → activate → config → collect → merge → overlay (the context's own
//! blueprint, S12) → validate → (blueprint) emit.
//! It is a pure function of its [`Inputs`]: no globals, no current directory, no
//! environment except what the inputs carry — so tests, watch mode and multi-context
//! runs can call it many times, in parallel.

pub(crate) mod activate;
pub(crate) mod blueprint;
pub mod budget;
pub(crate) mod collect;
pub(crate) mod config;
pub(crate) mod config_defaults;
pub(crate) mod context_fields;
pub(crate) mod context_patches;
pub(crate) mod deferred;
pub(crate) mod duration;
pub(crate) mod evaluate;
pub(crate) mod facet_outputs;
pub(crate) mod fields;
pub(crate) mod flux;
pub(crate) mod flux_shape;
pub mod host;
pub(crate) mod in_scope;
pub(crate) mod list_strategy;
pub mod memo;
pub(crate) mod merge;
pub(crate) mod ordering;
pub(crate) mod origin;
pub(crate) mod overlay;
pub(crate) mod patch_shape;
pub mod precedence;
pub(crate) mod requires;
pub(crate) mod schema;
mod schema_instance;
pub mod scope;
pub(crate) mod source_tags;
pub(crate) mod sources;
pub(crate) mod tier_names;
pub(crate) mod tracked;
pub(crate) mod typed_values;
pub(crate) mod validate;
#[cfg(test)]
mod windsor_functions_tests;

use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, Map, Value};
use crate::files::Diagnostic;
use crate::template::{ComponentKind, Template, TemplateId};
use activate::Activated;
use host::Environment;
use merge::Merged;
use origin::Origins;
use schema::Schema;
use scope::{Builtins, Layer};
use std::sync::Arc;

/// Everything one composition depends on.
pub struct Inputs<'a> {
    pub template: &'a Template,
    pub schema: Option<&'a Schema>,
    pub engine: &'a Engine,
    pub layers: Vec<Layer>,
    pub apply_schema_defaults: bool,
    /// Whether the Windsor CLI's config defaults apply (docs/semantics.md S4): yes
    /// for a project's context, no for a test case (as `windsor test`).
    pub config_defaults: bool,
    pub builtins: Builtins,
    pub environment: Environment,
    pub terraform: TerraformOutputs,
    /// Context values over facet config (Windsor), or the reverse.
    pub precedence: precedence::Precedence,
    pub limits: Limits,
    /// The context's own blueprint, laid over the composed components (S12).
    pub overlay: Option<&'a overlay::Overlay>,
    /// The context's `patches/<name>/` files, added after the overlay (S13).
    pub context_patches: Option<&'a context_patches::ContextPatches>,
}

/// Budgets of one composition beyond the expression engine's own (docs/limits.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub jsonnet: crate::expr::host::JsonnetLimits,
    /// Largest composed blueprint, in bytes of its compact JSON form.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            jsonnet: Default::default(),
            output_bytes: 64 * 1024 * 1024,
        }
    }
}

/// A composed blueprint with everything `explain` needs to say how it came about.
pub struct Composition {
    pub blueprint: Value,
    pub terraform: Merged,
    /// Plain kustomizations, as the blueprint lists them.
    pub kustomize: Merged,
    /// Flux systems, as the blueprint lists them.
    pub flux: Merged,
    /// Every Flux Kustomization the blueprint stands for: the plain ones and each
    /// system's tiers (what `render` writes and the test matcher's `kustomize` sees).
    pub kustomizations: Merged,
    pub origins: Origins,
    pub activation: Activated,
    pub context: Arc<Map>,
    /// Config block values (evaluated), by block name.
    pub config: Map,
    pub warnings: Vec<Diagnostic>,
    /// `messages:` of active facets, to show after a successful compose.
    pub messages: Vec<String>,
    /// Components facets would have defined but a `when` left out.
    pub exclusions: Vec<collect::Exclusion>,
    /// The context value layers, lowest first (for `explain`).
    pub layers: Vec<Layer>,
    /// Config block contributions and whether their `when` let them in.
    pub config_log: Vec<config::BlockRecord>,
    /// The local sources composed in, with their depths; empty for one template.
    pub sources: source_tags::SourceTags,
}

pub fn compose(inputs: &Inputs<'_>) -> Result<Composition, Vec<Diagnostic>> {
    if !inputs.template.upstream.is_empty() {
        return sources::compose_with_sources(inputs);
    }
    let mut origins = Origins::default();
    let part = compose_part(
        inputs,
        TemplateId::Composing,
        inputs.template,
        inputs.schema,
        None,
        &mut origins,
    )?;
    finish_one(inputs, part, origins)
}

/// Merge → validate → assemble for a template without local sources.
fn finish_one(
    inputs: &Inputs<'_>,
    part: Part,
    origins: Origins,
) -> Result<Composition, Vec<Diagnostic>> {
    let base = inputs
        .template
        .base
        .as_ref()
        .map(crate::yaml::Node::to_value);
    let tags = source_tags::SourceTags::default().with_published(inputs.template);
    let tags = (!tags.tags.is_empty()).then_some(tags);
    finish(inputs, vec![part], origins, base.as_ref(), tags.as_ref())
}

/// One template's share of a composition (the composing template's or one local
/// source's): its facets activated, config resolved and components collected on
/// their own, ready for the shared merge.
pub struct Part {
    /// In application order (S3) within this template.
    contributions: Vec<collect::Contribution>,
    exclusions: Vec<collect::Exclusion>,
    outputs: facet_outputs::FacetOutputs,
    messages: Vec<String>,
    /// Config block values by block name; an error is reported only if merging and
    /// validating the components found nothing worse.
    config: Result<Map, Diagnostic>,
    activation: Activated,
    context: Arc<Map>,
    config_log: Vec<config::BlockRecord>,
}

impl Part {
    /// This template's evaluated config blocks (what downstream sources see).
    pub fn config(&self) -> Result<Map, Vec<Diagnostic>> {
        self.config.clone().map_err(|d| vec![d])
    }
}

/// Scope → activate → config → collect for one template. `visible` is laid over the
/// context values: the config of the sources this template builds on.
pub fn compose_part(
    inputs: &Inputs<'_>,
    id: TemplateId,
    template: &Template,
    schema: Option<&Schema>,
    visible: Option<&Value>,
    origins: &mut Origins,
) -> Result<Part, Vec<Diagnostic>> {
    let (context, activation) = activated_scope(inputs, template, schema, visible)?;
    let resolver = resolver(inputs, template, &context, &activation);
    origins.begin(id);
    let (contributions, exclusions) =
        collect::collect(id, template, &resolver, &activation, origins)?;
    requires::check(
        &resolver,
        &requirement_owners(template, &resolver, &activation, &contributions)?,
    )?;
    let outputs = facet_outputs::collect(&resolver, &activation.active)?;
    let messages = facet_outputs::messages(&resolver, &activation.active)?;
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
    memo::canonical_log(
        &memo::block_order(template, &activation.active),
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

/// Scope → activate for one template: the context values (with `visible` laid over
/// them) and the facets they make active.
fn activated_scope(
    inputs: &Inputs<'_>,
    template: &Template,
    schema: Option<&Schema>,
    visible: Option<&Value>,
) -> Result<(Arc<Map>, Activated), Vec<Diagnostic>> {
    let mut context = scope::context_scope(
        schema,
        inputs.apply_schema_defaults,
        inputs.config_defaults,
        &inputs.layers,
        &inputs.builtins,
        &inputs.template.sources,
    )?;
    if let Some(visible) = visible {
        let mut merged = Value::map((*context).clone());
        scope::deep_merge(&mut merged, visible);
        if let Value::Map(m) = merged {
            context = Arc::new(Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone()));
        }
    }
    let activation = activate::activate(
        template,
        inputs.engine,
        &context,
        &inputs.environment,
        &inputs.terraform,
        inputs.precedence,
        inputs.limits,
    )?;
    Ok((context, activation))
}

/// The scope every expression of a composition reads: the context values and the
/// config blocks of the active facets.
fn resolver<'t>(
    inputs: &'t Inputs<'_>,
    template: &'t Template,
    context: &Arc<Map>,
    activation: &Activated,
) -> config::Resolver<'t> {
    let mut resolver = config::Resolver::new(
        template,
        inputs.engine,
        context.clone(),
        &inputs.environment,
        &inputs.terraform,
        inputs.limits,
        &activation.active,
    );
    resolver.precedence = inputs.precedence;
    resolver
}

/// Merge → validate → assemble, shared by every part in order (sources first, the
/// composing template last). `base` is the merged `blueprint.yaml` as a plain value.
pub fn finish(
    inputs: &Inputs<'_>,
    parts: Vec<Part>,
    mut origins: Origins,
    base: Option<&Value>,
    tags: Option<&source_tags::SourceTags>,
) -> Result<Composition, Vec<Diagnostic>> {
    let template = inputs.template;
    let (mut terraform, mut kustomize, mut systems) = (Vec::new(), Vec::new(), Vec::new());
    let mut exclusions = Vec::new();
    let mut outputs = facet_outputs::FacetOutputs::default();
    let mut messages = Vec::new();
    let mut configs = Vec::new();
    let mut last = None;
    for part in parts {
        for c in part.contributions {
            match c.kind {
                ComponentKind::Terraform => terraform.push(c),
                ComponentKind::Kustomize => kustomize.push(c),
                ComponentKind::FluxSystem => systems.push(c),
            }
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
    let mut terraform = merge::merge(terraform);
    let mut kustomize = merge::merge(kustomize);
    let mut flux = merge::merge(systems);
    let mut warnings = template.warnings.clone();
    if let Some(overlay) = inputs.overlay {
        let mut scope = Value::map((*context).clone());
        scope::deep_merge(&mut scope, &Value::map(merged_config(&configs)?));
        let scope = scope.as_map().cloned().unwrap_or_default();
        let eval = overlay::Evaluation {
            engine: inputs.engine,
            scope: &scope,
            host: host::TemplateHost {
                tree: &overlay.tree,
                file: &overlay.path,
                environment: &inputs.environment,
                terraform: &inputs.terraform,
                jsonnet: inputs.limits.jsonnet,
            },
            sources: &template.sources,
        };
        let targets = overlay::Targets {
            terraform: &mut terraform,
            kustomize: &mut kustomize,
            flux: &flux,
        };
        warnings.extend(overlay::apply(overlay, &eval, targets, &mut origins)?);
    }
    if let Some(patches) = inputs.context_patches {
        warnings.extend(context_patches::apply(
            patches,
            &mut kustomize,
            &mut flux,
            &mut origins,
        ));
    }
    blueprint::finish(&mut terraform, &mut origins);
    blueprint::clean(&mut kustomize);
    flux::resolve_plain_dependencies(&flux, &mut kustomize);
    // The Flux Kustomizations the blueprint stands for: systems expanded into tiers.
    // Dependencies are validated on these, where every tier has its own name.
    let mut kustomizations = kustomize.clone();
    flux::expand(&flux, &mut kustomizations)?;
    blueprint::finish(&mut kustomizations, &mut origins);

    let mut errors = validate::validate(
        ComponentKind::Terraform,
        &terraform,
        &exclusions,
        template,
        &origins,
    );
    errors.extend(validate::validate(
        ComponentKind::Kustomize,
        &kustomizations,
        &exclusions,
        template,
        &origins,
    ));
    if !errors.is_empty() {
        return Err(errors);
    }
    // Apply order first; local sources then order stably by depth (S9).
    ordering::dependency_order(&mut terraform);
    ordering::dependency_order(&mut kustomize);
    ordering::by_name(&mut flux);
    if let Some(tags) = tags {
        tags.apply(&mut terraform, &mut origins);
        tags.apply(&mut kustomize, &mut origins);
        tags.apply(&mut kustomizations, &mut origins);
    }
    let own_source = template
        .published
        .as_ref()
        .map_or(flux_shape::TEMPLATE_SOURCE, |p| p.name.as_str());
    flux_shape::shape(
        &mut flux,
        &mut kustomize,
        !outputs.crds.is_empty(),
        own_source,
        &mut origins,
    );
    deferred::mark_inputs(&mut terraform, &origins);

    let config = merged_config(&configs)?;
    let base = match inputs.overlay {
        Some(overlay) => Some(overlay::base_with_repository(base, overlay)),
        None => base.cloned(),
    };
    let mut blueprint = blueprint::assemble(blueprint::Parts {
        base: base.as_ref(),
        context: &inputs.builtins.context,
        terraform: &terraform,
        kustomize: &kustomize,
        flux: &flux,
        backend: outputs.backend.as_deref(),
        crds: &outputs.crds,
        substitutions: &outputs.substitutions,
        config_maps: vec![(
            "values-common",
            context_fields::values_common(
                &context,
                &inputs.builtins.context,
                &outputs.substitutions,
            ),
        )],
        repository: context_fields::dev_repository(&context, &inputs.builtins.project_root),
        messages: context_fields::messages(template, &activation.active),
        published: template.published.as_ref(),
    });
    if let Some(overlay) = inputs.overlay {
        overlay::merge_sources(&mut blueprint, overlay);
    }
    if let Some(published) = &template.published {
        blueprint::published_crds(&mut blueprint, published);
    }
    budget::check(&blueprint, inputs.limits.output_bytes).map_err(|d| vec![d])?;
    Ok(Composition {
        blueprint,
        terraform,
        kustomize,
        flux,
        kustomizations,
        origins,
        activation,
        context,
        config,
        warnings,
        messages,
        exclusions,
        layers: inputs.layers.clone(),
        config_log,
        sources: tags.cloned().unwrap_or_default(),
    })
}

/// The config blocks of every part in one map (later parts over earlier ones).
fn merged_config(configs: &[Result<Map, Diagnostic>]) -> Result<Map, Vec<Diagnostic>> {
    let mut config = Value::map(Map::default());
    for part_config in configs {
        let part = part_config.clone().map_err(|d| vec![d])?;
        scope::deep_merge(&mut config, &Value::map(part));
    }
    Ok(match config {
        Value::Map(m) => Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone()),
        _ => Map::default(),
    })
}

/// Blueprint-wide fields from facets, written after the component lists (S10).
fn requirement_owners<'t>(
    template: &'t Template,
    resolver: &config::Resolver<'_>,
    activation: &Activated,
    contributions: &[collect::Contribution],
) -> Result<Vec<requires::Owner<'t>>, Vec<Diagnostic>> {
    let mut owners = Vec::new();
    // Which (kind, facet, position) made it into the contributions: a set, so this
    // stays linear in the number of components.
    let included: std::collections::HashSet<_> = contributions
        .iter()
        .map(|k| (k.kind, k.order.1, k.order.2))
        .collect();
    for &i in &activation.active {
        let facet = &template.facets[i];
        owners.push(requires::Owner {
            facet: i,
            what: format!("facet `{}`", facet.name),
            requirements: &facet.requires,
        });
        for block in &facet.config {
            // A block whose own `when` is false requires nothing (later format: requires).
            if !resolver
                .block_included(&block.name, i, block.position)
                .map_err(|d| vec![d])?
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
            if !included.contains(&(c.kind, i + 1, c.position)) {
                continue;
            }
            let id = collect::identity(c.kind, &c.node).unwrap_or_default();
            owners.push(requires::Owner {
                facet: i,
                what: format!("{} `{id}` of facet `{}`", c.kind.noun(), facet.name),
                requirements: &c.requires,
            });
        }
    }
    Ok(owners)
}
