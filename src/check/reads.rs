//! What one expression reads, from its syntax tree: the identifier paths (`a.b.c`,
//! also under `?.` and `??`), the functions it calls, and the operations whose
//! operands are a path and a literal (for type checks).

use crate::expr::ast::{BinOp, Kind, Node};
use std::ops::Range;
use std::sync::Arc;

/// An identifier path the expression reads. Where the expression goes on below the
/// path with something not spelled out (`a.b[key]`, `a.b[0]`), the path is the part
/// spelled out: it must exist, and anything below it counts as read.
#[derive(Clone, Debug)]
pub struct PathRead {
    pub segments: Vec<Arc<str>>,
    pub span: Range<usize>,
}

/// A literal operand, as JSON so it compares with the schema's `enum` directly.
#[derive(Clone, Debug)]
pub enum Operand {
    Path(Vec<Arc<str>>),
    Literal(serde_json::Value, Range<usize>),
    Other,
}

#[derive(Clone, Debug)]
pub struct Operation {
    pub op: BinOp,
    pub left: Operand,
    pub right: Operand,
    pub span: Range<usize>,
}

/// A call of a builtin whose first argument is a path (`values(dns.domain)`).
#[derive(Clone, Debug)]
pub struct BuiltinOnPath {
    pub name: Arc<str>,
    pub path: Vec<Arc<str>>,
    pub span: Range<usize>,
}

#[derive(Default, Debug)]
pub struct Reads {
    pub paths: Vec<PathRead>,
    /// Calls of plain names (`foo(…)`) that are not expr-lang builtins.
    pub calls: Vec<(Arc<str>, Range<usize>)>,
    pub operations: Vec<Operation>,
    pub builtins: Vec<BuiltinOnPath>,
}

pub fn reads(node: &Node) -> Reads {
    let mut walker = Walker {
        reads: Reads::default(),
        bound: Vec::new(),
    };
    walker.walk(node);
    walker.reads
}

/// The path a member chain spells (`a.b['c']`), rooted at a free identifier.
pub fn path_of(node: &Node, bound: &[Arc<str>]) -> Option<Vec<Arc<str>>> {
    match &node.kind {
        Kind::Ident(name) if !bound.contains(name) && !name.starts_with('$') && !is_null(name) => {
            Some(vec![name.clone()])
        }
        Kind::Member { base, prop } => match &prop.kind {
            Kind::Str(key) => {
                let mut path = path_of(base, bound)?;
                path.push(key.clone());
                Some(path)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `null` is no expr-lang keyword, but an undefined name reads as nil, so templates
/// write it for nil; it is not a reference.
fn is_null(name: &str) -> bool {
    name == "null"
}

/// A literal as JSON (strings, numbers, booleans, nil).
pub fn literal(node: &Node) -> Option<serde_json::Value> {
    Some(match &node.kind {
        Kind::Nil => serde_json::Value::Null,
        Kind::Ident(name) if is_null(name) => serde_json::Value::Null,
        Kind::Bool(b) => serde_json::Value::Bool(*b),
        Kind::Int(n) => serde_json::Value::from(*n),
        Kind::Float(f) => serde_json::Value::from(*f),
        Kind::Str(s) => serde_json::Value::String(s.to_string()),
        _ => return None,
    })
}

struct Walker {
    reads: Reads,
    /// Names `let` binds in the part being walked.
    bound: Vec<Arc<str>>,
}

impl Walker {
    fn operand(&self, node: &Node) -> Operand {
        if let Some(path) = path_of(node, &self.bound) {
            return Operand::Path(path);
        }
        match literal(node) {
            Some(value) => Operand::Literal(value, node.span.clone()),
            None => Operand::Other,
        }
    }

    fn walk(&mut self, node: &Node) {
        if let Some(segments) = path_of(node, &self.bound) {
            self.reads.paths.push(PathRead {
                segments,
                span: node.span.clone(),
            });
            return;
        }
        match &node.kind {
            Kind::Member { base, prop } => {
                self.below(base);
                self.walk(prop);
            }
            Kind::Slice { base, from, to } => {
                self.below(base);
                from.iter().chain(to).for_each(|n| self.walk(n));
            }
            Kind::Call { callee, args } => {
                match &callee.kind {
                    Kind::Ident(name) if !self.bound.contains(name) => {
                        self.reads.calls.push((name.clone(), callee.span.clone()))
                    }
                    // A method-style call (`a.b(…)`): what it is called on is read.
                    Kind::Member { base, .. } => self.below(base),
                    _ => self.walk(callee),
                }
                args.iter().for_each(|a| self.walk(a));
            }
            Kind::Builtin { name, args } => {
                if let Some(path) = args.first().and_then(|a| path_of(a, &self.bound)) {
                    self.reads.builtins.push(BuiltinOnPath {
                        name: name.clone(),
                        path,
                        span: node.span.clone(),
                    });
                }
                args.iter().for_each(|a| self.walk(a));
            }
            Kind::Binary(op, left, right) => {
                self.reads.operations.push(Operation {
                    op: *op,
                    left: self.operand(left),
                    right: self.operand(right),
                    span: node.span.clone(),
                });
                self.walk(left);
                self.walk(right);
            }
            Kind::Let { name, value, body } => {
                self.walk(value);
                self.bound.push(name.clone());
                self.walk(body);
                self.bound.pop();
            }
            other => other.for_each_child(|c| self.walk(c)),
        }
    }

    /// The base of an index or slice: a path there is read with all below it.
    fn below(&mut self, base: &Node) {
        match path_of(base, &self.bound) {
            Some(segments) => self.reads.paths.push(PathRead {
                segments,
                span: base.span.clone(),
            }),
            None => self.walk(base),
        }
    }
}
