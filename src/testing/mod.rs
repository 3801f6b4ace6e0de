//! `bpc test`: template test cases (S11) and golden-file snapshots.

pub mod case;
pub(crate) mod matcher;
pub mod policies;
pub mod runner;
pub(crate) mod snapshot;
pub(crate) mod suite;
