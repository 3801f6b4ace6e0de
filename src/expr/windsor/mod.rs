//! Windsor's own functions, registered on top of expr-lang's builtins.

pub mod format;

use super::native::NativeFn;

/// Every Windsor host function with its Go signature.
pub fn functions() -> &'static [NativeFn] {
    &[]
}
