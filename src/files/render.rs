//! Draws a [`Diagnostic`] the way rustc and ruff do:
//!
//! ```text
//! error: mapping key "name" is already defined
//!  --> facets/aws.yaml:3:1
//!   |
//! 1 | name: a
//!   | ---- first defined here
//! 2 | other: 1
//! 3 | name: b
//!   | ^^^^ duplicate key
//!   |
//!   = note: while loading facet `aws`
//!   = help: remove one of them
//! ```
//!
//! Without colour the output is plain, deterministic text (snapshot tests compare it).
//! A span over several lines is drawn on its first line. Tabs are shown as four spaces.

use super::diagnostic::{Diagnostic, Label, Severity};
use super::map::{FileMap, SourceFile};
use super::span::FileId;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;

const TAB_WIDTH: usize = 4;

/// Renders several diagnostics, separated by blank lines.
pub fn render_all(diagnostics: &[Diagnostic], files: &FileMap, color: bool) -> String {
    diagnostics
        .iter()
        .map(|d| render(d, files, color))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn render(diagnostic: &Diagnostic, files: &FileMap, color: bool) -> String {
    let diagnostic = &shown_places(diagnostic, files);
    let paint = Painter { color };
    let groups = group_labels(diagnostic, files);
    let width = groups
        .iter()
        .flat_map(|g| g.lines.iter().map(|l| l.number))
        .max()
        .map_or(0, |n| n.to_string().len());
    let pad = " ".repeat(width);

    let mut out = String::new();
    let severity_style = match diagnostic.severity {
        Severity::Error => Style::Error,
        Severity::Warning => Style::Warning,
        Severity::Note => Style::Note,
    };
    let _ = writeln!(
        out,
        "{}{}",
        paint.apply(severity_style, diagnostic.severity.label()),
        paint.apply(Style::Bold, &format!(": {}", visible(&diagnostic.message))),
    );

    for (index, group) in groups.iter().enumerate() {
        let arrow = if index == 0 { "-->" } else { ":::" };
        let _ = writeln!(
            out,
            "{pad}{} {}:{}:{}",
            paint.apply(Style::Gutter, arrow),
            visible(&group.file.path),
            group.anchor_line,
            group.anchor_column
        );
        let _ = writeln!(out, "{pad} {}", paint.apply(Style::Gutter, "|"));
        let mut previous: Option<usize> = None;
        for line in &group.lines {
            if previous.is_some_and(|p| line.number > p + 1) {
                let _ = writeln!(out, "{}", paint.apply(Style::Gutter, "..."));
            }
            previous = Some(line.number);
            let full = expand_tabs(group.file.line_text(line.number));
            let (text, shift) = clip(&full, &line.marks);
            let number = format!("{:>width$} |", line.number);
            let _ = writeln!(
                out,
                "{}{}",
                paint.apply(Style::Gutter, &number),
                if text.is_empty() {
                    String::new()
                } else {
                    format!(" {text}")
                }
            );
            for mark in &line.marks {
                underline(&mut out, &paint, &pad, mark, shift, severity_style);
            }
        }
    }

    let has_footer =
        diagnostic.context.is_some() || !diagnostic.notes.is_empty() || diagnostic.help.is_some();
    if has_footer && !groups.is_empty() {
        let _ = writeln!(out, "{pad} {}", paint.apply(Style::Gutter, "|"));
    }
    let footer_pad = if groups.is_empty() {
        String::new()
    } else {
        format!("{pad} ")
    };
    let notes = diagnostic.context.iter().chain(&diagnostic.notes);
    for note in notes {
        let _ = writeln!(
            out,
            "{footer_pad}{} {}",
            paint.apply(Style::Gutter, "="),
            paint_line(&paint, Style::Bold, "note", note)
        );
    }
    if let Some(help) = &diagnostic.help {
        let _ = writeln!(
            out,
            "{footer_pad}{} {}",
            paint.apply(Style::Gutter, "="),
            paint_line(&paint, Style::Help, "help", help)
        );
    }
    out
}

/// `diagnostic` without the places in files whose text is not there to show any more
/// (let go of once parsed, and changed on disk since: see
/// [`crate::files::FileMap::letting_go_of_texts`]), each named in a note instead.
fn shown_places<'d>(diagnostic: &'d Diagnostic, files: &FileMap) -> Cow<'d, Diagnostic> {
    let gone = |label: &Label| files.get(label.span.file).is_some_and(|f| !f.readable());
    let labels = || diagnostic.primary.iter().chain(&diagnostic.secondary);
    if !labels().any(gone) {
        return Cow::Borrowed(diagnostic);
    }
    let mut shown = diagnostic.clone();
    let mut notes: Vec<String> = Vec::new();
    for label in labels().filter(|l| gone(l)) {
        let path = files.path(label.span.file).unwrap_or_default();
        let note = format!("{path} changed on disk while bpc ran: the place is not shown");
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    shown.primary = shown.primary.filter(|l| !gone(l));
    shown.secondary.retain(|l| !gone(l));
    shown.notes.splice(0..0, notes);
    Cow::Owned(shown)
}

