//! `bpc test`: run the template's test cases (S11), optionally against golden files
//! ([`crate::testing::snapshot::Golden`]), and print the report.

use super::args::{ProjectArgs, WatchArgs};
use super::terminal::{color_stdout, report};
use crate::files::{Diagnostic, FileMap};
use crate::session::Session;
use crate::testing::case::Case;
use crate::testing::runner::{CaseResult, RunOptions, Runner, UnmockedOutputs, WindsorCompat};
use crate::testing::snapshot::Golden;
use crate::testing::suite::Select;
use clap::{Args, ValueEnum};

use std::process::ExitCode;
use std::sync::Arc;

/// Default of `--max-cases`.
pub const DEFAULT_MAX_CASES: usize = 10_000;

/// Cases composed at once: their compositions are held until their results are
/// printed (and compared with golden files), then dropped.
const BATCH: usize = 256;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum TestFormat {
    #[default]
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Unmocked {
    /// nil, so `?? fallback` applies (the Windsor CLI's rule)
    #[default]
    Null,
    /// a run error naming the component and output
    Error,
}

/// The Windsor CLI whose test runner `bpc test` follows where versions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Compat {
    /// Windsor's main after 0.9: `expect.config` and `exclude.config` are compared
    #[default]
    Latest,
    /// the 0.9 CLI: `config` expectations check nothing (a warning says so)
    #[value(name = "0.9")]
    V0_9,
}

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc test                                     # every case under <template>/tests
  bpc test --filter 'aws*' --snapshot
  bpc test \"minimal config creates database with defaults via dev mode\" --show")]
pub struct TestArgs {
    /// Run only the case with exactly this name.
    pub name: Option<String>,
    /// Run only cases whose name contains PATTERN (`*` and `?` are wildcards).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Apply schema defaults to every case (as if each set `applySchemaDefaults: true`).
    #[arg(long)]
    pub schema_defaults: bool,
    /// In a case with `terraformOutputs`, what `terraform_output()` gives for an output
    /// the case did not mock: null, as the Windsor CLI gives (default), or an error.
    /// Either way, reading a component the composed blueprint lacks fails the case.
    #[arg(long, value_enum, default_value_t = Unmocked::Null)]
    pub unmocked_outputs: Unmocked,
    /// Match as this Windsor CLI's test runner does, for a project pinned to it:
    /// `latest` (default) compares `expect.config` / `exclude.config` with the
    /// composed config blocks; `0.9` leaves them unchecked, as the 0.9 CLI did.
    #[arg(long, value_enum, value_name = "VERSION", default_value_t = Compat::Latest)]
    pub windsor_compat: Compat,
    /// Also compare each case's whole blueprint with its golden file.
    #[arg(long)]
    pub snapshot: bool,
    /// Write (or rewrite) the golden files instead of comparing them.
    #[arg(long)]
    pub update: bool,
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub format: TestFormat,
    /// Most test cases one run may select; more is an error (split the run with
    /// --filter, or raise this). Cases run and are reported in batches, so memory
    /// grows with the batch, not with the suite.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CASES)]
    pub max_cases: usize,
    /// With NAME: explain a value of that case's composed blueprint instead of checking
    /// it (`bpc test "my case" --explain terraform.cluster.inputs.name`).
    #[arg(long, value_name = "PATH", requires = "name")]
    pub explain: Option<String>,
    /// With NAME: print that case's composed blueprint (YAML, or JSON with
    /// `--format json`) instead of checking it, as Windsor's `show` does.
    #[arg(long, requires = "name", conflicts_with = "explain")]
    pub show: bool,
    /// Rego policies (a file or directory, as `bpc check --policy`) that cases with
    /// `policies:` are checked against; may be given several times.
    #[arg(long, value_name = "PATH")]
    pub policy: Vec<std::path::PathBuf>,
    /// The policy package whose rules are findings (default `main`).
    #[arg(long, value_name = "PACKAGE", requires = "policy")]
    pub namespace: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

pub fn run(args: TestArgs) -> ExitCode {
    let sources = Arc::new(FileMap::new());
    // Cases compose in isolation (S11): WINDSOR_CONTEXT plays no part.
    let tally = args
        .project
        .session_options(None, None)
        .and_then(|options| Session::open(options, sources.clone()))
        .and_then(|session| run_tests(&args, &session, &sources));
    match tally {
        Ok(tally) if tally.failed == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(diagnostics) => {
            report(&diagnostics, &sources);
            ExitCode::from(1)
        }
    }
}

/// How many selected cases passed and failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
}

