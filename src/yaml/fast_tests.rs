//! The fast front end against the full loader: whatever the fast path accepts must
//! come out exactly as saphyr-parser's events build it (values, styles, spans).

use super::fast;
use super::load::parse_full;
use crate::files::FileId;

/// `Some(true)` when the fast path read `text` and agrees; `Some(false)` when it
/// handed it over; panics when it read it differently.
fn check(text: &str) -> bool {
    let file = FileId(3);
    let Some(fast) = fast::parse(text, file, &mut super::Interner::default()) else {
        return false;
    };
    let full = parse_full(text, file)
        .unwrap_or_else(|e| panic!("fast path accepted what the loader rejects ({e}):\n{text}"));
    // Debug output compares NaN equal to itself, where `==` would not.
    let (fast, full) = (format!("{fast:#?}"), format!("{:#?}", full.0));
    if fast != full {
        let (a, b): (Vec<&str>, Vec<&str>) = (fast.lines().collect(), full.lines().collect());
        let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
        let from = at.saturating_sub(12);
        panic!(
            "fast path differs on:\n{text}\n--- fast\n{}\n--- full\n{}",
            a[from..(at + 3).min(a.len())].join("\n"),
            b[from..(at + 3).min(b.len())].join("\n")
        );
    }
    true
}

fn fast(text: &str) {
    assert!(check(text), "expected the fast path to read:\n{text}");
}

fn handed_over(text: &str) {
    assert!(!check(text), "expected the full loader to read:\n{text}");
}

#[test]
fn block_maps_and_lists() {
    fast("a: 1\nb: two\n");
    fast("a: 1\nb: two");
    fast("# head\n\na:\n  b:\n    c: d  # note\n  e: [1, 2]\n\nf: x\n");
    fast("  a: 1\n  b: 2\n");
    fast("# c\n---\na: 1\n");
    fast("--- # c\n- 1\n");
    fast("list:\n  - a\n  - b\n  -  c\n");
    fast("- a\n- b: 1\n  c: 2\n- - x\n  - y\n-\n  k: v\n");
    fast("- name: x\n  deps:\n    - a\n    - b\n- name: y\n");
    fast("a b c: d e f\n'q k': 1\n\"d k\" : 2\n");
    fast("k: v:w\nu: http://x/y#z\nn: a#b\n");
    fast("k: -x\nl: --\n");
    fast("m:\n  # comment\n\n  a: 1\n    # deeper comment\n  b: 2\n");
    fast("a:\n- x\n- k: v\n  j: w\n-\n  - y\nb:\n- |\n  s\nc: 1\n");
    fast("- a:\n  - x\n  b: 1\n");
    handed_over("a:\n- x\n  - y\n");
    fast("a: x\n  y\n\n\n   z   \nb: one\n   two # c\nc: 3\n");
    fast("- x\n  y\n- z\n");
    fast("a:\n  - x\n    y\n  - q\n");
    fast(&(0..40).map(|i| format!("k{i}: {i}\n")).collect::<String>());
}

#[test]
fn scalars_typed_as_goccy_reads_them() {
    fast("a: null\nb: ~\nc: true\nd: FALSE\ne: 0x1F\nf: 0755\ng: 1.5\nh: .inf\ni: .nan\nj: yes\nk: 1e3\nl: -1\nm: '1'\nn: \"true\"\n");
    fast("a: 18446744073709551615\nb: 9223372036854775808\n");
}

#[test]
fn quoted_scalars() {
    fast("a: 'it''s'\nb: \"x\\ty\\n\\\"q\\\" \\\\ \\/ \\x41\\u00e9\\U0001F600\"\nc: ''\nd: \"\"\n");
    fast("a: \"${x ?? 'y'}\"  # c\nb: 'é ü'\n");
    handed_over("a: \"x\n  y\"\n");
    handed_over("a: 'x\n  y'\n");
    handed_over("a: \"\\q\"\n");
    handed_over("a: \"x\"y\n");
}

