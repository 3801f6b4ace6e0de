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
    check_incremental(template, engine, allow, &mut Memo::default())
}

/// What one check found per facet, kept for the next check of the same project (the
/// language server checks after every edit): a facet whose file did not change (the
/// same parsed facet) is not analysed again while the names the template defines are
/// the same (compared with their positions, by file path). The whole-template checks
/// (reachability, dependencies, unused names) run every time.
#[derive(Default)]
pub struct Memo {
    names: Option<names::Shape>,
    facets: std::collections::HashMap<String, FacetFindings>,
}

struct FacetFindings {
    facet: std::sync::Arc<crate::template::Facet>,
    /// Findings of the facet's expressions, then of its `requires:` paths.
    sites: Vec<Finding>,
    required: Vec<Finding>,
    /// Every path its expressions and `requires:` read.
    reads: Vec<Vec<String>>,
}

/// As [`check`], reusing what `memo` kept of the facets that did not change.
pub fn check_incremental(
    template: &Template,
    engine: &Engine,
    allow: &[Allow],
    memo: &mut Memo,
) -> Report {
    let sources = &template.sources;
    let names = names::names(template);
    let same_names = memo
        .names
        .as_ref()
        .is_some_and(|old| old.same_as(&names, sources));
    let mut kept = std::mem::take(&mut memo.facets);
    if !same_names {
        kept.clear();
    }
    let reused: Vec<Option<FacetFindings>> = template
        .facets
        .iter()
        .map(|f| {
            // Findings that point into another file are found again: that file may
            // have been read anew, and its positions belong to the old text.
            kept.remove(&f.path).filter(|k| {
                std::sync::Arc::ptr_eq(&k.facet, f)
                    && k.sites.iter().chain(&k.required).all(|finding| {
                        let d = &finding.diagnostic;
                        d.primary
                            .iter()
                            .chain(&d.secondary)
                            .all(|l| l.span.file == f.file)
                    })
            })
        })
        .collect();
    drop(kept);
    let mut fresh: Vec<FacetFindings> = template
        .facets
        .iter()
        .map(|f| FacetFindings {
            facet: f.clone(),
            sites: Vec::new(),
            required: Vec::new(),
            reads: Vec::new(),
        })
        .collect();
    let sites = sites::collect(template, engine);
    let mut read = usage::ReadSet::default();
    let mut suggestions = references::Suggestions::default();
    for site in &sites.expressions {
        if reused[site.facet].is_some() {
            continue;
        }
        let own = &mut fresh[site.facet];
        let ast = match &site.parsed {
            Ok(ast) => ast,
            Err(e) => {
                own.sites.push(Finding::at(
                    FindingId::InvalidExpression,
                    sites::span_of(site, e.span.clone(), sources),
                    format!("this expression does not parse: {}", e.message),
                    "here",
                ));
                continue;
            }
        };
        let reads = reads::reads(ast);
        own.reads.extend(
            reads
                .paths
                .iter()
                .map(|p| p.segments.iter().map(|s| s.to_string()).collect()),
        );
        references::check_paths(
            site,
            &reads,
            &names,
            sources,
            &mut suggestions,
            &mut own.sites,
        );
        references::check_calls(site, &reads, engine, sources, &mut own.sites);
        types::check(site, &reads, &names, sources, &mut own.sites);
    }
    for required in &sites.required {
        if reused[required.facet].is_some() {
            continue;
        }
        let own = &mut fresh[required.facet];
        own.reads
            .push(required.path.split('.').map(str::to_string).collect());
        references::check_required(required, &names, &mut suggestions, &mut own.required);
    }
    // Facet by facet, as one pass over the sites would have found them.
    let kept: Vec<FacetFindings> = reused
        .into_iter()
        .zip(fresh)
        .map(|(old, new)| old.unwrap_or(new))
        .collect();
    let mut found: Vec<Finding> = kept.iter().flat_map(|k| k.sites.iter().cloned()).collect();
    found.extend(kept.iter().flat_map(|k| k.required.iter().cloned()));
    for k in &kept {
        for path in &k.reads {
            read.add(path);
        }
    }
    memo.facets = kept
        .into_iter()
        .map(|k| (k.facet.path.clone(), k))
        .collect();
    reachability::check(template, &sites.expressions, &names, &mut found);
    dependencies::check(template, &mut found);
    usage::check(&names, &read, &mut found);
    memo.names = Some(names);

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
