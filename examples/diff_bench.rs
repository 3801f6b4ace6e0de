//! `bpc diff --all-contexts` against one `bpc render --all-contexts`, side by side
//! (goal: the diff takes at most 2.5× the render).
//!
//! `cargo run --release --example diff_bench -- [RUNS]`
//!
//! Makes the 46-context render set (`tests/conformance/windsor-render-eaa2bcea/`
//! with the windsor-core template) a git repository with one commit on `main`,
//! changes one line of one facet in the work tree, then RUNS times (default 3): `bpc
//! render --all-contexts --out DIR` of the work tree, and `bpc diff --base main
//! --all-contexts --affected` (both sides composed and rendered: the commit read from
//! git, the work tree from disk). Both run in this process through the command-line
//! entry point. Prints both wall times and their ratio per run, then the fastest of
//! each and their ratio.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

#[path = "support/render_set.rs"]
mod render_set;

fn main() -> ExitCode {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("cannot make a temp dir: {e}");
            return ExitCode::from(1);
        }
    };
    let root = dir.path().join("project");
    if let Err(e) = make_repository(&root) {
        eprintln!("cannot make the repository: {e}");
        return ExitCode::from(1);
    }
    let project = root.to_string_lossy().to_string();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("46 contexts, {cores} core(s)");
    let (mut fastest_render, mut fastest_diff) = (f64::MAX, f64::MAX);
    for run in 1..=runs {
        let out = dir.path().join(format!("render-{run}"));
        let out = out.to_string_lossy().to_string();
        let start = Instant::now();
        let rendered = bpc::run([
            "bpc",
            "render",
            "--project",
            &project,
            "--all-contexts",
            "--out",
            &out,
        ]);
        let render = start.elapsed().as_secs_f64();
        if rendered != ExitCode::SUCCESS {
            eprintln!("render failed");
            return ExitCode::from(1);
        }
        let start = Instant::now();
        let compared = bpc::run([
            "bpc",
            "diff",
            "--project",
            &project,
            "--base",
            "main",
            "--all-contexts",
            "--affected",
        ]);
        let diff = start.elapsed().as_secs_f64();
        // 1: something differs, as the edit makes it.
        if compared != ExitCode::from(1) {
            eprintln!("diff did not report the change");
            return ExitCode::from(1);
        }
        println!(
            "run {run}: render --all-contexts {:.1} ms, diff --all-contexts {:.1} ms, ratio {:.2}x",
            render * 1000.0,
            diff * 1000.0,
            diff / render
        );
        fastest_render = fastest_render.min(render);
        fastest_diff = fastest_diff.min(diff);
    }
    println!(
        "fastest of {runs}: render --all-contexts {:.1} ms, diff --all-contexts {:.1} ms, ratio {:.2}x",
        fastest_render * 1000.0,
        fastest_diff * 1000.0,
        fastest_diff / fastest_render
    );
    ExitCode::SUCCESS
}

/// The render set as a repository: committed on `main`, one facet line changed in
/// the work tree.
fn make_repository(root: &Path) -> std::io::Result<()> {
    render_set::assemble(root)?;
    git(root, &["init", "-q", "-b", "main", "."])?;
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "the render set"])?;
    let facet = root.join("contexts/_template/facets/addon-private-dns.yaml");
    let text = std::fs::read_to_string(&facet)?;
    std::fs::write(
        &facet,
        text.replacen("      timeout: 20m\n", "      timeout: 25m\n", 1),
    )
}

fn git(dir: &Path, args: &[&str]) -> std::io::Result<()> {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("git {args:?} failed")))
    }
}
