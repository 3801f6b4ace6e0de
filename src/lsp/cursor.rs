//! What is under the cursor in a document as the editor has it: the YAML path to the
//! innermost node there (from parsing the live text), and, inside an expression (a
//! `${…}` or a `when:`), the name, call or string argument at the cursor.

use crate::files::FileId;
use crate::yaml::{Node, NodeKind, ScalarStyle};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// The cursor in one document.
pub struct Cursor<'t> {
    pub text: &'t str,
    pub offset: usize,
    /// The parsed document, when it parses.
    pub root: Option<Node>,
    /// Keys and list indices from the root to the innermost node at the cursor.
    pub path: Vec<Segment>,
    /// The cursor is on a mapping key (the last segment), not a value.
    pub on_key: bool,
    /// The scalar at the cursor, with its byte range in the text.
    pub scalar: Option<(String, usize, usize)>,
    /// The expression around the cursor: its byte range in the text.
    pub expression: Option<(usize, usize)>,
}

/// What an expression has at the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A name path, up to the segment at the cursor: `cluster.workers`.
    Path {
        path: String,
        start: usize,
        end: usize,
    },
    /// A function name followed by `(`.
    Call {
        name: String,
        start: usize,
        end: usize,
    },
    /// A string literal that is argument `index` of a call of `function`.
    StringArgument {
        function: String,
        index: usize,
        value: String,
        start: usize,
        end: usize,
    },
}

impl<'t> Cursor<'t> {
    pub fn new(text: &'t str, offset: usize) -> Cursor<'t> {
        let offset = offset.min(text.len());
        let root = crate::yaml::parse(text, FileId(u32::MAX)).ok();
        let mut cursor = Cursor {
            text,
            offset,
            root: None,
            path: Vec::new(),
            on_key: false,
            scalar: None,
            expression: None,
        };
        if let Some(root) = &root {
            cursor.descend(root);
        }
        cursor.root = root;
        cursor.expression = cursor.find_expression();
        cursor
    }

    fn descend(&mut self, node: &Node) {
        let at = self.offset as u32;
        match &node.kind {
            NodeKind::Map(entries) => {
                for (key, value) in entries {
                    if key.span.start <= at && at <= key.span.end {
                        self.path.push(Segment::Key(key.name.to_string()));
                        self.on_key = true;
                        return;
                    }
                    if value.span.start <= at && at <= value.span.end && !value.is_null() {
                        self.path.push(Segment::Key(key.name.to_string()));
                        return self.descend(value);
                    }
                }
            }
            NodeKind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if item.span.start <= at && at <= item.span.end {
                        self.path.push(Segment::Index(i));
                        return self.descend(item);
                    }
                }
            }
            NodeKind::Str(s) => {
                self.scalar = Some((
                    s.to_string(),
                    node.span.start as usize,
                    node.span.end as usize,
                ));
                if node.style == Some(ScalarStyle::Plain) {
                    // Plain scalars' spans are their text: nothing to strip.
                }
            }
            _ => {
                let start = node.span.start as usize;
                let end = (node.span.end as usize).min(self.text.len());
                let raw = self.text.get(start..end).unwrap_or_default();
                self.scalar = Some((raw.to_string(), start, end));
            }
        }
    }

    /// The key path as text: `terraform.0.inputs.name`.
    pub fn keys(&self) -> Vec<&str> {
        self.path
            .iter()
            .filter_map(|s| match s {
                Segment::Key(k) => Some(k.as_str()),
                Segment::Index(_) => None,
            })
            .collect()
    }

    /// The last key of the path.
    pub fn last_key(&self) -> Option<&str> {
        self.keys().last().copied()
    }

    /// The `${…}` on the cursor's line that holds the cursor, else the whole value of
    /// a `when:` (an expression as written).
    fn find_expression(&self) -> Option<(usize, usize)> {
        let line_start = self.text[..self.offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[self.offset..]
            .find('\n')
            .map_or(self.text.len(), |i| self.offset + i);
        let line = &self.text[line_start..line_end];
        let mut search = 0;
        while let Some(found) = line[search..].find("${") {
            let open = search + found + 2;
            let close = closing_brace(&line[open..]).map_or(line.len(), |c| open + c);
            if line_start + open <= self.offset && self.offset <= line_start + close {
                return Some((line_start + open, line_start + close));
            }
            search = close.min(line.len());
            if search >= line.len() {
                break;
            }
        }
        if self.last_key() == Some("when") && !self.on_key {
            let (_, start, end) = self.scalar.as_ref()?;
            let raw = &self.text[*start..*end];
            let quoted = raw.starts_with('\'') || raw.starts_with('"');
            return Some(if quoted && end - start >= 2 {
                (start + 1, end - 1)
            } else {
                (*start, *end)
            });
        }
        None
    }

    /// The token of the expression at the cursor.
    pub fn token(&self) -> Option<Token> {
        let (start, end) = self.expression?;
        let expr = &self.text[start..end];
        let at = self.offset - start;
        if let Some((q_start, q_end)) = string_at(expr, at) {
            let (function, index) = call_of(expr, q_start)?;
            // Without its closing quote (still being typed) the string runs to the end.
            let inner = &expr[q_start + 1..q_end];
            let closed = q_end > q_start + 1 && inner.ends_with(&expr[q_start..q_start + 1]);
            let value = if closed {
                &inner[..inner.len() - 1]
            } else {
                inner
            };
            return Some(Token::StringArgument {
                function,
                index,
                value: value.to_string(),
                start: start + q_start,
                end: start + q_end,
            });
        }
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let mut from = at;
        while from > 0 && expr[..from].chars().next_back().is_some_and(is_name) {
            from -= 1;
        }
        let mut to = at;
        while to < expr.len() && expr[to..].chars().next().is_some_and(is_name) {
            to += 1;
        }
        let word = &expr[from..to];
        let word_start = from + word.len() - word.trim_start_matches('.').len();
        let word = word.trim_start_matches('.');
        if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        // Up to the end of the segment at the cursor.
        let cut = expr[at..to].find('.').map_or(to, |i| at + i);
        let path = expr[word_start..cut].trim_end_matches('.');
        let follows = expr[to..].trim_start();
        if follows.starts_with('(') && !word.contains('.') {
            return Some(Token::Call {
                name: word.to_string(),
                start: start + word_start,
                end: start + to,
            });
        }
        // A member of something that is not a name (`(x).y`, `a[0].b`) is no path.
        if expr[..word_start].ends_with(['.', ']', ')']) {
            return None;
        }
        Some(Token::Path {
            path: path.to_string(),
            start: start + word_start,
            end: start + word_start + path.len(),
        })
    }

    /// For completion: the name path typed so far before the cursor, split into the
    /// complete segments and the partial last one (`cluster.wo` → (["cluster"], "wo")).
    pub fn typed_path(&self) -> Option<(Vec<String>, String)> {
        let (start, _) = self.expression?;
        let before = &self.text[start..self.offset];
        if string_at(before, before.len()).is_some() {
            return None;
        }
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let from = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_name(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let typed = &before[from..];
        let mut segments: Vec<String> = typed.split('.').map(str::to_string).collect();
        let partial = segments.pop().unwrap_or_default();
        if segments.iter().any(String::is_empty) {
            return None;
        }
        Some((segments, partial))
    }
}

/// Where the `}` closing a `${` is, counting nested braces and skipping strings.
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The string literal of `expr` that holds byte `at`: (opening quote, one past the
/// closing quote or the end).
fn string_at(expr: &str, at: usize) -> Option<(usize, usize)> {
    let mut open: Option<(usize, char)> = None;
    let mut escaped = false;
    for (i, c) in expr.char_indices() {
        match open {
            Some((start, q)) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    if start < at && at <= i {
                        return Some((start, i + 1));
                    }
                    open = None;
                }
            }
            None if matches!(c, '\'' | '"' | '`') => open = Some((i, c)),
            None => {}
        }
    }
    match open {
        Some((start, _)) if start < at => Some((start, expr.len())),
        _ => None,
    }
}

