//! The fast front end: reads the YAML that templates are made of straight into
//! [`Node`]s, without a token or event stream in between.
//!
//! It covers the common shapes only — block maps and lists (compact `- key: v`
//! entries included), plain, quoted and block scalars, one-line flow lists and maps,
//! comments — and answers `None` for anything else: anchors, aliases, tags, merge
//! keys, empty values, multi-line plain or quoted scalars, indentless lists,
//! documents markers, tabs, carriage returns, and every error. The caller then parses
//! the text again with the full loader ([`super::load`]), so errors keep their
//! messages and positions and every rarer construct its one implementation.
//!
//! What it does accept must come out exactly as the full loader builds it: the same
//! values, styles and spans (the spans saphyr-parser reports, in bytes). The fuzz
//! driver's `yaml` surface compares the two on mutated templates.

use super::intern::Interner;
use super::load::{plain_non_string, MAX_DEPTH};
use super::node::{Key, Node, NodeKind, ScalarStyle};
use crate::files::{FileId, Span};
use rustc_hash::FxHashSet;
use std::borrow::Cow;
use std::sync::Arc;

/// Longest implicit key the fast path reads (YAML allows 1024 characters).
const KEY_LIMIT: usize = 1000;

/// Nesting the fast path reads; deeper documents go to the full loader, which reports
/// [`MAX_DEPTH`].
const DEPTH_LIMIT: usize = MAX_DEPTH / 2;

/// Maps up to this size look for a duplicate key by scanning; larger ones keep a set.
const LINEAR_KEYS: usize = 16;

/// Parses `text` when it uses only the constructs this front end reads; `None` means
/// "use the full loader".
pub(crate) fn parse(text: &str, file: FileId, interner: &mut Interner) -> Option<Node> {
    // saphyr-parser ends the last token's span past blanks that close a text
    // without a final line break; such texts are left to it.
    if text.len() >= u32::MAX as usize || text.ends_with(' ') || !plain_text(text) {
        return None;
    }
    let mut reader = Reader {
        text,
        b: text.as_bytes(),
        file,
        pos: 0,
        depth: 0,
        interner,
        entries: Vec::with_capacity(64),
        items: Vec::with_capacity(64),
    };
    reader.document()
}

/// No tab, carriage return, other control character, byte-order mark or character
/// that YAML treats specially (NEL, line and paragraph separators, non-characters).
fn plain_text(text: &str) -> bool {
    let bad = text.as_bytes().iter().fold(false, |bad, &b| {
        bad | ((b < 0x20 && b != b'\n') | (b == 0x7f))
    });
    if bad {
        return false;
    }
    text.is_ascii()
        || text.chars().all(|c| {
            let u = c as u32;
            !((0x80..=0x9f).contains(&u)
                || u == 0xfeff
                || u == 0x2028
                || u == 0x2029
                || u == 0xfffe
                || u == 0xffff)
        })
}

#[derive(Clone, Copy)]
struct Line {
    start: usize,
    indent: usize,
}

impl Line {
    fn content(self) -> usize {
        self.start + self.indent
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Chomp {
    Clip,
    Strip,
    Keep,
}

struct Reader<'a, 'i> {
    text: &'a str,
    b: &'a [u8],
    file: FileId,
    /// Start of the line after the node read last.
    pos: usize,
    depth: usize,
    interner: &'i mut Interner,
    /// Entries and items of the collections being read, innermost last: each
    /// collection takes its own off the top when it ends, into a vector of exactly
    /// its size (no growth, no shrinking copy).
    entries: Vec<(Key, Node)>,
    items: Vec<Node>,
}

impl<'a> Reader<'a, '_> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(b'\n')
    }

    /// Whether `i` ends a token: a space, a line break or the end of the text.
    fn blank_or_end(&self, i: usize) -> bool {
        matches!(self.at(i), b' ' | b'\n')
    }

    fn skip_spaces(&self, mut i: usize) -> usize {
        while i < self.b.len() && self.b[i] == b' ' {
            i += 1;
        }
        i
    }

