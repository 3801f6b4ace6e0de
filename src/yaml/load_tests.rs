//! Loader behaviour: typing, anchors, merge keys, duplicates, limits and error positions.

use super::*;
use crate::files::FileId;

fn load(text: &str) -> Node {
    match parse(text, FileId(0)) {
        Ok(node) => node,
        Err(err) => panic!("{text:?} failed: {err} at {:?}", err.span),
    }
}

fn fail(text: &str) -> YamlError {
    match parse(text, FileId(0)) {
        Ok(node) => panic!("{text:?} loaded: {node:?}"),
        Err(err) => err,
    }
}

fn keys(node: &Node) -> Vec<&str> {
    match &node.kind {
        NodeKind::Map(entries) => entries.iter().map(|(k, _)| &*k.name).collect(),
        _ => panic!("not a map: {node:?}"),
    }
}

fn kind<'a>(node: &'a Node, key: &str) -> &'a NodeKind {
    &node.get(key).unwrap_or_else(|| panic!("no key {key}")).kind
}

/// Byte range of a span, for position assertions.
fn range(err: &YamlError) -> (u32, u32) {
    (err.span.start, err.span.end)
}

#[test]
fn empty_documents_are_null() {
    assert!(load("").is_null());
    assert!(load("# just a comment\n").is_null());
    assert!(load("---\n").is_null());
    assert!(parse_all("", FileId(0)).expect("empty stream").is_empty());
}

#[test]
fn scalars_are_typed_like_goccy() {
    let doc = load(
        "a: 1\nb: -2\nc: 1.5\nd: true\ne: ~\nf:\ng: '1'\nh: \"true\"\ni: |\n  x\nj: yes\nk: 0x10\nl: 18446744073709551615\nm: .inf\n",
    );
    assert_eq!(kind(&doc, "a"), &NodeKind::Int(1));
    assert_eq!(kind(&doc, "b"), &NodeKind::Int(-2));
    assert_eq!(kind(&doc, "c"), &NodeKind::Float(1.5));
    assert_eq!(kind(&doc, "d"), &NodeKind::Bool(true));
    assert_eq!(kind(&doc, "e"), &NodeKind::Null);
    assert_eq!(kind(&doc, "f"), &NodeKind::Null);
    assert_eq!(kind(&doc, "g"), &NodeKind::Str("1".into()));
    assert_eq!(kind(&doc, "h"), &NodeKind::Str("true".into()));
    assert_eq!(kind(&doc, "i"), &NodeKind::Str("x\n".into()));
    assert_eq!(kind(&doc, "j"), &NodeKind::Str("yes".into()));
    assert_eq!(kind(&doc, "k"), &NodeKind::Int(16));
    assert_eq!(kind(&doc, "l"), &NodeKind::Uint(u64::MAX));
    assert_eq!(kind(&doc, "m"), &NodeKind::Float(f64::INFINITY));
    assert_eq!(
        doc.get("g").and_then(|n| n.style),
        Some(ScalarStyle::SingleQuoted)
    );
}

#[test]
fn core_tags() {
    let doc = load(
        "a: !!str 12\nb: !!int \"12\"\nc: !!float 1\nd: !!bool \"true\"\ne: !!null ''\nf: ! 12\ng: !Custom 12\nh: !!map {x: 1}\n",
    );
    assert_eq!(kind(&doc, "a"), &NodeKind::Str("12".into()));
    assert_eq!(kind(&doc, "b"), &NodeKind::Int(12));
    assert_eq!(kind(&doc, "c"), &NodeKind::Float(1.0));
    assert_eq!(kind(&doc, "d"), &NodeKind::Bool(true));
    assert_eq!(kind(&doc, "e"), &NodeKind::Null);
    assert_eq!(kind(&doc, "f"), &NodeKind::Str("12".into()));
    assert_eq!(kind(&doc, "g"), &NodeKind::Int(12));
    assert!(matches!(kind(&doc, "h"), NodeKind::Map(_)));

    let err = fail("a: !!int abc\n");
    assert!(err.message.contains("not an integer"), "{}", err.message);
    assert_eq!(range(&err), (9, 12));
    assert!(fail("a: !!seq {x: 1}\n").message.contains("!!seq"));
    assert!(fail("a: !!map x\n").message.contains("!!map"));
}

#[test]
fn spans_point_at_values_and_keys() {
    let text = "outer:\n  key: &anchor value\n  list: [a, \"b\"]\n";
    let doc = load(text);
    let outer = doc.get("outer").expect("outer");
    let value = outer.get("key").expect("key");
    assert_eq!(
        &text[value.span.start as usize..value.span.end as usize],
        "value"
    );
    let list = outer.get("list").expect("list");
    assert_eq!(
        &text[list.span.start as usize..list.span.end as usize],
        "[a, \"b\"]"
    );
    let NodeKind::Map(entries) = &outer.kind else {
        panic!("map")
    };
    let key = &entries[1].0;
    assert_eq!(
        &text[key.span.start as usize..key.span.end as usize],
        "list"
    );
    // A block map ends at its last value, not at the next line.
    assert_eq!(outer.span.end as usize, text.len() - 1);
}

