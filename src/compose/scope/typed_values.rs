//! Fields the Windsor CLI materialises in every context's values because it reads them
//! through its typed configuration model (S4): templates rely on them being present
//! (`values(cluster.workers.nodes)` with only `cluster.workers.count` set).
//!
//! * `cluster` absent or null becomes `{controlplanes: {nodes: {}}, workers: {nodes: {}}}`;
//!   a `cluster` map gets the missing pools, and a pool map without `nodes` gets
//!   `nodes: {}`. A `cluster` that is not a map is left alone.
//! * `workstation.arch` is the machine's architecture in Go's spelling (`amd64`,
//!   `arm64`) unless set.

use crate::expr::{Map, Value};
use std::sync::Arc;

const NODE_POOLS: [&str; 2] = ["controlplanes", "workers"];

pub fn materialise(values: &mut Map) {
    let cluster = values.entry("cluster".into()).or_insert(Value::Nil);
    if cluster.is_nil() {
        *cluster = Value::map(Map::default());
    }
    if let Value::Map(cluster) = cluster {
        let cluster = Arc::make_mut(cluster);
        for pool in NODE_POOLS {
            let pool = cluster.entry(pool.into()).or_insert(Value::Nil);
            if pool.is_nil() {
                *pool = Value::map(Map::default());
            }
            if let Value::Map(pool) = pool {
                let pool = Arc::make_mut(pool);
                let nodes = pool.entry("nodes".into()).or_insert(Value::Nil);
                if nodes.is_nil() {
                    *nodes = Value::map(Map::default());
                }
            }
        }
    }
    let workstation = values.entry("workstation".into()).or_insert(Value::Nil);
    if workstation.is_nil() {
        *workstation = Value::map(Map::default());
    }
    if let Value::Map(workstation) = workstation {
        Arc::make_mut(workstation)
            .entry("arch".into())
            .or_insert_with(|| Value::str(go_arch()));
    }
}

/// `runtime.GOARCH` for the machine bpc runs on.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "x86" => "386",
        "aarch64" => "arm64",
        "arm" => "arm",
        "powerpc64" => "ppc64le",
        "s390x" => "s390x",
        "riscv64" => "riscv64",
        "loongarch64" => "loong64",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Map {
        let sources = crate::files::FileMap::default();
        let id = sources.add("t.yaml", text);
        let node = crate::yaml::load::parse(text, id).expect("test YAML parses");
        node.to_value().as_map().cloned().unwrap_or_default()
    }

    #[test]
    fn empty_values_get_both_node_pools_and_the_arch() {
        let mut values = Map::default();
        materialise(&mut values);
        let text = crate::value::json::compact(&Value::map(values));
        assert_eq!(
            text,
            format!(
                r#"{{"cluster":{{"controlplanes":{{"nodes":{{}}}},"workers":{{"nodes":{{}}}}}},"workstation":{{"arch":"{}"}}}}"#,
                go_arch()
            )
        );
    }

    #[test]
    fn set_fields_are_kept_and_only_gaps_filled() {
        let mut values = yaml("cluster:\n  workers: {count: 2}\n  controlplanes: {nodes: {a: {}}}\nworkstation: {arch: arm64, runtime: colima}\n");
        materialise(&mut values);
        let text = crate::value::json::compact(&Value::map(values));
        assert_eq!(
            text,
            r#"{"cluster":{"workers":{"count":2,"nodes":{}},"controlplanes":{"nodes":{"a":{}}}},"workstation":{"arch":"arm64","runtime":"colima"}}"#
        );
    }

    #[test]
    fn a_cluster_that_is_not_a_map_is_left_alone() {
        let mut values = yaml("cluster: off\n");
        materialise(&mut values);
        assert_eq!(values.get("cluster").and_then(Value::as_str), Some("off"));
    }
}
