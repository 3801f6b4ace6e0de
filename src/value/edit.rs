//! Writing into a value in place: one map merged deep into another (value layers,
//! config blocks), a value set at a dotted path (`--set`, test values).

use super::{Map, Value};
use std::sync::Arc;

/// Deep merge of `overlay` into `base`: maps merge key by key, anything else replaces.
pub fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Map(b), Value::Map(o)) => {
            let b = Arc::make_mut(b);
            for (k, v) in o.iter() {
                match b.get_mut(k) {
                    Some(existing) => deep_merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// Sets `a.b.c = value` in a map value, creating maps on the way (`--set`, test
/// values with dotted keys).
pub fn set_path(target: &mut Value, path: &[&str], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return;
    };
    if !matches!(target, Value::Map(_)) {
        *target = Value::map(Map::default());
    }
    if let Value::Map(m) = target {
        let m = Arc::make_mut(m);
        let slot = m.entry(Arc::from(*first)).or_insert(Value::Nil);
        if rest.is_empty() {
            *slot = value;
        } else {
            set_path(slot, rest, value);
        }
    }
}