#[test]
fn block_scalars() {
    fast("a: |\n  one\n  two\n\n  three\nb: 1\n");
    fast("a: |-\n  one\n    indented\n\nb: 1\n");
    fast("a: |+\n  one\n\n\nb: 1\n");
    fast("a: >\n  one\n  two\n\n  three\n\n\n  four\nb: 1\n");
    fast("a: >-\n  folded\n  text\n");
    fast("- |\n  x\n- >\n  y\n  z\n");
    fast("a: |\n\n  after blank\n");
    fast("a: | # comment\n  x\n  # not a comment\n  y\n");
    fast("a:\n  b: |\n      deep\n  c: 1\n");
    fast("- k: |\n    v\n  j: 1\n");
    fast("a: |\n  x\n  \n  y\n");
    handed_over("a: |2\n  x\n");
    fast("a: >\n  x\n    more\n  y\n  z\n\n   m\n  n\n");
    handed_over("a: |\n    \n  x\n");
    handed_over("a: |\n  x");
}

#[test]
fn flow_collections() {
    fast("a: []\nb: {}\nc: [x, 'y', \"z\", [1, 2], {k: v}]\nd: {a: 1, 'b': [2], c: {d: e}}\n");
    fast("a: [ x , y ]\nb: [a b, c]\n");
    handed_over("a: [x,\n  y]\n");
    handed_over("a: [x, ]\n");
    handed_over("a: [k: v]\n");
    handed_over("a: {k}\n");
    handed_over("a: [http://x]\n");
    handed_over("a: [x] y\n");
}

#[test]
fn rarer_constructs_go_to_the_full_loader() {
    for text in [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "<<: {a: 1}\n",
        "a:\nb: 1\n",
        "---\na: 1\n---\nb: 1\n",
        "--- a\n",
        "a: 1\n...\n",
        "a: x # c\n  y\n",
        "a: x\n  y: z\n",
        "a:\tb\n",
        "a: b\r\n",
        "? a\n: b\n",
        "a: 1\na: 2\n",
        "just text\n",
        "a: b: c\n",
        "a: 1\n b: 2\n",
        "- a\nb: 1\n",
        "a: @x\n",
        "\u{feff}a: 1\n",
    ] {
        handed_over(text);
    }
}

/// Inputs the fuzz driver's `yaml` surface found.
#[test]
fn found_by_the_fuzz_driver() {
    for text in [
        "n: e\ne:\n s: [] ",
        "m: []\ne: [] \n",
        "m: []\ne: [] ",
        "    c: {e: i,m: -,t: 1}\n",
        "c: [-, -]\n",
        "  m: [t -,s]\n",
        "m: [a -]\n",
        "m: {a: b-}\n",
        "c: [-1, -x]\n",
        "a: [[1] , {k: [2]  }, 3]  # c\n",
        "e:\n s: []",
        "a: x",
        "a: [x]",
        "a: {k: v}",
        "- a",
        "a:\n  - b",
        "a: \"x\"",
        "a: 'x'  # c",
        "a: x # c",
        "a: x\n# c",
        "a:\n- x",
        "a: x\n  y",
        "a: 'x'\n\n\n",
        "a: >\n  x\n\n",
        "a: |+\n  x\n\n",
        "- - a\n  - b",
        "a:\n  - b\n\n  - c\n",
    ] {
        check(text);
    }
}

#[test]
fn empty_documents() {
    fast("");
    fast("# only a comment\n\n");
}

#[test]
fn deep_nesting_goes_to_the_full_loader() {
    let deep: String = (0..300).map(|i| format!("{}- \n", " ".repeat(i))).collect();
    handed_over(&deep);
    let flow = format!("a: {}{}\n", "[".repeat(300), "]".repeat(300));
    handed_over(&flow);
}

/// Every YAML file the repository holds (templates, conformance corpora, examples):
/// where the fast path reads one, it reads it as the full loader does.
#[test]
fn the_repository_s_yaml_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["_template", "tests", "examples", "snapshots", "benches"] {
        collect(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} YAML files", files.len());
    let (mut read, mut total) = (0, 0);
    let mut left = Vec::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if parse_full(&text, FileId(0)).is_ok() {
            total += 1;
        }
        if check(&text) {
            read += 1;
        } else if parse_full(&text, FileId(0)).is_ok() {
            left.push(path.display().to_string());
        }
    }
    if std::env::var_os("BPC_FAST_LIST").is_some() {
        eprintln!("{}\nread {read} of the {total} that load", left.join("\n"));
    }
    // Most real files that load are in the common shapes (the rest use anchors and
    // merge keys); a drop here means the fast path stopped reading them (correct, but
    // slow).
    assert!(
        read * 10 >= total * 7,
        "the fast path read only {read} of {total} files"
    );
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(path);
        }
    }
}
