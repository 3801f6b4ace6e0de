//! Runs a [`Program`] tree against a scope. Recursion depth is bounded by the tree
//! height the parser allows; work and allocation are bounded by a [`Budget`].

use super::ast::BinOp;
use super::budget::Budget;
use super::builtins::gofmt::sprint_key;
use super::builtins::sort_values;
use super::error::{ErrorKind, ExprError};
use super::host::Host;
use super::limits::MAX_STRING;
use super::native::{Call, NativeError, NativeErrorKind};
use super::ops;
use super::program::{Expr, ExprKind, Key, Pred};
use super::reentry::{Reenter, Reentry};
use super::scope::Peek;
use super::scope::Scope;
use crate::value::depth::{too_deep_message, DepthCheck, MAX_VALUE_DEPTH};
use crate::value::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

struct Frame {
    elem: Value,
    index: usize,
    acc: Value,
}

/// `let` values and closure frames. Most expressions use neither, so the evaluator
/// allocates them on first use: creating and dropping an evaluator stays cheap.
#[derive(Default)]
struct Stacks {
    locals: Vec<Value>,
    frames: Vec<Frame>,
}

pub struct Evaluator<'a> {
    /// The engine, for host functions that render templates themselves.
    pub engine: &'a dyn Reenter,
    pub scope: &'a dyn Scope,
    pub host: &'a dyn Host,
    /// How many host functions re-entered the engine to get here.
    pub reentry: u32,
    stacks: Option<Box<Stacks>>,
    budget: Budget<'a>,
    /// Measures the values this evaluation returns and accumulates (boxed: most
    /// evaluations return a scalar and never need it).
    depth: Option<Box<DepthCheck>>,
}

fn run_err(e: &Expr, message: impl Into<String>) -> ExprError {
    ExprError::run(message, e.span.clone())
}

type EResult = Result<Value, ExprError>;

/// A value lent by the program or the scope where possible, owned where evaluation
/// built it. Reading by reference skips the reference counting that cloning a
/// string, list or map costs (an atomic increment and decrement each).
type Peeked<'x> = Result<Cow<'x, Value>, ExprError>;

/// Calls with up to this many arguments pass them without a heap allocation.
const INLINE_ARGS: usize = 4;

/// The evaluated arguments of a call.
enum Args {
    Inline([Value; INLINE_ARGS], usize),
    Heap(Vec<Value>),
}

impl std::ops::Deref for Args {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        match self {
            Args::Inline(values, n) => &values[..*n],
            Args::Heap(values) => values,
        }
    }
}

/// Nil, to lend out by reference.
static NIL: Value = Value::Nil;

/// Member access by reference on maps and nil; `None` for any other base, whose
/// access `ops::fetch` decides (an error for a string key).
fn member<'v>(base: &'v Value, key: &str) -> Option<&'v Value> {
    match base {
        Value::Nil => Some(&NIL),
        Value::Map(m) => Some(m.get(key).unwrap_or(&NIL)),
        _ => None,
    }
}

/// [`member`] with a constant name hashed at compile time.
fn member_key<'v>(base: &'v Value, key: &Key) -> Option<&'v Value> {
    match base {
        Value::Nil => Some(&NIL),
        Value::Map(m) => Some(m.get_hashed(&key.name, key.hash).unwrap_or(&NIL)),
        _ => None,
    }
}

/// The longest constant-key chain resolved through one `Scope::lookup` call.
const PATH_BUFFER: usize = 16;

impl<'a> Evaluator<'a> {
    pub fn new(
        engine: &'a dyn Reenter,
        scope: &'a dyn Scope,
        host: &'a dyn Host,
        reentry: u32,
    ) -> Self {
        Evaluator {
            engine,
            scope,
            host,
            reentry,
            stacks: None,
            budget: Budget::charging(host.work()),
            depth: None,
        }
    }

    /// Evaluates a whole program: [`Evaluator::eval`], then the result is refused if
    /// it nests deeper than [`MAX_VALUE_DEPTH`], so no caller ever walks such a value.
    pub fn eval_root(&mut self, e: &Expr) -> EResult {
        let value = self.eval(e)?;
        self.budget.settle().map_err(|m| run_err(e, m))?;
        self.bounded(e, value)
    }

