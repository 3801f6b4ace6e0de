//! Loading a session: the project discovered (or a bare template taken as one), its
//! template loaded — with the `oci://` sources of a published blueprint, and for a
//! one-shot run with the facets certainly inactive left hollow — and its schema
//! compiled.

use super::{Options, Session};
use crate::compose::face::{Expressions, Schema, Values};
use crate::compose::model::inputs::{Builtins, Layer};
use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, EngineConfig};
use crate::files::{Diagnostic, FileMap, FileOverlay, FileTree};
use crate::oci::load::Pulled;
use crate::oci::pulls::Wanted;
use crate::oci::sources::Entry;
use crate::project::{self, Project};
use crate::template::Template;
use std::path::PathBuf;
use std::sync::Arc;

impl Session {
    /// Discovers the project, loads its template and compiles its schema. Diagnostics
    /// name files registered in `sources`, which the caller keeps to render them.
    pub fn open(options: Options, files: Arc<FileMap>) -> Result<Session, Vec<Diagnostic>> {
        Session::discover(options, files, Load::Whole)
    }

    /// The project around `options.cwd`, loaded as `load` says.
    pub(super) fn discover(
        options: Options,
        files: Arc<FileMap>,
        load: Load,
    ) -> Result<Session, Vec<Diagnostic>> {
        let project = project::discover(
            &options.cwd,
            &options.locate,
            options.env_context.clone(),
            &files,
        )
        .map_err(|d| vec![d])?;
        Session::load(project, options, files, load)
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
        Session::load(project, options, sources, Load::Whole)
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
        Session::load(
            bare_project(tree, root, &options),
            options,
            files,
            Load::Whole,
        )
    }

    /// A session over a project found another way ([`project::discover_in`]: a
    /// commit's files).
    pub fn of_project(
        project: Project,
        options: Options,
        files: Arc<FileMap>,
    ) -> Result<Session, Vec<Diagnostic>> {
        Session::load(project, options, files, Load::Whole)
    }

    pub(super) fn load(
        project: Project,
        options: Options,
        sources: Arc<FileMap>,
        load: Load,
    ) -> Result<Session, Vec<Diagnostic>> {
        let cache = options.facet_cache.as_deref();
        let engine = Engine::new(EngineConfig {
            terraform_output: true,
            ..EngineConfig::default()
        });
        let prunable = load == Load::Once
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
                    // Nothing large is collected here.
                    memory: Default::default(),
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
}

/// How much of the template a session loads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Load {
    /// All of it: the session may compose any context, explain, test.
    Whole,
    /// What one composition of the session's context reads ([`OneShot`]): facets
    /// certainly inactive there are kept hollow, which saves the memory of their
    /// trees (`template::prune`).
    Once,
}

/// The project a bare template stands for: the root is `root`, the context is
/// `options.locate.context` (else `local`) and there are no value files.
pub(super) fn bare_project(tree: FileTree, root: impl Into<PathBuf>, options: &Options) -> Project {
    Project {
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
        files: None,
        shown_prefix: String::new(),
    }
}

/// Under a project's value layers: the schema's defaults, and the Windsor CLI's config
/// defaults (S4). Composing, the load's test and `bpc show values` see the same scope.
pub(super) const SCHEMA_DEFAULTS: bool = true;
pub(super) const CONFIG_DEFAULTS: bool = true;

/// A project context's value inputs, as composing it sees them.
pub(super) fn project_values<'a>(
    layers: &'a [Layer],
    builtins: &'a Builtins,
    files: &'a FileMap,
) -> Values<'a> {
    Values {
        layers,
        builtins,
        schema_defaults: SCHEMA_DEFAULTS,
        config_defaults: CONFIG_DEFAULTS,
        files,
    }
}

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
    let values = project_values(layers, &builtins, sources);
    crate::compose::face::inactive_at_load::test(
        with,
        &values,
        schema,
        project.template.clone(),
        sources.clone(),
    )
}

/// For a project built on a published blueprint: the context's other `oci://` sources
/// and those the pulled blueprints list (recursively), pulled ([`crate::oci::pulls`])
/// and loaded as sources of the composing template (S14). Only the context's own
/// entries can be installed; sources a pulled blueprint lists are loaded, not merged.
fn published_sources(
    project: &Project,
    template: &mut Template,
    files: &Arc<FileMap>,
    settings: &crate::oci::Settings,
) -> Result<(), Vec<Diagnostic>> {
    let Some(published) = &project.published else {
        return Ok(());
    };
    let mut wanted: Vec<Wanted> = (published.others.iter())
        .map(|e| Wanted {
            entry: e.clone(),
            listed_in: published.listed_in.clone(),
            install: e.install,
        })
        .collect();
    wanted.extend(listed_by(template));
    let upstream = &mut template.upstream;
    let warnings = &mut template.warnings;
    let load = |entry: &Entry, pulled: Pulled, install: bool| {
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
        let nested = listed_by(&loaded);
        warnings.extend(loaded.warnings.iter().cloned());
        upstream.push(crate::template::Upstream {
            name: entry.name.clone(),
            template: loaded,
            depth: 0,
            references: Vec::new(),
            entry: entry.span,
            install,
        });
        Ok(nested)
    };
    let root = &project.root;
    crate::oci::pulls::pull_all(root, &published.name, wanted, settings, load)
}

/// The sources the blueprint of `template` lists, to be loaded, not merged.
fn listed_by(template: &Template) -> Vec<Wanted> {
    let Some(base) = &template.base else {
        return Vec::new();
    };
    let listed_in = template.tree.describe("blueprint.yaml");
    (crate::oci::sources::entries(base).into_iter())
        .map(|entry| Wanted {
            entry,
            listed_in: listed_in.clone(),
            install: false,
        })
        .collect()
}
