//! Incremental recomposition: the time from one facet file changing on disk
//! to the new blueprint, with the engine watch mode and the language server use
//! ([`bpc::session::Recomposer`]), beside a cold load and compose of the same project
//! in the same run.
//!
//! `cargo run --release --example recompose_bench [-- --facets 10000 --edits 10]`
//!
//! The project is a synthetic template from `bench/gen-template.py` with its values as
//! context `local`. Each edit rewrites one active facet's file (a different facet
//! each time, spread over the template), of three kinds in turn:
//!
//! * `config text`: a config entry's expression changed where its value stays the same
//!   (the default of `network.cidr ?? …`, which the context sets);
//! * `input`: a component input changed;
//! * `config value`: a config entry whose value changes, in a block that the
//!   components of every facet writing the same block read (about 1 facet in 50).
//!
//! Per edit it times
//!
//! * `cold`: a fresh `Session::open` + `compose` (what every round did before);
//! * `incremental`: `Recomposer::open` + `compose` on the engine that composed the
//!   previous version;
//! * `told`: the same on an engine told which file changed
//!   (`Recomposer::changed`, as watch mode and the language server tell it), which
//!   neither lists the template nor reads the other files;
//!
//! and checks that the three blueprints are equal. Prints min, median and max of each and
//! the facets the engine replayed. `--split` also prints where the incremental time
//! went (load against compose). `--told-only` runs the told engine alone, compared
//! with nothing (for a profiler).

#[path = "support/synthetic.rs"]
mod synthetic;

use bpc::session::{Options, Recomposer, Session};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn summary(mut xs: Vec<f64>) -> String {
    xs.sort_by(f64::total_cmp);
    format!(
        "min {:.1}  median {:.1}  max {:.1} ms",
        xs[0],
        xs[xs.len() / 2],
        xs[xs.len() - 1]
    )
}

/// The kinds of edit, in the order they take turns.
const KINDS: [&str; 3] = ["config text", "input", "config value"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let facets: usize = flag(&args, "--facets").map_or(10_000, |v| v.parse().expect("--facets N"));
    let edits: usize = flag(&args, "--edits").map_or(10, |v| v.parse().expect("--edits N"));
    let split = args.iter().any(|a| a == "--split");
    let told_only = args.iter().any(|a| a == "--told-only");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = synthetic::generate(dir.path(), facets);
    let mut options = Options::at(&root);
    options.locate.context = Some("local".into());
    options.environment = bpc::compose::model::inputs::Environment::Fixed(Default::default());

    let facet_dir = root.join("contexts/_template/facets");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&facet_dir)
        .expect("facets")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    // Active facets only (`when: true`): an edit there reaches the blueprint.
    files.retain(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("\nwhen: true\n")));

    let mut engine = Recomposer::new(options.clone());
    let start = Instant::now();
    let session = engine.open().expect("loads");
    let first = engine.compose(&session).expect("composes");
    let first_ms = ms(start);
    drop((session, first));
    let mut told = Recomposer::new(options.clone());
    told.tell_changes(true);
    let session = told.open().expect("loads");
    drop(told.compose(&session).expect("composes"));
    drop(session);
    let (mut told_ms, mut told_loads, mut told_composes) = (Vec::new(), Vec::new(), Vec::new());

    let (mut cold, mut warm, mut loads, mut composes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut replayed = Vec::new();
    for edit in 0..edits {
        let path = &files[(edit * 7919 + files.len() / 3) % files.len()];
        let text = std::fs::read_to_string(path).expect("facet");
        let changed = match edit % KINDS.len() {
            0 => text.replacen("'10.0.0.0/16'", &format!("'10.{}.0.0/16'", edit + 1), 1),
            1 => text.replacen("a: ", &format!("a: {edit}"), 1),
            _ => text.replacen("?? 1) + ", &format!("?? 1) + {}", edit + 1), 1),
        };
        assert_ne!(
            text,
            changed,
            "edit {edit} changes nothing in {}",
            path.display()
        );
        std::fs::write(path, changed).expect("write");

        // The told engine: tell, open, compose, timed.
        let mut told_edit = || {
            let start = Instant::now();
            told.changed([path.as_path()]);
            let told_session = told.open().expect("loads");
            told_loads.push(ms(start));
            let at = Instant::now();
            let composed = told.compose(&told_session).expect("composes");
            told_composes.push(ms(at));
            told_ms.push(ms(start));
            (told_session, composed)
        };
        if told_only {
            drop(told_edit());
            continue;
        }
        let start = Instant::now();
        let session = engine.open().expect("loads");
        let loaded = ms(start);
        let at = Instant::now();
        let incremental = engine.compose(&session).expect("composes");
        composes.push(ms(at));
        loads.push(loaded);
        warm.push(ms(start));
        replayed.push(engine.reuse("local"));

        let (told_session, told_composition) = told_edit();

        let start = Instant::now();
        let sources = Arc::new(bpc::files::FileMap::new());
        let fresh = Session::open(options.clone(), sources).expect("loads");
        let composed = fresh.compose().expect("composes");
        cold.push(ms(start));
        assert!(
            composed
                .blueprint
                .equals(&incremental.blueprint, bpc::value::Equality::IDENTICAL),
            "edit {edit}: the incremental blueprint differs from a cold compose"
        );
        assert!(
            composed
                .blueprint
                .equals(&told_composition.blueprint, bpc::value::Equality::IDENTICAL),
            "edit {edit}: the told engine's blueprint differs from a cold compose"
        );
        drop((session, incremental, fresh, composed));
        drop((told_session, told_composition));
    }
    let reuse = replayed.last().copied().unwrap_or_default();
    println!("synthetic-{facets}: first composition {first_ms:.1} ms; {edits} edits, one facet file each");
    if !told_only {
        println!("  cold (open + compose):        {}", summary(cold));
        println!("  incremental (open + compose): {}", summary(warm));
    }
    if split && !told_only {
        println!("    of which load:             {}", summary(loads));
        println!("    of which compose:          {}", summary(composes));
    }
    println!(
        "  told (changed + open + compose): {}",
        summary(told_ms.clone())
    );
    for (k, kind) in KINDS.iter().enumerate() {
        let of_kind: Vec<f64> = told_ms
            .iter()
            .skip(k)
            .step_by(KINDS.len())
            .copied()
            .collect();
        if !of_kind.is_empty() {
            println!("    {kind:>12} edits:           {}", summary(of_kind));
        }
    }
    if split {
        println!("    of which load:             {}", summary(told_loads));
        println!("    of which compose:          {}", summary(told_composes));
    }
    println!(
        "  last edit: {} facets replayed, {} collected{}",
        reuse.replayed,
        reuse.collected,
        if reuse.cold { " (cold)" } else { "" }
    );
}
