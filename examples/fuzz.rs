//! In-process fuzz driver: mutates the repository's own templates
//! and expressions and runs them through compose, explain, test and eval, failing on
//! any panic, any input over the time budget and any input over the memory budget.
//!
//! `cargo run --release --example fuzz -- --runs N --seed S [--time-ms T] [--memory-mib M]
//! [--surface mixed|yaml|render|set|deep|tar|lsp|oci]`
//!
//! Surfaces: `mixed` (the default) is the original blend of expressions,
//! YAML and templates. `yaml` parses mutated YAML files only, each with the
//! fast front end and with the full loader, and fails where the two disagree. `render` renders mutated templates, checks every output path is
//! confined, compares the result with a hostile tree (`--check`: links to a secret, a
//! FIFO, a `/dev/zero` link, an oversized file) and fails if the secret is printed, and
//! every 500th render is written to a scratch directory that must then hold the output
//! and nothing else. `set` feeds random `--set` pairs (list indexes, very long paths)
//! through the value layers, the effective values and both writers. `deep` evaluates
//! expressions that build deep or large values and writes their results. `tar` builds
//! template archives with duplicate, unsafe, oversized and corrupted entries and
//! composes those that load. `lsp` sends JSON-RPC frames (edits, requests at any
//! position, settings, garbage, broken framing) through the server's transport to one
//! live language server over a scratch copy of `_template`
//! (`examples/support/fuzz_lsp.rs`), and fails when the server stops answering. `oci`
//! pulls from a registry stand-in whose manifests, layers, error replies and token
//! answers each input decides (`examples/support/fuzz_oci.rs`).
//!
//! Every input is derived from (seed, run number) alone, so a failure is reproduced by
//! `--seed S --only RUN`. On a panic the input is shrunk (chunks removed while it still
//! panics) and printed; on a time or memory overrun a watchdog prints the input as it
//! was and exits, since the stuck run cannot be resumed.

#[path = "support/fuzz_lsp.rs"]
mod fuzz_lsp;
#[path = "support/fuzz_oci.rs"]
mod fuzz_oci;

use bpc::compose::model::inputs::Environment;
use bpc::compose::model::inputs::Limits;
use bpc::expr::host::{JsonnetLimits, NullHost, TerraformOutputs};
use bpc::expr::{Engine, EngineConfig, Map, Value};
use bpc::files::{FileMap, FileTree};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// YAML inputs the fast front end read itself, and those that loaded at all.
static YAML_FAST: AtomicU64 = AtomicU64::new(0);
static YAML_LOADED: AtomicU64 = AtomicU64::new(0);
use std::time::{Duration, Instant};

/// splitmix64: one u64 of state, so any run is reproducible from (seed, run).
struct Rng(u64);

impl Rng {
    fn for_run(seed: u64, run: u64) -> Rng {
        let mut r = Rng(seed ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Fragments that tend to reach interesting code: expression syntax, YAML structure,
/// host functions, limits.
const TOKENS: &[&str] = &[
    "${",
    "}",
    "$${",
    "{",
    "[",
    "]",
    "(",
    ")",
    ":",
    ": ",
    "- ",
    "\n",
    "\n  ",
    "  ",
    "'",
    "\"",
    ",",
    ".",
    "?.",
    "??",
    "?",
    "|",
    ">",
    "#",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "~",
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e309",
    "9223372036854775807",
    "-9223372036854775808",
    "0x",
    "1..1000000",
    "..",
    "../",
    "/etc/passwd",
    "file('",
    "jsonnet('",
    "yaml(",
    "env('HOME')",
    "terraform_output('a', 'b')",
    "len(",
    "map(",
    "filter(",
    "#",
    "let x = 1; ",
    " + ",
    " * ",
    " / 0",
    " % 0",
    " == ",
    " in ",
    " not ",
    " matches '(a+)+$'",
    "repeat('a', 99999999)",
    "toJSON(",
    "fromJSON(",
    "split(",
    "join(",
    "cidrsubnet('10.0.0.0/8', 8, 1)",
    "strategy: ",
    "remove",
    "replace",
    "merge",
    "when: ",
    "config:",
    "value: ",
    "name: ",
    "ordinal: ",
    "dependsOn: [",
    "inputs:",
    "terraform:",
    "kustomize:",
    "\t",
    "\u{feff}",
    "é",
    "\u{0}",
];

/// A mutation of `text`: a few edits at character boundaries.
fn mutate(rng: &mut Rng, text: &str, donors: &[String]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let len = chars.len();
        let at = rng.below(len + 1);
        match rng.below(7) {
            0 if len > 0 => {
                let end = (at + 1 + rng.below(16)).min(len);
                chars.drain(at.min(end)..end);
            }
            1 if len > 0 => {
                let end = (at + 1 + rng.below(32)).min(len);
                let piece: Vec<char> = chars[at.min(end)..end].to_vec();
                let times = 1 + rng.below(3);
                for _ in 0..times {
                    chars.splice(at..at, piece.iter().copied());
                }
            }
            2 if len > 0 => {
                let i = rng.below(len);
                chars[i] =
                    *rng.pick(&['{', '}', '$', ':', '-', ' ', '\n', '\'', '"', '0', 'a', '.']);
            }
            3 if !donors.is_empty() => {
                let donor: Vec<char> = rng.pick(donors).chars().collect();
                let from = rng.below(donor.len());
                let end = (from + 1 + rng.below(48)).min(donor.len());
                chars.splice(at..at, donor[from..end].iter().copied());
            }
            _ => {
                let token = rng.pick(TOKENS);
                chars.splice(at..at, token.chars());
            }
        }
    }
    chars.into_iter().collect()
}

/// One template of the repository, held in memory.
struct Template {
    name: String,
    files: BTreeMap<String, Vec<u8>>,
}

fn read_tree(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_tree(root, &path, files);
        } else if let (Ok(rel), Ok(data)) = (path.strip_prefix(root), std::fs::read(&path)) {
            files.insert(rel.to_string_lossy().replace('\\', "/"), data);
        }
    }
}

