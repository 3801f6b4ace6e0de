//! One session: a project found, its template loaded, its schema compiled and an
//! expression engine made, once — then composed, tested or rendered as often as the
//! caller likes. Every command, test, example and benchmark starts here, so the
//! sequence discover → load → schema → engine exists in one place.
//!
//! The session takes everything from its [`Options`]: the directory to start from and
//! the `WINDSOR_CONTEXT` the caller read, never the process's own current directory or
//! environment. That keeps it usable from tests, watch mode and many contexts at once.

use crate::compose::context_patches::{self, ContextPatches};
use crate::compose::evaluate::text_diagnostic;
use crate::compose::host::Environment;
use crate::compose::overlay::Overlay;
use crate::compose::precedence::Precedence;
use crate::compose::schema::Schema;
use crate::compose::scope::Layer;
use crate::compose::shared::inputs::Expressions;
pub use crate::compose::Memo;
use crate::compose::{Composition, Cycles, ForExplain, Inputs, Limits};
use crate::expr::host::{Host, TerraformOutputs};
use crate::expr::{Engine, EngineConfig, ExprError, Scope, Value};
use crate::files::{Diagnostic, FileMap, FileOverlay, FileTree};
use crate::graph::Graph;
use crate::project::{self, Project};
use crate::render::module_variables::{self, ModuleFiles};
use crate::render::shim;
use crate::render::{ManifestFormat, Rendered};
use crate::template::{FacetCache, Template};
use crate::testing::runner::{RunOptions, Suite};
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
    /// The session composes its one context once (a `compose` or `render` run):
    /// facets certainly inactive there are kept hollow at load, which saves the
    /// memory of their trees (`template::prune`). Nothing else may be asked of it.
    pub one_composition: bool,
    /// Whether compositions keep what only `explain` shows (the text of each `${…}`
    /// behind a value, what each contribution said): runs that write their
    /// blueprints and exit (`compose`, `render`, one context or all) drop it.
    pub for_explain: ForExplain,
    /// The run reads only each composition's blueprint, warnings and messages, and
    /// writes the blueprint with `emit::blueprint_text` (a plain `bpc compose` of one
    /// context): see `compose::Inputs::blueprint_alone`.
    pub blueprint_alone: bool,
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

/// At most this many `oci://` sources besides the composing one (S14).
const MAX_PUBLISHED_SOURCES: usize = 64;

/// For a project built on a published blueprint: the context's other `oci://` sources
/// and those the pulled blueprints list (recursively), pulled and loaded as sources of
/// the composing template (S14). Source identity is the name, as in the Windsor CLI:
/// a name already loaded is not loaded again. Only the context's own entries can be
/// installed; sources a pulled blueprint lists are loaded, not merged.
fn published_sources(
    project: &Project,
    template: &mut Template,
    files: &Arc<FileMap>,
    settings: &crate::oci::Settings,
) -> Result<(), Vec<Diagnostic>> {
    let Some(published) = &project.published else {
        return Ok(());
    };
    let mut names = vec![published.name.clone()];
    let mut todo: std::collections::VecDeque<(crate::oci::sources::Entry, String, bool)> =
        published
            .others
            .iter()
            .map(|e| (e.clone(), published.listed_in.clone(), e.install))
            .collect();
    let nested = |t: &Template, todo: &mut std::collections::VecDeque<_>| {
        if let Some(base) = &t.base {
            for e in crate::oci::sources::entries(base) {
                todo.push_back((e, t.tree.describe("blueprint.yaml"), false));
            }
        }
    };
    nested(template, &mut todo);
    while let Some((entry, listed_in, install)) = todo.pop_front() {
        if names.contains(&entry.name) {
            continue;
        }
        if names.len() > MAX_PUBLISHED_SOURCES {
            return Err(vec![Diagnostic::error(format!(
                "more than {MAX_PUBLISHED_SOURCES} oci:// sources; stopped at `{}` ({listed_in})",
                entry.name
            ))
            .with_primary(entry.span, "one too many")]);
        }
        names.push(entry.name.clone());
        let pulled = crate::oci::load::pull(
            &project.root,
            &entry.name,
            &entry.url,
            entry.url_span,
            &listed_in,
            settings,
        )
        .map_err(|d| vec![d])?;
        let mut tree = FileTree::open(&pulled.template_dir).map_err(|e| {
            vec![Diagnostic::error(format!(
                "cannot open the template pulled from {}: {e}",
                pulled.url
            ))]
        })?;
        tree.set_display_root(pulled.display.clone());
        let mut loaded = crate::template::load(Arc::new(tree), files.clone())?;
        loaded.published = Some(crate::template::Published {
            name: entry.name.clone(),
            url: entry.url.clone(),
            entry: entry.span,
        });
        nested(&loaded, &mut todo);
        template.warnings.extend(loaded.warnings.iter().cloned());
        template.upstream.push(crate::template::Upstream {
            name: entry.name.clone(),
            template: loaded,
            depth: 0,
            references: Vec::new(),
            entry: entry.span,
            install,
        });
    }
    Ok(())
}