    /// Index of the line break ending the line of `i`, or the text's length.
    fn line_end(&self, i: usize) -> usize {
        match self.b.get(i..) {
            Some(rest) => rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(self.b.len(), |k| i + k),
            None => self.b.len(),
        }
    }

    /// The start of the line after the one holding `i`.
    fn next_line_start(&self, i: usize) -> usize {
        (self.line_end(i) + 1).min(self.b.len())
    }

    /// The next line with content from line start `i` on, past blank and comment
    /// lines; `Some(None)` at the end of the text, `None` at a document marker.
    fn next_line(&self, i: usize) -> Option<Option<Line>> {
        self.next_line_or_marker(i, false)
    }

    /// [`Reader::next_line`], which takes a document marker for a line when `marker`.
    fn next_line_or_marker(&self, mut i: usize, marker: bool) -> Option<Option<Line>> {
        let b = self.b;
        loop {
            if i >= b.len() {
                return Some(None);
            }
            let start = i;
            i = self.skip_spaces(i);
            match b.get(i) {
                None => return Some(None),
                Some(b'\n') => i += 1,
                Some(b'#') => i = self.next_line_start(i),
                Some(_) => {
                    if i == start
                        && !marker
                        && (b[i..].starts_with(b"---") || b[i..].starts_with(b"..."))
                    {
                        return None;
                    }
                    return Some(Some(Line {
                        start,
                        indent: i - start,
                    }));
                }
            }
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= DEPTH_LIMIT).then_some(())
    }

    fn intern_key(&mut self, name: &str) -> Arc<str> {
        self.interner.key(name)
    }

    fn string(&mut self, text: &str) -> NodeKind {
        NodeKind::Str(self.interner.value(text))
    }

    fn scalar(&mut self, text: &str, style: ScalarStyle, start: usize, end: usize) -> Node {
        let kind = if style == ScalarStyle::Plain {
            match plain_non_string(text) {
                Some(kind) => kind,
                None => self.string(text),
            }
        } else {
            self.string(text)
        };
        Node {
            kind,
            span: self.span(start, end),
            style: Some(style),
        }
    }

    fn document(&mut self) -> Option<Node> {
        let Some(line) = self.next_line_or_marker(0, true)? else {
            return Some(Node {
                kind: NodeKind::Null,
                span: self.span(0, 0),
                style: Some(ScalarStyle::Plain),
            });
        };
        // A `---` that opens the only document.
        let line = if self.b[line.content()..].starts_with(b"---")
            && line.indent == 0
            && self.end_of_line(line.start + 3).is_some()
        {
            self.next_line(self.pos)??
        } else {
            line
        };
        let root = self.block_node(line)?;
        match self.next_line(self.pos)? {
            None => Some(root),
            Some(_) => None,
        }
    }

    /// A block list or map whose first line is `line`.
    fn block_node(&mut self, line: Line) -> Option<Node> {
        self.enter()?;
        let at = line.content();
        let node = if self.is_dash(at) {
            self.block_seq(at, line.indent, line.start, false)
        } else {
            self.block_map(at, line.indent)
        };
        self.depth -= 1;
        node
    }

    /// A `-` that starts a list entry.
    fn is_dash(&self, i: usize) -> bool {
        self.at(i) == b'-' && i < self.b.len() && self.blank_or_end(i + 1)
    }

    fn block_map(&mut self, first: usize, indent: usize) -> Option<Node> {
        let base = self.entries.len();
        let mut seen: Option<FxHashSet<Arc<str>>> = None;
        let mut at = first;
        let mut end = first;
        loop {
            let (key, after) = self.key(at)?;
            let value = self.value(after, indent as isize, true)?;
            end = end.max(key.span.end as usize).max(value.span.end as usize);
            // A duplicate key is an error the full loader reports.
            let written = &self.entries[base..];
            match &mut seen {
                Some(set) => {
                    if !set.insert(Arc::clone(&key.name)) {
                        return None;
                    }
                }
                None => {
                    if written.iter().any(|(k, _)| k.name == key.name) {
                        return None;
                    }
                    if written.len() >= LINEAR_KEYS {
                        let mut set: FxHashSet<Arc<str>> =
                            written.iter().map(|(k, _)| Arc::clone(&k.name)).collect();
                        set.insert(Arc::clone(&key.name));
                        seen = Some(set);
                    }
                }
            }
            self.entries.push((key, value));
            match self.next_line(self.pos)? {
                Some(line) if line.indent == indent => {
                    at = line.content();
                    if self.is_dash(at) {
                        return None;
                    }
                }
                Some(line) if line.indent > indent => return None,
                _ => break,
            }
        }
        let entries: Box<[(Key, Node)]> = self.entries.drain(base..).collect();
        Some(Node {
            kind: NodeKind::Map(entries),
            span: self.span(first, end),
            style: None,
        })
    }

