//! `bpc check`: a template's mistakes, found without composing any context. Exit 0
//! when clean (notes and, without `--strict`, warnings allowed), 1 otherwise.

use super::args::{env_context, LocateArgs, ProjectArgs};
use super::policy::PolicyReport;
use super::terminal::{color_stdout, report};
use crate::check::coverage::{Coverage, Item};
use crate::check::{Allow, Report};
use crate::compose::model::for_explain::ForExplain;
use crate::files::{Diagnostic, FileMap, Severity};
use crate::session::{Options, Session};
use crate::testing::runner::RunOptions;
use crate::testing::suite::Select;
use clap::{Args, ValueEnum};
use std::process::ExitCode;
use std::sync::Arc;

/// The project-level config file (its `check.allow` silences findings).
pub const PROJECT_CONFIG: &str = "bpc.yaml";

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum CheckFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  bpc check                                  # the template of the project around here
  bpc check --project tests/conformance/windsor-core-eaa2bcea --strict
  bpc check --coverage --format json > coverage.json
  bpc check --policy policies/ --all-contexts  # Rego rules over blueprints, Flux objects, tfvars

Silence one finding with `# bpc:allow ID` on its line or the line above, a whole file
with `# bpc:allow-file ID`, a project with `check: {allow: [ID]}` in bpc.yaml.")]
pub struct CheckArgs {
    #[command(flatten)]
    pub at: LocateArgs,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Treat warnings as errors (exit 1 on any).
    #[arg(long)]
    pub strict: bool,
    /// Also run the template's tests and show which facets, config blocks, components
    /// and `when` outcomes no case reaches.
    #[arg(long)]
    pub coverage: bool,
    /// Never contact a registry: `oci://` sources must already be in the project's
    /// `.windsor/cache/oci/` (an error names what is missing).
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub policies: super::policy::PolicyArgs,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let sources = Arc::new(FileMap::new());
    match checked(&args, &sources) {
        Ok((report, coverage, policies)) => {
            let denied = policies.as_ref().is_some_and(|p| {
                p.count(Severity::Error) > 0 || (args.strict && p.count(Severity::Warning) > 0)
            });
            let fails = report.fails(args.strict) || denied;
            match args.format {
                CheckFormat::Text => {
                    print_text(&report, coverage.as_ref(), &sources, args.strict);
                    if let Some(policies) = &policies {
                        print_policies(policies, &sources);
                    }
                }
                CheckFormat::Json => {
                    let mut value = json(&report, coverage.as_ref(), &sources, args.strict);
                    if let (Some(policies), Some(map)) = (&policies, value.as_object_mut()) {
                        map.insert(
                            "policies".to_string(),
                            super::policy::json(policies, &sources),
                        );
                    }
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&value).unwrap_or_default()
                    )
                }
            }
            ExitCode::from(u8::from(fails))
        }
        Err(d) => {
            report(&d, &sources);
            ExitCode::from(1)
        }
    }
}

type Checked = (Report, Option<Coverage>, Option<PolicyReport>);

fn checked(args: &CheckArgs, files: &Arc<FileMap>) -> Result<Checked, Vec<Diagnostic>> {
    let project_args = ProjectArgs {
        at: args.at.clone(),
        offline: args.offline,
        ..ProjectArgs::default()
    };
    let with_policies = !args.policies.policy.is_empty();
    // Policies read a composed context: the default one is the project's, as for
    // `bpc compose`.
    let env = if with_policies { env_context() } else { None };
    let options = project_args.session_options(env, None)?;
    let options = match with_policies {
        // Each composition is checked and forgotten: nothing will explain it.
        true => Options {
            for_explain: ForExplain::Dropped,
            ..options
        },
        false => options,
    };
    let session = Session::open(options, files.clone())?;
    let allow = project_allows(&session, files)?;
    let report = crate::check::check(&session.template, &session.engine, &allow);
    let coverage = if args.coverage {
        Some(coverage(&session)?)
    } else {
        None
    };
    let policies = match with_policies {
        true => Some(super::policy::run(&session, &args.policies, files)?),
        false => None,
    };
    Ok((report, coverage, policies))
}

fn print_policies(report: &PolicyReport, sources: &FileMap) {
    let color = color_stdout();
    for merged in &report.findings {
        let d = super::policy::diagnostic(merged);
        println!("{}", crate::files::render(&d, sources, color));
    }
    println!("{}", report.summary());
}

