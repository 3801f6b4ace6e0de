//! Deterministic YAML output for a [`Value`].
//!
//! Block style, two-space indentation, lists not indented under their key (`key:\n- a`,
//! as goccy/go-yaml and kubectl write them), keys in map order, `{}` and `[]` for empty
//! collections. A string is written plain unless it would read back as something else —
//! for bpc's own loader *or* for a YAML 1.1 reader (`"yes"`, `"on"`, `"1e3"`, `"22:22"`,
//! dates) — and then double-quoted. Multi-line strings become `|`/`|-` blocks when a block
//! can hold them exactly. Floats always carry a `.` so they stay floats.
//!
//! An optional comment hook appends `# …` to any entry, for `--provenance`.

use super::path::PathSegment;
use super::pieces::{append_after, Pieces, Unfinished, PIECE};
use crate::value::text::{self, Dialect, Escape, Plain};
use crate::value::{Map, Value};
use std::fmt::Write;

/// Longest key written as `key:`; YAML allows 1024 characters for an implicit key.
const IMPLICIT_KEY_LIMIT: usize = 1000;

/// Returns a comment for the node at a path (empty path: the document), or `None`.
pub type CommentHook<'a> = dyn Fn(&[PathSegment<'_>]) -> Option<String> + 'a;

/// The document for `value`, ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    Writer::new(None).document(value).into_string()
}

/// [`to_yaml`] in pieces ([`Pieces`]), or `None` once the text passes `limit` bytes:
/// writing stops at the first line that starts past it, so at most one line more is
/// ever built.
pub fn to_yaml_within(value: &Value, limit: usize) -> Option<Pieces> {
    let mut writer = Writer::new(None);
    writer.limit = limit;
    let text = writer.document(value);
    (text.len() <= limit).then_some(text)
}

/// [`to_yaml_within`] for a document some of whose top-level lists were written
/// apart ([`Items`]): each key of `apart` holds an empty list in `value`, and its
/// items are the pieces given with it.
pub fn to_yaml_within_apart(
    value: &Value,
    limit: usize,
    apart: Vec<(&str, Pieces)>,
) -> Option<Pieces> {
    let mut writer = Writer::new(None);
    writer.limit = limit;
    writer.apart = apart;
    let text = writer.document(value);
    (text.len() <= limit).then_some(text)
}

/// The items of a list that is the value of a top-level key (`- ` lines at the
/// first column), written one at a time, for [`to_yaml_within_apart`]: each item
/// can be let go of once written. Writing stops, as [`to_yaml_within`]'s does, at
/// the first item that starts past `limit` bytes.
pub struct Items {
    text: Unfinished,
    limit: usize,
}

impl Items {
    pub fn new(limit: usize) -> Items {
        Items {
            text: Unfinished::default(),
            limit,
        }
    }

    /// Writes `item` after the others.
    pub fn push(&mut self, item: &Value) {
        let mut writer = Writer::new(None);
        writer.threads = 1;
        writer.limit = self.limit;
        let text = std::mem::take(&mut self.text);
        (writer.done, writer.done_len, writer.out) = (text.done, text.done_len, text.out);
        writer.list_items(std::slice::from_ref(item), 0, false);
        self.text = Unfinished {
            done: writer.done,
            done_len: writer.done_len,
            out: writer.out,
        };
    }

    /// Whether the items written are already longer than `limit` (the rest need not be).
    pub fn over(&self) -> bool {
        self.text.len() > self.limit
    }

    /// The items written, in pieces.
    pub fn into_pieces(self) -> Pieces {
        self.text.finish()
    }
}

/// Like [`to_yaml`] (in pieces), with `# comment`s from `hook` after the entries it
/// names.
pub fn to_yaml_with_comments(value: &Value, hook: &CommentHook<'_>) -> Pieces {
    Writer::new(Some(hook)).document(value)
}

/// Like [`to_yaml`], with `# comment` lines from `hook` above the map keys it names
/// (one `#` line per line of the comment). A key that starts a list item's map
/// (`- key: …`) gets no comment: there is no line above it to hold one.
pub fn to_yaml_with_leading_comments(value: &Value, hook: &CommentHook<'_>) -> String {
    let mut writer = Writer::new(None);
    writer.leading = Some(hook);
    writer.document(value).into_string()
}

