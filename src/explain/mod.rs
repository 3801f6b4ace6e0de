//! `bpc explain`: where a value of the composed blueprint or of the scope came from —
//! every contribution in order, what it evaluated to, and whether it won, was
//! overridden, removed, or left out by a `when`. Built on the origins compose keeps.

pub(crate) mod path;
mod set_by_bpc;

use crate::compose::face::Composition;
use crate::compose::model::component::{Component, Effect, Step};
use crate::compose::model::origin::{Contributor, Origin};
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use crate::files::FileMap;
use crate::template::{ComponentKind, FacetId, Template, TemplateId};
use crate::value::json::compact;
use std::fmt::Write;

pub struct Explainer<'a> {
    pub template: &'a Template,
    pub composition: &'a Composition,
    pub files: &'a FileMap,
}

fn show(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("{s:?}"),
        Value::Nil => "null".to_string(),
        other => compact(other),
    }
}

fn descend<'t>(t: &'t Tracked, path: &[String]) -> Option<&'t Tracked> {
    let mut cur = t;
    for seg in path {
        cur = match cur {
            Tracked::Map(entries, _) => entries.get(seg.as_str())?,
            Tracked::List(items, _) => items.get(seg.parse::<usize>().ok()?)?,
            Tracked::Leaf(..) => return None,
        };
    }
    Some(cur)
}

