//! The test that lets a load keep certainly inactive facets hollow
//! (`template::prune`): a facet's `when` evaluated as the first round of
//! activation (S5) evaluates it, before any facet is active, noting every top-level
//! name it reads.

use crate::compose::scope::Values;
use crate::compose::shared::evaluate::eval_condition;
use crate::compose::shared::expressions::Expressions;
use crate::compose::shared::host::TemplateHost;
use crate::compose::shared::schema::Schema;
use crate::expr::{ExprError, Map, Scope, Value};
use crate::files::{FileMap, FileTree};
use crate::template::prune::Inactive;
use crate::template::Facet;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::Arc;

/// The test for one context whose values are `values` under `schema`; `tree` and
/// `files` the template's. `None` when the context's scope cannot be made (composing
/// then says what is wrong).
pub fn test<'a>(
    with: Expressions<'a>,
    values: &Values<'_>,
    schema: Option<&Schema>,
    tree: Arc<FileTree>,
    files: Arc<FileMap>,
) -> Option<Box<Inactive<'a>>> {
    let context = values.scope(schema, None).ok()?;
    Some(Box::new(move |facet: &Arc<Facet>| {
        false_before_any_block(&with, &tree, &files, &context, facet)
    }))
}

/// `Some(names read)` when `facet`'s `when` is false with no facet active; `None`
/// when it has no `when`, is true, fails (activation reports that) or read the
/// whole scope.
fn false_before_any_block(
    with: &Expressions<'_>,
    tree: &FileTree,
    files: &FileMap,
    context: &Map,
    facet: &Facet,
) -> Option<HashSet<String>> {
    let cond = facet.when.as_ref()?;
    let scope = ContextOnly {
        context,
        names: RefCell::default(),
        all: Cell::new(false),
    };
    let host = TemplateHost {
        tree,
        file: &facet.path,
        environment: with.environment,
        terraform: with.terraform,
        jsonnet: with.limits.jsonnet,
        work: with.work,
    };
    let on = eval_condition(with.engine, cond, &scope, &host, files, &String::new).ok()?;
    (!on && !scope.all.get()).then(|| scope.names.into_inner())
}

/// The scope of the first round of activation: with no facet active no config block
/// counts, so a name reads the context's value (as `config::Resolver` gives it).
/// Every name goes through [`Scope::lookup`], so each one read is noted.
struct ContextOnly<'a> {
    context: &'a Map,
    names: RefCell<HashSet<String>>,
    all: Cell<bool>,
}

impl Scope for ContextOnly<'_> {
    fn lookup(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError> {
        let Some(root) = path.first() else {
            return Ok(None);
        };
        self.names.borrow_mut().insert((*root).to_string());
        Ok(self.context.get(root).map(|v| (v.clone(), 1)))
    }

    fn all(&self) -> Result<Value, ExprError> {
        self.all.set(true);
        Ok(Value::map(self.context.clone()))
    }
}

/// What the test finds for one facet's `when`, in a context with `provider: aws`.
#[cfg(test)]
mod tests {
    use crate::compose::fixture::{facet, Fixture};

    /// The names read by `when` if the test finds it false, sorted.
    fn false_reading(when: &str) -> Option<Vec<String>> {
        let fx = Fixture::new(&[("facets/a.yaml", &facet("a", &format!("when: {when}\n")))])
            .values("values.yaml", "provider: aws\nregion: eu\n");
        let test = super::test(
            fx.with(),
            &fx.value_inputs(),
            None,
            fx.template.tree.clone(),
            fx.template.files.clone(),
        )
        .expect("the values make a scope");
        let names = test(&fx.template.facets[0])?;
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        Some(names)
    }

    #[test]
    fn a_false_when_names_every_name_it_read_defined_or_not() {
        assert_eq!(
            false_reading("provider == 'azure' || feature.on == true"),
            Some(vec!["feature".to_string(), "provider".to_string()])
        );
    }

    #[test]
    fn names_a_short_circuit_skipped_are_not_read_and_cannot_matter() {
        assert_eq!(
            false_reading("provider == 'azure' && feature.on == true"),
            Some(vec!["provider".to_string()])
        );
    }

    #[test]
    fn a_true_or_failing_when_or_one_that_reads_the_whole_scope_is_left_to_activation() {
        assert_eq!(false_reading("provider == 'aws'"), None);
        assert_eq!(false_reading("provider > 3"), None);
        assert_eq!(false_reading("len($env) == 0"), None);
    }

    #[test]
    fn a_facet_without_when_is_left_to_activation() {
        let fx = Fixture::new(&[("facets/a.yaml", &facet("a", ""))]);
        let test = super::test(
            fx.with(),
            &fx.value_inputs(),
            None,
            fx.template.tree.clone(),
            fx.template.files.clone(),
        )
        .expect("the values make a scope");
        assert_eq!(test(&fx.template.facets[0]), None);
    }
}
