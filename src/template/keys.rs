//! The keys bpc accepts at each level of a facet besides components (whose keys come
//! from the field table, [`super::fields`]), and "did you mean" hints for the rest
//! (S2: unknown keys are warnings, errors under `--strict`).

pub const FACET: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "ordinal",
    "when",
    "config",
    "terraform",
    "kustomize",
    "flux",
    "requires",
    "crds",
    "substitutions",
    "backend",
    "messages",
];

pub const METADATA: &[&str] = &["name", "description", "labels", "annotations"];

/// Keys of a config block besides its body (S6).
pub const CONFIG_BLOCK: &[&str] = &["name", "when", "value", "ordinal", "strategy", "requires"];

/// Keys that make a `flux:` entry a system rather than a plain kustomization.
pub const FLUX_SYSTEM_ONLY: &[&str] = &["install", "resources", "globalDependency", "secrets"];

/// Keys of a kustomization patch, in the order the Windsor CLI writes them.
pub const PATCH: &[&str] = &["path", "patch", "target"];

/// Keys of a patch `target`, in the order the Windsor CLI writes them.
pub const PATCH_TARGET: &[&str] = &[
    "group",
    "version",
    "kind",
    "namespace",
    "name",
    "annotationSelector",
    "labelSelector",
];

pub const REQUIREMENT: &[&str] = &["paths", "message", "when"];

pub const MESSAGE: &[&str] = &["text", "when"];

/// The known key closest to `unknown`, if it is close enough to be a likely typo.
pub fn suggest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (unknown.chars().count() / 3).max(1);
    let length = |s: &str| s.chars().flat_map(char::to_lowercase).count();
    let wanted = length(unknown);
    known
        .iter()
        // The distance is at least the difference in length: skip what cannot be close
        // (`bpc check` asks this for every unknown name, against every sibling).
        .filter(|k| length(k).abs_diff(wanted) <= limit)
        .map(|k| (edit_distance(unknown, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters, case-insensitive (a `dependson` typo is
/// still a `dependsOn`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::fields::component_keys;
    use crate::template::ComponentKind;

    #[test]
    fn typos_get_the_intended_key() {
        let terraform = component_keys(ComponentKind::Terraform);
        let kustomize = component_keys(ComponentKind::Kustomize);
        assert_eq!(suggest("stratgy", terraform), Some("strategy"));
        assert_eq!(suggest("dependson", kustomize), Some("dependsOn"));
        assert_eq!(suggest("input", terraform), Some("inputs"));
        assert_eq!(suggest("completely-different", terraform), None);
    }
}
