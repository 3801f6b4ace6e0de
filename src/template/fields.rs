//! The fields of components, the one table of them: the keys a facet may write, how
//! each is evaluated, how contributions combine, the order they are written in, and
//! every other fact that depends on the field (S2, S9, S10, S11) as a column: cleaned,
//! a Go map, left out when empty, compared by `bpc test`, a key of a flux system patch.
//! The key lists that loading checks facets against are derived from it, and so is
//! every other per-field rule: ask [`field_for`] (or [`is_directive`]) for the fact
//! instead of keeping a list of names.

use super::ComponentKind;
use std::sync::LazyLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eval {
    /// Taken as written: identity fields must be known before anything is evaluated.
    Literal,
    /// Every string evaluated as a template, recursively.
    Template,
    /// A list of names: items evaluated, list results flattened, nulls dropped,
    /// other values rendered as text.
    Names,
    /// A boolean, or a string expression giving one.
    Bool,
    /// An integer, or a string expression giving one.
    Int,
    /// A map whose values become strings (Flux requires it, S10).
    Strings,
    /// Patches: `patch` text is a template, everything else as written.
    Patches,
    /// A flux install tier: evaluated like a kustomization's own fields.
    Tier,
    /// Flux resources variants: tiers, each with an optional `when`.
    Variants,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// A set field replaces the earlier value.
    Replace,
    /// Maps merge key by key; an empty overlay never erases a non-empty base (S9).
    DeepMerge,
    /// Items appended when not already present, first-seen order kept.
    AppendUnique,
    /// Items appended.
    Append,
    /// A flux install tier: name lists append (unique), everything else merges.
    Tier,
    /// Flux resources variants: matched by `name` (unnamed is one variant), each
    /// merged like a tier; new variants appended.
    Variants,
}

#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub eval: Eval,
    pub combine: Combine,
    /// Part of the identity (`name`, `path`, `source`).
    pub identity: bool,
    /// Also a key of a flux system's install tier or resources variant.
    pub in_tier: bool,
    /// The S9 clean-up drops its `""` items (and an empty `dependsOn`).
    pub cleaned: bool,
    /// Windsor holds it as a Go map, so it is written with its keys sorted at every
    /// depth (S10), in a component and in a flux tier.
    pub go_map: bool,
    /// Windsor's blueprint leaves it out when it is an empty list or map (Go's
    /// `omitempty`), in a component and in a flux tier.
    pub omit_empty: bool,
    /// `bpc test` compares it in an expectation of the component (S11, as Windsor's
    /// matcher does).
    pub compared: bool,
    /// `bpc test` compares it in an expectation of a flux system's tier.
    pub compared_in_tier: bool,
    /// A `flux:` entry with only such keys (and directives) patches the flux system of
    /// its name instead of being a kustomization.
    pub patches_system: bool,
}

const fn field(name: &'static str, eval: Eval, combine: Combine) -> Field {
    Field {
        name,
        eval,
        combine,
        identity: false,
        in_tier: true,
        cleaned: false,
        go_map: false,
        omit_empty: false,
        compared: false,
        compared_in_tier: false,
        patches_system: false,
    }
}

const fn id_field(name: &'static str) -> Field {
    Field {
        identity: true,
        ..field(name, Eval::Literal, Combine::Replace)
    }
}

impl Field {
    /// A kustomization field a flux tier does not take (its path and the like come
    /// from the system).
    const fn not_in_tier(self) -> Field {
        Field {
            in_tier: false,
            ..self
        }
    }

    /// A list or map of names or values: `""` items dropped, left out when empty.
    const fn cleaned(self) -> Field {
        Field {
            cleaned: true,
            omit_empty: true,
            ..self
        }
    }

    const fn go_map(self) -> Field {
        Field {
            go_map: true,
            ..self
        }
    }

    const fn omit_empty(self) -> Field {
        Field {
            omit_empty: true,
            ..self
        }
    }

    const fn compared(self) -> Field {
        Field {
            compared: true,
            ..self
        }
    }

    const fn compared_in_tier(self) -> Field {
        Field {
            compared_in_tier: true,
            ..self
        }
    }

    const fn patches_system(self) -> Field {
        Field {
            patches_system: true,
            ..self
        }
    }
}

/// Terraform fields in output order.
const TERRAFORM: &[Field] = &[
    id_field("name"),
    id_field("source").compared(),
    id_field("path").compared(),
    field("dependsOn", Eval::Names, Combine::AppendUnique)
        .cleaned()
        .compared(),
    field("inputs", Eval::Template, Combine::DeepMerge)
        .cleaned()
        .go_map()
        .compared(),
    field("destroy", Eval::Bool, Combine::Replace),
    field("parallelism", Eval::Int, Combine::Replace),
    field("enabled", Eval::Bool, Combine::Replace),
];

