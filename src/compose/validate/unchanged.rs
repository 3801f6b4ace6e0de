//! Validation remembered: whether the components validate depends only on
//! their identities, their `name` and `path` texts, the names they depend on and the
//! CRD layer — the entries' order, the exclusions and the origins only shape the
//! messages of errors. So when the last composition validated clean and all of that
//! is the same, this one is clean too, and incremental recomposition skips the walk.

use super::Subject;
use crate::compose::model::component::{Component, Merged};
use crate::compose::model::fields::FieldMap;
use crate::compose::model::tracked::Tracked;
use crate::expr::Value;
use std::sync::Arc;

/// What the last clean validation validated; nothing after one that found errors
/// or cycles.
#[derive(Default)]
pub struct Memo {
    clean: Option<Clean>,
}

struct Clean {
    terraform: Vec<Shape>,
    kustomizations: Vec<Shape>,
    crds_layer: Option<String>,
}

/// One component as validation reads it.
struct Shape {
    id: Arc<str>,
    /// The fields the texts below were read from: the same fields (the same
    /// allocation, shared copy-on-write) give the same texts, unread.
    fields: Arc<FieldMap>,
    name: Option<Arc<str>>,
    path: Option<Arc<str>>,
    /// `dependsOn`, each item's text (`None` for an item that is no string).
    depends_on: Vec<Option<Arc<str>>>,
}

impl Shape {
    fn of(c: &Component) -> Shape {
        Shape {
            id: c.id.clone(),
            fields: Arc::clone(&c.fields),
            name: text(c.get("name")).cloned(),
            path: text(c.get("path")).cloned(),
            depends_on: depends_on(c).map(|d| text(Some(d)).cloned()).collect(),
        }
    }

    /// Whether `c` reads as this shape; keeps `c`'s fields when it does.
    fn is(&mut self, c: &Component) -> bool {
        if self.id != c.id {
            return false;
        }
        if Arc::ptr_eq(&self.fields, &c.fields) {
            return true;
        }
        let same = self.name.as_ref() == text(c.get("name"))
            && self.path.as_ref() == text(c.get("path"))
            && self.depends_on.len() == depends_on(c).count()
            && self
                .depends_on
                .iter()
                .zip(depends_on(c))
                .all(|(was, d)| was.as_ref() == text(Some(d)));
        if same {
            self.fields = Arc::clone(&c.fields);
        }
        same
    }
}

fn text(t: Option<&Tracked>) -> Option<&Arc<str>> {
    match t {
        Some(Tracked::Leaf(Value::Str(s), _)) => Some(s),
        _ => None,
    }
}

fn depends_on(c: &Component) -> impl Iterator<Item = &Tracked> {
    match c.get("dependsOn") {
        Some(Tracked::List(items, _)) => items.iter(),
        _ => [].iter(),
    }
}

fn shapes(merged: &Merged) -> Vec<Shape> {
    merged.components.values().map(Shape::of).collect()
}

fn same(shapes: &mut [Shape], merged: &Merged) -> bool {
    shapes.len() == merged.components.len()
        && shapes
            .iter_mut()
            .zip(merged.components.values())
            .all(|(s, c)| s.is(c))
}

impl Memo {
    /// Whether `subject` is what the last clean validation validated.
    pub fn holds(&mut self, subject: &Subject<'_>) -> bool {
        self.clean.as_mut().is_some_and(|c| {
            c.crds_layer.as_deref() == subject.crds_layer
                && same(&mut c.terraform, subject.terraform)
                && same(&mut c.kustomizations, subject.kustomizations)
        })
    }

    /// Remembers that `subject` validated clean.
    pub fn clean(&mut self, subject: &Subject<'_>) {
        self.clean = Some(Clean {
            terraform: shapes(subject.terraform),
            kustomizations: shapes(subject.kustomizations),
            crds_layer: subject.crds_layer.map(str::to_string),
        });
    }

    /// Forgets: the last validation found errors or cycles.
    pub fn forget(&mut self) {
        self.clean = None;
    }
}