    /// `value` if it nests at most [`MAX_VALUE_DEPTH`] levels, else an error at `e`.
    fn bounded(&mut self, e: &Expr, value: Value) -> EResult {
        if !matches!(value, Value::List(_) | Value::Map(_)) {
            return Ok(value);
        }
        let check = self.depth.get_or_insert_with(Box::default);
        if check.deeper_than(&value, MAX_VALUE_DEPTH) {
            return Err(run_err(e, too_deep_message()));
        }
        Ok(value)
    }

    fn stacks(&mut self) -> &mut Stacks {
        self.stacks.get_or_insert_with(Box::default)
    }

    /// The innermost closure frame.
    fn frame(&self) -> Option<&Frame> {
        self.stacks.as_ref().and_then(|s| s.frames.last())
    }

    /// Evaluates `e`, borrowing the result when the program or the scope holds it.
    fn peek<'x>(&mut self, e: &'x Expr) -> Peeked<'x>
    where
        'a: 'x,
    {
        match &e.kind {
            ExprKind::Const(v) => Ok(Cow::Borrowed(v)),
            ExprKind::Path { root, rest } => self.path(e, root, rest),
            ExprKind::FetchKey(base, key) => {
                let b = self.peek(base)?;
                if let (Cow::Borrowed(b), Value::Str(k)) = (&b, key) {
                    if let Some(v) = member(b, k) {
                        return Ok(Cow::Borrowed(v));
                    }
                }
                ops::fetch(&b, key)
                    .map(Cow::Owned)
                    .map_err(|m| run_err(e, m))
            }
            ExprKind::Coalesce(l, r) => {
                let a = self.peek(l)?;
                if a.is_nil() {
                    self.peek(r)
                } else {
                    Ok(a)
                }
            }
            ExprKind::Cond(c, a, b) => {
                if self.test(c, c)? {
                    self.peek(a)
                } else {
                    self.peek(b)
                }
            }
            _ => self.eval(e).map(Cow::Owned),
        }
    }

    pub fn eval(&mut self, e: &Expr) -> EResult {
        match &e.kind {
            ExprKind::Const(_)
            | ExprKind::Path { .. }
            | ExprKind::FetchKey(..)
            | ExprKind::Coalesce(..)
            | ExprKind::Cond(..) => self.peek(e).map(Cow::into_owned),
            ExprKind::Local(slot) => Ok(self
                .stacks
                .as_ref()
                .and_then(|s| s.locals.get(*slot))
                .cloned()
                .unwrap_or(Value::Nil)),
            ExprKind::Env => self.scope.all(),
            ExprKind::Elem => Ok(self.frame().map_or(Value::Nil, |f| f.elem.clone())),
            ExprKind::Index => Ok(Value::Int(self.frame().map_or(0, |f| f.index as i64))),
            ExprKind::Acc => Ok(self.frame().map_or(Value::Nil, |f| f.acc.clone())),
            ExprKind::Fetch(base, key) => {
                let b = self.eval(base)?;
                let k = self.eval(key)?;
                ops::fetch(&b, &k).map_err(|m| run_err(e, m))
            }
            ExprKind::Slice(base, from, to) => {
                let b = self.eval(base)?;
                let f = match from {
                    Some(x) => Some(self.eval(x)?),
                    None => None,
                };
                let t = match to {
                    Some(x) => Some(self.eval(x)?),
                    None => None,
                };
                ops::slice(&b, f.as_ref(), t.as_ref()).map_err(|m| run_err(e, m))
            }
            ExprKind::Not(x) => self.test(x, e).map(|b| Value::Bool(!b)),
            ExprKind::Neg(x) => {
                let v = self.peek(x)?;
                ops::negate(&v).map_err(|m| run_err(e, m))
            }
            ExprKind::Plus(x) => {
                let v = self.eval(x)?;
                ops::plus(&v).map_err(|m| run_err(e, m))
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.peek(l)?;
                let b = self.peek(r)?;
                self.binary(e, *op, &a, &b)
            }
            ExprKind::EqInt {
                negate,
                left,
                right,
            } => {
                let a = self.peek(left)?;
                let b = self.peek(right)?;
                let a = ops::strict_int(&a).map_err(|m| run_err(e, m))?;
                let b = ops::strict_int(&b).map_err(|m| run_err(e, m))?;
                Ok(Value::Bool((a == b) != *negate))
            }
            ExprKind::EqConst { .. } => self.test(e, e).map(Value::Bool),
            ExprKind::And(l, r) => {
                if self.test(l, l)? {
                    self.eval(r)
                } else {
                    Ok(Value::Bool(false))
                }
            }
            ExprKind::Or(l, r) => {
                if self.test(l, l)? {
                    Ok(Value::Bool(true))
                } else {
                    self.eval(r)
                }
            }
            ExprKind::MatchesConst(l, re) => {
                let a = self.peek(l)?;
                match &*a {
                    Value::Nil => Ok(Value::Bool(false)),
                    other => {
                        let s = ops::as_str(other).map_err(|m| run_err(e, m))?;
                        Ok(Value::Bool(re.is_match(s)))
                    }
                }
            }
            ExprKind::List(items) => {
                self.budget.grow(items.len()).map_err(|m| run_err(e, m))?;
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(i)?);
                }
                Ok(Value::list(out))
            }
            ExprKind::Map(pairs) => {
                self.budget.grow(pairs.len()).map_err(|m| run_err(e, m))?;
                let mut out = Map::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let key = self.eval(k)?;
                    let key: Arc<str> = match key {
                        Value::Str(s) => s,
                        other => {
                            return Err(run_err(
                                k,
                                format!(
                                    "interface conversion: interface {{}} is {}, not string",
                                    ops::go_type(&other)
                                ),
                            ))
                        }
                    };
                    let value = self.eval(v)?;
                    out.entry(key).or_insert(value);
                }
                Ok(Value::map(out))
            }
            ExprKind::Let { value, body } => {
                let v = self.eval(value)?;
                self.stacks().locals.push(v);
                let result = self.eval(body);
                self.stacks().locals.pop();
                result
            }
            ExprKind::Seq(items) => {
                let mut last = Value::Nil;
                for i in items {
                    last = self.eval(i)?;
                }
                Ok(last)
            }
            ExprKind::Builtin(def, args) => {
                let values = self.args(args)?;
                (def.call)(&values, &mut self.budget).map_err(|m| run_err(e, m))
            }
            ExprKind::Pred {
                pred,
                collection,
                body,
                extra,
            } => self.predicate(e, *pred, collection, body.as_deref(), extra.as_deref()),
            ExprKind::Native(f, args) => {
                let values = self.args(args)?;
                let reentry = Reentry {
                    engine: self.engine,
                    scope: self.scope,
                    host: self.host,
                    depth: self.reentry,
                };
                let call = Call {
                    host: self.host,
                    interp: &reentry,
                };
                (f.call)(&call, &values).map_err(|n| native_error(e, n))
            }
            ExprKind::CallValue(callee) => {
                let v = self.eval(callee)?;
                Err(run_err(
                    e,
                    match v {
                        Value::Nil => "invalid operation: cannot call nil".to_string(),
                        other => format!("invalid operation: cannot call {}", ops::go_type(&other)),
                    },
                ))
            }
        }
    }

    /// Evaluates `e` as a condition, without building a [`Value`] for the comparisons
    /// and logic operators conditions are made of. A result that is not a bool is the
    /// error Go reports, at `blame` (the node whose value the caller converts).
    fn test(&mut self, e: &Expr, blame: &Expr) -> Result<bool, ExprError> {
        match &e.kind {
            ExprKind::EqConst {
                negate,
                operand,
                value,
                const_left,
            } => {
                // Mostly a scope path: skip the dispatch through `peek`.
                let v = match &operand.kind {
                    ExprKind::Path { root, rest } => self.path(operand, root, rest)?,
                    _ => self.peek(operand)?,
                };
                let eq = if *const_left {
                    ops::equal(value, &v)
                } else {
                    ops::equal(&v, value)
                };
                Ok(eq != *negate)
            }
            // `l && r` is `r`'s value when `l` holds: its conversion is the caller's.
            ExprKind::And(l, r) => Ok(self.test(l, l)? && self.test(r, blame)?),
            ExprKind::Or(l, r) => Ok(self.test(l, l)? || self.test(r, blame)?),
            ExprKind::Not(x) => Ok(!self.test(x, e)?),
            _ => {
                let v = self.peek(e)?;
                ops::as_bool(&v).map_err(|m| run_err(blame, m))
            }
        }
    }

    fn args(&mut self, args: &[Expr]) -> Result<Args, ExprError> {
        if args.len() <= INLINE_ARGS {
            let mut values: [Value; INLINE_ARGS] = Default::default();
            for (slot, a) in values.iter_mut().zip(args) {
                *slot = self.eval(a)?;
            }
            return Ok(Args::Inline(values, args.len()));
        }
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(a)?);
        }
        Ok(Args::Heap(values))
    }

    fn path<'x>(&mut self, e: &'x Expr, root: &'x Key, rest: &'x [Key]) -> Peeked<'x>
    where
        'a: 'x,
    {
        match self.scope.peek_hashed(&root.name, root.hash) {
            Peek::Undefined => Ok(Cow::Borrowed(&NIL)),
            Peek::Value(mut value) => {
                for (i, seg) in rest.iter().enumerate() {
                    match member_key(value, seg) {
                        Some(next) => value = next,
                        None => {
                            let owned = ops::fetch(value, &Value::Str(seg.name.clone()))
                                .map_err(|m| run_err(e, m))?;
                            return self.fetch_rest(e, owned, &rest[i + 1..]).map(Cow::Owned);
                        }
                    }
                }
                Ok(Cow::Borrowed(value))
            }
            Peek::Lookup => self.path_lookup(e, root, rest).map(Cow::Owned),
        }
    }

    /// A path through [`Scope::lookup`], for scopes that compute their values.
    #[inline(never)]
    fn path_lookup(&mut self, e: &Expr, root: &Key, rest: &[Key]) -> EResult {
        let mut buf: [&str; PATH_BUFFER] = [""; PATH_BUFFER];
        buf[0] = &root.name;
        let n = (rest.len() + 1).min(PATH_BUFFER);
        for (slot, seg) in buf[1..n].iter_mut().zip(rest) {
            *slot = &seg.name;
        }
        let Some((value, used)) = self.scope.lookup(&buf[..n])? else {
            return Ok(Value::Nil);
        };
        let used = used.clamp(1, rest.len() + 1);
        self.fetch_rest(e, value, &rest[used - 1..])
    }

    /// The nil-safe member chain `value.seg1.seg2…` on an owned value.
    fn fetch_rest(&self, e: &Expr, mut value: Value, segs: &[Key]) -> EResult {
        for seg in segs {
            if value.is_nil() {
                return Ok(Value::Nil);
            }
            value = match member_key(&value, seg) {
                Some(v) => v.clone(),
                None => {
                    ops::fetch(&value, &Value::Str(seg.name.clone())).map_err(|m| run_err(e, m))?
                }
            };
        }
        Ok(value)
    }

    fn binary(&mut self, e: &Expr, op: BinOp, a: &Value, b: &Value) -> EResult {
        let r = match op {
            BinOp::Eq => Ok(Value::Bool(ops::equal(a, b))),
            BinOp::Ne => Ok(Value::Bool(!ops::equal(a, b))),
            BinOp::Lt => ops::ordering("<", a, b).map(Value::Bool),
            BinOp::Gt => ops::ordering(">", a, b).map(Value::Bool),
            BinOp::Le => ops::ordering("<=", a, b).map(Value::Bool),
            BinOp::Ge => ops::ordering(">=", a, b).map(Value::Bool),
            BinOp::In => ops::contains_in(a, b).map(Value::Bool),
            BinOp::Contains | BinOp::StartsWith | BinOp::EndsWith | BinOp::Matches => {
                if a.is_nil() || b.is_nil() {
                    return Ok(Value::Bool(false));
                }
                let x = ops::as_str(a).map_err(|m| run_err(e, m))?;
                let y = ops::as_str(b).map_err(|m| run_err(e, m))?;
                Ok(Value::Bool(match op {
                    BinOp::Contains => x.contains(y),
                    BinOp::StartsWith => x.starts_with(y),
                    BinOp::EndsWith => x.ends_with(y),
                    _ => regex::Regex::new(y)
                        .map_err(|m| run_err(e, m.to_string()))?
                        .is_match(x),
                }))
            }
            BinOp::Range => return self.range(e, a, b),
            BinOp::Add => {
                let v = ops::add(a, b).map_err(|m| run_err(e, m))?;
                if matches!(&v, Value::Str(s) if s.len() > MAX_STRING) {
                    return Err(run_err(e, "string exceeds the size limit"));
                }
                // `+` copies both sides: charged as work by the size of its result, so a
                // loop that grows a string or list by one piece per step
                // (`reduce(1..150000, #acc + 'xxxx', '')`, quadratic in copying) meets
                // the step limit instead of running for minutes.
                let copied = match &v {
                    Value::Str(s) => s.len() / 64,
                    Value::List(items) => items.len() / 8,
                    _ => 0,
                };
                self.budget.step(copied as u64).map_err(|m| run_err(e, m))?;
                Ok(v)
            }
            BinOp::Sub => ops::sub(a, b),
            BinOp::Mul => ops::mul(a, b),
            BinOp::Div => ops::div(a, b),
            BinOp::Mod => ops::modulo(a, b),
            BinOp::Pow => ops::pow(a, b),
            // Folded or compiled to dedicated nodes; kept total for safety.
            BinOp::And | BinOp::Or => Ok(Value::Bool(
                ops::as_bool(a).map_err(|m| run_err(e, m))? && ops::as_bool(b).unwrap_or(false),
            )),
            BinOp::Coalesce => Ok(if a.is_nil() { b.clone() } else { a.clone() }),
        };
        r.map_err(|m| run_err(e, m))
    }

    fn range(&mut self, e: &Expr, a: &Value, b: &Value) -> EResult {
        let int = |v: &Value| match v {
            Value::Nil => Err("invalid operation: int(<nil>)".to_string()),
            other => ops::to_int(other),
        };
        let from = int(a).map_err(|m| run_err(e, m))?;
        let to = int(b).map_err(|m| run_err(e, m))?;
        let size = (to as i128) - (from as i128) + 1;
        if size <= 0 {
            return Ok(Value::list(Vec::new()));
        }
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        self.budget.grow(size).map_err(|m| run_err(e, m))?;
        Ok(Value::list((from..=to).map(Value::Int).collect()))
    }

    fn call_body(&mut self, body: &Expr, elem: Value, index: usize, acc: Value) -> EResult {
        self.budget.step(1).map_err(|m| run_err(body, m))?;
        self.stacks().frames.push(Frame { elem, index, acc });
        let r = self.eval(body);
        self.stacks().frames.pop();
        r
    }

    fn call_bool(&mut self, body: &Expr, elem: &Value, index: usize) -> Result<bool, ExprError> {
        let v = self.call_body(body, elem.clone(), index, Value::Nil)?;
        ops::as_bool(&v).map_err(|m| run_err(body, m))
    }

    fn predicate(
        &mut self,
        e: &Expr,
        pred: Pred,
        collection: &Expr,
        body: Option<&Expr>,
        extra: Option<&Expr>,
    ) -> EResult {
        let coll = self.eval(collection)?;
        let items = iterable(&coll).map_err(|m| run_err(e, m))?;
        let items: &[Value] = &items;
        let Some(body) = body else {
            return self.without_closure(e, pred, items);
        };
        match pred {
            Pred::Map => {
                self.budget.grow(items.len()).map_err(|m| run_err(e, m))?;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.push(self.call_body(body, item.clone(), i, Value::Nil)?);
                }
                Ok(Value::list(out))
            }
            Pred::Filter => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if self.call_bool(body, item, i)? {
                        out.push(item.clone());
                    }
                }
                self.budget.grow(out.len()).map_err(|m| run_err(e, m))?;
                Ok(Value::list(out))
            }
            Pred::All | Pred::Any | Pred::None => {
                for (i, item) in items.iter().enumerate() {
                    let hit = self.call_bool(body, item, i)?;
                    match (pred, hit) {
                        (Pred::All, false) => return Ok(Value::Bool(false)),
                        (Pred::Any, true) => return Ok(Value::Bool(true)),
                        (Pred::None, true) => return Ok(Value::Bool(false)),
                        _ => {}
                    }
                }
                Ok(Value::Bool(pred != Pred::Any))
            }
            Pred::One | Pred::Count => {
                let mut n = 0i64;
                for (i, item) in items.iter().enumerate() {
                    if self.call_bool(body, item, i)? {
                        n += 1;
                    }
                }
                Ok(if pred == Pred::One {
                    Value::Bool(n == 1)
                } else {
                    Value::Int(n)
                })
            }
            Pred::Sum => {
                let mut total = Value::Int(0);
                for (i, item) in items.iter().enumerate() {
                    let v = self.call_body(body, item.clone(), i, Value::Nil)?;
                    total = ops::add(&total, &v).map_err(|m| run_err(e, m))?;
                }
                Ok(total)
            }
            Pred::Find | Pred::FindIndex => {
                for (i, item) in items.iter().enumerate() {
                    if self.call_bool(body, item, i)? {
                        return Ok(if pred == Pred::Find {
                            item.clone()
                        } else {
                            Value::Int(i as i64)
                        });
                    }
                }
                Ok(Value::Nil)
            }
            Pred::FindLast | Pred::FindLastIndex => {
                for (i, item) in items.iter().enumerate().rev() {
                    if self.call_bool(body, item, i)? {
                        return Ok(if pred == Pred::FindLast {
                            item.clone()
                        } else {
                            Value::Int(i as i64)
                        });
                    }
                }
                Ok(Value::Nil)
            }
            Pred::GroupBy => {
                let mut groups: indexmap::IndexMap<Arc<str>, Vec<Value>> =
                    indexmap::IndexMap::new();
                for (i, item) in items.iter().enumerate() {
                    let key = self.call_body(body, item.clone(), i, Value::Nil)?;
                    let key: Arc<str> = match key {
                        Value::Str(s) => s,
                        other => sprint_key(&other).into(),
                    };
                    groups.entry(key).or_default().push(item.clone());
                }
                self.budget.grow(items.len()).map_err(|m| run_err(e, m))?;
                Ok(Value::map(
                    groups
                        .into_iter()
                        .map(|(k, v)| (k, Value::list(v)))
                        .collect(),
                ))
            }
            Pred::SortBy => {
                let desc = match extra {
                    None => false,
                    Some(x) => match self.eval(x)? {
                        Value::Str(s) if &*s == "asc" => false,
                        Value::Str(s) if &*s == "desc" => true,
                        _ => return Err(run_err(e, "unknown order, use asc or desc")),
                    },
                };
                let mut pairs = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let key = self.call_body(body, item.clone(), i, Value::Nil)?;
                    pairs.push((key, item.clone()));
                }
                self.budget.grow(items.len()).map_err(|m| run_err(e, m))?;
                sort_values(&mut pairs, desc, &mut self.budget).map_err(|m| run_err(e, m))?;
                Ok(Value::list(pairs.into_iter().map(|(_, v)| v).collect()))
            }
            Pred::Reduce => {
                let (mut acc, start) = match extra {
                    Some(x) => (self.eval(x)?, 0),
                    None => match items.first() {
                        Some(first) => (first.clone(), 1),
                        None => {
                            return Err(run_err(e, "reduce of empty array with no initial value"))
                        }
                    },
                };
                for (i, item) in items.iter().enumerate().skip(start) {
                    acc = self.call_body(body, item.clone(), i, acc)?;
                    // The accumulator is the one value that can grow deeper with
                    // every step (`[#acc]`): refused at the bound, never walked past it.
                    acc = self.bounded(e, acc)?;
                }
                Ok(acc)
            }
        }
    }

    /// `count(list)` and `sum(list)` without a closure.
    fn without_closure(&mut self, e: &Expr, pred: Pred, items: &[Value]) -> EResult {
        self.budget
            .step(items.len() as u64)
            .map_err(|m| run_err(e, m))?;
        match pred {
            Pred::Count => {
                let mut n = 0;
                for item in items {
                    if ops::as_bool(item).map_err(|m| run_err(e, m))? {
                        n += 1;
                    }
                }
                Ok(Value::Int(n))
            }
            _ => {
                let mut total = Value::Int(0);
                for item in items {
                    total = ops::add(&total, item).map_err(|m| run_err(e, m))?;
                }
                Ok(total)
            }
        }
    }
}