    /// A block list whose first `-` is at `first`, column `indent`; an `indentless`
    /// one is a map value at its key's indentation, and ends at the next key.
    fn block_seq(
        &mut self,
        first: usize,
        indent: usize,
        mut line_start: usize,
        indentless: bool,
    ) -> Option<Node> {
        let base = self.items.len();
        let mut dash = first;
        let mut end = first;
        loop {
            let after = dash + 1;
            let q = self.skip_spaces(after);
            let node = match self.at(q) {
                b'\n' | b'#' => self.value(after, indent as isize, false)?,
                _ if self.is_dash(q) => {
                    self.enter()?;
                    let node = self.block_seq(q, q - line_start, line_start, false)?;
                    self.depth -= 1;
                    node
                }
                _ if self.is_key(q) => {
                    self.enter()?;
                    let node = self.block_map(q, q - line_start)?;
                    self.depth -= 1;
                    node
                }
                _ => self.inline(q, indent as isize)?,
            };
            end = end.max(node.span.end as usize);
            self.items.push(node);
            match self.next_line(self.pos)? {
                Some(line) if line.indent == indent && self.is_dash(line.content()) => {
                    dash = line.content();
                    line_start = line.start;
                }
                Some(line) if line.indent > indent || (line.indent == indent && !indentless) => {
                    return None
                }
                _ => break,
            }
        }
        let items: Box<[Node]> = self.items.drain(base..).collect();
        // saphyr-parser starts an indentless list at its first entry's `-` token, which
        // it places past the blanks (and a comment) after the `-`.
        let start = if indentless {
            self.quoted_end(first + 1)
        } else {
            first
        };
        Some(Node {
            kind: NodeKind::Seq(items),
            span: self.span(start, end.max(start)),
            style: None,
        })
    }

    /// Whether an implicit key (a scalar and `: `) starts at `i`.
    fn is_key(&self, i: usize) -> bool {
        let b = self.b;
        let mut r = match self.at(i) {
            b'"' => {
                let mut r = i + 1;
                loop {
                    match self.at(r) {
                        b'\n' => return false,
                        b'\\' => r += 2,
                        b'"' => break r + 1,
                        _ => r += 1,
                    }
                }
            }
            b'\'' => {
                let mut r = i + 1;
                loop {
                    match self.at(r) {
                        b'\n' => return false,
                        b'\'' if self.at(r + 1) == b'\'' => r += 2,
                        b'\'' => break r + 1,
                        _ => r += 1,
                    }
                }
            }
            _ => {
                let mut r = i;
                while r < b.len() && b[r] != b'\n' {
                    if b[r] == b':' && self.blank_or_end(r + 1) {
                        return true;
                    }
                    if b[r] == b'#' && r > i && b[r - 1] == b' ' {
                        return false;
                    }
                    r += 1;
                }
                return false;
            }
        };
        r = self.skip_spaces(r);
        self.at(r) == b':' && r < b.len() && self.blank_or_end(r + 1)
    }

