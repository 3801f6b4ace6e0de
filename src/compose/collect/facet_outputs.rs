//! Blueprint-wide contributions of active facets (docs/format.md): `crds`
//! (deduplicated, empty results dropped, path-like values refused), facet-level
//! `substitutions` (merged in processing order into the blueprint's common
//! substitutions), `backend` (the highest-ordinal non-empty value wins) and
//! `messages` (shown after a successful compose, never written to the blueprint).

use crate::compose::config::Resolver;
use crate::compose::model::fields::substitution_text;
use crate::compose::shared::evaluate::{eval_condition, eval_node};
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::yaml::NodeKind;

#[derive(Clone, Debug, Default)]
pub struct FacetOutputs {
    pub crds: Vec<String>,
    pub substitutions: Map,
    pub backend: Option<String>,
}

impl FacetOutputs {
    /// Lays a later source's outputs over these: CRDs join (deduplicated),
    /// substitutions override key by key, a set backend wins.
    pub fn absorb(&mut self, later: FacetOutputs) {
        for crd in later.crds {
            if !self.crds.contains(&crd) {
                self.crds.push(crd);
            }
        }
        for (k, v) in later.substitutions {
            self.substitutions.insert(k, v);
        }
        if later.backend.is_some() {
            self.backend = later.backend;
        }
    }
}

pub fn collect(resolver: &Resolver<'_>, active: &[usize]) -> Result<FacetOutputs, Vec<Diagnostic>> {
    let template = resolver.template;
    let mut out = FacetOutputs::default();
    let mut backend: Option<(i64, String)> = None;
    let mut errors = Vec::new();
    for &i in active {
        let facet = &template.facets[i];
        let host = resolver.host_for(i);
        for crd in &facet.crds {
            let context = || format!("in `crds` of facet `{}`", facet.name);
            match eval_node(
                resolver.engine,
                crd,
                resolver,
                &host,
                &template.files,
                &context,
            ) {
                Ok(Value::Nil) => {}
                Ok(Value::Str(s)) if s.is_empty() => {}
                Ok(Value::Str(s)) => {
                    if s.contains('/') || s.contains('\\') || s.contains("..") {
                        errors.push(
                            Diagnostic::error(format!(
                                "CRD reference `{s}` must be a catalogue name, not a path"
                            ))
                            .with_primary(crd.span, "contains `/`, `\\` or `..`")
                            .with_context(context()),
                        );
                    } else if !out.crds.iter().any(|c| **c == *s) {
                        out.crds.push(s.to_string());
                    }
                }
                Ok(other) => errors.push(
                    Diagnostic::error(format!(
                        "a CRD reference must be a string, got {}",
                        other.type_name()
                    ))
                    .with_primary(crd.span, "here")
                    .with_context(context()),
                ),
                Err(d) => errors.push(d),
            }
        }
        if let Some(subs) = &facet.substitutions {
            if let NodeKind::Map(entries) = &subs.kind {
                for (k, v) in entries {
                    let context =
                        || format!("in substitution `{}` of facet `{}`", k.name, facet.name);
                    match eval_node(
                        resolver.engine,
                        v,
                        resolver,
                        &host,
                        &template.files,
                        &context,
                    ) {
                        Ok(value) => {
                            out.substitutions
                                .insert(k.name.clone(), Value::str(substitution_text(&value)));
                        }
                        Err(d) => errors.push(d),
                    }
                }
            }
        }
        if let Some(node) = &facet.backend {
            let context = || format!("in `backend` of facet `{}`", facet.name);
            match eval_node(
                resolver.engine,
                node,
                resolver,
                &host,
                &template.files,
                &context,
            ) {
                Ok(Value::Str(s)) if !s.is_empty() => {
                    if backend.as_ref().is_none_or(|(o, _)| facet.ordinal >= *o) {
                        backend = Some((facet.ordinal, s.to_string()));
                    }
                }
                Ok(Value::Nil) | Ok(Value::Str(_)) => {}
                Ok(other) => errors.push(
                    Diagnostic::error(format!(
                        "`backend` must name a terraform component, got {}",
                        other.type_name()
                    ))
                    .with_primary(node.span, "here"),
                ),
                Err(d) => errors.push(d),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    out.substitutions.retain(|_, v| v.as_str() != Some(""));
    out.backend = backend.map(|(_, b)| b);
    Ok(out)
}

/// The messages of active facets whose `when` holds, interpolated.
pub fn messages(resolver: &Resolver<'_>, active: &[usize]) -> Result<Vec<String>, Vec<Diagnostic>> {
    let template = resolver.template;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for &i in active {
        let facet = &template.facets[i];
        let host = resolver.host_for(i);
        for m in &facet.messages {
            let context = || format!("in a message of facet `{}`", facet.name);
            if let Some(cond) = &m.when {
                match eval_condition(
                    resolver.engine,
                    cond,
                    resolver,
                    &host,
                    &template.files,
                    &context,
                ) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(d) => {
                        errors.push(d);
                        continue;
                    }
                }
            }
            match eval_node(
                resolver.engine,
                &m.text,
                resolver,
                &host,
                &template.files,
                &context,
            ) {
                Ok(v) => out.push(substitution_text(&v)),
                Err(d) => errors.push(d),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}