/// Under a project's value layers: the schema's defaults, and the Windsor CLI's config
/// defaults (S4). Composing and the test below must see the same scope.
const SCHEMA_DEFAULTS: bool = true;
const CONFIG_DEFAULTS: bool = true;

/// The test that keeps a facet hollow at load when it is certainly inactive in the
/// context `project` names (`template::prune`); `None` (every facet whole) when the
/// context's scope cannot be made here: composing then says what is wrong. The
/// schema, once compiled, is left in `compiled`.
fn inactive_test<'a>(
    project: &Project,
    options: &Options,
    sources: &Arc<FileMap>,
    schema: Option<&crate::yaml::Node>,
    compiled: &std::cell::OnceCell<Option<Schema>>,
    read: &std::cell::OnceCell<Vec<Layer>>,
    with: Expressions<'a>,
) -> Option<Box<crate::template::prune::Inactive<'a>>> {
    let schema = schema.map(Schema::compile).transpose().ok()?;
    let schema = compiled.get_or_init(|| schema).as_ref();
    let layers = project
        .layers(&options.locate, &options.cwd, sources)
        .ok()?;
    let layers = read.get_or_init(|| layers);
    let builtins = project.builtins();
    let values = crate::compose::scope::Values {
        layers,
        builtins: &builtins,
        schema_defaults: SCHEMA_DEFAULTS,
        config_defaults: CONFIG_DEFAULTS,
        files: sources,
    };
    let context = crate::compose::scope::for_template(&values, schema, None).ok()?;
    Some(crate::compose::inactive_at_load::test(
        with,
        project.template.clone(),
        sources.clone(),
        context,
    ))
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
    /// Discovers the project, loads its template and compiles its schema. Diagnostics
    /// name files registered in `sources`, which the caller keeps to render them.
    pub fn open(options: Options, files: Arc<FileMap>) -> Result<Session, Vec<Diagnostic>> {
        let project = project::discover(
            &options.cwd,
            &options.locate,
            options.env_context.clone(),
            &files,
        )
        .map_err(|d| vec![d])?;
        Session::load(project, options, files)
    }

    /// As [`Session::open`], with the template read through the files `overlay` gives
    /// for the discovered template (tree paths → contents standing for those on disk): the language server passes the
    /// editor's unsaved documents. Files outside the template are read from disk.
    pub fn open_overlaid(
        options: Options,
        sources: Arc<FileMap>,
        overlay: impl FnOnce(&FileTree) -> FileOverlay,
    ) -> Result<Session, Vec<Diagnostic>> {
        let mut project = project::discover(
            &options.cwd,
            &options.locate,
            options.env_context.clone(),
            &sources,
        )
        .map_err(|d| vec![d])?;
        let files = overlay(&project.template);
        project.template = Arc::new(project.template.with_overlay(&files));
        Session::load(project, options, sources)
    }

    /// A session over a template directory or archive with no project around it: the
    /// project root is `root`, the context is `options.locate.context` (else `local`)
    /// and there are no value files. For tests and benchmarks of a bare template.
    pub fn of_template(
        tree: FileTree,
        root: impl Into<PathBuf>,
        options: Options,
        files: Arc<FileMap>,
    ) -> Result<Session, Vec<Diagnostic>> {
        let project = Project {
            root: root.into(),
            template: Arc::new(tree),
            context: options
                .locate
                .context
                .clone()
                .unwrap_or_else(|| "local".to_string()),
            windsor: None,
            warnings: Vec::new(),
            published: None,
        };
        Session::load(project, options, files)
    }

    fn load(
        project: Project,
        options: Options,
        sources: Arc<FileMap>,
    ) -> Result<Session, Vec<Diagnostic>> {
        let cache = options.facet_cache.as_deref();
        let engine = Engine::new(EngineConfig {
            terraform_output: true,
            ..EngineConfig::default()
        });
        let prunable = options.one_composition
            && cache.is_none()
            && project.published.is_none()
            && options.terraform_outputs.is_none();
        // The schema compiled for the test is the session's (compiling can take longer
        // than the rest of a small template's load).
        let compiled = std::cell::OnceCell::new();
        let layers_read = std::cell::OnceCell::new();
        let mut template = if prunable {
            let deferred = TerraformOutputs::Deferred;
            let pruning = |schema: Option<&crate::yaml::Node>| {
                let with = Expressions {
                    engine: &engine,
                    environment: &options.environment,
                    terraform: &deferred,
                    limits: options.limits,
                    precedence: options.precedence,
                    work: None,
                };
                inactive_test(
                    &project,
                    &options,
                    &sources,
                    schema,
                    &compiled,
                    &layers_read,
                    with,
                )
            };
            crate::template::load_pruned(
                project.template.clone(),
                sources.clone(),
                options.upstream,
                &pruning,
            )?
        } else if options.upstream {
            crate::template::load_with_sources_cached(
                project.template.clone(),
                sources.clone(),
                cache,
            )?
        } else {
            crate::template::load_cached(project.template.clone(), sources.clone(), cache)?
        };
        template.published = project
            .published
            .as_ref()
            .map(|p| crate::template::Published {
                name: p.name.clone(),
                url: p.url.clone(),
                entry: p.entry,
            });
        published_sources(&project, &mut template, &sources, &options.locate.oci)?;
        let schema = match compiled.into_inner() {
            Some(schema) => schema,
            None => Schema::of_template(&template)?,
        };
        Ok(Session {
            files: sources,
            project,
            template,
            schema,
            engine,
            options,
            layers_read: layers_read.into_inner(),
        })
    }

    /// The context's value layers, lowest first (S4; schema defaults are applied by
    /// composition, under all of them).
    pub fn layers(&self) -> Result<Vec<Layer>, Vec<Diagnostic>> {
        self.layers_of(&self.project)
    }

    /// The schema violations of the context's values, as warnings (docs/semantics.md
    /// S4: composition goes on, as in the Windsor CLI; `--strict` fails).
    pub fn value_warnings(&self) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        Ok(crate::compose::scope::schema_warnings(
            self.schema.as_ref(),
            true,
            &self.layers()?,
            &self.files,
            Some(self.project.builtins().context.as_str()),
        ))
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
            blueprint_alone: self.options.blueprint_alone,
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
    pub fn compose_incremental(&self, memo: &mut Memo) -> Result<Composition, Vec<Diagnostic>> {
        self.compose_project(&self.project, Cycles::Reject, Some(memo))
    }

    /// As [`Session::compose_context`], with a memo of context `name`'s compositions.
    pub fn compose_context_incremental(
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
    pub fn compose_to_draw(&self, name: Option<&str>) -> Result<Composition, Vec<Diagnostic>> {
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
            Some(memo) => crate::compose::compose_incremental(&inputs, memo)?,
            None => crate::compose::compose(&inputs)?,
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
    pub fn eval_context(
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
        let result = crate::compose::with_scope(&inputs, |scope, host| {
            syntax.eval(&self.engine, text, scope, host)
        })?;
        result.map_err(|e| vec![text_diagnostic(&e, file, text)])
    }

    /// Composes the context and renders its Terraform and Flux inputs; the
    /// composition's warnings come first, then the render's own, then what the local
    /// Terraform modules' variables say about the inputs.
    pub fn render(&self, format: ManifestFormat) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_composition(self.compose()?, format)
    }

    /// As [`Session::render`], for context `name` (see [`Session::compose_context`]).
    pub fn render_context(
        &self,
        name: &str,
        format: ManifestFormat,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_composition(self.compose_context(name)?, format)
    }

    /// Renders a composition of this session (its warnings first).
    pub fn render_composition(
        &self,
        composition: Composition,
        format: ManifestFormat,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_of(&composition, format, None)
    }

    /// As [`Session::render_composition`], keeping the composition (the policies
    /// read both).
    pub fn render_kept(
        &self,
        composition: &Composition,
        format: ManifestFormat,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.render_of(composition, format, None)
    }

    /// As [`Session::render_composition`], for a tree written to `out`: the shims'
    /// module sources and local state paths lead from there to the project.
    pub fn render_composition_to(
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
        // The files hold the blueprint's values reshaped: its size as text bounds
        // theirs, checked before any of them is built.
        crate::compose::budget::check_text(
            &composition.blueprint,
            self.options.limits.output_bytes,
            "the rendered blueprint",
        )
        .map_err(|d| vec![d])?;
        let origin = crate::render::git_origin::origin(&self.project.root);
        let root = shim::resolved(&self.project.root);
        let to_project = match out {
            Some(out) => {
                let target = crate::files::out_path::follow_symlinks(out)
                    .unwrap_or_else(|_| out.to_path_buf());
                shim::relative(&shim::resolved(&target), &root)
            }
            None => crate::render::Place::default_place().to_project,
        };
        let local_sources: std::collections::BTreeMap<String, std::path::PathBuf> = self
            .template
            .upstream
            .iter()
            .filter_map(|u| Some((u.name.clone(), u.template.tree.root_dir()?)))
            .collect();
        let find = |remote: &shim::Remote<'_>| {
            shim::locate(remote, &root, &local_sources, read_module_dir)
        };
        let place = crate::render::Place {
            to_project,
            modules: &find,
        };
        let mut rendered = crate::render::render_at(
            composition,
            &self.template,
            format,
            origin.as_deref(),
            &place,
        )?;
        let mut warnings = composition.warnings.clone();
        warnings.append(&mut rendered.warnings);
        warnings.extend(module_variables::check(composition, |dir| {
            self.module_files(dir)
        }));
        rendered.warnings = warnings;
        for (path, text) in module_variables::companions(composition, |dir| self.module_files(dir))
        {
            rendered.add_checked(path, text)?;
        }
        Ok(rendered)
    }

    /// The deployment graph of a composition of this session: read from its render
    /// (so it shows exactly what is applied), with the composition's origins saying
    /// why each edge exists.
    pub fn graph(&self, composition: &Composition) -> Result<Graph, Vec<Diagnostic>> {
        let rendered = self.render_of(composition, ManifestFormat::Json, None)?;
        crate::graph::build(&rendered, composition, &self.template, &self.files)
            .map_err(|d| vec![d])
    }

    /// The `*.tf` files of a project directory (`terraform/<path>`), in name order;
    /// `None` when it is not a directory. Only regular files are read.
    fn module_files(&self, dir: &str) -> ModuleFiles {
        // A published template's modules are in its artifact (S14).
        let base = match &self.project.published {
            Some(p) => p.cache_dir.clone(),
            None => self.project.root.clone(),
        };
        read_module_dir(&base.join(dir))
    }

    /// A test suite over this session's template; cases compose in isolation from
    /// the project's context files (S11).
    pub fn suite(&self, options: RunOptions) -> Suite<'_> {
        Suite {
            template: &self.template,
            schema: self.schema.as_ref(),
            engine: &self.engine,
            project_root: self.project.root.to_string_lossy().replace('\\', "/"),
            options,
            patches: context_patches::read(&self.template.tree, "patches", &self.files),
            policies: None,
        }
    }
    /// The context's effective values as `bpc show values` prints them: schema defaults
    /// under the value layers, with the typed fields Windsor fills in, descriptions as
    /// comments (YAML) and sensitive values masked ([`crate::emit::values`]).
    pub fn values_text(&self, format: crate::emit::Format) -> Result<String, Vec<Diagnostic>> {
        let values = crate::compose::scope::effective_values(
            self.schema.as_ref(),
            true,
            &self.layers()?,
            &self.files,
            Some(self.project.builtins().context.as_str()),
        )?;
        crate::emit::values::values_text(
            values,
            self.schema.as_ref(),
            format,
            self.options.limits.output_bytes,
        )
    }
}

