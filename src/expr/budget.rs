//! Per-evaluation accounting of work and allocation (see `limits`).

use super::limits::{MAX_STEPS, MAX_STRING, MEMORY_BUDGET};

#[derive(Default)]
pub struct Budget {
    memory: usize,
    steps: u64,
}

impl Budget {
    /// Accounts for `n` newly allocated elements.
    pub fn grow(&mut self, n: usize) -> Result<(), String> {
        self.memory = self.memory.saturating_add(n);
        if self.memory >= MEMORY_BUDGET {
            return Err("memory budget exceeded".into());
        }
        Ok(())
    }

    /// Accounts for `n` units of work (closure calls, element visits).
    pub fn step(&mut self, n: u64) -> Result<(), String> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > MAX_STEPS {
            return Err("evaluation step limit exceeded".into());
        }
        Ok(())
    }

    /// Refuses to build a string longer than the limit.
    pub fn string_len(&mut self, len: usize) -> Result<(), String> {
        if len > MAX_STRING {
            return Err(format!(
                "string of {len} bytes exceeds the limit of {MAX_STRING} bytes"
            ));
        }
        Ok(())
    }
}
