//! A project's composition rendered for where its tree goes: the shims' module
//! sources and local state paths lead from the output directory to the project, and
//! the local Terraform modules' variables are checked against the inputs.

use super::module_variables::{self, ModuleFiles};
use super::{shim, ManifestFormat, Place, Rendered};
use crate::compose::face::Composition;
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The project a composition belongs to, as rendering reads it.
pub struct Project<'a> {
    pub project: &'a crate::project::Project,
    pub template: &'a Template,
    /// The output budget, which bounds the rendered files through the blueprint.
    pub output_bytes: usize,
}

impl Project<'_> {
    /// The `*.tf` files of a project directory (`terraform/<path>`), in name order;
    /// `None` when it is not a directory. Only regular files are read.
    fn module_files(&self, dir: &str) -> ModuleFiles {
        // A published template's modules are in its artifact (S14).
        let base = match &self.project.published {
            Some(p) => p.cache_dir.clone(),
            None => self.project.root.clone(),
        };
        read_module_dir(&base.join(dir))
    }
}

/// Renders `composition` of `project` for a tree written to `out` (or to the default
/// place); the composition's warnings come first, then the render's own, then what
/// the local Terraform modules' variables say about the inputs.
pub fn render(
    composition: &Composition,
    project: &Project<'_>,
    format: ManifestFormat,
    out: Option<&Path>,
) -> Result<Rendered, Vec<Diagnostic>> {
    // The files hold the blueprint's values reshaped: its size as text bounds
    // theirs, checked before any of them is built.
    crate::compose::model::budget::check_text(
        &composition.blueprint,
        project.output_bytes,
        "the rendered blueprint",
    )
    .map_err(|d| vec![d])?;
    let origin = super::git_origin::origin(&project.project.root);
    let root = shim::resolved(&project.project.root);
    let to_project = match out {
        Some(out) => {
            let target =
                crate::files::out_path::follow_symlinks(out).unwrap_or_else(|_| out.to_path_buf());
            shim::relative(&shim::resolved(&target), &root)
        }
        None => Place::default_place().to_project,
    };
    let local_sources: BTreeMap<String, PathBuf> = project
        .template
        .upstream
        .iter()
        .filter_map(|u| Some((u.name.clone(), u.template.tree.root_dir()?)))
        .collect();
    let find =
        |remote: &shim::Remote<'_>| shim::locate(remote, &root, &local_sources, read_module_dir);
    let place = Place {
        to_project,
        modules: &find,
    };
    let mut rendered = super::render_at(
        composition,
        project.template,
        format,
        origin.as_deref(),
        &place,
    )?;
    let mut warnings = composition.warnings.clone();
    warnings.append(&mut rendered.warnings);
    warnings.extend(module_variables::check(composition, |dir| {
        project.module_files(dir)
    }));
    rendered.warnings = warnings;
    for (path, text) in module_variables::companions(composition, |dir| project.module_files(dir)) {
        rendered.add_checked(path, text)?;
    }
    Ok(rendered)
}

/// The `*.tf` files of a directory, in name order; `None` when it is not a directory.
/// Only regular files are read.
fn read_module_dir(dir: &Path) -> ModuleFiles {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular || !name.ends_with(".tf") {
            continue;
        }
        let limit = Some(crate::files::tree::MAX_FILE_BYTES);
        let text = crate::files::tree::open_regular(&entry.path(), &name, limit)
            .ok()
            .and_then(|mut f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut f, &mut text).ok()?;
                Some(text)
            });
        if let Some(text) = text {
            files.push((name, text));
        }
    }
    files.sort();
    Some(files)
}
