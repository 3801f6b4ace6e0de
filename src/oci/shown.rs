//! Text from outside (a credential helper's output, a registry's reply) as a message
//! may show it: one line, terminal escape sequences and other control characters
//! removed, cut short.

/// The first non-empty line of `text`, cleaned, at most `max` characters (then `…`).
pub fn one_line(text: &str, max: usize) -> String {
    let cleaned = strip_escapes(text);
    let line = cleaned
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    cut(line, max)
}

/// All of `text` on one line (line breaks become spaces), cleaned, at most `max`
/// characters (then `…`).
pub fn joined(text: &str, max: usize) -> String {
    let cleaned = strip_escapes(text);
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    cut(&words.join(" "), max)
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `text` without ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`,
/// two-character `ESC x`) and without other control characters; line breaks and tabs
/// stay, as separators.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte @ to ~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_clean_line() {
        assert_eq!(
            one_line(
                "\n  \u{1b}[31mkeychain locked\u{1b}[0m\u{7}\nSecret: hunter2\n",
                80
            ),
            "keychain locked"
        );
        assert_eq!(one_line("\u{1b}]0;title\u{7}ok\r", 80), "ok");
        assert_eq!(one_line("", 80), "");
        assert_eq!(one_line(&"é".repeat(10), 4), "éééé…");
    }

    #[test]
    fn joined_on_one_line() {
        assert_eq!(
            joined("{\"errors\":\n [\u{1b}[2J{\"code\": \"DENIED\"}]}\n", 80),
            "{\"errors\": [{\"code\": \"DENIED\"}]}"
        );
        assert_eq!(joined("abcdef", 3), "abc…");
    }
}