fn templates(repo: &Path) -> Vec<Template> {
    let mut dirs = vec![repo.join("_template")];
    if let Ok(examples) = std::fs::read_dir(repo.join("examples")) {
        let mut found: Vec<PathBuf> = examples
            .flatten()
            .map(|e| e.path().join("contexts/_template"))
            .filter(|p| p.is_dir())
            .collect();
        found.sort();
        dirs.extend(found);
    }
    dirs.push(repo.join("examples/multi-source/app"));
    dirs.push(repo.join("examples/multi-source/platform"));
    dirs.push(repo.join("tests/conformance/windsor-core-75d2a6c1/contexts/_template"));
    dirs.into_iter()
        .filter(|d| d.is_dir())
        .map(|d| {
            let mut files = BTreeMap::new();
            read_tree(&d, &d, &mut files);
            Template {
                name: d
                    .strip_prefix(repo)
                    .unwrap_or(&d)
                    .to_string_lossy()
                    .to_string(),
                files,
            }
        })
        .collect()
}

/// Expressions of the conformance cases and the corpus benchmark, with their mode.
fn expressions(repo: &Path) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for file in [
        "tests/conformance/expr/cases.jsonl",
        "benches/corpus-expressions.jsonl",
    ] {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        for line in text.lines() {
            let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(input) = j.get("input").and_then(|i| i.as_str()) {
                let template = j.get("mode").and_then(|m| m.as_str()) == Some("tmpl");
                out.push((template, input.to_string()));
            }
        }
    }
    out
}

fn scope(repo: &Path) -> Map {
    let text = std::fs::read_to_string(repo.join("tests/conformance/expr/envs.json"))
        .unwrap_or_else(|_| "{}".into());
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    match json
        .get("basic")
        .map(|j| bpc::value::json::from_json(j, bpc::value::json::FromJson::Tagged))
    {
        Some(Value::Map(m)) => (*m).clone(),
        _ => Map::default(),
    }
}

/// What one run feeds the tool.
#[derive(Clone, Debug)]
enum Input {
    Expr {
        template: bool,
        text: String,
    },
    Yaml(String),
    Template {
        index: usize,
        file: String,
        text: String,
    },
    /// A mutated template file, rendered (surface `render`).
    Render {
        index: usize,
        file: String,
        text: String,
    },
    /// `--set` pairs, one a line (surface `set`).
    Set(String),
    /// A template archive (surface `tar`): its bytes, and what was done to it.
    Tar {
        bytes: Vec<u8>,
        summary: String,
    },
    /// JSON-RPC frames for the language server (surface `lsp`).
    Lsp(String),
    /// What the registry stand-in answers, for one pull (surface `oci`), and the run's
    /// number (which decides the error body's length and whether the cache is used).
    Oci(String, u64),
}

impl Input {
    fn text(&self) -> &str {
        match self {
            Input::Expr { text, .. }
            | Input::Yaml(text)
            | Input::Template { text, .. }
            | Input::Render { text, .. }
            | Input::Set(text)
            | Input::Lsp(text)
            | Input::Oci(text, _) => text,
            Input::Tar { summary, .. } => summary,
        }
    }

    fn with_text(&self, text: String) -> Input {
        match self {
            Input::Expr { template, .. } => Input::Expr {
                template: *template,
                text,
            },
            Input::Yaml(_) => Input::Yaml(text),
            Input::Lsp(_) => Input::Lsp(text),
            Input::Oci(_, run) => Input::Oci(text, *run),
            Input::Template { index, file, .. } => Input::Template {
                index: *index,
                file: file.clone(),
                text,
            },
            Input::Render { index, file, .. } => Input::Render {
                index: *index,
                file: file.clone(),
                text,
            },
            Input::Set(_) => Input::Set(text),
            // Archives are not shrunk: `--seed S --only RUN` rebuilds the same bytes.
            Input::Tar { .. } => self.clone(),
        }
    }
}