/// The `*.tf` files of a directory, in name order; `None` when it is not a directory.
/// Only regular files are read.
fn read_module_dir(dir: &std::path::Path) -> ModuleFiles {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular || !name.ends_with(".tf") {
            continue;
        }
        let limit = Some(crate::files::tree::MAX_FILE_BYTES);
        let text = crate::files::tree::open_regular(&entry.path(), &name, limit)
            .ok()
            .and_then(|mut f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut f, &mut text).ok()?;
                Some(text)
            });
        if let Some(text) = text {
            files.push((name, text));
        }
    }
    files.sort();
    Some(files)
}

/// One engine for recomposing a project again and again (watch mode, the language
/// server, benchmarks): each [`Recomposer::open`] discovers and loads the project
/// anew, but parses only the facet files whose text changed (the facets of the others
/// are shared with the last load), and each [`Recomposer::compose`] collects only the
/// facets whose inputs changed (see [`crate::compose::memo`]). Results are those of a
/// fresh [`Session::open`] and [`Session::compose`]. The files read and the facets
/// parsed accumulate, so it starts afresh every [`Recomposer::RENEW_AFTER`] loads.
pub struct Recomposer {
    options: Options,
    sources: Arc<FileMap>,
    facets: Arc<FacetCache>,
    memos: std::collections::HashMap<String, Memo>,
    loads: usize,
}

