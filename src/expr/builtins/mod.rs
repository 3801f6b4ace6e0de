//! expr-lang's builtin functions: which names exist, how the parser reads predicate
//! builtins, what the checker accepts, and the run-time implementations of the
//! non-closure builtins (closure builtins run in the evaluator, `eval/closures.rs`).

mod collections;
mod convert;
pub(crate) mod gofmt;
pub(crate) mod json;
mod math;
mod strings;

pub use collections::sort_values;

use super::budget::Budget;
use super::types::Ty;
use crate::value::Value;

/// One argument of a predicate builtin as the parser reads it.
#[derive(Clone, Copy)]
pub struct PredArg {
    pub closure: bool,
    pub optional: bool,
}

const E: PredArg = PredArg {
    closure: false,
    optional: false,
};
const P: PredArg = PredArg {
    closure: true,
    optional: false,
};
const OPT_P: PredArg = PredArg {
    closure: true,
    optional: true,
};
const OPT_E: PredArg = PredArg {
    closure: false,
    optional: true,
};

pub fn predicate_args(name: &str) -> Option<&'static [PredArg]> {
    Some(match name {
        "all" | "none" | "any" | "one" | "filter" | "map" | "find" | "findIndex" | "findLast"
        | "findLastIndex" | "groupBy" => &[E, P],
        "count" | "sum" => &[E, OPT_P],
        "sortBy" | "reduce" => &[E, P, OPT_E],
        _ => return None,
    })
}

/// Every builtin's name (for "did you mean" hints), predicates included.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name).chain([
        "all",
        "none",
        "any",
        "one",
        "filter",
        "map",
        "find",
        "findIndex",
        "findLast",
        "findLastIndex",
        "groupBy",
        "count",
        "sum",
        "sortBy",
        "reduce",
    ])
}

type BuiltinCall = fn(&[Value], &mut Budget) -> Result<Value, String>;

/// A plain builtin: its compile-time check and its implementation.
pub struct Builtin {
    pub name: &'static str,
    pub check: fn(&str, &[Ty]) -> Result<Ty, String>,
    pub call: BuiltinCall,
}

const BUILTINS: &[Builtin] = &[
    b("len", check_len, collections::len),
    b("abs", check_abs, math::abs),
    b("ceil", check_rounding, math::ceil),
    b("floor", check_rounding, math::floor),
    b("round", check_rounding, math::round),
    b("int", check_int, convert::int),
    b("float", check_float, convert::float),
    b("max", check_numbers_unknown, math::max),
    b("min", check_numbers_unknown, math::min),
    b("mean", check_numbers_float, math::mean),
    b("median", check_numbers_float, math::median),
    b("trim", check_trim, strings::trim),
    b("trimPrefix", check_trim, strings::trim_prefix),
    b("trimSuffix", check_trim, strings::trim_suffix),
    b("upper", check_str_to_str, strings::upper),
    b("lower", check_str_to_str, strings::lower),
    b("split", check_split, strings::split),
    b("splitAfter", check_split, strings::split_after),
    b("replace", check_replace, strings::replace),
    b("repeat", check_repeat, strings::repeat),
    b("indexOf", check_str_str_int, strings::index_of),
    b("lastIndexOf", check_str_str_int, strings::last_index_of),
    b("hasPrefix", check_str_str_bool, strings::has_prefix),
    b("hasSuffix", check_str_str_bool, strings::has_suffix),
    b("join", check_join, strings::join),
    b("string", check_any_to_str, convert::string),
    b("keys", check_map_arg, collections::keys),
    b("values", check_map_arg, collections::values),
    b("toPairs", check_map_arg, collections::to_pairs),
    b("fromPairs", check_from_pairs, collections::from_pairs),
    b("concat", check_concat, collections::concat),
    b("flatten", check_list_arg, collections::flatten),
    b("uniq", check_list_arg, collections::uniq),
    b("first", check_first_last, collections::first),
    b("last", check_first_last, collections::last),
    b("take", check_take, collections::take),
    b("get", check_get, collections::get),
    b("sort", check_sort, collections::sort),
    b("reverse", check_list_arg, collections::reverse),
    b("toJSON", check_any_to_str, json::to_json),
    b("fromJSON", check_from_json, json::from_json),
    b("toBase64", check_str_to_str, convert::to_base64),
    b("fromBase64", check_str_to_str, convert::from_base64),
    b("type", check_any_to_str, convert::type_of),
    b("bitand", check_bits2, math::bitand),
    b("bitor", check_bits2, math::bitor),
    b("bitxor", check_bits2, math::bitxor),
    b("bitnand", check_bits2, math::bitnand),
    b("bitshl", check_bits2, math::bitshl),
    b("bitshr", check_bits2, math::bitshr),
    b("bitushr", check_bits2, math::bitushr),
    b("bitnot", check_bits1, math::bitnot),
];

const fn b(
    name: &'static str,
    check: fn(&str, &[Ty]) -> Result<Ty, String>,
    call: BuiltinCall,
) -> Builtin {
    Builtin { name, check, call }
}

pub fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Any name the language reserves as a function (also the predicate builtins).
pub fn is_builtin(name: &str) -> bool {
    lookup(name).is_some() || predicate_args(name).is_some()
}

// ---- compile-time checks ------------------------------------------------------

fn arity(name: &str, args: &[Ty], n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!(
            "invalid number of arguments for {name} (expected {n}, got {})",
            args.len()
        ));
    }
    Ok(())
}

fn invalid(name: &str, t: Ty) -> String {
    format!("invalid argument for {name} (type {})", t.name())
}

