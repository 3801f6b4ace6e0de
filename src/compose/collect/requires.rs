//! `requires:` (docs/format.md): paths that must hold a non-empty value in
//! the composed scope when their owner (facet, config block, component) is active. All
//! unmet requirements of all owners are reported together, each with the author's
//! message and where the requirement is written.

use crate::compose::config::Resolver;
use crate::compose::shared::evaluate::eval_condition;
use crate::expr::{Scope, Value};
use crate::files::Diagnostic;
use crate::template::Requirement;

/// One owner's requirements, with a description of the owner for messages.
pub struct Owner<'a> {
    pub facet: usize,
    pub what: String,
    pub requirements: &'a [Requirement],
}

fn present(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::Str(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
        _ => true,
    }
}

/// The value at a dotted path, read the way an expression would read it.
fn read(resolver: &Resolver<'_>, path: &str) -> Result<Value, Diagnostic> {
    let segments: Vec<&str> = path.split('.').collect();
    let found = resolver
        .lookup(&segments)
        .map_err(|e| Diagnostic::error(format!("cannot read `{path}`: {e}")))?;
    let Some((mut value, used)) = found else {
        return Ok(Value::Nil);
    };
    for seg in &segments[used..] {
        value = match value.as_map().and_then(|m| m.get(seg)) {
            Some(v) => v.clone(),
            None => return Ok(Value::Nil),
        };
    }
    Ok(value)
}

pub fn check(resolver: &Resolver<'_>, owners: &[Owner<'_>]) -> Result<(), Vec<Diagnostic>> {
    let mut unmet: Vec<(String, &Requirement, Vec<usize>)> = Vec::new();
    let mut errors = Vec::new();
    for owner in owners {
        for req in owner.requirements {
            if let Some(cond) = &req.when {
                let host = resolver.host_for(owner.facet);
                let context = || format!("in a `requires` of {}", owner.what);
                match eval_condition(
                    resolver.engine,
                    cond,
                    resolver,
                    &host,
                    &resolver.template.files,
                    &context,
                ) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(d) => {
                        errors.push(d);
                        continue;
                    }
                }
            }
            let mut missing = Vec::new();
            for (i, (path, _)) in req.paths.iter().enumerate() {
                match read(resolver, path) {
                    Ok(v) if present(&v) => {}
                    Ok(_) => missing.push(i),
                    Err(d) => errors.push(d),
                }
            }
            if !missing.is_empty() {
                unmet.push((owner.what.clone(), req, missing));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if unmet.is_empty() {
        return Ok(());
    }
    let count: usize = unmet.iter().map(|(_, _, m)| m.len()).sum();
    let mut d = Diagnostic::error(format!("{count} required value(s) are missing"));
    for (i, (what, req, missing)) in unmet.iter().enumerate() {
        let paths: Vec<&str> = missing.iter().map(|&m| req.paths[m].0.as_str()).collect();
        let why = req.message.as_deref().unwrap_or("required");
        let line = format!(
            "{what} requires {}: {why}",
            paths
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for &m in missing {
            d = if i == 0 && m == missing[0] {
                d.with_primary(req.paths[m].1, format!("`{}` has no value", req.paths[m].0))
            } else {
                d.with_secondary(req.paths[m].1, format!("`{}` has no value", req.paths[m].0))
            };
        }
        d = d.with_note(line);
    }
    Err(vec![d.with_help(
        "set the values in values.yaml or with --set, or provide defaults in schema.yaml",
    )])
}
