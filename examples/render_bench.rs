//! Render time against compose time (goal: render adds ≤ 30 % to compose).
//!
//! `cargo run --release --example render_bench -- PROJECT [VALUES] [RUNS]`
//!
//! Composes the project's default context as `bpc render` does, then renders it,
//! `RUNS` times (default 5); prints the fastest compose and render times and their
//! ratio. Times are the fastest of the runs: on a shared machine noise only adds time.

use bpc::files::FileMap;
use bpc::render::{render, ManifestFormat};
use bpc::session::{Options, Session};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(project) = args.next().map(PathBuf::from) else {
        eprintln!("usage: render_bench PROJECT [VALUES] [RUNS]");
        std::process::exit(2);
    };
    let values: Vec<PathBuf> = args
        .next()
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut options = Options::at(cwd);
    options.locate.project = Some(project.clone());
    options.locate.values = values;
    let (mut best_compose, mut best_render, mut files) = (f64::INFINITY, f64::INFINITY, 0);
    for _ in 0..runs {
        let sources = Arc::new(FileMap::new());
        let t = Instant::now();
        let composed = Session::open(options.clone(), sources)
            .and_then(|session| session.compose().map(|c| (session, c)));
        let (session, composition) = match composed {
            Ok(c) => c,
            Err(d) => {
                eprintln!("compose failed: {d:?}");
                std::process::exit(1);
            }
        };
        best_compose = best_compose.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let rendered = match render(&composition, &session.template, ManifestFormat::Yaml) {
            Ok(r) => r,
            Err(d) => {
                eprintln!("render failed: {d:?}");
                std::process::exit(1);
            }
        };
        best_render = best_render.min(t.elapsed().as_secs_f64() * 1e3);
        files = rendered.files.len();
    }
    println!(
        "{}\tfiles {files}\tcompose {best_compose:.2} ms\trender {best_render:.2} ms\trender/compose {:.1} %",
        project.display(),
        100.0 * best_render / best_compose
    );
}
