//! `bpc eval`: evaluate one expression or `${…}` template against values — the
//! quickest way to try the expression language.

use super::compose::Format;
use super::output::emit;
use super::report;
use crate::expr::host::{NullHost, TerraformOutputs};
use crate::expr::{Engine, EngineConfig, Map, Value};
use crate::source::{Diagnostic, SourceMap, Span};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The expression (or, with --template, the text with `${…}`).
    pub expression: String,
    /// Treat the argument as text with `${…}` interpolations.
    #[arg(long)]
    pub template: bool,
    /// Values files (YAML or JSON), merged in order.
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Set one value (`a.b=value`, the value parsed as YAML).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
}

pub fn run(args: EvalArgs) -> ExitCode {
    let sources = SourceMap::new();
    match evaluate(&args, &sources) {
        Ok(value) => {
            let text = match args.format {
                Format::Yaml => crate::emit::to_yaml(&value),
                Format::Json => match crate::emit::to_json(&value).map_err(|e| e.to_string()) {
                    Ok(t) => t,
                    Err(e) => {
                        report(&[Diagnostic::error(e)], &sources);
                        return ExitCode::from(1);
                    }
                },
            };
            match emit(None, &text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    report(&[Diagnostic::error(e)], &sources);
                    ExitCode::from(1)
                }
            }
        }
        Err(d) => {
            report(&[d], &sources);
            ExitCode::from(1)
        }
    }
}

fn evaluate(args: &EvalArgs, sources: &SourceMap) -> Result<Value, Diagnostic> {
    let mut scope = Value::map(Map::default());
    for file in &args.values {
        let node = crate::project::read_yaml_file(file, &file.to_string_lossy(), sources)?;
        crate::compose::scope::deep_merge(&mut scope, &node.to_value());
    }
    if !args.set.is_empty() {
        let sets = crate::project::parse_sets(&args.set, sources)?;
        crate::compose::scope::deep_merge(&mut scope, &sets);
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
    let file = sources.add("<expression>".to_string(), args.expression.clone());
    let result = if args.template {
        engine.render_template(&args.expression, &scope, &host)
    } else {
        engine.eval(&args.expression, &scope, &host)
    };
    result.map_err(|e| {
        Diagnostic::error(e.message.clone())
            .with_primary(Span::new(file, e.span.start, e.span.end), e.message.clone())
    })
}
