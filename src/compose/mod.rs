//! Composition: a template plus a context's values to one blueprint.
//!
//! [`Inputs::compose`] is the list of stages, each a sub-module called once, in order:
//!
//! 1. [`sources`]: the templates to compose, local sources first (S9, S14); then for
//!    each of them:
//!    2. [`scope`]: the context values it sees (S4);
//!    3. [`activate`]: which of its facets apply (S5);
//!    4. [`config`]: its config blocks, resolved as expressions read them (S6);
//!    5. [`collect`]: its components, requirements and blueprint-wide outputs;
//! 6. [`merge`]: every template's contributions applied in order (S3, S9);
//! 7. [`overlay`]: the context's own blueprint and patches (S12, S13);
//! 8. [`finish`]: the lists tidied, in the blueprint's order and shape (S10);
//! 9. [`flux`]: the shaped flux systems compiled, once, into their tiers;
//! 10. [`validate`]: dependencies exist and form no cycle (S9), among what render
//!     writes;
//! 11. [`assemble`]: the blueprint as one value, within the output budget.
//!
//! [`Inputs::recompose`] is the same list with a memory ([`Memo`]):
//! stages 3–5 keep the activation, config blocks and contributions of what an edit
//! did not reach, and replay facets whose inputs did not change ([`memo`]); stage 6
//! takes the components whose contributions are the same ones
//! ([`merge::identities`]); stage 8 takes what tidying, marking and ordering gave for
//! the same fields ([`finish::remembered`]); stage 10 skips a subject the last clean
//! validation validated ([`validate::unchanged`]); and stage 11 takes component
//! values ([`assemble::component_values`]).
//!
//! Stages never call this driver; what several of them use is in [`shared`]. It is a
//! pure function of its [`Inputs`]: no globals, no current directory, no environment
//! except what the inputs carry — so tests, watch mode and multi-context runs can call
//! it many times, in parallel.

pub(crate) mod activate;
pub(crate) mod assemble;
pub(crate) mod collect;
pub(crate) mod config;
pub mod face;
pub(crate) mod finish;
#[cfg(test)]
mod fixture;
pub(crate) mod flux;
pub(crate) mod inactive_at_load;
pub(crate) mod merge;
pub mod model;
pub(crate) mod overlay;
pub(crate) mod scope;
pub(crate) mod shared;
pub(crate) mod sources;
pub(crate) mod validate;

use crate::expr::host::{Host, TerraformOutputs};
use crate::expr::{Engine, Map, Scope, Value};
use crate::files::Diagnostic;
use collect::{memo, Part};
use model::activation::Activated;
use model::component::Merged;
use model::for_explain::ForExplain;
use model::inputs::{Builtins, Cycles, Environment, Layer, Limits};
use model::origin::Origins;
use model::precedence;
use overlay::context_patches;
use shared::expressions::Expressions;
use shared::host::TemplateHost;
use shared::memory::Memory;
use shared::schema::Schema;
use sources::{Sources, Unit};
use std::sync::Arc;

/// Everything one composition depends on.
pub struct Inputs<'a> {
    pub template: &'a crate::template::Template,
    pub schema: Option<&'a Schema>,
    pub engine: &'a Engine,
    pub layers: Vec<Layer>,
    pub apply_schema_defaults: bool,
    /// Whether the Windsor CLI's config defaults apply (docs/semantics.md S4): yes
    /// for a project's context, no for a test case (as `windsor test`). The same line
    /// splits schema violations of the values: warnings for a project's context (as
    /// Windsor's config loader), errors for a test case (as Windsor's test runner).
    pub config_defaults: bool,
    pub builtins: Builtins,
    pub environment: Environment,
    pub terraform: TerraformOutputs,
    /// Context values over facet config (Windsor), or the reverse.
    pub precedence: precedence::Precedence,
    pub limits: Limits,
    /// The work the composition's expressions may do in all (`limits.steps`, unless
    /// the caller stops it sooner).
    pub work: crate::expr::work::Work,
    /// The context's own blueprint, laid over the composed components (S12).
    pub overlay: Option<&'a overlay::Overlay>,
    /// The context's `patches/<name>/` files, added after the overlay (S13).
    pub context_patches: Option<&'a context_patches::ContextPatches>,
    /// What a `dependsOn` cycle does: fail the composition, or (for `bpc graph`,
    /// which draws it) stay in [`Composition::cycles`].
    pub cycles: Cycles,
    /// Whether the composition keeps what only `explain` shows (the text of each
    /// `${…}` behind a value, what each contribution said): kept unless the
    /// composition is written once and forgotten (the incremental engine always
    /// keeps them).
    pub for_explain: ForExplain,
}

