//! Golden files: each case's whole composed blueprint kept as readable YAML beside the
//! tests (`tests/__snapshots__/<file>/<case>.yaml`), compared with a unified diff and
//! rewritten by `--update`.

use super::case::Case;
use super::matcher::Mismatch;
use super::runner::CaseResult;
use crate::files::Diagnostic;
use crate::template::Template;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const DIR: &str = "__snapshots__";

/// A file-name-safe form of a case name: lowercase letters, digits and `-`.
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "case".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Where the golden file of `case` in test file `file` (tree path) lives.
pub fn golden_path(template_dir: &Path, file: &str, case: &str) -> PathBuf {
    let stem = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".yaml")
        .trim_end_matches(".yml")
        .trim_end_matches(".test");
    let dir = Path::new(file)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    template_dir
        .join(dir)
        .join(DIR)
        .join(stem)
        .join(format!("{}.yaml", slug(case)))
}

/// Golden files under `template_dir/tests` that no case produces any more.
pub fn orphans(template_dir: &Path, produced: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![template_dir.join("tests")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.components().any(|c| c.as_os_str() == DIR)
                && path.extension().is_some_and(|e| e == "yaml")
                && !produced.contains(&path)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The golden files of one `bpc test --snapshot` (or `--update`) run: compared (or
/// written) batch by batch, then the ones no case produced are reported.
pub struct Golden {
    dir: PathBuf,
    update: bool,
    produced: Vec<PathBuf>,
}

impl Golden {
    /// The golden files of `cases` under the template's directory, once no two of them
    /// would share a file; `update` writes them instead of comparing.
    pub fn new(
        template: &Template,
        cases: &[&Case],
        update: bool,
    ) -> Result<Golden, Vec<Diagnostic>> {
        let Some(dir) = template.tree.root_dir() else {
            return Err(vec![Diagnostic::error(
                "golden files need a template directory, not an archive",
            )]);
        };
        // Two cases whose names slug to the same golden file would overwrite each other
        // under --update and then fail --snapshot; refuse before writing anything.
        // Compared case-insensitively, as some file systems are.
        let mut owners: HashMap<String, &Case> = HashMap::new();
        for case in cases {
            let path = golden_path(&dir, &case.file, &case.name);
            let key = path.to_string_lossy().to_lowercase();
            if let Some(first) = owners.get(&key) {
                // Named from the template root, as the cases' files are.
                let shown = path.strip_prefix(&dir).unwrap_or(&path);
                return Err(vec![Diagnostic::error(format!(
                    "test cases `{}` ({}) and `{}` ({}) would share the golden file {}",
                    first.name,
                    first.file,
                    case.name,
                    case.file,
                    shown.display()
                ))
                .with_help(
                    "rename one of the cases so their names differ in letters or digits",
                )]);
            }
            owners.insert(key, case);
        }
        Ok(Golden {
            dir,
            update,
            produced: Vec::new(),
        })
    }

    /// Compares (or writes) the golden file of each composed case of a batch; a
    /// difference or a missing file becomes a mismatch of its result.
    pub fn check(
        &mut self,
        cases: &[&Case],
        results: &mut [CaseResult],
    ) -> Result<(), Vec<Diagnostic>> {
        for (case, result) in cases.iter().zip(results.iter_mut()) {
            let Some(composition) = &result.composition else {
                continue;
            };
            let path = golden_path(&self.dir, &case.file, &case.name);
            let text = crate::emit::to_yaml(&composition.blueprint);
            self.produced.push(path.clone());
            if self.update {
                write(&path, &text)?;
            } else if let Some(mismatch) = compare(&path, &text) {
                result.mismatches.push(mismatch);
            }
        }
        Ok(())
    }

    /// A warning for every golden file no case of the run produced.
    pub fn orphans(&self) -> Vec<Diagnostic> {
        orphans(&self.dir, &self.produced)
            .into_iter()
            .map(|orphan| {
                Diagnostic::warning(format!(
                    "golden file {} belongs to no case any more",
                    orphan.display()
                ))
            })
            .collect()
    }
}

/// Writes a golden file (and its directory).
fn write(path: &Path, text: &str) -> Result<(), Vec<Diagnostic>> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            vec![Diagnostic::error(format!(
                "cannot create {}: {e}",
                parent.display()
            ))]
        })?;
    }
    crate::files::out_path::write_atomically(path, text.as_bytes()).map_err(|e| {
        vec![Diagnostic::error(format!(
            "cannot write {}: {e}",
            path.display()
        ))]
    })
}

/// The mismatch of `text` against the golden file at `path`, if any.
fn compare(path: &Path, text: &str) -> Option<Mismatch> {
    let message = match std::fs::read_to_string(path) {
        Ok(golden) if golden == text => return None,
        Ok(golden) => format!(
            "blueprint differs from {}\n{}",
            path.display(),
            crate::diff::unified_diff(&golden, text, "golden", "composed")
        ),
        Err(_) => format!(
            "no golden file {} (run `bpc test --update` to write it)",
            path.display()
        ),
    };
    Some(Mismatch {
        path: "snapshot".to_string(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(
            slug("none driver disables log aggregation"),
            "none-driver-disables-log-aggregation"
        );
        assert_eq!(
            slug("Fails when MinIO (S3) enabled!"),
            "fails-when-minio-s3-enabled"
        );
        assert_eq!(slug("***"), "case");
    }
}
