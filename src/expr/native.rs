//! Host functions (Windsor's `cidrhost`, `yaml`, `file`, …): the signature the
//! checker types calls against, and the calling convention of the evaluator.
//!
//! The engine core owns dispatch and type checking; the functions themselves live in
//! `expr/windsor/`. Both sides meet only through the types in this file.

use super::host::Host;
use crate::value::Value;

/// A parameter or result type as the Go function declares it. The checker reports
/// a compile error when an argument whose type is known at compile time (a literal,
/// a `let` bound to one) cannot be passed; unknown types (names from the scope) pass
/// and are checked by the function at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Any,
    Str,
    Int,
    Float,
    Bool,
    List,
    Map,
}

#[derive(Clone, Copy, Debug)]
pub struct Signature {
    pub params: &'static [Ty],
    /// `Some(t)`: any number of further arguments of type `t` (Go `...t`).
    pub variadic: Option<Ty>,
    pub ret: Ty,
}

/// What a host function may use while it runs.
pub struct Call<'a> {
    pub host: &'a dyn Host,
    pub interp: &'a dyn Interpolate,
}

/// Re-entry into the engine for functions that evaluate text themselves
/// (`yaml(text, input)`, `yamlString(path, input)`, `jsonnet` reading the scope).
pub trait Interpolate {
    /// Evaluates `${…}` in `text` against the current scope plus `input` bound to the
    /// name `input`.
    fn interpolate(&self, text: &str, input: Value) -> Result<Value, NativeError>;
    /// The whole scope as one map (for `std.extVar("context")`).
    fn scope(&self) -> Value;
}

#[derive(Clone, Debug, PartialEq)]
pub enum NativeErrorKind {
    /// An ordinary run-time failure.
    Run,
    /// `terraform_output` at composition time: the caller keeps the text verbatim.
    Deferred,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NativeError {
    pub kind: NativeErrorKind,
    pub message: String,
}

impl NativeError {
    pub fn run(message: impl Into<String>) -> Self {
        NativeError {
            kind: NativeErrorKind::Run,
            message: message.into(),
        }
    }

    pub fn deferred(message: impl Into<String>) -> Self {
        NativeError {
            kind: NativeErrorKind::Deferred,
            message: message.into(),
        }
    }
}

type NativeCall = fn(&Call<'_>, &[Value]) -> Result<Value, NativeError>;

#[derive(Clone, Copy)]
pub struct NativeFn {
    pub name: &'static str,
    /// Go function types the checker accepts, tried in order (expr's overloads:
    /// `yamlString(v)` and `yamlString(path, input)`); never empty.
    pub sigs: &'static [Signature],
    pub call: NativeCall,
}