impl Explainer<'_> {
    /// Where a contribution was written; a facet's file with the source it belongs
    /// to beside it (the ordinal follows).
    fn location(&self, origin: &Origin) -> String {
        match &origin.contributor {
            Contributor::Derived(_) => "derived by bpc".to_string(),
            Contributor::Context => "context values".to_string(),
            Contributor::Facet(id) => format!(
                "{}, source `{}`",
                self.files.describe(origin.span),
                self.source_name(id.template)
            ),
            _ => self.files.describe(origin.span),
        }
    }

    /// The `sources:` name of a template of the composition: an upstream source's
    /// own, a published blueprint's, or `template` for the project's own template.
    fn source_name(&self, id: TemplateId) -> &str {
        self.template
            .upstream_name(id)
            .or_else(|| self.template.published.as_ref().map(|p| p.name.as_str()))
            .unwrap_or(crate::compose::model::blueprint::TEMPLATE_SOURCE)
    }

    fn who(&self, origin: &Origin) -> String {
        match &origin.contributor {
            Contributor::Base => "blueprint.yaml".to_string(),
            Contributor::Facet(id) => {
                let name = self.template.facet(*id).map_or("?", |f| f.name.as_str());
                format!("facet `{name}`")
            }
            Contributor::Overlay => "context blueprint".to_string(),
            Contributor::ContextPatch => "context patch".to_string(),
            Contributor::Context => "context values".to_string(),
            Contributor::Derived(_) => "bpc".to_string(),
        }
    }

    fn ordinal(origin: &Origin) -> String {
        if matches!(
            origin.contributor,
            Contributor::Overlay | Contributor::ContextPatch
        ) {
            "after all facets".to_string()
        } else if origin.ordinal == i64::MIN {
            "base".to_string()
        } else {
            origin.ordinal.to_string()
        }
    }

    /// Explains `path`; `Err` carries the message for an unknown path, with the
    /// closest existing paths.
    pub fn explain(&self, path: &str) -> Result<String, String> {
        let segments = path::parse(path)?;
        match segments[0].as_str() {
            "terraform" | "kustomize" | "flux" if segments.len() >= 2 => {
                let kind = match segments[0].as_str() {
                    "terraform" => ComponentKind::Terraform,
                    "flux" => ComponentKind::FluxSystem,
                    _ => ComponentKind::Kustomize,
                };
                self.component(kind, &segments[1], &segments[2..], path)
            }
            _ => self.scope_value(&segments, path),
        }
    }

    fn component(
        &self,
        kind: ComponentKind,
        id: &str,
        rest: &[String],
        full: &str,
    ) -> Result<String, String> {
        let merged = match kind {
            ComponentKind::Terraform => &self.composition.terraform,
            // Every Flux Kustomization, a system's tiers included (`cni-install`).
            ComponentKind::Kustomize => &self.composition.kustomizations,
            ComponentKind::FluxSystem => &self.composition.flux,
        };
        let live = merged.components.get(id);
        let deleted: Vec<&Component> = merged.deleted.iter().filter(|c| &*c.id == id).collect();
        let excluded: Vec<_> = self
            .composition
            .exclusions
            .iter()
            .filter(|e| e.kind == kind && &*e.id == id)
            .collect();
        if live.is_none() && deleted.is_empty() && excluded.is_empty() {
            return Err(self.unknown(full));
        }
        let mut out = String::new();
        let field_path: Vec<String> = rest.to_vec();
        current_value(&mut out, live, &field_path, full);
        let histories: Vec<&Component> = live.into_iter().chain(deleted).collect();
        if !histories.is_empty() {
            let _ = writeln!(out, "\ncontributions, in order applied:");
        }
        let mut n = 0;
        for c in &histories {
            let final_value = if field_path.is_empty() {
                None
            } else {
                c.get(&field_path[0])
                    .and_then(|t| descend(t, &field_path[1..]))
            };
            for step in c.history.iter() {
                n += 1;
                self.step(&mut out, n, step, &field_path, final_value, live.is_some());
            }
        }
        if let Some(c) = live {
            let set = self.set_by_bpc(c, &field_path, full);
            if !set.is_empty() {
                let _ = write!(out, "\nset by bpc:\n{set}");
            }
        }
        if !excluded.is_empty() {
            let _ = writeln!(out, "\nleft out:");
            for e in excluded {
                let Some(facet) = self.template.facet(e.facet) else {
                    continue;
                };
                let when = e
                    .when
                    .as_ref()
                    .map(|w| format!(" — when: {}", w.text.trim()))
                    .unwrap_or_default();
                let shown = self
                    .template
                    .part(e.facet.template)
                    .map_or(facet.path.clone(), |t| t.tree.describe(&facet.path));
                let _ = writeln!(
                    out,
                    "  - {} ({shown}, source `{}`, ordinal {}): {}{when}",
                    facet.name,
                    self.source_name(e.facet.template),
                    facet.ordinal,
                    e.reason
                );
            }
        }
        Ok(out)
    }

    /// What bpc's own rules set at or under `field_path` of `component` (shown as
    /// `full`), one line each.
    fn set_by_bpc(&self, component: &Component, field_path: &[String], full: &str) -> String {
        let origins = &self.composition.origins;
        let mut out = String::new();
        match field_path.split_first() {
            None => {
                for (name, value) in component.fields.iter() {
                    set_by_bpc::lines(value, &format!("{full}.{name}"), origins, &mut out);
                }
            }
            Some((first, rest)) => {
                if let Some(value) = component.get(first).and_then(|t| descend(t, rest)) {
                    set_by_bpc::lines(value, full, origins, &mut out);
                }
            }
        }
        out
    }

    fn step(
        &self,
        out: &mut String,
        n: usize,
        step: &Step,
        field_path: &[String],
        final_value: Option<&Tracked>,
        alive: bool,
    ) {
        let origin = self.composition.origins.get(step.origin);
        let _ = writeln!(
            out,
            "  {n}. {} ({}), ordinal {}, {}",
            self.who(&origin),
            self.location(&origin),
            Self::ordinal(&origin),
            step.strategy.as_str()
        );
        // Explained compositions keep what each contribution said.
        let said = match (field_path.split_first(), &step.said) {
            (Some((first, rest)), Some(said)) => {
                said.get(first.as_str()).and_then(|t| descend(t, rest))
            }
            _ => None,
        };
        if let Some(t) = said {
            let o = self.composition.origins.get(t.origin());
            let value = show(&t.to_value());
            match &o.expression {
                Some(expr) if o.deferred => {
                    let _ = writeln!(out, "     {expr}  (deferred: kept as written until apply)");
                }
                Some(expr) => {
                    let _ = writeln!(out, "     {expr}  →  {value}");
                }
                None => {
                    let _ = writeln!(out, "     {value}");
                }
            }
        }
        let verdict = match &step.effect {
            Effect::Created | Effect::Merged | Effect::Replaced if field_path.is_empty() => {
                match step.effect {
                    Effect::Created => "created the component",
                    Effect::Merged => "merged into it",
                    _ => "replaced everything before it",
                }
                .to_string()
            }
            Effect::Created | Effect::Merged | Effect::Replaced => match (said, final_value) {
                (None, _) => "does not set this field".to_string(),
                (Some(t), _) if t.is_empty_value() => {
                    "empty: does not erase an earlier value (S9)".to_string()
                }
                (Some(t), Some(f)) if alive => survival(t, f),
                _ => "overridden".to_string(),
            },
            Effect::Removed(items) if items.is_empty() => {
                "remove: nothing listed was present".to_string()
            }
            Effect::Removed(items) => format!("removed {}", items.join(", ")),
            Effect::Deleted => "removed the whole component".to_string(),
            Effect::Missed => "remove: the component did not exist (no-op)".to_string(),
        };
        let _ = writeln!(out, "     → {verdict}");
        self.list_choices(out, step, field_path);
    }

    /// The lists a context-blueprint step combined at or under the explained path, and
    /// the strategy each got (S12).
    fn list_choices(&self, out: &mut String, step: &Step, field_path: &[String]) {
        let wanted = field_path.join(".");
        for choice in &step.lists {
            let related = wanted.is_empty()
                || choice.field == wanted
                || choice.field.starts_with(&format!("{wanted}."))
                || wanted.starts_with(&format!("{}.", choice.field));
            if !related {
                continue;
            }
            let from = match &choice.rule {
                Some((key, span)) => {
                    format!(" (listStrategies `{key}`, {})", self.files.describe(*span))
                }
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "     list `{}`: {}{from}",
                choice.field, choice.strategy
            );
        }
    }

    fn scope_value(&self, segments: &[String], full: &str) -> Result<String, String> {
        let root = segments[0].as_str();
        let lookup = |map: &crate::expr::Map| -> Option<Value> {
            let mut cur = map.get(root)?.clone();
            for seg in &segments[1..] {
                cur = cur.as_map()?.get(seg.as_str())?.clone();
            }
            Some(cur)
        };
        let config_value = lookup(&self.composition.config);
        let context_value = lookup(&self.composition.context);
        let records: Vec<_> = self
            .composition
            .config_log
            .iter()
            .filter(|r| r.name == root)
            .collect();
        if config_value.is_none() && context_value.is_none() && records.is_empty() {
            return Err(self.unknown(full));
        }
        let mut out = String::new();
        let final_value = config_value.clone().or(context_value.clone());
        let _ = writeln!(
            out,
            "{full} = {}",
            final_value
                .as_ref()
                .map_or("null (unset)".to_string(), show)
        );
        if !records.is_empty() {
            let _ = writeln!(out, "\nconfig block `{root}`, in order applied:");
            for (i, r) in records.iter().enumerate() {
                let facet = &self.template.facets[r.facet];
                let block = facet.config.iter().find(|b| b.position == r.position);
                let at = block
                    .map(|b| self.files.describe(b.name_span))
                    .unwrap_or_default();
                let ordinal = block.and_then(|b| b.ordinal).unwrap_or(facet.ordinal);
                let _ = writeln!(
                    out,
                    "  {}. facet `{}` ({at}, source `{}`), ordinal {ordinal}, {}",
                    i + 1,
                    facet.name,
                    self.source_name(TemplateId::Composing),
                    r.strategy.as_str()
                );
                if let Some(b) = block {
                    if let Some(node) = body_at(&b.body, &segments[1..]) {
                        if let Some(text) = node.as_str() {
                            let _ = writeln!(out, "     {text}");
                            if text.contains(&format!("{{{}", full))
                                || text.contains(&format!(" {full}"))
                                || text.contains(&format!("({full}"))
                            {
                                let _ = writeln!(out, "     (reads its own input: `{full}` inside the block is the context value)");
                            }
                        }
                    }
                    if !r.included {
                        let when = b
                            .when
                            .as_ref()
                            .map(|w| w.text.trim().to_string())
                            .unwrap_or_default();
                        let _ = writeln!(out, "     → excluded: when `{when}` is false");
                    }
                }
            }
        }
        let layers: Vec<_> = self
            .composition
            .layers
            .iter()
            .filter(|l| l.value.as_map().is_some_and(|m| lookup(m).is_some()))
            .collect();
        if !layers.is_empty() || context_value.is_some() {
            let _ = writeln!(
                out,
                "\ncontext value: {}",
                context_value.as_ref().map_or("unset".to_string(), show)
            );
            for l in layers {
                let v = l.value.as_map().and_then(&lookup).unwrap_or_default();
                let _ = writeln!(out, "  - {} sets {}", l.name, show(&v));
            }
            if config_value.is_some() && context_value.is_some() {
                let _ = writeln!(out, "  (facet config wins over context values, S4)");
            }
        }
        Ok(out)
    }

    /// "unknown path" with the closest existing paths.
    fn unknown(&self, full: &str) -> String {
        let mut candidates = Vec::new();
        for (kind, merged) in [
            ("terraform", &self.composition.terraform),
            ("kustomize", &self.composition.kustomizations),
            ("flux", &self.composition.flux),
        ] {
            for (id, c) in &merged.components {
                candidates.push(format!("{kind}.{id}"));
                for (f, v) in c.fields.iter() {
                    candidates.push(format!("{kind}.{id}.{f}"));
                    if let Tracked::Map(entries, _) = v {
                        for k in entries.keys() {
                            candidates.push(format!("{kind}.{id}.{f}.{k}"));
                        }
                    }
                }
            }
        }
        for map in [&self.composition.config, &*self.composition.context] {
            for (k, v) in map.iter() {
                candidates.push(k.to_string());
                if let Value::Map(m) = v {
                    for kk in m.keys() {
                        candidates.push(format!("{k}.{kk}"));
                    }
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        let mut scored: Vec<(usize, &String)> = candidates
            .iter()
            .map(|c| (crate::template::keys::edit_distance(full, c), c))
            .collect();
        scored.sort();
        let best: Vec<&str> = scored.iter().take(3).map(|(_, c)| c.as_str()).collect();
        format!("no value at `{full}`; closest paths: {}", best.join(", "))
    }

    /// `--facet NAME`: whether the facet is active, why, and what it contributed.
    /// A facet's `when`, and the value of each name it reads.
    fn when_reads(&self, out: &mut String, when: &str) {
        let _ = writeln!(out, "  when: {}", when.trim());
        let mut read = Vec::new();
        collect_names(when, &mut read);
        for path in read {
            let segs: Vec<String> = path.split('.').map(str::to_string).collect();
            let v = lookup_all(self.composition, &segs);
            let _ = writeln!(
                out,
                "    {path} = {}",
                v.as_ref().map_or("null (unset)".to_string(), show)
            );
        }
    }

    pub fn facet(&self, name: &str) -> Result<String, String> {
        let Some(index) = self.template.facets.iter().position(|f| f.name == name) else {
            let names: Vec<&str> = self
                .template
                .facets
                .iter()
                .map(|f| f.name.as_str())
                .collect();
            let hint = crate::template::keys::suggest(name, &names)
                .map(|h| format!("; did you mean `{h}`?"))
                .unwrap_or_default();
            return Err(format!("no facet named `{name}`{hint}"));
        };
        let facet = &self.template.facets[index];
        let id = FacetId {
            template: TemplateId::Composing,
            index,
        };
        let mut out = String::new();
        let state = match self.composition.activation.outcome[index] {
            crate::compose::model::activation::Activation::Always => "active (no `when`)",
            crate::compose::model::activation::Activation::Active => "active",
            crate::compose::model::activation::Activation::Inactive => "inactive",
        };
        // Files are named as everywhere else: relative to the project.
        let _ = writeln!(
            out,
            "facet `{}` ({}, source `{}`), ordinal {}: {state}",
            facet.name,
            self.template.tree.describe(&facet.path),
            self.source_name(TemplateId::Composing),
            facet.ordinal
        );
        if let Some(w) = &facet.when {
            self.when_reads(&mut out, &w.text);
        }
        let _ = writeln!(out, "\ncontributions:");
        let mut any = false;
        for (kind, merged) in [
            ("terraform", &self.composition.terraform),
            ("kustomize", &self.composition.kustomize),
            ("flux", &self.composition.flux),
        ] {
            for c in merged.components.values().chain(merged.deleted.iter()) {
                for step in c.history.iter() {
                    let o = self.composition.origins.get(step.origin);
                    if o.contributor == Contributor::Facet(id) {
                        any = true;
                        let _ = writeln!(
                            out,
                            "  {kind}.{} ({}, ordinal {}): {}, {:?}",
                            c.id,
                            self.location(&o),
                            Self::ordinal(&o),
                            step.strategy.as_str(),
                            step.effect
                        );
                    }
                }
            }
        }
        for e in self.composition.exclusions.iter().filter(|e| e.facet == id) {
            any = true;
            let _ = writeln!(
                out,
                "  {}.{}: left out, {}",
                e.kind.list_key(),
                e.id,
                e.reason
            );
        }
        for r in self
            .composition
            .config_log
            .iter()
            .filter(|r| r.facet == index)
        {
            any = true;
            let _ = writeln!(
                out,
                "  config block `{}`: {}",
                r.name,
                if r.included {
                    "included"
                } else {
                    "excluded by its when"
                }
            );
        }
        if !any {
            let _ = writeln!(out, "  (none)");
        }
        Ok(out)
    }
}

/// The origins of every leaf (scalar) under `t`.
fn leaf_origins(t: &Tracked, out: &mut Vec<crate::compose::model::origin::OriginId>) {
    match t {
        Tracked::Map(entries, _) => entries.values().for_each(|v| leaf_origins(v, out)),
        Tracked::List(items, _) => items.iter().for_each(|v| leaf_origins(v, out)),
        Tracked::Leaf(_, o) => out.push(*o),
    }
}

/// What became of one contribution in the final value: a scalar wins or is
/// overridden; a map or list merged with others keeps some or all of its leaves.
fn survival(said: &Tracked, last: &Tracked) -> String {
    let (mut mine, mut kept) = (Vec::new(), Vec::new());
    leaf_origins(said, &mut mine);
    leaf_origins(last, &mut kept);
    let survived = mine.iter().filter(|o| kept.contains(o)).count();
    match (said, survived) {
        (_, 0) => "overridden".to_string(),
        (Tracked::Leaf(..), _) => "won".to_string(),
        (_, n) if n == mine.len() && mine.len() == kept.len() => "won".to_string(),
        (_, n) if n == mine.len() => "kept: merged into the final value".to_string(),
        (_, n) => format!(
            "partly kept: {n} of {} values are in the final value",
            mine.len()
        ),
    }
}

fn body_at<'n>(node: &'n crate::yaml::Node, path: &[String]) -> Option<&'n crate::yaml::Node> {
    let mut cur = node;
    for seg in path {
        cur = cur.get(seg)?;
    }
    Some(cur)
}

