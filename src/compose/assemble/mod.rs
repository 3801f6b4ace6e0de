//! Stage 11, assemble: the blueprint as one value (S10) — the base `blueprint.yaml`
//! (with the context's repository and sources, S12), the finished component lists,
//! the facets' blueprint-wide outputs and the fields derived from the context
//! ([`context_fields`]) — checked against the output budget.

pub mod component_values;
pub mod context_fields;

use crate::compose::collect::facet_outputs::FacetOutputs;
use crate::compose::merge::Lists;
use crate::compose::model::component::Merged;
use crate::compose::model::inputs::Builtins;
use crate::compose::model::{blueprint, budget};
use crate::compose::overlay::{self, Overlay};
use crate::compose::shared::schema::Schema;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::Template;

/// What the blueprint is assembled from.
pub struct Assembly<'a> {
    pub template: &'a Template,
    /// The merged `blueprint.yaml` of the template (and its sources) as a plain value.
    pub base: Option<Value>,
    pub overlay: Option<&'a Overlay>,
    pub builtins: &'a Builtins,
    pub lists: &'a Lists,
    /// The caller reads only the blueprint, and its writer converts the components
    /// ([`with_components`] says how): each list of components is left as an empty
    /// list where it goes, and the output budget is checked by the writer, which
    /// measures the components as it converts them. Never set with a memo
    /// (`compose_parts` decides both).
    pub components_apart: bool,
    pub outputs: &'a FacetOutputs,
    /// The composing template's context values and active facets.
    pub context: &'a Map,
    /// The schema, whose defaults the Windsor CLI's config lookups fall back to
    /// (`values-common`'s keys) even when the values were composed without them.
    pub schema: Option<&'a Schema>,
    pub active: &'a [usize],
    pub output_bytes: usize,
    /// The last composition's component values, and where this one's go.
    pub memo: Option<&'a mut component_values::Memo>,
}

/// The blueprint's lists of components, by key, in the order it lists them.
pub const COMPONENT_LISTS: [&str; 3] = ["terraform", "kustomize", "flux"];

/// The composed blueprint, or the error that it is larger than the budget.
pub fn blueprint(mut a: Assembly<'_>) -> Result<Value, Vec<Diagnostic>> {
    let base = match a.overlay {
        Some(overlay) => Some(overlay::base_with_repository(a.base.as_ref(), overlay)),
        None => a.base,
    };
    let outputs = a.outputs;
    let lists = [&a.lists.terraform, &a.lists.kustomize, &a.lists.flux];
    let mut next = component_values::Memo::default();
    let [terraform, kustomize, flux] = match a.components_apart {
        true => Default::default(),
        false => {
            let mut last = a.memo.as_deref_mut();
            lists.map(|merged| component_values::of(merged, last.as_deref_mut(), &mut next))
        }
    };
    let apart: Vec<&str> = match a.components_apart {
        true => COMPONENT_LISTS
            .into_iter()
            .zip(lists)
            .filter(|(_, merged)| !merged.components.is_empty())
            .map(|(key, _)| key)
            .collect(),
        false => Vec::new(),
    };
    let defaults = a.schema.map(Schema::defaults);
    let mut blueprint = blueprint::assemble(blueprint::Parts {
        base: base.as_ref(),
        context: &a.builtins.context,
        terraform,
        kustomize,
        flux,
        apart: &apart,
        backend: outputs.backend.as_deref(),
        crds: &outputs.crds,
        substitutions: &outputs.substitutions,
        config_maps: vec![(
            "values-common",
            context_fields::values_common(
                context_fields::Lookup {
                    values: a.context,
                    defaults,
                },
                &a.builtins.context,
                &outputs.substitutions,
            ),
        )],
        repository: context_fields::dev_repository(a.context, &a.builtins.project_root),
        messages: context_fields::messages(a.template, a.active),
        published: a.template.published.as_ref(),
    });
    if let Some(overlay) = a.overlay {
        overlay::merge_sources(&mut blueprint, overlay);
    }
    if let Some(published) = &a.template.published {
        blueprint::published_crds(&mut blueprint, published);
    }
    if !a.components_apart {
        budget::check_knowing(&blueprint, a.output_bytes, &next.sizes).map_err(|d| vec![d])?;
    }
    if let Some(memo) = a.memo {
        *memo = next;
    }
    Ok(blueprint)
}

/// A blueprint assembled with its components apart ([`Assembly::components_apart`])
/// with them in their places: each of `lists` (in [`COMPONENT_LISTS`]' order) as
/// [`component_values::of`] converts it. What the writer measures and writes item by
/// item, and what a message about the budget is worked out from.
pub fn with_components(blueprint: &Value, lists: [&Merged; 3]) -> Value {
    let mut whole = blueprint.clone();
    if let Value::Map(map) = &mut whole {
        let map = std::sync::Arc::make_mut(map);
        for (key, merged) in COMPONENT_LISTS.into_iter().zip(lists) {
            if let Some(slot) = map.get_mut(key) {
                let values = component_values::of(merged, None, &mut Default::default());
                *slot = Value::list(values);
            }
        }
    }
    whole
}

/// The blueprint as one value.
#[cfg(test)]
mod tests {
    use super::{blueprint, Assembly};
    use crate::compose::fixture::{facet, messages, Fixture};
    use crate::compose::model::origin::Origins;

    fn assembled(fx: &Fixture, output_bytes: usize) -> Result<String, String> {
        let mut origins = Origins::default();
        let (collected, lists) = fx.merged(&mut origins);
        blueprint(Assembly {
            template: &fx.template,
            base: None,
            overlay: None,
            builtins: &fx.builtins,
            lists: &lists,
            components_apart: false,
            outputs: &collected.outputs,
            context: &collected.context,
            schema: None,
            active: &collected.activation.active,
            output_bytes,
            memo: None,
        })
        .map(|b| crate::value::json::compact(&b))
        .map_err(|ds| messages(&ds))
    }

    #[test]
    fn the_blueprint_lists_its_fields_in_the_windsor_order() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet("a", "terraform:\n  - name: net\n    path: net\n"),
        )]);
        let text = assembled(&fx, 1 << 20).expect("within budget");
        let keys: Vec<&str> = [
            "\"kind\"",
            "\"apiVersion\"",
            "\"metadata\"",
            "\"terraform\"",
        ]
        .into_iter()
        .filter(|k| text.contains(k))
        .collect();
        assert_eq!(keys.len(), 4, "{text}");
        let at = |k: &str| text.find(k).unwrap_or(usize::MAX);
        assert!(at("\"kind\"") < at("\"apiVersion\""), "{text}");
        assert!(at("\"metadata\"") < at("\"terraform\""), "{text}");
        assert!(
            text.contains(r#""terraform":[{"name":"net","path":"net"}]"#),
            "{text}"
        );
    }

    #[test]
    fn a_blueprint_over_the_budget_is_an_error() {
        let fx = Fixture::new(&[(
            "facets/a.yaml",
            &facet("a", "terraform:\n  - name: net\n    path: net\n"),
        )]);
        let error = assembled(&fx, 16).expect_err("over budget");
        assert!(error.contains("16"), "{error}");
    }
}
