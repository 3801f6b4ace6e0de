//! The expression work of one composition: every evaluation of the composition, on
//! every thread, charges its steps here, so a template of many expressions that each
//! stay within their own budget still cannot make one composition run for long. A
//! caller may also stop the composition's evaluations early (the language server does
//! when a newer edit makes the analysis moot).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Work one composition may do, in evaluation steps, unless the caller says otherwise:
/// twenty times what one expression may do, and far beyond any real template's need.
pub const DEFAULT_MAX_STEPS: u64 = 200_000_000;

#[derive(Debug)]
pub struct Work {
    done: AtomicU64,
    limit: u64,
    cancel: Option<Arc<AtomicBool>>,
}

impl Default for Work {
    fn default() -> Work {
        Work::new(DEFAULT_MAX_STEPS)
    }
}

impl Work {
    pub fn new(limit: u64) -> Work {
        Work {
            done: AtomicU64::new(0),
            limit,
            cancel: None,
        }
    }

    /// This budget, whose evaluations also stop once `cancel` is set.
    pub fn cancelled_by(self, cancel: Arc<AtomicBool>) -> Work {
        Work {
            cancel: Some(cancel),
            ..self
        }
    }

    /// Steps charged so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Charges `steps`; an error once the composition's work is spent or cancelled.
    pub fn charge(&self, steps: u64) -> Result<(), String> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err("the composition was cancelled".to_string());
        }
        let done = self
            .done
            .fetch_add(steps, Ordering::Relaxed)
            .saturating_add(steps);
        if done > self.limit {
            return Err(format!(
                "the composition's expressions took more than {} evaluation steps in all; raise the budget with --max-steps N",
                self.limit
            ));
        }
        Ok(())
    }
}
