//! The fields of components: how each is evaluated, how contributions combine, and
//! the order they are written in (S9, S10; reference sections 9.1, 10.1).

use crate::template::ComponentKind;

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
}

const fn field(name: &'static str, eval: Eval, combine: Combine) -> Field {
    Field {
        name,
        eval,
        combine,
        identity: false,
    }
}

const fn id_field(name: &'static str) -> Field {
    Field {
        name,
        eval: Eval::Literal,
        combine: Combine::Replace,
        identity: true,
    }
}

/// Terraform fields in output order.
pub const TERRAFORM: &[Field] = &[
    id_field("name"),
    id_field("source"),
    id_field("path"),
    field("dependsOn", Eval::Names, Combine::AppendUnique),
    field("inputs", Eval::Template, Combine::DeepMerge),
    field("destroy", Eval::Bool, Combine::Replace),
    field("parallelism", Eval::Int, Combine::Replace),
    field("enabled", Eval::Bool, Combine::Replace),
];

/// Kustomization fields in output order.
pub const KUSTOMIZE: &[Field] = &[
    id_field("name"),
    field("path", Eval::Literal, Combine::Replace),
    field("source", Eval::Literal, Combine::Replace),
    field("namespace", Eval::Template, Combine::Replace),
    field("targetNamespace", Eval::Template, Combine::Replace),
    field("dependsOn", Eval::Names, Combine::AppendUnique),
    field("interval", Eval::Literal, Combine::Replace),
    field("retryInterval", Eval::Literal, Combine::Replace),
    field("timeout", Eval::Literal, Combine::Replace),
    field("patches", Eval::Patches, Combine::Append),
    field("wait", Eval::Bool, Combine::Replace),
    field("force", Eval::Bool, Combine::Replace),
    field("prune", Eval::Bool, Combine::Replace),
    field("components", Eval::Names, Combine::AppendUnique),
    field("cleanup", Eval::Names, Combine::AppendUnique),
    field("destroy", Eval::Bool, Combine::Replace),
    field("destroyOnly", Eval::Bool, Combine::Replace),
    field("enabled", Eval::Bool, Combine::Replace),
    field("decryption", Eval::Template, Combine::Replace),
    field("substitutions", Eval::Strings, Combine::DeepMerge),
    // Secret values are resolved at apply time: carried as written, never evaluated.
    field("secrets", Eval::Literal, Combine::DeepMerge),
];

/// Flux system fields (the `flux:` system form).
pub const FLUX_SYSTEM: &[Field] = &[
    id_field("name"),
    field("path", Eval::Literal, Combine::Replace),
    field("source", Eval::Literal, Combine::Replace),
    field("enabled", Eval::Bool, Combine::Replace),
    field("destroy", Eval::Bool, Combine::Replace),
    field("dependsOn", Eval::Names, Combine::AppendUnique),
    field("globalDependency", Eval::Bool, Combine::Replace),
    field("install", Eval::Tier, Combine::Tier),
    field("resources", Eval::Variants, Combine::Variants),
    field("secrets", Eval::Literal, Combine::DeepMerge),
];

/// A component's fields by name, in the order they are written out.
pub type FieldMap = indexmap::IndexMap<&'static str, super::tracked::Tracked>;

/// Puts `map` back in the documented field order of `kind` (S10), whatever order
/// contributions and defaults added fields in.
pub fn sort_in_order(kind: ComponentKind, map: &mut FieldMap) {
    let order = fields(kind);
    map.sort_by_cached_key(|k, _| {
        order
            .iter()
            .position(|f| f.name == *k)
            .unwrap_or(usize::MAX)
    });
}

pub fn fields(kind: ComponentKind) -> &'static [Field] {
    match kind {
        ComponentKind::Terraform => TERRAFORM,
        ComponentKind::Kustomize => KUSTOMIZE,
        ComponentKind::FluxSystem => FLUX_SYSTEM,
    }
}

/// The field a YAML key feeds (`substitute` is the preferred spelling of
/// `substitutions`; both feed one map).
pub fn field_for(kind: ComponentKind, key: &str) -> Option<&'static Field> {
    let key = match (kind, key) {
        (ComponentKind::Kustomize, "substitute") => "substitutions",
        _ => key,
    };
    fields(kind).iter().find(|f| f.name == key)
}
