//! The layering of the crate's top-level modules: every `crate::<module>` path points
//! down the declared order, never up or sideways, so there is no cycle. The same edge
//! listing, for reading, is `bench/module-graph`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module may use modules of lower layers only. A new top-level
/// module must be placed here.
const LAYERS: &[&[&str]] = &[
    // Files and diagnostics, the allocator meter, text diffs, the parallel map: know
    // nothing else.
    &["files", "alloc", "diff", "parallel"],
    &["yaml"],
    // Published blueprints: references, pulls, the shared cache, bundles.
    &["oci"],
    &["value"],
    &["expr"],
    &["template"],
    &["compose"],
    // Project discovery and value layers, above the composition they feed.
    &["project"],
    &["emit"],
    &["explain", "render", "testing"],
    // The deployment graph, read from a render.
    &["graph"],
    // One loaded project, composed, tested or rendered: what every command starts
    // from; the static checks of a template, which run its test cases for coverage.
    &["session", "check"],
    // Sessions run over every context at once, or again on every change.
    &["all_contexts", "watch"],
    // The language server: sessions of the editor's documents, checked and composed.
    &["lsp"],
    &["cli"],
];

#[test]
fn modules_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut wrong = Vec::new();
    for (from, to) in &edges {
        match (layer_of.get(from.as_str()), layer_of.get(to.as_str())) {
            (Some(a), Some(b)) if b < a => {}
            (Some(_), Some(_)) => wrong.push(format!("{from} -> {to} points up or sideways")),
            (None, _) => wrong.push(format!("{from} is in no layer of LAYERS")),
            (_, None) => wrong.push(format!("{to} is in no layer of LAYERS")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        edges.contains(&("cli".into(), "compose".into())),
        "the scan finds no edges: {edges:?}"
    );
}

/// `(from, to)` for every path from one top-level module into another.
fn edges(src: &Path) -> BTreeSet<(String, String)> {
    let files = rust_files(src);
    let tops: BTreeSet<String> = files.iter().map(|(_, m)| m[0].clone()).collect();
    let mut found = BTreeSet::new();
    for (path, module) in &files {
        let text = std::fs::read_to_string(path).expect("source file reads");
        for target in targets(&code_only(&text), module.len()) {
            if tops.contains(&target) && target != module[0] {
                found.insert((module[0].clone(), target));
            }
        }
    }
    found
}

/// Every `.rs` file under `src` but the crate roots, with its module path
/// (`src/a/b.rs` → `[a, b]`, `src/a/mod.rs` → `[a]`).
fn rust_files(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src reads").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if module != ["lib"] && module != ["main"] {
                out.push((path, module));
            }
        }
    }
    out
}

/// The source without comments, string and char literals, so that prose and messages
/// naming `crate::x` do not count.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let (mut depth, mut j) = (1, 2);
            while j < rest.len() && depth > 0 {
                if rest[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            i += j;
        } else if let Some(len) = raw_string_len(rest, i > 0 && is_ident(b[i - 1])) {
            i += len;
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            i += j + 1;
            out.push_str("\"\"");
        } else if let Some(len) = char_literal_len(rest) {
            i += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`) starting `rest`.
fn raw_string_len(rest: &str, after_ident: bool) -> Option<usize> {
    let body = rest.strip_prefix('r').filter(|_| !after_ident)?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let opening = 1 + hashes + 1;
    if rest.as_bytes().get(opening - 1) != Some(&b'"') {
        return None;
    }
    let closing = format!("\"{}", "#".repeat(hashes));
    let end = rest[opening..].find(&closing)?;
    Some(opening + end + closing.len())
}

/// The length of a char literal (`'x'`, `'\n'`, `'\u{2028}'`) starting `rest`; a
/// lifetime is not one.
fn char_literal_len(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    let inner = if body.starts_with('\\') {
        body.find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body[inner..].starts_with('\'') && inner > 0).then_some(inner + 2)
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The top-level modules `code` names: `crate::x`, the heads of `crate::{x, y::…}`,
/// and `super::` chains that climb above a file `depth` modules deep.
fn targets(code: &str, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts_path = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':');
        let rest = &code[i..];
        let (climbs, after) = if !starts_path {
            (None, 0)
        } else if rest.starts_with("crate::") {
            (Some(usize::MAX), "crate::".len())
        } else if rest.starts_with("super::") {
            let supers = rest.len() - rest.trim_start_matches("super::").len();
            (Some(supers / "super::".len()), supers)
        } else {
            (None, 0)
        };
        // A `super::` chain leaves the file's top module only if it climbs as far as
        // the file is deep (an inline `mod tests` adds a level not counted here).
        if climbs.is_some_and(|n| n >= depth) {
            out.extend(heads(&rest[after..]));
        }
        i += after.max(1);
        while i < b.len() && !code.is_char_boundary(i) {
            i += 1;
        }
    }
    out
}

/// The first segment of a path, or of each path in a `{…}` group.
fn heads(path: &str) -> Vec<String> {
    if let Some(group) = path.strip_prefix('{') {
        let mut items = Vec::new();
        let (mut depth, mut item) = (0, String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                item.push(c);
            }
        }
        items.push(item);
        return items
            .iter()
            .filter_map(|item| item.trim().split("::").next().map(str::trim))
            .filter(|head| !head.is_empty())
            .map(str::to_string)
            .collect();
    }
    let end = path
        .bytes()
        .position(|c| !is_ident(c))
        .unwrap_or(path.len());
    vec![path[..end].to_string()]
}