#[test]
fn spans_are_bytes_in_unicode_text() {
    let text = "é: \"ü\"\nk: wert\n";
    let doc = load(text);
    let node = doc.get("k").expect("k");
    assert_eq!(
        &text[node.span.start as usize..node.span.end as usize],
        "wert"
    );
}

#[test]
fn aliases_expand() {
    let doc = load("base: &b {x: 1, y: [2]}\ncopy: *b\nscalar: &s hello\nagain: *s\n*s : key\n");
    assert_eq!(
        doc.get("copy").map(|n| &n.kind),
        doc.get("base").map(|n| &n.kind)
    );
    assert_eq!(kind(&doc, "again"), &NodeKind::Str("hello".into()));
    assert_eq!(kind(&doc, "hello"), &NodeKind::Str("key".into()));
}

#[test]
fn merge_keys() {
    let doc = load(
        "base: &base {a: 1, b: 2}\nmore: &more {b: 20, c: 30}\nd:\n  <<: *base\n  b: 3\n  e: 4\nlist:\n  <<: [*base, *more]\nlater:\n  b: 0\n  <<: *base\n",
    );
    let d = doc.get("d").expect("d");
    assert_eq!(keys(d), ["a", "b", "e"]);
    assert_eq!(kind(d, "b"), &NodeKind::Int(3));
    let list = doc.get("list").expect("list");
    assert_eq!(keys(list), ["a", "b", "c"]);
    assert_eq!(kind(list, "b"), &NodeKind::Int(2));
    let later = doc.get("later").expect("later");
    assert_eq!(keys(later), ["b", "a"]);
    assert_eq!(kind(later, "b"), &NodeKind::Int(0));
    // A quoted "<<" is an ordinary key.
    let quoted = load("'<<': 1\n");
    assert_eq!(keys(&quoted), ["<<"]);

    let err = fail("a: &a 1\nb:\n  <<: *a\n");
    assert!(err.message.contains("merge key"), "{}", err.message);
}

#[test]
fn duplicate_keys_name_both_places() {
    let text = "name: a\nother: 1\nname: b\n";
    let err = fail(text);
    assert_eq!(err.message, "mapping key \"name\" is already defined");
    assert_eq!(range(&err), (17, 21));
    let (first, label) = err.related.expect("related position");
    assert_eq!((first.start, first.end), (0, 4));
    assert_eq!(label, "first defined here");
}

#[test]
fn duplicate_keys_in_large_maps() {
    let mut text: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
    assert_eq!(keys(&load(&text)).len(), 40);
    text.push_str("k7: again\n");
    assert!(fail(&text).message.contains("\"k7\""));
}

