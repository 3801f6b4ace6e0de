//! The arguments several commands share, defined once: where the project and template
//! are, the value layers, `--strict`, the budgets, `--format`, several contexts,
//! `--watch`, `--color`. A command's own flags stay in its file. This file uses no other
//! file of `cli/`.

use crate::compose::model::inputs::Environment;
use crate::files::Diagnostic;
use crate::session;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// `--format` of the commands that print a value or a blueprint.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Yaml,
    Json,
}

impl Format {
    /// The library's name for the format.
    pub fn text(self) -> crate::emit::Format {
        match self {
            Format::Yaml => crate::emit::Format::Yaml,
            Format::Json => crate::emit::Format::Json,
        }
    }
}

/// Where the project and its template are.
#[derive(Args, Debug, Clone, Default)]
pub struct LocateArgs {
    /// Project root (default: the nearest ancestor holding windsor.yaml, else here).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Template directory or .tar.gz archive (default: contexts/_template or _template).
    #[arg(long, value_name = "DIR|FILE.tar.gz")]
    pub template: Option<PathBuf>,
}

/// Where the project, template and values come from, and how they combine (every
/// command that opens a session).
#[derive(Args, Debug, Clone)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub at: LocateArgs,
    /// Context name (default: $WINDSOR_CONTEXT, windsor.yaml `context:`, else `local`).
    /// `compose`, `render`, `graph`, `verify` and `check --policy` take it more than
    /// once for several contexts at once.
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
    /// Evaluation steps all the expressions of one composition may take.
    #[arg(long, value_name = "N", default_value_t = crate::expr::work::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
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
    pub fn precedence(self) -> crate::compose::model::precedence::Precedence {
        match self {
            ConfigPrecedence::ContextWins => {
                crate::compose::model::precedence::Precedence::ContextWins
            }
            ConfigPrecedence::FacetWins => crate::compose::model::precedence::Precedence::FacetWins,
        }
    }
}

impl Default for ProjectArgs {
    fn default() -> Self {
        ProjectArgs {
            at: LocateArgs::default(),
            context: Vec::new(),
            values: Vec::new(),
            set: Vec::new(),
            strict: false,
            config_precedence: ConfigPrecedence::default(),
            jsonnet_timeout: 10.0,
            jsonnet_memory: 1024,
            max_output: 64,
            max_steps: crate::expr::work::DEFAULT_MAX_STEPS,
            offline: false,
        }
    }
}

impl ProjectArgs {
    /// The budgets the flags ask for (defaults: `compose::Limits::default()`).
    pub fn limits(&self) -> crate::compose::model::inputs::Limits {
        let timeout = if self.jsonnet_timeout.is_finite() && self.jsonnet_timeout > 0.0 {
            std::time::Duration::from_secs_f64(self.jsonnet_timeout.min(1e9))
        } else {
            std::time::Duration::ZERO
        };
        crate::compose::model::inputs::Limits {
            jsonnet: crate::expr::host::JsonnetLimits {
                timeout,
                memory: self.jsonnet_memory.saturating_mul(1024 * 1024),
            },
            output_bytes: self.max_output.saturating_mul(1024 * 1024),
            steps: self.max_steps,
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
                "`compose`, `render`, `graph`, `verify` and `check --policy` take several \
                 --context (or --all-contexts)",
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
            locate: crate::project::Options {
                project: self.at.project.clone(),
                template: self.at.template.clone(),
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

    /// The `--strict` failure of a run with these warnings and deferred values (see
    /// [`crate::files::strict_failure`]).
    pub fn strict_failure(&self, warnings: &[Diagnostic], deferred: usize) -> Option<Diagnostic> {
        crate::files::strict_failure(self.strict, warnings.len(), deferred)
    }
}

/// `$WINDSOR_CONTEXT`, for the commands that honour it.
pub fn env_context() -> Option<String> {
    std::env::var("WINDSOR_CONTEXT").ok()
}

/// `--all-contexts` (compose, render, graph).
#[derive(Args, Debug, Clone, Default)]
pub struct ContextsArgs {
    /// Every context the project defines (contexts/<name>/ and windsor.yaml
    /// `contexts:`), in parallel, one output per context under --out DIR.
    #[arg(long, conflicts_with = "context")]
    pub all_contexts: bool,
}

impl ContextsArgs {
    /// The contexts asked for, when the run covers more than one context's default
    /// (`--all-contexts` or `--context` given more than once); `None` for one context.
    pub fn selection(&self, project: &ProjectArgs) -> Option<crate::all_contexts::Selection> {
        use crate::all_contexts::Selection;
        if self.all_contexts {
            Some(Selection::All)
        } else if project.context.len() > 1 {
            Some(Selection::Named(project.context.clone()))
        } else {
            None
        }
    }
}

/// `--watch` (compose, render, test).
#[derive(Args, Debug, Clone, Default)]
pub struct WatchArgs {
    /// Run again whenever an input changes (facets, schema, blueprint, values,
    /// windsor.yaml, files read by file()/jsonnet(), contexts/); a failed run keeps the
    /// previous output. Stop with Ctrl-C.
    #[arg(long)]
    pub watch: bool,
}

/// Where the template and project are, for the commands that publish them (`bundle`,
/// `push`): a template directory only, no context.
#[derive(Args, Debug, Clone, Default)]
pub struct WhereArgs {
    /// Project root, whose `kustomize/` and `terraform/` are bundled too (default: the
    /// nearest ancestor holding windsor.yaml, else here).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Template directory (default: contexts/_template or _template).
    #[arg(long, value_name = "DIR")]
    pub template: Option<PathBuf>,
}
