//! Stage 10, validate: `dependsOn` names existing components of the same kind and the
//! graph has no cycle (S9). A missing target says which facet would have defined it
//! and which `when` left it out.
//!
//! What is validated is what `bpc render` writes: the finished terraform components
//! and the Flux Kustomizations compiled from the shaped lists (stage 9), where a
//! kustomization may also depend on the CRD layer render adds. Findings are reported
//! in the order the entries were written ([`Written`]), not the blueprint's dependency
//! order, so the first error and a cycle's first name are the first its authors wrote.

pub mod unchanged;

use crate::compose::collect::Exclusion;
use crate::compose::merge::Lists;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::inputs::Cycles;
use crate::compose::model::origin::Origins;
use crate::compose::model::tier_names::{self, Tiers};
use crate::compose::model::tracked::Tracked;
use crate::files::Diagnostic;
use crate::template::{ComponentKind, Template};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// What validation found: errors, and apart from them the dependency cycle (if any),
/// which `bpc graph` may keep in order to draw it.
#[derive(Default)]
pub struct Findings {
    pub errors: Vec<Diagnostic>,
    pub cycle: Option<Diagnostic>,
}

/// The order the blueprint's entries were written in (merge order), taken before
/// stage 8 puts them in dependency order: terraform components, and the Flux
/// Kustomizations (plain ones, then each system's tiers).
pub struct Written {
    terraform: Vec<Arc<str>>,
    kustomizations: Vec<Arc<str>>,
}

impl Written {
    pub fn of(lists: &Lists) -> Written {
        let mut kustomizations: Vec<Arc<str>> =
            lists.kustomize.components.keys().cloned().collect();
        for system in lists.flux.components.values() {
            kustomizations.extend(Tiers::of(system).all().map(|t| Arc::from(t.as_str())));
        }
        Written {
            terraform: lists.terraform.components.keys().cloned().collect(),
            kustomizations,
        }
    }

    /// The components of `merged` in written order; any written later (none today)
    /// follow in `merged`'s order.
    fn arrange<'a>(order: &[Arc<str>], merged: &'a Merged) -> Vec<&'a Component> {
        let mut seen: FxHashSet<&str> =
            FxHashSet::with_capacity_and_hasher(merged.components.len(), Default::default());
        let mut out = Vec::with_capacity(merged.components.len());
        for id in order {
            if let Some((key, c)) = merged.components.get_key_value(id) {
                if seen.insert(key.as_ref()) {
                    out.push(c);
                }
            }
        }
        if out.len() < merged.components.len() {
            out.extend(
                merged
                    .components
                    .values()
                    .filter(|c| !seen.contains(c.id.as_ref())),
            );
        }
        out
    }
}

/// What is validated.
#[derive(Clone, Copy)]
pub struct Subject<'a> {
    pub terraform: &'a Merged,
    /// Every Flux Kustomization, systems' tiers included (stage 9).
    pub kustomizations: &'a Merged,
    /// The Flux Kustomization render adds for the blueprint's CRDs, if any (stage 8
    /// makes every root depend on it).
    pub crds_layer: Option<&'a str>,
    pub written: &'a Written,
}

/// One kind's components as validation reads them.
struct Listed<'a> {
    kind: ComponentKind,
    merged: &'a Merged,
    /// The components, in written order.
    order: Vec<&'a Component>,
    /// What may be depended on besides the components.
    layer: Option<&'a str>,
}

impl Listed<'_> {
    fn exists(&self, name: &str) -> bool {
        self.merged.components.contains_key(name) || self.layer == Some(name)
    }
}

/// Validates the terraform components and every Flux Kustomization (systems'
/// tiers included): all errors of both together, dependency cycles among them unless
/// `cycles` keeps them — then they are returned, to be drawn. With a memo, a subject
/// the last clean validation validated is clean without a walk ([`unchanged`]).
pub fn components(
    subject: Subject<'_>,
    exclusions: &[Exclusion],
    template: &Template,
    origins: &Origins,
    cycles: Cycles,
    memo: Option<&mut unchanged::Memo>,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let Some(memo) = memo else {
        return walk(&subject, exclusions, template, origins, cycles);
    };
    if memo.holds(&subject) {
        return Ok(Vec::new());
    }
    let result = walk(&subject, exclusions, template, origins, cycles);
    match &result {
        Ok(kept) if kept.is_empty() => memo.clean(&subject),
        _ => memo.forget(),
    }
    result
}

/// [`components`], walking every component; the two kinds on threads of their own
/// when they are long.
fn walk(
    subject: &Subject<'_>,
    exclusions: &[Exclusion],
    template: &Template,
    origins: &Origins,
    cycles: Cycles,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let long = subject.terraform.components.len() + subject.kustomizations.components.len()
        >= 2 * crate::compose::model::blueprint::COMPONENTS_PER_THREAD;
    let threads = if long { crate::parallel::cores() } else { 1 };
    walk_on(threads, subject, exclusions, template, origins, cycles)
}

