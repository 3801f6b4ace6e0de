//! What the checker knows about an expression before it runs. Without a typed
//! environment only literals, `let` bindings of them and builtin results have a
//! known type; everything read from the scope is `Unknown` (Go's `interface {}`).

use super::native::Ty as ParamTy;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Unknown,
    /// The `nil` literal: not "unknown", it fails every typed operation.
    Nil,
    Bool,
    Int,
    Float,
    Str,
    List,
    Map,
    /// A builtin function named as a value (`count + 1`).
    Func,
}

impl Ty {
    pub fn is_unknown(self) -> bool {
        self == Ty::Unknown
    }
    pub fn is_number(self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }
    /// Go's `reflect` kind name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Unknown => "interface {}",
            Ty::Nil => "unknown",
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Float => "float64",
            Ty::Str => "string",
            Ty::List => "[]interface {}",
            Ty::Map => "map[string]interface {}",
            Ty::Func => "func",
        }
    }

    /// Whether a value of this type may be passed where a host function declares `p`.
    pub fn fits_param(self, p: ParamTy) -> bool {
        matches!(
            (self, p),
            (Ty::Unknown, _)
                | (_, ParamTy::Any)
                | (Ty::Str, ParamTy::Str)
                | (Ty::Int, ParamTy::Int)
                | (Ty::Float, ParamTy::Float)
                | (Ty::Bool, ParamTy::Bool)
                | (Ty::List, ParamTy::List)
                | (Ty::Map, ParamTy::Map)
        )
    }

    pub fn from_param(p: ParamTy) -> Ty {
        match p {
            ParamTy::Any => Ty::Unknown,
            ParamTy::Str => Ty::Str,
            ParamTy::Int => Ty::Int,
            ParamTy::Float => Ty::Float,
            ParamTy::Bool => Ty::Bool,
            ParamTy::List => Ty::List,
            ParamTy::Map => Ty::Map,
        }
    }
}

/// Go's `isComparable` for `==`/`!=` and list membership.
pub fn comparable(l: Ty, r: Ty) -> bool {
    l.is_unknown()
        || r.is_unknown()
        || l == Ty::Nil
        || r == Ty::Nil
        || (l.is_number() && r.is_number())
        || (l == Ty::List && r == Ty::List)
        || l == r
}

/// Go's `or(l, r, preds…)`: an unknown side is fine when the other one is unknown or
/// satisfies one of the predicates.
pub fn either_unknown(l: Ty, r: Ty, ok: impl Fn(Ty) -> bool) -> bool {
    (l.is_unknown() && r.is_unknown()) || (l.is_unknown() && ok(r)) || (r.is_unknown() && ok(l))
}
