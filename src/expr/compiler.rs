//! Turns a syntax tree into a [`Program`]: type-checks it the way expr-lang's checker
//! does without a typed environment (only literals, `let` bindings and builtin
//! results have known types), folds constants like expr-lang's optimizer (including
//! `x && true` → `x`), and resolves names.

use super::ast::{BinOp, Kind, Node, UnOp};
use super::builtins;
use super::error::ExprError;
use super::native::{NativeFn, Signature, Ty as ParamTy};
use super::ops;
use super::program::{Expr, ExprKind, Key, Pred};
use super::types::{comparable, either_unknown, Ty};
use crate::value::{Map, Value};
use regex::Regex;
use std::ops::Range;
use std::sync::Arc;

struct PredScope {
    index: bool,
    acc: bool,
}

pub struct Compiler<'a> {
    natives: &'a [NativeFn],
    locals: Vec<(Arc<str>, Ty)>,
    preds: Vec<PredScope>,
    /// Whether a host function call was compiled in (see [`Compiler::calls_host`]).
    calls_host: bool,
}

type CResult = Result<(Expr, Ty), ExprError>;

fn err(span: &Range<usize>, message: impl Into<String>) -> ExprError {
    ExprError::compile(message, span.clone())
}

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn konst(v: Value, span: Range<usize>) -> Expr {
    Expr {
        kind: ExprKind::Const(v),
        span,
    }
}

impl<'a> Compiler<'a> {
    pub fn new(natives: &'a [NativeFn]) -> Self {
        Compiler {
            natives,
            locals: Vec::new(),
            preds: Vec::new(),
            calls_host: false,
        }
    }

    /// Whether what was compiled calls a host function: its result may then depend on
    /// files, the environment or Terraform outputs, not only on the scope.
    pub fn calls_host(&self) -> bool {
        self.calls_host
    }

    fn native(&self, name: &str) -> Option<&NativeFn> {
        self.natives.iter().rev().find(|n| n.name == name)
    }

    fn is_function_name(&self, name: &str) -> bool {
        builtins::is_builtin(name) || self.native(name).is_some()
    }

