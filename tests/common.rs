//! Helpers shared by the integration tests: throwaway projects and composing them the
//! way the CLI does.
#![allow(dead_code)]

use bpc::cli::compose::{blueprint_text, ComposeArgs, Format, ProjectArgs};
use bpc::session::Session;
use bpc::source::{render, SourceMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project in a temp dir: `files` are (relative path, contents).
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    dir
}

pub fn args(project: &Path, template: Option<&Path>, sets: &[&str]) -> ComposeArgs {
    ComposeArgs {
        project: ProjectArgs {
            project: Some(project.to_path_buf()),
            template: template.map(Path::to_path_buf),
            context: Vec::new(),
            values: Vec::new(),
            set: sets.iter().map(|s| s.to_string()).collect(),
            strict: false,
            ..Default::default()
        },
        format: Format::Yaml,
        out: None,
        terraform_outputs: None,
        provenance: false,
        ..Default::default()
    }
}

/// Composes; Ok is the YAML, Err the rendered diagnostics (paths relative, no colour).
pub fn compose(args: &ComposeArgs) -> Result<String, String> {
    let sources = Arc::new(SourceMap::new());
    let text = args
        .project
        .session_options(None, args.terraform_outputs.clone())
        .and_then(|options| Session::open(options, sources.clone()))
        .and_then(|session| {
            let composition = session.compose()?;
            blueprint_text(&session, &composition, args.format, args.provenance)
        });
    match text {
        Ok(text) => Ok(text),
        Err(diagnostics) => Err(diagnostics
            .iter()
            .map(|d| render(d, &sources, false))
            .collect::<Vec<_>>()
            .join("\n")),
    }
}

pub const FACET_HEAD: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
