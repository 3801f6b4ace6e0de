//! In-process fuzz driver (issue 14): mutates the repository's own templates and
//! expressions and runs them through compose, explain, test and eval, failing on any
//! panic, any input over the time budget and any input over the memory budget.
//!
//! `cargo run --release --example fuzz -- --runs N --seed S [--time-ms T] [--memory-mib M]`
//!
//! Every input is derived from (seed, run number) alone, so a failure is reproduced by
//! `--seed S --only RUN`. On a panic the input is shrunk (chunks removed while it still
//! panics) and printed; on a time or memory overrun a watchdog prints the input as it
//! was and exits, since the stuck run cannot be resumed.

use bpc::compose::host::Environment;
use bpc::compose::Limits;
use bpc::expr::host::{JsonnetLimits, NullHost, TerraformOutputs};
use bpc::expr::{Engine, EngineConfig, Map, Value};
use bpc::files::{FileMap, FileTree};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
}

impl Input {
    fn text(&self) -> &str {
        match self {
            Input::Expr { text, .. } | Input::Yaml(text) | Input::Template { text, .. } => text,
        }
    }

    fn with_text(&self, text: String) -> Input {
        match self {
            Input::Expr { template, .. } => Input::Expr {
                template: *template,
                text,
            },
            Input::Yaml(_) => Input::Yaml(text),
            Input::Template { index, file, .. } => Input::Template {
                index: *index,
                file: file.clone(),
                text,
            },
        }
    }
}

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
}

impl Corpus {
    fn input(&self, seed: u64, run: u64) -> Input {
        let mut rng = Rng::for_run(seed, run);
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
                if *template {
                    let _ = self.engine.render_template(text, &self.scope, &host);
                } else {
                    let _ = self.engine.eval(text, &self.scope, &host);
                }
            }
            Input::Yaml(text) => {
                let sources = FileMap::new();
                let file = sources.add("fuzz.yaml".to_string(), text.clone());
                if let Ok(node) = bpc::yaml::parse(text, file) {
                    let value = node.to_value();
                    let _ = bpc::emit::to_yaml(&value);
                }
            }
            Input::Template { index, file, text } => self.run_template(*index, file, text),
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
                sources: &sources,
            };
            let _ = explainer.explain("terraform");
            let _ = explainer.explain("kustomize");
            if let Some(facet) = loaded.facets.first() {
                let _ = explainer.facet(&facet.name);
            }
        }
        // `bpc test`: the first case of each test file.
        let suite = session.suite(bpc::testing::runner::RunOptions {
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
        Input::Template { index, file, text } => {
            eprintln!("template input #{index}, file {file}:\n{text}");
        }
    }
}

struct Options {
    runs: u64,
    seed: u64,
    only: Option<u64>,
    time: Duration,
    memory: usize,
}

fn options() -> Options {
    let mut o = Options {
        runs: 10_000,
        seed: 1,
        only: None,
        time: Duration::from_secs(5),
        memory: 2048 << 20,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
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
    });
    eprintln!(
        "fuzz: {} templates, {} expressions, seed {}, {} runs",
        corpus.templates.len(),
        corpus.expressions.len(),
        o.seed,
        o.runs
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
        if done % 100_000 == 0 {
            eprintln!("fuzz: {done} runs, {:.1} s", begin.elapsed().as_secs_f64());
        }
    }
    println!(
        "fuzz: {done} inputs, 0 panics, 0 over budget; {:.1} s, slowest input {} ms, peak metered memory {} MiB",
        begin.elapsed().as_secs_f64(),
        slowest.as_millis(),
        meter.peak() >> 20
    );
}