/// The call whose argument list holds byte `at` of `expr`, and which argument it is.
fn call_of(expr: &str, at: usize) -> Option<(String, usize)> {
    let mut depth = 0usize;
    let mut commas = 0usize;
    let bytes = expr.as_bytes();
    let mut i = at;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' if depth == 0 => {
                let name_end = expr[..i].trim_end().len();
                let name_start = expr[..name_end]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |p| p + 1);
                let name = &expr[name_start..name_end];
                return (!name.is_empty()).then(|| (name.to_string(), commas));
            }
            b'(' | b'[' | b'{' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, marker: &str) -> (String, usize) {
        let offset = text.find(marker).unwrap_or_default();
        (text.replacen(marker, "", 1), offset)
    }

    #[test]
    fn paths_calls_and_arguments_inside_interpolations() {
        let (text, offset) = at("inputs:\n  a: ${cluster.wo|rkers.count ?? 2}\n", "|");
        let cursor = Cursor::new(&text, offset);
        assert_eq!(cursor.keys(), ["inputs", "a"]);
        assert_eq!(
            cursor.token(),
            Some(Token::Path {
                path: "cluster.workers".into(),
                start: 15,
                end: 30
            })
        );
        let (text, offset) = at("x: \"${terraform_output('clu|ster', 'id')}\"\n", "|");
        match Cursor::new(&text, offset).token() {
            Some(Token::StringArgument {
                function,
                index,
                value,
                ..
            }) => {
                assert_eq!(
                    (function.as_str(), index, value.as_str()),
                    ("terraform_output", 0, "cluster")
                );
            }
            other => panic!("{other:?}"),
        }
        let (text, offset) = at("x: ${cidr|host(net, 1)}\n", "|");
        assert!(
            matches!(Cursor::new(&text, offset).token(), Some(Token::Call { name, .. }) if name == "cidrhost")
        );
    }

    #[test]
    fn unterminated_strings_with_wide_characters() {
        let (text, offset) = at("x: ${file('é|é\n", "|");
        match Cursor::new(&text, offset).token() {
            Some(Token::StringArgument { value, .. }) => assert_eq!(value, "éé"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn when_values_and_typed_paths() {
        let (text, offset) = at("when: provider == 'aws' && clu|\n", "|");
        let cursor = Cursor::new(&text, offset);
        assert_eq!(cursor.typed_path(), Some((Vec::new(), "clu".to_string())));
        let (text, offset) = at("when: cluster.work| == 1\n", "|");
        let cursor = Cursor::new(&text, offset);
        assert_eq!(
            cursor.typed_path(),
            Some((vec!["cluster".to_string()], "work".to_string()))
        );
        let (text, offset) = at("name: plain| text\n", "|");
        assert_eq!(Cursor::new(&text, offset).token(), None);
    }
}
