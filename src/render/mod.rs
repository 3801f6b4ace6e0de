//! `bpc render`: a composition turned into the files Terraform and Flux read, laid
//! out and shaped as `docs/render.md` describes (the Windsor behaviour it follows, and
//! where bpc differs).
//!
//! [`render`] is pure: it reads only the composition and the template (for
//! `patches[].path`), and returns the whole tree in memory, so `--check` and the
//! writer share one result and nothing is written when it fails.

pub(crate) mod flux;
pub(crate) mod git_origin;
pub(crate) mod module_variables;
pub(crate) mod placed;
pub(crate) mod shim;
pub(crate) mod terraform;
pub mod write;

use crate::compose::face::Composition;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::BTreeMap;

/// The marker file that says bpc wrote a directory (and may replace it).
pub(crate) const MARKER: &str = crate::files::out_path::RENDER_MARKER;

/// Output format of the Flux manifests (Terraform files are always JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ManifestFormat {
    #[default]
    Yaml,
    Json,
}

/// A rendered tree: relative path (`/`-separated) → contents, in path order.
#[derive(Debug, Default)]
pub struct Rendered {
    pub files: BTreeMap<String, Vec<u8>>,
    pub warnings: Vec<Diagnostic>,
    /// Values left out because they wait on something (`terraform_output()`, an
    /// unresolved `${…}`), as `where: what`.
    pub deferred: Vec<String>,
    /// What the tree cannot say yet (a remote module's variables before `terraform
    /// init`), each printed as `note: …`.
    pub notes: Vec<String>,
    /// Paths refused because they would leave the output root (compose refuses such
    /// names first; this catches whatever reaches render another way).
    refused: Vec<String>,
}

impl Rendered {
    /// Adds a file made outside [`render`] (a module's `variables.json`), refusing a
    /// path that would leave the output root.
    pub(crate) fn add_checked(
        &mut self,
        path: String,
        text: String,
    ) -> Result<(), Vec<Diagnostic>> {
        if let Some(why) = crate::files::relative_path::unsafe_reason(&path) {
            return Err(vec![Diagnostic::error(format!(
                "render would write outside its output directory: `{}`: {why}",
                path.escape_debug()
            ))]);
        }
        self.files.insert(path, text.into_bytes());
        Ok(())
    }

    fn add(&mut self, path: impl Into<String>, text: String) {
        let path = path.into();
        match crate::files::relative_path::unsafe_reason(&path) {
            Some(why) => self
                .refused
                .push(format!("`{}`: {why}", path.escape_debug())),
            None => {
                self.files.insert(path, text.into_bytes());
            }
        }
    }
}

/// Where the tree goes and how remote Terraform modules are found (docs/render.md,
/// Terraform: shim modules).
pub struct Place<'a> {
    /// The path from the output directory to the project root, `/`-separated (empty
    /// when they are the same); the shims' module sources and local state paths are
    /// relative, so the tree reads the same wherever the project is checked out.
    pub to_project: String,
    /// Finds the module of a component with a remote source.
    pub modules: &'a dyn Fn(&shim::Remote<'_>) -> shim::Module,
}

impl Place<'_> {
    /// The default `--out .bpc/render` in the project root, modules unknown to bpc.
    pub(crate) fn default_place() -> Place<'static> {
        Place {
            to_project: "../..".to_string(),
            modules: &|_| shim::Module::Unread {
                dir: None,
                why: "the module was not looked for (no project)".to_string(),
            },
        }
    }
}

/// Renders `composition` (composed from `template`).
pub fn render(
    composition: &Composition,
    template: &Template,
    format: ManifestFormat,
) -> Result<Rendered, Vec<Diagnostic>> {
    render_with_origin(composition, template, format, None)
}

