//! The names of the Flux Kustomizations a flux system stands for (its tiers), in one
//! place: compilation, the blueprint's dependency rewrites, validation and render all
//! ask here.

use crate::compose::model::component::{variant_name, Component};
use crate::compose::model::tracked::Tracked;

/// The tiers a flux system stands for: its install tier, unless it has none or every
/// one of its components is empty, and one tier per `resources` variant.
pub struct Tiers {
    pub install: Option<String>,
    pub variants: Vec<String>,
}

impl Tiers {
    pub fn of(system: &Component) -> Tiers {
        let install = system
            .get("install")
            .filter(|tier| !pruned(tier))
            .map(|_| install(&system.id));
        let variants = match system.get("resources") {
            Some(Tracked::List(items, _)) => items
                .iter()
                .map(|v| variant(&system.id, &variant_name(v)))
                .collect(),
            _ => Vec::new(),
        };
        Tiers { install, variants }
    }

    /// The tiers that finish the system: its variants, else its install tier.
    pub fn terminal(&self) -> Vec<String> {
        if self.variants.is_empty() {
            self.install.iter().cloned().collect()
        } else {
            self.variants.clone()
        }
    }

    /// Every tier: the install tier first, then the variants.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.install.iter().chain(&self.variants)
    }
}

/// True when the tier lists components and every one of them is empty.
pub fn pruned(tier: &Tracked) -> bool {
    match tier.get("components") {
        Some(Tracked::List(items, _)) => items.iter().all(|i| i.as_str() == Some("")),
        _ => false,
    }
}

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
