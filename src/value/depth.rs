//! How deep a value nests. YAML input is bounded while it is read (`yaml::MAX_DEPTH`),
//! but values are also built by expressions (`reduce(1..40000, [#acc], 1)`), by chains
//! of config blocks and by `--set` paths. Every recursive walk over a value (drop,
//! compare, merge, emit, JSON) relies on the bound this module checks, so a value
//! that nests deeper is refused where it is made, never walked.

use super::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The deepest nesting of lists and maps an expression may produce (a scalar is 0,
/// `[1]` is 1). Equal to the YAML reader's bound.
pub const MAX_VALUE_DEPTH: usize = 256;

/// Whether `value` nests lists and maps more than `max` levels deep.
pub fn deeper_than(value: &Value, max: usize) -> bool {
    DepthCheck::default().deeper_than(value, max)
}

/// A depth check that remembers the shared lists and maps it has measured, for a
/// caller that checks many values built from one another (each step of a `reduce`).
///
/// A check visits at most `max + 1` levels and every shared node once (a value built
/// as `[x, x]` over and over is a small graph but an exponentially large tree), so the
/// recursion is bounded by `max` and the cost by the nodes not measured before.
/// Measured nodes are keyed by address and kept alive here, so no address is freed
/// and reused by another value while the check exists.
#[derive(Default)]
pub struct DepthCheck {
    /// Address → `(depth, cap)`: a depth equal to its cap means "at least the cap".
    known: HashMap<usize, (usize, usize)>,
    keep: Vec<Value>,
}

impl DepthCheck {
    /// Whether `value` nests lists and maps more than `max` levels deep.
    pub fn deeper_than(&mut self, value: &Value, max: usize) -> bool {
        self.capped_depth(value, max + 1) > max
    }

    fn capped_depth(&mut self, value: &Value, cap: usize) -> usize {
        if cap == 0 {
            return 0;
        }
        let (key, shared) = match value {
            Value::List(items) => (
                Arc::as_ptr(items) as *const () as usize,
                Arc::strong_count(items) > 1,
            ),
            Value::Map(map) => (
                Arc::as_ptr(map) as *const () as usize,
                Arc::strong_count(map) > 1,
            ),
            _ => return 0,
        };
        if shared {
            if let Some(&(depth, known_cap)) = self.known.get(&key) {
                if depth < known_cap {
                    return depth.min(cap);
                }
                if cap <= known_cap {
                    return cap;
                }
            }
        }
        let mut deepest = 0;
        match value {
            Value::List(items) => {
                for child in items.iter() {
                    deepest = deepest.max(self.capped_depth(child, cap - 1));
                    if deepest + 1 >= cap {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for child in map.values() {
                    deepest = deepest.max(self.capped_depth(child, cap - 1));
                    if deepest + 1 >= cap {
                        break;
                    }
                }
            }
            _ => {}
        }
        let depth = (deepest + 1).min(cap);
        if shared && self.known.insert(key, (depth, cap)).is_none() {
            self.keep.push(value.clone());
        }
        depth
    }
}

/// The error every producer of values reports at the bound.
pub fn too_deep_message() -> String {
    format!("the value nests lists and maps deeper than {MAX_VALUE_DEPTH} levels")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(levels: usize) -> Value {
        let mut v = Value::Int(1);
        for _ in 0..levels {
            v = Value::list(vec![v]);
        }
        v
    }

    #[test]
    fn counts_levels_of_lists_and_maps() {
        assert!(!deeper_than(&Value::Int(1), 0));
        assert!(deeper_than(&nest(1), 0));
        assert!(!deeper_than(&nest(3), 3));
        assert!(deeper_than(&nest(4), 3));
        let mut m = crate::value::Map::default();
        m.insert("a".into(), nest(2));
        assert!(!deeper_than(&Value::map(m.clone()), 3));
        assert!(deeper_than(&Value::map(m), 2));
    }

    #[test]
    fn shared_nodes_are_visited_once() {
        // 200 levels of `[x, x]`: 2^200 paths, 200 distinct lists.
        let mut v = Value::Int(0);
        for _ in 0..200 {
            v = Value::list(vec![v.clone(), v]);
        }
        assert!(!deeper_than(&v, 200));
        assert!(deeper_than(&v, 199));
    }

    #[test]
    fn a_value_far_past_the_bound_is_judged_without_walking_it_all() {
        // Built iteratively; the check stops at the bound. Dropping it afterwards is
        // itself recursive, so the test keeps it modest.
        let v = nest(MAX_VALUE_DEPTH * 4);
        assert!(deeper_than(&v, MAX_VALUE_DEPTH));
    }
}