/// Kustomization fields in output order.
const KUSTOMIZE: &[Field] = &[
    id_field("name"),
    field("path", Eval::Literal, Combine::Replace)
        .not_in_tier()
        .compared(),
    field("source", Eval::Literal, Combine::Replace).compared(),
    field("namespace", Eval::Template, Combine::Replace),
    field("targetNamespace", Eval::Template, Combine::Replace),
    field("dependsOn", Eval::Names, Combine::AppendUnique)
        .cleaned()
        .compared()
        .compared_in_tier(),
    field("interval", Eval::Literal, Combine::Replace),
    field("retryInterval", Eval::Literal, Combine::Replace),
    field("timeout", Eval::Literal, Combine::Replace),
    field("patches", Eval::Patches, Combine::Append).omit_empty(),
    field("wait", Eval::Bool, Combine::Replace),
    field("force", Eval::Bool, Combine::Replace),
    field("prune", Eval::Bool, Combine::Replace),
    field("components", Eval::Names, Combine::AppendUnique)
        .cleaned()
        .compared()
        .compared_in_tier(),
    field("cleanup", Eval::Names, Combine::AppendUnique)
        .not_in_tier()
        .cleaned(),
    field("destroy", Eval::Bool, Combine::Replace),
    field("destroyOnly", Eval::Bool, Combine::Replace),
    field("enabled", Eval::Bool, Combine::Replace),
    field("decryption", Eval::Template, Combine::Replace),
    field("substitutions", Eval::Strings, Combine::DeepMerge)
        .cleaned()
        .go_map()
        .compared()
        .compared_in_tier(),
    // Secret values are resolved at apply time: carried as written, never evaluated.
    field("secrets", Eval::Literal, Combine::DeepMerge).not_in_tier(),
];

/// Flux system fields (the `flux:` system form).
const FLUX_SYSTEM: &[Field] = &[
    id_field("name").patches_system(),
    field("path", Eval::Literal, Combine::Replace).compared(),
    field("source", Eval::Literal, Combine::Replace)
        .compared()
        .patches_system(),
    field("enabled", Eval::Bool, Combine::Replace).patches_system(),
    field("destroy", Eval::Bool, Combine::Replace).patches_system(),
    field("dependsOn", Eval::Names, Combine::AppendUnique)
        .cleaned()
        .compared()
        .patches_system(),
    field("globalDependency", Eval::Bool, Combine::Replace),
    field("install", Eval::Tier, Combine::Tier).compared(),
    field("resources", Eval::Variants, Combine::Variants).compared(),
    field("secrets", Eval::Literal, Combine::DeepMerge),
];

pub fn fields(kind: ComponentKind) -> &'static [Field] {
    match kind {
        ComponentKind::Terraform => TERRAFORM,
        ComponentKind::Kustomize => KUSTOMIZE,
        ComponentKind::FluxSystem => FLUX_SYSTEM,
    }
}

/// Keys every component may carry besides its fields: they decide whether and how
/// it is contributed (S5, S9), and are never written out. Windsor's context blueprint
/// has none of them (S12).
const DIRECTIVES: &[&str] = &["when", "ordinal", "strategy", "requires"];

/// Whether `key` is a directive of a component (`when`, `ordinal`, `strategy`,
/// `requires`) rather than a field.
pub fn is_directive(key: &str) -> bool {
    DIRECTIVES.contains(&key)
}

/// The fields of `kind` with `column` set, in output order.
pub fn with(kind: ComponentKind, column: impl Fn(&Field) -> bool) -> Vec<&'static str> {
    fields(kind)
        .iter()
        .filter(|f| column(f))
        .map(|f| f.name)
        .collect()
}

/// Whether a `flux:` entry with these keys only patches the flux system of its name
/// (`{name: csi, dependsOn: [cni]}`), as in Windsor.
pub fn patches_flux_system<'k>(mut keys: impl Iterator<Item = &'k str>) -> bool {
    keys.all(|key| {
        is_directive(key)
            || field_for(ComponentKind::FluxSystem, key).is_some_and(|f| f.patches_system)
    })
}

/// `substitute` is the preferred spelling of a kustomization's `substitutions`;
/// both feed one map.
const ALIASES: &[(&str, &str)] = &[("substitute", "substitutions")];

