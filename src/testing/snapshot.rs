//! Golden files: each case's whole composed blueprint kept as readable YAML beside the
//! tests (`tests/__snapshots__/<file>/<case>.yaml`), compared with a unified diff and
//! rewritten by `--update`.

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
