//! Stage 7, overlay (S12): the context's own blueprint (`contexts/<ctx>/blueprint.yaml`)
//! laid over the merged components, as the Windsor CLI applies its "user blueprint"
//! last, then the files of its `patches/<name>/` directories (S13,
//! [`context_patches`]). Its terraform entries merge into the component of the same identity (or add
//! one), with `inputs` evaluated against the composed scope and `file()` paths taken
//! from the file's own directory; its kustomize entries merge as written. Lists follow
//! the declared `listStrategies`, else Windsor's rule for the field.

pub mod context_patches;

use crate::compose::config;
use crate::compose::merge::{self, Lists};
use crate::compose::model::blueprint::source_name;
use crate::compose::model::component::{Component, Effect, ListChoice, Merged, Step};
use crate::compose::model::fields::FieldMap;
use crate::compose::model::origin::{Contributor, Origin, OriginId, Origins};
use crate::compose::model::tracked::{Tracked, TrackedMap};
use crate::compose::shared::evaluate::expr_diagnostic;
use crate::compose::shared::expressions::Expressions;
use crate::compose::shared::host::TemplateHost;
use crate::compose::shared::list_strategy::{combine, ListStrategies};
use crate::expr::windsor::format::go_format;
use crate::expr::Engine;
use crate::files::{Diagnostic, FileMap, FileTree};
use crate::template::fields::{field_for, fields, is_directive, Combine, Eval};
use crate::template::{ComponentKind, Strategy};
use crate::value::{Map, Value};
use crate::yaml::{Node, NodeKind};
use context_patches::ContextPatches;
use std::sync::Arc;

/// The context's blueprint, as the project layer read it.
pub struct Overlay {
    pub node: Node,
    /// Where `file()` and friends in its inputs read: the project directory.
    pub tree: FileTree,
    /// The file's path in `tree` and in messages (`contexts/<ctx>/blueprint.yaml`).
    pub path: String,
}

/// Top-level keys of a context blueprint that bpc reads; `kind`, `apiVersion` and
/// `metadata` are accepted and, as in Windsor, replaced by the context's own.
const KEYS: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "repository",
    "sources",
    "terraform",
    "kustomize",
    "listStrategies",
];

/// What evaluating the overlay's terraform inputs needs.
pub struct Evaluation<'a> {
    pub engine: &'a Engine,
    /// The composed scope: context values with the facets' config over them.
    pub scope: &'a Map,
    /// Files relative to the overlay, `env()`, Terraform outputs, budgets.
    pub host: TemplateHost<'a>,
    pub files: &'a FileMap,
}

/// The merged component lists the overlay changes.
pub struct Targets<'a> {
    pub terraform: &'a mut Merged,
    pub kustomize: &'a mut Merged,
    /// Flux systems: an overlay entry naming one of them (or a tier) is an error.
    pub flux: &'a Merged,
}

/// What the context adds to a composition of its own.
pub struct Own<'a> {
    /// The context's own blueprint, laid over the composed components (S12).
    pub overlay: Option<&'a Overlay>,
    /// The context's `patches/<name>/` files, added after the overlay (S13).
    pub patches: Option<&'a ContextPatches>,
    pub with: Expressions<'a>,
    /// The file map expressions are read from.
    pub files: &'a FileMap,
}

/// Lays the context's own blueprint, then its patches, over the merged `lists`; its
/// expressions see the `context` values with every part's config over them. Returns
/// the warnings.
pub fn apply_context(
    own: &Own<'_>,
    lists: &mut Lists,
    context: &Map,
    configs: &[Result<Map, Diagnostic>],
    origins: &mut Origins,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut warnings = Vec::new();
    if let Some(overlay) = own.overlay {
        let mut values = Value::map(context.clone());
        crate::value::edit::deep_merge(&mut values, &Value::map(config::merged(configs)?));
        let values = values.as_map().cloned().unwrap_or_default();
        let eval = Evaluation {
            engine: own.with.engine,
            scope: &values,
            host: TemplateHost {
                tree: &overlay.tree,
                file: &overlay.path,
                environment: own.with.environment,
                terraform: own.with.terraform,
                jsonnet: own.with.limits.jsonnet,
                work: own.with.work,
            },
            files: own.files,
        };
        let targets = Targets {
            terraform: &mut lists.terraform,
            kustomize: &mut lists.kustomize,
            flux: &lists.flux,
        };
        warnings.extend(apply(overlay, &eval, targets, origins)?);
    }
    if let Some(patches) = own.patches {
        warnings.extend(context_patches::apply(
            patches,
            &mut lists.kustomize,
            &mut lists.flux,
            origins,
        ));
    }
    Ok(warnings)
}

