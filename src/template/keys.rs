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

/// Edits between two names, case-insensitive (a `dependson` typo is still a
/// `dependsOn`): inserted, deleted or replaced characters, and two neighbours swapped
/// counted as one edit (`mrege` is one edit from `merge`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(&a.to_lowercase(), &b.to_lowercase())
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
        // Two letters swapped are one edit.
        assert_eq!(
            suggest("mrege", &["merge", "replace", "remove"]),
            Some("merge")
        );
        assert_eq!(suggest("completely-different", terraform), None);
    }
}
