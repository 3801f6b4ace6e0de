//! The names of the Flux Kustomizations a flux system stands for (its tiers), in one
//! place: expansion, the blueprint's dependency rewrites, validation and render all
//! ask here.

/// The install tier of system `system`: `<system>-install`.
pub fn install(system: &str) -> String {
    format!("{system}-install")
}

/// A resources variant's tier: `<system>-resources` for the unnamed variant,
/// `<system>-resources-<variant>` for a named one.
pub fn variant(system: &str, variant: &str) -> String {
    if variant.is_empty() {
        format!("{system}-resources")
    } else {
        format!("{system}-resources-{variant}")
    }
}

/// Whether `name` is system `system` itself or could be one of its tiers.
pub fn belongs_to(name: &str, system: &str) -> bool {
    match name.strip_prefix(system) {
        Some("") | Some("-install") | Some("-resources") => true,
        Some(rest) => rest.starts_with("-resources-"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_are_named_after_their_system() {
        assert_eq!(install("cni"), "cni-install");
        assert_eq!(variant("cni", ""), "cni-resources");
        assert_eq!(variant("cni", "cilium"), "cni-resources-cilium");
        for name in [
            "cni",
            "cni-install",
            "cni-resources",
            "cni-resources-cilium",
        ] {
            assert!(belongs_to(name, "cni"), "{name}");
        }
        assert!(!belongs_to("cni-extra", "cni"));
        assert!(!belongs_to("csi-install", "cni"));
    }
}
