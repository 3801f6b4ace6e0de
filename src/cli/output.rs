//! Writing results: stdout, or `--out FILE` through
//! [`crate::files::out_path::write_atomically`] (S10).

use crate::files::out_path::write_atomically;
use std::io::Write;
use std::path::Path;

/// Prints to stdout (also for `--out -`), or writes `--out FILE` atomically.
pub fn emit(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        Some(path) if path.as_os_str() != "-" => write_atomically(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        _ => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush())
                .map_err(|e| format!("cannot write output: {e}"))
        }
    }
}
