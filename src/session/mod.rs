//! One session: a project found, its template loaded, its schema compiled and an
//! expression engine made, once — then composed, tested or rendered as often as the
//! caller likes. Every command, test, example and benchmark starts here, so the
//! sequence discover → load → schema → engine exists in one place.
//!
//! The session takes everything from its [`Options`]: the directory to start from and
//! the `WINDSOR_CONTEXT` the caller read, never the process's own current directory or
//! environment. That keeps it usable from tests, watch mode and many contexts at once.

mod load;
mod one_shot;
mod recomposer;

pub use one_shot::OneShot;
pub use recomposer::Recomposer;

use crate::compose::face::text_diagnostic;
use crate::compose::face::ContextPatches;
pub use crate::compose::face::Memo;
use crate::compose::face::Overlay;
use crate::compose::face::Schema;
use crate::compose::model::inputs::Environment;
use crate::compose::model::inputs::Layer;
use crate::compose::model::precedence::Precedence;
use crate::compose::{
    face::{Composition, Inputs},
    model::for_explain::ForExplain,
    model::inputs::{Cycles, Limits},
};
use crate::expr::host::{Host, TerraformOutputs};
use crate::expr::{Engine, ExprError, Scope, Value};
use crate::files::{Diagnostic, FileMap};
use crate::graph::Graph;
use crate::project::{self, Project};
use crate::render::{ManifestFormat, Rendered};
use crate::template::{FacetCache, Template};
use crate::testing::runner::{RunOptions, Runner};
use crate::testing::suite::{Select, Suite};
use load::{CONFIG_DEFAULTS, SCHEMA_DEFAULTS};
use std::path::PathBuf;
use std::sync::Arc;

/// What a command asks for, in plain terms. The command line's flags map onto it one
/// to one; the defaults are the command line's defaults.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where discovery starts (the command line passes its current directory);
    /// relative paths below are taken from here.
    pub cwd: PathBuf,
    /// `$WINDSOR_CONTEXT`, as the caller read it (`None` to ignore it, as `bpc test` does).
    pub env_context: Option<String>,
    /// Project root, template, context and value layers (S1, S4).
    pub locate: project::Options,
    /// Also load the local upstream blueprints `blueprint.yaml` lists (compose, test
    /// and render do; `show values` reads only this template's schema).
    pub upstream: bool,
    /// Context values over facet config (Windsor), or the reverse.
    pub precedence: Precedence,
    pub limits: Limits,
    /// Where `env()` reads from: the process (the command line) or fixed variables.
    pub environment: Environment,
    /// A YAML/JSON file of Terraform outputs (component → output → value) that resolve
    /// `terraform_output()`; without it those expressions stay deferred.
    pub terraform_outputs: Option<PathBuf>,
    /// Facets parsed by earlier sessions over the same [`FileMap`], reused where the
    /// file's text is unchanged (the language server's reloads).
    pub facet_cache: Option<Arc<FacetCache>>,
    /// Whether compositions keep what only `explain` shows (the text of each `${…}`
    /// behind a value, what each contribution said): runs that write their
    /// blueprints and exit (`compose`, `render`, one context or all) drop it.
    pub for_explain: ForExplain,
    /// Set by the caller to stop the compositions under way (the language server
    /// does when a newer edit makes an analysis moot).
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Options {
    /// The work budget of one composition with these options.
    fn work(&self) -> crate::expr::work::Work {
        let work = crate::expr::work::Work::new(self.limits.steps);
        match &self.cancel {
            Some(cancel) => work.cancelled_by(Arc::clone(cancel)),
            None => work,
        }
    }

    /// Options that start discovery at `dir`, with everything else at its default.
    pub fn at(dir: impl Into<PathBuf>) -> Options {
        Options {
            cwd: dir.into(),
            upstream: true,
            ..Options::default()
        }
    }
}

/// How [`Session::eval`] reads its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// One expression: `cluster.workers.count ?? 2`.
    Expression,
    /// Text with `${…}` interpolations, as a facet's string values are read.
    Text,
}

impl Syntax {
    /// `text` evaluated by `engine` in `scope`, read as this syntax says.
    pub(crate) fn eval(
        self,
        engine: &Engine,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
    ) -> Result<Value, ExprError> {
        match self {
            Syntax::Expression => engine.eval(text, scope, host),
            Syntax::Text => engine.render_template(text, scope, host),
        }
    }
}

/// A loaded project, ready to compose. Immutable: compositions borrow it.
pub struct Session {
    pub files: Arc<FileMap>,
    pub project: Project,
    pub template: Template,
    pub schema: Option<Schema>,
    pub engine: Engine,
    pub options: Options,
    /// The project's value layers as the test of inactive facets read them while
    /// loading: composing reads these, not the files again, so the test and the
    /// composition see the same values even if a file changes in between.
    layers_read: Option<Vec<Layer>>,
}

impl Session {
    /// The context's value layers, lowest first (S4; schema defaults are applied by
    /// composition, under all of them).
    pub fn layers(&self) -> Result<Vec<Layer>, Vec<Diagnostic>> {
        self.layers_of(&self.project)
    }