/// Runs the selected cases of `session`'s template and prints the report (or, with
/// NAME, explains or shows that case).
pub fn run_tests(
    args: &TestArgs,
    session: &Session,
    sources: &Arc<FileMap>,
) -> Result<Tally, Vec<Diagnostic>> {
    let template = &session.template;
    let policies = case_policies(args, sources)?;
    let run_policies = |composition: &crate::compose::face::Composition| match &policies {
        Some(policies) => policy_findings(session, policies, composition),
        None => Ok(Vec::new()),
    };
    let options = run_options(args, session);
    let select = Select {
        name: args.name.clone(),
        filter: args.filter.clone(),
        most: args.max_cases,
    };
    let mut suite = session.suite(options, &select)?;
    if policies.is_some() {
        suite.runner.policies = Some(&run_policies);
    }
    if suite.files.is_empty() {
        return Err(vec![Diagnostic::error(
            "no test files found: expected tests/**/*.test.yaml in the template",
        )]);
    }
    let errors: Vec<Diagnostic> = suite.failed().flat_map(|f| f.diagnostics.clone()).collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut warnings = template.warnings.clone();
    warnings.extend(
        suite
            .files
            .iter()
            .flat_map(|f| f.diagnostics.iter().cloned()),
    );
    let cases = suite.cases();
    if let (true, Some(wanted)) = (cases.is_empty(), select.wanted()) {
        return Err(vec![Diagnostic::error(format!(
            "no test case matches {wanted:?}"
        ))]);
    }
    if let Some(path) = &args.explain {
        return explain_case(&suite.runner, template, cases[0], path, sources)
            .map(|_| Tally::default());
    }
    if args.show {
        return show_case(&suite.runner, cases[0], args.format).map(|_| Tally::default());
    }
    let mut golden = if args.snapshot || args.update {
        Some(Golden::new(template, &cases, args.update)?)
    } else {
        None
    };
    // Warnings are reported once each, as they are first met.
    let mut seen = std::collections::HashSet::new();
    let mut fresh = |list: &mut Vec<Diagnostic>| list.retain(|w| seen.insert(w.full_text()));
    fresh(&mut warnings);
    report(&warnings, sources);
    let mut printer = Printer::new(args.format, sources);
    let mut tally = Tally::default();
    // In batches: each batch's compositions are dropped once it is reported, so a
    // large suite holds one batch of blueprints, not all of them.
    for batch in cases.chunks(BATCH) {
        let mut results = suite.run(batch, crate::parallel::cores());
        if let Some(golden) = &mut golden {
            golden.check(batch, &mut results)?;
        }
        let mut batch_warnings: Vec<Diagnostic> = results
            .iter()
            .flat_map(|r| r.warnings.iter().cloned())
            .collect();
        fresh(&mut batch_warnings);
        report(&batch_warnings, sources);
        for (case, result) in batch.iter().zip(&results) {
            if result.passed() {
                tally.passed += 1;
            } else {
                tally.failed += 1;
            }
            printer.case(case, result);
        }
    }
    if let Some(golden) = &golden {
        let mut orphans = golden.orphans();
        fresh(&mut orphans);
        report(&orphans, sources);
    }
    printer.finish(tally);
    Ok(tally)
}

/// How the cases run, as the flags say.
fn run_options(args: &TestArgs, session: &Session) -> RunOptions {
    RunOptions {
        compat: match args.windsor_compat {
            Compat::Latest => WindsorCompat::Latest,
            Compat::V0_9 => WindsorCompat::V0_9,
        },
        schema_defaults: args.schema_defaults,
        unmocked_outputs: match args.unmocked_outputs {
            Unmocked::Null => UnmockedOutputs::Null,
            Unmocked::Error => UnmockedOutputs::Error,
        },
        precedence: session.options.precedence,
        limits: session.options.limits,
    }
}

/// The policies of `--policy` (package `main` unless `--namespace`), for the cases
/// that assert `policies:`.
fn case_policies(
    args: &TestArgs,
    sources: &FileMap,
) -> Result<Option<crate::policy::Policies>, Vec<Diagnostic>> {
    if args.policy.is_empty() {
        return Ok(None);
    }
    let namespaces = super::policy::namespaces_or_main(&args.namespace);
    crate::policy::load(&args.policy, &namespaces, sources).map(Some)
}

/// The policies' findings on a case's composition, its render and its values.
fn policy_findings(
    session: &Session,
    policies: &crate::policy::Policies,
    composition: &crate::compose::face::Composition,
) -> Result<Vec<crate::policy::Finding>, Vec<Diagnostic>> {
    let rendered = session.render_kept(composition, crate::render::ManifestFormat::Json)?;
    crate::policy::check_context(
        policies,
        crate::testing::runner::TEST_CONTEXT,
        composition,
        &rendered.files,
        session.schema.as_ref(),
        crate::policy::Budget::default(),
    )
    .map(|checked| checked.findings)
    .map_err(|d| vec![d])
}