/// [`walk`], on more than one thread if `threads` says so.
fn walk_on(
    threads: usize,
    subject: &Subject<'_>,
    exclusions: &[Exclusion],
    template: &Template,
    origins: &Origins,
    cycles: Cycles,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut found_cycles = Vec::new();
    let written = subject.written;
    let listed = [
        Listed {
            kind: ComponentKind::Terraform,
            merged: subject.terraform,
            order: Written::arrange(&written.terraform, subject.terraform),
            layer: None,
        },
        Listed {
            kind: ComponentKind::Kustomize,
            merged: subject.kustomizations,
            order: Written::arrange(&written.kustomizations, subject.kustomizations),
            layer: subject.crds_layer,
        },
    ];
    // The kinds are validated apart, their findings kept in this order.
    let validated = |listed: &Listed<'_>| validate(listed, exclusions, template, origins);
    let found = match threads > 1 {
        true => crate::parallel::each(listed.iter().collect(), validated),
        false => listed.iter().map(validated).collect(),
    };
    for found in found {
        errors.extend(found.errors);
        found_cycles.extend(found.cycle);
    }
    if cycles == Cycles::Reject {
        errors.append(&mut found_cycles);
    }
    if errors.is_empty() {
        Ok(found_cycles)
    } else {
        Err(errors)
    }
}

/// The findings of one kind's components.
fn validate(
    listed: &Listed<'_>,
    exclusions: &[Exclusion],
    template: &Template,
    origins: &Origins,
) -> Findings {
    let kind = listed.kind;
    let mut errors = path_names(kind, &listed.order, origins);
    for component in &listed.order {
        let Some(Tracked::List(deps, _)) = component.get("dependsOn") else {
            continue;
        };
        for dep in deps {
            let Some(name) = dep.as_str() else { continue };
            if name.is_empty() || listed.exists(name) {
                continue;
            }
            let span = origins.span(dep.origin());
            let mut d = Diagnostic::error(format!(
                "{} `{}` depends on `{name}`, which is not in the blueprint",
                kind.noun(),
                component.id
            ))
            .with_primary(span, format!("no {} named `{name}`", kind.noun()));
            let excluded: Vec<&Exclusion> = exclusions
                .iter()
                .filter(|e| would_define(e, kind, name))
                .collect();
            // A flux system's bare name means its install tier; one without that tier
            // is named by its other tiers only.
            let tiers: Vec<String> = listed
                .order
                .iter()
                .map(|c| c.id.as_ref())
                .filter(|id| *id != name && tier_names::belongs_to(id, name))
                .map(|id| format!("`{id}`"))
                .collect();
            if excluded.is_empty() && kind == ComponentKind::Kustomize && !tiers.is_empty() {
                d = d
                    .with_note(format!(
                        "`{name}` is a flux system without an install tier (`{}`), which its bare name stands for",
                        tier_names::install(name)
                    ))
                    .with_help(format!("depend on one of its tiers: {}", tiers.join(", ")));
            } else if excluded.is_empty() {
                if let Some(hint) = closest(name, listed.order.iter().map(|c| c.id.as_ref())) {
                    d = d.with_help(format!("did you mean `{hint}`?"));
                } else {
                    d = d.with_note(format!("no facet defines a {} named `{name}`", kind.noun()));
                }
            }
            for e in excluded {
                let Some(facet) = template.facet(e.facet) else {
                    continue;
                };
                let why = match &e.when {
                    Some(w) => format!("{} ({}): `when: {}`", e.reason, facet.path, w.text.trim()),
                    None => format!("{} ({})", e.reason, facet.path),
                };
                let what = if e.kind == ComponentKind::FluxSystem && &*e.id == name {
                    format!("`{name}` is a flux system in facet `{}`", facet.name)
                } else if e.kind == ComponentKind::FluxSystem {
                    format!(
                        "`{name}` is a tier of flux system `{}` in facet `{}`",
                        e.id, facet.name
                    )
                } else {
                    format!("`{name}` is defined in facet `{}`", facet.name)
                };
                d = d.with_note(format!("{what}, but {why}"));
                if let Some(w) = &e.when {
                    d = d.with_secondary(w.node.span, format!("this left `{name}` out"));
                }
            }
            errors.push(d);
        }
    }
    let cycle = find_cycle(&listed.order).map(|cycle| {
        let first = &listed.merged.components[cycle[0].as_str()];
        let span = first
            .get("dependsOn")
            .map(|t| origins.span(t.origin()))
            .unwrap_or_default();
        Diagnostic::error(format!(
            "{}s depend on each other in a cycle: {}",
            kind.noun(),
            cycle.join(" -> ")
        ))
        .with_primary(span, "this dependsOn is part of the cycle")
    });
    Findings { errors, cycle }
}

