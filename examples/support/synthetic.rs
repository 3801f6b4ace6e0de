//! A synthetic template for the benchmarks: `bench/gen-template.py` with `facets`
//! facets, its values moved to context `local`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Generates the template under `dir` and returns its project root.
pub fn generate(dir: &Path, facets: usize) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = dir.join(format!("synthetic-{facets}"));
    let status = Command::new("python3")
        .arg(repo.join("bench/gen-template.py"))
        .arg(&root)
        .args(["--facets", &facets.to_string()])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "gen-template.py failed");
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::rename(
        root.join("values.yaml"),
        root.join("contexts/local/values.yaml"),
    )
    .expect("values");
    root
}
