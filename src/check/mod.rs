//! `bpc check`: a template's mistakes found statically, across all contexts at once,
//! without composing any: references to names that do not exist, operations the
//! schema's types rule out, `when`s that can never be true, dependencies on components
//! nobody defines, and names nothing reads. With the template's tests, which facets,
//! components and `when` branches no case reaches ([`coverage`]).

pub mod coverage;
mod dependencies;
pub mod finding;
pub mod names;
mod reachability;
pub mod reads;
mod references;
pub mod silence;
pub mod sites;
mod types;
mod usage;

pub use finding::{Finding, FindingId};
pub use silence::Allow;

use crate::expr::Engine;
use crate::files::Severity;
use crate::template::Template;

/// The outcome of checking one template.
#[derive(Debug, Default)]
pub struct Report {
    /// In file order, then position.
    pub findings: Vec<Finding>,
    /// How many findings a `bpc:allow` comment or the project's config silenced.
    pub silenced: usize,
}

impl Report {
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.diagnostic.severity == severity)
            .count()
    }

    /// Whether the check fails: any error, or with `strict` any warning.
    pub fn fails(&self, strict: bool) -> bool {
        self.count(Severity::Error) > 0 || (strict && self.count(Severity::Warning) > 0)
    }
}

/// Checks `template` (its own facets; upstream sources count as definitions only).
pub fn check(template: &Template, engine: &Engine, allow: &[Allow]) -> Report {
    let sources = &template.sources;
    let names = names::names(template);
    let sites = sites::collect(template, engine);
    let mut found = Vec::new();
    let mut read = usage::ReadSet::default();
    let mut suggestions = references::Suggestions::default();
    for site in &sites.expressions {
        let ast = match &site.parsed {
            Ok(ast) => ast,
            Err(e) => {
                found.push(Finding::at(
                    FindingId::InvalidExpression,
                    sites::span_of(site, e.span.clone(), sources),
                    format!("this expression does not parse: {}", e.message),
                    "here",
                ));
                continue;
            }
        };
        let reads = reads::reads(ast);
        reads.paths.iter().for_each(|p| read.add(&p.segments));
        references::check_paths(site, &reads, &names, sources, &mut suggestions, &mut found);
        references::check_calls(site, &reads, engine, sources, &mut found);
        types::check(site, &reads, &names, sources, &mut found);
    }
    for required in &sites.required {
        read.add(&required.path.split('.').collect::<Vec<_>>());
        references::check_required(required, &names, &mut suggestions, &mut found);
    }
    reachability::check(template, &sites.expressions, &names, &mut found);
    dependencies::check(template, &mut found);
    usage::check(&names, &read, &mut found);

    let before = found.len();
    found.retain(|f| !silence::is_silenced(f, sources, allow));
    let silenced = before - found.len();
    found.sort_by_key(|f| {
        let span = f.span();
        (
            span.and_then(|s| sources.path(s.file)),
            span.map(|s| s.start),
            f.id,
        )
    });
    Report {
        findings: found,
        silenced,
    }
}