/// `bpc test NAME --explain PATH`: the case composed, then one value explained.
fn explain_case(
    suite: &Runner<'_>,
    template: &crate::template::Template,
    case: &Case,
    path: &str,
    sources: &FileMap,
) -> Result<ExitCode, Vec<Diagnostic>> {
    let composition = suite.compose_case(case)?;
    let explainer = crate::explain::Explainer {
        template,
        composition: &composition,
        files: sources,
    };
    match explainer.explain(path) {
        Ok(text) => {
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(message) => Err(vec![Diagnostic::error(message)]),
    }
}

/// `bpc test NAME --show`: the case composed and printed, nothing checked.
fn show_case(
    suite: &Runner<'_>,
    case: &Case,
    format: TestFormat,
) -> Result<ExitCode, Vec<Diagnostic>> {
    let composition = suite.compose_case(case)?;
    let format = match format {
        TestFormat::Text => crate::emit::Format::Yaml,
        TestFormat::Json => crate::emit::Format::Json,
    };
    let text = crate::emit::text_within_budget(
        &composition.blueprint,
        format,
        suite.options.limits.output_bytes,
        "the case's blueprint",
    )
    .map_err(|d| vec![d])?
    .into_string();
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the report case by case as results arrive: text (a header per test file,
/// a line per case, the failures' details) or one JSON document written in pieces.
struct Printer<'s> {
    format: TestFormat,
    files: &'s FileMap,
    color: bool,
    /// The test file whose header was printed last.
    current: String,
    cases: usize,
}

impl<'s> Printer<'s> {
    fn new(format: TestFormat, files: &'s FileMap) -> Printer<'s> {
        let color = match format {
            TestFormat::Text => color_stdout(),
            TestFormat::Json => false,
        };
        Printer {
            format,
            files,
            color,
            current: String::new(),
            cases: 0,
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn case(&mut self, case: &Case, result: &CaseResult) {
        let mut out = String::new();
        match self.format {
            TestFormat::Text => self.text(&mut out, case, result),
            TestFormat::Json => self.json(&mut out, case, result),
        }
        self.cases += 1;
        print!("{out}");
    }

    fn text(&mut self, out: &mut String, case: &Case, result: &CaseResult) {
        if case.file != self.current {
            if !self.current.is_empty() {
                out.push('\n');
            }
            self.current = case.file.clone();
            out.push_str(&self.paint("1", &format!("=== {} ===", self.current)));
            out.push('\n');
        }
        if result.passed() {
            out.push_str(&format!("{} {}\n", self.paint("32", "✓"), case.name));
            return;
        }
        out.push_str(&format!("{} {}\n", self.paint("31", "✗"), case.name));
        for m in &result.mismatches {
            let line = if m.path.is_empty() {
                m.message.clone()
            } else {
                format!("{}: {}", m.path, m.message)
            };
            for l in line.lines() {
                out.push_str(&format!("  {l}\n"));
            }
        }
        for e in result.errors.iter().filter(|_| !result.passed()) {
            for l in crate::files::render(e, self.files, false).lines() {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }

    /// One element of the `cases` array, indented as `serde_json`'s pretty printer
    /// indents the whole document.
    fn json(&mut self, out: &mut String, case: &Case, r: &CaseResult) {
        use serde_json::json;
        let item = json!({
            "file": case.file,
            "name": case.name,
            "passed": r.passed(),
            "mismatches": r.mismatches.iter().map(|m| json!({"path": m.path, "message": m.message})).collect::<Vec<_>>(),
            "errors": r.errors.iter().map(|e| crate::files::render(e, self.files, false)).collect::<Vec<_>>(),
        });
        out.push_str(if self.cases == 0 {
            "{\n  \"cases\": [\n"
        } else {
            ",\n"
        });
        let text = serde_json::to_string_pretty(&item).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
    }

    fn finish(&self, tally: Tally) {
        match self.format {
            TestFormat::Text => {
                println!();
                println!("{} passed, {} failed", tally.passed, tally.failed);
            }
            TestFormat::Json => {
                let head = if self.cases == 0 {
                    "{\n  \"cases\": [],"
                } else {
                    "\n  ],"
                };
                println!(
                    "{head}\n  \"passed\": {},\n  \"failed\": {}\n}}",
                    tally.passed, tally.failed
                );
            }
        }
    }
}
