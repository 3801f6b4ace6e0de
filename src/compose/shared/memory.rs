//! Handing what a composition's stages freed back to the system.

/// Whether a composition hands memory back to the system after its large steps, and
/// through what: the driver decides (it is the one that names the heap); a stage
/// only says, through [`Memory::give_back`], where a large step of its own has just
/// freed much.
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    hand_back: Option<fn()>,
}

impl Memory {
    /// Memory handed back through `hand_back`.
    pub const fn through(hand_back: fn()) -> Memory {
        Memory {
            hand_back: Some(hand_back),
        }
    }

    /// This, if `large`; else nothing handed back.
    pub fn when(self, large: bool) -> Memory {
        match large {
            true => self,
            false => Memory::default(),
        }
    }

    /// Hands back what is free now, if the driver asked for it.
    pub fn give_back(self) {
        if let Some(hand_back) = self.hand_back {
            hand_back();
        }
    }
}
