//! Splits expression text into tokens the way expr-lang's lexer does: keyword
//! operators (`and`, `in`, `matches`…) are operators, `true`/`nil` are plain names,
//! numbers keep their raw text (the parser converts them, map keys use the text).

use super::error::ExprError;
use std::ops::Range;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident,
    Number,
    Str(Arc<str>),
    Operator,
    Bracket,
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: TokenKind,
    /// The raw text (for strings: the raw text including quotes).
    pub text: Arc<str>,
    pub span: Range<usize>,
}

impl Token {
    pub fn is(&self, kind: &TokenKind, text: &str) -> bool {
        self.kind == *kind && &*self.text == text
    }

    pub fn is_op(&self, text: &str) -> bool {
        self.is(&TokenKind::Operator, text)
    }

    pub fn is_bracket(&self, text: &str) -> bool {
        self.is(&TokenKind::Bracket, text)
    }

    /// How Go's parser names a token in "unexpected token …" messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            TokenKind::Eof => "EOF".to_string(),
            TokenKind::Ident => format!("Identifier({:?})", &*self.text),
            TokenKind::Number => format!("Number({:?})", &*self.text),
            TokenKind::Str(s) => format!("String({:?})", &**s),
            TokenKind::Operator => format!("Operator({:?})", &*self.text),
            TokenKind::Bracket => format!("Bracket({:?})", &*self.text),
        }
    }
}

/// Words the lexer turns into operators.
const WORD_OPERATORS: &[&str] = &[
    "not",
    "in",
    "and",
    "or",
    "matches",
    "contains",
    "startsWith",
    "endsWith",
];

fn is_ident_char(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphanumeric()
}

