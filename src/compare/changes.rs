//! Two snapshots of a context compared: the items added, removed and changed, and for
//! a changed one each field that differs, with its old and new value and the new
//! value's origin; and the sources whose location changed.

use super::snapshot::{Kind, Leaf, Snapshot};
use std::collections::BTreeSet;

/// How an item or a context differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    Changed,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }
}

/// One field that differs (`None`: absent on that side).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub path: String,
    /// The two sides as text reads them (`None`: the side has no such field).
    pub old: Option<String>,
    pub new: Option<String>,
    /// The two sides as values, for JSON readers.
    pub old_value: Option<serde_json::Value>,
    pub new_value: Option<serde_json::Value>,
    /// The sides whose value is a Terraform output known only when applied.
    pub deferred: Vec<&'static str>,
    /// Where the new value came from (absent for a removed field, or where bpc
    /// cannot say, as for rendered Flux objects).
    pub origin: Option<String>,
}

/// An item (component, Kustomization, rendered file) that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub kind: Kind,
    pub id: String,
    pub change: Change,
    pub fields: Vec<Field>,
}

/// A source (`blueprint.yaml` `sources:`) whose location differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    /// The two sides as text reads them (`None`: the side has no such source).
    pub old: Option<String>,
    pub new: Option<String>,
    /// The two sides as JSON readers get them (`{"url", "ref"}`).
    pub old_value: Option<serde_json::Value>,
    pub new_value: Option<serde_json::Value>,
}

/// How two snapshots of a context differ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub sources: Vec<Source>,
    pub items: Vec<Item>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty() && self.items.is_empty()
    }
}

/// What differs from `old` to `new`. Items are in kind then id order, fields in path
/// order.
pub fn compare(old: &Snapshot, new: &Snapshot) -> Changes {
    let mut changes = Changes::default();
    let names: BTreeSet<&String> = old.sources.keys().chain(new.sources.keys()).collect();
    for name in names {
        let (a, b) = (old.sources.get(name), new.sources.get(name));
        if a != b {
            changes.sources.push(Source {
                name: name.clone(),
                old: a.map(|l| l.shown.clone()),
                new: b.map(|l| l.shown.clone()),
                old_value: a.map(|l| l.value.clone()),
                new_value: b.map(|l| l.value.clone()),
            });
        }
    }
    let keys: BTreeSet<&(Kind, String)> = old.items.keys().chain(new.items.keys()).collect();
    for key in keys {
        let (kind, id) = (key.0, key.1.clone());
        match (old.items.get(key), new.items.get(key)) {
            (Some(_), None) => changes.items.push(Item {
                kind,
                id,
                change: Change::Removed,
                fields: Vec::new(),
            }),
            (None, Some(_)) => changes.items.push(Item {
                kind,
                id,
                change: Change::Added,
                fields: Vec::new(),
            }),
            (Some(a), Some(b)) => {
                let paths: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                let fields: Vec<Field> = paths
                    .into_iter()
                    .filter_map(|path| field(path, a.get(path), b.get(path)))
                    .collect();
                if !fields.is_empty() {
                    changes.items.push(Item {
                        kind,
                        id,
                        change: Change::Changed,
                        fields,
                    });
                }
            }
            (None, None) => {}
        }
    }
    changes
}

fn field(path: &str, old: Option<&Leaf>, new: Option<&Leaf>) -> Option<Field> {
    if old.map(|l| &l.key) == new.map(|l| &l.key) {
        return None;
    }
    Some(Field {
        path: path.to_string(),
        old: old.map(|l| l.shown.clone()),
        new: new.map(|l| l.shown.clone()),
        old_value: old.map(|l| l.value.clone()),
        new_value: new.map(|l| l.value.clone()),
        deferred: [("old", old), ("new", new)]
            .into_iter()
            .filter(|(_, leaf)| leaf.is_some_and(|l| l.deferred))
            .map(|(side, _)| side)
            .collect(),
        origin: new.and_then(|l| l.origin.clone()),
    })
}
