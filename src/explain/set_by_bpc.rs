//! Values bpc set itself (a default, a dependency it adds), each with the rule that
//! set it: no contribution wrote them, so the steps of `explain` cannot say why they
//! are there.

use crate::compose::model::origin::{Contributor, Origins};
use crate::compose::model::tracked::Tracked;
use std::fmt::Write;

/// Adds a line `  - PATH = VALUE: RULE` to `out` for every value under `t` (found at
/// `path`) that a rule of bpc set.
pub(super) fn lines(t: &Tracked, path: &str, origins: &Origins, out: &mut String) {
    match t {
        Tracked::Leaf(value, origin) => {
            if let &Contributor::Derived(rule) = origins.contributor(*origin) {
                let value = super::show(value);
                let _ = writeln!(out, "  - {path} = {value}: {}", rule.says());
            }
        }
        Tracked::List(items, _) => {
            for (i, item) in items.iter().enumerate() {
                lines(item, &format!("{path}[{i}]"), origins, out);
            }
        }
        Tracked::Map(entries, _) => {
            for (key, value) in entries.iter() {
                lines(value, &format!("{path}.{key}"), origins, out);
            }
        }
    }
}