struct Writer<'h, 'p> {
    /// The pieces written so far (see [`Pieces`]) and the one being written.
    done: Pieces,
    done_len: usize,
    out: String,
    hook: Option<&'h CommentHook<'h>>,
    leading: Option<&'h CommentHook<'h>>,
    path: Vec<PathSegment<'p>>,
    /// Threads a long list's items may be written on (one inside such a list).
    threads: usize,
    /// Past this many bytes the writer stops (the caller then has no text).
    limit: usize,
    /// Top-level lists written apart, with their items ([`to_yaml_within_apart`]).
    apart: Vec<(&'h str, Pieces)>,
    /// The indentation of each block list being written, outermost first: where a
    /// block scalar sits in goccy/go-yaml's terms ([`Goccy`]).
    lists: Vec<usize>,
}

impl<'h, 'p> Writer<'h, 'p> {
    fn new(hook: Option<&'h CommentHook<'h>>) -> Writer<'h, 'p> {
        Writer {
            done: Pieces::default(),
            done_len: 0,
            out: String::new(),
            hook,
            leading: None,
            path: Vec::new(),
            threads: crate::parallel::cores(),
            limit: usize::MAX,
            apart: Vec::new(),
            lists: Vec::new(),
        }
    }

    /// Whether the text is already longer than it may be.
    fn over(&self) -> bool {
        self.len() > self.limit
    }

    /// Bytes written so far.
    fn len(&self) -> usize {
        self.done_len + self.out.len()
    }

    /// The text written, in pieces.
    fn into_pieces(mut self) -> Pieces {
        self.done.push(self.out);
        self.done
    }

    fn document(mut self, value: &'p Value) -> Pieces {
        if let Some(comment) = self.comment() {
            let _ = writeln!(self.out, "# {comment}");
        }
        match value {
            Value::Map(map) if !map.is_empty() => self.map_entries(map, 0, false),
            Value::List(items) if !items.is_empty() => self.list_items(items, 0, false),
            scalar => {
                // Block lines at column 0 could read as `---`/`...` document markers.
                self.scalar(scalar, 2, false);
                self.out.push('\n');
            }
        }
        self.into_pieces()
    }

    fn comment(&self) -> Option<String> {
        let hook = self.hook?;
        // A comment cannot span lines; keep it on one.
        hook(&self.path).map(|c| c.replace(['\n', '\r'], " "))
    }

    fn write_comment(&mut self) {
        if let Some(comment) = self.comment() {
            let _ = write!(self.out, "  # {comment}");
        }
    }