    pub fn compile(&mut self, node: &Node) -> CResult {
        let span = node.span.clone();
        let mk = |kind: ExprKind| Expr {
            kind,
            span: span.clone(),
        };
        match &node.kind {
            Kind::Nil => Ok((mk(ExprKind::Const(Value::Nil)), Ty::Nil)),
            Kind::Bool(b) => Ok((mk(ExprKind::Const(Value::Bool(*b))), Ty::Bool)),
            Kind::Int(i) => Ok((mk(ExprKind::Const(Value::Int(*i))), Ty::Int)),
            Kind::Float(f) => Ok((mk(ExprKind::Const(Value::Float(*f))), Ty::Float)),
            Kind::Str(s) => Ok((mk(ExprKind::Const(Value::Str(s.clone()))), Ty::Str)),
            Kind::Ident(name) => Ok(self.ident(name, span)),
            Kind::Pointer(name) => self.pointer(name.as_deref(), span),
            Kind::Unary(op, operand) => self.unary(*op, operand, span),
            Kind::Binary(op, l, r) => self.binary(*op, l, r, span),
            Kind::Member { base, prop } => self.member(base, prop, span),
            Kind::Slice { base, from, to } => {
                self.slice(base, from.as_deref(), to.as_deref(), span)
            }
            Kind::Call { callee, args } => self.call(callee, args, span),
            Kind::Builtin { name, args } => self.builtin(name, args, span),
            Kind::Predicate(body) => {
                // Only reachable for a closure outside a predicate builtin (never built).
                Err(err(&body.span, "unexpected closure"))
            }
            Kind::Conditional(c, a, b) => {
                let (c, ct) = self.compile(c)?;
                if !(ct == Ty::Bool || ct.is_unknown()) {
                    return Err(err(
                        &c.span,
                        format!("non-bool expression (type {}) used as condition", ct.name()),
                    ));
                }
                let (a, at) = self.compile(a)?;
                let (b, bt) = self.compile(b)?;
                let ty = match (at, bt) {
                    (Ty::Nil, t) | (t, Ty::Nil) => t,
                    (x, y) if x == y => x,
                    _ => Ty::Unknown,
                };
                Ok((mk(ExprKind::Cond(boxed(c), boxed(a), boxed(b))), ty))
            }
            Kind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.compile(item)?.0);
                }
                // A literal of constants (`?? []`) is built once and shared by every run.
                if out.iter().all(|e| matches!(e.kind, ExprKind::Const(_))) {
                    let values = out.into_iter().filter_map(|e| match e.kind {
                        ExprKind::Const(v) => Some(v),
                        _ => None,
                    });
                    return Ok((konst(Value::list(values.collect()), span), Ty::List));
                }
                Ok((mk(ExprKind::List(out)), Ty::List))
            }
            Kind::Map(pairs) => {
                let mut out: Vec<(Expr, Expr)> = Vec::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let (k, _) = self.compile(k)?;
                    let (v, _) = self.compile(v)?;
                    out.push((k, v));
                }
                if let Some(map) = const_map(&out) {
                    return Ok((konst(Value::map(map), span), Ty::Map));
                }
                Ok((mk(ExprKind::Map(out)), Ty::Map))
            }
            Kind::Let { name, value, body } => {
                if builtins::is_builtin(name) {
                    return Err(err(&span, format!("cannot redeclare builtin {name}")));
                }
                if self.native(name).is_some() {
                    return Err(err(&span, format!("cannot redeclare function {name}")));
                }
                if self.locals.iter().any(|(n, _)| n == name) {
                    return Err(err(&span, format!("cannot redeclare variable {name}")));
                }
                let (value, vt) = self.compile(value)?;
                self.locals.push((name.clone(), vt));
                let body = self.compile(body);
                self.locals.pop();
                let (body, bt) = body?;
                Ok((
                    mk(ExprKind::Let {
                        value: boxed(value),
                        body: boxed(body),
                    }),
                    bt,
                ))
            }
            Kind::Sequence(nodes) => {
                let mut out = Vec::with_capacity(nodes.len());
                let mut ty = Ty::Unknown;
                for n in nodes {
                    let (e, t) = self.compile(n)?;
                    out.push(e);
                    ty = t;
                }
                Ok((mk(ExprKind::Seq(out)), ty))
            }
        }
    }

    fn ident(&self, name: &Arc<str>, span: Range<usize>) -> (Expr, Ty) {
        if let Some(slot) = self.locals.iter().rposition(|(n, _)| n == name) {
            let ty = self.locals[slot].1;
            return (
                Expr {
                    kind: ExprKind::Local(slot),
                    span,
                },
                ty,
            );
        }
        if &**name == "$env" {
            return (
                Expr {
                    kind: ExprKind::Env,
                    span,
                },
                Ty::Unknown,
            );
        }
        let ty = if self.is_function_name(name) {
            Ty::Func
        } else {
            Ty::Unknown
        };
        (
            Expr {
                kind: ExprKind::Path {
                    root: Key::new(name.clone()),
                    rest: Box::new([]),
                },
                span,
            },
            ty,
        )
    }

    fn pointer(&self, name: Option<&str>, span: Range<usize>) -> CResult {
        let Some(scope) = self.preds.last() else {
            return Err(err(&span, "cannot use pointer accessor outside predicate"));
        };
        let (kind, ty) = match name {
            None => (ExprKind::Elem, Ty::Unknown),
            Some("index") if scope.index => (ExprKind::Index, Ty::Int),
            Some("acc") if scope.acc => (ExprKind::Acc, Ty::Unknown),
            Some(other) => return Err(err(&span, format!("unknown pointer #{other}"))),
        };
        Ok((Expr { kind, span }, ty))
    }

    fn unary(&mut self, op: UnOp, operand: &Node, span: Range<usize>) -> CResult {
        let (e, t) = self.compile(operand)?;
        let ty = match op {
            UnOp::Not if t == Ty::Bool || t.is_unknown() => Ty::Bool,
            UnOp::Neg | UnOp::Plus if t.is_number() || t.is_unknown() => t,
            _ => {
                let sym = match op {
                    UnOp::Not => "!",
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                };
                return Err(err(
                    &span,
                    format!("invalid operation: {sym} (mismatched type {})", t.name()),
                ));
            }
        };
        if let ExprKind::Const(v) = &e.kind {
            let folded = match op {
                UnOp::Not => ops::as_bool(v).map(|b| Value::Bool(!b)),
                UnOp::Neg => ops::negate(v),
                UnOp::Plus => ops::plus(v),
            };
            if let Ok(v) = folded {
                return Ok((konst(v, span), ty));
            }
        }
        let kind = match op {
            UnOp::Not => ExprKind::Not(boxed(e)),
            UnOp::Neg => ExprKind::Neg(boxed(e)),
            UnOp::Plus => ExprKind::Plus(boxed(e)),
        };
        Ok((Expr { kind, span }, ty))
    }

    fn binary(&mut self, op: BinOp, l: &Node, r: &Node, span: Range<usize>) -> CResult {
        let (le, lt) = self.compile(l)?;
        let (re, rt) = self.compile(r)?;
        let ty = binary_type(op, lt, rt, &re).map_err(|m| err(&span, m))?;
        let (lc, rc) = (const_of(&le), const_of(&re));

        match op {
            BinOp::And | BinOp::Or => {
                let is_and = op == BinOp::And;
                // expr-lang's optimizer: `true && x` → x, `x && true` → x,
                // `x && false` → false (and the mirror images for `||`).
                let is =
                    |c: &Option<Value>, want: bool| matches!(c, Some(Value::Bool(b)) if *b == want);
                if is(&lc, is_and) {
                    return Ok((re, rt));
                }
                if is(&rc, is_and) {
                    return Ok((le, lt));
                }
                if is(&lc, !is_and) || is(&rc, !is_and) {
                    return Ok((konst(Value::Bool(!is_and), span), Ty::Bool));
                }
                let kind = if is_and {
                    ExprKind::And(boxed(le), boxed(re))
                } else {
                    ExprKind::Or(boxed(le), boxed(re))
                };
                return Ok((Expr { kind, span }, ty));
            }
            BinOp::Matches => {
                if let Some(Value::Str(pattern)) = &rc {
                    let re_ = Regex::new(pattern).map_err(|e| err(&span, e.to_string()))?;
                    return Ok((
                        Expr {
                            kind: ExprKind::MatchesConst(boxed(le), Arc::new(re_)),
                            span,
                        },
                        ty,
                    ));
                }
            }
            BinOp::Eq | BinOp::Ne if lt == Ty::Int && rt == Ty::Int => {
                return Ok((
                    Expr {
                        kind: ExprKind::EqInt {
                            negate: op == BinOp::Ne,
                            left: boxed(le),
                            right: boxed(re),
                        },
                        span,
                    },
                    ty,
                ));
            }
            _ => {}
        }

        if op == BinOp::Coalesce {
            return Ok((
                Expr {
                    kind: ExprKind::Coalesce(boxed(le), boxed(re)),
                    span,
                },
                ty,
            ));
        }

        if matches!(op, BinOp::Eq | BinOp::Ne) {
            let negate = op == BinOp::Ne;
            let (operand, value, const_left) = match (rc, lc) {
                (Some(value), _) => (le, value, false),
                (None, Some(value)) => (re, value, true),
                (None, None) => {
                    return Ok((
                        Expr {
                            kind: ExprKind::Binary(op, boxed(le), boxed(re)),
                            span,
                        },
                        ty,
                    ))
                }
            };
            return Ok((
                Expr {
                    kind: ExprKind::EqConst {
                        negate,
                        operand: boxed(operand),
                        value,
                        const_left,
                    },
                    span,
                },
                ty,
            ));
        }

        if let (Some(a), Some(b)) = (&lc, &rc) {
            let folded = match op {
                BinOp::Add => Some(ops::add(a, b)),
                BinOp::Sub => Some(ops::sub(a, b)),
                BinOp::Mul => Some(ops::mul(a, b)),
                BinOp::Div => Some(ops::div(a, b)),
                BinOp::Pow => Some(ops::pow(a, b)),
                BinOp::Mod => Some(ops::modulo(a, b)),
                _ => None,
            };
            match folded {
                Some(Ok(v)) => return Ok((konst(v, span), ty)),
                Some(Err(m)) if op == BinOp::Mod => {
                    return Err(err(
                        &span,
                        m.trim_start_matches("runtime error: ").to_string(),
                    ))
                }
                _ => {}
            }
        }
        Ok((
            Expr {
                kind: ExprKind::Binary(op, boxed(le), boxed(re)),
                span,
            },
            ty,
        ))
    }

    fn member(&mut self, base: &Node, prop: &Node, span: Range<usize>) -> CResult {
        let (be, bt) = self.compile(base)?;
        let (pe, pt) = self.compile(prop)?;
        let key = const_of(&pe);
        let prop_text = match &key {
            Some(Value::Str(s)) => s.to_string(),
            _ => pt.name().to_string(),
        };
        let ty = match bt {
            Ty::Unknown => Ty::Unknown,
            Ty::Map => {
                if !(pt == Ty::Str || pt.is_unknown()) {
                    return Err(err(
                        &span,
                        format!("cannot use {} to get an element from map", pt.name()),
                    ));
                }
                Ty::Unknown
            }
            Ty::List => {
                if !(pt == Ty::Int || pt.is_unknown()) {
                    return Err(err(
                        &span,
                        format!(
                            "array elements can only be selected using an integer (got {})",
                            pt.name()
                        ),
                    ));
                }
                Ty::Unknown
            }
            other => {
                let message = if matches!(prop.kind, Kind::Str(_))
                    && !matches!(key, Some(Value::Int(_)))
                    && is_name_like(&prop_text)
                {
                    format!("type {} has no field {prop_text}", other.name())
                } else {
                    format!("type {}[{}] is undefined", other.name(), pt.name())
                };
                return Err(err(&span, message));
            }
        };
        // Constant string keys extend a scope path so it resolves in one lookup.
        if let Some(Value::Str(k)) = &key {
            match be.kind {
                ExprKind::Env => {
                    return Ok((
                        Expr {
                            kind: ExprKind::Path {
                                root: Key::new(k.clone()),
                                rest: Box::new([]),
                            },
                            span,
                        },
                        ty,
                    ))
                }
                ExprKind::Path { root, rest } => {
                    let mut rest = rest.into_vec();
                    rest.push(Key::new(k.clone()));
                    return Ok((
                        Expr {
                            kind: ExprKind::Path {
                                root,
                                rest: rest.into_boxed_slice(),
                            },
                            span,
                        },
                        ty,
                    ));
                }
                kind => {
                    let be = Expr {
                        kind,
                        span: be.span,
                    };
                    return Ok((
                        Expr {
                            kind: ExprKind::FetchKey(boxed(be), Value::Str(k.clone())),
                            span,
                        },
                        ty,
                    ));
                }
            }
        }
        let kind = match key {
            Some(k) => ExprKind::FetchKey(boxed(be), k),
            None => ExprKind::Fetch(boxed(be), boxed(pe)),
        };
        Ok((Expr { kind, span }, ty))
    }

    fn slice(
        &mut self,
        base: &Node,
        from: Option<&Node>,
        to: Option<&Node>,
        span: Range<usize>,
    ) -> CResult {
        let (be, bt) = self.compile(base)?;
        if !matches!(bt, Ty::Unknown | Ty::Str | Ty::List) {
            return Err(err(&span, format!("cannot slice {}", bt.name())));
        }
        let mut bound = |n: Option<&Node>| -> Result<Option<Box<Expr>>, ExprError> {
            match n {
                None => Ok(None),
                Some(n) => {
                    let (e, t) = self.compile(n)?;
                    if !(bt.is_unknown() || t == Ty::Int || t.is_unknown()) {
                        return Err(err(
                            &n.span,
                            format!("non-integer slice index {}", t.name()),
                        ));
                    }
                    Ok(Some(boxed(e)))
                }
            }
        };
        let from = bound(from)?;
        let to = bound(to)?;
        Ok((
            Expr {
                kind: ExprKind::Slice(boxed(be), from, to),
                span,
            },
            bt,
        ))
    }

    fn call(&mut self, callee: &Node, args: &[Node], span: Range<usize>) -> CResult {
        if let Kind::Ident(name) = &callee.kind {
            let is_local = self.locals.iter().any(|(n, _)| n == name);
            if let (false, Some(native)) = (is_local, self.native(name).copied()) {
                let mut out = Vec::with_capacity(args.len());
                let mut tys = Vec::with_capacity(args.len());
                for a in args {
                    let (e, t) = self.compile(a)?;
                    out.push(e);
                    tys.push(t);
                }
                let sig = check_native(&native, &tys).map_err(|m| err(&span, m))?;
                let ret = Ty::from_param(sig.ret);
                self.calls_host = true;
                return Ok((
                    Expr {
                        kind: ExprKind::Native(native, out),
                        span,
                    },
                    ret,
                ));
            }
        }
        let (ce, _) = self.compile(callee)?;
        for a in args {
            self.compile(a)?;
        }
        Ok((
            Expr {
                kind: ExprKind::CallValue(boxed(ce)),
                span,
            },
            Ty::Unknown,
        ))
    }

    fn builtin(&mut self, name: &str, args: &[Node], span: Range<usize>) -> CResult {
        if let Some(pred) = Pred::from_name(name) {
            return self.predicate(pred, name, args, span);
        }
        let Some(def) = builtins::lookup(name) else {
            return Err(err(&span, format!("unknown builtin {name}")));
        };
        let mut out = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            let (e, t) = self.compile(a)?;
            out.push(e);
            tys.push(t);
        }
        let ty = (def.check)(name, &tys).map_err(|m| err(&span, m))?;
        Ok((
            Expr {
                kind: ExprKind::Builtin(def, out),
                span,
            },
            ty,
        ))
    }

    fn predicate(&mut self, pred: Pred, name: &str, args: &[Node], span: Range<usize>) -> CResult {
        let Some(first) = args.first() else {
            return Err(err(
                &span,
                format!("expected at least 2 arguments to {name}"),
            ));
        };
        let (coll, ct) = self.compile(first)?;
        if !(ct == Ty::List || ct.is_unknown()) {
            return Err(err(
                &first.span,
                format!("builtin {name} takes only array (got {})", ct.name()),
            ));
        }
        let mut body = None;
        let mut extra = None;
        for a in &args[1..] {
            match &a.kind {
                Kind::Predicate(inner) => {
                    self.preds.push(PredScope {
                        index: matches!(pred, Pred::Map | Pred::Reduce),
                        acc: pred == Pred::Reduce,
                    });
                    let compiled = self.compile(inner);
                    self.preds.pop();
                    let (e, t) = compiled?;
                    let wants_bool = !matches!(
                        pred,
                        Pred::Map | Pred::Sum | Pred::GroupBy | Pred::SortBy | Pred::Reduce
                    );
                    if wants_bool && !(t == Ty::Bool || t.is_unknown()) {
                        return Err(err(
                            &a.span,
                            format!("predicate should return boolean (got {})", t.name()),
                        ));
                    }
                    body = Some(boxed(e));
                }
                _ => extra = Some(boxed(self.compile(a)?.0)),
            }
        }
        let ty = match pred {
            Pred::Map | Pred::Filter | Pred::SortBy => Ty::List,
            Pred::All | Pred::Any | Pred::None | Pred::One => Ty::Bool,
            Pred::Count | Pred::FindIndex | Pred::FindLastIndex => Ty::Int,
            Pred::GroupBy => Ty::Map,
            Pred::Sum | Pred::Find | Pred::FindLast | Pred::Reduce => Ty::Unknown,
        };
        Ok((
            Expr {
                kind: ExprKind::Pred {
                    pred,
                    collection: boxed(coll),
                    body,
                    extra,
                },
                span,
            },
            ty,
        ))
    }
}

