//! Terraform inputs that wait for another component's outputs (`terraform_output()`
//! not known at composition time) are carried in the blueprint as
//! `{expression: "${…}"}`, as the Windsor CLI writes them (S10): a reader can tell a
//! deferred value from a literal string, and resolve it at apply time.

use crate::compose::model::component::{Component, Merged};
use crate::compose::model::origin::Origins;
use crate::compose::model::tracked::Tracked;
use crate::expr::{Map, Value};
use std::sync::Arc;

pub fn mark_inputs(terraform: &mut Merged, origins: &Origins) {
    let mut components: Vec<&mut Component> = terraform.components.values_mut().collect();
    let threads = crate::parallel::cores()
        .min(components.len() / crate::compose::model::blueprint::COMPONENTS_PER_THREAD);
    crate::parallel::for_each_mut(&mut components, threads, |c| mark(c, origins));
}

/// [`mark_inputs`] for one component: a function of its fields and of whether the
/// origins they name are deferred.
pub fn mark(component: &mut Component, origins: &Origins) {
    let deferred = |t: &Tracked| origins.deferred(t.origin());
    if !component
        .get("inputs")
        .is_some_and(|i| any_leaf(i, &deferred))
    {
        return;
    }
    if let Some(inputs) = Arc::make_mut(&mut component.fields).get_mut("inputs") {
        wrap(inputs, &deferred);
    }
}

fn any_leaf(t: &Tracked, deferred: &dyn Fn(&Tracked) -> bool) -> bool {
    match t {
        Tracked::Leaf(Value::Str(_), _) => deferred(t),
        Tracked::Leaf(..) => false,
        Tracked::List(items, _) => items.iter().any(|i| any_leaf(i, deferred)),
        Tracked::Map(entries, _) => entries.values().any(|v| any_leaf(v, deferred)),
    }
}

fn wrap(t: &mut Tracked, deferred: &dyn Fn(&Tracked) -> bool) {
    match t {
        Tracked::Leaf(Value::Str(text), origin)
            if deferred(&Tracked::Leaf(Value::Nil, *origin)) =>
        {
            let mut marker = Map::default();
            marker.insert("expression".into(), Value::Str(text.clone()));
            *t = Tracked::from_value(&Value::map(marker), *origin);
        }
        Tracked::Leaf(..) => {}
        Tracked::List(items, _) => items.iter_mut().for_each(|i| wrap(i, deferred)),
        // A map shared with another tree is copied only where a value is deferred.
        Tracked::Map(entries, _) => {
            if entries.values().any(|v| any_leaf(v, deferred)) {
                Arc::make_mut(entries)
                    .values_mut()
                    .for_each(|v| wrap(v, deferred));
            }
        }
    }
}
