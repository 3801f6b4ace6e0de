//! `bpc eval`: evaluate one expression or `${…}` text — in a project's real scope when
//! there is a project (the quickest way to see what a facet expression gets), else
//! against `--values`/`--set` alone (the quickest way to try the expression language).

use super::args::{env_context, Format, ProjectArgs};
use super::output::emit;
use super::terminal::report;
use crate::expr::host::{NullHost, TerraformOutputs};
use crate::expr::{Engine, EngineConfig, Map, Value};
use crate::files::{Diagnostic, FileMap};
use crate::session::{Session, Syntax};
use clap::Args;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
// `--template` once was this command's switch for `${…}` text; it now names the
// template as everywhere else. A bare `--template` (no value) still means `--text`: it
// stands for NO_PATH, which no path can be.
#[command(mut_arg("template", |a| a.num_args(0..=1).default_missing_value(NO_PATH)))]
#[command(after_help = "Examples:
  bpc eval 'nodes.total'                       # a config block, in the project around here
  bpc eval --project examples/aws-prod --template _template --context prod 'nodes.workers'
  bpc eval --text 'workers: ${nodes.workers}' --set cluster.workers.count=3

Inside a project (or with --project/--template), the expression sees what a facet of the
template sees: value layers, schema defaults, the config blocks of the active facets;
file() and jsonnet() read relative to the template root. Elsewhere it sees --values and
--set only.")]
pub struct EvalArgs {
    /// The expression (with --text, text with `${…}` interpolations).
    pub expression: Option<String>,
    /// Read the argument as text with `${…}` interpolations, not as one expression.
    #[arg(long)]
    pub text: bool,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
}

/// What a bare `--template` reads as: a NUL, which no file name holds.
const NO_PATH: &str = "\0";

/// What one run evaluates: the text, how to read it, and whether the deprecated
/// `--template` switch said so.
struct Request {
    text: String,
    syntax: Syntax,
    deprecated_switch: bool,
}

/// Reads the argument and `--text`, taking `--template` as the old switch where it
/// cannot name a template: without a value, or in place of a missing expression
/// (`bpc eval --template 'name-${context}'`).
fn request(args: &mut EvalArgs) -> Option<Request> {
    let deprecated_switch = match &args.project.at.template {
        Some(t) if t.as_os_str() == NO_PATH => true,
        Some(_) => args.expression.is_none(),
        None => false,
    };
    if deprecated_switch {
        let text = args
            .project
            .at
            .template
            .take()
            .filter(|t| t.as_os_str() != NO_PATH);
        if args.expression.is_none() {
            args.expression = text.map(|t| t.to_string_lossy().to_string());
        }
    }
    Some(Request {
        text: args.expression.clone()?,
        syntax: if args.text || deprecated_switch {
            Syntax::Text
        } else {
            Syntax::Expression
        },
        deprecated_switch,
    })
}

pub fn run(mut args: EvalArgs) -> ExitCode {
    let Some(request) = request(&mut args) else {
        eprintln!("error: give the EXPRESSION to evaluate (see `bpc eval --help`)");
        return ExitCode::from(2);
    };
    if request.deprecated_switch {
        eprintln!("warning: `bpc eval --template` as a switch is deprecated: use `--text` (`--template DIR` names the template, as in every command)");
    }
    let sources = Arc::new(FileMap::new());
    let value = match evaluate(&args, &request, &sources) {
        Ok(value) => value,
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            return ExitCode::from(1);
        }
    };
    let budget = args.project.max_output.saturating_mul(1024 * 1024);
    // Text that renders to a string prints as that string: what a `${…}` in a facet
    // would put in place, not a YAML document holding it.
    if let (Syntax::Text, Format::Yaml, crate::value::Value::Str(s)) =
        (request.syntax, args.format, &value)
    {
        if s.len() <= budget {
            let newline = if s.ends_with('\n') { "" } else { "\n" };
            return match emit(None, &[s.as_bytes(), newline.as_bytes()]) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    report(&[Diagnostic::error(e)], &sources);
                    ExitCode::from(1)
                }
            };
        }
    }
    let text =
        match crate::emit::text_within_budget(&value, args.format.text(), budget, "the value") {
            Ok(text) => text,
            Err(d) => {
                report(&[d], &sources);
                return ExitCode::from(1);
            }
        };
    match emit(None, &text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&[Diagnostic::error(e)], &sources);
            ExitCode::from(1)
        }
    }
}

/// In the project's scope when there is a project, else against the values given.
fn evaluate(
    args: &EvalArgs,
    request: &Request,
    files: &Arc<FileMap>,
) -> Result<Value, Vec<Diagnostic>> {
    let options = args.project.session_options(env_context(), None)?;
    if !crate::project::present(&options.cwd, &options.locate) {
        return evaluate_bare(args, request, files);
    }
    let session = Session::open(options, files.clone())?;
    let mut warnings = session.project.warnings.clone();
    warnings.extend(session.value_warnings()?);
    report(&warnings, files);
    if let Some(error) = args.project.strict_failure(&warnings, 0) {
        return Err(vec![error]);
    }
    session.eval(&request.text, request.syntax)
}

/// Against `--values` files and `--set` pairs only, with no files to read.
fn evaluate_bare(
    args: &EvalArgs,
    request: &Request,
    files: &FileMap,
) -> Result<Value, Vec<Diagnostic>> {
    let mut scope = Value::map(Map::default());
    for file in &args.project.values {
        let node = crate::project::read_yaml_file(file, &file.to_string_lossy(), files)
            .map_err(|d| vec![d])?;
        crate::value::edit::deep_merge(&mut scope, &node.to_value());
    }
    if !args.project.set.is_empty() {
        let sets = crate::project::parse_sets(&args.project.set, files).map_err(|d| vec![d])?;
        crate::value::edit::deep_merge(&mut scope, &sets);
    }
    let scope = match scope {
        Value::Map(m) => (*m).clone(),
        _ => Map::default(),
    };
    let engine = Engine::new(EngineConfig {
        terraform_output: false,
        ..EngineConfig::default()
    });
    let host = NullHost {
        terraform: TerraformOutputs::Unregistered,
    };
    let file = files.add("<expression>", request.text.as_str());
    request
        .syntax
        .eval(&engine, &request.text, &scope, &host)
        .map_err(|e| {
            vec![crate::compose::face::text_diagnostic(
                &e,
                file,
                &request.text,
            )]
        })
}