fn lookup_all(c: &Composition, segs: &[String]) -> Option<Value> {
    for map in [&c.config, &*c.context] {
        let mut cur = map.get(segs[0].as_str()).cloned();
        for s in &segs[1..] {
            cur = cur.and_then(|v| v.as_map().and_then(|m| m.get(s.as_str())).cloned());
        }
        if cur.is_some() {
            return cur;
        }
    }
    None
}

/// Dotted identifier chains an expression mentions (`cluster.driver`), outside quotes.
fn collect_names(text: &str, out: &mut Vec<String>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' {
                i += 1;
            } else if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if b == b'\'' || b == b'"' || b == b'`' {
            quote = Some(b);
            i += 1;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            let word = text[start..i].trim_end_matches('.');
            let keyword = matches!(
                word,
                "true"
                    | "false"
                    | "nil"
                    | "null"
                    | "and"
                    | "or"
                    | "not"
                    | "in"
                    | "matches"
                    | "contains"
                    | "startsWith"
                    | "endsWith"
                    | "let"
                    | "if"
                    | "else"
            );
            let is_call = bytes.get(i) == Some(&b'(');
            if !keyword && !is_call && !out.iter().any(|w| w == word) {
                out.push(word.to_string());
            }
            continue;
        }
        i += 1;
    }
}

/// The first line of a component's explanation: the value at `field_path` (the
/// whole component when empty), or why there is none.
fn current_value(out: &mut String, live: Option<&Component>, field_path: &[String], full: &str) {
    let Some(c) = live else {
        let _ = writeln!(out, "{full} is not in the blueprint");
        return;
    };
    let value = if field_path.is_empty() {
        Some(crate::compose::model::blueprint::component_value(c))
    } else {
        c.get(&field_path[0])
            .and_then(|t| descend(t, &field_path[1..]))
            .map(Tracked::to_value)
    };
    match value {
        Some(v) => {
            let _ = writeln!(out, "{full} = {}", show(&v));
        }
        None => {
            let _ = writeln!(
                out,
                "{full} is unset (the component exists, but nothing sets this field)"
            );
        }
    }
}