/// Which inputs a run generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Surface {
    Mixed,
    Yaml,
    Render,
    Set,
    Deep,
    Tar,
    Lsp,
    Oci,
}

/// What `render --check` is pointed at: a tree of hostile entries, and the secret a
/// link in it leads to, which must never appear in a diff.
struct Hostile {
    tree: PathBuf,
    /// Scratch space for the renders that are written.
    scratch: PathBuf,
    /// Where the `tar` surface puts each archive.
    archive: PathBuf,
    _keep: Option<tempfile::TempDir>,
}

const SECRET: &str = "FUZZ-SECRET-TOKEN-5a1d";

impl Hostile {
    fn new() -> Hostile {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_path_buf();
        let secret = root.join("secret.txt");
        std::fs::write(&secret, format!("{SECRET}\n")).expect("secret");
        let tree = root.join("hostile");
        let tf = tree.join("terraform/net");
        std::fs::create_dir_all(&tf).expect("mkdir");
        std::fs::write(tree.join(".bpc-render"), "").expect("marker");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            let _ = symlink(&secret, tf.join("terraform.tfvars.json"));
            let _ = symlink(&secret, tree.join("kustomization.yaml"));
            let _ = symlink("/dev/zero", tree.join("zero"));
            let _ = symlink("/", tree.join("root-link"));
            let _ = symlink("self-loop", tree.join("self-loop"));
            let _ = std::process::Command::new("mkfifo")
                .arg(tree.join("pipe"))
                .status();
        }
        if let Ok(big) = std::fs::File::create(tree.join("big.yaml")) {
            let _ = big.set_len(bpc::render::write::MAX_CHECKED_FILE + 1);
        }
        let mut deep = tree.join("deep");
        for _ in 0..100 {
            deep = deep.join("d");
        }
        let _ = std::fs::create_dir_all(&deep);
        let scratch = root.join("scratch");
        std::fs::create_dir_all(&scratch).expect("scratch");
        Hostile {
            tree,
            scratch,
            archive: root.join("template.tar.gz"),
            _keep: Some(dir),
        }
    }
}

/// Expressions that build deep or large values; `NUM` is replaced by a size.
const DEEP: &[&str] = &[
    "reduce(1..NUM, [#acc], 1)",
    "reduce(1..NUM, {'a': #acc}, 1)",
    "reduce(1..NUM, [#acc, #acc], 1)",
    "reduce(1..NUM, #acc + [#acc], [])",
    "reduce(1..NUM, {'k' + string(#): #acc}, {})",
    "map(1..NUM, 1..NUM)",
    "map(1..NUM, map(1..NUM, [#]))",
    "toJSON(reduce(1..NUM, [#acc], 1))",
    "len(toJSON(reduce(1..NUM, [#acc, #acc], 1)))",
    "fromJSON(repeat('[', NUM) + repeat(']', NUM))",
    "fromJSON(repeat('{\"a\":', NUM) + '1' + repeat('}', NUM))",
    "reduce(1..NUM, #acc + 'xxxxxxxxxxxxxxxx', '')",
    "let v = reduce(1..NUM, [#acc], 1); v == v",
    "let v = reduce(1..NUM, [#acc], 1); [v, v, v]",
    "reduce(1..NUM, [#acc], 1)[0][0][0]",
    "flatten(reduce(1..NUM, [#acc], 1))",
    "sort(map(1..NUM, -#))",
    "toYAML(reduce(1..NUM, {'a': [#acc]}, 1))",
    "keys(reduce(1..NUM, {'a': #acc}, {}))",
];

const SIZES: &[&str] = &[
    "1", "2", "10", "100", "255", "256", "257", "300", "1000", "40000", "100000", "1000000",
];

/// Pieces of `--set` keys and values.
const SET_SEGMENTS: &[&str] = &[
    "a",
    "b",
    "hosts",
    "cluster",
    "workers",
    "count",
    "x",
    "é",
    "\u{0}",
    "",
    "a[0]",
    "a[1]",
    "a[3]",
    "a[65536]",
    "a[65537]",
    "a[99999999999999999999]",
    "a[-1]",
    "a[x]",
    "a[",
    "a]",
    "[0]",
    "a[0][0]",
    "a[0][1][2]",
    "a[]",
    "a[ 1]",
    "${x}",
    "a=b",
];

const SET_VALUES: &[&str] = &[
    "1",
    "x",
    "[1, 2]",
    "{a: 1}",
    "",
    "null",
    "&a [*a, *a]",
    "${x}",
    "- - - 1",
    "'",
    "{",
    "!custom 3",
    "!!binary aGk=",
    "true",
    "1e309",
    "\u{0}",
];