    /// Starts a line at `indent`: in a new piece once the current one is full (never
    /// within a line, which the writer may still edit, see `map_entries`).
    fn indent(&mut self, indent: usize) {
        if self.out.len() >= PIECE {
            let full = std::mem::replace(&mut self.out, String::with_capacity(PIECE + PIECE / 4));
            self.done_len += full.len();
            self.done.push(full);
        }
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// Writes `key: value` lines at `indent`; with `inline_first`, the first line
    /// continues the current line (after `- `).
    fn map_entries(&mut self, map: &'p Map, indent: usize, inline_first: bool) {
        for (i, (key, value)) in map.iter().enumerate() {
            if self.over() {
                return;
            }
            self.path.push(PathSegment::Key(key));
            if i > 0 || !inline_first {
                if let Some(leading) = self.leading {
                    if let Some(comment) = leading(&self.path) {
                        for line in comment.lines() {
                            self.indent(indent);
                            let line = line.trim_end();
                            if line.is_empty() {
                                self.out.push_str("#\n");
                            } else {
                                let _ = writeln!(self.out, "# {line}");
                            }
                        }
                    }
                }
                self.indent(indent);
            }
            let key_start = self.out.len();
            write_string_inline(&mut self.out, key);
            if self.out.len() - key_start > IMPLICIT_KEY_LIMIT {
                // Implicit keys are limited in length; longer ones need `? key` / `: value`.
                self.out.insert_str(key_start, "? ");
                self.out.push('\n');
                self.indent(indent);
                self.out.push(':');
                self.after_key(value, indent, indent + 2);
            } else {
                self.out.push(':');
                self.after_key(value, indent, indent);
            }
            self.path.pop();
        }
    }

    /// The value after `key:`; a list's `- ` lines go at `list_indent`.
    fn after_key(&mut self, value: &'p Value, indent: usize, list_indent: usize) {
        if let Some(items) = self.written_apart(value) {
            self.write_comment();
            self.out.push('\n');
            self.append(items);
            return;
        }
        match value {
            Value::Map(map) if !map.is_empty() => {
                self.write_comment();
                self.out.push('\n');
                self.map_entries(map, indent + 2, false);
            }
            Value::List(items) if !items.is_empty() => {
                self.write_comment();
                self.out.push('\n');
                self.list_items(items, list_indent, false);
            }
            scalar => {
                self.out.push(' ');
                self.scalar(scalar, indent + 2, false);
                self.out.push('\n');
            }
        }
    }

    fn list_items(&mut self, items: &'p [Value], indent: usize, inline_first: bool) {
        self.lists.push(indent);
        self.list_items_in(items, indent, inline_first);
        self.lists.pop();
    }

    fn list_items_in(&mut self, items: &'p [Value], indent: usize, inline_first: bool) {
        if self.list_items_apart(items, indent, inline_first) {
            return;
        }
        for (i, item) in items.iter().enumerate() {
            if self.over() {
                return;
            }
            if i > 0 || !inline_first {
                self.indent(indent);
            }
            self.out.push('-');
            self.path.push(PathSegment::Index(i));
            let comment = match item {
                Value::Map(m) if !m.is_empty() => Some(self.comment()),
                Value::List(l) if !l.is_empty() => Some(self.comment()),
                _ => None,
            };
            match (item, comment) {
                // A commented collection starts on the next line: `- # comment`.
                (Value::Map(map), Some(Some(c))) => {
                    let _ = writeln!(self.out, "  # {c}");
                    self.map_entries(map, indent + 2, false);
                }
                (Value::List(list), Some(Some(c))) => {
                    let _ = writeln!(self.out, "  # {c}");
                    self.list_items(list, indent + 2, false);
                }
                (Value::Map(map), Some(None)) => {
                    self.out.push(' ');
                    self.map_entries(map, indent + 2, true);
                }
                (Value::List(list), Some(None)) => {
                    self.out.push(' ');
                    self.list_items(list, indent + 2, true);
                }
                (scalar, _) => {
                    self.out.push(' ');
                    self.scalar(scalar, indent + 2, true);
                    self.out.push('\n');
                }
            }
            self.path.pop();
        }
    }

    /// The items written apart for the top-level key being written, whose value is
    /// the empty list that stands for them ([`to_yaml_within_apart`]).
    fn written_apart(&mut self, value: &Value) -> Option<Pieces> {
        let [PathSegment::Key(key)] = self.path.as_slice() else {
            return None;
        };
        if !matches!(value, Value::List(items) if items.is_empty()) {
            return None;
        }
        let at = self.apart.iter().position(|(k, _)| k == key)?;
        Some(self.apart.swap_remove(at).1)
    }

    /// Moves `later`'s pieces after the text written so far. A line left open (`- `
    /// before a list that starts inline) goes on in `later`'s first piece: only a
    /// key being written is ever edited, so a line may be cut across pieces there.
    fn append(&mut self, later: Pieces) {
        append_after(&mut self.done, &mut self.done_len, &mut self.out, later);
    }

    /// Writes the items of a long list in runs, each run on a thread of its own into a
    /// text of its own, the texts then joined in order; whether it did. Not with
    /// comments, which follow the path through the whole document.
    fn list_items_apart(&mut self, items: &'p [Value], indent: usize, inline_first: bool) -> bool {
        let threads = self
            .threads
            .min(items.len() / crate::parallel::ITEMS_PER_THREAD);
        if threads < 2 || self.hook.is_some() || self.leading.is_some() {
            return false;
        }
        let runs: Vec<(bool, &[Value])> = crate::parallel::even_runs(items.len(), threads)
            .map(|run| (inline_first && run.start == 0, &items[run]))
            .collect();
        let texts = crate::parallel::each(runs, |(inline_first, run)| {
            let mut writer = Writer::new(None);
            writer.threads = 1;
            writer.limit = self.limit;
            writer.lists.clone_from(&self.lists);
            writer.list_items_in(run, indent, inline_first);
            writer.into_pieces()
        });
        // Joined by moving the pieces.
        for text in texts {
            self.append(text);
        }
        true
    }

    /// A scalar or empty collection after `key: ` or `- ` (`item`: a list item), with
    /// its comment; block scalar bodies go at `body_indent`. Leaves the line open only
    /// for the caller's `\n`.
    fn scalar(&mut self, value: &Value, body_indent: usize, item: bool) {
        match value {
            Value::Map(_) => self.out.push_str("{}"),
            Value::List(_) => self.out.push_str("[]"),
            Value::Str(s) if s.as_bytes().contains(&b'\n') => {
                let prefix = self.goccy_prefix(body_indent, item);
                if block_reads_back(s, prefix) {
                    return self.block(s, body_indent, item);
                }
                write_string_inline(&mut self.out, s)
            }
            Value::Str(s) => write_string_inline(&mut self.out, s),
            atom => {
                text::atom(&mut self.out, atom, Dialect::Bpc);
            }
        }
        self.write_comment();
    }

    /// The indentation goccy/go-yaml gives the lines of a block scalar before the
    /// lists around it re-indent them: its column, where every list's items stand at
    /// the list's own column and each map nests two columns in, plus two.
    fn goccy_prefix(&self, body_indent: usize, item: bool) -> usize {
        let lists = self.lists.len();
        let column = match self.lists.last() {
            // A list item: the column of its list, which lists outside it do not move.
            Some(&indent) if item => indent.saturating_sub(2 * (lists - 1)),
            // A map value: its key's column, less the two each list around it adds.
            _ => body_indent.saturating_sub(2 + 2 * lists),
        };
        column + 2
    }

    /// `s` as a literal block, written as goccy/go-yaml (the Windsor CLI's printer)
    /// writes it, so a blueprint is byte for byte the one the Windsor CLI prints: `|-`
    /// without a final line break, `|` with one, `|+` with more; each line at
    /// `body_indent`, a blank line too — but a blank line of a list item, and the
    /// last line a `|+` block keeps, go out empty (goccy's list printer blanks every
    /// line no longer than the indentation it strips). The caller ends the last line.
    fn block(&mut self, s: &str, body_indent: usize, item: bool) {
        let (body, header) = match s.strip_suffix('\n') {
            Some(body) if body.ends_with('\n') => (body, "|+"),
            Some(body) => (body, "|"),
            None => (s, "|-"),
        };
        self.out.push_str(header);
        self.write_comment();
        let last = body.split('\n').count() - 1;
        for (i, line) in body.split('\n').enumerate() {
            if self.over() {
                return;
            }
            self.out.push('\n');
            if line.is_empty() && (item || (i == last && header == "|+")) {
                continue;
            }
            self.indent(body_indent);
            self.out.push_str(line);
        }
    }
}

/// Whether the literal block goccy/go-yaml writes for `s` (lines indented by
/// `prefix` before the lists around them re-indent them) reads back as `s`. goccy
/// writes a block for every string with a line break, even where the block means
/// something else; bpc writes those double-quoted instead (docs/semantics.md, S10):
///
/// * a carriage return (goccy then breaks lines at it), or a character a YAML reader
///   refuses raw;
/// * no line with anything but blanks on it;
/// * a first non-blank line that starts with a space (it would set the indentation),
///   or blank lines before it that are not empty (they would be deeper than it);
/// * a last line (before the final line breaks) of blanks only, or ending in
///   `prefix` spaces or more: goccy trims that many trailing spaces off the block.
fn block_reads_back(s: &str, prefix: usize) -> bool {
    if s.contains('\r') || !s.chars().all(|c| c == '\n' || is_printable_in_block(c)) {
        return false;
    }
    let blank = |line: &str| line.chars().all(|c| c == ' ' || c == '\t');
    let body = s.strip_suffix('\n').unwrap_or(s);
    let mut lines = body.split('\n');
    let first = loop {
        match lines.next() {
            Some("") => continue,
            Some(line) if blank(line) => return false,
            Some(line) => break line,
            None => return false,
        }
    };
    if first.starts_with(' ') {
        return false;
    }
    let last = body.rsplit('\n').next().unwrap_or("");
    let keeps_blank_last = last.is_empty() && s.ends_with("\n\n");
    if !keeps_blank_last && blank(last) {
        return false;
    }
    last.len() - last.trim_end_matches(' ').len() < prefix
}

fn is_printable_in_block(c: char) -> bool {
    c == '\t' || text::yaml_prints(c)
}

/// A string on one line: plain when safe, else double-quoted.
pub(crate) fn write_string_inline(out: &mut String, s: &str) {
    if text::needs_quotes(s, Plain::Bpc) {
        text::quote(out, s, Escape::Yaml);
    } else {
        out.push_str(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::path::format_path;
    use crate::value::Map;

    fn map(entries: Vec<(&str, Value)>) -> Value {
        let mut m = Map::default();
        for (k, v) in entries {
            m.insert(k.into(), v);
        }
        Value::map(m)
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    #[test]
    fn blueprint_shape() {
        let doc = map(vec![
            ("kind", s("Blueprint")),
            ("metadata", map(vec![("name", s("local"))])),
            (
                "terraform",
                Value::list(vec![map(vec![
                    ("name", s("cluster")),
                    ("dependsOn", Value::list(vec![s("compute")])),
                    (
                        "inputs",
                        map(vec![
                            ("count", Value::Int(3)),
                            ("ratio", Value::Float(1.0)),
                            ("big", Value::Float(1e300)),
                            ("enabled", Value::Bool(true)),
                            ("nothing", Value::Nil),
                            ("empty_map", Value::map(Map::default())),
                            ("empty_list", Value::list(vec![])),
                            (
                                "nested",
                                Value::list(vec![Value::list(vec![s("a"), s("b")])]),
                            ),
                        ]),
                    ),
                ])]),
            ),
            ("sources", Value::list(vec![])),
        ]);
        let expected = "\
kind: Blueprint
metadata:
  name: local
terraform:
- name: cluster
  dependsOn:
  - compute
  inputs:
    count: 3
    ratio: 1.0
    big: 1.0e300
    enabled: true
    nothing: null
    empty_map: {}
    empty_list: []
    nested:
    - - a
      - b
sources: []
";
        assert_eq!(to_yaml(&doc), expected);
    }

    #[test]
    fn quoting() {
        let cases = [
            ("plain", "plain"),
            ("", "\"\""),
            ("true", "\"true\""),
            ("1", "\"1\""),
            ("1.0", "\"1.0\""),
            ("1e3", "\"1e3\""),
            ("null", "\"null\""),
            ("~", "\"~\""),
            ("yes", "\"yes\""),
            ("off", "\"off\""),
            ("22:30", "\"22:30\""),
            ("2024-01-31", "\"2024-01-31\""),
            (" lead", "\" lead\""),
            ("trail ", "\"trail \""),
            ("a: b", "\"a: b\""),
            ("a:b", "a:b"),
            ("x #y", "\"x #y\""),
            ("x#y", "x#y"),
            ("- item", "\"- item\""),
            ("-flag", "-flag"),
            ("---", "\"---\""),
            ("*alias", "\"*alias\""),
            ("${var.x}", "${var.x}"),
            ("say \"hi\"", "say \"hi\""),
            ("\"quoted\"", "\"\\\"quoted\\\"\""),
            ("tab\there", "\"tab\\there\""),
            ("bell\u{7}", "\"bell\\x07\""),
            ("é ü", "é ü"),
            ("<<", "\"<<\""),
            ("10.0.0.1", "10.0.0.1"),
            ("v1.2", "v1.2"),
            ("end:", "\"end:\""),
            ("http://x.y/z", "http://x.y/z"),
        ];
        for (input, expected) in cases {
            let mut out = String::new();
            write_string_inline(&mut out, input);
            assert_eq!(out, expected, "{input:?}");
        }
    }

    /// Multi-line strings as goccy/go-yaml writes them (each shape checked with the
    /// Windsor CLI's `show`): a literal block whenever it reads back as the string —
    /// blank and whitespace-only lines, tabs and trailing blanks included — and
    /// double quotes where goccy's block would read as something else.
    #[test]
    fn multi_line_strings() {
        let doc = map(vec![
            ("keep", s("line one\nline two\n")),
            ("strip", s("a\n\nb")),
            ("blank", s("a\n  \nb")),
            ("tab", s("a\n\t\nb")),
            ("list", Value::list(vec![s("x\ny\n"), s("a\n\nb")])),
            ("lead", s("  indented\nnext")),
            ("leadtab", s("\tindented\nnext")),
            ("trail", s("a  \nb")),
            ("many", s("a\n\n")),
            ("one", s("kind: A\n")),
            ("newline", s("\n")),
            ("lastblank", s("a\n  ")),
            ("cr", s("a\r\nb")),
        ]);
        let expected = "\
keep: |
  line one
  line two
strip: |-
  a
\x20\x20
  b
blank: |-
  a
\x20\x20\x20\x20
  b
tab: |-
  a
  \t
  b
list:
- |
  x
  y
- |-
  a

  b
lead: \"  indented\\nnext\"
leadtab: |-
  \tindented
  next
trail: |-
  a\x20\x20
  b
many: |+
  a

one: |
  kind: A
newline: \"\\n\"
lastblank: \"a\\n  \"
cr: \"a\\r\\nb\"
";
        assert_eq!(to_yaml(&doc), expected);
    }

    /// A document with long lists, written by one writer on `threads` threads.
    fn written_on(value: &Value, threads: usize) -> String {
        let mut writer = Writer::new(None);
        writer.threads = threads;
        writer.document(value).into_string()
    }

    #[test]
    fn a_writer_with_a_limit_stops_at_the_line_that_passes_it() {
        let value = Value::list((0..10_000).map(|k| s(&format!("item {k}"))).collect());
        let whole = to_yaml(&value);
        assert_eq!(
            super::to_yaml_within(&value, whole.len()).map(Pieces::into_string),
            Some(whole.clone())
        );
        assert_eq!(super::to_yaml_within(&value, whole.len() - 1), None);
        let line = "- item 9999\n".len();
        for threads in [1, 2] {
            let mut writer = Writer::new(None);
            writer.threads = threads;
            writer.limit = 100;
            let written = writer.document(&value).len();
            // Each thread's run of items stops once past the limit.
            assert!(
                written <= threads * (100 + line),
                "{threads}: {written} bytes"
            );
        }
    }

    #[test]
    fn a_long_document_is_written_in_pieces_of_whole_lines() {
        let item = |k: usize| map(vec![("name", s(&format!("c{k}"))), ("path", s("p"))]);
        let value = map(vec![(
            "terraform",
            Value::list((0..20_000).map(item).collect()),
        )]);
        for threads in [1, 2] {
            let mut writer = Writer::new(None);
            writer.threads = threads;
            let pieces = writer.document(&value);
            let parts = pieces.as_bytes();
            assert!(parts.len() > 4, "{} pieces", parts.len());
            // Never much more than a piece each, and cut between lines.
            assert!(parts
                .iter()
                .all(|p| p.len() <= PIECE + 64 && p.ends_with(b"\n")));
            assert_eq!(pieces.into_string(), to_yaml(&value), "{threads} threads");
        }
    }

    #[test]
    fn long_lists_written_on_several_threads_read_as_written_on_one() {
        let item = |k: usize| match k % 4 {
            0 => map(vec![("name", s(&format!("c{k}"))), ("lines", s("a\nb\n"))]),
            1 => Value::list(vec![s("x"), Value::list(vec![Value::Int(k as i64)])]),
            2 => s(&format!("plain {k}")),
            _ => map(vec![]),
        };
        let long = |n: usize| Value::list((0..n).map(item).collect());
        let documents = [
            map(vec![("terraform", long(2100)), ("kustomize", long(3))]),
            // A long list that starts inline, after `- `.
            Value::list(vec![long(1500), s("after")]),
            long(1025),
        ];
        for document in &documents {
            let one = written_on(document, 1);
            assert!(one.contains("- - x") || one.contains("- name: c0"), "{one}");
            for threads in [2, 3, 7] {
                assert_eq!(written_on(document, threads), one, "{threads} threads");
            }
        }
    }

    #[test]
    fn top_level_lists_written_apart_read_as_written_in_place() {
        let item = |k: usize| match k % 3 {
            0 => map(vec![("name", s(&format!("c{k}"))), ("lines", s("a\nb\n"))]),
            1 => Value::list(vec![s("x"), Value::Int(k as i64)]),
            _ => s(&format!("plain {k}")),
        };
        let items = |n: usize| -> Vec<Value> { (0..n).map(item).collect() };
        let whole = map(vec![
            ("kind", s("Blueprint")),
            ("terraform", Value::list(items(40_000))),
            ("crds", Value::list(vec![s("c")])),
            ("kustomize", Value::list(items(5))),
            ("messages", Value::list(vec![])),
        ]);
        // The two lists stand as empty lists, their items written one by one.
        let standing = map(vec![
            ("kind", s("Blueprint")),
            ("terraform", Value::list(vec![])),
            ("crds", Value::list(vec![s("c")])),
            ("kustomize", Value::list(vec![])),
            ("messages", Value::list(vec![])),
        ]);
        let apart = |n: usize| {
            let mut written = Items::new(usize::MAX);
            items(n).iter().for_each(|item| written.push(item));
            written.into_pieces()
        };
        let text = to_yaml_within_apart(
            &standing,
            usize::MAX,
            vec![("kustomize", apart(5)), ("terraform", apart(40_000))],
        )
        .expect("no limit");
        assert!(text.as_bytes().len() > 4, "in pieces");
        assert_eq!(text.into_string(), to_yaml(&whole));
        // Past a limit, neither has a text, and the items stop being written.
        let limit = to_yaml(&whole).len() / 2;
        assert!(to_yaml_within(&whole, limit).is_none());
        let mut written = Items::new(limit);
        items(40_000).iter().for_each(|item| written.push(item));
        assert!(written.over());
        let pieces = written.into_pieces();
        assert!(pieces.len() < limit + PIECE, "{} bytes", pieces.len());
        let text = to_yaml_within_apart(&standing, limit, vec![("terraform", pieces)]);
        assert!(text.is_none());
    }

    #[test]
    fn scalars_and_empty_roots() {
        assert_eq!(to_yaml(&Value::Nil), "null\n");
        assert_eq!(to_yaml(&Value::map(Map::default())), "{}\n");
        assert_eq!(to_yaml(&Value::list(vec![])), "[]\n");
        assert_eq!(to_yaml(&Value::Float(-0.5)), "-0.5\n");
        assert_eq!(to_yaml(&Value::Float(f64::NEG_INFINITY)), "-.inf\n");
        assert_eq!(to_yaml(&Value::Float(1e-7)), "1.0e-7\n");
        assert_eq!(to_yaml(&Value::Uint(u64::MAX)), "18446744073709551615\n");
    }

    #[test]
    fn provenance_comments() {
        let doc = map(vec![
            ("name", s("x")),
            ("inputs", map(vec![("a", Value::Int(1))])),
            (
                "items",
                Value::list(vec![s("one"), map(vec![("k", s("v"))]), s("two\nlines")]),
            ),
        ]);
        let hook = |path: &[PathSegment<'_>]| -> Option<String> {
            let text = format_path(path);
            match text.as_str() {
                "" => Some("composed by bpc".to_string()),
                "name" => Some("facets/a.yaml:3 (a, 100, merge)".to_string()),
                "inputs" => Some("map\nwith newline".to_string()),
                "inputs.a" | "items[0]" | "items[1]" | "items[2]" => Some(text),
                _ => None,
            }
        };
        let expected = "\
# composed by bpc
name: x  # facets/a.yaml:3 (a, 100, merge)
inputs:  # map with newline
  a: 1  # inputs.a
items:
- one  # items[0]
-  # items[1]
  k: v
- |-  # items[2]
  two
  lines
";
        let out = to_yaml_with_comments(&doc, &hook).into_string();
        assert_eq!(out, expected);
        // Still YAML, and the same document.
        let back = crate::yaml::parse(&out, crate::files::FileId(0)).expect("parses");
        assert_eq!(to_yaml(&back.to_value()), to_yaml(&doc));
    }
}