    /// A key at `i` and the position after its `:`.
    fn key(&mut self, i: usize) -> Option<(Key, usize)> {
        let b = self.b;
        let c = self.at(i);
        if c == b'"' || c == b'\'' {
            let (name, end) = self.quoted(i)?;
            let colon = self.skip_spaces(end);
            if self.at(colon) != b':' || colon >= b.len() || !self.blank_or_end(colon + 1) {
                return None;
            }
            let key = Key {
                name: self.intern_key(&name),
                span: self.span(i, colon),
            };
            return Some((key, colon + 1));
        }
        if !starts_plain(c, self.at(i + 1)) {
            return None;
        }
        let mut r = i;
        loop {
            match b.get(r) {
                None | Some(b'\n') => return None,
                Some(b':') if self.blank_or_end(r + 1) => break,
                Some(b'#') if b[r - 1] == b' ' => return None,
                _ => r += 1,
            }
        }
        let mut end = r;
        while end > i && b[end - 1] == b' ' {
            end -= 1;
        }
        let name = &self.text[i..end];
        if end - i > KEY_LIMIT || name == "<<" {
            return None;
        }
        let key = Key {
            name: self.intern_key(name),
            span: self.span(i, end),
        };
        Some((key, r + 1))
    }

    /// The value after a `:` (`in_map`) or `-` at `after - 1`, in a collection
    /// indented `parent`.
    fn value(&mut self, after: usize, parent: isize, in_map: bool) -> Option<Node> {
        let q = self.skip_spaces(after);
        match self.at(q) {
            b'\n' | b'#' => {
                self.pos = self.next_line_start(q);
                match self.next_line(self.pos)? {
                    // On the lines below, indented deeper.
                    Some(line) if line.indent as isize > parent => self.block_node(line),
                    // A list at the key's own indentation.
                    Some(line)
                        if in_map
                            && line.indent as isize == parent
                            && self.is_dash(line.content()) =>
                    {
                        self.enter()?;
                        let node = self.block_seq(line.content(), line.indent, line.start, true);
                        self.depth -= 1;
                        node
                    }
                    // Empty: the full loader.
                    _ => None,
                }
            }
            _ => self.inline(q, parent),
        }
    }

    /// A node that starts on the current line at `q`: a scalar, a flow collection or
    /// a block scalar. Leaves `pos` at the start of the next line.
    fn inline(&mut self, q: usize, parent: isize) -> Option<Node> {
        match self.at(q) {
            b'"' | b'\'' => {
                let (value, end) = self.quoted(q)?;
                let style = if self.at(q) == b'"' {
                    ScalarStyle::DoubleQuoted
                } else {
                    ScalarStyle::SingleQuoted
                };
                let node = self.scalar(&value, style, q, self.quoted_end(end));
                self.end_of_line(end)?;
                Some(node)
            }
            b'[' | b'{' => {
                let (node, end) = self.flow(q)?;
                self.end_of_line(end)?;
                Some(node)
            }
            b'|' | b'>' => self.block_scalar(q, parent),
            c => {
                if !starts_plain(c, self.at(q + 1)) {
                    return None;
                }
                let (end, comment) = self.plain_line(q)?;
                let text = self.text;
                let mut folded: Option<String> = None;
                let mut last = end;
                let mut next = self.next_line_start(last);
                // Continuation lines, indented deeper than the collection, fold into
                // one value: a line break becomes a space, empty lines stay breaks.
                if !comment {
                    loop {
                        let mut breaks = 0;
                        let mut line = next;
                        let indent = loop {
                            let s = self.skip_spaces(line) - line;
                            match self.b.get(line + s) {
                                Some(b'\n') => {
                                    breaks += 1;
                                    line += s + 1;
                                }
                                Some(_) => break s,
                                None => break 0,
                            }
                        };
                        let at = line + indent;
                        if indent as isize <= parent
                            || at >= self.b.len()
                            || !starts_plain(self.b[at], self.at(at + 1))
                        {
                            break;
                        }
                        let (line_end, line_comment) = self.plain_line(at)?;
                        let value = folded.get_or_insert_with(|| text[q..end].to_string());
                        if breaks == 0 {
                            value.push(' ');
                        } else {
                            value.extend(std::iter::repeat_n('\n', breaks));
                        }
                        value.push_str(&text[at..line_end]);
                        last = line_end;
                        next = self.next_line_start(last);
                        if line_comment {
                            break;
                        }
                    }
                }
                self.pos = next;
                let value = folded.as_deref().unwrap_or(&text[q..end]);
                Some(self.scalar(value, ScalarStyle::Plain, q, last))
            }
        }
    }