impl Inputs<'_> {
    /// What every expression of the composition is evaluated with.
    fn expressions(&self) -> Expressions<'_> {
        Expressions {
            engine: self.engine,
            environment: &self.environment,
            terraform: &self.terraform,
            limits: self.limits,
            precedence: self.precedence,
            work: Some(&self.work),
            memory: HANDS_BACK,
        }
    }

    /// The template's warnings, and the schema's about the context's values: a
    /// project context's values that break the schema only warn (S4).
    fn warnings(&self) -> Vec<Diagnostic> {
        let mut warnings = self.template.warnings.clone();
        warnings.extend(self.values().schema_warnings(self.schema));
        warnings
    }

    /// The value layers every template's context values start from.
    fn values(&self) -> scope::Values<'_> {
        scope::Values {
            layers: &self.layers,
            builtins: &self.builtins,
            schema_defaults: self.apply_schema_defaults,
            config_defaults: self.config_defaults,
            files: &self.template.files,
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
    /// system's tiers, compiled once from the finished lists (stage 9). What
    /// validation checked, `render` writes, `explain` and the test matcher's
    /// `kustomize` read.
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
    pub sources: sources::source_tags::SourceTags,
    /// The `dependsOn` cycles found, as errors; only under [`Cycles::Keep`], else
    /// they fail the composition.
    pub cycles: Vec<Diagnostic>,
    /// What the merge no longer needed, held only to be freed with the composition
    /// ([`merge::LetGo`]).
    _let_go: merge::LetGo,
}

/// A composition of which only the blueprint is read, and written once (a plain
/// `bpc compose`): its origins and Kustomizations are let go of once validated, and
/// its components are left for the blueprint writer (`emit::blueprint_alone_text`)
/// to convert, measure and write one by one. Nothing else accepts it: it cannot be
/// rendered, explained or drawn, which would read what it let go of.
///
/// ```compile_fail,E0308
/// # use bpc::compose::face::BlueprintAlone;
/// # use bpc::render::ManifestFormat;
/// fn render(alone: &BlueprintAlone, template: &bpc::template::Template) {
///     let _ = bpc::render::render(alone, template, ManifestFormat::default());
/// }
/// ```
///
/// The same call with a whole [`Composition`] compiles:
///
/// ```no_run
/// # use bpc::compose::face::Composition;
/// # use bpc::render::ManifestFormat;
/// fn render(whole: &Composition, template: &bpc::template::Template) {
///     let _ = bpc::render::render(whole, template, ManifestFormat::default());
/// }
/// ```
pub struct BlueprintAlone {
    /// Composed as a [`Composition`] is, with the origins and Kustomizations emptied
    /// and an empty list where each non-empty list of components goes; kept whole
    /// so that nothing of it is freed before the writer is done.
    composition: Composition,
}

impl BlueprintAlone {
    /// The blueprint with an empty list where each non-empty list of components goes
    /// (the components are in [`BlueprintAlone::component_lists`]).
    pub fn blueprint(&self) -> &Value {
        &self.composition.blueprint
    }

