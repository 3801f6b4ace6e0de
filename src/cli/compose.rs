//! `bpc compose`: the blueprint of one context.

use super::contexts::{self, ContextsArgs};
use super::output::{emit, write_atomically};
use super::report;
use crate::all_contexts::{Counts, Done, Selection};
use crate::compose::host::Environment;
use crate::compose::Composition;
use crate::files::{Diagnostic, FileMap};
use crate::project;
use crate::session::{self, Session};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Yaml,
    Json,
}

/// Where the project, template and values come from (shared by several commands).
#[derive(Args, Debug, Clone)]
pub struct ProjectArgs {
    /// Project root (default: the nearest ancestor holding windsor.yaml, else here).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Template directory or .tar.gz archive (default: contexts/_template or _template).
    #[arg(long, value_name = "DIR|FILE.tar.gz")]
    pub template: Option<PathBuf>,
    /// Context name (default: $WINDSOR_CONTEXT, windsor.yaml `context:`, else `local`).
    /// `compose` and `render` take it more than once for several contexts at once.
    #[arg(long, value_name = "NAME")]
    pub context: Vec<String>,
    /// Extra values files, applied in order over the context's values.
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Set one value (`cluster.workers.count=3`); the value is parsed as YAML.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Treat warnings (unknown keys, …) as errors.
    #[arg(long)]
    pub strict: bool,
    /// Where a context value and a facet config block set the same path: the context
    /// value wins, as in the Windsor CLI (default), or the facet's, as the facet format
    /// first specified.
    #[arg(long, value_enum, default_value_t = ConfigPrecedence::ContextWins)]
    pub config_precedence: ConfigPrecedence,
    /// Wall-clock seconds one `jsonnet()` evaluation may take (docs/limits.md).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub jsonnet_timeout: f64,
    /// Memory one `jsonnet()` evaluation may hold, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub jsonnet_memory: usize,
    /// Largest composed blueprint, in MiB of its compact JSON form.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub max_output: usize,
    /// Never contact a registry: `oci://` sources must already be in the project's
    /// `.windsor/cache/oci/` (an error names what is missing).
    #[arg(long)]
    pub offline: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum ConfigPrecedence {
    /// context values win over facet config, key by key; `""`, `[]` and `{}` do not
    /// erase a facet's value
    #[default]
    ContextWins,
    /// facet config wins over context values
    FacetWins,
}

impl ConfigPrecedence {
    pub fn precedence(self) -> crate::compose::precedence::Precedence {
        match self {
            ConfigPrecedence::ContextWins => crate::compose::precedence::Precedence::ContextWins,
            ConfigPrecedence::FacetWins => crate::compose::precedence::Precedence::FacetWins,
        }
    }
}

impl Default for ProjectArgs {
    fn default() -> Self {
        ProjectArgs {
            project: None,
            template: None,
            context: Vec::new(),
            values: Vec::new(),
            set: Vec::new(),
            strict: false,
            config_precedence: ConfigPrecedence::default(),
            jsonnet_timeout: 10.0,
            jsonnet_memory: 1024,
            max_output: 64,
            offline: false,
        }
    }
}

impl ProjectArgs {
    /// The budgets the flags ask for (defaults: `compose::Limits::default()`).
    pub fn limits(&self) -> crate::compose::Limits {
        let timeout = if self.jsonnet_timeout.is_finite() && self.jsonnet_timeout > 0.0 {
            std::time::Duration::from_secs_f64(self.jsonnet_timeout.min(1e9))
        } else {
            std::time::Duration::ZERO
        };
        crate::compose::Limits {
            jsonnet: crate::expr::host::JsonnetLimits {
                timeout,
                memory: self.jsonnet_memory.saturating_mul(1024 * 1024),
            },
            output_bytes: self.max_output.saturating_mul(1024 * 1024),
        }
    }

    /// The session these flags ask for, found from the process's current directory.
    /// `env_context` is `$WINDSOR_CONTEXT` for the commands that honour it.
    pub fn session_options(
        &self,
        env_context: Option<String>,
        terraform_outputs: Option<PathBuf>,
    ) -> Result<session::Options, Vec<Diagnostic>> {
        if self.context.len() > 1 {
            return Err(vec![Diagnostic::error(format!(
                "--context is given {} times; this command composes one context",
                self.context.len()
            ))
            .with_help(
                "`bpc compose` and `bpc render` take several --context (or --all-contexts)",
            )]);
        }
        let cwd = std::env::current_dir().map_err(|e| {
            vec![Diagnostic::error(format!(
                "cannot read the current directory: {e}"
            ))]
        })?;
        Ok(session::Options {
            cwd,
            env_context,
            locate: project::Options {
                project: self.project.clone(),
                template: self.template.clone(),
                context: self.context.first().cloned(),
                values: self.values.clone(),
                set: self.set.clone(),
                oci: crate::oci::Settings::from_process(self.offline),
            },
            upstream: true,
            precedence: self.config_precedence.precedence(),
            limits: self.limits(),
            environment: Environment::Process,
            terraform_outputs,
            ..session::Options::default()
        })
    }
}

/// `$WINDSOR_CONTEXT`, for the commands that honour it.
pub fn env_context() -> Option<String> {
    std::env::var("WINDSOR_CONTEXT").ok()
}

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc compose                                  # the project around here, context `local`
  bpc compose --context prod --format json --out blueprint.json
  bpc compose --set provider=aws --provenance")]
pub struct ComposeArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
    /// Write the blueprint to FILE (atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Terraform outputs (YAML/JSON: component → output → value) to resolve
    /// `terraform_output()` with; without it those expressions stay as written.
    #[arg(long, value_name = "FILE")]
    pub terraform_outputs: Option<PathBuf>,
    /// Annotate every value with where it came from (a trailing comment in YAML; with
    /// --format json, a provenance document next to the blueprint).
    #[arg(long)]
    pub provenance: bool,
    #[command(flatten)]
    pub contexts: ContextsArgs,
    #[command(flatten)]
    pub watch: super::watch::WatchArgs,
}