fn paint_line(paint: &Painter, style: Style, title: &str, text: &str) -> String {
    format!("{}: {}", paint.apply(style, title), visible(text))
}

/// A message's text as shown: what comes from outside bpc (a tar entry's name, a
/// file name, a pulled file's contents) cannot drive the terminal. Every control
/// character but the line break and the tab is drawn as one visible character, as in
/// [`expand_tabs`].
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c != '\n' && c != '\t' && is_shown_as_picture(c))
    {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\n' | '\t' => c,
                '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('�'),
                '\x7f' => '␡',
                '\u{80}'..='\u{9f}' => '�',
                c => c,
            })
            .collect(),
    )
}

fn is_shown_as_picture(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}')
}

/// The labels of one file, laid out by line.
struct Group {
    file: Arc<SourceFile>,
    anchor_line: usize,
    anchor_column: usize,
    lines: Vec<Line>,
}

struct Line {
    number: usize,
    marks: Vec<Mark>,
}

struct Mark {
    column: usize,
    length: usize,
    message: String,
    primary: bool,
}

/// Groups labels by file: the primary label's file first, then the others in the order
/// their first label appears.
fn group_labels(diagnostic: &Diagnostic, files: &FileMap) -> Vec<Group> {
    let labels = diagnostic
        .primary
        .iter()
        .map(|l| (l, true))
        .chain(diagnostic.secondary.iter().map(|l| (l, false)));
    let mut groups: Vec<(FileId, Group)> = Vec::new();
    for (label, primary) in labels {
        let Some(file) = files.get(label.span.file) else {
            continue;
        };
        let (number, mark) = layout(&file, label, primary);
        let position = groups.iter().position(|(id, _)| *id == label.span.file);
        let group = match position {
            Some(i) => &mut groups[i].1,
            None => {
                let start = file.location(label.span.start as usize);
                groups.push((
                    label.span.file,
                    Group {
                        file: file.clone(),
                        anchor_line: start.line,
                        anchor_column: start.column,
                        lines: Vec::new(),
                    },
                ));
                let last = groups.len() - 1;
                &mut groups[last].1
            }
        };
        match group.lines.iter_mut().find(|l| l.number == number) {
            Some(line) => line.marks.push(mark),
            None => group.lines.push(Line {
                number,
                marks: vec![mark],
            }),
        }
    }
    let mut groups: Vec<Group> = groups.into_iter().map(|(_, g)| g).collect();
    for group in &mut groups {
        group.lines.sort_by_key(|l| l.number);
        for line in &mut group.lines {
            line.marks.sort_by_key(|m| (m.column, !m.primary));
        }
    }
    groups
}

