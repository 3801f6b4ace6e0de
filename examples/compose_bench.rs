//! Compose at scale: synthetic templates from `bench/gen-template.py` (100, 1 000,
//! 10 000 facets by default) and the windsor-core corpus, timed against just reading
//! and parsing the same YAML files.
//!
//! `cargo run --release --example compose_bench [-- --sizes 100,1000,10000 --runs 5]`
//!
//! Each size runs in its own child process so its peak memory (VmHWM) is its own.
//! Prints one TSV row per template: name, facets, parse ms (bpc's loader: the fast
//! front end), saphyr parse ms (the full loader alone, on saphyr-parser's events, as
//! before the fast front end), their ratio, compose ms, compose ÷ parse, compose ÷ saphyr parse,
//! peak MiB — then the growth ratio between consecutive sizes. Times are the fastest
//! of the runs: on a shared machine noise only ever adds time. Run it under
//! `taskset -c 0` to compare compose and parse on one core each (compose parses on
//! every core it is given).
//!
//! `--chain 1000,10000` instead measures activation chains: facet i's `when`
//! reads the config block of facet i-1, so each round of activation switches on one
//! more facet.
//!
//! `--graph 1000,10000` measures a dependency-heavy template: facet i's
//! terraform component and kustomization each depend on one that sorts after every
//! facet's own (so putting the lists in dependency order moves every item), and the
//! second half of the facets each delete, by identity alone, a component the first
//! half created. `--out DIR` keeps the generated templates there (to `--measure` them
//! with another binary).
//!
//! `--measure DIR [--values FILE] --only parse|saphyr|compose` runs one side alone, for
//! counting instructions under `valgrind --tool=callgrind` (repeatable where wall time
//! is not). With `--once` the compose side composes as `bpc compose` does: one context
//! once, facets certainly inactive there left hollow at load (`template::prune`).

use bpc::compose::model::inputs::Environment;
use bpc::files::{FileMap, FileTree};
use bpc::session::{OneShot, Options, Session};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

fn fastest(xs: Vec<f64>) -> f64 {
    xs.into_iter().fold(f64::INFINITY, f64::min)
}

fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}

