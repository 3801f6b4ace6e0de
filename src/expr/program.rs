//! A compiled expression: a tree with names resolved (scope paths, `let` slots,
//! closure pointers), builtins bound to their implementations and constants folded.
//! Immutable, so one `Program` can run on many threads at once.

use super::ast::BinOp;
use super::builtins::Builtin;
use super::native::NativeFn;
use crate::value::Value;
use regex::Regex;
use std::ops::Range;
use std::sync::Arc;

#[derive(Debug)]
pub struct Program {
    pub(crate) root: Expr,
    pub(crate) source: Arc<str>,
    /// It calls a host function (files, environment, Terraform outputs).
    pub(crate) calls_host: bool,
}

impl Program {
    /// The text this program was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether its result depends on nothing but the scope it runs against: it calls
    /// no host function.
    pub fn is_pure(&self) -> bool {
        !self.calls_host
    }
}

#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Range<usize>,
}

/// The closure builtins, evaluated by the evaluator itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    Map,
    Filter,
    All,
    Any,
    None,
    One,
    Count,
    Sum,
    Find,
    FindIndex,
    FindLast,
    FindLastIndex,
    GroupBy,
    SortBy,
    Reduce,
}

impl Pred {
    pub fn from_name(name: &str) -> Option<Pred> {
        Some(match name {
            "map" => Pred::Map,
            "filter" => Pred::Filter,
            "all" => Pred::All,
            "any" => Pred::Any,
            "none" => Pred::None,
            "one" => Pred::One,
            "count" => Pred::Count,
            "sum" => Pred::Sum,
            "find" => Pred::Find,
            "findIndex" => Pred::FindIndex,
            "findLast" => Pred::FindLast,
            "findLastIndex" => Pred::FindLastIndex,
            "groupBy" => Pred::GroupBy,
            "sortBy" => Pred::SortBy,
            "reduce" => Pred::Reduce,
            _ => return None,
        })
    }
}

/// A constant member name with its hash under the maps' hasher, computed at compile
/// time so a run looks it up without hashing it ([`crate::value::ordered_map::OrderedMap::get_hashed`]).
pub struct Key {
    pub name: Arc<str>,
    pub hash: u64,
}

impl Key {
    pub fn new(name: Arc<str>) -> Key {
        let hash = crate::value::key_hash(&name);
        Key { name, hash }
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.name)
    }
}

/// A plain one-byte tag: the evaluator dispatches on it for every node, and a tag
/// folded into a field's niche costs several instructions to decode.
#[repr(u8)]
pub enum ExprKind {
    Const(Value),
    /// A `let` binding, by slot.
    Local(usize),
    /// A name from the scope followed by constant keys, resolved in one lookup.
    Path {
        root: Key,
        rest: Box<[Key]>,
    },
    /// `$env` itself.
    Env,
    /// `#` (and the receiver of `.field`), `#index`, `#acc`.
    Elem,
    Index,
    Acc,
    Fetch(Box<Expr>, Box<Expr>),
    FetchKey(Box<Expr>, Value),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `==`/`!=` between two expressions the checker typed as int (Go's `OpEqualInt`).
    EqInt {
        negate: bool,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `==`/`!=` with one constant side (`provider == 'aws'`): the operand is read by
    /// reference and compared without going through the generic binary operator.
    /// `const_left` keeps the operand order of the source.
    EqConst {
        negate: bool,
        operand: Box<Expr>,
        value: Value,
        const_left: bool,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `l ?? r`: `r` is evaluated only when `l` is nil, as Go's `OpJumpIfNotNil`.
    Coalesce(Box<Expr>, Box<Expr>),
    /// `matches` with a pattern known at compile time.
    MatchesConst(Box<Expr>, Arc<Regex>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Let {
        value: Box<Expr>,
        body: Box<Expr>,
    },
    Seq(Vec<Expr>),
    Builtin(&'static Builtin, Vec<Expr>),
    Pred {
        pred: Pred,
        collection: Box<Expr>,
        body: Option<Box<Expr>>,
        extra: Option<Box<Expr>>,
    },
    Native(NativeFn, Vec<Expr>),
    /// A call of something that is not a function: fails at run time like Go.
    CallValue(Box<Expr>),
}

impl std::fmt::Debug for ExprKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExprKind::Const(v) => write!(f, "Const({v:?})"),
            ExprKind::Path { root, rest } => write!(f, "Path({}, {rest:?})", root.name),
            ExprKind::Builtin(b, args) => write!(f, "Builtin({}, {args:?})", b.name),
            ExprKind::Native(n, args) => write!(f, "Native({}, {args:?})", n.name),
            ExprKind::Binary(op, a, b) => write!(f, "Binary({op:?}, {a:?}, {b:?})"),
            _ => f.write_str("Expr"),
        }
    }
}
