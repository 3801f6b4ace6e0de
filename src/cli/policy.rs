//! `bpc check --policy`: Rego policies over the contexts asked for, composed and
//! rendered in parallel, their findings merged across contexts and shown as `bpc
//! check` shows its own (docs/policy.md).

use crate::files::{Diagnostic, FileMap, Severity};
use crate::policy::{Budget, Finding, Policies};
use crate::render::ManifestFormat;
use crate::session::Session;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone, Default)]
pub struct PolicyArgs {
    /// A Rego policy file or a directory of them (searched recursively; `*_test.rego`
    /// files are left out); may be given several times.
    #[arg(long, value_name = "PATH")]
    pub policy: Vec<PathBuf>,
    /// The policy package whose `deny`, `violation` and `warn` rules are findings
    /// (default `main`); may be given several times.
    #[arg(long, value_name = "PACKAGE", requires = "policy")]
    pub namespace: Vec<String>,
    /// The context the policies check (default: $WINDSOR_CONTEXT, windsor.yaml
    /// `context:`, else `local`); may be given several times.
    #[arg(long, value_name = "NAME", requires = "policy")]
    pub context: Vec<String>,
    /// Check every context the project defines.
    #[arg(long, conflicts_with = "context", requires = "policy")]
    pub all_contexts: bool,
    /// Time the policies may take over one context.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        requires = "policy"
    )]
    pub policy_timeout: f64,
    /// Memory the policies may hold over one context.
    #[arg(long, value_name = "MIB", default_value_t = 1024, requires = "policy")]
    pub policy_memory: usize,
}

impl PolicyArgs {
    pub fn budget(&self) -> Result<Budget, Diagnostic> {
        let timeout = Duration::try_from_secs_f64(self.policy_timeout)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                Diagnostic::error(format!(
                    "--policy-timeout {} is not a number of seconds above 0",
                    self.policy_timeout
                ))
            })?;
        if self.policy_memory == 0 {
            return Err(Diagnostic::error("--policy-memory must be above 0 MiB"));
        }
        Ok(Budget {
            timeout,
            memory: self.policy_memory.saturating_mul(1024 * 1024),
        })
    }

    pub fn namespaces(&self) -> Vec<String> {
        namespaces_or_main(&self.namespace)
    }
}

/// The packages of `--namespace`: `main` (conftest's default) when none is given.
pub fn namespaces_or_main(given: &[String]) -> Vec<String> {
    if given.is_empty() {
        vec!["main".to_string()]
    } else {
        given.to_vec()
    }
}

/// One finding over the contexts that share it (same rule, message, input and place).
#[derive(Clone, Debug)]
pub struct Merged {
    pub finding: Finding,
    pub contexts: Vec<String>,
}

/// What the policies said over every context checked.
#[derive(Debug, Default)]
pub struct PolicyReport {
    pub findings: Vec<Merged>,
    pub files: usize,
    pub rules: usize,
    pub contexts: usize,
    pub inputs: usize,
    pub excepted: usize,
}

impl PolicyReport {
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.finding.severity == severity)
            .count()
    }

    pub fn summary(&self) -> String {
        let mut line = format!(
            "policies: {} rule(s) from {} file(s) over {} input(s) of {} context(s): {} denied, {} warning(s)",
            self.rules,
            self.files,
            self.inputs,
            self.contexts,
            self.count(Severity::Error),
            self.count(Severity::Warning)
        );
        if self.excepted > 0 {
            line.push_str(&format!(", {} excepted", self.excepted));
        }
        line
    }
}

/// Loads the policies and runs them over the contexts `args` names, in parallel.
pub fn run(
    session: &Session,
    args: &PolicyArgs,
    files: &FileMap,
) -> Result<PolicyReport, Vec<Diagnostic>> {
    let budget = args.budget().map_err(|d| vec![d])?;
    let policies = crate::policy::load(&args.policy, &args.namespaces(), files)?;
    let names = if args.all_contexts {
        crate::all_contexts::select(session, &crate::all_contexts::Selection::All, None)
            .map_err(|d| vec![d])?
    } else if !args.context.is_empty() {
        crate::all_contexts::select(
            session,
            &crate::all_contexts::Selection::Named(args.context.clone()),
            None,
        )
        .map_err(|d| vec![d])?
    } else {
        vec![session.project.context.clone()]
    };
    let results = crate::parallel::map(&names, crate::parallel::cores(), |name| {
        check_one(session, &policies, name, budget)
    });
    let mut report = PolicyReport {
        files: policies.files,
        rules: policies.rules.len(),
        contexts: names.len(),
        ..PolicyReport::default()
    };
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(checked) => {
                report.inputs += checked.inputs;
                report.excepted += checked.excepted;
                for finding in checked.findings {
                    merge(&mut report.findings, finding);
                }
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(report)
}

fn check_one(
    session: &Session,
    policies: &Policies,
    name: &str,
    budget: Budget,
) -> Result<crate::policy::Checked, Vec<Diagnostic>> {
    let in_context = |d: Diagnostic| d.with_context(format!("in context `{name}`"));
    let composition = session
        .compose_context(name)
        .map_err(|ds| ds.into_iter().map(in_context).collect::<Vec<_>>())?;
    let rendered = session
        .render_kept(&composition, ManifestFormat::Json)
        .map_err(|ds| ds.into_iter().map(in_context).collect::<Vec<_>>())?;
    crate::policy::check_context(
        policies,
        name,
        &composition,
        &rendered.files,
        session.schema.as_ref(),
        budget,
    )
    .map_err(|d| vec![d])
}

fn merge(into: &mut Vec<Merged>, finding: Finding) {
    let same = into.iter_mut().find(|m| {
        let f = &m.finding;
        f.rule == finding.rule
            && f.message == finding.message
            && f.input == finding.input
            && f.place == finding.place
    });
    match same {
        Some(m) => m.contexts.push(finding.context),
        None => into.push(Merged {
            contexts: vec![finding.context.clone()],
            finding,
        }),
    }
}

/// A finding as a diagnostic, with the contexts that share it.
pub fn diagnostic(merged: &Merged) -> Diagnostic {
    merged.finding.diagnostic(&merged.contexts)
}

/// The findings as JSON, for `--format json`.
pub fn json(report: &PolicyReport, files: &FileMap) -> serde_json::Value {
    let findings: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|m| {
            let f = &m.finding;
            let location = f.place.as_ref().and_then(|p| {
                let at = files.location(p.span.file, p.span.start as usize)?;
                Some(serde_json::json!({
                    "file": files.path(p.span.file)?,
                    "line": at.line,
                    "column": at.column,
                    "label": p.label,
                }))
            });
            serde_json::json!({
                "rule": f.rule,
                "severity": f.severity.label(),
                "message": f.message,
                "contexts": m.contexts,
                "input": f.input,
                "location": location,
                "object": f.object,
            })
        })
        .collect();
    serde_json::json!({
        "findings": findings,
        "denied": report.count(Severity::Error),
        "warnings": report.count(Severity::Warning),
        "excepted": report.excepted,
        "files": report.files,
        "rules": report.rules,
        "contexts": report.contexts,
        "inputs": report.inputs,
    })
}
