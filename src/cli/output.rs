//! Writing results: stdout, or a file replaced atomically (S10: a temp file beside
//! the target, then a rename, so a failed run never leaves a half-written file).

use std::io::Write;
use std::path::Path;

pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "output".to_string());
    let tmp = dir.join(format!(".{name}.bpc-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Prints to stdout, or writes `--out` atomically.
pub fn emit(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        Some(path) => write_atomically(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush())
                .map_err(|e| format!("cannot write output: {e}"))
        }
    }
}