/// Names that `bpc render` turns into paths (a component's id, a terraform `path`)
/// must stay inside the output directory: `../x` is refused here, where the facet and
/// line that wrote it are known, not discovered when a file lands outside `--out`.
fn path_names(kind: ComponentKind, order: &[&Component], origins: &Origins) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    let fields: &[&str] = match kind {
        ComponentKind::Terraform => &["name", "path"],
        _ => &["name"],
    };
    for component in order {
        let mut checked = false;
        for field in fields {
            let Some(tracked) = component.get(field) else {
                continue;
            };
            let Some(text) = tracked.as_str() else {
                continue;
            };
            if text.is_empty() && *field == "name" {
                continue;
            }
            checked |= text == &*component.id;
            if let Some(why) = crate::files::relative_path::unsafe_reason(text) {
                let span = origins.span(tracked.origin());
                errors.push(
                    Diagnostic::error(format!(
                        "{} {field} `{}` cannot be used: {why}",
                        kind.noun(),
                        text.escape_debug()
                    ))
                    .with_primary(
                        span,
                        format!("this {field} becomes a path under `bpc render --out`"),
                    )
                    .with_help("use a plain relative name such as `cluster` or `network/vpc`"),
                );
            }
        }
        if !checked {
            if let Some(why) = crate::files::relative_path::unsafe_reason(&component.id) {
                errors.push(Diagnostic::error(format!(
                    "{} `{}` cannot be used as a name: {why}",
                    kind.noun(),
                    component.id.escape_debug()
                )));
            }
        }
    }
    errors
}

/// Whether the left-out component `e` would have provided the dependency `name` of a
/// `kind` component. A kustomization can depend on a flux system (by its name, which
/// means its install tier) or on one of the tiers the system generates.
fn would_define(e: &Exclusion, kind: ComponentKind, name: &str) -> bool {
    if e.kind == kind {
        return &*e.id == name;
    }
    if kind != ComponentKind::Kustomize || e.kind != ComponentKind::FluxSystem {
        return false;
    }
    crate::compose::model::tier_names::belongs_to(name, &e.id)
}

