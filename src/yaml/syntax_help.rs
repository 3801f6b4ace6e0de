//! The parser's syntax errors in the words of the file. The parser names the rule it
//! stopped on ("mapping values are not allowed in this context"); an author wants to
//! know what in their text broke it and what to write instead. For the common
//! mistakes — a tab, a quote left open, a value holding `: `, a line indented off its
//! neighbours, an alias to nothing — this adds that as a help line, or says it instead
//! where the parser's message names nothing in the file.

use super::error::YamlError;

/// `err`, the parser's error `info` at byte `at` of `text`, made to say what went
/// wrong in the file's terms where the mistake is a common one.
pub(super) fn explain(mut err: YamlError, text: &str, at: usize, info: &str) -> YamlError {
    let (line_start, before) = line_before(text, at);
    let help = match info {
        "tabs disallowed within this context (block indentation)"
        | "tabs disallowed in this context"
        | "while scanning a plain scalar, found a tab"
        | "a block scalar content cannot start with a tab" => {
            // The parser stops after the tab: point at the tab itself.
            if let Some(tab) = before.rfind('\t') {
                err.span.start = (line_start + tab) as u32;
                err.span.end = err.span.start + 1;
            }
            "YAML indents with spaces only: replace the tab with spaces".to_string()
        }
        "while scanning a quoted scalar, found unexpected end of stream"
            if !closed_later(text, at) =>
        {
            let quote = quote_at(text, at);
            err.message =
                format!("this quoted string is never closed: the file ends before its `{quote}`");
            format!("close it with `{quote}`")
        }
        "invalid indentation in quoted scalar" => {
            let quote = quote_at(text, at);
            format!(
                "is the closing `{quote}` missing? A quoted string may go on over several \
                 lines, each indented more than its key"
            )
        }
        "mapping values are not allowed in this context" if before.contains(": ") => {
            "a plain value cannot hold `: `: quote the whole value (`key: \"a: b\"`)".to_string()
        }
        "mapping values are not allowed in this context" => {
            "this line is indented more than the key above it, so YAML reads it as more of \
             that key's value: line it up with that key to make it a key of its own"
                .to_string()
        }
        "while parsing a block mapping, did not find expected key" => {
            "this line's indentation matches no entry above it: line it up with the keys \
             or `- ` items it belongs with"
                .to_string()
        }
        "while parsing a block collection, did not find expected '-' indicator" => {
            "a list goes on with `- ` items at its own indentation: a key cannot follow \
             its items at the same level"
                .to_string()
        }
        "block sequence entries are not allowed in this context" => {
            "a list value starts on the line after its key, indented (`key:` then \
             `  - item`), or is written inline (`key: [item]`)"
                .to_string()
        }
        "invalid trailing content after double-quoted scalar" => {
            "a quoted value ends at its closing quote: put the whole value inside the quotes"
                .to_string()
        }
        "while parsing a quoted scalar, found unknown escape character" => {
            "in double quotes, `\\` starts an escape (`\\n`, `\\\"`, `\\\\`): write `\\\\` for \
             a backslash, or use single quotes"
                .to_string()
        }
        "while parsing node, found unknown anchor" => {
            let name = alias_at(text, at);
            err.message = format!("`*{name}` refers to no anchor");
            format!("an alias repeats a value anchored before it: write `&{name}` on that value")
        }
        _ => return err,
    };
    err.help = Some(help);
    err
}

/// Where `at`'s line starts, and the text of that line before `at`.
fn line_before(text: &str, at: usize) -> (usize, &str) {
    let before = text.get(..at.min(text.len())).unwrap_or_default();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (start, &before[start..])
}

/// The quote that opens the scalar at `at` (the parser points at it).
fn quote_at(text: &str, at: usize) -> char {
    match text.as_bytes().get(at) {
        Some(b'\'') => '\'',
        _ => '"',
    }
}

/// Whether the quoted scalar opening at `at` has its closing quote somewhere after
/// it (then something else, such as a NUL byte, ended the parser's reading).
fn closed_later(text: &str, at: usize) -> bool {
    let quote = quote_at(text, at) as u8;
    let rest = text.as_bytes().get(at + 1..).unwrap_or_default();
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && rest.get(i + 1) == Some(&b'\'') => i += 2,
            byte if byte == quote => return true,
            _ => i += 1,
        }
    }
    false
}

/// The name of the alias at `at` (`*name`).
fn alias_at(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or_default();
    let name = rest.strip_prefix('*').unwrap_or(rest);
    let end = name
        .find(|c: char| c.is_whitespace() || ",[]{}".contains(c))
        .unwrap_or(name.len());
    &name[..end]
}
