//! The syntax tree the parser builds. Every node carries the byte span of its source
//! text so errors can point at it.

use std::ops::Range;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    In,
    Matches,
    Contains,
    StartsWith,
    EndsWith,
    Range,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Coalesce,
}

impl BinOp {
    pub fn from_text(text: &str) -> Option<(BinOp, u8, bool)> {
        // (operator, precedence, right associative)
        Some(match text {
            "or" | "||" => (BinOp::Or, 10, false),
            "and" | "&&" => (BinOp::And, 15, false),
            "==" => (BinOp::Eq, 20, false),
            "!=" => (BinOp::Ne, 20, false),
            "<" => (BinOp::Lt, 20, false),
            ">" => (BinOp::Gt, 20, false),
            "<=" => (BinOp::Le, 20, false),
            ">=" => (BinOp::Ge, 20, false),
            "in" => (BinOp::In, 20, false),
            "matches" => (BinOp::Matches, 20, false),
            "contains" => (BinOp::Contains, 20, false),
            "startsWith" => (BinOp::StartsWith, 20, false),
            "endsWith" => (BinOp::EndsWith, 20, false),
            ".." => (BinOp::Range, 25, false),
            "+" => (BinOp::Add, 30, false),
            "-" => (BinOp::Sub, 30, false),
            "*" => (BinOp::Mul, 60, false),
            "/" => (BinOp::Div, 60, false),
            "%" => (BinOp::Mod, 60, false),
            "**" | "^" => (BinOp::Pow, 100, true),
            "??" => (BinOp::Coalesce, 250, false),
            _ => return None,
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::Matches => "matches",
            BinOp::Contains => "contains",
            BinOp::StartsWith => "startsWith",
            BinOp::EndsWith => "endsWith",
            BinOp::Range => "..",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::Coalesce => "??",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    pub span: Range<usize>,
    /// Levels of nesting below and including this node; bounded by the parser so
    /// every recursive pass over the tree has bounded stack use.
    pub height: u32,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    Ident(Arc<str>),
    /// `#` (name `None`), `#acc`, `#index`, or the implicit element of `.field`.
    Pointer(Option<Arc<str>>),
    Unary(UnOp, Box<Node>),
    Binary(BinOp, Box<Node>, Box<Node>),
    Member {
        base: Box<Node>,
        prop: Box<Node>,
    },
    Slice {
        base: Box<Node>,
        from: Option<Box<Node>>,
        to: Option<Box<Node>>,
    },
    /// A call of something that is not an expr-lang builtin (host function, or a
    /// name or member that holds no function at run time).
    Call {
        callee: Box<Node>,
        args: Vec<Node>,
    },
    Builtin {
        name: Arc<str>,
        args: Vec<Node>,
    },
    /// A closure argument of a predicate builtin.
    Predicate(Box<Node>),
    Conditional(Box<Node>, Box<Node>, Box<Node>),
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
    Let {
        name: Arc<str>,
        value: Box<Node>,
        body: Box<Node>,
    },
    Sequence(Vec<Node>),
}

impl Node {
    pub fn new(kind: Kind, span: Range<usize>) -> Node {
        let mut below = 0;
        kind.for_each_child(|c| below = below.max(c.height));
        Node {
            kind,
            span,
            height: below + 1,
        }
    }
}

impl Kind {
    pub(crate) fn for_each_child(&self, mut f: impl FnMut(&Node)) {
        match self {
            Kind::Nil
            | Kind::Bool(_)
            | Kind::Int(_)
            | Kind::Float(_)
            | Kind::Str(_)
            | Kind::Ident(_)
            | Kind::Pointer(_) => {}
            Kind::Unary(_, a) | Kind::Predicate(a) => f(a),
            Kind::Binary(_, a, b) => {
                f(a);
                f(b)
            }
            Kind::Member { base, prop } => {
                f(base);
                f(prop)
            }
            Kind::Slice { base, from, to } => {
                f(base);
                if let Some(n) = from {
                    f(n)
                }
                if let Some(n) = to {
                    f(n)
                }
            }
            Kind::Call { callee, args } => {
                f(callee);
                args.iter().for_each(f)
            }
            Kind::Builtin { args, .. } | Kind::List(args) | Kind::Sequence(args) => {
                args.iter().for_each(f)
            }
            Kind::Conditional(a, b, c) => {
                f(a);
                f(b);
                f(c)
            }
            Kind::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                f(k);
                f(v)
            }),
            Kind::Let { value, body, .. } => {
                f(value);
                f(body)
            }
        }
    }
}