struct Corpus {
    templates: Vec<Template>,
    expressions: Vec<(bool, String)>,
    donors: Vec<String>,
    scope: Map,
    engine: Engine,
    limits: Limits,
    /// `BPC_FUZZ_PANIC_ON=TEXT`: panic on inputs containing TEXT, to check that the
    /// driver catches, shrinks and reports a failure.
    panic_on: Option<String>,
    surface: Surface,
    hostile: Hostile,
    /// Renders written so far (every 500th successful render is written).
    renders: AtomicU64,
}

impl Corpus {
    fn input(&self, seed: u64, run: u64) -> Input {
        let mut rng = Rng::for_run(seed, run);
        match self.surface {
            Surface::Mixed => {}
            Surface::Render => return self.render_input(&mut rng),
            Surface::Set => return set_input(&mut rng, &self.donors),
            Surface::Deep => return self.deep_input(&mut rng),
            Surface::Tar => return self.tar_input(&mut rng),
            Surface::Oci => return Input::Oci(fuzz_oci::stand_in().input(&mut rng), run),
            Surface::Lsp => {
                let rig = fuzz_lsp::rig(&self.templates[0].files);
                return Input::Lsp(rig.input(&mut rng, &self.donors));
            }
            Surface::Yaml => {
                let original = rng.pick(&self.donors).clone();
                return Input::Yaml(mutate(&mut rng, &original, &self.donors));
            }
        }
        let roll = rng.below(100);
        if roll < 3 && !self.templates.is_empty() {
            let index = rng.below(self.templates.len());
            let files: Vec<&String> = self.templates[index]
                .files
                .keys()
                .filter(|k| k.ends_with(".yaml") || k.ends_with(".jsonnet"))
                .collect();
            let file = rng.pick(&files).to_string();
            let original = String::from_utf8_lossy(&self.templates[index].files[&file]).to_string();
            Input::Template {
                index,
                text: mutate(&mut rng, &original, &self.donors),
                file,
            }
        } else if roll < 10 && !self.donors.is_empty() {
            let original = rng.pick(&self.donors).clone();
            Input::Yaml(mutate(&mut rng, &original, &self.donors))
        } else {
            let (template, original) = rng.pick(&self.expressions).clone();
            let exprs: Vec<String> = self
                .expressions
                .iter()
                .take(64)
                .map(|e| e.1.clone())
                .collect();
            Input::Expr {
                template,
                text: mutate(&mut rng, &original, &exprs),
            }
        }
    }

    /// A template file mutated, to render. Small templates more often than the large
    /// conformance one, so a run covers more inputs.
    fn render_input(&self, rng: &mut Rng) -> Input {
        let index = if rng.below(8) == 0 {
            rng.below(self.templates.len())
        } else {
            rng.below(self.templates.len().saturating_sub(1).max(1))
        };
        let files: Vec<&String> = self.templates[index]
            .files
            .keys()
            .filter(|k| k.ends_with(".yaml"))
            .collect();
        let file = rng.pick(&files).to_string();
        let original = String::from_utf8_lossy(&self.templates[index].files[&file]).to_string();
        let text = if rng.below(10) == 0 {
            original
        } else {
            mutate(rng, &original, &self.donors)
        };
        Input::Render { index, file, text }
    }

    /// An expression that builds a deep or large value, sometimes mutated.
    fn deep_input(&self, rng: &mut Rng) -> Input {
        let size = if rng.below(4) == 0 {
            (rng.below(300_000)).to_string()
        } else {
            (*rng.pick(SIZES)).to_string()
        };
        let mut text = rng.pick(DEEP).replace("NUM", &size);
        if rng.below(3) == 0 {
            let other = {
                let size = *rng.pick(SIZES);
                rng.pick(DEEP).replace("NUM", size)
            };
            text = format!("[{text}, {other}]");
        }
        if rng.below(2) == 0 {
            text = mutate(rng, &text, &[]);
        }
        Input::Expr {
            template: false,
            text,
        }
    }

