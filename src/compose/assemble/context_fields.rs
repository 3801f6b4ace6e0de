//! Blueprint fields the Windsor CLI derives from the context rather than from facets
//! (S10):
//!
//! * `configMaps.values-common`: the blueprint's `substitutions`, then
//!   `substitutions.common.*` from the values, then `DOMAIN` (`dns.domain`), `CONTEXT`,
//!   `CONTEXT_ID` (`id`), `LOADBALANCER_IP_START` / `_END` / `_RANGE`
//!   (`network.loadbalancer_ips`, not on a docker-desktop workstation), `REGISTRY_URL`
//!   (`docker.registry_url`) and `LOCAL_VOLUME_PATH` (after the first `:` of
//!   `cluster.workers.volumes[0]`); later sets win, empty strings are left out. Each of
//!   these keys is read as the Windsor CLI's config lookups read it: the context's
//!   value, else the schema's default for that key, even where the values were
//!   composed without schema defaults (a test case; checked with the Windsor CLI).
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

/// The context's values, and the schema's defaults a lookup falls back to.
#[derive(Clone, Copy)]
pub struct Lookup<'v> {
    pub values: &'v Map,
    pub defaults: Option<&'v Map>,
}

impl<'v> Lookup<'v> {
    /// The value at `path`, else the schema's default for it.
    fn get(&self, path: &[&str]) -> Option<&'v Value> {
        at(self.values, path).or_else(|| self.defaults.and_then(|d| at(d, path)))
    }

    fn text(&self, path: &[&str]) -> Option<String> {
        scalar_text(self.get(path)?)
    }
}

fn text(values: &Map, path: &[&str]) -> Option<String> {
    scalar_text(at(values, path)?)
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Str(s) if !s.is_empty() => Some(s.to_string()),
        Value::Int(n) => Some(n.to_string()),
        Value::Uint(n) => Some(n.to_string()),
        _ => None,
    }
}

pub fn values_common(lookup: Lookup<'_>, context: &str, substitutions: &Map) -> Map {
    let values = lookup.values;
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
    set("DOMAIN", lookup.text(&["dns", "domain"]));
    set(
        "CONTEXT",
        Some(context.to_string()).filter(|c| !c.is_empty()),
    );
    set("CONTEXT_ID", lookup.text(&["id"]));
    let docker_desktop =
        lookup.text(&["workstation", "runtime"]).as_deref() == Some("docker-desktop");
    if !docker_desktop {
        let start = lookup.text(&["network", "loadbalancer_ips", "start"]);
        let end = lookup.text(&["network", "loadbalancer_ips", "end"]);
        if let (Some(start), Some(end)) = (&start, &end) {
            set("LOADBALANCER_IP_RANGE", Some(format!("{start}-{end}")));
        }
        set("LOADBALANCER_IP_START", start);
        set("LOADBALANCER_IP_END", end);
    }
    set("REGISTRY_URL", lookup.text(&["docker", "registry_url"]));
    let volume = lookup
        .get(&["cluster", "workers", "volumes"])
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
        let common = values_common(
            Lookup {
                values: &values,
                defaults: None,
            },
            "staging",
            &substitutions,
        );
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
        let common = values_common(
            Lookup {
                values: &values,
                defaults: None,
            },
            "local",
            &Map::default(),
        );
        assert_eq!(common.keys().map(|k| &**k).collect::<Vec<_>>(), ["CONTEXT"]);
    }

    /// A key the values leave unset falls back to the schema's default, key by key, as
    /// the Windsor CLI's config lookups do in a test case composed without schema
    /// defaults (the oracle gave this `values-common` for such a case).
    #[test]
    fn unset_keys_fall_back_to_schema_defaults() {
        let lb = |start: &str, end: Option<&str>| {
            let mut ips = vec![("start", Value::str(start))];
            if let Some(end) = end {
                ips.push(("end", Value::str(end)));
            }
            Value::map(map(&[("loadbalancer_ips", Value::map(map(&ips)))]))
        };
        let values = map(&[("network", lb("10.9.9.9", None))]);
        let defaults = map(&[
            ("id", Value::str("the-id")),
            (
                "dns",
                Value::map(map(&[("domain", Value::str("dflt.test"))])),
            ),
            ("network", lb("10.5.1.10", Some("10.5.1.100"))),
            (
                "workstation",
                Value::map(map(&[("runtime", Value::str("colima"))])),
            ),
        ]);
        let lookup = Lookup {
            values: &values,
            defaults: Some(&defaults),
        };
        let common = values_common(lookup, "test", &Map::default());
        assert_eq!(
            crate::value::json::compact(&Value::map(common)),
            r#"{"CONTEXT":"test","CONTEXT_ID":"the-id","DOMAIN":"dflt.test","LOADBALANCER_IP_END":"10.5.1.100","LOADBALANCER_IP_RANGE":"10.9.9.9-10.5.1.100","LOADBALANCER_IP_START":"10.9.9.9"}"#
        );
        // A default docker-desktop runtime leaves the range out, as a set one does.
        let desktop = map(&[(
            "workstation",
            Value::map(map(&[("runtime", Value::str("docker-desktop"))])),
        )]);
        let lookup = Lookup {
            values: &Map::default(),
            defaults: Some(&desktop),
        };
        let common = values_common(lookup, "test", &map(&[("x", Value::str("1"))]));
        assert_eq!(
            common.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["CONTEXT", "x"]
        );
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
