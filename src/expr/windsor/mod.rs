//! Windsor's own functions, registered on top of expr-lang's builtins.

use super::native::NativeFn;

/// Every Windsor host function with its Go signature.
pub fn functions() -> &'static [NativeFn] {
    &[]
}
pub mod format {
    pub fn go_format(_v: &crate::expr::Value) -> String {
        String::new()
    }
    pub fn yaml_text(_v: &crate::expr::Value) -> String {
        String::new()
    }
}