/// What a closure builtin iterates: list elements, or the bytes of a string.
fn iterable(v: &Value) -> Result<Cow<'_, [Value]>, String> {
    match v {
        Value::List(items) => Ok(Cow::Borrowed(items.as_slice())),
        Value::Str(s) => Ok(Cow::Owned(
            s.bytes().map(|b| Value::Uint(b as u64)).collect(),
        )),
        Value::Nil => Err("reflect: call of reflect.Value.Len on zero Value".into()),
        Value::Map(_) => Err("reflect: call of reflect.Value.Index on map Value".into()),
        other => Err(format!(
            "reflect: call of reflect.Value.Len on {} Value",
            ops::go_type(other)
        )),
    }
}

fn native_error(e: &Expr, n: NativeError) -> ExprError {
    let kind = match n.kind {
        NativeErrorKind::Run => ErrorKind::Run,
        NativeErrorKind::Deferred => ErrorKind::Deferred,
    };
    ExprError::new(kind, n.message, e.span.clone())
}

#[cfg(test)]
mod tests {
    use super::super::engine::{Engine, EngineConfig};
    use super::super::error::ErrorKind;
    use super::super::host::NullHost;
    use crate::value::{Map, Value};

    fn eval(src: &str) -> Result<Value, ErrorKind> {
        let engine = Engine::new(EngineConfig::default());
        let mut scope = Map::default();
        scope.insert("provider".into(), Value::str("aws"));
        scope.insert("flag".into(), Value::Bool(true));
        let mut nested = Map::default();
        nested.insert("name".into(), Value::str("x"));
        scope.insert("obj".into(), Value::map(nested));
        engine
            .eval(src, &scope, &NullHost::default())
            .map_err(|e| e.kind)
    }

