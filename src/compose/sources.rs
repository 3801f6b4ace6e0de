//! Multi-source composition: a template whose `blueprint.yaml` lists local sources
//! (loaded by [`crate::template::load_with_sources`]).
//!
//! Each source's facets are composed on their own — ordinals never cross a source
//! boundary — against the same context values, with the config blocks of the sources
//! it references laid over those values (downstream facets see upstream config,
//! docs/semantics.md S9 "Local sources"). The composing template comes last and sees every source's config.
//! All contributions then go through one merge in that order, so a downstream facet
//! can merge into, replace or remove an upstream component with the usual strategies,
//! and `dependsOn` may name a component of another source.

use super::origin::Origins;
use super::schema::Schema;
use super::scope::deep_merge;
use super::source_tags::{SourceTag, SourceTags};
use super::{compose_part, finish, Composition, Inputs, Part};
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::{Template, TemplateId};

pub fn compose_with_sources(inputs: &Inputs<'_>) -> Result<Composition, Vec<Diagnostic>> {
    let template = inputs.template;
    let mut origins = Origins::default();
    let Upstream {
        mut parts,
        configs,
        tags,
    } = upstream(inputs, &mut origins)?;
    let visible = layered(configs.iter());
    parts.push(compose_part(
        inputs,
        TemplateId::Composing,
        template,
        inputs.schema,
        visible.as_ref(),
        &mut origins,
    )?);
    let base = merged_base(template);
    let tags = tags.with_published(template);
    finish(inputs, parts, origins, base.as_ref(), Some(&tags))
}

/// What the composing template sees of its sources: their config blocks, deep-merged
/// in merge order; `None` without sources.
pub fn visible_config(inputs: &Inputs<'_>) -> Result<Option<Value>, Vec<Diagnostic>> {
    let configs = upstream(inputs, &mut Origins::default())?.configs;
    Ok(layered(configs.iter()))
}

/// The sources composed in merge order, each with its evaluated config.
struct Upstream {
    parts: Vec<Part>,
    configs: Vec<Value>,
    tags: SourceTags,
}

fn upstream(inputs: &Inputs<'_>, origins: &mut Origins) -> Result<Upstream, Vec<Diagnostic>> {
    let template = inputs.template;
    let mut parts = Vec::with_capacity(template.upstream.len() + 1);
    let mut configs: Vec<Value> = Vec::with_capacity(template.upstream.len());
    let mut tags = SourceTags::default();
    for (k, up) in template.upstream.iter().enumerate() {
        if !up.install {
            // Loaded, not merged (S14): no components, no config for others.
            configs.push(Value::map(Map::default()));
            continue;
        }
        let in_source = |ds: Vec<Diagnostic>| -> Vec<Diagnostic> {
            ds.into_iter()
                .map(|d| d.with_context(format!("in local source `{}`", up.name)))
                .collect()
        };
        // A source composes as it would alone, so its own schema supplies defaults.
        let schema = up
            .template
            .schema
            .as_ref()
            .map(Schema::compile)
            .transpose()
            .map_err(|d| in_source(vec![d]))?;
        let visible = layered(reachable(template, k).into_iter().map(|j| &configs[j]));
        let id = TemplateId::Upstream(k);
        let part = compose_part(
            inputs,
            id,
            &up.template,
            schema.as_ref(),
            visible.as_ref(),
            origins,
        )
        .map_err(in_source)?;
        configs.push(Value::map(part.config().map_err(in_source)?));
        tags.tags.push(SourceTag {
            name: up.name.clone(),
            depth: up.depth,
            entry: up.entry,
            template: id,
        });
        parts.push(part);
    }
    tags.own_depth = template
        .upstream
        .iter()
        .map(|u| u.depth + 1)
        .max()
        .unwrap_or(0);
    Ok(Upstream {
        parts,
        configs,
        tags,
    })
}

/// Indices of the sources source `k` references, directly or not, in merge order.
fn reachable(template: &Template, k: usize) -> Vec<usize> {
    let mut seen = vec![false; template.upstream.len()];
    let mut todo = template.upstream[k].references.clone();
    while let Some(j) = todo.pop() {
        if let Some(slot) = seen.get_mut(j) {
            if !*slot {
                *slot = true;
                todo.extend(template.upstream[j].references.iter().copied());
            }
        }
    }
    (0..seen.len()).filter(|&j| seen[j]).collect()
}

/// Config maps deep-merged in order (later wins); `None` when there are none.
fn layered<'v>(configs: impl Iterator<Item = &'v Value>) -> Option<Value> {
    let mut out: Option<Value> = None;
    for config in configs {
        match &mut out {
            Some(merged) => deep_merge(merged, config),
            None => out = Some(config.clone()),
        }
    }
    out
}

/// The blueprint the components go into: the sources' `blueprint.yaml` documents in
/// merge order, the composing template's last. `sources:` entries merge by name (a
/// later entry replaces an earlier one in place); any other field is replaced by a
/// later template that sets it. Component lists are not taken from here (they were
/// contributions).
fn merged_base(template: &Template) -> Option<Value> {
    let bases = template
        .upstream
        .iter()
        .map(|u| &u.template.base)
        .chain(std::iter::once(&template.base))
        .flatten()
        .map(crate::yaml::Node::to_value);
    let mut out: Option<Map> = None;
    for base in bases {
        let Some(overlay) = base.as_map() else {
            continue;
        };
        let merged = out.get_or_insert_with(Map::default);
        for (key, value) in overlay {
            if value.is_nil() {
                continue;
            }
            match (&**key, merged.get_mut(key)) {
                ("sources", Some(existing)) => *existing = merge_sources(existing, value),
                (_, Some(existing)) => *existing = value.clone(),
                (_, None) => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }
    out.map(Value::map)
}

/// Two `sources:` lists by entry name; unnamed entries are kept as they are.
fn merge_sources(base: &Value, overlay: &Value) -> Value {
    let name = |v: &Value| {
        v.as_map()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut out: Vec<Value> = base.as_list().map(<[Value]>::to_vec).unwrap_or_default();
    for entry in overlay.as_list().unwrap_or_default() {
        let slot =
            name(entry).and_then(|n| out.iter().position(|e| name(e).as_deref() == Some(&n)));
        match slot {
            Some(i) => out[i] = entry.clone(),
            None => out.push(entry.clone()),
        }
    }
    Value::list(out)
}

#[cfg(test)]
mod tests {
    use super::merge_sources;
    use crate::expr::{Map, Value};

    fn entry(name: &str, url: &str) -> Value {
        let mut m = Map::default();
        m.insert("name".into(), Value::str(name));
        m.insert("url".into(), Value::str(url));
        Value::map(m)
    }

    #[test]
    fn sources_merge_by_name_in_place() {
        let base = Value::list(vec![entry("core", "../core"), entry("x", "oci://x")]);
        let overlay = Value::list(vec![entry("y", "oci://y"), entry("core", "oci://core")]);
        let merged = merge_sources(&base, &overlay);
        let expected = Value::list(vec![
            entry("core", "oci://core"),
            entry("x", "oci://x"),
            entry("y", "oci://y"),
        ]);
        assert_eq!(
            crate::value::json::compact(&merged),
            crate::value::json::compact(&expected)
        );
    }
}
