//! A composed component: its fields, and the history of the contributions that made
//! it (for `explain`); the components of one kind, in the blueprint's order.

use crate::compose::model::fields::FieldMap;
use crate::compose::model::origin::OriginId;
use crate::compose::model::tracked::Tracked;
use crate::files::Span;
use crate::template::{ComponentKind, Strategy};
use indexmap::IndexMap;
use std::sync::Arc;

/// What one contribution did to a component (for `explain`).
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    Created,
    Merged,
    Replaced,
    /// Field-level removal; what was actually removed.
    Removed(Vec<String>),
    Deleted,
    /// A remove aimed at a component that does not exist (no-op).
    Missed,
}

#[derive(Clone, Debug)]
pub struct Step {
    pub origin: OriginId,
    pub strategy: Strategy,
    pub effect: Effect,
    /// What the contribution itself said, so `explain` can show overridden values;
    /// `None` for the facets' contributions to a composition that drops what only
    /// `explain` reads ([`ForExplain::Dropped`]). Shared with the component it
    /// created until a later step changes that.
    pub said: Option<Arc<FieldMap>>,
    /// How the lists this step merged were combined (context blueprint only, S12).
    pub lists: Vec<ListChoice>,
}

#[derive(Clone, Debug)]
pub struct Component {
    pub kind: ComponentKind,
    /// Shared with the list's key and the memos: handing a component on copies no text.
    pub id: Arc<str>,
    /// Copy-on-write ([`Arc::make_mut`]): a component nothing else touches shares
    /// its fields with the step that created it.
    pub fields: Arc<FieldMap>,
    /// Shared, copy-on-write: a component handed on unchanged (from the merge memo to
    /// the composition, from a system to its tiers) shares it.
    pub history: Arc<Vec<Step>>,
}

impl Component {
    pub fn get(&self, field: &str) -> Option<&Tracked> {
        self.fields.get(field)
    }

    pub fn name(&self) -> Option<&str> {
        self.fields.get("name").and_then(Tracked::as_str)
    }

    /// The names listed in `dependsOn`.
    pub fn dependencies(&self) -> Vec<String> {
        match self.get("dependsOn") {
            Some(Tracked::List(items, _)) => items
                .iter()
                .filter_map(|d| d.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Components of one kind in output order, plus the ones deleted (for `explain`).
#[derive(Clone, Debug, Default)]
pub struct Merged {
    /// Keyed with FxHash: ids are short and looked up once per contribution, which at
    /// 10 000 facets is most of this stage.
    pub components: IndexMap<Arc<str>, Component, rustc_hash::FxBuildHasher>,
    pub deleted: Vec<Component>,
}

/// How the overlay combined one list, for `explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct ListChoice {
    /// The list's dotted path (`terraform.cluster.inputs.node_groups`).
    pub path: String,
    /// The same path inside its component (`inputs.node_groups`).
    pub field: String,
    /// `union`, `merge-by-key: name`, …
    pub strategy: String,
    /// The `listStrategies` key that chose it; `None` for the Windsor default.
    pub rule: Option<(String, Span)>,
}

/// The `name` of a resources variant (`""` for the unnamed one).
pub fn variant_name(t: &Tracked) -> String {
    t.get("name")
        .and_then(Tracked::as_str)
        .unwrap_or_default()
        .to_string()
}
