//! `bpc check`: a template's mistakes found statically, across all contexts at once,
//! without composing any: references to names that do not exist, operations the
//! schema's types rule out, `when`s that can never be true, dependencies on components
//! nobody defines, and names nothing reads. With the template's tests, which facets,
//! components and `when` branches no case reaches ([`coverage`]).

pub(crate) mod coverage;
mod dependencies;
pub(crate) mod finding;
mod flux_patches;
pub(crate) mod names;
mod reachability;
pub(crate) mod reads;
mod references;
pub(crate) mod silence;
pub(crate) mod sites;
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
/// same parsed facet) is not analysed again — its expressions are not even parsed —
/// while the names the template defines and the project's `check.allow` are the same
/// (names compared with their positions, by file path). What a facet's own analysis
/// finds (references, calls, types, `requires:`, `when`s that can never be true) is
/// kept already silenced; dependencies and unused names are found over the whole
/// template every time.
#[derive(Default)]
pub struct Memo {
    names: Option<names::Shape>,
    allow: Vec<Allow>,
    facets: std::collections::HashMap<String, FacetFindings>,
    /// The reads of every facet in `facets`.
    read: usage::ReadSet,
}

struct FacetFindings {
    facet: std::sync::Arc<crate::template::Facet>,
    /// Findings of the facet's expressions, of its `requires:` paths and of its
    /// `when`s, those silenced taken out.
    sites: Vec<Finding>,
    required: Vec<Finding>,
    never: Vec<Finding>,
    /// How many of the facet's findings were silenced.
    silenced: usize,
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
    let sources = &template.files;
    let names = names::names(template);
    let same_names = memo
        .names
        .as_ref()
        .is_some_and(|old| old.same_as(&names, sources));
    let mut kept = std::mem::take(&mut memo.facets);
    let mut read = std::mem::take(&mut memo.read);
    if !same_names || memo.allow != allow {
        kept.clear();
        read = usage::ReadSet::default();
    }
    let reused: Vec<Option<FacetFindings>> = template
        .facets
        .iter()
        .map(|f| {
            let old = kept.remove(&f.path)?;
            if old.still_holds_for(f) {
                return Some(old);
            }
            old.reads.iter().for_each(|path| read.remove(path));
            None
        })
        .collect();
    // Facets gone from the template: their reads go too.
    for old in kept.into_values() {
        old.reads.iter().for_each(|path| read.remove(path));
    }
    let mut fresh: Vec<FacetFindings> = template
        .facets
        .iter()
        .map(FacetFindings::none_yet)
        .collect();
    // Only the facets analysed again have their expressions parsed.
    let sites = sites::collect_where(template, engine, |i| reused[i].is_none());
    let mut suggestions = references::Suggestions::default();
    for site in &sites.expressions {
        let own = &mut fresh[site.facet];
        check_expression(site, &names, engine, sources, &mut suggestions, own);
    }
    for required in &sites.required {
        let own = &mut fresh[required.facet];
        own.reads
            .push(required.path.split('.').map(str::to_string).collect());
        references::check_required(required, &names, &mut suggestions, &mut own.required);
    }
    let mut never: Vec<Vec<Finding>> = vec![Vec::new(); template.facets.len()];
    reachability::check(template, &sites.expressions, &names, &mut never);
    drop(sites);
    for (own, never) in fresh.iter_mut().zip(never) {
        own.never = never;
        own.silence(sources, allow);
    }
    // Facet by facet, as one pass over the sites would have found them.
    let analysed: Vec<bool> = reused.iter().map(Option::is_none).collect();
    let kept: Vec<FacetFindings> = reused
        .into_iter()
        .zip(fresh)
        .map(|(old, new)| old.unwrap_or(new))
        .collect();
    let mut found: Vec<Finding> = kept.iter().flat_map(|k| k.sites.iter().cloned()).collect();
    found.extend(kept.iter().flat_map(|k| k.required.iter().cloned()));
    found.extend(kept.iter().flat_map(|k| k.never.iter().cloned()));
    let mut silenced: usize = kept.iter().map(|k| k.silenced).sum();
    for (k, new) in kept.iter().zip(&analysed) {
        if *new {
            k.reads.iter().for_each(|path| read.add(path));
        }
    }
    memo.facets = kept
        .into_iter()
        .map(|k| (k.facet.path.clone(), k))
        .collect();
    let mut whole = Vec::new();
    dependencies::check(template, &mut whole);
    flux_patches::check(template, &mut whole);
    usage::check(&names, &read, &mut whole);
    memo.read = read;
    memo.names = Some(names);
    memo.allow = allow.to_vec();