    /// One line of a plain scalar in a block from `q`: where its text ends (trailing
    /// spaces excluded) and whether a comment follows. `None` at a `: `, which makes it
    /// a key where no key may be.
    fn plain_line(&self, q: usize) -> Option<(usize, bool)> {
        let b = self.b;
        let mut r = q;
        let mut end = q;
        while r < b.len() && b[r] != b'\n' {
            match b[r] {
                b':' if self.blank_or_end(r + 1) => return None,
                b'#' if b[r - 1] == b' ' => return Some((end, true)),
                b' ' => {}
                _ => end = r + 1,
            }
            r += 1;
        }
        Some((end, false))
    }

    /// After a node that ends at `end`: only spaces and a comment may follow on its line.
    fn end_of_line(&mut self, end: usize) -> Option<()> {
        let r = self.skip_spaces(end);
        match self.at(r) {
            b'\n' => {}
            b'#' if r > end => {}
            _ => return None,
        }
        self.pos = self.next_line_start(r);
        Some(())
    }

    /// Where saphyr-parser ends a quoted scalar's span (`close` is after its closing
    /// quote) or a closing bracket's, or places a `-` token (`close` is after the
    /// `-`): past the spaces that follow, and past a comment after them.
    fn quoted_end(&self, close: usize) -> usize {
        let r = self.skip_spaces(close);
        if r > close && self.at(r) == b'#' {
            self.line_end(r)
        } else {
            r
        }
    }

    /// A one-line quoted scalar at `i`: its value and the position after its closing quote.
    fn quoted(&self, i: usize) -> Option<(Cow<'a, str>, usize)> {
        let b = self.b;
        let text = self.text;
        let mut out: Option<String> = None;
        let mut seg = i + 1;
        let mut r = i + 1;
        // Each step jumps to the next byte that matters (most scalars are an
        // expression with no escape: one search finds the closing quote).
        if b[i] == b'\'' {
            loop {
                r += memchr::memchr2(b'\'', b'\n', b.get(r..)?)?;
                match b[r] {
                    b'\'' if self.at(r + 1) == b'\'' => {
                        out.get_or_insert_with(String::new).push_str(&text[seg..=r]);
                        r += 2;
                        seg = r;
                    }
                    b'\'' => break,
                    _ => return None,
                }
            }
        } else {
            loop {
                r += memchr::memchr3(b'"', b'\n', b'\\', b.get(r..)?)?;
                match b[r] {
                    b'"' => break,
                    b'\\' => {
                        let buf = out.get_or_insert_with(String::new);
                        buf.push_str(&text[seg..r]);
                        let (c, len) = escape(b, r + 1)?;
                        buf.push(c);
                        r += 1 + len;
                        seg = r;
                    }
                    _ => return None,
                }
            }
        }
        let value = match out {
            None => Cow::Borrowed(&text[seg..r]),
            Some(mut buf) => {
                buf.push_str(&text[seg..r]);
                Cow::Owned(buf)
            }
        };
        Some((value, r + 1))
    }