    /// A template archive: one of the templates, with some entries duplicated, renamed
    /// to unsafe paths, turned into links or directories, given lying sizes, or the
    /// compressed bytes damaged.
    fn tar_input(&self, rng: &mut Rng) -> Input {
        let index = rng.below(self.templates.len());
        let template = &self.templates[index];
        let mut summary = format!("archive of {}", template.name);
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let names: Vec<&String> = template.files.keys().collect();
        for (name, data) in &template.files {
            let mut name = name.clone();
            let mut data = data.clone();
            let mut kind = tar::EntryType::Regular;
            let mut times = 1;
            match rng.below(40) {
                0 => times = 2,
                1 => name = format!("../{name}"),
                2 => name = format!("/{name}"),
                3 => kind = tar::EntryType::Symlink,
                4 => kind = tar::EntryType::Directory,
                5 => name = format!("./x/../{name}"),
                6 => name = rng.pick(&names).to_string(),
                7 => data = mutate(rng, &String::from_utf8_lossy(&data), &self.donors).into_bytes(),
                8 => name = "a/".repeat(60) + &name,
                9 => kind = tar::EntryType::Char,
                _ => {}
            }
            if times > 1 || !matches!(kind, tar::EntryType::Regular) || name.contains("..") {
                summary.push_str(&format!("; {name} as {kind:?} x{times}"));
            }
            for _ in 0..times {
                let mut header = tar::Header::new_gnu();
                header.set_entry_type(kind);
                header.set_size(data.len() as u64);
                header.set_mode(0o644);
                // Written raw: `set_path` refuses the unsafe names this wants.
                let raw = header.as_old_mut().name.as_mut();
                let bytes = name.as_bytes();
                let n = bytes.len().min(raw.len());
                raw[..n].copy_from_slice(&bytes[..n]);
                if kind == tar::EntryType::Symlink {
                    let _ = header.set_link_name("/etc/passwd");
                }
                header.set_cksum();
                let _ = builder.append(&header, data.as_slice());
            }
        }
        let mut bytes = builder
            .into_inner()
            .and_then(|gz| gz.finish())
            .unwrap_or_default();
        match rng.below(10) {
            0 if !bytes.is_empty() => {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
                summary.push_str(&format!("; bit flipped at byte {at}"));
            }
            1 => {
                let keep = rng.below(bytes.len() + 1);
                bytes.truncate(keep);
                summary.push_str(&format!("; truncated to {keep} bytes"));
            }
            _ => {}
        }
        Input::Tar { bytes, summary }
    }

    /// Runs one input; errors are fine, only panics (and budgets) are failures.
    fn run(&self, input: &Input) {
        if let Some(trigger) = &self.panic_on {
            if input.text().contains(trigger.as_str()) {
                panic!("planted failure");
            }
        }
        match input {
            Input::Expr { template, text } => {
                let host = NullHost {
                    terraform: TerraformOutputs::Deferred,
                };
                let value = if *template {
                    self.engine.render_template(text, &self.scope, &host).ok()
                } else {
                    self.engine.eval(text, &self.scope, &host).ok()
                };
                // Whatever an expression built is written, compared and dropped as
                // compose would (the output budget checked first, as the writers do).
                if let Some(value) = value {
                    write_value(&value, self.limits.output_bytes);
                }
            }
            Input::Yaml(text) => {
                let sources = FileMap::new();
                let file = sources.add("fuzz.yaml".to_string(), text.clone());
                let parsed = bpc::yaml::parse_with_warnings(text, file);
                // The fast front end reads the common shapes and hands the rest to the
                // full loader: whatever it reads must come out as the full loader reads
                // it (values, styles, spans, warnings), errors included.
                let full = bpc::yaml::parse_full(text, file);
                let same = match (&parsed, &full) {
                    (Ok(a), Ok(b)) => format!("{a:?}") == format!("{b:?}"),
                    (Err(a), Err(b)) => a == b,
                    _ => false,
                };
                assert!(
                    same,
                    "the fast YAML front end and the full loader disagree: {parsed:?} against {full:?}"
                );
                if bpc::yaml::parse_fast(text, file).is_some() {
                    YAML_FAST.fetch_add(1, Ordering::Relaxed);
                }
                if let Ok((node, _)) = parsed {
                    YAML_LOADED.fetch_add(1, Ordering::Relaxed);
                    let value = node.to_value();
                    let _ = bpc::emit::to_yaml(&value);
                }
            }
            Input::Template { index, file, text } => self.run_template(*index, file, text),
            Input::Render { index, file, text } => self.run_render(*index, file, text),
            Input::Set(pairs) => self.run_set(pairs),
            Input::Tar { bytes, .. } => self.run_tar(bytes),
            Input::Lsp(stream) => fuzz_lsp::rig(&self.templates[0].files).run(stream),
            Input::Oci(text, run) => fuzz_oci::stand_in().run(text, *run),
        }
    }

    fn session(&self, tree: FileTree, set: Vec<String>) -> Option<bpc::session::Session> {
        let sources = Arc::new(FileMap::new());
        let mut options = bpc::session::Options::at("/fuzz");
        options.locate.context = Some("fuzz".into());
        options.locate.set = set;
        options.environment = Environment::Fixed(Default::default());
        options.limits = self.limits;
        bpc::session::Session::of_template(tree, "/fuzz", options, sources).ok()
    }

