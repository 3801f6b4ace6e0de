//! Stage 1, sources: the templates of a composition, in merge order. A template whose
//! `blueprint.yaml` lists local sources (loaded by
//! [`crate::template::load_with_sources`]) composes each of them before itself.
//!
//! Each source's facets are composed on their own — ordinals never cross a source
//! boundary — against the same context values, with the config blocks of the sources
//! it references laid over those values (downstream facets see upstream config,
//! docs/semantics.md S9 "Local sources"). The composing template comes last and sees every source's config.
//! All contributions then go through one merge in that order, so a downstream facet
//! can merge into, replace or remove an upstream component with the usual strategies,
//! and `dependsOn` may name a component of another source.

use crate::compose::collect::Part;
use crate::compose::shared::schema::Schema;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::{Template, TemplateId};
use crate::value::edit::deep_merge;
use source_tags::{SourceTag, SourceTags};

pub mod source_tags;

/// One template to compose: a local source, or the composing template (last).
pub struct Unit<'t> {
    pub id: TemplateId,
    pub template: &'t Template,
    /// The config of the sources it builds on, deep-merged, to lay over the context
    /// values; `None` without any.
    pub visible: Option<Value>,
    /// A source composes as it would alone, so its own schema supplies defaults.
    own_schema: Option<Schema>,
    /// The composing template's schema, compiled by the caller.
    given_schema: Option<&'t Schema>,
    /// The local source's name; `None` for the composing template.
    name: Option<&'t str>,
}

impl Unit<'_> {
    pub fn schema(&self) -> Option<&Schema> {
        self.own_schema.as_ref().or(self.given_schema)
    }

    /// Whether this is a local source (not the composing template).
    pub fn is_source(&self) -> bool {
        self.name.is_some()
    }

    /// `ds` said of this template: a local source's errors name it.
    pub fn in_source(&self, ds: Vec<Diagnostic>) -> Vec<Diagnostic> {
        match self.name {
            None => ds,
            Some(name) => ds
                .into_iter()
                .map(|d| d.with_context(format!("in local source `{name}`")))
                .collect(),
        }
    }
}

/// The templates of one composition in merge order — each installed local source,
/// then the composing template — and what each composed source leaves for the next.
pub struct Sources<'t> {
    template: &'t Template,
    schema: Option<&'t Schema>,
    /// The next entry of `template.upstream` to look at; its length stands for the
    /// composing template, anything beyond for the end.
    next: usize,
    /// Per source looked at, its evaluated config (empty when not installed).
    configs: Vec<Value>,
    tags: SourceTags,
}

impl<'t> Sources<'t> {
    /// `schema` is the composing template's own.
    pub fn new(template: &'t Template, schema: Option<&'t Schema>) -> Sources<'t> {
        Sources {
            template,
            schema,
            next: 0,
            configs: Vec::with_capacity(template.upstream.len()),
            tags: SourceTags::default(),
        }
    }

    /// The next template to compose; `None` after the composing template.
    pub fn next_unit(&mut self) -> Result<Option<Unit<'t>>, Vec<Diagnostic>> {
        let template = self.template;
        while let Some(up) = template.upstream.get(self.next) {
            let k = self.next;
            self.next += 1;
            if !up.install {
                // Loaded, not merged (S14): no components, no config for others.
                self.configs.push(Value::map(Map::default()));
                continue;
            }
            let mut unit = Unit {
                id: TemplateId::upstream(k),
                template: &up.template,
                visible: layered(reachable(template, k).into_iter().map(|j| &self.configs[j])),
                own_schema: None,
                given_schema: None,
                name: Some(&up.name),
            };
            unit.own_schema = up
                .template
                .schema
                .as_ref()
                .map(Schema::compile)
                .transpose()
                .map_err(|d| unit.in_source(vec![d]))?;
            return Ok(Some(unit));
        }
        if self.next > template.upstream.len() {
            return Ok(None);
        }
        self.next += 1;
        Ok(Some(Unit {
            id: TemplateId::Composing,
            template,
            // The composing template sees every source's config.
            visible: layered(self.configs.iter()),
            own_schema: None,
            given_schema: self.schema,
            name: None,
        }))
    }

    /// Records what a composed local source leaves for the templates after it: its
    /// config, and its tag. The composing template's config is not needed here (its
    /// errors wait until merging and validating have had their say).
    pub fn composed(&mut self, unit: &Unit<'_>, part: &Part) -> Result<(), Vec<Diagnostic>> {
        let Some(k) = unit.id.upstream_index() else {
            return Ok(());
        };
        let config = part.config().map_err(|d| unit.in_source(d))?;
        self.configs.push(Value::map(config));
        let up = &self.template.upstream[k];
        self.tags.tags.push(SourceTag {
            name: up.name.clone(),
            depth: up.depth,
            entry: up.entry,
            template: unit.id,
        });
        Ok(())
    }

    /// The blueprint the components go into (`blueprint.yaml`, the sources' merged
    /// with the composing template's) and the source tags, `None` when nothing is
    /// tagged.
    pub fn finish(mut self) -> (Option<Value>, Option<SourceTags>) {
        let template = self.template;
        if template.upstream.is_empty() {
            let base = template.base.as_ref().map(crate::yaml::Node::to_value);
            let tags = SourceTags::default().with_published(template);
            return (base, (!tags.tags.is_empty()).then_some(tags));
        }
        self.tags.own_depth = template
            .upstream
            .iter()
            .map(|u| u.depth + 1)
            .max()
            .unwrap_or(0);
        (
            merged_base(template),
            Some(self.tags.with_published(template)),
        )
    }
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
    fn a_template_without_sources_is_its_only_unit() {
        let fx = crate::compose::fixture::Fixture::empty();
        let mut sources = super::Sources::new(&fx.template, None);
        let unit = sources
            .next_unit()
            .expect("no schema to compile")
            .expect("the composing template");
        assert_eq!(unit.id, crate::template::TemplateId::Composing);
        assert!(!unit.is_source());
        assert!(unit.visible.is_none());
        assert!(sources.next_unit().expect("nothing to compile").is_none());
        let (base, tags) = sources.finish();
        assert!(base.is_none() && tags.is_none());
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
