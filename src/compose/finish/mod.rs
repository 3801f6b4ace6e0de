//! Stage 8, finish: the merged lists in the order and shape the blueprint carries
//! them (S10): empty items tidied away, components in dependency order, local
//! sources' components tagged and ordered by depth (S9), flux systems and
//! kustomizations shaped as the Windsor CLI writes them, and terraform inputs that
//! wait for another component's outputs marked. Stage 9 compiles the flux systems
//! shaped here; stage 10 validates the result.

pub mod deferred;
pub mod flux_shape;
pub mod ordering;
pub mod patch_shape;
pub mod remembered;

use crate::compose::merge::Lists;
use crate::compose::model::blueprint;
use crate::compose::model::origin::Origins;
use crate::compose::sources::source_tags::SourceTags;
use crate::template::Template;

/// Tidies, orders, tags and shapes `lists`. `has_crds` says whether the blueprint
/// installs CRDs, which every root then depends on; returns the name of that CRD
/// layer (`crds`, or `crds-<name>` for a published blueprint, S14), a Flux
/// Kustomization `bpc render` writes of its own. With `memo`, what the last
/// composition's finishing did is taken from it where it still holds
/// ([`remembered`]).
pub fn finish(
    lists: &mut Lists,
    tags: Option<&SourceTags>,
    has_crds: bool,
    template: &Template,
    origins: &mut Origins,
    mut memo: Option<&mut remembered::Memo>,
) -> Option<String> {
    match memo.as_deref_mut() {
        Some(memo) => memo.clean(&mut lists.terraform, &mut lists.kustomize),
        None => {
            blueprint::clean(&mut lists.terraform);
            blueprint::clean(&mut lists.kustomize);
        }
    }
    flux_shape::resolve_plain_dependencies(&lists.flux, &mut lists.kustomize);
    // Apply order first; local sources then order stably by depth (S9).
    match memo.as_deref_mut() {
        Some(memo) => memo.order(&mut lists.terraform, &mut lists.kustomize),
        None => {
            ordering::dependency_order(&mut lists.terraform);
            ordering::dependency_order(&mut lists.kustomize);
        }
    }
    ordering::by_name(&mut lists.flux);
    if let Some(tags) = tags {
        tags.apply(&mut lists.terraform, origins);
        tags.apply(&mut lists.kustomize, origins);
    }
    let own_source = template
        .published
        .as_ref()
        .map_or(crate::compose::model::blueprint::TEMPLATE_SOURCE, |p| {
            p.name.as_str()
        });
    flux_shape::shape(
        &mut lists.flux,
        &mut lists.kustomize,
        has_crds,
        own_source,
        origins,
    );
    match memo {
        Some(memo) => memo.mark_inputs(&mut lists.terraform, origins),
        None => deferred::mark_inputs(&mut lists.terraform, origins),
    }
    has_crds.then(|| flux_shape::crds_layer(own_source))
}

/// The lists in the order and shape the blueprint carries them.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, ids, json, Fixture};
    use crate::compose::model::origin::Origins;

    #[test]
    fn components_come_after_what_they_depend_on_and_durations_read_as_go_writes_them() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet(
                "a",
                "terraform:\n  - name: app\n    path: app\n    dependsOn: [zone]\n  - name: zone\n    path: zone\nkustomize:\n  - name: web\n    interval: 90s\n",
            ),
        )]);
        let mut origins = Origins::default();
        let (_, mut lists) = fx.merged(&mut origins);
        super::finish(&mut lists, None, false, &fx.template, &mut origins, None);
        assert_eq!(ids(&lists.terraform), ["zone", "app"]);
        assert_eq!(
            json(&lists.kustomize, "web"),
            r#"{"name":"web","interval":"1m30s"}"#
        );
    }
}