    fn run_render(&self, index: usize, file: &str, text: &str) {
        let template = &self.templates[index];
        let mut files = template.files.clone();
        files.insert(file.to_string(), text.as_bytes().to_vec());
        let Ok(tree) = FileTree::from_files(files, &template.name) else {
            return;
        };
        let Some(session) = self.session(tree, Vec::new()) else {
            return;
        };
        let Ok(composition) = session.compose() else {
            return;
        };
        let format = if text.len() % 2 == 0 {
            bpc::render::ManifestFormat::Yaml
        } else {
            bpc::render::ManifestFormat::Json
        };
        let Ok(rendered) = session.render_composition(composition, format) else {
            return;
        };
        for path in rendered.files.keys() {
            let confined = !path.is_empty()
                && !path.starts_with('/')
                && !path.contains('\\')
                && !path.contains('\0')
                && path
                    .split('/')
                    .all(|c| !c.is_empty() && c != "." && c != "..");
            if !confined {
                panic!("render produced the path {path:?}, outside its output root");
            }
        }
        if let Ok(diff) = bpc::render::write::check(&self.hostile.tree, &rendered) {
            if diff.contains(SECRET) {
                panic!("render --check printed what a link in the checked tree points to");
            }
        }
        if self.renders.fetch_add(1, Ordering::SeqCst) % 500 == 0 {
            let out = self.hostile.scratch.join("out");
            if bpc::render::write::write_tree(&out, &rendered, true).is_ok() {
                let entries: Vec<String> = std::fs::read_dir(&self.hostile.scratch)
                    .map(|d| {
                        d.flatten()
                            .map(|e| e.file_name().to_string_lossy().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                if entries != ["out"] {
                    panic!("after a render the scratch directory holds {entries:?}");
                }
                if bpc::render::write::check(&out, &rendered).map_or(true, |d| !d.is_empty()) {
                    panic!("a written render does not check as up to date");
                }
            }
        }
    }

    fn run_set(&self, pairs: &str) {
        let set: Vec<String> = pairs.lines().map(str::to_string).collect();
        let template = &self.templates[0];
        let Ok(tree) = FileTree::from_files(template.files.clone(), &template.name) else {
            return;
        };
        let Some(session) = self.session(tree, set) else {
            return;
        };
        // The values as `bpc show values` prints them, within the output budget.
        let _ = session.values_text(bpc::emit::Format::Json);
        let _ = session.values_text(bpc::emit::Format::Yaml);
        // Now and then the whole composition over those values.
        if pairs.len() % 16 == 0 {
            if let Ok(composition) = session.compose() {
                write_value(&composition.blueprint, self.limits.output_bytes);
            }
        }
    }

    fn run_tar(&self, bytes: &[u8]) {
        // Through a file, as `--template FILE.tar.gz` reads it.
        if std::fs::write(&self.hostile.archive, bytes).is_err() {
            return;
        }
        let Ok(tree) = FileTree::open(&self.hostile.archive) else {
            return;
        };
        let Some(session) = self.session(tree, Vec::new()) else {
            return;
        };
        if let Ok(composition) = session.compose() {
            write_value(&composition.blueprint, self.limits.output_bytes);
        }
    }

    fn run_template(&self, index: usize, file: &str, text: &str) {
        let template = &self.templates[index];
        let mut files = template.files.clone();
        files.insert(file.to_string(), text.as_bytes().to_vec());
        let Ok(tree) = FileTree::from_files(files, &template.name) else {
            return;
        };
        let sources = Arc::new(FileMap::new());
        let mut options = bpc::session::Options::at("/fuzz");
        options.locate.context = Some("fuzz".into());
        options.environment = Environment::Fixed(Default::default());
        options.limits = self.limits;
        let Ok(session) =
            bpc::session::Session::of_template(tree, "/fuzz", options, sources.clone())
        else {
            return;
        };
        let loaded = &session.template;
        if let Ok(composition) = session.compose() {
            let _ = bpc::emit::to_yaml(&composition.blueprint);
            let explainer = bpc::explain::Explainer {
                template: loaded,
                composition: &composition,
                files: &sources,
            };
            let _ = explainer.explain("terraform");
            let _ = explainer.explain("kustomize");
            if let Some(facet) = loaded.facets.first() {
                let _ = explainer.facet(&facet.name);
            }
        }
        // `bpc test`: the first case of each test file.
        let suite = session.runner(bpc::testing::runner::RunOptions {
            limits: self.limits,
            ..Default::default()
        });
        for path in bpc::testing::case::discover(&loaded.tree).iter().take(2) {
            if let Ok((test_file, _)) = bpc::testing::case::load(&loaded.tree, &sources, path) {
                if let Some(case) = test_file.cases.first() {
                    let _ = suite.run_case(case);
                }
            }
        }
    }
}

/// Writes `value` as both writers would, after the output budget's check (a value
/// over it is refused, as the commands refuse it), and compares it with itself.
fn write_value(value: &Value, budget: usize) {
    if bpc::compose::model::budget::check_text(value, budget, "the value").is_err() {
        return;
    }
    let _ = bpc::emit::to_json(value);
    let _ = bpc::emit::to_yaml(value);
    let copy = value.clone();
    if !copy.equals(value, bpc::value::Equality::SAME_DOCUMENT) {
        panic!("a value differs from its own copy");
    }
}

/// Random `--set` pairs, one a line: key paths of a few segments (now and then tens
/// of thousands), with list indexes, and values from YAML fragments.
fn set_input(rng: &mut Rng, donors: &[String]) -> Input {
    let mut lines = Vec::new();
    for _ in 0..1 + rng.below(4) {
        let segments = match rng.below(20) {
            0 => 200 + rng.below(40_000),
            1 => 250 + rng.below(10),
            _ => 1 + rng.below(6),
        };
        let mut key = String::new();
        for i in 0..segments {
            if i > 0 {
                key.push('.');
            }
            let segment = if segments > 100 && rng.below(4) != 0 {
                "a"
            } else {
                *rng.pick(SET_SEGMENTS)
            };
            key.push_str(segment);
        }
        let value = if rng.below(4) == 0 && !donors.is_empty() {
            let donor: Vec<char> = rng.pick(donors).chars().collect();
            let from = rng.below(donor.len());
            let end = (from + 1 + rng.below(64)).min(donor.len());
            donor[from..end]
                .iter()
                .collect::<String>()
                .replace('\n', " ")
        } else {
            (*rng.pick(SET_VALUES)).to_string()
        };
        match rng.below(12) {
            0 => lines.push(key),
            _ => lines.push(format!("{key}={value}")),
        }
    }
    let text = lines.join("\n");
    Input::Set(if rng.below(3) == 0 {
        mutate(rng, &text, &[])
    } else {
        text
    })
}

/// Shrinks a panicking input: removes chunks, halving their size, while it still panics.
fn shrink(corpus: &Corpus, input: &Input) -> Input {
    let panics = |candidate: &Input| {
        std::panic::catch_unwind(AssertUnwindSafe(|| corpus.run(candidate))).is_err()
    };
    let mut best = input.clone();
    let mut chunk = best.text().chars().count() / 2;
    let mut attempts = 0;
    while chunk > 0 && attempts < 4000 {
        let chars: Vec<char> = best.text().chars().collect();
        let mut at = 0;
        let mut shrunk = false;
        while at < chars.len() && attempts < 4000 {
            attempts += 1;
            let end = (at + chunk).min(chars.len());
            let text: String = chars[..at].iter().chain(&chars[end..]).collect();
            let candidate = best.with_text(text);
            if panics(&candidate) {
                best = candidate;
                shrunk = true;
                break;
            }
            at += chunk;
        }
        if !shrunk {
            chunk /= 2;
        }
    }
    best
}

fn report(kind: &str, seed: u64, run: u64, input: &Input) {
    eprintln!("FAIL: {kind} at --seed {seed} --only {run}");
    match input {
        Input::Expr { template, text } => {
            let flag = if *template { "--text " } else { "" };
            eprintln!("reproduce: bpc eval {flag}{text:?}");
        }
        Input::Yaml(text) => eprintln!("YAML input:\n{text}"),
        Input::Template { index, file, text } | Input::Render { index, file, text } => {
            eprintln!("template input #{index}, file {file}:\n{text}");
        }
        Input::Set(pairs) => {
            eprintln!("--set pairs, one a line:");
            for line in pairs.lines() {
                let shown: String = line.chars().take(400).collect();
                eprintln!(
                    "  {shown:?}{}",
                    if line.len() > 400 { " (cut)" } else { "" }
                );
            }
        }
        Input::Tar { summary, bytes } => eprintln!("{} byte archive: {summary}", bytes.len()),
        Input::Lsp(stream) => eprintln!("language server frames:\n{stream:?}"),
        Input::Oci(text, _) => eprintln!("registry stand-in choices and manifest:\n{text}"),
    }
}

struct Options {
    runs: u64,
    seed: u64,
    only: Option<u64>,
    time: Duration,
    memory: usize,
    surface: Surface,
}

fn options() -> Options {
    let mut o = Options {
        runs: 10_000,
        seed: 1,
        only: None,
        time: Duration::from_secs(5),
        memory: 2048 << 20,
        surface: Surface::Mixed,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
        if args[i] == "--surface" {
            o.surface = match args.get(i + 1).map(String::as_str) {
                Some("mixed") => Surface::Mixed,
                Some("render") => Surface::Render,
                Some("set") => Surface::Set,
                Some("deep") => Surface::Deep,
                Some("tar") => Surface::Tar,
                Some("yaml") => Surface::Yaml,
                Some("lsp") => Surface::Lsp,
                Some("oci") => Surface::Oci,
                other => {
                    eprintln!(
                        "--surface takes mixed, yaml, render, set, deep, tar, lsp or oci, not {other:?}"
                    );
                    std::process::exit(2);
                }
            };
            i += 2;
            continue;
        }
        match (args[i].as_str(), value) {
            ("--runs", Some(v)) => o.runs = v,
            ("--seed", Some(v)) => o.seed = v,
            ("--only", Some(v)) => o.only = Some(v),
            ("--time-ms", Some(v)) => o.time = Duration::from_millis(v),
            ("--memory-mib", Some(v)) => o.memory = (v as usize) << 20,
            (flag, _) => {
                eprintln!("unknown or incomplete option {flag}; see the file's header");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    o
}

fn main() {
    let o = options();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let templates = templates(&repo);
    let donors: Vec<String> = templates
        .iter()
        .flat_map(|t| t.files.iter())
        .filter(|(k, _)| k.ends_with(".yaml"))
        .map(|(_, v)| String::from_utf8_lossy(v).to_string())
        .collect();
    let corpus = Arc::new(Corpus {
        templates,
        expressions: expressions(&repo),
        donors,
        scope: scope(&repo),
        engine: Engine::new(EngineConfig {
            terraform_output: true,
            ..EngineConfig::default()
        }),
        limits: Limits {
            jsonnet: JsonnetLimits {
                timeout: Duration::from_secs(2),
                memory: 256 << 20,
            },
            ..Limits::default()
        },
        panic_on: std::env::var("BPC_FUZZ_PANIC_ON").ok(),
        surface: o.surface,
        hostile: Hostile::new(),
        renders: AtomicU64::new(0),
    });
    eprintln!(
        "fuzz: {} templates, {} expressions, seed {}, {} runs, surface {:?}",
        corpus.templates.len(),
        corpus.expressions.len(),
        o.seed,
        o.runs,
        o.surface
    );

    // The watchdog sees which run is going and since when; it reports a run over the
    // time budget, or one the allocator stopped for memory, and ends the process.
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let started = Arc::new(Mutex::new(Instant::now()));
    let meter = Arc::new(bpc::alloc::Meter::new(o.memory));
    {
        let (current, started, meter, corpus) = (
            Arc::clone(&current),
            Arc::clone(&started),
            Arc::clone(&meter),
            Arc::clone(&corpus),
        );
        let (seed, time) = (o.seed, o.time);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(50));
            let run = current.load(Ordering::SeqCst);
            if run == u64::MAX {
                continue;
            }
            let elapsed = started.lock().map(|s| s.elapsed()).unwrap_or_default();
            let kind = if meter.over_budget() {
                "memory budget exceeded"
            } else if elapsed > time {
                "time budget exceeded"
            } else {
                continue;
            };
            report(kind, seed, run, &corpus.input(seed, run));
            std::process::exit(1);
        });
    }

    std::panic::set_hook(Box::new(|_| {}));
    let begin = Instant::now();
    let (first, last) = match o.only {
        Some(run) => (run, run + 1),
        None => (0, o.runs),
    };
    let mut slowest = Duration::ZERO;
    let mut done = 0u64;
    for run in first..last {
        let input = corpus.input(o.seed, run);
        if let Ok(mut s) = started.lock() {
            *s = Instant::now();
        }
        current.store(run, Ordering::SeqCst);
        let t = Instant::now();
        let result = {
            let _metered = bpc::alloc::attach(&meter);
            std::panic::catch_unwind(AssertUnwindSafe(|| corpus.run(&input)))
        };
        slowest = slowest.max(t.elapsed());
        current.store(u64::MAX, Ordering::SeqCst);
        if result.is_err() {
            let small = shrink(&corpus, &input);
            report("panic", o.seed, run, &small);
            std::process::exit(1);
        }
        done += 1;
        // Any failure ends the process, so each progress line also says "none so far".
        if done % 10_000 == 0 {
            eprintln!(
                "fuzz: surface {:?}, {done} runs, 0 panics, 0 over budget so far; {:.1} s, slowest input {} ms, peak metered memory {} MiB",
                o.surface,
                begin.elapsed().as_secs_f64(),
                slowest.as_millis(),
                meter.peak() >> 20
            );
        }
    }
    println!(
        "fuzz: surface {:?}, {done} inputs, 0 panics, 0 over budget; {:.1} s, slowest input {} ms, peak metered memory {} MiB",
        o.surface,
        begin.elapsed().as_secs_f64(),
        slowest.as_millis(),
        meter.peak() >> 20
    );
    let loaded = YAML_LOADED.load(Ordering::Relaxed);
    if loaded > 0 {
        println!(
            "fuzz: {loaded} YAML inputs loaded, {} of them read by the fast front end",
            YAML_FAST.load(Ordering::Relaxed)
        );
    }
}
