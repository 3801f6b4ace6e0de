//! Blueprint fields the Windsor CLI derives from the context rather than from facets
//! (S10):
//!
//! * `configMaps.values-common`: the blueprint's `substitutions`, then
//!   `substitutions.common.*` from the values, then `DOMAIN` (`dns.domain`), `CONTEXT`,
//!   `CONTEXT_ID` (`id`), `LOADBALANCER_IP_START` / `_END` / `_RANGE`
//!   (`network.loadbalancer_ips`, not on a docker-desktop workstation), `REGISTRY_URL`
//!   (`docker.registry_url`) and `LOCAL_VOLUME_PATH` (after the first `:` of
//!   `cluster.workers.volumes[0]`); later sets win, empty strings are left out.
//! * `repository` in dev mode (`dev: true`) when the base blueprint has none:
//!   `http://git.<dns.domain or test>/git/<project directory>`, branch `main`, secret
//!   `flux-system`.
//! * `messages`: the notes of the active facets as written, for whoever applies the
//!   blueprint to print.

use crate::expr::{Map, Value};
use crate::template::Template;

fn at<'v>(values: &'v Map, path: &[&str]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut current = values.get(first)?;
    for key in rest {
        current = current.as_map()?.get(key)?;
    }
    Some(current)
}

fn text(values: &Map, path: &[&str]) -> Option<String> {
    match at(values, path)? {
        Value::Str(s) if !s.is_empty() => Some(s.to_string()),
        Value::Int(n) => Some(n.to_string()),
        Value::Uint(n) => Some(n.to_string()),
        _ => None,
    }
}

pub fn values_common(values: &Map, context: &str, substitutions: &Map) -> Map {
    let mut common = substitutions.clone();
    if let Some(Value::Map(extra)) = at(values, &["substitutions", "common"]) {
        for (k, v) in extra.iter() {
            common.insert(k.clone(), v.clone());
        }
    }
    let mut set = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            common.insert(key.into(), Value::str(value));
        }
    };
    set("DOMAIN", text(values, &["dns", "domain"]));
    set(
        "CONTEXT",
        Some(context.to_string()).filter(|c| !c.is_empty()),
    );
    set("CONTEXT_ID", text(values, &["id"]));
    let docker_desktop =
        text(values, &["workstation", "runtime"]).as_deref() == Some("docker-desktop");
    if !docker_desktop {
        let start = text(values, &["network", "loadbalancer_ips", "start"]);
        let end = text(values, &["network", "loadbalancer_ips", "end"]);
        if let (Some(start), Some(end)) = (&start, &end) {
            set("LOADBALANCER_IP_RANGE", Some(format!("{start}-{end}")));
        }
        set("LOADBALANCER_IP_START", start);
        set("LOADBALANCER_IP_END", end);
    }
    set("REGISTRY_URL", text(values, &["docker", "registry_url"]));
    let volume = at(values, &["cluster", "workers", "volumes"])
        .and_then(Value::as_list)
        .and_then(|v| v.first())
        .and_then(Value::as_str)
        .and_then(|v| v.split_once(':'))
        .map(|(_, path)| path.to_string())
        .filter(|p| !p.is_empty());
    set("LOCAL_VOLUME_PATH", volume);
    common.retain(|_, v| v.as_str() != Some(""));
    common.sort_keys();
    common
}

pub fn dev_repository(values: &Map, project_root: &str) -> Option<Value> {
    if !matches!(values.get("dev"), Some(Value::Bool(true))) {
        return None;
    }
    let domain = text(values, &["dns", "domain"]).unwrap_or_else(|| "test".to_string());
    let project = project_root
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let mut reference = Map::default();
    reference.insert("branch".into(), Value::str("main"));
    let mut repository = Map::default();
    repository.insert(
        "url".into(),
        Value::str(format!("http://git.{domain}/git/{project}")),
    );
    repository.insert("ref".into(), Value::map(reference));
    repository.insert("secretName".into(), Value::str("flux-system"));
    Some(Value::map(repository))
}

pub fn messages(template: &Template, active: &[usize]) -> Vec<Value> {
    let mut out = Vec::new();
    for &i in active {
        for message in &template.facets[i].messages {
            let mut entry = Map::default();
            if let Some(when) = &message.when {
                entry.insert("when".into(), Value::str(when.text.as_str()));
            }
            entry.insert("text".into(), message.text.to_value());
            out.push(Value::map(entry));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Value)]) -> Map {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), v.clone()))
            .collect()
    }

    #[test]
    fn values_common_takes_legacy_keys_over_substitutions() {
        let values = map(&[
            (
                "dns",
                Value::map(map(&[("domain", Value::str("acme.test"))])),
            ),
            (
                "network",
                Value::map(map(&[(
                    "loadbalancer_ips",
                    Value::map(map(&[
                        ("start", Value::str("10.0.0.10")),
                        ("end", Value::str("10.0.0.20")),
                    ])),
                )])),
            ),
        ]);
        let substitutions = map(&[
            ("DOMAIN", Value::str("overridden")),
            ("private_domain", Value::str("acme.local")),
            ("empty", Value::str("")),
        ]);
        let common = values_common(&values, "staging", &substitutions);
        let text = crate::value::json::compact(&Value::map(common));
        assert_eq!(
            text,
            r#"{"CONTEXT":"staging","DOMAIN":"acme.test","LOADBALANCER_IP_END":"10.0.0.20","LOADBALANCER_IP_RANGE":"10.0.0.10-10.0.0.20","LOADBALANCER_IP_START":"10.0.0.10","private_domain":"acme.local"}"#
        );
    }

    #[test]
    fn docker_desktop_has_no_load_balancer_range() {
        let values = map(&[
            (
                "workstation",
                Value::map(map(&[("runtime", Value::str("docker-desktop"))])),
            ),
            (
                "network",
                Value::map(map(&[(
                    "loadbalancer_ips",
                    Value::map(map(&[
                        ("start", Value::str("10.0.0.10")),
                        ("end", Value::str("10.0.0.20")),
                    ])),
                )])),
            ),
        ]);
        let common = values_common(&values, "local", &Map::default());
        assert_eq!(common.keys().map(|k| &**k).collect::<Vec<_>>(), ["CONTEXT"]);
    }

    #[test]
    fn dev_mode_points_the_repository_at_the_local_git_server() {
        let values = map(&[("dev", Value::Bool(true))]);
        let repo =
            dev_repository(&values, "/home/me/platform").map(|r| crate::value::json::compact(&r));
        assert_eq!(
            repo.as_deref(),
            Some(
                r#"{"url":"http://git.test/git/platform","ref":{"branch":"main"},"secretName":"flux-system"}"#
            )
        );
        assert!(dev_repository(&Map::default(), "/x").is_none());
    }
}
