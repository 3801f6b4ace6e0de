//! Per-evaluation accounting of work and allocation (see `limits`).

use super::limits::{MAX_STEPS, MAX_STRING, MEMORY_BUDGET};
use super::work::Work;

/// Steps an evaluation takes between two charges to its composition's [`Work`]: the
/// shared counter is touched rarely, and a long evaluation still stops soon after the
/// composition's work is spent or cancelled.
const STEPS_PER_CHARGE: u64 = 1 << 16;

#[derive(Default)]
pub struct Budget<'w> {
    memory: usize,
    steps: u64,
    /// Steps already charged to `work`.
    charged: u64,
    work: Option<&'w Work>,
}

impl<'w> Budget<'w> {
    /// A budget whose steps are also charged to `work`.
    pub fn charging(work: Option<&'w Work>) -> Budget<'w> {
        Budget {
            work,
            ..Budget::default()
        }
    }

    /// Charges the steps not yet charged to the composition's work.
    pub fn settle(&mut self) -> Result<(), String> {
        let Some(work) = self.work else {
            return Ok(());
        };
        let steps = self.steps - self.charged;
        if steps == 0 {
            // Most evaluations (a lookup, a concatenation) take no counted step: they
            // never touch the shared counter.
            return Ok(());
        }
        self.charged = self.steps;
        work.charge(steps)
    }

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
        if self.steps - self.charged >= STEPS_PER_CHARGE {
            self.settle()?;
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
