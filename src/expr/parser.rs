//! A hand-written precedence-climbing parser that follows expr-lang's grammar,
//! including its quirks: `??` may not be mixed with other operators without
//! parentheses, `<`-style comparisons chain, literals take no postfix operators, and
//! predicate builtins parse their closure arguments specially.

use super::ast::{BinOp, Kind, Node, UnOp};
use super::builtins::{self, PredArg};
use super::error::ExprError;
use super::lexer::{Token, TokenKind};
use super::limits::MAX_DEPTH;
use std::ops::Range;

pub struct Parser<'a> {
    tokens: Vec<Token>,
    pos: usize,
    /// Nesting of predicate closures (`#` is legal only inside one).
    closure_depth: u32,
    recursion: u32,
    is_native: &'a dyn Fn(&str) -> bool,
}

type PResult<T> = Result<T, ExprError>;

pub fn parse(tokens: Vec<Token>, is_native: &dyn Fn(&str) -> bool) -> PResult<Node> {
    let mut p = Parser {
        tokens,
        pos: 0,
        closure_depth: 0,
        recursion: 0,
        is_native,
    };
    let node = p.sequence()?;
    if p.cur().kind != TokenKind::Eof {
        return Err(p.unexpected());
    }
    Ok(node)
}

fn is_comparison(op: &str) -> bool {
    matches!(op, "<" | ">" | "<=" | ">=")
}

fn negatable(op: &str) -> bool {
    matches!(
        op,
        "in" | "matches" | "contains" | "startsWith" | "endsWith"
    )
}

impl<'a> Parser<'a> {
    fn cur(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) {
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
    }

    fn unexpected(&self) -> ExprError {
        let t = self.cur();
        ExprError::compile(format!("unexpected token {}", t.describe()), t.span.clone())
    }

