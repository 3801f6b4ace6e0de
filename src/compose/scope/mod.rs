//! Stage 2, scope: the context values expressions see (S4), lowest to highest:
//! schema defaults, windsor.yaml `contexts.<ctx>`, `contexts/<ctx>/values.yaml`,
//! `--values` files, `--set` pairs. Maps deep-merge; anything else replaces. The merged
//! values are validated against `schema.yaml`, every violation reported at once.

pub(crate) mod config_defaults;
pub(crate) mod typed_values;

use crate::compose::model::inputs::{Builtins, Layer};

use crate::compose::shared::schema::Schema;
use crate::expr::{Map, Value};
use crate::files::{Diagnostic, FileMap};
use crate::value::edit::deep_merge;
use std::sync::Arc;

/// The value inputs every template of a composition shares.
pub struct Values<'a> {
    pub layers: &'a [Layer],
    pub builtins: &'a Builtins,
    /// Whether the schema's defaults apply.
    pub schema_defaults: bool,
    /// Whether the Windsor CLI's config defaults apply (S4).
    pub config_defaults: bool,
    /// Where the layers' files are, for messages.
    pub files: &'a FileMap,
}

impl Values<'_> {
    /// The context values one template's expressions see: [`Values::context_scope`]
    /// under `schema`, with `visible` (the config of the sources the template builds
    /// on) laid over them.
    pub fn scope(
        &self,
        schema: Option<&Schema>,
        visible: Option<&Value>,
    ) -> Result<Arc<Map>, Vec<Diagnostic>> {
        let context = self.context_scope(schema)?;
        let Some(visible) = visible else {
            return Ok(context);
        };
        let mut merged = Value::map((*context).clone());
        deep_merge(&mut merged, visible);
        Ok(match merged {
            Value::Map(m) => Arc::new(Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone())),
            _ => context,
        })
    }

    /// The context names the Windsor CLI's config defaults for, when they apply.
    fn windsor(&self) -> Option<&str> {
        self.config_defaults
            .then_some(self.builtins.context.as_str())
    }

    /// The context's values without the built-ins (`bpc show values`): see
    /// [`effective_values`].
    pub fn effective(&self, schema: Option<&Schema>) -> Result<Map, Vec<Diagnostic>> {
        effective_values(
            schema,
            self.schema_defaults,
            self.layers,
            self.files,
            self.windsor(),
        )
    }

    /// The schema violations of a project context's values, as warnings: see
    /// [`schema_warnings`].
    pub fn schema_warnings(&self, schema: Option<&Schema>) -> Vec<Diagnostic> {
        schema_warnings(
            schema,
            self.schema_defaults,
            self.layers,
            self.files,
            self.windsor(),
        )
    }

    /// Builds the context scope: defaults (when asked), the layers in order,
    /// validation, then the built-ins.
    fn context_scope(&self, schema: Option<&Schema>) -> Result<Arc<Map>, Vec<Diagnostic>> {
        let builtins = self.builtins;
        let mut map = self.effective(schema)?;
        map.insert("context".into(), Value::str(builtins.context.as_str()));
        map.insert(
            "context_path".into(),
            Value::str(builtins.context_path.as_str()),
        );
        map.insert(
            "project_root".into(),
            Value::str(builtins.project_root.as_str()),
        );
        // Windsor's `projectName`: the project directory's own name.
        let project_name = builtins
            .project_root
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        map.insert("projectName".into(), Value::str(project_name));
        Ok(Arc::new(map))
    }
}