/// Where a label's underline goes: its first line, display column and width.
fn layout(file: &SourceFile, label: &Label, primary: bool) -> (usize, Mark) {
    let start = file.location(label.span.start as usize);
    let line_text = file.line_text(start.line);
    let line_start = file.line_start(start.line);
    let in_line = |offset: usize| {
        let mut at = offset.saturating_sub(line_start).min(line_text.len());
        while !line_text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let from = in_line(label.span.start as usize);
    let to = in_line(label.span.end as usize).max(from);
    let column = display_width(&line_text[..from]);
    let length = display_width(&line_text[from..to]).max(1);
    (
        start.line,
        Mark {
            column,
            length,
            message: label.message.clone(),
            primary,
        },
    )
}

/// Widest source line shown whole; longer ones are cut around their marks (a 200 KB
/// line would otherwise be printed in full).
const MAX_SHOWN: usize = 160;
/// Characters kept before the first mark of a cut line.
const LEAD: usize = 40;

/// The line under a source line that marks `mark` (`^` for the primary place, `-`
/// for the others) with its message; `shift` is how [`clip`] moved the text.
fn underline(
    out: &mut String,
    paint: &Painter,
    pad: &str,
    mark: &Mark,
    shift: (usize, usize),
    severity_style: Style,
) {
    let (symbol, style) = if mark.primary {
        ("^", severity_style)
    } else {
        ("-", Style::Gutter)
    };
    let column = (mark.column + shift.0).saturating_sub(shift.1);
    let length = mark.length.min(MAX_SHOWN);
    let mut underline = symbol.repeat(length);
    if !mark.message.is_empty() {
        underline.push(' ');
        underline.push_str(&visible(&mark.message));
    }
    let _ = writeln!(
        out,
        "{pad} {} {}{}",
        paint.apply(Style::Gutter, "|"),
        " ".repeat(column),
        paint.apply(style, &underline)
    );
}

/// The part of `text` to show and how to move mark columns: `(add, subtract)`.
fn clip(text: &str, marks: &[Mark]) -> (String, (usize, usize)) {
    let width = text.chars().count();
    if width <= MAX_SHOWN {
        return (text.to_string(), (0, 0));
    }
    let first = marks.iter().map(|m| m.column).min().unwrap_or(0);
    let start = first.saturating_sub(LEAD);
    let end = (start + MAX_SHOWN).min(width);
    let mut shown: String = text.chars().skip(start).take(end - start).collect();
    let lead = if start > 0 {
        shown.insert(0, '…');
        1
    } else {
        0
    };
    if end < width {
        shown.push('…');
    }
    (shown, (lead, start))
}

fn display_width(text: &str) -> usize {
    text.chars()
        .map(|c| if c == '\t' { TAB_WIDTH } else { 1 })
        .sum()
}

/// A source line as shown: tabs expanded, and every other control character (a NUL,
/// an ESC that would drive the terminal, DEL, the C1 range) drawn as one visible
/// character in its place, so columns still line up with the marks.
fn expand_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str(&" ".repeat(TAB_WIDTH)),
            // U+2400…U+241F: the control pictures (␀ ␛ …).
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('�')),
            '\x7f' => out.push('␡'),
            '\u{80}'..='\u{9f}' => out.push('�'),
            _ => out.push(c),
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Style {
    Error,
    Warning,
    Note,
    Help,
    Gutter,
    Bold,
}

struct Painter {
    color: bool,
}

