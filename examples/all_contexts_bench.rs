//! Every context at once against one context at a time (goal: ≥ 1.7× on 2
//! cores for 20 contexts).
//!
//! `cargo run --release --example all_contexts_bench -- [CONTEXTS] [RUNS]`
//!
//! Makes a throwaway project with the example template (`_template/`) and CONTEXTS
//! contexts (default 20; providers and sizes alternate so they differ), then, RUNS
//! times (default 3), side by side: `bpc compose --context <c> --out DIR/<c>.yaml` once
//! per context, one after the other, and `bpc compose --all-contexts --out DIR` once.
//! Both run in this process through the command-line entry point, so each
//! single-context run opens its session as the binary does, minus process start-up.
//! Prints both wall times and their ratio per run, and checks the outputs agree.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let contexts: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
    let project = match make_project(contexts) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("cannot make the project: {e}");
            return ExitCode::from(1);
        }
    };
    let root = project.path();
    let names: Vec<String> = (1..=contexts).map(|i| format!("c{i:02}")).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{contexts} contexts, {cores} core(s)");
    for run in 1..=runs {
        let one_by_one = root.join(format!("one-by-one-{run}"));
        let all_at_once = root.join(format!("all-at-once-{run}"));
        if let Err(e) = std::fs::create_dir_all(&one_by_one) {
            eprintln!("cannot create {}: {e}", one_by_one.display());
            return ExitCode::from(1);
        }
        let start = Instant::now();
        for name in &names {
            let out = one_by_one.join(format!("{name}.yaml"));
            if !compose(root, &["--context", name, "--out", &out.to_string_lossy()]) {
                return ExitCode::from(1);
            }
        }
        let sequential = start.elapsed().as_secs_f64();
        let start = Instant::now();
        if !compose(
            root,
            &["--all-contexts", "--out", &all_at_once.to_string_lossy()],
        ) {
            return ExitCode::from(1);
        }
        let parallel = start.elapsed().as_secs_f64();
        for name in &names {
            let file = format!("{name}.yaml");
            let (a, b) = (
                std::fs::read(one_by_one.join(&file)),
                std::fs::read(all_at_once.join(&file)),
            );
            if a.is_err() || a.ok() != b.ok() {
                eprintln!("outputs of context {name} differ");
                return ExitCode::from(1);
            }
        }
        println!(
            "run {run}: {contexts} sequential runs {:.1} ms, --all-contexts {:.1} ms, ratio {:.2}x",
            sequential * 1000.0,
            parallel * 1000.0,
            sequential / parallel
        );
    }
    ExitCode::SUCCESS
}

/// `bpc compose --project ROOT …`; whether it succeeded.
fn compose(root: &Path, extra: &[&str]) -> bool {
    let root = root.to_string_lossy().to_string();
    let argv = ["bpc", "compose", "--project", root.as_str()]
        .into_iter()
        .chain(extra.iter().copied());
    bpc::run(argv) == ExitCode::SUCCESS
}

/// The example template and `contexts` contexts whose values differ.
fn make_project(contexts: usize) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("_template");
    copy_dir(&template, &dir.path().join("_template"))?;
    for i in 1..=contexts {
        let provider = if i % 2 == 0 { "aws" } else { "docker" };
        let values = format!(
            "provider: {provider}\ncluster:\n  name: cluster-{i}\n  workers:\n    count: {}\n",
            1 + i % 5
        );
        let context = dir.path().join("contexts").join(format!("c{i:02}"));
        std::fs::create_dir_all(&context)?;
        std::fs::write(context.join("values.yaml"), values)?;
    }
    Ok(dir)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