#[test]
fn alias_bomb_fails_fast() {
    let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let mut previous = 'a';
    for name in 'b'..='j' {
        text.push_str(&format!(
            "{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"
        ));
        previous = name;
    }
    let started = std::time::Instant::now();
    let err = fail(&text);
    assert!(err.message.contains("more than"), "{}", err.message);
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn deep_nesting_is_an_error() {
    // saphyr-parser stops flow nesting itself; block nesting reaches our own limit.
    let deep = "[".repeat(MAX_DEPTH + 10);
    assert!(fail(&deep).message.contains("recursion limit"));
    let block: String = (0..MAX_DEPTH + 5)
        .map(|depth| format!("{}k:\n", "  ".repeat(depth)))
        .collect();
    let err = fail(&block);
    assert!(err.message.contains("nested deeper"), "{}", err.message);
    let fine = format!("{}{}", "[".repeat(50), "]".repeat(50));
    load(&fine);
}

#[test]
fn a_bracket_left_open_is_named_where_it_opens() {
    // The parser stops at the end of the file; the error points at the `[`.
    let err = fail("x: 1\na: [1, 2\n\n");
    assert_eq!(
        err.message,
        "this flow sequence is never closed: the file ends before its `]`"
    );
    assert_eq!(range(&err), (8, 9));
    let (end, label) = err.related.expect("where the file ends");
    assert_eq!((end.start, label.as_str()), (13, "the file ends here"));
    assert!(err.help.is_some_and(|h| h.contains("close it with `]`")));
    // The innermost open collection is the one named.
    let err = fail("a: {b: [1\n");
    assert_eq!(range(&err), (7, 8));
    assert!(err.message.contains("flow sequence"), "{}", err.message);
    let err = fail("a: {b: 1\n");
    assert_eq!(range(&err), (3, 4));
    assert!(err.message.contains("flow mapping"), "{}", err.message);
    // Where the parser stops before the end, its own error stays, with the bracket
    // beside it.
    let err = fail("a: [1, 2\nb: 3\n");
    assert_eq!(err.message, "illegal placement of ':' indicator");
    let (open, label) = err.related.expect("the open bracket");
    assert_eq!(
        (open.start, label.as_str()),
        (3, "inside the flow sequence opened here")
    );
}

#[test]
fn syntax_errors_have_positions() {
    let err = fail("a: [1, 2\n");
    assert!(err.message.contains("flow sequence"), "{}", err.message);
    let err = fail("a: 1\n b: 2\n");
    assert_eq!(err.span.start, 7);
    let err = fail("a: *missing\n");
    assert!(err.message.contains("anchor"), "{}", err.message);
}

#[test]
fn complex_keys_are_refused() {
    assert!(fail("? [a, b]\n: 1\n").message.contains("mapping key"));
}

#[test]
fn multiple_documents() {
    let err = fail("a: 1\n---\nb: 2\n");
    assert!(err.message.contains("single YAML document"));
    assert_eq!(err.span.start, 5);
    let docs = parse_all("a: 1\n---\nb: 2\n---\n", FileId(3)).expect("stream");
    assert_eq!(docs.len(), 3);
    assert_eq!(docs[1].span.file, FileId(3));
    assert!(docs[2].is_null());
}

#[test]
fn errors_render_with_both_positions() {
    use crate::files::{render, Diagnostic, FileMap};
    let sources = FileMap::new();
    let text = "metadata:\n  name: a\n  name: b\n";
    let file = sources.add("facets/x.yaml", text);
    let err = parse(text, file).expect_err("duplicate");
    let expected = "\
error: mapping key \"name\" is already defined
 --> facets/x.yaml:3:3
  |
2 |   name: a
  |   ---- first defined here
3 |   name: b
  |   ^^^^
";
    assert_eq!(render(&Diagnostic::from(err), &sources, false), expected);
}

#[test]
fn unquoted_expression_errors_suggest_quoting() {
    let err = fail("crds:\n  - ${lean ? '' : 'a'}\n");
    assert!(err.help.is_some_and(|h| h.contains("quote")));
    // Without an expression on the line, the hint is another.
    let err = fail("a: 1\n b: 2\n");
    assert!(err.help.is_some_and(|h| !h.contains("expression")));
}

#[test]
fn keys_past_the_intern_limit_still_load() {
    // More distinct keys than the per-file intern set holds, then repeats of them.
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!("k{i}: {{k{}: {i}}}\n", i % 700));
    }
    let doc = parse(&text, FileId::default()).expect("loads");
    let NodeKind::Map(entries) = &doc.kind else {
        panic!("a map")
    };
    assert_eq!(entries.len(), 1500);
    let (key, value) = &entries[1499];
    assert_eq!(&*key.name, "k1499");
    let NodeKind::Map(inner) = &value.kind else {
        panic!("a map")
    };
    assert_eq!(&*inner[0].0.name, "k99");
    assert_eq!(inner[0].1.kind, NodeKind::Int(1499));
}

/// The help line (or, where said, the message) a syntax error gets.
fn help_for(text: &str) -> (String, String) {
    let err = fail(text);
    let help = err
        .help
        .unwrap_or_else(|| panic!("{text:?}: no help for {:?}", err.message));
    (err.message, help)
}

#[test]
fn common_syntax_mistakes_say_what_to_write_instead() {
    assert!(help_for("a:\n\tb: 1\n")
        .1
        .contains("replace the tab with spaces"));
    // The caret is on the tab, not after it.
    assert_eq!(range(&fail("a:\n\tb: 1\n")), (3, 4));
    let (message, help) = help_for("a: 'abc\n");
    assert_eq!(
        message,
        "this quoted string is never closed: the file ends before its `'`"
    );
    assert_eq!(help, "close it with `'`");
    // Closed after all (a NUL byte ended the parser's reading): the parser's words stay.
    let err = fail("a: \"x\u{0}y\" b\n");
    assert_eq!(
        err.message,
        "while scanning a quoted scalar, found unexpected end of stream"
    );
    assert!(help_for("a: \"abc\nb: 2\n")
        .1
        .contains("closing `\"` missing"));
    // A value holding `: ` on the key's own line, against a line indented too far.
    assert!(help_for("a: b: c\n").1.contains("quote the whole value"));
    assert!(help_for("a: 1\n  b: 2\n")
        .1
        .contains("line it up with that key"));
    assert!(help_for("a:\n  - x\n - y\n")
        .1
        .contains("matches no entry above it"));
    assert!(help_for("- a\nb: 1\n")
        .1
        .contains("a key cannot follow its items"));
    assert!(help_for("a: - x\n").1.contains("`key: [item]`"));
    assert!(help_for("a: \"x\" y\n").1.contains("inside the quotes"));
    assert!(help_for("a: \"c:\\d\"\n")
        .1
        .contains("write `\\\\` for a backslash"));
    let (message, help) = help_for("a: *nope\n");
    assert_eq!(message, "`*nope` refers to no anchor");
    assert!(help.contains("write `&nope` on that value"), "{help}");
}

#[test]
fn an_unquoted_expression_is_the_likelier_cause() {
    // `: ` inside an unquoted `${…}` is read as structure: the expression hint wins over
    // the general one.
    let (_, help) = help_for("inputs:\n  x: ${a ? 'b: c' : 'd'}\n");
    assert!(
        help.contains("quote a value that holds an expression"),
        "{help}"
    );
}
