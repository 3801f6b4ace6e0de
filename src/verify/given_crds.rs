//! CRDs given on the command line (`bpc verify --crds PATH`): the definitions of kinds
//! a context's build does not carry, Flux's own above all (a cluster's
//! `flux-system/gotk-components.yaml` defines HelmRelease, HelmRepository, …), so
//! that objects of those kinds are validated rather than listed as unchecked. A
//! context's own CRD of a kind comes before a given one.

use super::schema::Crds;
use crate::files::{Diagnostic, FileMap};
use std::path::{Path, PathBuf};

/// The CRDs of every YAML or JSON file under `paths` (a file is read as it is, a
/// directory for its `.yaml`, `.yml` and `.json` files, recursively, hidden
/// directories left out). A path that cannot be read, a file that does not parse,
/// and paths that hold no CustomResourceDefinition at all are errors.
pub fn load(paths: &[PathBuf], files: &FileMap) -> Result<Crds, Vec<Diagnostic>> {
    let mut crds = Crds::default();
    let mut errors = Vec::new();
    let mut found = 0;
    for file in discover(paths).map_err(|d| vec![d])? {
        match read(&file, files, &mut crds) {
            Ok(n) => found += n,
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if found == 0 {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(vec![Diagnostic::error(format!(
            "no CustomResourceDefinition in {}",
            names.join(", ")
        ))
        .with_help(
            "--crds takes CRD manifests: YAML or JSON files, or directories of them",
        )]);
    }
    Ok(crds)
}

/// The YAML and JSON files under `paths`.
fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Diagnostic> {
    let wanted = |name: &str| [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e));
    crate::files::listing::files_under(paths, wanted, "--crds")
}

/// Adds the CRDs of one file (registered in `files`, so a parse error shows its line);
/// how many documents were CRDs.
fn read(file: &Path, files: &FileMap, crds: &mut Crds) -> Result<usize, Diagnostic> {
    let shown = file.display().to_string();
    let text = read_text(file, &shown)?;
    let id = files.add(shown.clone(), text.as_str());
    let nodes = crate::yaml::parse_all(&text, id).map_err(Diagnostic::from)?;
    let mut found = 0;
    for node in nodes {
        let object = crate::value::json::to_json(
            &node.to_value(),
            crate::value::json::ToJson::NonFiniteAsText,
        );
        if crds.add_given(&object, &shown) {
            found += 1;
        }
    }
    Ok(found)
}

/// The text of a regular file no larger than the input bound (docs/limits.md).
fn read_text(file: &Path, shown: &str) -> Result<String, Diagnostic> {
    use std::io::Read;
    let max = crate::files::tree::MAX_FILE_BYTES;
    let opened = crate::files::tree::open_regular(file, shown, Some(max))
        .map_err(|e| Diagnostic::error(e.to_string()))?;
    let mut bytes = Vec::new();
    opened
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Diagnostic::error(format!("cannot read {shown}: {e}")))?;
    String::from_utf8(bytes).map_err(|_| Diagnostic::error(format!("{shown} is not UTF-8 text")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata:\n  name: things.x.io\nspec:\n  group: x.io\n  names:\n    kind: Thing\n  \
        versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        type: object\n";

    #[test]
    fn a_directory_gives_the_crds_of_its_manifests_and_skips_other_documents() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("flux-system")).unwrap();
        let both = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n{CRD}");
        std::fs::write(dir.path().join("flux-system/gotk.yaml"), both).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not read").unwrap();
        let crds = load(&[dir.path().to_path_buf()], &FileMap::new()).unwrap();
        assert_eq!(crds.len(), 1);
    }

    #[test]
    fn no_crd_at_all_is_an_error_and_a_bad_file_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("ns.yaml");
        std::fs::write(&plain, "apiVersion: v1\nkind: Namespace\n").unwrap();
        let err = load(std::slice::from_ref(&plain), &FileMap::new())
            .err()
            .unwrap();
        assert!(
            err[0].message.starts_with("no CustomResourceDefinition in"),
            "{err:?}"
        );
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "kind: [unclosed\n").unwrap();
        let files = FileMap::new();
        let err = load(&[bad], &files).err().unwrap();
        let shown = crate::files::render_all(&err, &files, false);
        assert!(shown.contains("bad.yaml:"), "{shown}");
    }
}