    /// The lists of components, in the order the blueprint lists them, each with its
    /// key ([`assemble::COMPONENT_LISTS`]).
    pub(crate) fn component_lists(&self) -> [(&'static str, &Merged); 3] {
        let [terraform, kustomize, flux] = assemble::COMPONENT_LISTS;
        let c = &self.composition;
        [
            (terraform, &c.terraform),
            (kustomize, &c.kustomize),
            (flux, &c.flux),
        ]
    }

    /// The blueprint with its components converted again and put in their places.
    pub(crate) fn whole_blueprint(&self) -> Value {
        let lists = self.component_lists().map(|(_, merged)| merged);
        assemble::with_components(&self.composition.blueprint, lists)
    }

    pub fn warnings(&self) -> &[Diagnostic] {
        &self.composition.warnings
    }

    /// The warnings, for a caller that adds its own before them.
    pub(crate) fn warnings_mut(&mut self) -> &mut Vec<Diagnostic> {
        &mut self.composition.warnings
    }

    /// `messages:` of active facets, to show after a successful compose.
    pub fn messages(&self) -> &[String] {
        &self.composition.messages
    }
}

/// What one composition leaves for the next: what stage 5 collected per
/// facet ([`memo`]) and what stage 6 merged per component identity
/// ([`merge::identities`]). Empty until the first composition; one memo serves one
/// project and context.
#[derive(Default)]
pub struct Memo {
    collected: memo::Memo,
    stages: StageMemos,
}

/// What the stages after collection remember: each a pure function of
/// what it is keyed on, so they stay valid whatever the composition that used them
/// went on to do.
#[derive(Default)]
struct StageMemos {
    merged: merge::identities::Memo,
    finished: finish::remembered::Memo,
    validated: validate::unchanged::Memo,
    assembled: assemble::component_values::Memo,
}

impl Memo {
    /// How the last composition went: facets replayed and collected again.
    pub fn last(&self) -> memo::Reuse {
        self.collected.last
    }
}

/// The three ways to compose, and one evaluation in the composed scope.
impl Inputs<'_> {
    /// Runs the stages, cold.
    pub fn compose(&self) -> Result<Composition, Vec<Diagnostic>> {
        compose_cold(self, Read::Everything)
    }

    /// As [`Inputs::compose`], for a caller that writes the blueprint once and reads
    /// nothing else of the composition ([`BlueprintAlone`]).
    pub fn compose_blueprint(&self) -> Result<BlueprintAlone, Vec<Diagnostic>> {
        let composition = compose_cold(self, Read::BlueprintAlone)?;
        Ok(BlueprintAlone { composition })
    }

    /// Composes as [`Inputs::compose`] does, reusing what `memo` kept from the last
    /// composition where its inputs did not change (see [`memo`]), and keeping this
    /// one's for the next: the same result as a cold composition's. A template with
    /// local sources, Terraform outputs the memo cannot fingerprint, or any error on
    /// the way composes cold (a failure then reads exactly as a cold composition's).
    pub fn recompose(&self, memo: &mut Memo) -> Result<Composition, Vec<Diagnostic>> {
        compose_incremental(self, memo)
    }

    /// One evaluation in a context's composed scope, outside any facet (`bpc eval
    /// --project`): see [`with_scope`].
    pub(crate) fn with_scope<T>(
        &self,
        run: impl FnOnce(&dyn Scope, &dyn Host) -> T,
    ) -> Result<T, Vec<Diagnostic>> {
        with_scope(self, run)
    }
}

/// What the caller of a composition reads of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    Everything,
    /// Only the blueprint, its warnings and messages; the components are converted
    /// by the writer ([`BlueprintAlone`]).
    BlueprintAlone,
}