    fn text(v: Result<Value, ErrorKind>) -> Option<String> {
        v.ok().and_then(|v| v.as_str().map(str::to_string))
    }

    #[test]
    fn coalesce_evaluates_its_right_side_only_for_nil() {
        assert_eq!(text(eval("provider ?? int('abc')")), Some("aws".into()));
        assert_eq!(text(eval("obj.name ?? int('abc')")), Some("x".into()));
        assert_eq!(
            text(eval("missing ?? obj.missing ?? 'd'")),
            Some("d".into())
        );
        assert_eq!(eval("missing ?? int('abc')").err(), Some(ErrorKind::Run));
    }

    #[test]
    fn comparisons_with_a_constant() {
        for (src, want) in [
            ("provider == 'aws'", true),
            ("'aws' == provider", true),
            ("provider != 'aws'", false),
            ("obj.name == 'x'", true),
            ("missing == nil", true),
            ("nil != missing", false),
            ("flag == true", true),
            ("obj == nil", false),
            ("1 == 1.0", true),
        ] {
            assert!(
                matches!(eval(src), Ok(Value::Bool(b)) if b == want),
                "{src}"
            );
        }
    }

    #[test]
    fn conditions_must_be_bool_at_run_time() {
        assert_eq!(
            text(eval("flag && provider == 'aws' ? 'y' : 'n'")),
            Some("y".into())
        );
        assert_eq!(
            text(eval("!flag || missing != nil ? 'y' : 'n'")),
            Some("n".into())
        );
        assert_eq!(eval("flag && provider ? 1 : 2").err(), Some(ErrorKind::Run));
        assert_eq!(eval("!provider").err(), Some(ErrorKind::Run));
        // `&&` yields its right side when the left holds, whatever its type.
        assert_eq!(text(eval("flag && provider")), Some("aws".into()));
    }
}
