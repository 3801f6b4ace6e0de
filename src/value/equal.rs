//! Deep equality of values: one function, with the rules as a parameter, because the
//! callers need different answers to three questions — is `3` (int) the same as `3`
//! (uint), is NaN the same as NaN (and `-0.0` as `0.0`), does map key order count.
//!
//! The expression operator `==` is not this: it compares numbers across all numeric
//! types (Go's `runtime.Equal`) and uses [`Equality::GO_DEEP`] only for maps.

use super::Value;

/// The rules of one comparison. Use the named presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Equality {
    /// `Int(3)` equals `Uint(3)`; else integers of different types differ.
    integers_by_value: bool,
    floats: Floats,
    /// Maps must list their keys in the same order.
    ordered_keys: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Floats {
    /// IEEE `==`: NaN differs from everything, `-0.0` equals `0.0`.
    Ieee,
    /// IEEE `==`, except that any NaN equals any NaN.
    NanEqualsNan,
    /// Same bits (any NaN equals any NaN, `-0.0` differs from `0.0`).
    Bits,
}

impl Equality {
    /// Go's `reflect.DeepEqual` on the values Windsor holds: types must match exactly.
    /// What `==` on two maps means in an expression.
    pub const GO_DEEP: Equality = Equality {
        integers_by_value: false,
        floats: Floats::Ieee,
        ordered_keys: false,
    };

    /// The same data, wherever it came from: a YAML `3` (int) equals an expression's
    /// `3` (uint). Merges (`AppendUnique`), test matchers, the sources check.
    pub const DATA: Equality = Equality {
        integers_by_value: true,
        ..Equality::GO_DEEP
    };

    /// The same result as a reference run printed: as [`Equality::DATA`], and a NaN
    /// expected is a NaN got (expression conformance).
    pub const SAME_RESULT: Equality = Equality {
        floats: Floats::NanEqualsNan,
        ..Equality::DATA
    };

    /// Indistinguishable: the same types (`Int(3)` differs from `Uint(3)`), the same
    /// bits, keys in the same order. What a cache may treat as "unchanged".
    pub const IDENTICAL: Equality = Equality {
        integers_by_value: false,
        floats: Floats::Bits,
        ordered_keys: true,
    };

    /// The same document, to the bit and in order: what a writer and a reader must
    /// agree on in a round trip.
    pub const SAME_DOCUMENT: Equality = Equality {
        integers_by_value: true,
        floats: Floats::Bits,
        ordered_keys: true,
    };
}

impl Value {
    /// Whether `self` and `other` are equal under `rules`.
    pub fn equals(&self, other: &Value, rules: Equality) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Str(x), Value::Str(y)) => x == y,
            (Value::Int(x), Value::Int(y)) => x == y,
            (Value::Uint(x), Value::Uint(y)) => x == y,
            (Value::Int(x), Value::Uint(y)) | (Value::Uint(y), Value::Int(x)) => {
                rules.integers_by_value && u64::try_from(*x).is_ok_and(|x| x == *y)
            }
            (Value::Float(x), Value::Float(y)) => match rules.floats {
                Floats::Ieee => x == y,
                Floats::NanEqualsNan => (x.is_nan() && y.is_nan()) || x == y,
                Floats::Bits => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
            },
            (Value::List(x), Value::List(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.equals(q, rules))
            }
            (Value::Map(x), Value::Map(y)) if rules.ordered_keys => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((kp, vp), (kq, vq))| kp == kq && vp.equals(vq, rules))
            }
            (Value::Map(x), Value::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| v.equals(w, rules)))
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::map(
            entries
                .iter()
                .map(|(k, v)| ((*k).into(), v.clone()))
                .collect::<Map>(),
        )
    }

    #[test]
    fn presets_differ_where_documented() {
        let (int, uint) = (Value::Int(3), Value::Uint(3));
        assert!(!int.equals(&uint, Equality::GO_DEEP));
        assert!(int.equals(&uint, Equality::DATA));
        assert!(!Value::Int(-1).equals(&Value::Uint(u64::MAX), Equality::DATA));

        let nan = Value::Float(f64::NAN);
        assert!(!nan.equals(&nan, Equality::DATA));
        assert!(nan.equals(&nan, Equality::SAME_RESULT));
        assert!(nan.equals(&nan, Equality::SAME_DOCUMENT));
        let (zero, minus_zero) = (Value::Float(0.0), Value::Float(-0.0));
        assert!(zero.equals(&minus_zero, Equality::SAME_RESULT));
        assert!(!zero.equals(&minus_zero, Equality::SAME_DOCUMENT));

        let ab = map(&[("a", Value::Int(1)), ("b", Value::Nil)]);
        let ba = map(&[("b", Value::Nil), ("a", Value::Int(1))]);
        assert!(ab.equals(&ba, Equality::DATA));
        assert!(!ab.equals(&ba, Equality::SAME_DOCUMENT));
        assert!(!Value::Int(1).equals(&Value::Float(1.0), Equality::DATA));
    }
}