/// Applies the overlay's components; returns its warnings (unknown keys, list
/// strategies that match no list).
pub fn apply(
    overlay: &Overlay,
    eval: &Evaluation<'_>,
    targets: Targets<'_>,
    origins: &mut Origins,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    if !matches!(overlay.node.kind, NodeKind::Map(_) | NodeKind::Null) {
        return Err(vec![Diagnostic::error(format!(
            "{} must be a map (a blueprint)",
            overlay.path
        ))
        .with_primary(overlay.node.span, "expected a map")]);
    }
    let mut warnings = unapplied_keys(overlay);
    let rules = match overlay.node.get("listStrategies") {
        Some(node) => ListStrategies::parse(node)?,
        None => ListStrategies::default(),
    };
    let mut reader = Reader {
        overlay,
        eval,
        origins,
        warnings: &mut warnings,
    };
    let mut entries = Vec::new();
    for kind in [ComponentKind::Terraform, ComponentKind::Kustomize] {
        let Some(list) = overlay.node.get(kind.list_key()) else {
            continue;
        };
        let items = match &list.kind {
            NodeKind::Seq(items) => &items[..],
            NodeKind::Null => &[],
            _ => {
                errors.push(
                    Diagnostic::error(format!("`{}` must be a list", kind.list_key()))
                        .with_primary(list.span, "expected a list of entries")
                        .with_context(format!("in {}", overlay.path)),
                );
                continue;
            }
        };
        for item in items {
            match reader.entry(kind, item) {
                Ok(entry) => entries.push(entry),
                Err(d) => errors.push(d),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for entry in entries {
        let merged = match entry.kind {
            ComponentKind::Terraform => &mut *targets.terraform,
            _ => {
                if !targets.kustomize.components.contains_key(entry.id.as_str()) {
                    if let Some(system) = targets
                        .flux
                        .components
                        .keys()
                        .find(|s| crate::compose::model::tier_names::belongs_to(&entry.id, s))
                    {
                        errors.push(
                            Diagnostic::error(format!(
                                "kustomization `{}` belongs to the flux system `{system}`",
                                entry.id
                            ))
                            .with_primary(entry.span, "a flux system's tier")
                            .with_help("a context blueprint merges into plain kustomizations only; change the system in a facet"),
                        );
                        continue;
                    }
                }
                &mut *targets.kustomize
            }
        };
        lay_over(merged, entry, &rules);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    warnings.extend(unused_rules(
        &rules,
        &[&*targets.terraform, &*targets.kustomize],
    ));
    Ok(warnings)
}

/// A warning for each top-level key of the overlay that a context blueprint does not
/// apply.
fn unapplied_keys(overlay: &Overlay) -> Vec<Diagnostic> {
    let NodeKind::Map(entries) = &overlay.node.kind else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for (key, _) in entries {
        if KEYS.contains(&&*key.name) {
            continue;
        }
        let hint = crate::template::keys::suggest(&key.name, KEYS)
            .map(|h| format!("did you mean `{h}`? "))
            .unwrap_or_default();
        warnings.push(
            Diagnostic::warning(format!(
                "`{}` in {} is not applied: a context blueprint sets {}",
                key.name,
                overlay.path,
                KEYS[3..].join(", ")
            ))
            .with_primary(key.span, "not applied")
            .with_help(format!("{hint}--strict makes this an error")),
        );
    }
    warnings
}

/// One component entry of the overlay, read.
struct Entry {
    kind: ComponentKind,
    id: String,
    fields: FieldMap,
    origin: OriginId,
    span: crate::files::Span,
}

struct Reader<'r, 'a> {
    overlay: &'r Overlay,
    eval: &'r Evaluation<'a>,
    origins: &'r mut Origins,
    warnings: &'r mut Vec<Diagnostic>,
}

impl Reader<'_, '_> {
    fn origin(&mut self, node: &Node, expression: Option<Arc<str>>, deferred: bool) -> OriginId {
        self.origins.add(Origin {
            contributor: Contributor::Overlay,
            span: node.span,
            ordinal: i64::MAX,
            strategy: Strategy::Merge,
            expression,
            deferred,
        })
    }

    fn entry(&mut self, kind: ComponentKind, node: &Node) -> Result<Entry, Diagnostic> {
        let NodeKind::Map(pairs) = &node.kind else {
            return Err(
                Diagnostic::error(format!("a {} entry must be a map", kind.noun()))
                    .with_primary(node.span, "expected a map")
                    .with_context(format!("in {}", self.overlay.path)),
            );
        };
        let Some(id) = crate::template::identity::node_merge_key(kind, node) else {
            let needs = match kind {
                ComponentKind::Terraform => "needs a `name` or a `path`",
                _ => "needs a `name`",
            };
            return Err(Diagnostic::error(format!(
                "a {} in {} has no identity",
                kind.noun(),
                self.overlay.path
            ))
            .with_primary(node.span, needs));
        };
        let mut out = FieldMap::default();
        for (key, value) in pairs {
            // Windsor's context blueprint has no strategies, conditions or ordinals.
            if is_directive(&key.name) {
                self.warnings.push(
                    Diagnostic::warning(format!(
                        "`{}` is ignored in a context blueprint: its entries always merge",
                        key.name
                    ))
                    .with_primary(key.span, "facet-only key")
                    .with_help("use a facet to replace, remove or condition a component; --strict makes this an error"),
                );
                continue;
            }
            let Some(field) = field_for(kind, &key.name) else {
                let names: Vec<&str> = fields(kind).iter().map(|f| f.name).collect();
                let hint = crate::template::keys::suggest(&key.name, &names)
                    .map(|h| format!("did you mean `{h}`? "))
                    .unwrap_or_default();
                self.warnings.push(
                    Diagnostic::warning(format!(
                        "unknown {} field `{}` in {}",
                        kind.noun(),
                        key.name,
                        self.overlay.path
                    ))
                    .with_primary(key.span, "not applied")
                    .with_help(format!("{hint}--strict makes this an error")),
                );
                continue;
            };
            if value.is_null() {
                continue;
            }
            // Windsor evaluates only the terraform inputs of a context blueprint; its
            // other fields (kustomizations included) are taken as written.
            let tracked = if kind == ComponentKind::Terraform && field.name == "inputs" {
                let what = format!(
                    "in `inputs` of {} `{id}` of {}",
                    kind.noun(),
                    self.overlay.path
                );
                self.evaluated(value, &what)?
            } else {
                self.literal(value, field.eval)
            };
            match out.get_mut(field.name) {
                Some(existing) => existing.merge_from(&tracked),
                None => {
                    out.insert(field.name, tracked);
                }
            }
        }
        Ok(Entry {
            kind,
            id: id.to_string(),
            fields: out,
            origin: self.origin(node, None, false),
            span: node.span,
        })
    }

    /// A value as written; name lists and substitutions become strings, as Windsor's
    /// typed blueprint reads them.
    fn literal(&mut self, node: &Node, eval: Eval) -> Tracked {
        match (&node.kind, eval) {
            (NodeKind::Seq(items), Eval::Names) => {
                let items = items
                    .iter()
                    .filter(|i| !i.is_null())
                    .map(|i| {
                        let o = self.origin(i, None, false);
                        Tracked::Leaf(Value::str(text_of(&i.to_value())), o)
                    })
                    .collect();
                Tracked::List(items, self.origin(node, None, false))
            }
            (NodeKind::Map(pairs), Eval::Strings) => {
                let entries = pairs
                    .iter()
                    .map(|(k, v)| {
                        let o = self.origin(v, None, false);
                        let text = crate::compose::model::fields::substitution_text(&v.to_value());
                        (Arc::clone(&k.name), Tracked::Leaf(Value::str(text), o))
                    })
                    .collect();
                Tracked::Map(Arc::new(entries), self.origin(node, None, false))
            }
            (NodeKind::Map(pairs), _) => {
                let mut entries = TrackedMap::with_capacity(pairs.len());
                for (k, v) in pairs {
                    entries.insert(Arc::clone(&k.name), self.literal(v, Eval::Literal));
                }
                Tracked::Map(Arc::new(entries), self.origin(node, None, false))
            }
            (NodeKind::Seq(items), _) => {
                let items = items
                    .iter()
                    .map(|i| self.literal(i, Eval::Literal))
                    .collect();
                Tracked::List(items, self.origin(node, None, false))
            }
            _ => Tracked::Leaf(node.to_value(), self.origin(node, None, false)),
        }
    }

    /// A value with every `${…}` string evaluated against the composed scope.
    fn evaluated(&mut self, node: &Node, what: &str) -> Result<Tracked, Diagnostic> {
        match &node.kind {
            NodeKind::Map(pairs) => {
                let mut entries = TrackedMap::with_capacity(pairs.len());
                for (k, v) in pairs {
                    entries.insert(Arc::clone(&k.name), self.evaluated(v, what)?);
                }
                Ok(Tracked::Map(
                    Arc::new(entries),
                    self.origin(node, None, false),
                ))
            }
            NodeKind::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.evaluated(item, what)?);
                }
                Ok(Tracked::List(out, self.origin(node, None, false)))
            }
            NodeKind::Str(text) if crate::expr::template::contains_expression(text) => {
                let value = self
                    .eval
                    .engine
                    .render_template(text, self.eval.scope, &self.eval.host)
                    .map_err(|e| expr_diagnostic(&e, node, self.eval.files, || what.to_string()))?;
                let deferred = matches!(&value, Value::Str(out) if crate::expr::template::contains_expression(out));
                let o = self.origin(node, Some(Arc::clone(text)), deferred);
                Ok(Tracked::from_value(&value, o))
            }
            _ => Ok(Tracked::Leaf(
                node.to_value(),
                self.origin(node, None, false),
            )),
        }
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => go_format(other),
    }
}

/// Merges one entry into its component, or adds the component.
fn lay_over(merged: &mut Merged, entry: Entry, rules: &ListStrategies) {
    let Entry {
        kind,
        id,
        fields: overlay,
        origin,
        ..
    } = entry;
    let said = Arc::new(overlay.clone());
    let Some(existing) = merged.components.get_mut(id.as_str()) else {
        let created = Step {
            origin,
            strategy: Strategy::Merge,
            effect: Effect::Created,
            said: Some(Arc::clone(&said)),
            lists: Vec::new(),
        };
        let mut fields = overlay;
        crate::compose::model::fields::sort_in_order(kind, &mut fields);
        let id: Arc<str> = Arc::from(id);
        merged.components.insert(
            Arc::clone(&id),
            Component {
                kind,
                id,
                fields: Arc::new(fields),
                history: Arc::new(vec![created]),
            },
        );
        return;
    };
    let mut choices = Vec::new();
    let mut rest = FieldMap::default();
    {
        let target = Arc::make_mut(&mut existing.fields);
        for (name, value) in overlay {
            let path = format!("{}.{id}.{name}", kind.list_key());
            let combine_rule = field_for(kind, name).map_or(Combine::Replace, |f| f.combine);
            match target.get_mut(name) {
                Some(base @ Tracked::Map(..)) if combine_rule == Combine::DeepMerge => {
                    deep_merge(base, value, &path, rules, &mut choices);
                }
                Some(Tracked::List(items, _)) if matches!(value, Tracked::List(..)) => {
                    match rules.lookup(&path) {
                        Some(rule) => {
                            combine_lists(items, value, &path, rule, rules, &mut choices);
                        }
                        None => {
                            choices.push(ListChoice {
                                path,
                                field: String::new(),
                                strategy: windsor_default(kind, name),
                                rule: None,
                            });
                            rest.insert(name, value);
                        }
                    }
                }
                _ => {
                    rest.insert(name, value);
                }
            }
        }
    }
    let prefix = format!("{}.{id}.", kind.list_key());
    for choice in &mut choices {
        choice.field = choice
            .path
            .strip_prefix(&prefix)
            .unwrap_or(&choice.path)
            .to_string();
    }
    // Fields no declared strategy governs merge exactly as a facet's `merge` would.
    merge::merge_fields(existing, &rest);
    Arc::make_mut(&mut existing.history).push(Step {
        origin,
        strategy: Strategy::Merge,
        effect: Effect::Merged,
        said: Some(said),
        lists: choices,
    });
}

/// Windsor's own rule for a top-level list field of a component.
fn windsor_default(kind: ComponentKind, name: &str) -> String {
    let combine = field_for(kind, name).map_or(Combine::Replace, |f| f.combine);
    let rule = match combine {
        Combine::AppendUnique if name == "components" => "union, then sorted",
        Combine::AppendUnique => "union",
        Combine::Append => "append",
        _ => "replace",
    };
    format!("{rule} (default for `{name}`)")
}

fn combine_lists(
    items: &mut Vec<Tracked>,
    value: Tracked,
    path: &str,
    rule: &crate::compose::shared::list_strategy::Rule,
    rules: &ListStrategies,
    choices: &mut Vec<ListChoice>,
) {
    let Tracked::List(over, _) = value else {
        return;
    };
    choices.push(ListChoice {
        path: path.to_string(),
        field: String::new(),
        strategy: rule.strategy.describe(),
        rule: Some((rule.key.clone(), rule.span)),
    });
    let mut nested = Vec::new();
    combine(&rule.strategy, items, over, &mut |target, item| {
        deep_merge(target, item, path, rules, &mut nested)
    });
    choices.extend(nested);
}

/// The inputs merge of S9 (maps key by key, an empty value never erases a non-empty
/// one), with each list combined by its declared strategy; an undeclared list is
/// replaced, as Windsor does.
fn deep_merge(
    base: &mut Tracked,
    overlay: Tracked,
    path: &str,
    rules: &ListStrategies,
    choices: &mut Vec<ListChoice>,
) {
    match (&mut *base, overlay) {
        (Tracked::Map(entries, _), Tracked::Map(over, _)) => {
            let entries = Arc::make_mut(entries);
            for (k, v) in Arc::unwrap_or_clone(over) {
                match entries.get_mut(&k) {
                    Some(existing) => {
                        deep_merge(existing, v, &format!("{path}.{k}"), rules, choices)
                    }
                    None => {
                        entries.insert(k, v);
                    }
                }
            }
        }
        (Tracked::List(items, _), over @ Tracked::List(..)) => match rules.lookup(path) {
            Some(rule) => combine_lists(items, over, path, rule, rules, choices),
            None => {
                choices.push(ListChoice {
                    path: path.to_string(),
                    field: String::new(),
                    strategy: "replace (default for lists in a map)".to_string(),
                    rule: None,
                });
                base.merge_from(&over);
            }
        },
        (_, over) => base.merge_from(&over),
    }
}

/// Warnings for declared strategies that match no list of the blueprint, each with
/// the closest path of the same shape.
fn unused_rules(rules: &ListStrategies, lists: &[&Merged]) -> Vec<Diagnostic> {
    let mut paths = Vec::new();
    for merged in lists {
        for c in merged.components.values() {
            for (name, value) in c.fields.iter() {
                let path = format!("{}.{}.{name}", c.kind.list_key(), c.id);
                list_paths(value, &path, &mut paths);
            }
        }
    }
    let mut out = Vec::new();
    for rule in &rules.rules {
        if paths.iter().any(|p| rule.matches(p).is_some()) {
            continue;
        }
        let mut candidates: Vec<String> = paths
            .iter()
            .filter_map(|p| same_shape(p, &rule.key))
            .collect();
        candidates.sort();
        candidates.dedup();
        let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
        let hint = crate::template::keys::suggest(&rule.key, &refs)
            .map(|h| format!("did you mean `{h}`? "))
            .unwrap_or_default();
        out.push(
            Diagnostic::warning(format!(
                "list strategy `{}` matches no list in the blueprint",
                rule.key
            ))
            .with_primary(rule.span, "matches nothing")
            .with_help(format!(
                "{hint}a key is a whole dotted path (`terraform.<id>.inputs.<key>`), a suffix of one, or the list's own key"
            )),
        );
    }
    out
}

/// The dotted path of every list under `value`; items of a list of maps add their
/// keys to the list's path (as `merge-by-key` looks their lists up).
fn list_paths(value: &Tracked, path: &str, out: &mut Vec<String>) {
    match value {
        Tracked::List(items, _) => {
            out.push(path.to_string());
            for item in items {
                if let Tracked::Map(entries, _) = item {
                    for (k, v) in entries.iter() {
                        list_paths(v, &format!("{path}.{k}"), out);
                    }
                }
            }
        }
        Tracked::Map(entries, _) => {
            for (k, v) in entries.iter() {
                list_paths(v, &format!("{path}.{k}"), out);
            }
        }
        Tracked::Leaf(..) => {}
    }
}

/// The tail of `path` with as many segments as `key` (a candidate for a typo), or the
/// whole path for a key written in full.
fn same_shape(path: &str, key: &str) -> Option<String> {
    let want = key.split('.').count();
    let segments: Vec<&str> = path.split('.').collect();
    if want > segments.len() {
        return None;
    }
    let tail = segments[segments.len() - want..].join(".");
    // A full path starts at the list key; so does a typo of one.
    let full_like = key.starts_with("terraform.") || key.starts_with("kustomize.");
    Some(if full_like { path.to_string() } else { tail })
}

/// The blueprint's `repository` after the overlay: the overlay's when it names a
/// URL, else none (Windsor clears it; the dev-mode default may then apply).
pub fn base_with_repository(base: Option<&Value>, overlay: &Overlay) -> Value {
    let mut map = base.and_then(Value::as_map).cloned().unwrap_or_default();
    let repository = overlay.node.get("repository");
    let has_url = repository
        .and_then(|r| r.get("url"))
        .and_then(Node::as_str)
        .is_some_and(|u| !u.is_empty());
    match repository {
        Some(r) if has_url => {
            map.insert("repository".into(), r.to_value());
        }
        _ => {
            map.shift_remove("repository");
        }
    }
    Value::map(map)
}

/// Merges the overlay's `sources` into the blueprint's by name: a named entry replaces
/// the one of that name in place, a new name is appended, unnamed entries are dropped
/// (as Windsor does).
pub fn merge_sources(blueprint: &mut Value, overlay: &Overlay) {
    let Some(NodeKind::Seq(items)) = overlay.node.get("sources").map(|n| &n.kind) else {
        return;
    };
    let Value::Map(map) = blueprint else {
        return;
    };
    let map = Arc::make_mut(map);
    let mut list: Vec<Value> = map
        .get("sources")
        .and_then(Value::as_list)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    for item in items {
        let value = item.to_value();
        let Some(name) = source_name(&value)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
        else {
            continue;
        };
        match list.iter_mut().find(|v| source_name(v) == Some(&name)) {
            Some(existing) => *existing = value,
            None => list.push(value),
        }
    }
    map.insert("sources".into(), Value::list(list));
}

/// The context's own blueprint over the composed components.
#[cfg(test)]
mod tests {
    use super::{apply_context, Overlay, Own};
    use crate::compose::fixture::{facet, json, messages, Fixture};
    use crate::compose::model::origin::Origins;
    use crate::files::FileTree;

    /// The template `files` composed to its merged lists, then `overlay` (the context's
    /// `blueprint.yaml`) laid over them: the lists, or the errors.
    fn overlaid(
        files: &[(&str, &str)],
        overlay: &str,
    ) -> Result<(crate::compose::merge::Lists, Vec<String>), String> {
        let fx = Fixture::new(files).values("values.yaml", "domain: example.com\n");
        let mut origins = Origins::default();
        let (collected, mut lists) = fx.merged(&mut origins);
        let path = "contexts/test/blueprint.yaml";
        let file = fx.template.files.add(path, overlay);
        let overlay = Overlay {
            node: crate::yaml::parse(overlay, file).expect("the overlay parses"),
            tree: FileTree::from_files(Vec::new(), "project").expect("an empty tree"),
            path: path.into(),
        };
        let own = Own {
            overlay: Some(&overlay),
            patches: None,
            with: fx.with(),
            files: &fx.template.files,
        };
        let warnings = apply_context(
            &own,
            &mut lists,
            &collected.context,
            &collected.configs,
            &mut origins,
        )
        .map_err(|ds| messages(&ds))?;
        Ok((lists, warnings.into_iter().map(|d| d.message).collect()))
    }

    #[test]
    fn terraform_entries_merge_into_the_component_and_see_the_composed_scope() {
        let (lists, warnings) = overlaid(
            &[(
                "facets/a.yaml",
                &facet(
                    "a",
                    "terraform:\n  - name: dns\n    path: dns\n    inputs: {ttl: 60}\n",
                ),
            )],
            "terraform:\n  - name: dns\n    inputs:\n      zone: ${domain}\n",
        )
        .expect("the overlay applies");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            json(&lists.terraform, "dns"),
            r#"{"name":"dns","path":"dns","inputs":{"ttl":60,"zone":"example.com"}}"#
        );
    }

    #[test]
    fn a_key_a_context_blueprint_does_not_apply_is_a_warning() {
        let (_, warnings) = overlaid(&[("facets/none.yaml", &facet("none", ""))], "flux: []\n")
            .expect("the overlay applies");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("`flux` in contexts/test/blueprint.yaml is not applied"),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_overlay_that_is_not_a_map_is_an_error() {
        let error = overlaid(&[("facets/none.yaml", &facet("none", ""))], "- a\n")
            .err()
            .expect("a list is refused");
        assert_eq!(
            error,
            "contexts/test/blueprint.yaml must be a map (a blueprint)"
        );
    }
}
