//! Bounds on compilation and evaluation. Every limit turns into an ordinary error so
//! no input can overflow the stack, hang the process or exhaust memory.

/// Deepest syntax tree (and parser recursion) accepted.
pub const MAX_DEPTH: u32 = 100;
/// Longest expression source accepted, in bytes.
pub const MAX_SOURCE: usize = 64 * 1024;
/// Elements a single evaluation may allocate through ranges and collection builtins
/// (expr-lang's memory budget: `len(1..1000000)` fails).
pub const MEMORY_BUDGET: usize = 1_000_000;
/// Closure calls and element visits a single evaluation may make.
pub const MAX_STEPS: u64 = 10_000_000;
/// Longest string a single evaluation may build.
pub const MAX_STRING: usize = 16 * 1024 * 1024;
// `file()` returns a whole file as one string: any file the tree reads must fit.
const _: () = assert!(crate::files::tree::MAX_FILE_BYTES == MAX_STRING as u64);
/// How deep host functions may re-enter the engine (`yaml(text, input)` inside
/// templates inside `yaml(…)`).
pub const MAX_REENTRY: u32 = 8;
