//! What finishing did, remembered across compositions.
//!
//! Tidying a component ([`blueprint::clean_component`]) is a function of its kind and
//! fields; marking its deferred inputs ([`deferred::mark`]) of its fields and of the
//! origins they name, whose entries never change while the origin table goes on (a
//! table started afresh gives the facets it copies new fields). Fields are shared
//! copy-on-write from merging on, so a component an edit did not reach comes to this
//! stage with the very fields (the same allocation) it came with last time, and takes
//! what the step gave then from [`Fields`].
//!
//! The dependency order is a function of the ids in list order and of the names each
//! component depends on: [`Order`] hands back the last order where those are the same.

use super::deferred;
use super::ordering;
use crate::compose::model::blueprint;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::fields::FieldMap;
use crate::compose::model::origin::Origins;
use crate::compose::model::tracked::Tracked;
use crate::compose::shared::by_position::ByPosition;
use std::sync::Arc;

/// The last composition's finishing.
#[derive(Default)]
pub struct Memo {
    terraform_cleaned: Fields,
    kustomize_cleaned: Fields,
    terraform_marked: Fields,
    terraform_order: Order,
    kustomize_order: Order,
}

impl Memo {
    pub(super) fn clean(&mut self, terraform: &mut Merged, kustomize: &mut Merged) {
        self.terraform_cleaned
            .through(terraform, blueprint::clean_component);
        self.kustomize_cleaned
            .through(kustomize, blueprint::clean_component);
    }

    pub(super) fn order(&mut self, terraform: &mut Merged, kustomize: &mut Merged) {
        self.terraform_order.apply(terraform);
        self.kustomize_order.apply(kustomize);
    }

    pub(super) fn mark_inputs(&mut self, terraform: &mut Merged, origins: &Origins) {
        self.terraform_marked
            .through(terraform, |c| deferred::mark(c, origins));
    }
}

/// What one step made of each component's fields, by the fields it was given (see
/// [`ByPosition`]).
#[derive(Default)]
pub struct Fields {
    gave: ByPosition<Arc<FieldMap>>,
}

impl Fields {
    /// Applies `step` to every component of `merged`, or gives a component what it
    /// gave last time for the same fields; remembers this composition's for the next.
    pub fn through(&mut self, merged: &mut Merged, step: impl Fn(&mut Component)) {
        let last = &mut self.gave;
        let mut next = ByPosition::default();
        next.reserve(merged.components.len());
        let start = last.start_list(merged.components.len());
        for (i, component) in merged.components.values_mut().enumerate() {
            let given = Arc::clone(&component.fields);
            match last.find(start + i, component) {
                Some(gave) => component.fields = Arc::clone(gave),
                None => step(component),
            }
            let gave = Arc::clone(&component.fields);
            next.keep(component, given, gave);
        }
        self.gave = next;
    }
}

/// The last dependency order: the list it was found for (ids and fields, in list
/// order) and the positions it gave.
#[derive(Default)]
pub struct Order {
    ids: Vec<Arc<str>>,
    fields: Vec<Arc<FieldMap>>,
    order: Vec<usize>,
}

impl Order {
    /// Puts `merged` in dependency order ([`ordering::dependency_order`]), taking the
    /// order from the memo when the list is the one it was found for.
    pub fn apply(&mut self, merged: &mut Merged) {
        if !self.fits(merged) {
            self.ids = merged.components.keys().cloned().collect();
            self.fields = merged
                .components
                .values()
                .map(|c| Arc::clone(&c.fields))
                .collect();
            self.order = ordering::order_of(merged);
        } else {
            // The fields of components whose dependencies read the same.
            for (kept, component) in self.fields.iter_mut().zip(merged.components.values()) {
                *kept = Arc::clone(&component.fields);
            }
        }
        ordering::place(merged, &self.order);
    }

    /// Whether `merged` lists the same ids in the same order, each depending on the
    /// same names.
    fn fits(&self, merged: &Merged) -> bool {
        self.ids.len() == merged.components.len()
            && merged
                .components
                .iter()
                .zip(self.ids.iter().zip(&self.fields))
                .all(|((id, component), (kept_id, kept))| {
                    id == kept_id
                        && (Arc::ptr_eq(kept, &component.fields)
                            || same_dependencies(kept.get("dependsOn"), component.get("dependsOn")))
                })
    }
}

/// Whether two `dependsOn` fields name the same components, in the same order (what
/// the ordering reads of them).
fn same_dependencies(a: Option<&Tracked>, b: Option<&Tracked>) -> bool {
    dependency_names(a) == dependency_names(b)
}

fn dependency_names(t: Option<&Tracked>) -> Vec<Option<&str>> {
    match t {
        Some(Tracked::List(items, _)) => items.iter().map(Tracked::as_str).collect(),
        // Not a list: read as no dependencies, but never taken as equal to none.
        Some(_) => vec![None],
        None => Vec::new(),
    }
}

/// The memo hands back what the step gave for the same fields, and nothing else.
#[cfg(test)]
mod tests {
    use super::{Fields, Order};
    use crate::compose::fixture::{facet, ids, Fixture};
    use crate::compose::model::component::Merged;
    use crate::compose::model::origin::Origins;
    use std::cell::Cell;
    use std::sync::Arc;

    fn terraform(components: &str) -> Merged {
        let fx = Fixture::new(&[("facets/a.yaml", &facet("a", components))]);
        fx.merged(&mut Origins::default()).1.terraform
    }

    #[test]
    fn a_component_given_the_same_fields_takes_what_the_step_gave_them() {
        let first = terraform("terraform:\n  - name: x\n    path: x\n  - name: y\n    path: y\n");
        let mut memo = Fields::default();
        let calls = Cell::new(0);
        let step = |c: &mut crate::compose::model::component::Component| {
            calls.set(calls.get() + 1);
            Arc::make_mut(&mut c.fields).shift_remove("path");
        };
        let mut once = first.clone();
        memo.through(&mut once, step);
        assert_eq!(calls.get(), 2);

        // The same fields again: nothing goes through the step, the results are the
        // very fields it gave.
        let mut twice = first.clone();
        memo.through(&mut twice, step);
        assert_eq!(calls.get(), 2);
        for id in ["x", "y"] {
            assert!(Arc::ptr_eq(
                &once.components[id].fields,
                &twice.components[id].fields
            ));
        }

        // Fields equal to the last ones but not the same allocation go through it.
        let mut again = first.clone();
        let y = again.components.get_mut("y").expect("y");
        y.fields = Arc::new((*y.fields).clone());
        memo.through(&mut again, step);
        assert_eq!(calls.get(), 3);
        assert!(!again.components["y"].fields.contains_key("path"));
    }

    #[test]
    fn the_order_is_found_again_when_a_dependency_changes() {
        let mut memo = Order::default();
        let mut before = terraform(
            "terraform:\n  - name: a\n    path: a\n    dependsOn: [b]\n  - name: b\n    path: b\n",
        );
        memo.apply(&mut before);
        assert_eq!(ids(&before), ["b", "a"]);
        // The same ids in the same order, the dependency the other way round.
        let mut after = terraform(
            "terraform:\n  - name: a\n    path: a\n  - name: b\n    path: b\n    dependsOn: [a]\n",
        );
        memo.apply(&mut after);
        assert_eq!(ids(&after), ["a", "b"]);
        // And the same list again takes the order it was given.
        let mut same = terraform(
            "terraform:\n  - name: a\n    path: a\n  - name: b\n    path: b\n    dependsOn: [a]\n",
        );
        memo.apply(&mut same);
        assert_eq!(ids(&same), ["a", "b"]);
    }
}