pub fn tokenize(src: &str) -> Result<Vec<Token>, ExprError> {
    Lexer {
        src,
        pos: 0,
        out: Vec::new(),
    }
    .run()
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    out: Vec<Token>,
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, skip: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(skip)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn accept(&mut self, set: &str) -> bool {
        match self.peek() {
            Some(c) if set.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn emit(&mut self, kind: TokenKind, start: usize) {
        self.out.push(Token {
            kind,
            text: self.src[start..self.pos].into(),
            span: start..self.pos,
        });
    }

    fn run(mut self) -> Result<Vec<Token>, ExprError> {
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                ' ' | '\t' | '\n' | '\r' => {
                    self.pos += 1;
                }
                '"' | '\'' => self.string(c)?,
                '`' => self.raw_string()?,
                '0'..='9' => self.number()?,
                '.' if matches!(self.peek_at(1), Some('0'..='9')) => self.number()?,
                '.' => {
                    self.pos += 1;
                    self.accept(".");
                    self.emit(TokenKind::Operator, start);
                }
                '?' => {
                    self.pos += 1;
                    self.accept(".?");
                    self.emit(TokenKind::Operator, start);
                }
                '/' => {
                    self.pos += 1;
                    if self.accept("/") {
                        while let Some(c) = self.bump() {
                            if c == '\n' {
                                break;
                            }
                        }
                    } else if self.accept("*") {
                        match self.src[self.pos..].find("*/") {
                            Some(end) => self.pos += end + 2,
                            None => {
                                return Err(ExprError::compile(
                                    "unclosed comment",
                                    start..self.src.len(),
                                ))
                            }
                        }
                    } else {
                        self.emit(TokenKind::Operator, start);
                    }
                }
                '(' | '[' | '{' | ')' | ']' | '}' => {
                    self.pos += 1;
                    self.emit(TokenKind::Bracket, start);
                }
                ',' | ':' | ';' | '%' | '+' | '-' | '^' | '#' => {
                    self.pos += 1;
                    self.emit(TokenKind::Operator, start);
                }
                '&' | '!' | '=' | '*' | '<' | '>' => {
                    self.pos += 1;
                    self.accept("&=*");
                    self.emit(TokenKind::Operator, start);
                }
                '|' => {
                    self.pos += 1;
                    self.accept("|");
                    self.emit(TokenKind::Operator, start);
                }
                c if is_ident_char(c) => {
                    while matches!(self.peek(), Some(c) if is_ident_char(c)) {
                        self.bump();
                    }
                    let word = &self.src[start..self.pos];
                    let kind = if WORD_OPERATORS.contains(&word) {
                        TokenKind::Operator
                    } else {
                        TokenKind::Ident
                    };
                    self.emit(kind, start);
                }
                other => {
                    self.bump();
                    return Err(ExprError::compile(
                        format!("unrecognized character: {other:?}"),
                        start..self.pos,
                    ));
                }
            }
        }
        let end = self.src.len();
        self.out.push(Token {
            kind: TokenKind::Eof,
            text: "".into(),
            span: end..end,
        });
        Ok(self.out)
    }

    fn number(&mut self) -> Result<(), ExprError> {
        let start = self.pos;
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        while self.accept(digits) {}
        let before_dot = self.pos;
        if self.accept(".") {
            // `1..2` is a range: the dot belongs to the operator.
            if self.peek() == Some('.') {
                self.pos = before_dot;
                self.emit(TokenKind::Number, start);
                return Ok(());
            }
            while self.accept(digits) {}
        }
        if self.accept("eE") {
            self.accept("+-");
            while self.accept(digits) {}
        }
        if matches!(self.peek(), Some(c) if c == '_' || c.is_alphanumeric()) {
            self.bump();
            return Err(ExprError::compile(
                format!("bad number syntax: {:?}", &self.src[start..self.pos]),
                start..self.pos,
            ));
        }
        self.emit(TokenKind::Number, start);
        Ok(())
    }

    fn raw_string(&mut self) -> Result<(), ExprError> {
        let start = self.pos;
        self.pos += 1;
        match self.src[self.pos..].find('`') {
            Some(end) => {
                let value: Arc<str> = self.src[self.pos..self.pos + end].into();
                self.pos += end + 1;
                self.emit(TokenKind::Str(value), start);
                Ok(())
            }
            None => Err(ExprError::compile(
                "literal not terminated",
                start..self.src.len(),
            )),
        }
    }

    fn string(&mut self, quote: char) -> Result<(), ExprError> {
        let start = self.pos;
        self.pos += 1;
        let mut bytes: Vec<u8> = Vec::new();
        loop {
            let at = self.pos;
            let c = match self.bump() {
                None | Some('\n') => {
                    return Err(ExprError::compile("literal not terminated", start..at))
                }
                Some(c) => c,
            };
            if c == quote {
                break;
            }
            if c != '\\' {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            self.escape(quote, &mut bytes)
                .map_err(|m| ExprError::compile(m, at..self.pos))?;
        }
        let value: Arc<str> = String::from_utf8_lossy(&bytes).into();
        self.emit(TokenKind::Str(value), start);
        Ok(())
    }

    fn hex_digits(&mut self, n: usize) -> Result<u32, &'static str> {
        let mut v: u32 = 0;
        for _ in 0..n {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    self.pos += 1;
                    v = v.wrapping_mul(16).wrapping_add(d);
                }
                None => return Err("invalid char escape"),
            }
        }
        Ok(v)
    }

    fn escape(&mut self, quote: char, out: &mut Vec<u8>) -> Result<(), &'static str> {
        let c = self.bump().ok_or("invalid char escape")?;
        let simple = match c {
            'a' => Some(7u8),
            'b' => Some(8),
            'f' => Some(12),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(11),
            '\\' => Some(b'\\'),
            '\'' | '"' if c == quote => Some(c as u8),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            return Ok(());
        }
        match c {
            'x' => {
                let v = self.hex_digits(2)?;
                out.push(v as u8);
            }
            'u' | 'U' => {
                let v = self.hex_digits(if c == 'u' { 4 } else { 8 })?;
                let ch = if (0xD800..0xE000).contains(&v) {
                    '\u{FFFD}'
                } else {
                    char::from_u32(v).ok_or("invalid char escape")?
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            '0'..='7' => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            self.pos += 1;
                            v = v * 8 + (d as u32 - '0' as u32);
                        }
                        _ => return Err("invalid char escape"),
                    }
                }
                if v > 255 {
                    return Err("unable to unescape string");
                }
                out.push(v as u8);
            }
            _ => return Err("invalid char escape"),
        }
        Ok(())
    }
}