impl Recomposer {
    pub const RENEW_AFTER: usize = 200;

    /// An engine for the project `options` locate; `options.facet_cache` is replaced
    /// by the engine's own.
    pub fn new(options: Options) -> Recomposer {
        Recomposer {
            options,
            sources: Arc::new(FileMap::new()),
            facets: Arc::new(FacetCache::default()),
            memos: Default::default(),
            loads: 0,
        }
    }

    /// The files read so far: what diagnostics of the last load and composition name.
    pub fn sources(&self) -> &Arc<FileMap> {
        &self.sources
    }

    /// Discovers and loads the project as [`Session::open`] does.
    pub fn open(&mut self) -> Result<Session, Vec<Diagnostic>> {
        self.open_overlaid(|_| FileOverlay::new())
    }

    /// As [`Session::open_overlaid`].
    pub fn open_overlaid(
        &mut self,
        overlay: impl FnOnce(&FileTree) -> FileOverlay,
    ) -> Result<Session, Vec<Diagnostic>> {
        self.loads += 1;
        if self.loads > Self::RENEW_AFTER {
            let tells = self.facets.tells_changes();
            self.sources = Arc::new(FileMap::new());
            self.facets = Arc::new(FacetCache::default());
            self.facets.tell_changes(tells);
            self.memos.clear();
            self.loads = 1;
        }
        let mut options = self.options.clone();
        options.facet_cache = Some(self.facets.clone());
        Session::open_overlaid(options, self.sources.clone(), overlay)
    }