/// The first dependency cycle found, as `a, b, …, a` (deterministic: components in
/// written order, dependencies in list order).
fn find_cycle(order: &[&Component]) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Fresh,
        Open,
        Done,
    }
    let ids: Vec<&str> = order.iter().map(|c| c.id.as_ref()).collect();
    let index: FxHashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let deps: Vec<Vec<usize>> = order
        .iter()
        .map(|c| match c.get("dependsOn") {
            Some(Tracked::List(items, _)) => items
                .iter()
                .filter_map(|d| d.as_str().and_then(|n| index.get(n).copied()))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut marks = vec![Mark::Fresh; ids.len()];
    for start in 0..ids.len() {
        if marks[start] != Mark::Fresh {
            continue;
        }
        // Iterative depth-first search: (node, next dependency to look at).
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::Open;
        while let Some((node, next)) = stack.last().copied() {
            if next < deps[node].len() {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                let dep = deps[node][next];
                match marks[dep] {
                    Mark::Fresh => {
                        marks[dep] = Mark::Open;
                        stack.push((dep, 0));
                    }
                    Mark::Open => {
                        let from = stack.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        let mut cycle: Vec<String> = stack[from..]
                            .iter()
                            .map(|(n, _)| ids[*n].to_string())
                            .collect();
                        cycle.push(ids[dep].to_string());
                        return Some(cycle);
                    }
                    Mark::Done => {}
                }
            } else {
                marks[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    None
}

fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .map(|c| (crate::template::keys::edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Dependencies name what exists, and form no circle.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, messages, Fixture};
    use crate::compose::model::inputs::Cycles;
    use crate::compose::model::origin::Origins;

    #[test]
    fn both_kinds_validated_on_threads_of_their_own_report_as_on_one() {
        let files = [(
            "facets/a.yaml",
            facet(
                "a",
                "terraform:\n  - name: a\n    dependsOn: [b, nowhere]\n  - name: b\n    dependsOn: [a]\n\
                 kustomize:\n  - name: x\n    dependsOn: [y, absent]\n  - name: y\n    dependsOn: [x]\n",
            ),
        )];
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        for cycles in [Cycles::Reject, Cycles::Keep] {
            let on = |threads| {
                on_subject(&files, |subject, exclusions, template, origins| {
                    super::walk_on(threads, subject, exclusions, template, origins, cycles)
                })
            };
            let one = on(1);
            let text = format!("{one:?}");
            assert!(
                text.contains("nowhere") && text.contains("absent"),
                "{text}"
            );
            assert_eq!(on(2), one);
        }
    }

    /// What `validate` says of the template `files` makes, given what is validated:
    /// the errors, or the cycles kept, as text.
    fn on_subject(
        files: &[(&str, &str)],
        validate: impl FnOnce(
            &super::Subject<'_>,
            &[crate::compose::collect::Exclusion],
            &crate::template::Template,
            &Origins,
        )
            -> Result<Vec<crate::files::Diagnostic>, Vec<crate::files::Diagnostic>>,
    ) -> Result<String, String> {
        let fx = Fixture::new(files);
        let mut origins = Origins::default();
        let compiled = fx.compiled(&mut origins);
        let all = compiled.kustomizations.expect("the tiers compile");
        let subject = super::Subject {
            terraform: &compiled.lists.terraform,
            kustomizations: &all,
            crds_layer: compiled.crds_layer.as_deref(),
            written: &compiled.written,
        };
        validate(
            &subject,
            &compiled.collected.exclusions,
            &fx.template,
            &origins,
        )
        .map(|kept| messages(&kept))
        .map_err(|ds| messages(&ds))
    }

    /// Validating the template `files` makes: the errors, or the cycles kept.
    fn validated(files: &[(&str, &str)], cycles: Cycles) -> Result<String, String> {
        on_subject(files, |subject, exclusions, template, origins| {
            super::components(*subject, exclusions, template, origins, cycles, None)
        })
    }

    /// The errors of validating the template `files` makes.
    fn errors(files: &[(&str, &str)]) -> String {
        validated(files, Cycles::Reject)
            .err()
            .unwrap_or("valid".into())
    }

    #[test]
    fn dependencies_on_existing_components_are_valid() {
        let verdict = errors(&[(
            "facets/a.yaml",
            &facet("a", "terraform:\n  - name: net\n    path: net\n  - name: db\n    path: db\n    dependsOn: [net]\n"),
        )]);
        assert_eq!(verdict, "valid");
    }

    #[test]
    fn a_missing_dependency_is_an_error() {
        let verdict = errors(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "terraform:\n  - name: db\n    path: db\n    dependsOn: [net]\n",
            ),
        )]);
        assert!(verdict.contains("`net`"), "{verdict}");
    }

    #[test]
    fn a_circle_of_dependencies_is_an_error() {
        let verdict = errors(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "kustomize:\n  - name: a\n    dependsOn: [b]\n  - name: b\n    dependsOn: [a]\n",
            ),
        )]);
        assert_eq!(
            verdict,
            "kustomizations depend on each other in a cycle: a -> b -> a"
        );
    }

    #[test]
    fn a_circle_can_be_kept_to_be_drawn() {
        let kept = validated(
            &[(
                "facets/a.yaml",
                &facet("a", "kustomize:\n  - name: a\n    dependsOn: [b]\n  - name: b\n    dependsOn: [a]\n"),
            )],
            Cycles::Keep,
        );
        assert_eq!(
            kept,
            Ok("kustomizations depend on each other in a cycle: a -> b -> a".into())
        );
    }

    #[test]
    fn a_circle_is_reported_from_the_entry_written_first() {
        // Stage 8 puts `a` first (by name, then after its dependencies); the report
        // starts where the facet does.
        let verdict = errors(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "kustomize:\n  - name: c\n    dependsOn: [a]\n  - name: a\n    dependsOn: [b]\n  - name: b\n    dependsOn: [c]\n",
            ),
        )]);
        assert_eq!(
            verdict,
            "kustomizations depend on each other in a cycle: c -> a -> b -> c"
        );
    }

    #[test]
    fn the_crd_layer_may_be_depended_on_when_the_blueprint_has_crds() {
        let body = "kustomize:\n  - name: web\n    dependsOn: [crds]\n";
        let with_crds = errors(&[(
            "facets/a.yaml",
            &facet("a", &format!("crds: [cert-manager]\n{body}")),
        )]);
        assert_eq!(with_crds, "valid");
        let without = errors(&[("facets/a.yaml", &facet("a", body))]);
        assert_eq!(
            without,
            "kustomization `web` depends on `crds`, which is not in the blueprint"
        );
    }

    #[test]
    fn what_is_validated_is_what_render_writes() {
        // An install tier with no components is not written (stage 8 drops it), so
        // nothing may depend on it, by its name or by the system's.
        let verdict = errors(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "kustomize:\n  - name: web\n    dependsOn: [dns-install]\n  - name: api\n    dependsOn: [dns]\nflux:\n  - name: dns\n    install:\n      substitutions: {zone: x}\n    resources:\n      - components: [records]\n",
            ),
        )]);
        assert_eq!(
            verdict,
            "kustomization `web` depends on `dns-install`, which is not in the blueprint\n\
             kustomization `api` depends on `dns-install`, which is not in the blueprint"
        );
    }
}
