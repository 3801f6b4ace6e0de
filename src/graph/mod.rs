//! `bpc graph`: what waits for what in a context's deployment, as a picture.
//!
//! The graph is read from the rendered tree ([`crate::render::Rendered`]): Terraform
//! components from `terraform/plan.json` in apply order, Flux Kustomizations from
//! `flux/kustomizations/`, sources from `flux/sources/`, and every `dependsOn` exactly
//! as rendered (CRD layer, flux tiers and global dependencies included). Nothing is
//! recomputed, so the picture cannot disagree with what is applied. The composition
//! is read only to say *why* each edge exists ([`reasons`]).
//!
//! Writers: [`dot`] (Graphviz), [`mermaid`], [`svg`] (laid out in-process) and
//! [`html`] (the SVG with pan, zoom, hover and highlight). [`select`] narrows a graph
//! to one node's neighbourhood or marks the difference with another context's.

pub(crate) mod build;
mod cycles;
pub(crate) mod dot;
pub(crate) mod html;
pub(crate) mod mermaid;
pub(crate) mod reasons;
pub(crate) mod select;
pub(crate) mod svg;

pub use build::build;

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    Terraform,
    Kustomization,
    Source,
}

impl NodeKind {
    pub fn noun(self) -> &'static str {
        match self {
            NodeKind::Terraform => "terraform component",
            NodeKind::Kustomization => "kustomization",
            NodeKind::Source => "source",
        }
    }

    /// The prefix of node ids of this kind (`terraform/cluster`).
    pub fn prefix(self) -> &'static str {
        match self {
            NodeKind::Terraform => "terraform",
            NodeKind::Kustomization => "kustomization",
            NodeKind::Source => "source",
        }
    }
}

/// How a node relates to another graph under `--diff`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Change {
    #[default]
    Same,
    /// Only in this context's graph.
    Added,
    /// Only in the other context's graph.
    Removed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `kind/name`, unique in the graph.
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    /// What a reader wants on hover, in order: path, source, facet, provenance.
    pub details: Vec<(String, String)>,
    pub change: Change,
}

/// Why a node waits for another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// A rendered `dependsOn`.
    DependsOn,
    /// A value read with `terraform_output()` (a Kustomization substitution or a
    /// deferred Terraform input): drawn dashed.
    Output,
    /// A Kustomization reconciles from a source: drawn dotted.
    Source,
}

/// `from` must be in place before `to` (edges point in deployment order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// Written by which facet at which line, or added by which rule.
    pub why: String,
    pub change: Change,
    /// Part of a `dependsOn` cycle: both ends wait, directly or not, for each other.
    pub in_cycle: bool,
}

/// One context's deployment graph. Nodes: Terraform components in apply order, then
/// Kustomizations and sources in name order; edges in the order of their nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    pub context: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The composition's errors about `dependsOn` cycles (`file:line:col: message`),
    /// which the writers show beside the highlighted edges; empty for a valid one.
    pub cycles: Vec<String>,
}

impl Graph {
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }
}
