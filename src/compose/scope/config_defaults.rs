//! The Windsor CLI's configuration defaults (docs/semantics.md S4, "Windsor's config
//! defaults"): what `windsor init`/`up`/`show values` add to a context's values before
//! any facet reads them. `windsor test` does not apply them, so neither does
//! `bpc test`; `compose`, `render`, `eval`, `explain` and `show values` do.
//!
//! Measured with the Windsor CLI 7b6bca77 (`wcompose render` on a one-facet template,
//! reading its effective values back), in three steps:
//!
//! 1. [`before_schema`], on the merged value layers, filling only keys that are
//!    absent (a key present with any value, `null` and `""` included, is kept):
//!    * a context named `local` or `local-…` gets `dev: true`, `platform: docker`
//!      and `workstation.runtime: docker`;
//!    * every context gets `platform: none`.
//!
//!    These are context data, so they win over the schema's defaults.
//! 2. Schema defaults ([`schema_defaults_apply`]): skipped for a context named `test`
//!    or `test-…`; otherwise, when the template has a schema, Windsor's own schema
//!    adds `workstation.services.{dns,git,registries}: true` over the template's
//!    (the context's values still win).
//! 3. [`after_schema`], on the values with schema defaults, filling what is still
//!    unset:
//!    * `dns.domain: test` when `workstation.runtime` is a non-empty string and DNS is
//!      not disabled (`dns.enabled` false or `"false"`); an empty `dns.domain` counts
//!      as unset;
//!    * `workstation.dns.address: 127.0.0.1` for runtime `docker-desktop`, on the
//!      same DNS condition;
//!    * `cluster.driver` from `platform`: `aws` → `eks`, `azure` → `aks`, `gcp` →
//!      `gke`; `docker`, `hetzner`, `hyperv`, `incus`, `metal`, `omni`, `vsphere` →
//!      `talos`; nothing for any other platform.

use crate::expr::{Map, Value};
use std::sync::Arc;

/// Whether Windsor treats a context of this name as a local development context.
pub fn is_local_context(name: &str) -> bool {
    name == "local" || name.starts_with("local-")
}

/// Whether Windsor applies schema defaults to a context of this name (not to `test`
/// or `test-…`).
pub fn schema_defaults_apply(name: &str) -> bool {
    !(name == "test" || name.starts_with("test-"))
}

/// Step 1: the defaults that are context data (they win over schema defaults).
pub fn before_schema(context: &str, values: &mut Value) {
    let Value::Map(map) = values else {
        return;
    };
    let map = Arc::make_mut(map);
    if is_local_context(context) {
        fill(map, "dev", Value::Bool(true));
        fill(map, "platform", Value::str("docker"));
        let workstation = map
            .entry("workstation".into())
            .or_insert_with(|| Value::map(Map::default()));
        if let Value::Map(w) = workstation {
            fill(Arc::make_mut(w), "runtime", Value::str("docker"));
        }
    }
    fill(map, "platform", Value::str("none"));
}

/// Windsor's own schema defaults, laid under the context's values when the template
/// has a schema (its own defaults come after, filling only what is still missing):
/// `workstation.services.{dns,git,registries}: true`. Keys keep their order; a
/// `workstation` or `services` that is set but not a map is left alone.
pub fn builtin_schema_defaults(values: &mut Value) {
    let Value::Map(map) = values else {
        return;
    };
    let workstation = Arc::make_mut(map)
        .entry("workstation".into())
        .or_insert_with(|| Value::map(Map::default()));
    let Value::Map(workstation) = workstation else {
        return;
    };
    let services = Arc::make_mut(workstation)
        .entry("services".into())
        .or_insert_with(|| Value::map(Map::default()));
    if let Value::Map(services) = services {
        let services = Arc::make_mut(services);
        for name in ["dns", "git", "registries"] {
            fill(services, name, Value::Bool(true));
        }
    }
}

/// Step 3: values Windsor derives from the others once schema defaults are in.
pub fn after_schema(map: &mut Map) {
    let runtime = lookup_str(map, &["workstation", "runtime"])
        .filter(|r| !r.is_empty())
        .map(str::to_string);
    let dns_enabled = !matches!(lookup(map, &["dns", "enabled"]), Some(Value::Bool(false)))
        && lookup_str(map, &["dns", "enabled"]) != Some("false");
    if let (Some(runtime), true) = (&runtime, dns_enabled) {
        fill_path(map, &["dns", "domain"], "test");
        if runtime == "docker-desktop" {
            fill_path(map, &["workstation", "dns", "address"], "127.0.0.1");
        }
    }
    let driver = match lookup_str(map, &["platform"]) {
        Some("aws") => Some("eks"),
        Some("azure") => Some("aks"),
        Some("gcp") => Some("gke"),
        Some("docker" | "hetzner" | "hyperv" | "incus" | "metal" | "omni" | "vsphere") => {
            Some("talos")
        }
        _ => None,
    };
    if let Some(driver) = driver {
        let cluster = map
            .entry("cluster".into())
            .or_insert_with(|| Value::map(Map::default()));
        if cluster.is_nil() {
            *cluster = Value::map(Map::default());
        }
        if let Value::Map(c) = cluster {
            fill(Arc::make_mut(c), "driver", Value::str(driver));
        }
    }
}

/// Sets `key` when it is absent.
fn fill(map: &mut Map, key: &str, value: Value) {
    if map.get(key).is_none() {
        map.insert(key.into(), value);
    }
}

