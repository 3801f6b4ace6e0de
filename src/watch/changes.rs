//! The one-line summary of what a new composition changed: components and
//! kustomizations added, removed or changed, by id, in blueprint order.

use crate::template::identity::component_id_of;
use crate::value::Value;
use indexmap::IndexMap;

/// What a summary compares: each component's and kustomization's compact JSON by id,
/// and the whole blueprint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    components: IndexMap<String, String>,
    kustomizations: IndexMap<String, String>,
    whole: String,
}

impl Shape {
    pub fn of(blueprint: &Value) -> Shape {
        let by_id = |key: &str| -> IndexMap<String, String> {
            blueprint
                .as_map()
                .and_then(|m| m.get(key))
                .and_then(Value::as_list)
                .map(|items| {
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            let id = component_id_of(item).unwrap_or_else(|| format!("#{i}"));
                            (id, crate::value::json::compact(item))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Shape {
            components: by_id("terraform"),
            kustomizations: by_id("kustomize"),
            whole: crate::value::json::compact(blueprint),
        }
    }

    /// `2 component(s), 3 kustomization(s)`: for the first round.
    pub fn counts(&self) -> String {
        format!(
            "{} component(s), {} kustomization(s)",
            self.components.len(),
            self.kustomizations.len()
        )
    }
}

/// `components: 1 added (dns), 1 changed (cluster); kustomizations: 1 removed (csi)`,
/// or `no change`.
pub fn summary(old: &Shape, new: &Shape) -> String {
    let mut parts = Vec::new();
    for (kind, before, after) in [
        ("components", &old.components, &new.components),
        ("kustomizations", &old.kustomizations, &new.kustomizations),
    ] {
        let added: Vec<&str> = after
            .keys()
            .filter(|id| !before.contains_key(*id))
            .map(String::as_str)
            .collect();
        let removed: Vec<&str> = before
            .keys()
            .filter(|id| !after.contains_key(*id))
            .map(String::as_str)
            .collect();
        let changed: Vec<&str> = after
            .iter()
            .filter(|(id, json)| before.get(*id).is_some_and(|old| old != *json))
            .map(|(id, _)| id.as_str())
            .collect();
        let listed: Vec<String> = [("added", added), ("removed", removed), ("changed", changed)]
            .into_iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(what, ids)| format!("{} {what} ({})", ids.len(), ids.join(", ")))
            .collect();
        if !listed.is_empty() {
            parts.push(format!("{kind}: {}", listed.join(", ")));
        }
    }
    if parts.is_empty() {
        return if old.whole == new.whole {
            "no change".to_string()
        } else {
            "changed outside components and kustomizations".to_string()
        };
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(yaml: &str) -> Shape {
        let node = crate::yaml::parse(yaml, crate::files::span::FileId(0)).expect("yaml");
        Shape::of(&node.to_value())
    }

    #[test]
    fn names_what_was_added_removed_and_changed() {
        let old =
            shape("terraform: [{name: net, x: 1}, {path: cluster}]\nkustomize: [{name: csi}]\n");
        let new = shape("terraform: [{name: net, x: 2}, {name: dns}]\nkustomize: [{name: csi}]\n");
        assert_eq!(
            summary(&old, &new),
            "components: 1 added (dns), 1 removed (cluster), 1 changed (net)"
        );
        assert_eq!(summary(&new, &new), "no change");
        let renamed = shape("metadata: {name: x}\nterraform: [{name: net, x: 2}, {name: dns}]\nkustomize: [{name: csi}]\n");
        assert_eq!(
            summary(&new, &renamed),
            "changed outside components and kustomizations"
        );
        assert_eq!(new.counts(), "2 component(s), 1 kustomization(s)");
    }
}