fn is_name_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// A map literal whose keys are constant strings and values constants, built as the
/// evaluator would (the first of duplicate keys wins); `None` when anything is left to
/// run, including a non-string key, whose error belongs to run time.
fn const_map(pairs: &[(Expr, Expr)]) -> Option<Map> {
    let mut map = Map::with_capacity(pairs.len());
    for (k, v) in pairs {
        match (&k.kind, &v.kind) {
            (ExprKind::Const(Value::Str(key)), ExprKind::Const(value)) => {
                map.entry(key.clone()).or_insert_with(|| value.clone());
            }
            _ => return None,
        }
    }
    Some(map)
}

fn const_of(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(v.clone()),
        _ => None,
    }
}

/// The first of the function's signatures the arguments fit (Go reports the last
/// mismatch when none does).
fn check_native(f: &NativeFn, args: &[Ty]) -> Result<Signature, String> {
    let mut last = format!("no signature declared for {}", f.name);
    for sig in f.sigs {
        match check_signature(f.name, sig, args) {
            Ok(()) => return Ok(*sig),
            Err(m) => last = m,
        }
    }
    Err(last)
}

fn check_signature(name: &str, sig: &Signature, args: &[Ty]) -> Result<(), String> {
    let params = sig.params;
    if args.len() < params.len() {
        return Err(format!("not enough arguments to call {name}"));
    }
    if args.len() > params.len() && sig.variadic.is_none() {
        return Err(format!("too many arguments to call {name}"));
    }
    for (i, &t) in args.iter().enumerate() {
        let p = params
            .get(i)
            .copied()
            .or(sig.variadic)
            .unwrap_or(ParamTy::Any);
        let ok = if t == Ty::Nil {
            p == ParamTy::Any
        } else {
            t.fits_param(p)
        };
        if !ok {
            return Err(format!(
                "cannot use {} as argument (type {}) to call {}",
                t.name(),
                Ty::from_param(p).name(),
                name
            ));
        }
    }
    Ok(())
}

