//! The layering of the crate's top-level modules: every `crate::<module>` path points
//! down the declared order, never up or sideways, so there is no cycle. Within a
//! module, the files that name each other (`super::x`, `self::x`, `crate::m::x`) form
//! no cycle either; the composition's stages never name its driver; outside the
//! composition only its model and its face are named; no function is longer than a
//! screen but those listed, which may only shrink. The same edge listing, for reading, is
//! `bench/module-graph`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module may use modules of lower layers only. A new top-level
/// module must be placed here.
const LAYERS: &[&[&str]] = &[
    // The C heap set up for a command that runs once (worker threads reserve their
    // arena's room through it): knows nothing else.
    &["heap"],
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
    // Rego policies over a composition and its render (handed the rendered files).
    &["policy"],
    &["explain", "render", "testing"],
    // The deployment graph, read from a render; the verification of a render, built
    // and checked as Flux would.
    &["graph", "verify"],
    // One loaded project, composed, tested or rendered: what every command starts
    // from; the static checks of a template, which run its test cases for coverage.
    &["session", "check"],
    // Sessions run over every context at once, or again on every change; two
    // versions of a project compared.
    &["all_contexts", "watch", "compare"],
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

#[test]
fn files_of_a_module_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = file_edges(&src);
    let mut wrong = Vec::new();
    let tops: BTreeSet<&str> = graph.keys().map(|f| f[0].as_str()).collect();
    for top in tops {
        if let Some(cycle) = find_cycle(&graph, top) {
            wrong.push(format!(
                "files of `{top}` name each other in a circle: {}",
                cycle
                    .iter()
                    .map(|m| file_name(m))
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let activate = graph
        .get(&vec!["compose".to_string(), "activate".to_string()])
        .expect("compose/activate.rs is scanned");
    assert!(
        activate.contains(&vec!["compose".into(), "config".into()]),
        "the scan finds no file edges: {activate:?}"
    );
}

#[test]
fn compose_stages_never_name_the_driver() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let driver = vec!["compose".to_string()];
    // The face re-exports what the driver offers the rest of bpc.
    let face = vec!["compose".to_string(), "face".to_string()];
    let wrong: Vec<String> = file_edges(&src)
        .iter()
        .filter(|(from, _)| from[0] == "compose" && **from != driver && **from != face)
        .filter(|(_, to)| to.contains(&driver))
        .map(|(from, _)| format!("{} names compose/mod.rs", file_name(from)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The driver's `// N. stage` comments count up, and each stands right before a call
/// into the stage it names.
#[test]
fn compose_stage_numbers_follow_the_calls() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compose/mod.rs");
    let text = std::fs::read_to_string(path).expect("compose/mod.rs reads");
    let mut numbers = Vec::new();
    let mut wrong = Vec::new();
    for (at, _) in text.match_indices("// ") {
        let rest = &text[at + 3..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Some(after) = rest[digits.len()..].strip_prefix(". ") else {
            continue;
        };
        if digits.is_empty() {
            continue;
        }
        let stage: String = after.chars().take_while(|c| c.is_alphanumeric()).collect();
        // The first `path::` after the comment's line.
        let code = &rest[rest.find('\n').unwrap_or(rest.len())..];
        let called = code
            .match_indices("::")
            .map(|(k, _)| {
                let head = &code[..k];
                let start = head
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(0, |s| s + 1);
                head[start..].to_lowercase()
            })
            .find(|name| !name.is_empty())
            .unwrap_or_default();
        if called != stage {
            wrong.push(format!(
                "`// {digits}. {stage}` is followed by a call into `{called}`"
            ));
        }
        numbers.push(digits.parse::<usize>().expect("digits"));
    }
    // Stage 1 and stages 6– in `compose`, then 2–5 in `compose_template`.
    assert_eq!(numbers, [1, 6, 7, 8, 9, 10, 11, 2, 3, 4, 5], "{wrong:?}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Outside the composition, every path into it goes through its data
/// (`compose::model`) or its face (`compose::face`), never into a stage; the model,
/// the composition's lowest floor, names no other part of it.
#[test]
fn compose_is_read_through_its_model_and_face() {
    const OPEN: &[&str] = &["model", "face"];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    let mut outside = 0;
    for (path, module) in rust_files(&root.join("src")) {
        let text = std::fs::read_to_string(&path).expect("source file reads");
        let code = without_test_modules(&code_only(&text));
        let in_model = module.len() > 1 && module[..2] == ["compose", "model"];
        for target in module_paths(&code, &module) {
            if target[0] != "compose" {
                continue;
            }
            let to = target.get(1).map(String::as_str);
            if module[0] != "compose" {
                outside += 1;
                if !to.is_some_and(|to| OPEN.contains(&to)) {
                    wrong.push(format!(
                        "{} names {}",
                        file_name(&module),
                        target.join("::")
                    ));
                }
            } else if in_model && to != Some("model") {
                wrong.push(format!(
                    "the model's {} names {}",
                    file_name(&module),
                    target.join("::")
                ));
            }
        }
    }
    // The integration tests and the examples see the crate from outside, as `bpc::`.
    for dir in ["tests", "examples"] {
        for path in files_under(&root.join(dir)) {
            let text = std::fs::read_to_string(&path).expect("source file reads");
            let code = code_only(&text).replace("bpc::", "crate::");
            for target in module_paths(&code, &[]) {
                if target[0] != "compose" {
                    continue;
                }
                outside += 1;
                if !target.get(1).is_some_and(|to| OPEN.contains(&to.as_str())) {
                    wrong.push(format!(
                        "{} names bpc::{}",
                        path.display(),
                        target.join("::")
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        outside > 50,
        "the scan finds too few paths into compose: {outside}"
    );
}

/// The face stays narrow: a name added to it is a name every reader of the
/// composition may come to depend on. Eleven today; lower the bound when one goes.
#[test]
fn the_face_of_the_composition_names_few_things() {
    const MOST: usize = 11;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("src/compose/face.rs")).expect("face reads");
    let mut names = Vec::new();
    for line in code_only(&text).lines() {
        let line = line.trim();
        let Some(path) = line
            .strip_prefix("pub use ")
            .or_else(|| line.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let path = path.trim_end_matches(';');
        let (list, named) = match path.split_once('{') {
            Some((_, list)) => (list.trim_end_matches('}'), true),
            None => (path, false),
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            // `a::b as c` names `c`; `a::b` names `b`.
            let name = item.rsplit(" as ").next().unwrap_or(item);
            let name = if named {
                name
            } else {
                name.rsplit("::").next().unwrap_or(name)
            };
            names.push(name.to_string());
        }
    }
    assert!(names.len() >= 5, "the scan finds too few names: {names:?}");
    assert!(
        names.len() <= MOST,
        "compose::face re-exports {} names (at most {MOST}): {names:?}",
        names.len()
    );
}

/// The library's public face stays small: counted as `bench/public-api` counts it,
/// the `pub` items of files whose every enclosing module is `pub mod` (what another
/// crate can name). An item only the crate calls is `pub(crate)`; a new public item
/// raises this bound on purpose, in the commit that adds it.
#[test]
fn the_public_api_stays_small() {
    const MOST: usize = 245;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut count = 0;
    let mut files = vec![src.join("lib.rs")];
    while let Some(file) = files.pop() {
        let text = std::fs::read_to_string(&file).expect("source file reads");
        let code = without_test_modules(&code_only(&text));
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => file.parent().expect("in src").to_path_buf(),
            _ => file.with_extension(""),
        };
        for line in code.lines().map(str::trim_start) {
            let Some(rest) = line.strip_prefix("pub ") else {
                continue;
            };
            let rest = rest.strip_prefix("unsafe ").unwrap_or(rest);
            let keyword = rest.split_whitespace().next().unwrap_or_default();
            if ![
                "fn", "struct", "enum", "const", "static", "type", "trait", "mod", "use",
            ]
            .contains(&keyword)
            {
                continue;
            }
            count += 1;
            if let Some(name) = rest.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                let flat = dir.join(format!("{name}.rs"));
                files.push(if flat.exists() {
                    flat
                } else {
                    dir.join(name).join("mod.rs")
                });
            }
        }
    }
    assert!(count > 100, "the scan finds too few public items: {count}");
    assert!(
        count <= MOST,
        "{count} public items (at most {MOST}): make what only the crate calls pub(crate)"
    );
}

/// The composition's driver owns the release of memory: a stage says where a large
/// step of its own freed much (`shared::memory::Memory`), but only the driver names
/// `heap::give_back`, and so decides whether anything is handed back. (Worker
/// threads setting up their arenas, `heap::worker_started`, release nothing.)
#[test]
fn only_the_compose_driver_gives_memory_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    let mut driver_names_it = false;
    for (path, module) in rust_files(&src) {
        if module[0] != "compose" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source file reads");
        let code = without_test_modules(&code_only(&text));
        let gives_back =
            |p: &Vec<String>| p[0] == "heap" && p.get(1).is_none_or(|f| f == "give_back");
        if module_paths(&code, &module).iter().any(gives_back) {
            match module.len() {
                1 => driver_names_it = true,
                _ => wrong.push(format!("{} gives memory back", file_name(&module))),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        driver_names_it,
        "the scan does not find the driver's use of the heap"
    );
}

/// The functions of `src/` longer than a screen, each with the length it may not
/// grow past, and why it is long. A ratchet: a function not listed may not pass
/// [`MOST_LINES`], and one that shrinks to fit (or goes) must leave the list, so the
/// list only shrinks. Within `src/compose/` none is listed.
const LONG: &[(&str, &str, usize, &str)] = &[
    (
        "expr/compiler",
        "binary",
        125,
        "the compiler's dispatch, one match over the syntax forms",
    ),
    (
        "expr/compiler",
        "compile",
        105,
        "the compiler's dispatch, one match over the syntax forms",
    ),
    (
        "expr/eval",
        "eval",
        164,
        "the interpreter's dispatch, one match over the expression forms, on the hot path",
    ),
    (
        "expr/eval",
        "predicate",
        147,
        "the interpreter's dispatch, one match over the expression forms, on the hot path",
    ),
    (
        "yaml/fast",
        "block_scalar",
        115,
        "one scanner loop over a block scalar's lines, on the YAML front end's hot path",
    ),
];

/// A screen.
const MOST_LINES: usize = 100;

#[test]
fn functions_fit_on_a_screen() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // The longest function of each name in each file (a file may have several of one
    // name, in different `impl`s).
    let mut longest: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (path, module) in rust_files(&src) {
        let text = std::fs::read_to_string(&path).expect("source file reads");
        for (name, lines) in function_lengths(&code_only(&text)) {
            let at = longest.entry((file_name(&module), name)).or_default();
            *at = (*at).max(lines);
        }
    }
    let mut wrong = Vec::new();
    for ((file, name), lines) in &longest {
        let listed = LONG.iter().find(|(f, n, _, _)| f == file && n == name);
        match listed {
            Some((_, _, most, _)) if lines > most => wrong.push(format!(
                "{file}: fn {name} grew to {lines} lines (at most {most}; split it)"
            )),
            Some(_) if *lines <= MOST_LINES => wrong.push(format!(
                "{file}: fn {name} is {lines} lines now: take it off the LONG list"
            )),
            None if *lines > MOST_LINES => wrong.push(format!(
                "{file}: fn {name} is {lines} lines (at most {MOST_LINES}; split it)"
            )),
            _ => {}
        }
    }
    for (file, name, _, _) in LONG {
        if !longest.contains_key(&(file.to_string(), name.to_string())) {
            wrong.push(format!(
                "{file}: fn {name} is gone: take it off the LONG list"
            ));
        }
    }
    assert!(
        LONG.iter().all(|(file, ..)| !file.starts_with("compose")),
        "the composition's functions all fit on a screen"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        longest.len() > 1000,
        "the scan finds too few functions: {}",
        longest.len()
    );
}

/// Every function in `code` (comments and literals already blanked) with its length
/// in lines, from the line of `fn` to the line of its closing brace. Declarations
/// without a body are not counted.
fn function_lengths(code: &str) -> Vec<(String, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("fn ") {
        let start = i + at;
        i = start + 3;
        if start > 0 && is_ident(b[start - 1]) {
            continue;
        }
        let name: String = code[i..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets; a `;`
        // there first means no body.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &c) in b.iter().enumerate().skip(i) {
            match c {
                b'(' | b'[' | b'<' => depth += 1,
                b')' | b']' => depth -= 1,
                b'>' if b[k - 1] != b'-' => depth -= 1,
                b';' if depth <= 0 => break,
                b'{' if depth <= 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut level = 0;
        let mut close = b.len() - 1;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => level += 1,
                b'}' => {
                    level -= 1;
                    if level == 0 {
                        close = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = code[start..=close].matches('\n').count() + 1;
        out.push((name, lines));
    }
    out
}

/// `src/compose/collect/mod.rs` for `[compose, collect]`, and so on.
fn file_name(module: &[String]) -> String {
    module.join("/")
}

/// For every file (by module path), the files of the same top-level module it names.
fn file_edges(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = rust_files(src);
    let known: BTreeSet<Vec<String>> = files.iter().map(|(_, m)| m.clone()).collect();
    let mut graph = BTreeMap::new();
    for (path, module) in &files {
        let text = std::fs::read_to_string(path).expect("source file reads");
        let code = without_test_modules(&code_only(&text));
        let mut named = BTreeSet::new();
        for target in module_paths(&code, module) {
            // The longest known module the path starts with is the file it names.
            let file = (1..=target.len())
                .rev()
                .map(|n| target[..n].to_vec())
                .find(|m| known.contains(m));
            if let Some(file) = file {
                if file[0] == module[0] && file != *module {
                    named.insert(file);
                }
            }
        }
        graph.insert(module.clone(), named);
    }
    graph
}

/// The code without `#[cfg(test)] mod … { … }` blocks: tests may name anything, and
/// their `super::` means the file itself.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let open = trimmed.find(['{', ';']);
        match open {
            Some(k) if trimmed.starts_with("mod ") && trimmed.as_bytes()[k] == b'{' => {
                let body = &trimmed[k..];
                let mut level = 0;
                let mut end = body.len();
                for (j, c) in body.char_indices() {
                    match c {
                        '{' => level += 1,
                        '}' => {
                            level -= 1;
                            if level == 0 {
                                end = j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &body[end..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// The module paths `code` (of the file `module`) names through `crate::`, `super::`
/// and `self::`, each as the segments from the crate root (a `{…}` group gives one
/// path per item).
fn module_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_path = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':');
        let rest = &code[i..];
        let base: Option<(Vec<String>, usize)> = if !starts_path {
            None
        } else if rest.starts_with("crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if rest.starts_with("self::") {
            Some((module.to_vec(), "self::".len()))
        } else if rest.starts_with("super::") {
            let len = rest.len() - rest.trim_start_matches("super::").len();
            let climbs = len / "super::".len();
            Some((module[..module.len().saturating_sub(climbs)].to_vec(), len))
        } else {
            None
        };
        match base {
            Some((base, len)) => {
                for tail in expand_path(&rest[len..]) {
                    let mut path = base.clone();
                    path.extend(tail);
                    out.push(path);
                }
                i += len;
            }
            None => i += 1,
        }
        while i < b.len() && !code.is_char_boundary(i) {
            i += 1;
        }
    }
    out
}

/// The segments of the path at the start of `text`, or of each item of a `{…}` group
/// (nested groups too).
fn expand_path(text: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let end = rest
            .bytes()
            .position(|c| !is_ident(c))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => return vec![segments],
        }
    }
    let Some(group) = rest.strip_prefix('{') else {
        return vec![segments];
    };
    let mut items = Vec::new();
    let (mut level, mut start) = (0, 0);
    for (j, c) in group.char_indices() {
        match c {
            '{' => level += 1,
            '}' if level == 0 => {
                items.push(&group[start..j]);
                break;
            }
            '}' => level -= 1,
            ',' if level == 0 => {
                items.push(&group[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    // A trailing comma leaves an empty item, which names nothing.
    for item in items.into_iter().filter(|item| !item.trim().is_empty()) {
        for tail in expand_path(item.trim_start()) {
            let mut path = segments.clone();
            path.extend(tail);
            out.push(path);
        }
    }
    out
}

/// A cycle among the files of `top`, as the files along it (the first again at the
/// end), if there is one.
fn find_cycle(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    top: &str,
) -> Option<Vec<Vec<String>>> {
    // Depth-first, with the files on the current path kept in order.
    fn visit(
        file: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        done: &mut BTreeSet<Vec<String>>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        if let Some(at) = path.iter().position(|f| f == file) {
            let mut cycle = path[at..].to_vec();
            cycle.push(file.clone());
            return Some(cycle);
        }
        if done.contains(file) {
            return None;
        }
        path.push(file.clone());
        for next in graph.get(file).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(file.clone());
        None
    }
    let mut done = BTreeSet::new();
    for file in graph.keys().filter(|f| f[0] == top) {
        if let Some(cycle) = visit(file, graph, &mut done, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
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

/// Every `.rs` file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("directory reads").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
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