    /// A flow list or map on one line at `i`, and the position after its bracket.
    fn flow(&mut self, i: usize) -> Option<(Node, usize)> {
        self.enter()?;
        let seq = self.b[i] == b'[';
        let close = if seq { b']' } else { b'}' };
        let (items_base, entries_base) = (self.items.len(), self.entries.len());
        let mut r = self.skip_spaces(i + 1);
        if self.at(r) != close {
            loop {
                if seq {
                    let (node, end) = self.flow_item(r)?;
                    self.items.push(node);
                    r = end;
                } else {
                    let (key, after) = self.flow_key(r)?;
                    let at = self.skip_spaces(after);
                    if matches!(self.at(at), b',' | b'}' | b'\n' | b'#') {
                        return None;
                    }
                    let (node, end) = self.flow_item(at)?;
                    if self.entries[entries_base..]
                        .iter()
                        .any(|(k, _)| k.name == key.name)
                    {
                        return None;
                    }
                    self.entries.push((key, node));
                    r = end;
                }
                r = self.skip_spaces(r);
                match self.at(r) {
                    b',' => {
                        r = self.skip_spaces(r + 1);
                        if matches!(self.at(r), b']' | b'}' | b',') {
                            return None;
                        }
                    }
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        let kind = if seq {
            NodeKind::Seq(self.items.drain(items_base..).collect())
        } else {
            NodeKind::Map(self.entries.drain(entries_base..).collect())
        };
        // saphyr-parser's closing bracket token runs past the blanks (and a comment)
        // after it, and the collection's span ends with that token.
        let node = Node {
            kind,
            span: self.span(i, self.quoted_end(r + 1)),
            style: None,
        };
        Some((node, r + 1))
    }

    /// A key in a flow map and the position after its `:`.
    fn flow_key(&mut self, i: usize) -> Option<(Key, usize)> {
        let (name, end, span_end) = match self.at(i) {
            b'"' | b'\'' => {
                let (name, end) = self.quoted(i)?;
                (name, end, self.quoted_end(end))
            }
            c => {
                if !starts_plain_in_flow(c, self.at(i + 1)) {
                    return None;
                }
                let end = self.flow_plain_end(i, true)?;
                (Cow::Borrowed(&self.text[i..end]), end, end)
            }
        };
        let colon = self.skip_spaces(end);
        if self.at(colon) != b':' || self.at(colon + 1) != b' ' || colon >= self.b.len() {
            return None;
        }
        let key = Key {
            name: self.intern_key(&name),
            span: self.span(i, span_end),
        };
        Some((key, colon + 1))
    }

    /// A node inside a flow collection and the position after it.
    fn flow_item(&mut self, i: usize) -> Option<(Node, usize)> {
        match self.at(i) {
            b'[' | b'{' => self.flow(i),
            b'"' | b'\'' => {
                let (value, end) = self.quoted(i)?;
                let style = if self.at(i) == b'"' {
                    ScalarStyle::DoubleQuoted
                } else {
                    ScalarStyle::SingleQuoted
                };
                let after = self.skip_spaces(end);
                if self.at(after) == b':' {
                    return None;
                }
                Some((self.scalar(&value, style, i, self.quoted_end(end)), end))
            }
            c => {
                if !starts_plain_in_flow(c, self.at(i + 1)) {
                    return None;
                }
                let end = self.flow_plain_end(i, false)?;
                if self.at(self.skip_spaces(end)) == b':' {
                    return None;
                }
                let text = self.text;
                Some((self.scalar(&text[i..end], ScalarStyle::Plain, i, end), end))
            }
        }
    }

    /// The end of a plain scalar in a flow collection starting at `i` (trailing spaces
    /// excluded); `None` at a `:` (unless it ends a `key`), a comment or the end of
    /// the line.
    fn flow_plain_end(&self, i: usize, key: bool) -> Option<usize> {
        let mut r = i;
        let mut end = i;
        loop {
            match self.b.get(r)? {
                b',' | b'[' | b']' | b'{' | b'}' => return Some(end),
                b':' if key && self.at(r + 1) == b' ' => return Some(end),
                b'\n' | b':' => return None,
                // saphyr-parser reads a `-` before a flow indicator as its own token.
                b'-' if is_flow_indicator(self.at(r + 1)) => return None,
                b'#' if self.b[r - 1] == b' ' => return None,
                b' ' => {}
                _ => end = r + 1,
            }
            r += 1;
        }
    }

    /// A `|` or `>` block scalar whose header is at `q`, in a collection indented
    /// `parent`. Leaves `pos` at the start of the line after it.
    fn block_scalar(&mut self, q: usize, parent: isize) -> Option<Node> {
        let b = self.b;
        let len = b.len();
        let literal = b[q] == b'|';
        let mut r = q + 1;
        let chomp = match self.at(r) {
            b'-' => {
                r += 1;
                Chomp::Strip
            }
            b'+' => {
                r += 1;
                Chomp::Keep
            }
            _ => Chomp::Clip,
        };
        match b.get(r) {
            Some(b'\n') => {}
            Some(b' ') => {
                let e = self.skip_spaces(r);
                if !matches!(b.get(e), Some(b'\n' | b'#')) {
                    return None;
                }
                r = e;
            }
            _ => return None,
        }
        let mut line = self.next_line_start(r);
        // Leading empty lines, then the first content line sets the indentation.
        let mut value = String::new();
        let mut widest_blank = 0;
        let (first, indent) = loop {
            if line >= len {
                return None;
            }
            let s = self.skip_spaces(line) - line;
            match b.get(line + s) {
                None => return None,
                Some(b'\n') => {
                    widest_blank = widest_blank.max(s);
                    value.push('\n');
                    line += s + 1;
                }
                Some(_) => break (line, s),
            }
        };
        if indent as isize <= parent || widest_blank > indent {
            return None;
        }
        let start = first + indent;
        let mut content = first;
        let mut breaks = 0usize;
        let mut started = false;
        let mut after_more_indented = false;
        let (end, next) = 'lines: loop {
            let text_start = content + indent;
            let line_end = self.line_end(text_start);
            if line_end >= len {
                return None;
            }
            // A folded line joins the one before unless either is more indented.
            let more_indented = b[text_start] == b' ';
            if started {
                if literal || more_indented || after_more_indented {
                    value.push('\n');
                    value.extend(std::iter::repeat_n('\n', breaks));
                } else if breaks == 0 {
                    value.push(' ');
                } else {
                    value.extend(std::iter::repeat_n('\n', breaks));
                }
            }
            started = true;
            after_more_indented = more_indented;
            breaks = 0;
            value.push_str(&self.text[text_start..line_end]);
            let mut next = line_end + 1;
            loop {
                if next >= len {
                    break 'lines (len, len);
                }
                let s = self.skip_spaces(next) - next;
                match b.get(next + s) {
                    None => return None,
                    Some(b'\n') => {
                        if s > indent {
                            return None;
                        }
                        breaks += 1;
                        next += s + 1;
                    }
                    Some(_) if s >= indent => {
                        content = next;
                        continue 'lines;
                    }
                    Some(_) => break 'lines (next + s, next),
                }
            }
        };
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => value.push('\n'),
            Chomp::Keep => {
                value.push('\n');
                value.extend(std::iter::repeat_n('\n', breaks));
            }
        }
        self.pos = next;
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        Some(self.scalar(&value, style, start, end))
    }
}

/// Whether a plain scalar may start with `c` (followed by `next`) in the fast path.
fn starts_plain(c: u8, next: u8) -> bool {
    match c {
        b'-' => !matches!(next, b' ' | b'\n'),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => false,
        _ => true,
    }
}

/// [`starts_plain`] inside a flow collection, where `-` before a flow indicator is
/// no scalar either.
fn starts_plain_in_flow(c: u8, next: u8) -> bool {
    starts_plain(c, next) && !is_flow_indicator(c) && !(c == b'-' && is_flow_indicator(next))
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

/// The character an escape stands for (`i` is just after the backslash) and the
/// number of bytes after the backslash it takes.
fn escape(b: &[u8], i: usize) -> Option<(char, usize)> {
    let digits = match b.get(i)? {
        b'0' => return Some(('\0', 1)),
        b'a' => return Some(('\x07', 1)),
        b'b' => return Some(('\x08', 1)),
        b't' => return Some(('\t', 1)),
        b'n' => return Some(('\n', 1)),
        b'v' => return Some(('\x0b', 1)),
        b'f' => return Some(('\x0c', 1)),
        b'r' => return Some(('\r', 1)),
        b'e' => return Some(('\x1b', 1)),
        b' ' => return Some((' ', 1)),
        b'"' => return Some(('"', 1)),
        b'/' => return Some(('/', 1)),
        b'\\' => return Some(('\\', 1)),
        b'N' => return Some(('\u{85}', 1)),
        b'_' => return Some(('\u{a0}', 1)),
        b'L' => return Some(('\u{2028}', 1)),
        b'P' => return Some(('\u{2029}', 1)),
        b'x' => 2,
        b'u' => 4,
        b'U' => 8,
        _ => return None,
    };
    let hex = b.get(i + 1..i + 1 + digits)?;
    let mut value = 0u32;
    for &h in hex {
        value = (value << 4) | (h as char).to_digit(16)?;
    }
    Some((char::from_u32(value)?, 1 + digits))
}