fn compose_cold(inputs: &Inputs<'_>, read: Read) -> Result<Composition, Vec<Diagnostic>> {
    let template = inputs.template;
    let mut origins = Origins::with(inputs.for_explain);
    // 1. sources, and 2–5 for each of them in turn.
    let mut sources = Sources::new(template, inputs.schema);
    let mut parts = Vec::with_capacity(template.upstream.len() + 1);
    while let Some(unit) = sources.next_unit()? {
        let part = compose_template(inputs, &unit, &mut origins).map_err(|d| unit.in_source(d))?;
        sources.composed(&unit, &part)?;
        parts.push(part);
    }
    compose_parts(inputs, sources, parts, origins, None, read)
}

/// Stages 6–11 of [`compose`], over the parts stages 1–5 gave (local sources first,
/// the composing template last).
fn compose_parts(
    inputs: &Inputs<'_>,
    sources: Sources<'_>,
    parts: Vec<Part>,
    mut origins: Origins,
    mut memos: Option<&mut StageMemos>,
    read: Read,
) -> Result<Composition, Vec<Diagnostic>> {
    let template = inputs.template;
    let (base, tags) = sources.finish();
    let mut collected = collect::gather(parts)?;
    // 6. merge
    let mut lists = merge::lists(
        std::mem::take(&mut collected.contributions),
        memos.as_deref_mut().map(|m| &mut m.merged),
        inputs.for_explain,
        HANDS_BACK,
    );
    // 7. overlay
    let own = overlay::Own {
        overlay: inputs.overlay,
        patches: inputs.context_patches,
        with: inputs.expressions(),
        files: &template.files,
    };
    let mut warnings = inputs.warnings();
    warnings.extend(overlay::apply_context(
        &own,
        &mut lists,
        &collected.context,
        &collected.configs,
        &mut origins,
    )?);
    // Validation reports in the order the entries were written; stage 8 reorders them.
    let written = validate::Written::of(&lists);
    let has_crds = !collected.outputs.crds.is_empty();
    let tags = tags.as_ref();
    // 8. finish
    let finished = memos.as_deref_mut().map(|m| &mut m.finished);
    let crds_layer = finish::finish(&mut lists, tags, has_crds, template, &mut origins, finished);
    // 9. flux
    let mut kustomizations = flux::compile(&lists, &mut origins)?;
    // 10. validate
    let subject = validate::Subject {
        terraform: &lists.terraform,
        kustomizations: &kustomizations,
        crds_layer: crds_layer.as_deref(),
        written: &written,
    };
    let validated = memos.as_deref_mut().map(|m| &mut m.validated);
    let cycles = validate::components(
        subject,
        &collected.exclusions,
        template,
        &origins,
        inputs.cycles,
        validated,
    )?;
    // A config error waited until merging and validating had their say.
    let config = config::merged(&collected.configs)?;
    // Only the blueprint is read from here on ([`BlueprintAlone`]; never memoised).
    if read == Read::BlueprintAlone {
        origins = Origins::with(origins.texts());
        kustomizations = Merged::default();
    }
    // 11. assemble
    let blueprint = assemble::blueprint(assemble::Assembly {
        template,
        base,
        overlay: inputs.overlay,
        builtins: &inputs.builtins,
        lists: &lists,
        components_apart: read == Read::BlueprintAlone,
        outputs: &collected.outputs,
        context: &collected.context,
        schema: inputs.schema,
        active: &collected.activation.active,
        output_bytes: inputs.limits.output_bytes,
        memo: memos.map(|m| &mut m.assembled),
    })?;
    Ok(Composition {
        blueprint,
        terraform: lists.terraform,
        kustomize: lists.kustomize,
        flux: lists.flux,
        kustomizations,
        origins,
        activation: collected.activation,
        context: collected.context,
        config,
        warnings,
        messages: collected.messages,
        exclusions: collected.exclusions,
        layers: inputs.layers.clone(),
        config_log: collected.config_log,
        sources: tags.cloned().unwrap_or_default(),
        cycles,
        _let_go: lists.let_go,
    })
}

/// How a composition hands memory back to the system: the stages say where a large
/// step freed much, the driver owns the heap.
const HANDS_BACK: Memory = Memory::through(crate::heap::give_back);

