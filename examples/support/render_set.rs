//! The render conformance set as a project for the benchmarks: windsor-core's template
//! (`tests/conformance/windsor-core-eaa2bcea`) with the set's 46 contexts
//! (`tests/conformance/windsor-render-eaa2bcea/contexts`).

use std::path::Path;

/// Writes the project at `root`.
pub fn assemble(root: &Path) -> std::io::Result<()> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = repo.join("tests/conformance/windsor-core-eaa2bcea");
    copy_dir(
        &core.join("contexts/_template"),
        &root.join("contexts/_template"),
    )?;
    std::fs::copy(core.join("windsor.yaml"), root.join("windsor.yaml"))?;
    copy_dir(
        &repo.join("tests/conformance/windsor-render-eaa2bcea/contexts"),
        &root.join("contexts"),
    )
}

/// Copies the directory `from` to `to`, files and directories.
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
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
