//! `bpc test`: template test cases (S11) and golden-file snapshots.

pub mod case;
pub mod matcher;
pub mod runner;
pub mod snapshot;