/// [`render_with_origin`], the tree going to `place`.
pub(crate) fn render_at(
    composition: &Composition,
    template: &Template,
    format: ManifestFormat,
    origin: Option<&str>,
    place: &Place<'_>,
) -> Result<Rendered, Vec<Diagnostic>> {
    let mut out = Rendered::default();
    out.add(
        MARKER,
        "Written by `bpc render`; the whole directory is replaced on each render.\n".into(),
    );
    terraform::render(composition, place, &mut out)?;
    flux::render(composition, template, format, origin, &mut out)?;
    if !out.refused.is_empty() {
        return Err(out
            .refused
            .iter()
            .map(|p| {
                Diagnostic::error(format!(
                    "render would write outside its output directory: {p}"
                ))
            })
            .collect());
    }
    out.warnings.extend(local_source_warnings(composition));
    Ok(out)
}

/// [`render`], with the project's git `origin` (host/path form, [`git_origin`]) for the
/// primary GitRepository when the blueprint names no repository, as Windsor falls back
/// to `git config remote.origin.url`.
pub(crate) fn render_with_origin(
    composition: &Composition,
    template: &Template,
    format: ManifestFormat,
    origin: Option<&str>,
) -> Result<Rendered, Vec<Diagnostic>> {
    render_at(
        composition,
        template,
        format,
        origin,
        &Place::default_place(),
    )
}

/// A warning for each source with a local URL (`../platform`, `file://…`) that a
/// kustomization uses: its rendered GitRepository (`https://../platform`) is nothing
/// Flux can fetch. (Terraform components of such a source get a shim module that
/// calls the source's directory, [`shim`].)
fn local_source_warnings(composition: &Composition) -> Vec<Diagnostic> {
    let Some(blueprint) = composition.blueprint.as_map() else {
        return Vec::new();
    };
    let sources = terraform::sources(blueprint);
    let mut used: Vec<&str> = Vec::new();
    for key in ["kustomize"] {
        let items = blueprint
            .get(key)
            .and_then(Value::as_list)
            .unwrap_or_default();
        for item in items {
            let source = item
                .as_map()
                .and_then(|m| m.get("source"))
                .and_then(Value::as_str);
            if let Some(source) = source {
                if !used.contains(&source) {
                    used.push(source);
                }
            }
        }
    }
    used.into_iter()
        .filter_map(|name| {
            let url = sources.get(name)?.get("url")?.as_str()?;
            crate::template::source_entry::local_path(url)?;
            Some(
                Diagnostic::warning(format!(
                    "source `{name}` has the local URL `{url}`: the source rendered for it cannot be fetched by Flux"
                ))
                .with_help("render a blueprint whose sources are published (git, OCI), or treat this render as a preview; --strict makes this an error"),
            )
        })
        .collect()
}

/// A value at a dotted path of a map.
pub(crate) fn lookup<'v>(map: &'v Map, path: &[&str]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let v = map.get(first)?;
    if rest.is_empty() {
        Some(v)
    } else {
        lookup(v.as_map()?, rest)
    }
}

/// A map built from `(key, value)` pairs in the order given.
pub(crate) fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::map(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// Pretty JSON, as every file of the tree that is JSON.
pub(crate) fn json(value: &Value, what: &str) -> Result<String, Vec<Diagnostic>> {
    crate::emit::to_json(value)
        .map_err(|e| vec![Diagnostic::error(format!("cannot write {what}: {e}"))])
}

/// The components named by `terraform_output("X", …)` in an expression, in order.
pub(crate) fn waits_for(expression: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = expression;
    while let Some(i) = rest.find("terraform_output(") {
        rest = &rest[i + "terraform_output(".len()..];
        let arg = rest.trim_start();
        if let Some(q) = arg.chars().next().filter(|c| *c == '"' || *c == '\'') {
            if let Some(end) = arg[1..].find(q) {
                let name = arg[1..1 + end].to_string();
                if !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::waits_for;

    #[test]
    fn finds_the_components_an_expression_waits_for() {
        assert_eq!(
            waits_for(r#"${terraform_output('net', 'vip') ?? terraform_output( "dns","x")}"#),
            vec!["net".to_string(), "dns".to_string()]
        );
        assert!(waits_for("${a.b}").is_empty());
    }
}