/// Child: measure one template (`template_dir`, optional values file).
fn measure(
    name: &str,
    template_dir: &Path,
    values: Option<&Path>,
    runs: usize,
    only: &str,
    once: bool,
) {
    let mut files = Vec::new();
    yaml_files(&template_dir.join("facets"), &mut files);
    for f in ["blueprint.yaml", "schema.yaml"] {
        files.push(template_dir.join(f));
    }
    files.extend(values.map(Path::to_path_buf));
    let facets = files
        .iter()
        .filter(|f| f.to_string_lossy().contains("/facets/"))
        .count();

    let runs_of = |side: &str| {
        if only.is_empty() || only == side {
            runs
        } else {
            0
        }
    };
    // The bare parse, one file after another on one core: with bpc's loader (the fast
    // front end, the full loader where it hands over), and with the full loader alone
    // (saphyr-parser's events, the loader before the fast front end). Both sides alternate run by
    // run, so load on the machine falls on both alike.
    let bare = |full: bool| {
        let start = Instant::now();
        let sources = FileMap::new();
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            let id = sources.add(f.to_string_lossy().to_string(), text);
            if let Some(text) = sources.text(id) {
                if full {
                    let _ = std::hint::black_box(bpc::yaml::parse_full(&text, id));
                } else {
                    let _ = std::hint::black_box(bpc::yaml::parse(&text, id));
                }
            }
        }
        start.elapsed().as_secs_f64() * 1000.0
    };
    let (mut parse_ms, mut saphyr_ms) = (Vec::new(), Vec::new());
    for _ in 0..runs_of("parse").max(runs_of("saphyr")) {
        if runs_of("parse") > 0 {
            parse_ms.push(bare(false));
        }
        if runs_of("saphyr") > 0 {
            saphyr_ms.push(bare(true));
        }
    }

    let mut options = Options::at(template_dir);
    options.locate.context = Some("bench".into());
    options.locate.values = values.map(Path::to_path_buf).into_iter().collect();
    options.environment = Environment::Fixed(Default::default());
    let compose_ms: Vec<f64> = (0..runs_of("compose"))
        .map(|_| {
            let start = Instant::now();
            let sources = Arc::new(FileMap::new());
            let tree = FileTree::open(template_dir).expect("template");
            let options = options.clone();
            // The session lives as long as the composition, as in a run of `bpc`.
            let (one_shot, session);
            let composed = match once {
                true => {
                    one_shot = OneShot::of_template(tree, template_dir, options, sources)
                        .expect("template loads");
                    one_shot.compose()
                }
                false => {
                    session = Session::of_template(tree, template_dir, options, sources)
                        .expect("template loads");
                    session.compose()
                }
            };
            if let Err(e) = &composed {
                eprintln!(
                    "{name}: compose failed: {}",
                    e.first().map(|d| d.message.as_str()).unwrap_or("?")
                );
                std::process::exit(1);
            }
            std::hint::black_box(&composed);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let (p, f, c) = (fastest(parse_ms), fastest(saphyr_ms), fastest(compose_ms));
    println!(
        "{name}\t{facets}\t{p:.2}\t{f:.2}\t{:.2}\t{c:.2}\t{:.2}\t{:.2}\t{:.1}",
        f / p,
        c / p,
        c / f,
        peak_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs: usize = flag("--runs").and_then(|r| r.parse().ok()).unwrap_or(5);
    if let Some(dir) = flag("--measure") {
        let values = flag("--values").map(PathBuf::from);
        let name = flag("--name").unwrap_or_else(|| dir.clone());
        let only = flag("--only").unwrap_or_default();
        let once = args.iter().any(|a| a == "--once");
        measure(&name, Path::new(&dir), values.as_deref(), runs, &only, once);
        return;
    }
    let sizes: Vec<usize> = flag("--sizes")
        .unwrap_or_else(|| "100,1000,10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = std::env::current_exe().expect("own path");
    let work = std::env::temp_dir().join(format!("bpc-bench-{}", std::process::id()));
    println!(
        "template\tfacets\tparse_ms\tsaphyr_parse_ms\tsaphyr/parse\tcompose_ms\tcompose/parse\tcompose/saphyr\tpeak_mib"
    );
    let run_child = |name: &str, dir: &Path, values: Option<&Path>, runs: usize| -> Option<f64> {
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--measure",
            &dir.to_string_lossy(),
            "--name",
            name,
            "--runs",
            &runs.to_string(),
        ]);
        if let Some(v) = values {
            cmd.args(["--values", &v.to_string_lossy()]);
        }
        let out = cmd.output().expect("child runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        print!("{text}");
        text.split('\t').nth(5).and_then(|c| c.parse().ok())
    };
    if let Some(graphs) = flag("--graph") {
        let out = flag("--out").map(PathBuf::from);
        let mut times = Vec::new();
        for n in graphs
            .split(',')
            .filter_map(|s| s.trim().parse::<usize>().ok())
        {
            let dir = out.as_ref().unwrap_or(&work).join(format!("graph{n}"));
            write_graph(&dir, n);
            let t = run_child(&format!("graph-{n}"), &dir, None, runs);
            times.push((n, t));
        }
        print_growth(&times);
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    if let Some(chains) = flag("--chain") {
        let mut times = Vec::new();
        for n in chains
            .split(',')
            .filter_map(|s| s.trim().parse::<usize>().ok())
        {
            let dir = work.join(format!("chain{n}"));
            write_chain(&dir, n);
            let t = run_child(&format!("chain-{n}"), &dir, None, runs);
            times.push((n, t));
        }
        print_growth(&times);
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    let corpus = root.join("tests/conformance/windsor-core-75d2a6c1/contexts/_template");
    run_child("windsor-core", &corpus, None, runs.max(20));
    let mut times = Vec::new();
    for n in &sizes {
        let dir = work.join(format!("n{n}"));
        let status = Command::new("python3")
            .arg(root.join("bench/gen-template.py"))
            .arg(&dir)
            .args(["--facets", &n.to_string()])
            .status()
            .expect("python3 runs");
        assert!(status.success(), "gen-template.py failed");
        // Small templates are cheap to run more often, and need it: the fastest of
        // many runs is what makes their row (and the growth ratio) repeatable.
        let runs_here = runs.max(10_000 / n.max(&1)).min(100);
        let t = run_child(
            &format!("synthetic-{n}"),
            &dir.join("contexts/_template"),
            Some(&dir.join("values.yaml")),
            runs_here,
        );
        times.push((*n, t));
    }
    print_growth(&times);
    let _ = std::fs::remove_dir_all(&work);
}

fn print_growth(times: &[(usize, Option<f64>)]) {
    for w in times.windows(2) {
        if let ((a, Some(ta)), (b, Some(tb))) = (w[0], w[1]) {
            println!(
                "growth {a} -> {b} facets ({:.0}x): {:.2}x time",
                b as f64 / a as f64,
                tb / ta
            );
        }
    }
}

/// A template of `n` facets whose components depend on others and delete others (see
/// `--graph` above).
fn write_graph(dir: &Path, n: usize) {
    let facets = dir.join("facets");
    std::fs::create_dir_all(&facets).expect("mkdir");
    for i in 0..n {
        let mut text = format!(
            "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: g{i}\nterraform:\n  - name: t{i:06}\n    path: t{i:06}\n    dependsOn: [u{i:06}]\n  - name: u{i:06}\n    path: u{i:06}\n  - name: r{i:06}\n    path: r{i:06}\n"
        );
        if i >= n / 2 {
            text += &format!("  - name: r{:06}\n    strategy: remove\n", i - n / 2);
        }
        text += &format!(
            "kustomize:\n  - name: k{i:06}\n    dependsOn: [l{i:06}]\n  - name: l{i:06}\n"
        );
        std::fs::write(facets.join(format!("g{i:06}.yaml")), text).expect("write");
    }
}

/// A template of `n` facets where facet i is active only once facet i-1 is.
fn write_chain(dir: &Path, n: usize) {
    let facets = dir.join("facets");
    std::fs::create_dir_all(&facets).expect("mkdir");
    for i in 0..n {
        let when = if i == 0 {
            String::new()
        } else {
            format!("when: c{}.on == true\n", i - 1)
        };
        let text = format!(
            "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: f{i}\n{when}config:\n  - name: c{i}\n    on: true\nterraform:\n  - path: p{i}\n"
        );
        std::fs::write(facets.join(format!("f{i:06}.yaml")), text).expect("write");
    }
}
