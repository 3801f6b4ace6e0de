//! Code lenses on test cases and the commands behind them: `bpc.runTest` runs one
//! case (as `bpc test NAME`) and `bpc.showTest` composes its blueprint (as
//! `bpc test NAME --show`). The result is the command's answer, and is also shown to
//! the user (`window/showMessage` for a run, `window/logMessage` for a blueprint).

use super::snapshot::Snapshot;
use crate::testing::case::{self, TestFile};
use crate::testing::runner::RunOptions;
use crate::testing::suite::Select;
use lsp_types::{CodeLens, Command};
use std::path::Path;

pub const RUN: &str = "bpc.runTest";
pub const SHOW: &str = "bpc.showTest";

/// Two lenses on each case of the test file at `path`.
pub fn lenses(snapshot: &Snapshot, path: &Path) -> Vec<CodeLens> {
    let Some(file) = test_file(snapshot, path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in &file.cases {
        let Some(range) = snapshot.range(c.span) else {
            continue;
        };
        for (title, command) in [("▶ run test", RUN), ("show blueprint", SHOW)] {
            out.push(CodeLens {
                range,
                command: Some(Command {
                    title: title.to_string(),
                    command: command.to_string(),
                    arguments: Some(vec![serde_json::Value::String(c.name.clone())]),
                }),
                data: None,
            });
        }
    }
    out
}

fn test_file(snapshot: &Snapshot, path: &Path) -> Option<TestFile> {
    let session = snapshot.session.as_ref().ok()?;
    let dir = session.template.tree.root_dir()?;
    let tree_path = path
        .strip_prefix(&dir)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    case::load(&session.template.tree, &snapshot.files, &tree_path)
        .ok()
        .map(|(file, _)| file)
}

/// Runs `command` on the case named `name`: `Ok(text)` to show, `Err` when the case
/// fails or cannot be found.
pub fn execute(snapshot: &Snapshot, command: &str, name: &str) -> Result<String, String> {
    let session = snapshot.session.as_ref().map_err(|e| {
        e.first()
            .map_or("the project does not load".to_string(), |d| {
                d.message.clone()
            })
    })?;
    let options = RunOptions {
        precedence: session.options.precedence,
        limits: session.options.limits,
        ..RunOptions::default()
    };
    // Files that do not load have no case to run.
    let suite = session.suite(options, &Select::default());
    let suite = suite.map_err(|e| e.first().map_or(String::new(), |d| d.message.clone()))?;
    let cases = suite.cases();
    let found = cases.into_iter().find(|c| c.name == name);
    let case = found.ok_or_else(|| format!("no test case named {name:?}"))?;
    let suite = &suite.runner;
    if command == SHOW {
        return match suite.compose_case(case) {
            Ok(composition) => Ok(crate::emit::to_yaml(&composition.blueprint)),
            Err(errors) => Err(errors
                .iter()
                .map(|d| d.full_text())
                .collect::<Vec<_>>()
                .join("\n")),
        };
    }
    let result = suite.run_case(case);
    if result.passed() {
        return Ok(format!("✓ {name}"));
    }
    let mut text = format!("✗ {name}");
    for m in &result.mismatches {
        text.push_str(&format!("\n  {}: {}", m.path, m.message));
    }
    for e in &result.errors {
        text.push_str(&format!("\n  {}", e.full_text()));
    }
    Err(text)
}
