//! Stage 2, scope: the context values expressions see (S4), lowest to highest:
//! schema defaults, windsor.yaml `contexts.<ctx>`, `contexts/<ctx>/values.yaml`,
//! `--values` files, `--set` pairs. Maps deep-merge; anything else replaces. The merged
//! values are validated against `schema.yaml`, every violation reported at once.

use super::schema::Schema;
use crate::expr::{Map, Value};
use crate::files::{Diagnostic, FileMap, Span};
use crate::yaml::Node;
use std::sync::Arc;

/// One layer of context values, and where its YAML is when it has some (so a schema
/// violation can point at the line that set the value).
#[derive(Clone, Debug)]
pub struct Layer {
    /// Shown in messages and `explain`: `contexts/local/values.yaml`, `--set`, …
    pub name: String,
    pub value: Value,
    pub yaml: Option<LayerYaml>,
}

/// Where a layer's values are written. Only the place is kept, not the parsed tree:
/// a values file can be large, and its spans are needed only when a message points
/// into it, so the text (kept in the source map anyway) is parsed again then.
#[derive(Clone, Debug)]
pub struct LayerYaml {
    /// The span of the layer's root mapping (its file is the span's file).
    pub span: Span,
    /// Keys from the file's root down to the layer (`contexts`, `<ctx>` for a section
    /// of windsor.yaml; empty for a whole file).
    pub within: Vec<String>,
}

impl Layer {
    /// The layer a whole YAML file makes. The tree is turned into values as it is
    /// taken apart, so a large file is not held twice.
    pub fn of_file(name: String, node: Node) -> Layer {
        let span = node.span;
        Layer {
            name,
            value: node.into_value(),
            yaml: Some(LayerYaml {
                span,
                within: Vec::new(),
            }),
        }
    }

    /// The span of the value this layer writes at `path`, if its YAML writes that
    /// whole path.
    pub fn locate(&self, path: &[String], sources: &FileMap) -> Option<Span> {
        let yaml = self.yaml.as_ref()?;
        let text = sources.text(yaml.span.file)?;
        let root = crate::yaml::parse(&text, yaml.span.file).ok()?;
        let mut cur: &Node = &root;
        for seg in yaml.within.iter().chain(path) {
            cur = cur.get(seg)?;
        }
        Some(cur.span)
    }
}

/// Built-in names every expression sees (S4).
#[derive(Clone, Debug, Default)]
pub struct Builtins {
    pub context: String,
    pub context_path: String,
    pub project_root: String,
}

/// Deep merge of `overlay` into `base`: maps merge key by key, anything else replaces.
pub fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Map(b), Value::Map(o)) => {
            let b = Arc::make_mut(b);
            for (k, v) in o.iter() {
                match b.get_mut(k) {
                    Some(existing) => deep_merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// Builds the context scope: defaults (when asked), the layers in order, validation,
/// then the built-ins.
pub fn context_scope(
    schema: Option<&Schema>,
    apply_defaults: bool,
    config_defaults: bool,
    layers: &[Layer],
    builtins: &Builtins,
    sources: &FileMap,
) -> Result<Arc<Map>, Vec<Diagnostic>> {
    let windsor = config_defaults.then_some(builtins.context.as_str());
    let mut map = effective_values(schema, apply_defaults, layers, sources, windsor)?;
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

/// The context's values without the built-ins: schema defaults (when asked) under the
/// layers in order, validated, plus the typed fields Windsor materialises
/// (`bpc show values`). `windsor` names the context when the Windsor CLI's config
/// defaults apply ([`super::config_defaults`]; not under `bpc test`).
pub fn effective_values(
    schema: Option<&Schema>,
    apply_defaults: bool,
    layers: &[Layer],
    sources: &FileMap,
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
        super::config_defaults::before_schema(context, &mut merged);
    }
    if let Some(schema) = schema {
        let apply_defaults =
            apply_defaults && windsor.is_none_or(super::config_defaults::schema_defaults_apply);
        if apply_defaults {
            if windsor.is_some() {
                super::config_defaults::builtin_schema_defaults(&mut merged);
            }
            merged = schema.apply_defaults(&merged);
        }
        // A project's context (`windsor` set) only warns, as the Windsor CLI's config
        // loader does ("validation failed (config still loaded)"); the warnings come
        // from [`schema_warnings`]. A test case fails, as in `windsor test`.
        if windsor.is_none() {
            let violations = schema.validate(&merged, layers, sources);
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
        super::config_defaults::after_schema(&mut map);
    }
    super::typed_values::materialise(&mut map);
    Ok(map)
}

/// The schema violations of a project context's values, as warnings (docs/semantics.md
/// S4, "Schema violations"): the values as [`effective_values`] merges them, checked
/// against `schema`. Empty for a test case (`windsor` unset), where a violation is an
/// error of [`effective_values`].
pub fn schema_warnings(
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
    super::config_defaults::before_schema(context, &mut merged);
    if apply_defaults && super::config_defaults::schema_defaults_apply(context) {
        super::config_defaults::builtin_schema_defaults(&mut merged);
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

/// Sets `a.b.c = value` in a map value, creating maps on the way (`--set`, test
/// values with dotted keys).
pub fn set_path(target: &mut Value, path: &[&str], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return;
    };
    if !matches!(target, Value::Map(_)) {
        *target = Value::map(Map::default());
    }
    if let Value::Map(m) = target {
        let m = Arc::make_mut(m);
        let slot = m.entry(Arc::from(*first)).or_insert(Value::Nil);
        if rest.is_empty() {
            *slot = value;
        } else {
            set_path(slot, rest, value);
        }
    }
}