impl Painter {
    fn apply(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match style {
            Style::Error => "1;31",
            Style::Warning => "1;33",
            Style::Note => "1;32",
            Style::Help => "1;36",
            Style::Gutter => "1;34",
            Style::Bold => "1",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Span;

    fn span_of(text: &str, needle: &str, file: FileId) -> Span {
        let start = text.find(needle).unwrap_or(0);
        Span::new(file, start, start + needle.len())
    }

    #[test]
    fn primary_and_secondary_in_one_file() {
        let sources = FileMap::new();
        let text = "name: a\nother: 1\nname: b\n";
        let file = sources.add("facets/aws.yaml", text);
        let d = Diagnostic::error("mapping key \"name\" is already defined")
            .with_primary(Span::new(file, 17, 21), "duplicate key")
            .with_secondary(Span::new(file, 0, 4), "first defined here")
            .with_context("while loading facet `aws`")
            .with_help("remove one of them");
        let expected = "\
error: mapping key \"name\" is already defined
 --> facets/aws.yaml:3:1
  |
1 | name: a
  | ---- first defined here
...
3 | name: b
  | ^^^^ duplicate key
  |
  = note: while loading facet `aws`
  = help: remove one of them
";
        assert_eq!(render(&d, &sources, false), expected);
    }

    #[test]
    fn secondary_in_another_file_and_wide_gutter() {
        let sources = FileMap::new();
        let first: String = (1..=11).map(|i| format!("line{i}\n")).collect();
        let a = sources.add("a.yaml", first.clone());
        let b = sources.add("b.yaml", "x: ${ nope }\n");
        let d = Diagnostic::warning("unknown identifier")
            .with_primary(span_of(&first, "line10", a), "")
            .with_secondary(span_of("x: ${ nope }\n", "nope", b), "used here")
            .with_note("a note");
        let expected = "\
warning: unknown identifier
  --> a.yaml:10:1
   |
10 | line10
   | ^^^^^^
  ::: b.yaml:1:7
   |
 1 | x: ${ nope }
   |       ---- used here
   |
   = note: a note
";
        assert_eq!(render(&d, &sources, false), expected);
    }

    #[test]
    fn unicode_tabs_empty_and_multiline_spans() {
        let sources = FileMap::new();
        let text = "k:\t\"é ${x}\"\nnext line\n";
        let file = sources.add("t.yaml", text);
        let dollar = text.find('$').unwrap_or(0);
        let d = Diagnostic::error("bad")
            .with_primary(Span::new(file, dollar, text.len()), "from here")
            .with_secondary(Span::new(file, 2, 2), "");
        let expected = "\
error: bad
 --> t.yaml:1:7
  |
1 | k:    \"é ${x}\"
  |   -
  |          ^^^^^ from here
";
        assert_eq!(render(&d, &sources, false), expected);
    }

    #[test]
    fn without_span() {
        let sources = FileMap::new();
        let d = Diagnostic::error("no template found").with_help("pass --template");
        assert_eq!(
            render(&d, &sources, false),
            "error: no template found\n= help: pass --template\n"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let sources = FileMap::new();
        let file = sources.add("a.yaml", "a: 1\n");
        let d = Diagnostic::error("boom").with_primary(Span::new(file, 3, 4), "here");
        assert!(!render(&d, &sources, false).contains('\x1b'));
        let coloured = render(&d, &sources, true);
        assert!(coloured.starts_with("\x1b[1;31merror\x1b[0m"));
        assert!(coloured.contains("\x1b[1;31m^ here\x1b[0m"));
    }

    #[test]
    fn long_lines_are_cut_around_the_mark() {
        let map = FileMap::new();
        let text = format!("x: {}BAD{}\n", "a".repeat(200_000), "b".repeat(200_000));
        let file = map.add("long.yaml".to_string(), text.clone());
        let at = text.find("BAD").expect("BAD");
        let d = Diagnostic::error("bad").with_primary(Span::new(file, at, at + 3), "here");
        let out = render(&d, &map, false);
        assert!(out.len() < 1000, "{} bytes", out.len());
        assert!(out.contains("long.yaml:1:200004"), "{out}");
        let line = out
            .lines()
            .find(|l| l.contains("BAD"))
            .expect("source line");
        let marks = out.lines().find(|l| l.contains("^^^")).expect("marks");
        // The caret sits under BAD in the cut line.
        let col = line.char_indices().position(|(_, c)| c == 'B').expect("B");
        let caret = marks.char_indices().position(|(_, c)| c == '^').expect("^");
        assert_eq!(col, caret, "{out}");
    }

    #[test]
    fn messages_cannot_drive_the_terminal() {
        let files = FileMap::new();
        let d = Diagnostic::error("invalid path in tar archive: \u{1b}]0;owned\u{7}x\u{9b}2J")
            .with_note("entry \u{1b}[31mred")
            .with_help("line one\nline two\ttab");
        let shown = render(&d, &files, false);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}') && !shown.contains('\u{9b}'),
            "{shown}"
        );
        assert_eq!(
            shown,
            "error: invalid path in tar archive: ␛]0;owned␇x�2J\n= note: entry ␛[31mred\n= help: line one\nline two\ttab\n"
        );
    }

    #[test]
    fn control_characters_are_drawn_not_sent() {
        let map = FileMap::new();
        let text = "a: x\0y\x1b[31mz\n";
        let file = map.add("f.yaml", text.to_string());
        let d = Diagnostic::error("bad").with_primary(span_of(text, "z", file), "here");
        let out = render(&d, &map, false);
        assert!(!out.contains('\0') && !out.contains('\x1b'), "{out:?}");
        assert!(out.contains("x␀y␛[31mz"), "{out}");
        // The mark is still under `z`.
        let line = out.lines().find(|l| l.contains('␀')).expect("line");
        let marks = out.lines().find(|l| l.contains('^')).expect("marks");
        assert_eq!(
            line.chars().position(|c| c == 'z'),
            marks.chars().position(|c| c == '^')
        );
    }

    #[test]
    fn several_diagnostics() {
        let sources = FileMap::new();
        let all = [Diagnostic::error("one"), Diagnostic::warning("two")];
        assert_eq!(
            render_all(&all, &sources, false),
            "error: one\n\nwarning: two\n"
        );
    }
}