pub fn run(args: ComposeArgs) -> ExitCode {
    if let Some(selection) = args.contexts.selection(&args.project) {
        if args.watch.watch {
            eprintln!("error: --watch composes one context");
            return ExitCode::from(2);
        }
        return run_contexts(&args, &selection);
    }
    if args.watch.watch {
        return super::watch::run(super::Cli {
            color: super::color_choice(),
            command: super::Command::Compose(args),
        });
    }
    let sources = Arc::new(FileMap::new());
    match compose_text(&args, &sources) {
        Ok((text, warnings)) => {
            report(&warnings, &sources);
            if args.project.strict && !warnings.is_empty() {
                eprintln!("error: {} warning(s) with --strict", warnings.len());
                return ExitCode::from(1);
            }
            match emit(args.out.as_deref(), &text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    report(&[Diagnostic::error(e)], &sources);
                    ExitCode::from(1)
                }
            }
        }
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            ExitCode::from(1)
        }
    }
}

/// Several contexts: each composed in parallel to `DIR/<context>.yaml` (or `.json`).
fn run_contexts(args: &ComposeArgs, selection: &Selection) -> ExitCode {
    let extension = match args.format {
        Format::Yaml => "yaml",
        Format::Json => "json",
    };
    contexts::run_each(
        &args.project,
        args.terraform_outputs.clone(),
        args.out.as_deref(),
        selection,
        |session, name, dir| {
            compose_context_to(
                session,
                args,
                name,
                &dir.join(format!("{name}.{extension}")),
            )
        },
    )
}

/// One context of a multi-context run, written atomically to `path` (or not at all).
fn compose_context_to(session: &Session, args: &ComposeArgs, name: &str, path: &Path) -> Done {
    let composition = match session.compose_context(name) {
        Ok(composition) => composition,
        Err(errors) => return Done::failed(errors),
    };
    let mut done = Done {
        warnings: composition.warnings.clone(),
        notes: composition.messages.clone(),
        ..Done::default()
    };
    if let Some(error) = contexts::strict_failure(args.project.strict, done.warnings.len(), 0) {
        done.errors.push(error);
        return done;
    }
    let written =
        blueprint_text(session, &composition, args.format, args.provenance).and_then(|text| {
            write_atomically(path, text.as_bytes()).map_err(|e| {
                vec![Diagnostic::error(format!(
                    "cannot write {}: {e}",
                    path.display()
                ))]
            })
        });
    match written {
        Ok(()) => done.counts = Some(Counts::of(&composition)),
        Err(errors) => done.errors = errors,
    }
    done
}

fn compose_text(
    args: &ComposeArgs,
    sources: &Arc<FileMap>,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    let options = args
        .project
        .session_options(env_context(), args.terraform_outputs.clone())?;
    let session = Session::open(options, sources.clone())?;
    let composition = session.compose()?;
    let text = blueprint_text(&session, &composition, args.format, args.provenance)?;
    for m in &composition.messages {
        eprintln!("note: {m}");
    }
    let warnings = composition.warnings.clone();
    // The process exits next: freeing a large template's trees node by node would
    // only delay that (about a tenth of the run at 10 000 facets).
    std::mem::forget((session, composition));
    Ok((text, warnings))
}

/// The composed blueprint as text: YAML or JSON, with or without provenance.
pub(crate) fn blueprint_text(
    session: &Session,
    composition: &Composition,
    format: Format,
    provenance: bool,
) -> Result<String, Vec<Diagnostic>> {
    let (template, sources) = (&session.template, &session.sources);
    // The budget bounds the text as well as the value: checked before the text exists.
    crate::compose::budget::check_text(
        &composition.blueprint,
        session.options.limits.output_bytes,
        "the composed blueprint",
    )
    .map_err(|d| vec![d])?;
    Ok(match (format, provenance) {
        (Format::Yaml, false) => crate::emit::to_yaml(&composition.blueprint),
        (Format::Yaml, true) => crate::emit::provenance::yaml(template, composition, sources),
        (Format::Json, false) => crate::emit::to_json(&composition.blueprint)
            .map_err(|e| e.to_string())
            .map_err(|e| vec![Diagnostic::error(e)])?,
        (Format::Json, true) => crate::emit::provenance::json(template, composition, sources)
            .map_err(|e| vec![Diagnostic::error(e)])?,
    })
}
