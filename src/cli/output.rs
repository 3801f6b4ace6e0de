//! Writing results: stdout, or `--out FILE` through
//! [`crate::files::out_path::write_atomically`] (S10).

use crate::files::out_path::write_parts_atomically;
use std::io::Write;
use std::path::Path;

/// Prints `text` (its parts one after another) to stdout (also for `--out -`), or
/// writes `--out FILE` atomically.
pub fn emit(out: Option<&Path>, text: &[&[u8]]) -> Result<(), String> {
    match out {
        Some(path) if path.as_os_str() != "-" => write_parts_atomically(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        _ => {
            let mut stdout = std::io::stdout().lock();
            text.iter()
                .try_for_each(|part| stdout.write_all(part))
                .and_then(|_| stdout.flush())
                .map_err(|e| format!("cannot write output: {e}"))
        }
    }
}