fn project_allows(session: &Session, files: &FileMap) -> Result<Vec<Allow>, Vec<Diagnostic>> {
    let path = session.project.root.join(PROJECT_CONFIG);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let node = crate::project::read_yaml_file(&path, PROJECT_CONFIG, files).map_err(|d| vec![d])?;
    crate::check::silence::project_allows(&node)
}

fn coverage(session: &Session) -> Result<Coverage, Vec<Diagnostic>> {
    let options = RunOptions {
        precedence: session.options.precedence,
        limits: session.options.limits,
        ..RunOptions::default()
    };
    let suite = session.suite(options, &Select::default())?;
    // The first test file that does not load says why.
    if let Some(failed) = suite.failed().next() {
        return Err(failed.diagnostics.clone());
    }
    let cases = suite.cases();
    Ok(crate::check::coverage::coverage(
        &session.template,
        &suite.runner,
        &cases,
    ))
}

fn summary(report: &Report, strict: bool) -> String {
    let (errors, warnings, notes) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Note),
    );
    let mut line = format!("{errors} error(s), {warnings} warning(s), {notes} note(s)");
    if report.silenced > 0 {
        line.push_str(&format!(", {} silenced", report.silenced));
    }
    if strict && warnings > 0 {
        line.push_str(" (warnings are errors with --strict)");
    }
    line
}

fn print_text(report: &Report, coverage: Option<&Coverage>, sources: &FileMap, strict: bool) {
    // The findings go to stdout: whether they get colour is stdout's question.
    let color = color_stdout();
    for finding in &report.findings {
        let mut d = finding.diagnostic.clone();
        if strict && d.severity == Severity::Warning {
            d.severity = Severity::Error;
        }
        println!("{}", crate::files::render(&d, sources, color));
    }
    if let Some(coverage) = coverage {
        print!("{}", coverage_table(coverage));
    }
    println!("{}", summary(report, strict));
}

/// The coverage table: only what some case misses, then a total.
pub fn coverage_table(coverage: &Coverage) -> String {
    let mut out = format!(
        "coverage over {} case(s){}:\n",
        coverage.cases,
        if coverage.failed > 0 {
            format!(" ({} did not compose)", coverage.failed)
        } else {
            String::new()
        }
    );
    out.push_str(&format!(
        "  {:<13} {:<60} {:>5}  {:<12} {}\n",
        "item", "name", "cases", "when never", "at"
    ));
    let mut gaps = 0;
    for row in &coverage.rows {
        let missing = row.missing_branches();
        if row.cases > 0 && missing.is_empty() {
            continue;
        }
        gaps += 1;
        let item = match row.item {
            Item::Facet => "facet",
            Item::ConfigBlock => "config block",
            Item::Component => "component",
        };
        out.push_str(&format!(
            "  {item:<13} {:<60} {:>5}  {:<12} {}\n",
            row.name,
            row.cases,
            if missing.is_empty() {
                "-".to_string()
            } else {
                missing.join(", ")
            },
            row.at
        ));
    }
    let reached = coverage.rows.iter().filter(|r| r.cases > 0).count();
    out.push_str(&format!(
        "  {reached} of {} items active in some case; {gaps} with a gap\n",
        coverage.rows.len()
    ));
    out
}

fn json(
    report: &Report,
    coverage: Option<&Coverage>,
    files: &FileMap,
    strict: bool,
) -> serde_json::Value {
    let findings: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|f| {
            let d = &f.diagnostic;
            let severity = match d.severity {
                Severity::Warning if strict => "error",
                other => other.label(),
            };
            let location = f.span().and_then(|s| {
                let at = files.location(s.file, s.start as usize)?;
                Some(serde_json::json!({
                    "file": files.path(s.file)?,
                    "line": at.line,
                    "column": at.column,
                }))
            });
            serde_json::json!({
                "id": f.id.as_str(),
                "severity": severity,
                "message": d.message,
                "location": location,
                "help": d.help,
            })
        })
        .collect();
    let value = serde_json::json!({
        "findings": findings,
        "errors": report.count(Severity::Error) + if strict { report.count(Severity::Warning) } else { 0 },
        "warnings": if strict { 0 } else { report.count(Severity::Warning) },
        "notes": report.count(Severity::Note),
        "silenced": report.silenced,
        "coverage": coverage,
    });
    value
}