    /// The schema violations of the context's values, as warnings (docs/semantics.md
    /// S4: composition goes on, as in the Windsor CLI; `--strict` fails).
    pub(crate) fn value_warnings(&self) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        let (layers, builtins) = (self.layers()?, self.project.builtins());
        let values = load::project_values(&layers, &builtins, &self.files);
        Ok(values.schema_warnings(self.schema.as_ref()))
    }

    fn layers_of(&self, project: &Project) -> Result<Vec<Layer>, Vec<Diagnostic>> {
        if let Some(read) = self.layers_read.as_ref() {
            if std::ptr::eq(project, &self.project) {
                return Ok(read.clone());
            }
        }
        project
            .layers(&self.options.locate, &self.options.cwd, &self.files)
            .map_err(|d| vec![d])
    }

    /// What `terraform_output()` reads: the `terraform_outputs` file, else deferred.
    pub fn terraform_outputs(&self) -> Result<TerraformOutputs, Vec<Diagnostic>> {
        let Some(path) = &self.options.terraform_outputs else {
            return Ok(TerraformOutputs::Deferred);
        };
        let display = path.to_string_lossy().to_string();
        let node = project::read_yaml_file(&self.options.cwd.join(path), &display, &self.files)
            .map_err(|d| vec![d])?;
        Ok(TerraformOutputs::Provider(node.to_value()))
    }

    /// What composing `project`'s context depends on; `overlay` is its own blueprint.
    fn inputs<'s>(
        &'s self,
        project: &Project,
        overlay: Option<&'s Overlay>,
        context_patches: Option<&'s ContextPatches>,
        cycles: Cycles,
    ) -> Result<Inputs<'s>, Vec<Diagnostic>> {
        Ok(Inputs {
            template: &self.template,
            schema: self.schema.as_ref(),
            engine: &self.engine,
            layers: self.layers_of(project)?,
            apply_schema_defaults: SCHEMA_DEFAULTS,
            config_defaults: CONFIG_DEFAULTS,
            builtins: project.builtins(),
            environment: self.options.environment.clone(),
            terraform: self.terraform_outputs()?,
            precedence: self.options.precedence,
            limits: self.options.limits,
            work: self.options.work(),
            overlay,
            context_patches,
            cycles,
            for_explain: self.options.for_explain,
        })
    }

    /// Every context the project defines (see [`Project::contexts`]).
    pub fn contexts(&self) -> Vec<String> {
        self.project.contexts()
    }

    /// Composes the context the options name; the project's discovery warnings come
    /// first among the composition's warnings.
    pub fn compose(&self) -> Result<Composition, Vec<Diagnostic>> {
        self.compose_project(&self.project, Cycles::Reject, None)
    }

    /// As [`Session::compose`], reusing what `memo` kept from an earlier composition
    /// of this project's context where its inputs did not change (and keeping this
    /// one's): the same result, faster after a small edit. A memo serves one context.
    pub(crate) fn compose_incremental(
        &self,
        memo: &mut Memo,
    ) -> Result<Composition, Vec<Diagnostic>> {
        self.compose_project(&self.project, Cycles::Reject, Some(memo))
    }

    /// As [`Session::compose_context`], with a memo of context `name`'s compositions.
    pub(crate) fn compose_context_incremental(
        &self,
        name: &str,
        memo: &mut Memo,
    ) -> Result<Composition, Vec<Diagnostic>> {
        self.compose_named(name, Cycles::Reject, Some(memo))
    }

    /// Composes context `name` over the template this session loaded, without loading
    /// it again; safe to call from many threads at once.
    pub fn compose_context(&self, name: &str) -> Result<Composition, Vec<Diagnostic>> {
        self.compose_named(name, Cycles::Reject, None)
    }

    /// As [`Session::compose`] (context `name`, if given), except that `dependsOn`
    /// cycles do not fail it: they are kept in [`Composition::cycles`] for
    /// `bpc graph` to draw. Such a composition must not be rendered to disk.
    pub(crate) fn compose_to_draw(
        &self,
        name: Option<&str>,
    ) -> Result<Composition, Vec<Diagnostic>> {
        match name {
            Some(name) => self.compose_named(name, Cycles::Keep, None),
            None => self.compose_project(&self.project, Cycles::Keep, None),
        }
    }

    fn compose_named(
        &self,
        name: &str,
        cycles: Cycles,
        memo: Option<&mut Memo>,
    ) -> Result<Composition, Vec<Diagnostic>> {
        project::check_context_name(name).map_err(|d| vec![d])?;
        self.project
            .same_published(name, &self.files)
            .map_err(|d| vec![d])?;
        self.compose_project(&self.project.for_context(name, true), cycles, memo)
    }

    fn compose_project(
        &self,
        project: &Project,
        cycles: Cycles,
        memo: Option<&mut Memo>,
    ) -> Result<Composition, Vec<Diagnostic>> {
        let overlay = project.overlay(&self.files).map_err(|d| vec![d])?;
        let patches = project.context_patches(&self.files).map_err(|d| vec![d])?;
        let inputs = self.inputs(project, overlay.as_ref(), Some(&patches), cycles)?;
        let mut composition = match memo {
            Some(memo) => inputs.recompose(memo)?,
            None => inputs.compose()?,
        };
        composition
            .warnings
            .splice(0..0, project.warnings.iter().cloned());
        Ok(composition)
    }

    /// Evaluates `text` as a facet expression of this template would see it in the
    /// context the options name: value layers over schema defaults, typed fields, the
    /// built-ins and the config blocks of the active facets (precedence as composing
    /// decides it); `file()` and `jsonnet()` read relative to the template root. An
    /// error points into `text`, registered in the session's sources as
    /// `<expression>`. Discovery warnings are in `self.project.warnings`.
    pub fn eval(&self, text: &str, syntax: Syntax) -> Result<Value, Vec<Diagnostic>> {
        self.eval_project(&self.project, text, syntax)
    }

    /// As [`Session::eval`], in context `name` of the project.
    pub(crate) fn eval_context(
        &self,
        name: &str,
        text: &str,
        syntax: Syntax,
    ) -> Result<Value, Vec<Diagnostic>> {
        project::check_context_name(name).map_err(|d| vec![d])?;
        self.eval_project(&self.project.for_context(name, true), text, syntax)
    }

    fn eval_project(
        &self,
        project: &Project,
        text: &str,
        syntax: Syntax,
    ) -> Result<Value, Vec<Diagnostic>> {
        let file = self.files.add("<expression>", text);
        // The context's own blueprint is laid over merged components, after every
        // expression of the template has run: nothing of it is in their scope.
        let inputs = self.inputs(project, None, None, Cycles::Reject)?;
        let result =
            inputs.with_scope(|scope, host| syntax.eval(&self.engine, text, scope, host))?;
        result.map_err(|e| vec![text_diagnostic(&e, file, text)])
    }

    /// Composes the context and renders its Terraform and Flux inputs; the
    /// composition's warnings come first, then the render's own, then what the local
    /// Terraform modules' variables say about the inputs.
    pub fn render(&self, format: ManifestFormat) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_composition(self.compose()?, format)
    }

    /// Renders a composition of this session (its warnings first).
    pub fn render_composition(
        &self,
        composition: Composition,
        format: ManifestFormat,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_of(&composition, format, None)
    }

    /// As [`Session::render_composition`], keeping the composition for the caller
    /// (policies and `bpc diff` read both).
    pub(crate) fn render_kept(
        &self,
        composition: &Composition,
        format: ManifestFormat,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_of(composition, format, None)
    }

    /// As [`Session::render_composition`], for a tree written to `out`: the shims'
    /// module sources and local state paths lead from there to the project.
    pub(crate) fn render_composition_to(
        &self,
        composition: Composition,
        format: ManifestFormat,
        out: &std::path::Path,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_of(&composition, format, Some(out))
    }

    fn render_of(
        &self,
        composition: &Composition,
        format: ManifestFormat,
        out: Option<&std::path::Path>,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        let project = crate::render::placed::Project {
            project: &self.project,
            template: &self.template,
            output_bytes: self.options.limits.output_bytes,
        };
        crate::render::placed::render(composition, &project, format, out)
    }

    /// The deployment graph of a composition of this session: read from its render
    /// (so it shows exactly what is applied), with the composition's origins saying
    /// why each edge exists.
    pub fn graph(&self, composition: &Composition) -> Result<Graph, Vec<Diagnostic>> {
        let rendered = self.render_of(composition, ManifestFormat::Json, None)?;
        crate::graph::build(&rendered, composition, &self.template, &self.files)
            .map_err(|d| vec![d])
    }

    /// The template's test suite: its test files loaded, with the cases `select`
    /// keeps, to run with `options` (see [`Session::runner`]).
    pub fn suite(
        &self,
        options: RunOptions,
        select: &Select,
    ) -> Result<Suite<'_>, Vec<Diagnostic>> {
        Suite::discover(self.runner(options), &self.files, select)
    }

    /// The runner of this session's test cases; cases compose in isolation from
    /// the project's context files (S11).
    pub fn runner(&self, options: RunOptions) -> Runner<'_> {
        Runner {
            template: &self.template,
            schema: self.schema.as_ref(),
            engine: &self.engine,
            project_root: self.project.root.to_string_lossy().replace('\\', "/"),
            options,
            patches: ContextPatches::read(&self.template.tree, "patches", &self.files),
            policies: None,
        }
    }

    /// The context's effective values as `bpc show values` prints them: schema defaults
    /// under the value layers, with the typed fields Windsor fills in, descriptions as
    /// comments (YAML) and sensitive values masked ([`crate::emit::values`]).
    pub fn values_text(&self, format: crate::emit::Format) -> Result<String, Vec<Diagnostic>> {
        let (layers, builtins) = (self.layers()?, self.project.builtins());
        let values = load::project_values(&layers, &builtins, &self.files);
        let values = values.effective(self.schema.as_ref())?;
        crate::emit::values::values_text(
            values,
            self.schema.as_ref(),
            format,
            self.options.limits.output_bytes,
        )
    }
}