/// Checks calls of Go functions with fixed parameter types (`func(string, string) string`).
fn typed(name: &str, args: &[Ty], params: &[Ty], optional: usize) -> Result<(), String> {
    let required = params.len() - optional;
    if args.len() < required {
        return Err(format!("not enough arguments to call {name}"));
    }
    if args.len() > params.len() {
        return Err(format!("too many arguments to call {name}"));
    }
    for (a, p) in args.iter().zip(params) {
        if !a.is_unknown() && a != p {
            return Err(format!(
                "cannot use {} as argument (type {}) to call {name}",
                a.name(),
                p.name()
            ));
        }
    }
    Ok(())
}

fn check_len(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::List | Ty::Map | Ty::Str => Ok(Ty::Int),
        t => Err(invalid(name, t)),
    }
}

fn check_abs(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        t @ (Ty::Unknown | Ty::Int | Ty::Float) => Ok(t),
        t => Err(invalid(name, t)),
    }
}

fn check_rounding(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::Int | Ty::Float => Ok(Ty::Float),
        t => Err(invalid(name, t)),
    }
}

fn check_int(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::Int | Ty::Float | Ty::Str => Ok(Ty::Int),
        t => Err(invalid(name, t)),
    }
}

fn check_float(name: &str, args: &[Ty]) -> Result<Ty, String> {
    check_int(name, args).map(|_| Ty::Float)
}

fn numbers(name: &str, args: &[Ty]) -> Result<(), String> {
    if args.is_empty() {
        return Err(format!("not enough arguments to call {name}"));
    }
    for &t in args {
        if !matches!(t, Ty::Unknown | Ty::Int | Ty::Float | Ty::List) {
            return Err(invalid(name, t));
        }
    }
    Ok(())
}

fn check_numbers_unknown(name: &str, args: &[Ty]) -> Result<Ty, String> {
    numbers(name, args).map(|_| Ty::Unknown)
}

fn check_numbers_float(name: &str, args: &[Ty]) -> Result<Ty, String> {
    numbers(name, args).map(|_| Ty::Float)
}

fn check_trim(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Str], 1).map(|_| Ty::Str)
}

fn check_str_to_str(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str], 0).map(|_| Ty::Str)
}

fn check_split(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Str, Ty::Int], 1).map(|_| Ty::List)
}

fn check_replace(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Str, Ty::Str], 0).map(|_| Ty::Str)
}

fn check_repeat(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Int], 0).map(|_| Ty::Str)
}

fn check_str_str_int(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Str], 0).map(|_| Ty::Int)
}

fn check_str_str_bool(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str, Ty::Str], 0).map(|_| Ty::Bool)
}

fn check_join(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::List, Ty::Str], 1).map(|_| Ty::Str)
}

fn check_any_to_str(name: &str, args: &[Ty]) -> Result<Ty, String> {
    match args.len() {
        0 => Err(format!("not enough arguments to call {name}")),
        1 => Ok(Ty::Str),
        _ => Err(format!("too many arguments to call {name}")),
    }
}

fn check_from_json(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Str], 0).map(|_| Ty::Unknown)
}

fn check_map_arg(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::Map => Ok(Ty::List),
        t => Err(format!("cannot get {name} from {}", t.name())),
    }
}

fn check_from_pairs(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::List => Ok(Ty::Map),
        t => Err(format!("cannot transform {} from pairs", t.name())),
    }
}

fn check_concat(_name: &str, args: &[Ty]) -> Result<Ty, String> {
    if args.is_empty() {
        return Err("invalid number of arguments (expected at least 1, got 0)".into());
    }
    for &t in args {
        if !matches!(t, Ty::Unknown | Ty::List) {
            return Err(format!("cannot concat {}", t.name()));
        }
    }
    Ok(Ty::List)
}

fn check_list_arg(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::List => Ok(Ty::List),
        t => Err(format!("cannot {name} {}", t.name())),
    }
}

fn check_first_last(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 1)?;
    match args[0] {
        Ty::Unknown | Ty::List => Ok(Ty::Unknown),
        t => Err(format!("cannot get {name} element from {}", t.name())),
    }
}

fn check_take(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 2)?;
    if !matches!(args[0], Ty::Unknown | Ty::List) {
        return Err(format!("cannot take from {}", args[0].name()));
    }
    if !matches!(args[1], Ty::Unknown | Ty::Int) {
        return Err(format!("cannot take {} elements", args[1].name()));
    }
    Ok(Ty::List)
}

fn check_get(name: &str, args: &[Ty]) -> Result<Ty, String> {
    arity(name, args, 2).map(|_| Ty::Unknown)
}

fn check_sort(name: &str, args: &[Ty]) -> Result<Ty, String> {
    if args.is_empty() || args.len() > 2 {
        return Err(format!(
            "invalid number of arguments for {name} (expected 1 or 2, got {})",
            args.len()
        ));
    }
    if !matches!(args[0], Ty::Unknown | Ty::List) {
        return Err(format!("cannot sort {}", args[0].name()));
    }
    if args.len() == 2 && !matches!(args[1], Ty::Unknown | Ty::Str) {
        return Err(format!("invalid order {}, expected string", args[1].name()));
    }
    Ok(Ty::List)
}

fn check_bits2(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Int, Ty::Int], 0).map(|_| Ty::Int)
}

fn check_bits1(name: &str, args: &[Ty]) -> Result<Ty, String> {
    typed(name, args, &[Ty::Int], 0).map(|_| Ty::Int)
}
