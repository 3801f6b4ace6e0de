//! Composition: a template plus a context's values to one blueprint.
//!
//! [`compose`] reads top to bottom, one stage a call:
//! scope → activate → config → collect → merge → validate → (blueprint) emit.
//! It is a pure function of its [`Inputs`]: no globals, no current directory, no
//! environment except what the inputs carry — so tests, watch mode and multi-context
//! runs can call it many times, in parallel.

pub mod activate;
pub mod blueprint;
pub mod collect;
pub mod config;
pub mod evaluate;
pub mod facet_outputs;
pub mod fields;
pub mod flux;
pub mod host;
pub mod merge;
pub mod origin;
pub mod requires;
pub mod schema;
pub mod scope;
pub mod tracked;
pub mod validate;

use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, Map, Value};
use crate::source::Diagnostic;
use crate::template::{ComponentKind, Template};
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
    pub builtins: Builtins,
    pub environment: Environment,
    pub terraform: TerraformOutputs,
}

/// A composed blueprint with everything `explain` needs to say how it came about.
pub struct Composition {
    pub blueprint: Value,
    pub terraform: Merged,
    pub kustomize: Merged,
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
}

pub fn compose(inputs: &Inputs<'_>) -> Result<Composition, Vec<Diagnostic>> {
    let template = inputs.template;
    let context = scope::context_scope(
        inputs.schema,
        inputs.apply_schema_defaults,
        &inputs.layers,
        &inputs.builtins,
    )?;
    let activation = activate::activate(
        template,
        inputs.engine,
        &context,
        &inputs.environment,
        &inputs.terraform,
    )?;
    let resolver = config::Resolver::new(
        template,
        inputs.engine,
        context.clone(),
        &inputs.environment,
        &inputs.terraform,
        &activation.active,
    );
    let mut origins = Origins::default();
    let (contributions, exclusions) =
        collect::collect(template, &resolver, &activation, &mut origins)?;
    requires::check(
        &resolver,
        &requirement_owners(template, &activation, &contributions),
    )?;
    let outputs = facet_outputs::collect(&resolver, &activation.active)?;
    let messages = facet_outputs::messages(&resolver, &activation.active)?;

    let (mut terraform, mut kustomize, mut systems) = (Vec::new(), Vec::new(), Vec::new());
    for c in contributions {
        match c.kind {
            ComponentKind::Terraform => terraform.push(c),
            ComponentKind::Kustomize => kustomize.push(c),
            ComponentKind::FluxSystem => systems.push(c),
        }
    }
    let mut terraform = merge::merge(terraform);
    let mut kustomize = merge::merge(kustomize);
    let systems = merge::merge(systems);
    flux::expand(&systems, &mut kustomize)?;
    blueprint::finish(&mut terraform, &mut origins);
    blueprint::finish(&mut kustomize, &mut origins);

    let mut errors = validate::validate(
        ComponentKind::Terraform,
        &terraform,
        &exclusions,
        template,
        &origins,
    );
    errors.extend(validate::validate(
        ComponentKind::Kustomize,
        &kustomize,
        &exclusions,
        template,
        &origins,
    ));
    if !errors.is_empty() {
        return Err(errors);
    }

    let config = resolver.materialize_all().map_err(|d| vec![d])?;
    let config: Map = config
        .into_iter()
        .filter(|(k, _)| resolver.block_names().any(|b| b == &**k))
        .collect();
    let base = template.base.as_ref().map(evaluate::plain_value);
    let blueprint = blueprint::assemble(
        base.as_ref(),
        &inputs.builtins.context,
        &terraform,
        &kustomize,
        extra_fields(outputs),
    );
    Ok(Composition {
        blueprint,
        terraform,
        kustomize,
        origins,
        activation,
        context,
        config,
        warnings: template.warnings.clone(),
        messages,
        exclusions,
        layers: inputs.layers.clone(),
        config_log: resolver.block_log(),
    })
}

/// Blueprint-wide fields from facets, written after the component lists (S10).
fn extra_fields(outputs: facet_outputs::FacetOutputs) -> Vec<(&'static str, Value)> {
    let mut extra = Vec::new();
    if let Some(b) = outputs.backend {
        extra.push(("backend", Value::str(b)));
    }
    if !outputs.crds.is_empty() {
        extra.push((
            "crds",
            Value::list(outputs.crds.into_iter().map(Value::from).collect()),
        ));
    }
    if !outputs.substitutions.is_empty() {
        extra.push(("substitutions", Value::map(outputs.substitutions)));
    }
    extra
}

/// The requirement owners of the active facets: the facet, its config blocks and its
/// components.
fn requirement_owners<'t>(
    template: &'t Template,
    activation: &Activated,
    contributions: &[collect::Contribution],
) -> Vec<requires::Owner<'t>> {
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
    owners
}
