//! Names that become paths. A component id, a Kustomization name or a flux tier is a
//! directory or file name under `bpc render --out`; such a name must stay inside the
//! directory it is joined to, whatever a template writes.

use std::path::{Component, Path, PathBuf};

/// Why `name` cannot be used as a relative path under an output root, or `None` when it
/// can: `/`-separated segments, none empty, `.` or `..`, no leading `/`, no `\`, no
/// control characters (a NUL or a newline would be cut or misread by other tools).
pub fn unsafe_reason(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.starts_with('/') {
        return Some("it is an absolute path");
    }
    if name.contains('\\') {
        return Some("it contains `\\`");
    }
    if name.chars().any(char::is_control) {
        return Some("it contains a control character");
    }
    for segment in name.split('/') {
        match segment {
            "" => return Some("it has an empty path segment (`//` or a trailing `/`)"),
            "." => return Some("it has a `.` path segment"),
            ".." => {
                return Some("it has a `..` path segment, which would leave the output directory")
            }
            _ => {}
        }
    }
    None
}

/// `root` joined with the `/`-separated relative `path`, refusing anything that could
/// land outside `root` (the last line of defence behind [`unsafe_reason`]).
pub fn join_inside(root: &Path, path: &str) -> Result<PathBuf, String> {
    if let Some(why) = unsafe_reason(path) {
        return Err(format!("refusing to write `{path}`: {why}"));
    }
    let mut full = root.to_path_buf();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(p) => full.push(p),
            _ => {
                return Err(format!(
                    "refusing to write `{path}`: not a plain relative path"
                ))
            }
        }
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_names_are_accepted() {
        for ok in [
            "cluster",
            "cluster/talos",
            "pki-resources",
            "a.b",
            "..x",
            "x..",
        ] {
            assert_eq!(unsafe_reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn names_that_could_leave_the_root_are_refused() {
        for bad in [
            "",
            "/etc",
            "..",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a/",
            "a\\..\\b",
            "a\0b",
            "a\nb",
        ] {
            assert!(unsafe_reason(bad).is_some(), "{bad:?}");
            assert!(join_inside(Path::new("/out"), bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            join_inside(Path::new("/out"), "terraform/net/x.json").ok(),
            Some(PathBuf::from("/out/terraform/net/x.json"))
        );
    }
}