    let before = whole.len();
    whole.retain(|f| !silence::is_silenced(f, sources, allow));
    silenced += before - whole.len();
    found.append(&mut whole);
    sort_by_place(&mut found, sources);
    Report {
        findings: found,
        silenced,
    }
}

impl FacetFindings {
    /// A facet analysed again, before anything is found.
    fn none_yet(facet: &std::sync::Arc<crate::template::Facet>) -> FacetFindings {
        FacetFindings {
            facet: facet.clone(),
            sites: Vec::new(),
            required: Vec::new(),
            never: Vec::new(),
            silenced: 0,
            reads: Vec::new(),
        }
    }

    /// Takes out the findings `allow` (or a `# bpc:allow` comment) silences, counting
    /// them.
    fn silence(&mut self, sources: &crate::files::FileMap, allow: &[Allow]) {
        let mut silenced = 0;
        for list in [&mut self.sites, &mut self.required, &mut self.never] {
            let before = list.len();
            list.retain(|f| !silence::is_silenced(f, sources, allow));
            silenced += before - list.len();
        }
        self.silenced = silenced;
    }

    /// Whether these findings still hold for `facet`: it is the same facet, and no
    /// finding points into another file (that file may have been read anew, and its
    /// positions belong to the old text).
    fn still_holds_for(&self, facet: &std::sync::Arc<crate::template::Facet>) -> bool {
        std::sync::Arc::ptr_eq(&self.facet, facet)
            && self
                .sites
                .iter()
                .chain(&self.required)
                .chain(&self.never)
                .all(|finding| {
                    let d = &finding.diagnostic;
                    d.primary
                        .iter()
                        .chain(&d.secondary)
                        .all(|l| l.span.file == facet.file)
                })
    }
}

/// One expression's findings and reads, into its facet's `own`.
fn check_expression(
    site: &sites::Site<'_>,
    names: &names::Shape,
    engine: &Engine,
    sources: &crate::files::FileMap,
    suggestions: &mut references::Suggestions,
    own: &mut FacetFindings,
) {
    let ast = match &site.parsed {
        Ok(ast) => ast,
        Err(e) => {
            own.sites.push(Finding::at(
                FindingId::InvalidExpression,
                sites::span_of(site, e.span.clone(), sources),
                format!("this expression does not parse: {}", e.message),
                "here",
            ));
            return;
        }
    };
    let reads = reads::reads(ast);
    own.reads.extend(
        reads
            .paths
            .iter()
            .map(|p| p.segments.iter().map(|s| s.to_string()).collect()),
    );
    references::check_paths(site, &reads, names, sources, suggestions, &mut own.sites);
    references::check_calls(site, &reads, engine, sources, &mut own.sites);
    types::check(site, &reads, names, sources, &mut own.sites);
}

/// Findings by file path, then position: each file's path looked up once.
fn sort_by_place(found: &mut [Finding], sources: &crate::files::FileMap) {
    let mut paths: std::collections::HashMap<crate::files::FileId, Option<String>> =
        std::collections::HashMap::new();
    for f in found.iter() {
        if let Some(span) = f.span() {
            paths
                .entry(span.file)
                .or_insert_with(|| sources.path(span.file));
        }
    }
    let key = |f: &Finding| {
        let span = f.span();
        (
            span.and_then(|s| paths.get(&s.file).and_then(|p| p.as_deref())),
            span.map(|s| s.start),
            f.id,
        )
    };
    found.sort_by(|a, b| key(a).cmp(&key(b)));
}
