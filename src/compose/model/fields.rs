//! Composed components' fields: the map that holds them and the order they are
//! written in (S10). What the fields are is the table in [`crate::template::fields`].

use crate::expr::Value;
use crate::template::fields::fields;
use crate::template::ComponentKind;
use crate::value::ordered_map::OrderedMap;

/// A component's fields by name, in the order they are written out.
pub type FieldMap = OrderedMap<&'static str, crate::compose::model::tracked::Tracked>;

/// Puts `map` back in the documented field order of `kind` (S10), whatever order
/// contributions and defaults added fields in. Inlined into collection and the
/// merge, which call it for every component (out of line it costs about 20 M
/// instructions at 10 000 facets).
#[inline]
pub fn sort_in_order(kind: ComponentKind, map: &mut FieldMap) {
    // Mostly they are in order already (a merge that adds no field): one look at the
    // positions instead of a sort, which allocated its keys every time.
    let mut last = 0;
    let ordered = map.keys().all(|k| {
        let at = field_position(kind, k);
        let ok = at >= last;
        last = at;
        ok
    });
    if !ordered {
        map.sort_by_cached_key(|k, _| field_position(kind, k));
    }
}

/// Where field `name` of a `kind` component is written among its fields; unknown
/// names go last.
pub fn field_position(kind: ComponentKind, name: &str) -> usize {
    fields(kind)
        .iter()
        .position(|f| f.name == name)
        .unwrap_or(usize::MAX)
}

/// S10: substitutions are strings — null empty, numbers and booleans plainly, maps
/// and lists as compact JSON.
pub fn substitution_text(v: &Value) -> String {
    match v {
        Value::Nil => String::new(),
        Value::Str(s) => s.to_string(),
        Value::List(_) | Value::Map(_) => crate::value::json::compact(v),
        other => crate::expr::windsor::format::go_format(other),
    }
}