    /// Composes the session's context (a session this engine opened), reusing the
    /// last composition of that context where nothing it depended on changed.
    pub fn compose(&mut self, session: &Session) -> Result<Composition, Vec<Diagnostic>> {
        let memo = self
            .memos
            .entry(session.project.context.clone())
            .or_default();
        session.compose_incremental(memo)
    }

    /// Composes context `name` over the session's template, as
    /// [`Session::compose_context`], with that context's memo.
    pub fn compose_context(
        &mut self,
        session: &Session,
        name: &str,
    ) -> Result<Composition, Vec<Diagnostic>> {
        let memo = self.memos.entry(name.to_string()).or_default();
        session.compose_context_incremental(name, memo)
    }

    /// Composes every context of `names` over the session's template, each with its
    /// own memo, on all cores (as [`Session::compose_context`] each).
    pub fn compose_contexts(
        &mut self,
        session: &Session,
        names: &[String],
    ) -> Vec<Result<Composition, Vec<Diagnostic>>> {
        let jobs: Vec<(String, std::sync::Mutex<Memo>)> = names
            .iter()
            .map(|n| {
                let memo = self.memos.remove(n).unwrap_or_default();
                (n.clone(), std::sync::Mutex::new(memo))
            })
            .collect();
        let results = crate::parallel::map(&jobs, crate::parallel::cores(), |(name, memo)| {
            let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
            session.compose_context_incremental(name, &mut memo)
        });
        for (name, memo) in jobs {
            self.memos
                .insert(name, memo.into_inner().unwrap_or_else(|p| p.into_inner()));
        }
        results
    }

    /// `on`: from now on the caller tells the engine about every change of a file of
    /// the template ([`Recomposer::changed`], or [`Recomposer::unknown_changes`] when
    /// it cannot say what changed) before the next [`Recomposer::open`], which then
    /// reads only those files and keeps the last listing and texts of the others
    /// (watch mode and the language server know what changed). Off by default:
    /// every open lists the template and reads and compares every facet file.
    pub fn tell_changes(&mut self, on: bool) {
        self.facets.tell_changes(on);
    }

    /// Files (absolute paths) changed, created or removed since the last open; a
    /// directory named here is listed again. Paths outside the template need no
    /// telling: everything but the template's facet files is read on every open.
    pub fn changed<'p>(&mut self, paths: impl IntoIterator<Item = &'p std::path::Path>) {
        self.facets.changed(paths);
    }

    /// Something changed that the caller cannot name: the next open lists and reads
    /// everything (and later ones go back to reading what they are told).
    pub fn unknown_changes(&mut self) {
        self.facets.unknown_changes();
    }

    /// The options the next [`Recomposer::open`] uses (a changed context setting).
    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.options
    }

    /// How much the last composition of `context` reused.
    pub fn reuse(&self, context: &str) -> crate::compose::memo::Reuse {
        self.memos.get(context).map(Memo::last).unwrap_or_default()
    }

    /// Forgets the compositions kept (the parsed facets stay).
    pub fn forget(&mut self) {
        self.memos.clear();
    }
}