/// The field a YAML key of a `kind` component (or of a flux tier, which takes
/// kustomization keys) feeds.
pub fn field_for(kind: ComponentKind, key: &str) -> Option<&'static Field> {
    let key = canonical(kind, key);
    fields(kind).iter().find(|f| f.name == key)
}

/// The field name a key stands for: itself, or what an alias spells.
pub fn canonical(kind: ComponentKind, key: &str) -> &str {
    match kind {
        ComponentKind::Kustomize => ALIASES
            .iter()
            .find(|(alias, _)| *alias == key)
            .map_or(key, |(_, name)| name),
        _ => key,
    }
}

/// Every key a facet may write on a `kind` component: its fields, their aliases
/// and the directives (what loading checks facets against, S2).
pub fn component_keys(kind: ComponentKind) -> &'static [&'static str] {
    static TERRAFORM_KEYS: LazyLock<Vec<&str>> =
        LazyLock::new(|| keys(ComponentKind::Terraform, |_| true, DIRECTIVES));
    static KUSTOMIZE_KEYS: LazyLock<Vec<&str>> =
        LazyLock::new(|| keys(ComponentKind::Kustomize, |_| true, DIRECTIVES));
    static FLUX_SYSTEM_KEYS: LazyLock<Vec<&str>> =
        LazyLock::new(|| keys(ComponentKind::FluxSystem, |_| true, DIRECTIVES));
    match kind {
        ComponentKind::Terraform => &TERRAFORM_KEYS,
        ComponentKind::Kustomize => &KUSTOMIZE_KEYS,
        ComponentKind::FluxSystem => &FLUX_SYSTEM_KEYS,
    }
}

/// Keys of a flux system's install tier or resources variant: the kustomization
/// fields a tier takes, their aliases, and its own `when`.
pub fn tier_keys() -> &'static [&'static str] {
    static TIER_KEYS: LazyLock<Vec<&str>> =
        LazyLock::new(|| keys(ComponentKind::Kustomize, |f| f.in_tier, &["when"]));
    &TIER_KEYS
}

fn keys(
    kind: ComponentKind,
    keep: impl Fn(&Field) -> bool,
    extra: &[&'static str],
) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for f in fields(kind).iter().filter(|f| keep(f)) {
        out.push(f.name);
        if kind == ComponentKind::Kustomize {
            out.extend(
                ALIASES
                    .iter()
                    .filter(|(_, n)| *n == f.name)
                    .map(|(a, _)| *a),
            );
        }
    }
    out.extend_from_slice(extra);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_a_key_and_aliases_and_directives_are_too() {
        let kustomize = component_keys(ComponentKind::Kustomize);
        for f in KUSTOMIZE {
            assert!(kustomize.contains(&f.name), "{}", f.name);
        }
        for key in ["substitute", "when", "ordinal", "strategy", "requires"] {
            assert!(kustomize.contains(&key), "{key}");
        }
        assert_eq!(
            field_for(ComponentKind::Kustomize, "substitute").map(|f| f.name),
            Some("substitutions")
        );
        assert!(field_for(ComponentKind::Terraform, "substitute").is_none());
    }

    #[test]
    fn the_columns_say_what_each_field_is() {
        assert_eq!(
            with(ComponentKind::Terraform, |f| f.compared),
            ["source", "path", "dependsOn", "inputs"]
        );
        assert_eq!(
            with(ComponentKind::Kustomize, |f| f.compared_in_tier),
            ["dependsOn", "components", "substitutions"]
        );
        assert_eq!(
            with(ComponentKind::Kustomize, |f| f.go_map),
            ["substitutions"]
        );
        assert_eq!(
            with(ComponentKind::Kustomize, |f| f.omit_empty),
            [
                "dependsOn",
                "patches",
                "components",
                "cleanup",
                "substitutions"
            ]
        );
        assert!(patches_flux_system(
            ["name", "dependsOn", "when"].into_iter()
        ));
        assert!(!patches_flux_system(["name", "install"].into_iter()));
        assert!(is_directive("strategy") && !is_directive("name"));
    }

    #[test]
    fn a_tier_takes_kustomization_keys_but_not_the_systems_own() {
        let tier = tier_keys();
        for key in [
            "components",
            "substitute",
            "substitutions",
            "when",
            "dependsOn",
        ] {
            assert!(tier.contains(&key), "{key}");
        }
        for key in ["path", "cleanup", "secrets", "ordinal", "strategy"] {
            assert!(!tier.contains(&key), "{key}");
        }
    }
}