/// Stages 2–5 for one template.
fn compose_template(
    inputs: &Inputs<'_>,
    unit: &Unit<'_>,
    origins: &mut Origins,
) -> Result<Part, Vec<Diagnostic>> {
    let with = inputs.expressions();
    // 2. scope
    let context = scope::Values::scope(&inputs.values(), unit.schema(), unit.visible.as_ref())?;
    // 3. activate
    let activation = activate::activate(&with, unit.template, &context)?;
    // 4. config
    let resolver = config::Resolver::new(&with, unit.template, context.clone(), &activation.active);
    // 5. collect
    collect::part(unit.id, &resolver, activation, context, origins)
}

/// [`Inputs::recompose`].
fn compose_incremental(
    inputs: &Inputs<'_>,
    memo: &mut Memo,
) -> Result<Composition, Vec<Diagnostic>> {
    let mut origins = Origins::default();
    let mut sources = Sources::new(inputs.template, inputs.schema);
    if memo::usable(inputs.template, &inputs.terraform) {
        // Without local sources, the composing template is the one unit.
        if let Ok(Some(unit)) = sources.next_unit() {
            let part = remember_template(inputs, &unit, &mut memo.collected, &mut origins);
            if let Some(part) = part.filter(|part| sources.composed(&unit, part).is_ok()) {
                let memos = Some(&mut memo.stages);
                return compose_parts(
                    inputs,
                    sources,
                    vec![part],
                    origins,
                    memos,
                    Read::Everything,
                );
            }
        }
    }
    memo.collected.run_cold();
    inputs.compose()
}

/// Stages 2–5 for one template, collecting with `memo`; `None` where a cold
/// composition must decide.
fn remember_template(
    inputs: &Inputs<'_>,
    unit: &Unit<'_>,
    memo: &mut memo::Memo,
    origins: &mut Origins,
) -> Option<Part> {
    let with = inputs.expressions();
    let context = inputs.values().scope(unit.schema(), unit.visible.as_ref());
    let context = context.ok()?;
    memo::part(&with, unit.id, unit.template, context, memo, origins)
}

/// The tree path [`with_scope`] evaluates at: a file at the template root, so `file()`
/// and `jsonnet()` paths are relative to the root.
const AT_ROOT: &str = "<expression>";

/// One evaluation in a context's composed scope, outside any facet (`bpc eval
/// --project`): runs `run` against what a facet expression of the composing template
/// would see — stages 1–4, with every local source composed before it — and a host
/// whose files are the template's. Fails only where composing would: value layers that
/// break the schema, a `when` that cannot be evaluated, a local source that does not
/// compose.
fn with_scope<T>(
    inputs: &Inputs<'_>,
    run: impl FnOnce(&dyn Scope, &dyn Host) -> T,
) -> Result<T, Vec<Diagnostic>> {
    let with = inputs.expressions();
    let mut origins = Origins::default();
    let mut sources = Sources::new(inputs.template, inputs.schema);
    while let Some(unit) = sources.next_unit()? {
        if unit.is_source() {
            let part =
                compose_template(inputs, &unit, &mut origins).map_err(|d| unit.in_source(d))?;
            sources.composed(&unit, &part)?;
            continue;
        }
        let context = inputs
            .values()
            .scope(unit.schema(), unit.visible.as_ref())?;
        let activation = activate::activate(&with, unit.template, &context)?;
        let resolver = config::Resolver::new(&with, unit.template, context, &activation.active);
        let host = TemplateHost {
            tree: &inputs.template.tree,
            file: AT_ROOT,
            environment: &inputs.environment,
            terraform: &inputs.terraform,
            jsonnet: inputs.limits.jsonnet,
            work: with.work,
        };
        return Ok(run(&resolver, &host));
    }
    Err(vec![Diagnostic::error("nothing to compose")])
}
