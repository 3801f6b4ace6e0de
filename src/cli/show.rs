//! `bpc show values`: the effective values of a context, as Windsor's `show values`
//! prints them — schema defaults under the value layers, plus the typed fields
//! Windsor materialises — with each schema `description` as a comment above its key
//! and `sensitive: true` values masked.

use super::compose::{env_context, Format, ProjectArgs};
use super::report;
use crate::compose::schema::Schema;
use crate::emit::PathSegment;
use crate::expr::{Map, Value};
use crate::files::{Diagnostic, FileMap};
use crate::session::Session;
use clap::{Args, Subcommand};
use std::process::ExitCode;
use std::sync::Arc;

/// What a masked value reads as.
const SENSITIVE: &str = "<sensitive>";

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc show values --context prod
  bpc show values --format json > values.json")]
pub struct ShowArgs {
    #[command(subcommand)]
    pub what: ShowCommand,
}

#[derive(Subcommand, Debug)]
pub enum ShowCommand {
    /// The effective values of the context (schema defaults merged with the value
    /// layers), with schema descriptions as comments and sensitive values masked.
    Values(ValuesArgs),
}

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc show values                              # the context `local` of the project here
  bpc show values --context prod --format json
  bpc show values --set cluster.workers.count=3")]
pub struct ValuesArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format (YAML carries the descriptions as comments).
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
}

pub fn run(args: ShowArgs) -> ExitCode {
    match args.what {
        ShowCommand::Values(args) => run_values(args),
    }
}

fn run_values(args: ValuesArgs) -> ExitCode {
    let sources = Arc::new(FileMap::new());
    let options = args.project.session_options(env_context(), None);
    let text = options
        .and_then(|mut options| {
            // Only this template's schema matters here, not its upstream sources.
            options.upstream = false;
            Session::open(options, sources.clone())
        })
        .and_then(|session| {
            let text = values_text(&session, args.format)?;
            let mut warnings = session.project.warnings.clone();
            warnings.extend(session.value_warnings()?);
            Ok((text, warnings))
        });
    match text {
        Ok((text, warnings)) => {
            report(&warnings, &sources);
            if args.project.strict && !warnings.is_empty() {
                eprintln!("error: {} warning(s) with --strict", warnings.len());
                return ExitCode::from(1);
            }
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(d) => {
            report(&d, &sources);
            ExitCode::from(1)
        }
    }
}

/// The effective values of the session's context as `bpc show values` prints them.
pub fn values_text(session: &Session, format: Format) -> Result<String, Vec<Diagnostic>> {
    let schema = session.schema.as_ref();
    let values = crate::compose::scope::effective_values(
        schema,
        true,
        &session.layers()?,
        &session.sources,
        Some(session.project.builtins().context.as_str()),
    )?;
    let empty = serde_json::Value::Null;
    let root = schema.map_or(&empty, Schema::json);
    let masked = mask(&Value::map(values), root, root);
    crate::compose::budget::check_text(&masked, session.options.limits.output_bytes, "the values")
        .map_err(|d| vec![d])?;
    Ok(match format {
        Format::Yaml => {
            let hook = |path: &[PathSegment<'_>]| {
                let at = schema_at(root, path)?;
                at.get("description")
                    .and_then(serde_json::Value::as_str)
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
            };
            crate::emit::to_yaml_with_leading_comments(&masked, &hook)
        }
        Format::Json => {
            let mut text = crate::emit::to_json(&masked)
                .map_err(|e| vec![Diagnostic::error(e.to_string())])?;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text
        }
    })
}

/// Follows a local `$ref` (`#/$defs/…`), a few levels deep at most.
fn deref<'a>(
    root: &'a serde_json::Value,
    mut schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    for _ in 0..8 {
        let Some(pointer) = schema
            .get("$ref")
            .and_then(serde_json::Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        else {
            break;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The subschema of `schema` for one key or list index, if the schema names one.
fn child<'a>(
    root: &'a serde_json::Value,
    schema: &'a serde_json::Value,
    segment: PathSegment<'_>,
) -> Option<&'a serde_json::Value> {
    let schema = deref(root, schema);
    let next = match segment {
        PathSegment::Key(key) => schema
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object())),
        PathSegment::Index(_) => schema.get("items").filter(|i| i.is_object()),
    }?;
    Some(deref(root, next))
}

/// The subschema at a path of the values.
fn schema_at<'a>(
    root: &'a serde_json::Value,
    path: &[PathSegment<'_>],
) -> Option<&'a serde_json::Value> {
    let mut cur = root;
    for segment in path {
        cur = child(root, cur, *segment)?;
    }
    Some(cur)
}

/// `value` with every value whose schema says `sensitive: true` replaced by
/// [`SENSITIVE`].
fn mask(value: &Value, schema: &serde_json::Value, root: &serde_json::Value) -> Value {
    if schema.get("sensitive") == Some(&serde_json::Value::Bool(true)) {
        return Value::str(SENSITIVE);
    }
    match value {
        Value::Map(map) => {
            let out: Map = map
                .iter()
                .map(|(k, v)| {
                    let v = match child(root, schema, PathSegment::Key(k)) {
                        Some(sub) => mask(v, sub, root),
                        None => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            Value::map(out)
        }
        Value::List(items) => Value::list(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| match child(root, schema, PathSegment::Index(i)) {
                    Some(sub) => mask(v, sub, root),
                    None => v.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}
