//! The windsorcli/core corpus (57 cases) under `bpc test`: asserts exactly which cases
//! pass, in both schema-defaults modes. The documented exceptions are in
//! docs/conformance.md.

mod common;
use bpc::compose::schema::Schema;
use bpc::expr::{Engine, EngineConfig};
use bpc::source::{FileTree, SourceMap};
use bpc::testing::case;
use bpc::testing::runner::{RunOptions, Suite};
use std::sync::Arc;

/// Cases that fail in the given mode, by "file: case name".
fn failing(schema_defaults: bool) -> (usize, Vec<String>) {
    let root = common::repo().join("tests/conformance/windsor-core-75d2a6c1");
    let sources = Arc::new(SourceMap::new());
    let tree = Arc::new(FileTree::open(&root.join("contexts/_template")).expect("template"));
    let template = bpc::template::load(tree, sources.clone()).expect("corpus loads");
    let schema = template
        .schema
        .as_ref()
        .map(|s| Schema::compile(s).expect("schema compiles"));
    let mut cases = Vec::new();
    for path in case::discover(&template.tree) {
        let (file, _) = case::load(&template.tree, &sources, &path).expect("test file parses");
        cases.extend(file.cases);
    }
    let engine = Engine::new(EngineConfig {
        terraform_output: true,
    });
    let suite = Suite {
        template: &template,
        schema: schema.as_ref(),
        engine: &engine,
        project_root: root.to_string_lossy().to_string(),
        options: RunOptions { schema_defaults },
    };
    let refs: Vec<&case::Case> = cases.iter().collect();
    let results = suite.run_all(&refs, 2);
    let mut failed = Vec::new();
    for (c, r) in refs.iter().zip(&results) {
        if !r.passed() {
            let detail: Vec<String> = r
                .mismatches
                .iter()
                .map(|m| format!("{}: {}", m.path, m.message))
                .collect();
            eprintln!("FAIL {} / {}:\n  {}", c.file, c.name, detail.join("\n  "));
            failed.push(format!(
                "{}: {}",
                c.file.trim_start_matches("tests/"),
                c.name
            ));
        }
    }
    (refs.len(), failed)
}

/// Expectations written around an engine bug of the Windsor version of the time
/// (docs/conformance.md explains each).
const DOCUMENTED_WITH_DEFAULTS: &[&str] = &[];
const DOCUMENTED_WITHOUT_DEFAULTS: &[&str] = &[];

#[test]
fn corpus_with_schema_defaults() {
    let (total, failed) = failing(true);
    assert_eq!(total, 57);
    println!(
        "corpus (--schema-defaults): {} passed, {} failed",
        total - failed.len(),
        failed.len()
    );
    assert_eq!(failed, DOCUMENTED_WITH_DEFAULTS);
}

#[test]
fn corpus_without_schema_defaults() {
    let (total, failed) = failing(false);
    assert_eq!(total, 57);
    println!(
        "corpus (no schema defaults): {} passed, {} failed",
        total - failed.len(),
        failed.len()
    );
    assert_eq!(failed, DOCUMENTED_WITHOUT_DEFAULTS);
}
