//! bpc's diagnostics as the protocol's, file by file: load errors, template
//! warnings, `bpc check` findings and composition errors of every context (each
//! message names the contexts it happens in). Test results are published by
//! [`super::test_runs`], for the test files only.

use super::snapshot::Snapshot;
use crate::files::{Diagnostic, FileId, Severity};
use lsp_types as lsp;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Diagnostics by file; `unplaced` are those without a position (a project that
/// cannot be found), which the server shows on every open document.
#[derive(Default)]
pub struct ByFile {
    pub files: BTreeMap<PathBuf, Vec<lsp::Diagnostic>>,
    pub unplaced: Vec<lsp::Diagnostic>,
}

/// Converts many diagnostics: each file's path is made once, and diagnostics are
/// gathered by file id (tens of thousands of findings at 1 000 facets).
struct Converter<'s> {
    snapshot: &'s Snapshot,
    paths: HashMap<FileId, Option<PathBuf>>,
    by_file: HashMap<Option<PathBuf>, Vec<lsp::Diagnostic>>,
    /// Files in the order first seen (unplaced ones under `None`).
    order: Vec<Option<PathBuf>>,
}

impl Converter<'_> {
    fn push(&mut self, d: &Diagnostic, code: Option<&str>) {
        let (snapshot, paths) = (self.snapshot, &mut self.paths);
        let (placed, lsp) = convert_with(d, snapshot, code, &mut |file| {
            paths
                .entry(file)
                .or_insert_with(|| snapshot.path_of(file))
                .clone()
        });
        self.add(placed, lsp);
    }

    fn add(&mut self, placed: Option<PathBuf>, lsp: lsp::Diagnostic) {
        match self.by_file.get_mut(&placed) {
            Some(list) => list.push(lsp),
            None => {
                self.order.push(placed.clone());
                self.by_file.insert(placed, vec![lsp]);
            }
        }
    }

    fn finish(mut self) -> ByFile {
        let mut out = ByFile::default();
        for placed in self.order {
            let list = self.by_file.remove(&placed).unwrap_or_default();
            match placed {
                Some(path) => out.files.entry(path).or_default().extend(list),
                None => out.unplaced.extend(list),
            }
        }
        out
    }
}

/// Every diagnostic of `snapshot` except test results.
pub fn of_snapshot(snapshot: &Snapshot) -> ByFile {
    let mut out = Converter {
        snapshot,
        paths: HashMap::new(),
        by_file: HashMap::new(),
        order: Vec::new(),
    };
    let session = match &snapshot.session {
        Ok(session) => session,
        Err(errors) => {
            for d in errors {
                out.push(d, None);
            }
            return out.finish();
        }
    };
    for d in session
        .template
        .warnings
        .iter()
        .chain(&session.project.warnings)
        .chain(&snapshot.config_errors)
    {
        out.push(d, None);
    }
    if let Some(report) = &snapshot.report {
        for finding in &report.findings {
            out.push(&finding.diagnostic, Some(finding.id.as_str()));
        }
    }
    for d in &snapshot.policies {
        out.push(d, Some("policy"));
    }
    // The same problem in several contexts is one diagnostic naming them all.
    let mut by_problem: Vec<(&Diagnostic, Vec<&str>)> = Vec::new();
    for (context, result) in &snapshot.compositions {
        let found: Vec<&Diagnostic> = match result {
            Ok(composition) => composition.warnings.iter().collect(),
            Err(errors) => errors.iter().collect(),
        };
        for d in found {
            if session.template.warnings.contains(d) || session.project.warnings.contains(d) {
                continue;
            }
            match by_problem.iter_mut().find(|(seen, _)| *seen == d) {
                Some((_, contexts)) => contexts.push(context),
                None => by_problem.push((d, vec![context])),
            }
        }
    }
    for (d, contexts) in by_problem {
        let (path, mut lsp) = convert(d, snapshot, None);
        let names: Vec<String> = contexts.iter().map(|c| format!("`{c}`")).collect();
        let noun = if names.len() == 1 {
            "context"
        } else {
            "contexts"
        };
        lsp.message = format!("in {noun} {}: {}", names.join(", "), lsp.message);
        out.add(path, lsp);
    }
    out.finish()
}

/// One diagnostic: where it belongs and what the editor shows.
pub fn convert(
    d: &Diagnostic,
    snapshot: &Snapshot,
    code: Option<&str>,
) -> (Option<PathBuf>, lsp::Diagnostic) {
    convert_with(d, snapshot, code, &mut |file| snapshot.path_of(file))
}

/// As [`convert`], with the path of a file given by `path_of`.
fn convert_with(
    d: &Diagnostic,
    snapshot: &Snapshot,
    code: Option<&str>,
    path_of: &mut dyn FnMut(FileId) -> Option<PathBuf>,
) -> (Option<PathBuf>, lsp::Diagnostic) {
    let placed = d
        .primary
        .as_ref()
        .and_then(|label| Some((path_of(label.span.file)?, label)));
    let range = placed
        .as_ref()
        .and_then(|(_, label)| snapshot.range(label.span))
        .unwrap_or_default();
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .secondary
        .iter()
        .filter_map(|label| {
            let path = path_of(label.span.file)?;
            Some(lsp::DiagnosticRelatedInformation {
                location: lsp::Location {
                    uri: super::uri::from_path(&path)?,
                    range: snapshot.range(label.span)?,
                },
                message: if label.message.is_empty() {
                    "here".to_string()
                } else {
                    label.message.clone()
                },
            })
        })
        .collect();
    let mut message = d.message.clone();
    for part in d.context.iter().chain(&d.notes).chain(&d.help) {
        message.push('\n');
        message.push_str(part);
    }
    let diagnostic = lsp::Diagnostic {
        range,
        severity: Some(severity(d.severity)),
        code: code.map(|c| lsp::NumberOrString::String(c.to_string())),
        source: Some("bpc".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    };
    (placed.map(|(path, _)| path), diagnostic)
}

pub fn severity(severity: Severity) -> lsp::DiagnosticSeverity {
    match severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
    }
}
