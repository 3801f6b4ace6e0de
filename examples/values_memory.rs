//! Peak memory of composing with a large values file, as a multiple of the file's size
//! (goal: under 10×).
//!
//! `cargo run --release --example values_memory [-- MIB]` (default 48) writes a temp
//! project for the example `_template/` with a `contexts/local/values.yaml` of about
//! MIB MiB (one map entry per record, each a small map with a string, a number and a
//! list of short strings), composes it once as `bpc compose` does, and prints the file
//! size, the peak resident memory (VmHWM) and their ratio. Linux only (reads /proc).

use bpc::files::FileMap;
use bpc::session::{Options, Session};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() -> std::io::Result<()> {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(48);
    let dir = tempfile::tempdir()?;
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("_template");
    std::fs::write(dir.path().join("windsor.yaml"), "version: v1alpha1\n")?;
    let mut text = String::from("records:\n");
    let mut i = 0;
    while text.len() < mib * 1024 * 1024 {
        let _ = write!(
            text,
            "  key{i}:\n    name: value-{i}-xxxxxxxxxxxxxxxxxxxx\n    count: {i}\n    tags: [a, b, c]\n"
        );
        i += 1;
    }
    let values = dir.path().join("contexts/local/values.yaml");
    std::fs::create_dir_all(values.parent().unwrap_or(dir.path()))?;
    std::fs::write(&values, &text)?;
    let size = text.len() as f64;
    drop(text);

    let before = peak_kib();
    let sources = Arc::new(FileMap::new());
    let mut options = Options::at(dir.path());
    options.locate.template = Some(template);
    let session = Session::open(options, sources)
        .map_err(|d| std::io::Error::other(format!("{:?}", d.first().map(|d| &d.message))))?;
    let composition = session
        .compose()
        .map_err(|d| std::io::Error::other(format!("{:?}", d.first().map(|d| &d.message))))?;
    std::hint::black_box(&composition);
    let peak = peak_kib() as f64 * 1024.0;
    println!(
        "values {:.1} MiB ({i} records)\tpeak {:.1} MiB (before composing {:.1} MiB)\tpeak / size {:.2}",
        size / 1048576.0,
        peak / 1048576.0,
        before as f64 / 1024.0,
        peak / size
    );
    Ok(())
}