    fn expect_op(&mut self, op: &str) -> PResult<()> {
        if self.cur().is_op(op) {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn expect_bracket(&mut self, b: &str) -> PResult<()> {
        if self.cur().is_bracket(b) {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn expect_ident(&mut self) -> PResult<Token> {
        if self.cur().kind == TokenKind::Ident {
            let t = self.cur().clone();
            self.next();
            Ok(t)
        } else {
            Err(self.unexpected())
        }
    }

    fn make(&self, kind: Kind, span: Range<usize>) -> PResult<Node> {
        let node = Node::new(kind, span);
        if node.height > MAX_DEPTH {
            return Err(ExprError::compile(
                "expression is nested too deeply",
                node.span.clone(),
            ));
        }
        Ok(node)
    }

    fn enter(&mut self) -> PResult<()> {
        self.recursion += 1;
        if self.recursion > MAX_DEPTH {
            return Err(ExprError::compile(
                "expression is nested too deeply",
                self.cur().span.clone(),
            ));
        }
        Ok(())
    }

    fn sequence(&mut self) -> PResult<Node> {
        let first = self.expression(0)?;
        if !self.cur().is_op(";") {
            return Ok(first);
        }
        let start = first.span.start;
        let mut nodes = vec![first];
        while self.cur().is_op(";") {
            self.next();
            if self.cur().kind == TokenKind::Eof {
                break;
            }
            nodes.push(self.expression(0)?);
        }
        let end = nodes.last().map_or(start, |n| n.span.end);
        self.make(Kind::Sequence(nodes), start..end)
    }

    fn expression(&mut self, precedence: u8) -> PResult<Node> {
        self.enter()?;
        let result = self.expression_inner(precedence);
        self.recursion -= 1;
        result
    }

    fn expression_inner(&mut self, precedence: u8) -> PResult<Node> {
        if precedence == 0 && self.cur().is(&TokenKind::Ident, "let") {
            return self.let_declaration();
        }
        if precedence == 0 && self.cur().is(&TokenKind::Ident, "if") {
            return self.if_else();
        }
        let mut left = self.primary()?;
        let mut prev_was_coalesce = false;
        loop {
            let tok = self.cur().clone();
            if tok.kind != TokenKind::Operator {
                break;
            }
            let mut op_tok = tok.clone();
            let mut negate = false;
            if tok.is_op("not") {
                let save = self.pos;
                self.next();
                let after = self.cur().clone();
                if after.kind == TokenKind::Operator && negatable(&after.text) {
                    match BinOp::from_text(&after.text) {
                        Some((_, prec, _)) if prec >= precedence => {
                            negate = true;
                            op_tok = after;
                        }
                        _ => {
                            self.pos = save;
                            break;
                        }
                    }
                } else {
                    return Err(self.unexpected());
                }
            }
            if op_tok.is_op("|") {
                if precedence > 0 {
                    break;
                }
                self.next();
                let name = self.expect_ident()?;
                left = self.call(name, vec![left])?;
                prev_was_coalesce = false;
                continue;
            }
            let Some((op, prec, right_assoc)) = BinOp::from_text(&op_tok.text) else {
                break;
            };
            if prec < precedence {
                break;
            }
            self.next();
            if prev_was_coalesce && op != BinOp::Coalesce {
                return Err(ExprError::compile(
                    format!(
                        "Operator ({}) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses.",
                        op_tok.text
                    ),
                    op_tok.span.clone(),
                ));
            }
            if is_comparison(&op_tok.text) {
                left = self.comparison(left, op, op_tok.span.clone(), prec)?;
            } else {
                let right = self.expression(if right_assoc { prec } else { prec + 1 })?;
                let span = left.span.start..right.span.end;
                left = self.make(Kind::Binary(op, Box::new(left), Box::new(right)), span)?;
            }
            if negate {
                let span = left.span.clone();
                left = self.make(Kind::Unary(UnOp::Not, Box::new(left)), span)?;
            }
            prev_was_coalesce = op == BinOp::Coalesce;
        }
        if precedence == 0 {
            left = self.conditional(left)?;
        }
        Ok(left)
    }

    fn comparison(
        &mut self,
        mut left: Node,
        mut op: BinOp,
        _op_span: Range<usize>,
        prec: u8,
    ) -> PResult<Node> {
        let mut root: Option<Node> = None;
        loop {
            let right = self.expression(prec + 1)?;
            let span = left.span.start..right.span.end;
            let cmp = self.make(
                Kind::Binary(op, Box::new(left), Box::new(right.clone())),
                span,
            )?;
            root = Some(match root {
                None => cmp,
                Some(r) => {
                    let span = r.span.start..cmp.span.end;
                    self.make(Kind::Binary(BinOp::And, Box::new(r), Box::new(cmp)), span)?
                }
            });
            left = right;
            let t = self.cur();
            if !(t.kind == TokenKind::Operator && is_comparison(&t.text)) {
                break;
            }
            op = BinOp::from_text(&t.text).map_or(BinOp::Lt, |(o, _, _)| o);
            self.next();
        }
        root.ok_or_else(|| self.unexpected())
    }

    fn conditional(&mut self, mut node: Node) -> PResult<Node> {
        while self.cur().is_op("?") {
            self.next();
            let (a, b) = if !self.cur().is_op(":") {
                let a = self.expression(0)?;
                self.expect_op(":")?;
                let b = self.expression(0)?;
                (a, b)
            } else {
                self.next();
                let b = self.expression(0)?;
                (node.clone(), b)
            };
            let span = node.span.start..b.span.end;
            node = self.make(
                Kind::Conditional(Box::new(node), Box::new(a), Box::new(b)),
                span,
            )?;
        }
        Ok(node)
    }

    fn let_declaration(&mut self) -> PResult<Node> {
        let start = self.cur().span.start;
        self.next();
        let name = self.expect_ident()?;
        self.expect_op("=")?;
        let value = self.expression(0)?;
        self.expect_op(";")?;
        let body = self.sequence()?;
        let span = start..body.span.end;
        self.make(
            Kind::Let {
                name: name.text.clone(),
                value: Box::new(value),
                body: Box::new(body),
            },
            span,
        )
    }

    fn if_else(&mut self) -> PResult<Node> {
        self.enter()?;
        let start = self.cur().span.start;
        self.next();
        let cond = self.expression(0)?;
        self.expect_bracket("{")?;
        let then = self.sequence()?;
        self.expect_bracket("}")?;
        if !self.cur().is(&TokenKind::Ident, "else") {
            return Err(self.unexpected());
        }
        self.next();
        let other = if self.cur().is(&TokenKind::Ident, "if") {
            self.if_else()?
        } else {
            self.expect_bracket("{")?;
            let e = self.sequence()?;
            self.expect_bracket("}")?;
            e
        };
        self.recursion -= 1;
        let span = start..other.span.end;
        self.make(
            Kind::Conditional(Box::new(cond), Box::new(then), Box::new(other)),
            span,
        )
    }

    fn primary(&mut self) -> PResult<Node> {
        let tok = self.cur().clone();
        if tok.kind == TokenKind::Operator {
            let unary = match &*tok.text {
                "not" | "!" => Some((UnOp::Not, 50)),
                "-" => Some((UnOp::Neg, 90)),
                "+" => Some((UnOp::Plus, 90)),
                _ => None,
            };
            if let Some((op, prec)) = unary {
                self.next();
                let operand = self.expression(prec)?;
                let span = tok.span.start..operand.span.end;
                let node = self.make(Kind::Unary(op, Box::new(operand)), span)?;
                return self.postfix(node);
            }
        }
        if tok.is_bracket("(") {
            self.next();
            let inner = self.expression(0)?;
            self.expect_bracket(")")?;
            return self.postfix(inner);
        }
        if self.closure_depth > 0 && (tok.is_op("#") || tok.is_op(".")) {
            let mut name = None;
            let mut span = tok.span.clone();
            if tok.is_op("#") {
                self.next();
                if self.cur().kind == TokenKind::Ident {
                    name = Some(self.cur().text.clone());
                    span.end = self.cur().span.end;
                    self.next();
                }
            }
            let node = self.make(Kind::Pointer(name), span)?;
            return self.postfix(node);
        }
        self.secondary()
    }

    fn secondary(&mut self) -> PResult<Node> {
        let tok = self.cur().clone();
        let span = tok.span.clone();
        match &tok.kind {
            TokenKind::Ident => {
                self.next();
                match &*tok.text {
                    "true" => return self.make(Kind::Bool(true), span),
                    "false" => return self.make(Kind::Bool(false), span),
                    "nil" => return self.make(Kind::Nil, span),
                    _ => {}
                }
                let node = if self.cur().is_bracket("(") {
                    self.call(tok, Vec::new())?
                } else {
                    self.make(Kind::Ident(tok.text.clone()), span)?
                };
                self.postfix(node)
            }
            TokenKind::Number => {
                self.next();
                self.make(number_literal(&tok)?, span)
            }
            TokenKind::Str(s) => {
                self.next();
                let node = self.make(Kind::Str(s.clone()), span)?;
                self.postfix(node)
            }
            TokenKind::Bracket if &*tok.text == "[" => {
                let node = self.array()?;
                self.postfix(node)
            }
            TokenKind::Bracket if &*tok.text == "{" => {
                let node = self.map()?;
                self.postfix(node)
            }
            _ => Err(self.unexpected()),
        }
    }

    fn array(&mut self) -> PResult<Node> {
        self.enter()?;
        let start = self.cur().span.start;
        self.next();
        let mut items = Vec::new();
        while !self.cur().is_bracket("]") {
            if !items.is_empty() {
                self.expect_op(",")?;
                if self.cur().is_bracket("]") {
                    break;
                }
            }
            items.push(self.expression(0)?);
        }
        let end = self.cur().span.end;
        self.expect_bracket("]")?;
        self.recursion -= 1;
        self.make(Kind::List(items), start..end)
    }

    fn map(&mut self) -> PResult<Node> {
        self.enter()?;
        let start = self.cur().span.start;
        self.next();
        let mut pairs = Vec::new();
        while !self.cur().is_bracket("}") {
            if !pairs.is_empty() {
                self.expect_op(",")?;
                if self.cur().is_bracket("}") {
                    break;
                }
            }
            let t = self.cur().clone();
            let key = match &t.kind {
                TokenKind::Number | TokenKind::Ident => {
                    self.next();
                    self.make(Kind::Str(t.text.clone()), t.span.clone())?
                }
                TokenKind::Str(s) => {
                    self.next();
                    self.make(Kind::Str(s.clone()), t.span.clone())?
                }
                TokenKind::Bracket if &*t.text == "(" => self.expression(0)?,
                _ => {
                    return Err(ExprError::compile(
                        "a map key must be a quoted string, a number, a identifier, or an expression enclosed in parentheses",
                        t.span.clone(),
                    ))
                }
            };
            self.expect_op(":")?;
            let value = self.expression(0)?;
            pairs.push((key, value));
        }
        let end = self.cur().span.end;
        self.expect_bracket("}")?;
        self.recursion -= 1;
        self.make(Kind::Map(pairs), start..end)
    }

    fn postfix(&mut self, mut node: Node) -> PResult<Node> {
        loop {
            let tok = self.cur().clone();
            if tok.is_op(".") || tok.is_op("?.") {
                self.next();
                let prop = self.cur().clone();
                if tok.is_op("?.") && prop.is_bracket("[") {
                    node = self.index(node)?;
                    continue;
                }
                self.next();
                let valid = prop.kind == TokenKind::Ident
                    || (prop.kind == TokenKind::Operator
                        && prop.text.chars().all(|c| c.is_alphanumeric() || c == '_'));
                if !valid {
                    return Err(ExprError::compile("expected name", prop.span.clone()));
                }
                let key = self.make(Kind::Str(prop.text.clone()), prop.span.clone())?;
                let span = node.span.start..prop.span.end;
                let member = self.make(
                    Kind::Member {
                        base: Box::new(node),
                        prop: Box::new(key),
                    },
                    span.clone(),
                )?;
                if self.cur().is_bracket("(") {
                    let args = self.arguments(Vec::new())?;
                    let end = self.tokens[self.pos.saturating_sub(1)].span.end;
                    node = self.make(
                        Kind::Call {
                            callee: Box::new(member),
                            args,
                        },
                        span.start..end,
                    )?;
                } else {
                    node = member;
                }
            } else if tok.is_bracket("[") {
                node = self.index(node)?;
            } else {
                return Ok(node);
            }
        }
    }

    /// `[i]`, `[a:b]`, `[:b]`, `[a:]`, `[:]` with the cursor on `[`.
    fn index(&mut self, base: Node) -> PResult<Node> {
        self.enter()?;
        self.next();
        let start = base.span.start;
        let node = if self.cur().is_op(":") {
            self.next();
            let to = if self.cur().is_bracket("]") {
                None
            } else {
                Some(Box::new(self.expression(0)?))
            };
            let end = self.cur().span.end;
            self.expect_bracket("]")?;
            self.make(
                Kind::Slice {
                    base: Box::new(base),
                    from: None,
                    to,
                },
                start..end,
            )?
        } else {
            let from = self.expression(0)?;
            if self.cur().is_op(":") {
                self.next();
                let to = if self.cur().is_bracket("]") {
                    None
                } else {
                    Some(Box::new(self.expression(0)?))
                };
                let end = self.cur().span.end;
                self.expect_bracket("]")?;
                self.make(
                    Kind::Slice {
                        base: Box::new(base),
                        from: Some(Box::new(from)),
                        to,
                    },
                    start..end,
                )?
            } else {
                let end = self.cur().span.end;
                self.expect_bracket("]")?;
                self.make(
                    Kind::Member {
                        base: Box::new(base),
                        prop: Box::new(from),
                    },
                    start..end,
                )?
            }
        };
        self.recursion -= 1;
        Ok(node)
    }

    fn arguments(&mut self, mut args: Vec<Node>) -> PResult<Vec<Node>> {
        self.enter()?;
        let offset = args.len();
        self.expect_bracket("(")?;
        while !self.cur().is_bracket(")") {
            if args.len() > offset {
                self.expect_op(",")?;
            }
            if self.cur().is_bracket(")") {
                break;
            }
            args.push(self.expression(0)?);
        }
        self.expect_bracket(")")?;
        self.recursion -= 1;
        Ok(args)
    }

    /// A call of `name`; `args` holds the piped value, if any.
    fn call(&mut self, name: Token, args: Vec<Node>) -> PResult<Node> {
        let start = args.first().map_or(name.span.start, |a| a.span.start);
        let native = (self.is_native)(&name.text);
        if !native {
            if let Some(spec) = builtins::predicate_args(&name.text) {
                return self.predicate_call(name, args, spec, start);
            }
        }
        let args = self.arguments(args)?;
        let end = self.tokens[self.pos.saturating_sub(1)].span.end;
        if !native && builtins::is_builtin(&name.text) {
            return self.make(
                Kind::Builtin {
                    name: name.text.clone(),
                    args,
                },
                start..end,
            );
        }
        let callee = self.make(Kind::Ident(name.text.clone()), name.span.clone())?;
        self.make(
            Kind::Call {
                callee: Box::new(callee),
                args,
            },
            start..end,
        )
    }

    fn predicate_call(
        &mut self,
        name: Token,
        mut args: Vec<Node>,
        spec: &[PredArg],
        start: usize,
    ) -> PResult<Node> {
        self.enter()?;
        self.expect_bracket("(")?;
        let wanted = &spec[args.len().min(spec.len())..];
        for (i, arg) in wanted.iter().enumerate() {
            if self.cur().is_bracket(")") {
                if arg.optional {
                    break;
                }
                return Err(ExprError::compile(
                    format!("expected at least {} arguments", wanted.len()),
                    self.cur().span.clone(),
                ));
            }
            if i > 0 {
                self.expect_op(",")?;
            }
            let node = if arg.closure {
                self.closure()?
            } else {
                self.expression(0)?
            };
            args.push(node);
        }
        if self.cur().is_op(",") {
            self.next();
        }
        let end = self.cur().span.end;
        self.expect_bracket(")")?;
        self.recursion -= 1;
        self.make(
            Kind::Builtin {
                name: name.text.clone(),
                args,
            },
            start..end,
        )
    }

    fn closure(&mut self) -> PResult<Node> {
        let start = self.cur().span.start;
        let braced = self.cur().is_bracket("{");
        if braced {
            self.next();
        }
        self.closure_depth += 1;
        let body = if braced {
            self.sequence()
        } else {
            let b = self.expression(0);
            if b.is_ok() && self.cur().is_op(";") {
                Err(ExprError::compile(
                    "wrap predicate with brackets { and }",
                    self.cur().span.clone(),
                ))
            } else {
                b
            }
        };
        self.closure_depth -= 1;
        let body = body?;
        let mut end = body.span.end;
        if braced {
            end = self.cur().span.end;
            self.expect_bracket("}")?;
        }
        self.make(Kind::Predicate(Box::new(body)), start..end)
    }
}

fn number_literal(tok: &Token) -> PResult<Kind> {
    let raw: String = tok.text.chars().filter(|&c| c != '_').collect();
    let lower = raw.to_ascii_lowercase();
    let err =
        |what: &str| ExprError::compile(format!("invalid {what} literal: {raw}"), tok.span.clone());
    let radix = |prefix_len: usize, base: u32, what: &str| {
        i64::from_str_radix(&raw[prefix_len..], base).map_err(|_| err(what))
    };
    if lower.starts_with("0x") {
        return Ok(Kind::Int(radix(2, 16, "hex")?));
    }
    if lower.contains('.') || lower.contains('e') {
        let f: f64 = raw.parse().map_err(|_| err("float"))?;
        if f.is_infinite() {
            return Err(err("float"));
        }
        return Ok(Kind::Float(f));
    }
    if lower.starts_with("0b") {
        return Ok(Kind::Int(radix(2, 2, "binary")?));
    }
    if lower.starts_with("0o") {
        return Ok(Kind::Int(radix(2, 8, "octal")?));
    }
    raw.parse::<i64>()
        .map(Kind::Int)
        .map_err(|_| err("integer"))
}

/// The parser's behaviour, one rule of the grammar at a time. Trees are written as
/// S-expressions: `(+ 1 (* 2 3))`, `(. base prop)`, `(call f args…)`, `(? c a b)`.
#[cfg(test)]
mod tests {
    use super::parse;
    use crate::expr::ast::{Kind, Node};
    use crate::expr::lexer::tokenize;

    /// `text` parsed, as an S-expression. Only `upper` is a native (host) function.
    fn tree(text: &str) -> String {
        let tokens = tokenize(text).expect("the test text lexes");
        match parse(tokens, &|name| name == "upper") {
            Ok(node) => sexp(&node),
            Err(e) => panic!("{text:?} does not parse: {}", e.message),
        }
    }

    /// The message and span of the error `text` gives.
    fn error(text: &str) -> (String, std::ops::Range<usize>) {
        let tokens = tokenize(text).expect("the test text lexes");
        match parse(tokens, &|_| false) {
            Ok(node) => panic!("{text:?} parses, as {}", sexp(&node)),
            Err(e) => (e.message, e.span),
        }
    }

    fn sexp(node: &Node) -> String {
        let all = |nodes: &[Node]| nodes.iter().map(sexp).collect::<Vec<_>>().join(" ");
        match &node.kind {
            Kind::Nil => "nil".into(),
            Kind::Bool(b) => b.to_string(),
            Kind::Int(n) => n.to_string(),
            Kind::Float(f) => format!("{f:?}"),
            Kind::Str(s) => format!("{s:?}"),
            Kind::Ident(name) => name.to_string(),
            Kind::Pointer(None) => "#".into(),
            Kind::Pointer(Some(name)) => format!("#{name}"),
            Kind::Unary(op, a) => format!("({op:?} {})", sexp(a)),
            Kind::Binary(op, a, b) => format!("({op:?} {} {})", sexp(a), sexp(b)),
            Kind::Member { base, prop } => format!("(. {} {})", sexp(base), sexp(prop)),
            Kind::Slice { base, from, to } => {
                let bound = |b: &Option<Box<Node>>| b.as_deref().map_or("_".into(), sexp);
                format!("(slice {} {} {})", sexp(base), bound(from), bound(to))
            }
            Kind::Call { callee, args } => format!("(call {} {})", sexp(callee), all(args)),
            Kind::Builtin { name, args } => format!("({name} {})", all(args)),
            Kind::Predicate(body) => format!("{{{}}}", sexp(body)),
            Kind::Conditional(c, a, b) => format!("(? {} {} {})", sexp(c), sexp(a), sexp(b)),
            Kind::List(items) => format!("[{}]", all(items)),
            Kind::Map(pairs) => {
                let pairs: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", sexp(k), sexp(v)))
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
            Kind::Let { name, value, body } => {
                format!("(let {name} {} {})", sexp(value), sexp(body))
            }
            Kind::Sequence(items) => format!("(; {})", all(items)),
        }
    }

    #[test]
    fn multiplication_binds_tighter_than_addition() {
        assert_eq!(tree("1 + 2 * 3"), "(Add 1 (Mul 2 3))");
        assert_eq!(tree("(1 + 2) * 3"), "(Mul (Add 1 2) 3)");
    }

    #[test]
    fn operators_of_one_level_group_to_the_left_except_power() {
        assert_eq!(tree("8 - 4 - 2"), "(Sub (Sub 8 4) 2)");
        assert_eq!(tree("2 ** 3 ** 2"), "(Pow 2 (Pow 3 2))");
    }

    #[test]
    fn and_binds_tighter_than_or() {
        assert_eq!(tree("a || b && c"), "(Or a (And b c))");
        assert_eq!(tree("a or b and c"), "(Or a (And b c))");
    }

    #[test]
    fn comparisons_chain_as_a_conjunction() {
        assert_eq!(tree("1 < x <= 3"), "(And (Lt 1 x) (Le x 3))");
    }

    #[test]
    fn not_before_a_word_operator_negates_it() {
        assert_eq!(tree("a not in b"), "(Not (In a b))");
        assert_eq!(tree("not a"), "(Not a)");
    }

    #[test]
    fn a_coalesce_chain_takes_no_other_operator_without_parentheses() {
        assert_eq!(tree("a ?? b ?? c"), "(Coalesce (Coalesce a b) c)");
        assert_eq!(tree("(a ?? b) || c"), "(Or (Coalesce a b) c)");
        let (message, span) = error("a ?? b || c");
        assert_eq!(
            message,
            "Operator (||) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses."
        );
        assert_eq!(span, 7..9);
    }

    #[test]
    fn members_index_and_slices_follow_their_base() {
        assert_eq!(tree("a.b.c"), r#"(. (. a "b") "c")"#);
        assert_eq!(tree("a[0]"), "(. a 0)");
        assert_eq!(tree("a[1:]"), "(slice a 1 _)");
    }

    #[test]
    fn a_ternary_and_its_short_form() {
        assert_eq!(tree("a ? b : c"), "(? a b c)");
        assert_eq!(tree("a ?: c"), "(? a a c)");
        assert_eq!(tree("if a { b } else { c }"), "(? a b c)");
    }

    #[test]
    fn let_binds_a_name_for_the_rest() {
        assert_eq!(tree("let x = 1; x + 1"), "(let x 1 (Add x 1))");
    }

    #[test]
    fn lists_and_maps_allow_a_trailing_comma() {
        assert_eq!(tree("[1, 'two',]"), r#"[1 "two"]"#);
        assert_eq!(tree("{a: 1, 'b c': 2,}"), r#"{"a": 1, "b c": 2}"#);
    }

    #[test]
    fn a_pipe_passes_its_left_side_as_the_first_argument() {
        assert_eq!(tree("name | upper()"), "(call upper name)");
    }

    #[test]
    fn a_native_function_is_a_call_and_a_predicate_takes_a_closure() {
        assert_eq!(tree("upper(x)"), "(call upper x)");
        assert_eq!(tree("filter(xs, # > 1)"), "(filter xs {(Gt # 1)})");
        assert_eq!(tree("map(xs, .name)"), r#"(map xs {(. # "name")})"#);
    }

    #[test]
    fn unexpected_tokens_are_named_with_their_place() {
        let (message, span) = error("1 +");
        assert_eq!(message, "unexpected token EOF");
        assert_eq!(span, 3..3);
        let (message, span) = error("a b");
        assert_eq!(message, r#"unexpected token Identifier("b")"#);
        assert_eq!(span, 2..3);
    }

    #[test]
    fn a_map_key_must_be_a_name_a_string_a_number_or_parenthesised() {
        let (message, span) = error("{[1]: 2}");
        assert!(message.starts_with("a map key must be"), "{message}");
        assert_eq!(span, 1..2);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(2000), ")".repeat(2000));
        let (message, _) = error(&deep);
        assert_eq!(message, "expression is nested too deeply");
    }
}
