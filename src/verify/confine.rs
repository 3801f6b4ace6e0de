//! Builds stay inside their source tree, as kustomize-controller keeps them: it builds
//! without kustomize's load restrictions, but on a file system rooted at the source,
//! so no path of a kustomization reaches past it. Verify runs a real kustomize on a
//! copy of the tree, where `../` past the copy's root would reach this machine's own
//! files: so every local path a kustomization names (and every path and component a
//! Flux Kustomization names) is checked first, and one that is absolute or climbs
//! past the tree's root is refused, never read.

use serde_json::Value as Json;

/// Fields whose value is a list of paths.
const PATH_LISTS: [&str; 9] = [
    "resources",
    "components",
    "bases",
    "crds",
    "configurations",
    "transformers",
    "generators",
    "validators",
    "patchesStrategicMerge",
];

/// Fields whose value is a list of maps with a `path`.
const PATH_MAPS: [&str; 3] = ["patches", "patchesJson6902", "replacements"];

/// Whether a kustomization entry is remote (kustomize would fetch it).
pub fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("git::")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
}

/// The first path of `kustomization` (in the tree directory `dir`, `/`-separated and
/// relative to the tree's root) that leaves the tree: its field and the entry as
/// written.
pub fn first_outside(kustomization: &Json, dir: &str) -> Option<(String, String)> {
    local_paths(kustomization)
        .into_iter()
        .find(|(_, entry)| leaves(dir, entry))
}

/// Whether `entry`, a path written in the tree directory `dir`, is absolute or climbs
/// past the tree's root.
pub fn leaves(dir: &str, entry: &str) -> bool {
    if entry.starts_with('/') || entry.starts_with('\\') || has_drive(entry) {
        return true;
    }
    let mut depth = dir
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .count();
    for part in entry.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

fn has_drive(entry: &str) -> bool {
    let b = entry.as_bytes();
    b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic()
}

/// Every local path `kustomization` names, with its field (remote entries and inline
/// patches are not paths).
fn local_paths(kustomization: &Json) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |field: &str, value: Option<&Json>| {
        if let Some(text) = value.and_then(Json::as_str) {
            if !text.contains('\n') && !is_remote(text) {
                out.push((field.to_string(), text.to_string()));
            }
        }
    };
    let list = |key: &str| {
        kustomization
            .get(key)
            .and_then(Json::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    for key in PATH_LISTS {
        for item in list(key) {
            push(key, Some(item));
        }
    }
    for key in PATH_MAPS {
        for item in list(key) {
            push(key, item.get("path"));
        }
    }
    push("openapi", kustomization.pointer("/openapi/path"));
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in list(key) {
            let files = generator.get("files").and_then(Json::as_array);
            for file in files.into_iter().flatten() {
                // `key=path` names the key the file's content goes under.
                let path = file
                    .as_str()
                    .map(|f| f.split_once('=').map_or(f, |(_, p)| p));
                push(key, path.map(|p| Json::String(p.to_string())).as_ref());
            }
            let envs = generator.get("envs").and_then(Json::as_array);
            for env in envs.into_iter().flatten() {
                push(key, Some(env));
            }
            push(key, generator.get("env"));
        }
    }
    for chart in list("helmCharts") {
        push("helmCharts", chart.get("valuesFile"));
    }
    for key in ["chartHome", "configHome"] {
        push(
            "helmGlobals",
            kustomization.get("helmGlobals").and_then(|g| g.get(key)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_may_climb_to_the_root_of_the_tree_but_not_past_it() {
        assert!(!leaves("kustomize/cni", "../../terraform/x"));
        assert!(!leaves("kustomize/cni", "./base/../overlay"));
        assert!(leaves("kustomize/cni", "../../../etc/passwd"));
        assert!(leaves("kustomize/cni", "base/../../../../x"));
        assert!(leaves("kustomize/cni", "/etc/passwd"));
        assert!(leaves("kustomize", "C:\\secrets"));
        assert!(leaves("", ".."));
    }

    #[test]
    fn every_field_that_names_a_file_is_checked() {
        let outside = "../../../../home/me/.ssh/id_rsa";
        let cases = [
            serde_json::json!({"resources": ["ok.yaml", outside]}),
            serde_json::json!({"patches": [{"path": outside}]}),
            serde_json::json!({"configMapGenerator": [{"name": "x", "files": [format!("key={outside}")]}]}),
            serde_json::json!({"secretGenerator": [{"name": "x", "envs": [outside]}]}),
            serde_json::json!({"openapi": {"path": outside}}),
            serde_json::json!({"helmCharts": [{"name": "c", "valuesFile": outside}]}),
        ];
        for case in cases {
            let found = first_outside(&case, "kustomize/app");
            assert!(
                found.is_some_and(|(_, entry)| entry.ends_with(".ssh/id_rsa")),
                "{case}"
            );
        }
    }

    #[test]
    fn remote_entries_and_inline_patches_are_not_paths() {
        let k = serde_json::json!({
            "resources": ["https://example.com/../../../../x.yaml"],
            "patches": [{"patch": "- op: add\n  path: /../../../x\n"}],
            "patchesStrategicMerge": ["apiVersion: v1\nkind: ConfigMap\n"],
        });
        assert_eq!(first_outside(&k, "kustomize/app"), None);
    }
}
