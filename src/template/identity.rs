//! Who a component is. Two rules, one home:
//!
//! * the *merge key* (S9): contributions with the same key are one component —
//!   `name`; for terraform, else `source:path`, else `path`;
//! * the *component id* Windsor gives a composed component — `name`, else `path` —
//!   which `terraform_output()` and test expectations name.
//!
//! Both read fields through a lookup, so they serve facet nodes and composed values
//! alike.

use super::ComponentKind;
use crate::value::Value;
use crate::yaml::Node;
use std::sync::Arc;

/// The merge key of a component whose non-empty text fields `field` gives. Most keys
/// are one field as written (a `name`, a `path` without a `source`): that field's own
/// text is handed back, so a shared text (`Arc<str>`) costs no copy.
pub fn merge_key<'a, T>(kind: ComponentKind, field: impl Fn(&str) -> Option<&'a T>) -> Option<T>
where
    T: AsRef<str> + Clone + From<String> + 'a,
{
    let text = |k: &str| field(k).filter(|s| !s.as_ref().is_empty());
    match kind {
        ComponentKind::Kustomize | ComponentKind::FluxSystem => text("name").cloned(),
        ComponentKind::Terraform => text("name").cloned().or_else(|| {
            text("path").map(|p| match text("source") {
                Some(s) => T::from(format!("{}:{}", s.as_ref(), p.as_ref())),
                None => p.clone(),
            })
        }),
    }
}

/// The merge key of a component as a facet writes it (its literal fields): the node's
/// own shared text where the key is one field as written, so most keys cost no copy.
pub fn node_merge_key(kind: ComponentKind, node: &Node) -> Option<Arc<str>> {
    merge_key(kind, |k| node.get(k).and_then(Node::as_shared_str))
}

/// The id of a composed component: its non-empty `name`, else its `path`.
pub fn component_id<'a>(field: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    field("name")
        .filter(|s| !s.is_empty())
        .or_else(|| field("path"))
        .map(str::to_string)
}

/// The component id of a composed component (a map; anything else has none).
pub fn component_id_of(component: &Value) -> Option<String> {
    let m = component.as_map()?;
    component_id(|k| m.get(k).and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |k| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    }

    /// The merge key of a component with these text fields.
    fn key(kind: ComponentKind, pairs: &[(&str, &str)]) -> Option<String> {
        let owned: Vec<(&str, String)> = pairs.iter().map(|(k, v)| (*k, v.to_string())).collect();
        merge_key(kind, |k| {
            owned.iter().find(|(key, _)| *key == k).map(|(_, v)| v)
        })
    }

    #[test]
    fn terraform_merges_on_name_then_source_and_path() {
        let t = ComponentKind::Terraform;
        assert_eq!(
            key(t, &[("name", "net"), ("path", "network")]).as_deref(),
            Some("net")
        );
        assert_eq!(
            key(t, &[("source", "core"), ("path", "network")]).as_deref(),
            Some("core:network")
        );
        assert_eq!(
            key(t, &[("name", ""), ("path", "network")]).as_deref(),
            Some("network")
        );
        assert_eq!(key(ComponentKind::Kustomize, &[("path", "x")]), None);
    }

    #[test]
    fn a_component_id_ignores_the_source() {
        assert_eq!(
            component_id(fields(&[("source", "core"), ("path", "network")])).as_deref(),
            Some("network")
        );
        assert_eq!(
            component_id(fields(&[("name", "net"), ("path", "network")])).as_deref(),
            Some("net")
        );
    }
}
