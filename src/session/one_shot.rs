//! The session of a run that composes one context once and exits.

use super::load::{bare_project, Load};
use super::{Options, Session};
use crate::compose::face::{BlueprintAlone, Composition};
use crate::compose::model::inputs::Cycles;
use crate::files::{Diagnostic, FileMap, FileTree};
use crate::render::{ManifestFormat, Rendered};
use std::path::PathBuf;
use std::sync::Arc;

/// A session for a run that composes its one context once and exits (`bpc compose`,
/// `bpc render`). Its load leaves hollow the facets certainly inactive in that
/// context, so it offers only that composition and its render: another context, or
/// anything that reads the whole template, is not to be had from it.
pub struct OneShot {
    session: Session,
}

impl OneShot {
    /// As [`Session::open`], loading for the one composition.
    pub fn open(options: Options, files: Arc<FileMap>) -> Result<OneShot, Vec<Diagnostic>> {
        let session = Session::discover(options, files, Load::Once)?;
        Ok(OneShot { session })
    }

    /// As [`Session::of_template`], loading for the one composition.
    pub fn of_template(
        tree: FileTree,
        root: impl Into<PathBuf>,
        options: Options,
        files: Arc<FileMap>,
    ) -> Result<OneShot, Vec<Diagnostic>> {
        let project = bare_project(tree, root, &options);
        let session = Session::load(project, options, files, Load::Once)?;
        Ok(OneShot { session })
    }

    /// The composition of the context (see [`Session::compose`]).
    pub fn compose(&self) -> Result<Composition, Vec<Diagnostic>> {
        self.session.compose()
    }

    /// The composition of the context, for its blueprint alone, written once with
    /// [`crate::emit::blueprint_alone_text`].
    pub fn compose_blueprint(&self) -> Result<BlueprintAlone, Vec<Diagnostic>> {
        let s = &self.session;
        let project = &s.project;
        let overlay = project.overlay(&s.files).map_err(|d| vec![d])?;
        let patches = project.context_patches(&s.files).map_err(|d| vec![d])?;
        let inputs = s.inputs(project, overlay.as_ref(), Some(&patches), Cycles::Reject)?;
        let mut alone = inputs.compose_blueprint()?;
        alone
            .warnings_mut()
            .splice(0..0, project.warnings.iter().cloned());
        Ok(alone)
    }

    /// Renders the composition to a tree written to `out` (see
    /// [`Session::render_composition_to`]).
    pub fn render_to(
        &self,
        composition: Composition,
        format: ManifestFormat,
        out: &std::path::Path,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        self.session.render_composition_to(composition, format, out)
    }

    /// The output budget the options set.
    pub fn output_bytes(&self) -> usize {
        self.session.options.limits.output_bytes
    }
}