/// The result type of a binary operator, or Go's compile error.
fn binary_type(op: BinOp, l: Ty, r: Ty, right: &Expr) -> Result<Ty, String> {
    let num = |t: Ty| t.is_number();
    let int = |t: Ty| t == Ty::Int;
    let string = |t: Ty| t == Ty::Str;
    let ok = match op {
        BinOp::Eq | BinOp::Ne => comparable(l, r).then_some(Ty::Bool),
        BinOp::And | BinOp::Or => ((l == Ty::Bool && r == Ty::Bool)
            || either_unknown(l, r, |t| t == Ty::Bool))
        .then_some(Ty::Bool),
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => ((num(l) && num(r))
            || (string(l) && string(r))
            || either_unknown(l, r, |t| num(t) || string(t)))
        .then_some(Ty::Bool),
        BinOp::Sub | BinOp::Mul => {
            if num(l) && num(r) {
                Some(if l == Ty::Int && r == Ty::Int {
                    Ty::Int
                } else {
                    Ty::Float
                })
            } else {
                either_unknown(l, r, num).then_some(Ty::Unknown)
            }
        }
        BinOp::Add => {
            if num(l) && num(r) {
                Some(if l == Ty::Int && r == Ty::Int {
                    Ty::Int
                } else {
                    Ty::Float
                })
            } else if string(l) && string(r) {
                Some(Ty::Str)
            } else {
                either_unknown(l, r, |t| num(t) || string(t)).then_some(Ty::Unknown)
            }
        }
        BinOp::Div | BinOp::Pow => {
            ((num(l) && num(r)) || either_unknown(l, r, num)).then_some(Ty::Float)
        }
        BinOp::Mod => ((int(l) && int(r)) || either_unknown(l, r, int)).then_some(Ty::Int),
        BinOp::Range => ((int(l) && int(r)) || either_unknown(l, r, int)).then_some(Ty::List),
        BinOp::In => {
            if r == Ty::Map {
                if !l.is_unknown() && l != Ty::Str {
                    return Err(format!("cannot use {} as type string in map key", l.name()));
                }
                Some(Ty::Bool)
            } else if r == Ty::List {
                Some(Ty::Bool)
            } else {
                (r.is_unknown() || (l.is_unknown() && r == Ty::Str)).then_some(Ty::Bool)
            }
        }
        BinOp::Matches | BinOp::Contains | BinOp::StartsWith | BinOp::EndsWith => {
            if op == BinOp::Matches {
                if let ExprKind::Const(Value::Str(p)) = &right.kind {
                    Regex::new(p).map_err(|e| e.to_string())?;
                }
            }
            ((string(l) && string(r)) || either_unknown(l, r, string)).then_some(Ty::Bool)
        }
        BinOp::Coalesce => Some(match (l, r) {
            (Ty::Nil, t) | (t, Ty::Nil) => t,
            (x, y) if x == y => x,
            _ => Ty::Unknown,
        }),
    };
    ok.ok_or_else(|| {
        format!(
            "invalid operation: {} (mismatched types {} and {})",
            op.symbol(),
            l.name(),
            r.name()
        )
    })
}
