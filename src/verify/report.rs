//! What `bpc verify` reports: findings with a stable id, each a diagnostic pointing at
//! the facet that wrote the Kustomization (or the field) at fault, per context; the
//! kinds no schema checks; and the text and JSON forms of the whole run.

use crate::files::{Diagnostic, FileMap, Severity};
use std::collections::BTreeMap;

/// Every kind of finding. The ids are what scripts match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    MissingPath,
    MissingComponent,
    BuildFailed,
    UnparsedObject,
    IncompleteObject,
    UnresolvedVariable,
    InvalidVariable,
    MissingConfigMap,
    SchemaViolation,
    TwoOwners,
    MissingChartSource,
    MissingNamespace,
    MissingDependency,
    SecretNotRead,
    RemoteResource,
    SourceNotRead,
    /// A `deny` or `violation` rule of `--policy` holds for an object.
    PolicyDenied,
    /// A `warn` rule of `--policy` holds for an object.
    PolicyWarned,
}

impl Check {
    pub fn as_str(self) -> &'static str {
        match self {
            Check::MissingPath => "missing-path",
            Check::MissingComponent => "missing-component",
            Check::BuildFailed => "build-failed",
            Check::UnparsedObject => "unparsed-object",
            Check::IncompleteObject => "incomplete-object",
            Check::UnresolvedVariable => "unresolved-variable",
            Check::InvalidVariable => "invalid-variable",
            Check::MissingConfigMap => "missing-configmap",
            Check::SchemaViolation => "schema-violation",
            Check::TwoOwners => "two-owners",
            Check::MissingChartSource => "missing-chart-source",
            Check::MissingNamespace => "missing-namespace",
            Check::MissingDependency => "missing-dependency",
            Check::SecretNotRead => "secret-not-read",
            Check::RemoteResource => "remote-resource",
            Check::SourceNotRead => "source-not-read",
            Check::PolicyDenied => "policy-deny",
            Check::PolicyWarned => "policy-warn",
        }
    }

    /// What breaks a reconcile is an error; what verify could not look at is a warning.
    pub fn severity(self) -> Severity {
        match self {
            Check::SecretNotRead
            | Check::RemoteResource
            | Check::SourceNotRead
            | Check::PolicyWarned => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// One finding of one context.
#[derive(Clone, Debug)]
pub struct Finding {
    pub check: Check,
    /// The Flux Kustomization it concerns.
    pub kustomization: Option<String>,
    /// `Kind/namespace/name` of the object it concerns.
    pub object: Option<String>,
    /// The file of the kustomize tree (`kustomize/…`) it concerns.
    pub file: Option<String>,
    pub diagnostic: Diagnostic,
}

impl Finding {
    pub fn new(check: Check, message: impl Into<String>) -> Finding {
        let message = format!("{} [{}]", message.into(), check.as_str());
        Finding {
            check,
            kustomization: None,
            object: None,
            file: None,
            diagnostic: Diagnostic::new(check.severity(), message),
        }
    }

    pub fn kustomization(mut self, name: &str) -> Finding {
        self.kustomization = Some(name.to_string());
        self
    }

    /// [`Finding::kustomization`] when there is one.
    pub fn owned_by(self, name: Option<&str>) -> Finding {
        match name {
            Some(name) => self.kustomization(name),
            None => self,
        }
    }

    pub fn object(mut self, object: impl Into<String>) -> Finding {
        self.object = Some(object.into());
        self
    }

    pub fn file(mut self, file: Option<String>) -> Finding {
        self.file = file;
        self
    }

    /// Edits the diagnostic (spans, notes, help).
    pub fn with(mut self, f: impl FnOnce(Diagnostic) -> Diagnostic) -> Finding {
        self.diagnostic = f(self.diagnostic);
        self
    }
}

/// The verification of one context.
#[derive(Debug, Default)]
pub struct ContextReport {
    pub name: String,
    /// The context did not compose or render: its errors.
    pub failed: Vec<Diagnostic>,
    pub kustomizations: usize,
    pub objects: usize,
    pub findings: Vec<Finding>,
    /// Kinds no schema checks (`apiVersion kind` → objects).
    pub unchecked: BTreeMap<String, usize>,
}

impl ContextReport {
    pub fn count(&self, severity: Severity, strict: bool) -> usize {
        let effective = |s: Severity| match s {
            Severity::Warning if strict => Severity::Error,
            other => other,
        };
        let failed = if severity == Severity::Error {
            self.failed.len()
        } else {
            0
        };
        failed
            + self
                .findings
                .iter()
                .filter(|f| effective(f.diagnostic.severity) == severity)
                .count()
    }
}

/// A whole run.
#[derive(Debug, Default)]
pub struct Report {
    /// How the builds ran (`kubectl kustomize (kustomize v5.5.0)`).
    pub tool: String,
    /// Distinct builds run.
    pub builds: usize,
    pub contexts: Vec<ContextReport>,
}

impl Report {
    pub fn errors(&self, strict: bool) -> usize {
        self.contexts
            .iter()
            .map(|c| c.count(Severity::Error, strict))
            .sum()
    }

    /// The findings as diagnostics (rendered by the caller), under a heading per
    /// context with any, then the summary table.
    pub fn text(&self, files: &FileMap, color: bool, strict: bool) -> String {
        let mut out = String::new();
        for c in &self.contexts {
            if c.failed.is_empty() && c.findings.is_empty() && c.unchecked.is_empty() {
                continue;
            }
            out.push_str(&format!("== context `{}` ==\n", c.name));
            for d in &c.failed {
                out.push_str(&crate::files::render(d, files, color));
            }
            for f in &c.findings {
                let mut d = f.diagnostic.clone();
                if strict && d.severity == Severity::Warning {
                    d.severity = Severity::Error;
                }
                out.push_str(&crate::files::render(&d, files, color));
            }
            if !c.unchecked.is_empty() {
                let kinds: Vec<String> = c
                    .unchecked
                    .iter()
                    .map(|(k, n)| format!("{k} ({n})"))
                    .collect();
                out.push_str(&format!(
                    "note: no schema for these kinds, their objects were not validated: {}\n",
                    kinds.join(", ")
                ));
            }
        }
        out.push_str(&self.table(strict));
        out
    }

    fn table(&self, strict: bool) -> String {
        let mut rows = vec![[
            "context".to_string(),
            "kustomizations".to_string(),
            "objects".to_string(),
            "errors".to_string(),
            "warnings".to_string(),
        ]];
        for c in &self.contexts {
            rows.push([
                c.name.clone(),
                c.kustomizations.to_string(),
                c.objects.to_string(),
                c.count(Severity::Error, strict).to_string(),
                c.count(Severity::Warning, strict).to_string(),
            ]);
        }
        let widths: Vec<usize> = (0..5)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, cell)| {
                    if i == 0 {
                        format!("{cell:<w$}", w = widths[i])
                    } else {
                        format!("{cell:>w$}", w = widths[i])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push_str(&format!(
            "{} context(s), {} error(s); {} distinct build(s) with {}\n",
            self.contexts.len(),
            self.errors(strict),
            self.builds,
            self.tool
        ));
        out
    }

    /// The run as JSON, for CI.
    pub fn json(&self, files: &FileMap, strict: bool) -> serde_json::Value {
        let contexts: Vec<serde_json::Value> = self
            .contexts
            .iter()
            .map(|c| {
                let findings: Vec<serde_json::Value> = c
                    .failed
                    .iter()
                    .map(|d| finding_json(None, d, files, strict))
                    .chain(
                        c.findings
                            .iter()
                            .map(|f| finding_json(Some(f), &f.diagnostic, files, strict)),
                    )
                    .collect();
                serde_json::json!({
                    "context": c.name,
                    "kustomizations": c.kustomizations,
                    "objects": c.objects,
                    "errors": c.count(Severity::Error, strict),
                    "warnings": c.count(Severity::Warning, strict),
                    "findings": findings,
                    "unchecked": c.unchecked,
                })
            })
            .collect();
        serde_json::json!({
            "tool": self.tool,
            "builds": self.builds,
            "errors": self.errors(strict),
            "contexts": contexts,
        })
    }
}

fn finding_json(
    finding: Option<&Finding>,
    d: &Diagnostic,
    files: &FileMap,
    strict: bool,
) -> serde_json::Value {
    let severity = match d.severity {
        Severity::Warning if strict => "error",
        other => other.label(),
    };
    let place = |span: crate::files::Span| {
        let at = files.location(span.file, span.start as usize)?;
        Some(serde_json::json!({
            "file": files.path(span.file)?,
            "line": at.line,
            "column": at.column,
        }))
    };
    serde_json::json!({
        "id": finding.map_or("composition-failed", |f| f.check.as_str()),
        "severity": severity,
        "message": d.message,
        "kustomization": finding.and_then(|f| f.kustomization.clone()),
        "object": finding.and_then(|f| f.object.clone()),
        "file": finding.and_then(|f| f.file.clone()),
        "location": d.primary.as_ref().and_then(|l| place(l.span)),
        "related": d.secondary.iter().filter_map(|l| place(l.span)).collect::<Vec<_>>(),
        "notes": d.notes,
        "help": d.help,
    })
}
