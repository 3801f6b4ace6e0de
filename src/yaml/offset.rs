//! Maps a byte offset inside a scalar's decoded value back to the file, so a caret can
//! point into the middle of a string (at the `${` of a failing expression, say).
//!
//! Exact for plain and quoted scalars (escapes and line folding are replayed) and for
//! block scalars line by line; anything surprising degrades to the nearest earlier place
//! rather than failing.

use super::node::{Node, ScalarStyle};

/// The byte offset in `source` of byte `offset_in_value` of `node`'s value.
pub fn content_offset(node: &Node, source: &str, offset_in_value: usize) -> usize {
    let start = (node.span.start as usize).min(source.len());
    let end = (node.span.end as usize).clamp(start, source.len());
    match node.style {
        Some(ScalarStyle::Plain) => flow_offset(source, start, end, Quote::None, offset_in_value),
        Some(ScalarStyle::SingleQuoted) => {
            flow_offset(source, start + 1, end, Quote::Single, offset_in_value)
        }
        Some(ScalarStyle::DoubleQuoted) => {
            flow_offset(source, start + 1, end, Quote::Double, offset_in_value)
        }
        Some(ScalarStyle::Literal | ScalarStyle::Folded) => match node.as_str() {
            Some(value) => block_offset(source, start, end, value, offset_in_value),
            None => start,
        },
        None => start,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Replays how a flow scalar's text becomes its value, counting value bytes.
fn flow_offset(source: &str, start: usize, end: usize, quote: Quote, target: usize) -> usize {
    let bytes = source.as_bytes();
    let end = end.min(bytes.len());
    let mut s = start.min(end);
    let mut v = 0usize;
    while s < end && v < target {
        let b = bytes[s];
        match b {
            b'\\' if quote == Quote::Double => {
                let Some(&escape) = bytes.get(s + 1) else {
                    break;
                };
                match escape {
                    b'\n' | b'\r' => {
                        s = skip_blanks(bytes, skip_newline(bytes, s + 1), end);
                    }
                    b'x' | b'u' | b'U' => {
                        let digits = match escape {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        let hex = source.get(s + 2..s + 2 + digits).unwrap_or("");
                        let produced = u32::from_str_radix(hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .map_or(1, char::len_utf8);
                        v += produced;
                        s += 2 + digits;
                    }
                    _ => {
                        v += match escape {
                            b'N' | b'_' => 2,
                            b'L' | b'P' => 3,
                            _ => 1,
                        };
                        s += 1 + utf8_len(escape);
                    }
                }
            }
            b'\'' if quote == Quote::Single => {
                if bytes.get(s + 1) == Some(&b'\'') {
                    v += 1;
                    s += 2;
                } else {
                    break;
                }
            }
            b'"' if quote == Quote::Double => break,
            b' ' | b'\t' => {
                let after = skip_blanks(bytes, s, end);
                if matches!(bytes.get(after), Some(b'\n' | b'\r')) {
                    // Trailing blanks before a line break are not part of the value.
                    s = after;
                } else {
                    v += 1;
                    s += 1;
                }
            }
            b'\n' | b'\r' => {
                let mut empty_lines = 0;
                s = skip_blanks(bytes, skip_newline(bytes, s), end);
                while s < end && matches!(bytes[s], b'\n' | b'\r') {
                    empty_lines += 1;
                    s = skip_blanks(bytes, skip_newline(bytes, s), end);
                }
                v += empty_lines.max(1);
            }
            _ => {
                v += 1;
                s += 1;
                // Continue to the end of a multi-byte character.
                while s < end && !source.is_char_boundary(s) {
                    v += 1;
                    s += 1;
                }
            }
        }
    }
    s.min(end)
}

fn utf8_len(first_byte: u8) -> usize {
    match first_byte {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn skip_newline(bytes: &[u8], at: usize) -> usize {
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'\r'), Some(b'\n')) => at + 2,
        (Some(b'\n' | b'\r'), _) => at + 1,
        _ => at,
    }
}

fn skip_blanks(bytes: &[u8], mut at: usize, end: usize) -> usize {
    while at < end && matches!(bytes[at], b' ' | b'\t') {
        at += 1;
    }
    at
}

/// Finds each source line's content in the value, in order: literal and folded scalars
/// both keep every line's text and differ only in what separates the lines.
fn block_offset(source: &str, start: usize, end: usize, value: &str, target: usize) -> usize {
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent = start - line_start;
    let mut cursor = 0usize;
    let mut pos = line_start;
    while pos < end {
        let line_end = source[pos..].find('\n').map_or(source.len(), |i| pos + i);
        let line = source[pos..line_end].trim_end_matches('\r');
        let content = line.get(indent..).unwrap_or("");
        if !content.is_empty() {
            let Some(found) = value.get(cursor..).and_then(|rest| rest.find(content)) else {
                break;
            };
            let at = cursor + found;
            if target < at {
                return pos + indent;
            }
            if target <= at + content.len() {
                return pos + indent + (target - at);
            }
            cursor = at + content.len();
        }
        pos = line_end + 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileId;
    use crate::yaml::parse;

    /// The source offset of the first `$` of the value of key `k`.
    fn caret(source: &str) -> usize {
        let doc = parse(source, FileId(0)).expect("valid YAML");
        let node = doc.get("k").expect("key k");
        let value = node.as_str().expect("a string");
        let in_value = value.find('$').expect("a $ in the value");
        content_offset(node, source, in_value)
    }

    fn expected(source: &str) -> usize {
        source.find('$').expect("a $ in the source")
    }

    #[test]
    fn plain_and_quoted_without_escapes() {
        for src in [
            "k: abc ${x}\n",
            "k: 'abc ${x}'\n",
            "k: \"abc ${x}\"\n",
            "k: &a !!str abc ${x}\n",
            "k: [\"é€ ${x}\"]\n",
        ] {
            if src.contains('[') {
                let doc = parse(src, FileId(0)).expect("valid YAML");
                let node = match &doc.get("k").expect("k").kind {
                    crate::yaml::NodeKind::Seq(items) => items[0].clone(),
                    _ => panic!("a list"),
                };
                let in_value = node.as_str().and_then(|v| v.find('$')).expect("$");
                assert_eq!(
                    content_offset(&node, src, in_value),
                    expected(src),
                    "{src:?}"
                );
            } else {
                assert_eq!(caret(src), expected(src), "{src:?}");
            }
        }
    }

    #[test]
    fn escapes_and_folding() {
        for src in [
            "k: 'it''s ${x}'\n",
            "k: \"a\\tb\\u00e9 ${x}\"\n",
            "k: \"a\\\n    b ${x}\"\n",
            "k: plain\n  folded   \n\n  more ${x}\n",
            "k: \"quoted\n   folded ${x}\"\n",
        ] {
            assert_eq!(caret(src), expected(src), "{src:?}");
        }
    }

    #[test]
    fn block_scalars() {
        for src in [
            "k: |\n  line one\n  line ${x}\n",
            "k: |-\n  a\n\n    more ${x}\n",
            "k: >\n  folded\n  line ${x}\n",
            "k: |\n\n  after blank ${x}\n",
        ] {
            assert_eq!(caret(src), expected(src), "{src:?}");
        }
    }
}