/// The context's values without the built-ins: schema defaults (when asked) under the
/// layers in order, validated, plus the typed fields Windsor materialises
/// (`bpc show values`). `windsor` names the context when the Windsor CLI's config
/// defaults apply ([`crate::compose::scope::config_defaults`]; not under `bpc test`).
fn effective_values(
    schema: Option<&Schema>,
    apply_defaults: bool,
    layers: &[Layer],
    files: &FileMap,
    windsor: Option<&str>,
) -> Result<Map, Vec<Diagnostic>> {
    let mut merged = Value::map(Map::default());
    for layer in layers {
        if layer.value.is_nil() {
            continue;
        }
        if !matches!(layer.value, Value::Map(_)) {
            let mut d = Diagnostic::error(format!("{} must be a map of values", layer.name));
            if let Some(yaml) = &layer.yaml {
                d = d.with_primary(yaml.span, "expected a map here");
            }
            return Err(vec![d]);
        }
        deep_merge(&mut merged, &layer.value);
    }
    if let Some(context) = windsor {
        crate::compose::scope::config_defaults::before_schema(context, &mut merged);
    }
    if let Some(schema) = schema {
        let apply_defaults = apply_defaults
            && windsor.is_none_or(crate::compose::scope::config_defaults::schema_defaults_apply);
        if apply_defaults {
            if windsor.is_some() {
                crate::compose::scope::config_defaults::builtin_schema_defaults(&mut merged);
            }
            merged = schema.apply_defaults(&merged);
        }
        // A project's context (`windsor` set) only warns, as the Windsor CLI's config
        // loader does ("validation failed (config still loaded)"); the warnings come
        // from [`schema_warnings`]. A test case fails, as in `windsor test`.
        if windsor.is_none() {
            let violations = schema.validate(&merged, layers, files);
            if !violations.is_empty() {
                return Err(violations);
            }
        }
    }
    let mut map = match merged {
        Value::Map(m) => Arc::try_unwrap(m).unwrap_or_else(|m| (*m).clone()),
        _ => Map::default(),
    };
    if windsor.is_some() {
        crate::compose::scope::config_defaults::after_schema(&mut map);
    }
    crate::compose::scope::typed_values::materialise(&mut map);
    Ok(map)
}

/// The schema violations of a project context's values, as warnings (docs/semantics.md
/// S4, "Schema violations"): the values as [`effective_values`] merges them, checked
/// against `schema`. Empty for a test case (`windsor` unset), where a violation is an
/// error of [`effective_values`].
fn schema_warnings(
    schema: Option<&Schema>,
    apply_defaults: bool,
    layers: &[Layer],
    sources: &FileMap,
    windsor: Option<&str>,
) -> Vec<Diagnostic> {
    let (Some(schema), Some(context)) = (schema, windsor) else {
        return Vec::new();
    };
    let mut merged = Value::map(Map::default());
    for layer in layers {
        if matches!(layer.value, Value::Map(_)) {
            deep_merge(&mut merged, &layer.value);
        }
    }
    config_defaults::before_schema(context, &mut merged);
    if apply_defaults && config_defaults::schema_defaults_apply(context) {
        config_defaults::builtin_schema_defaults(&mut merged);
        merged = schema.apply_defaults(&merged);
    }
    schema
        .validate(&merged, layers, sources)
        .into_iter()
        .map(|mut d| {
            d.severity = crate::files::Severity::Warning;
            d.help = Some(
                "composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error"
                    .to_string(),
            );
            d
        })
        .collect()
}

/// The context values a template's expressions see.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::Fixture;
    use crate::expr::Value;

    fn text(v: Option<&Value>) -> String {
        v.map_or("none".into(), crate::value::json::compact)
    }

    #[test]
    fn later_layers_win_and_maps_merge_key_by_key() {
        let fx = Fixture::empty()
            .values("windsor.yaml", "pool: {size: 1, name: a}\nregion: eu\n")
            .values("values.yaml", "pool: {size: 3}\n");
        let context = fx.context();
        assert_eq!(text(context.get("pool")), r#"{"size":3,"name":"a"}"#);
        assert_eq!(text(context.get("region")), r#""eu""#);
    }

    #[test]
    fn every_context_has_its_built_in_names() {
        let context = Fixture::empty().context();
        assert_eq!(text(context.get("context")), r#""test""#);
        assert_eq!(text(context.get("project_root")), r#""/project""#);
        assert_eq!(text(context.get("projectName")), r#""project""#);
    }

    #[test]
    fn the_config_of_sources_a_template_builds_on_lies_over_the_values() {
        let fx = Fixture::empty().values("values.yaml", "a: {x: 1}\n");
        let visible = crate::yaml::parse("a: {y: 2}\n", crate::files::FileId(0))
            .expect("parses")
            .to_value();
        let context =
            (fx.value_inputs().scope(None, Some(&visible))).expect("the values are valid");
        assert_eq!(text(context.get("a")), r#"{"x":1,"y":2}"#);
    }
}
