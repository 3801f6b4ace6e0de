//! The facet model: what a facet file says, with the YAML nodes kept for evaluation
//! and for positions in messages. Values are evaluated later, by the compose stages.

use crate::files::{FileId, Span};
use crate::yaml::Node;

/// How a contribution combines with earlier ones for the same identity (S9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub enum Strategy {
    #[default]
    Merge,
    Replace,
    Remove,
}

impl Strategy {
    pub fn parse(text: &str) -> Option<Strategy> {
        match text {
            "" | "merge" => Some(Strategy::Merge),
            "replace" => Some(Strategy::Replace),
            "remove" => Some(Strategy::Remove),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Merge => "merge",
            Strategy::Replace => "replace",
            Strategy::Remove => "remove",
        }
    }
}

/// An expression written in YAML (a `when:`), with the node it came from so an error
/// can point inside it.
#[derive(Clone, Debug)]
pub struct Condition {
    pub text: String,
    pub node: Node,
}

/// The kinds of components a facet contributes: Terraform components,
/// kustomizations and Flux systems (which stand for several kustomizations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ComponentKind {
    Terraform,
    Kustomize,
    /// A `flux:` entry in system form (install and resources tiers).
    FluxSystem,
}

impl ComponentKind {
    /// The key of the blueprint list this kind lives in.
    pub fn list_key(self) -> &'static str {
        match self {
            ComponentKind::Terraform => "terraform",
            ComponentKind::Kustomize => "kustomize",
            ComponentKind::FluxSystem => "flux",
        }
    }

    /// How messages name one item of this kind.
    pub fn noun(self) -> &'static str {
        match self {
            ComponentKind::Terraform => "terraform component",
            ComponentKind::Kustomize => "kustomization",
            ComponentKind::FluxSystem => "flux system",
        }
    }
}

/// One `requires:` entry: paths that must hold a non-empty value.
#[derive(Clone, Debug)]
pub struct Requirement {
    pub paths: Vec<(String, Span)>,
    pub message: Option<String>,
    pub when: Option<Condition>,
    pub span: Span,
}

/// One entry of a facet's `terraform:` or `kustomize:` list.
#[derive(Clone, Debug)]
pub struct ComponentEntry {
    pub kind: ComponentKind,
    /// The whole entry (a map); fields are evaluated during collection.
    pub node: Node,
    /// Boxed, like `requires`: most entries have neither, and a template of 10 000
    /// facets holds 100 000 entries (160 bytes each inline, 96 so).
    pub when: Option<Box<Condition>>,
    pub strategy: Strategy,
    pub ordinal: Option<i64>,
    pub requires: Box<[Requirement]>,
    /// Position in the facet's list, for ordering contributions of one facet (S3).
    pub position: usize,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<ComponentEntry>() == 96);

/// One `config:` block (S6): either a `value:` body or the remaining keys as a map.
#[derive(Clone, Debug)]
pub struct ConfigBlock {
    pub name: String,
    pub name_span: Span,
    pub when: Option<Condition>,
    pub body: Node,
    pub ordinal: Option<i64>,
    pub strategy: Strategy,
    pub requires: Vec<Requirement>,
    pub position: usize,
}

/// A `messages:` entry, shown after a successful compose (never in the blueprint).
#[derive(Clone, Debug)]
pub struct Message {
    pub text: Node,
    pub when: Option<Condition>,
}

#[derive(Clone, Debug)]
pub struct Facet {
    pub name: String,
    pub name_span: Span,
    /// Path inside the template, `/`-separated (`facets/provider-aws.yaml`).
    pub path: String,
    pub file: FileId,
    pub ordinal: i64,
    pub when: Option<Condition>,
    pub config: Vec<ConfigBlock>,
    pub components: Vec<ComponentEntry>,
    pub requires: Vec<Requirement>,
    pub crds: Vec<Node>,
    pub substitutions: Option<Node>,
    pub backend: Option<Node>,
    pub messages: Vec<Message>,
    /// Kept hollow at load as certainly inactive in the one context of the run
    /// ([`super::prune`]): only what an inactive facet is read for is left.
    pub hollow: bool,
}