/// Sets the string at `path` when it is absent, `null` or `""`, creating maps on the
/// way (a `null` map becomes one; any other non-map is left alone).
fn fill_path(map: &mut Map, path: &[&str], value: &str) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let slot = map.entry((*first).into()).or_insert(Value::Nil);
    if rest.is_empty() {
        if slot.is_nil() || slot.as_str() == Some("") {
            *slot = Value::str(value);
        }
        return;
    }
    if slot.is_nil() {
        *slot = Value::map(Map::default());
    }
    if let Value::Map(m) = slot {
        fill_path(Arc::make_mut(m), rest, value);
    }
}

fn lookup<'m>(map: &'m Map, path: &[&str]) -> Option<&'m Value> {
    let (first, rest) = path.split_first()?;
    let v = map.get(first)?;
    if rest.is_empty() {
        Some(v)
    } else {
        lookup(v.as_map()?, rest)
    }
}

fn lookup_str<'m>(map: &'m Map, path: &[&str]) -> Option<&'m str> {
    lookup(map, path).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        let sources = crate::files::FileMap::default();
        let id = sources.add("t.yaml", text);
        crate::yaml::parse(text, id)
            .expect("test YAML parses")
            .to_value()
    }

    fn all_steps(context: &str, text: &str, schema: bool) -> String {
        let mut v = yaml(text);
        if v.is_nil() {
            v = Value::map(Map::default());
        }
        before_schema(context, &mut v);
        if schema && schema_defaults_apply(context) {
            builtin_schema_defaults(&mut v);
        }
        let mut map = v.as_map().cloned().unwrap_or_default();
        after_schema(&mut map);
        crate::value::json::compact(&Value::map(map))
    }

    #[test]
    fn a_local_context_is_a_dev_context_with_a_docker_workstation() {
        assert_eq!(
            all_steps("local", "id: x\n", false),
            r#"{"id":"x","dev":true,"platform":"docker","workstation":{"runtime":"docker"},"dns":{"domain":"test"},"cluster":{"driver":"talos"}}"#
        );
        assert_eq!(
            all_steps("local-2", "platform: aws\ndev: false\n", false),
            r#"{"platform":"aws","dev":false,"workstation":{"runtime":"docker"},"dns":{"domain":"test"},"cluster":{"driver":"eks"}}"#
        );
    }

    #[test]
    fn other_contexts_only_get_platform_none() {
        assert_eq!(all_steps("localx", "{}", false), r#"{"platform":"none"}"#);
        assert_eq!(
            all_steps("prod", "dev: true\n", false),
            r#"{"dev":true,"platform":"none"}"#
        );
    }

    #[test]
    fn set_keys_are_kept_even_when_null_or_empty() {
        assert_eq!(
            all_steps("local", "platform: null\nworkstation: null\n", false),
            r#"{"platform":null,"workstation":null,"dev":true}"#
        );
        assert_eq!(
            all_steps("x", "platform: ''\n", false),
            r#"{"platform":""}"#
        );
    }

    #[test]
    fn dns_defaults_follow_the_runtime_unless_dns_is_disabled() {
        assert_eq!(
            all_steps("x", "workstation: {runtime: docker-desktop}\n", false),
            r#"{"workstation":{"runtime":"docker-desktop","dns":{"address":"127.0.0.1"}},"platform":"none","dns":{"domain":"test"}}"#
        );
        assert_eq!(
            all_steps(
                "x",
                "workstation: {runtime: docker-desktop}\ndns: {enabled: 'false'}\n",
                false
            ),
            r#"{"workstation":{"runtime":"docker-desktop"},"dns":{"enabled":"false"},"platform":"none"}"#
        );
        assert_eq!(
            all_steps(
                "x",
                "workstation: {runtime: colima}\ndns: {domain: ''}\n",
                false
            ),
            r#"{"workstation":{"runtime":"colima"},"dns":{"domain":"test"},"platform":"none"}"#
        );
        assert_eq!(
            all_steps("x", "workstation: {runtime: ''}\n", false),
            r#"{"workstation":{"runtime":""},"platform":"none"}"#
        );
    }

    #[test]
    fn windsors_schema_adds_the_workstation_services_under_the_values() {
        assert_eq!(
            all_steps("x", "workstation: {services: {dns: false}}\n", true),
            r#"{"workstation":{"services":{"dns":false,"git":true,"registries":true}},"platform":"none"}"#
        );
        assert_eq!(all_steps("test-1", "{}", true), r#"{"platform":"none"}"#);
    }

    #[test]
    fn the_cluster_driver_follows_the_platform_unless_set() {
        for (platform, driver) in [
            ("azure", Some("aks")),
            ("gcp", Some("gke")),
            ("omni", Some("talos")),
            ("none", None),
            ("talos", None),
            ("kind", None),
        ] {
            let mut map = yaml(&format!("platform: {platform}\n"))
                .as_map()
                .cloned()
                .unwrap_or_default();
            after_schema(&mut map);
            assert_eq!(
                lookup_str(&map, &["cluster", "driver"]),
                driver,
                "{platform}"
            );
        }
        let mut map = yaml("platform: aws\ncluster: {driver: mine}\n")
            .as_map()
            .cloned()
            .unwrap_or_default();
        after_schema(&mut map);
        assert_eq!(lookup_str(&map, &["cluster", "driver"]), Some("mine"));
    }
}
