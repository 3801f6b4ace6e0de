//! The functions an expression may call, with a signature and one line of help each,
//! for hover and completion: Windsor's host functions (signatures from their
//! declarations) and expr-lang's builtins. A unit test keeps the table and the
//! engine's list of names the same.

use crate::expr::native::{Signature, Ty};

pub struct Function {
    pub name: &'static str,
    /// `name(param type, …) → result`.
    pub signature: String,
    pub help: &'static str,
    /// Windsor's own (else an expr-lang builtin).
    pub windsor: bool,
}

/// Help for Windsor's functions, by name.
const WINDSOR_HELP: &[(&str, &str)] = &[
    ("string", "the value as text (maps and lists as YAML-like Go text)"),
    ("split", "the text cut at every separator"),
    ("yaml", "parses YAML text; with more arguments, `${…}` in it is rendered against them"),
    ("yamlString", "the value written as YAML text (or the YAML file at a path rendered with an input)"),
    ("jsonString", "the value written as JSON text"),
    ("cidrhost", "the address of host number N in a CIDR prefix"),
    ("cidrsubnet", "subnet number N of a prefix extended by the given bits"),
    ("cidrsubnets", "consecutive subnets of a prefix, one per bit count"),
    ("cidrnetmask", "the dotted netmask of an IPv4 prefix"),
    ("file", "the contents of a file, relative to the facet (inside the template)"),
    ("jsonnet", "evaluates a Jsonnet file (relative to the facet) with the scope as `std.extVar('context')`"),
    ("env", "an environment variable of the process (empty when unset)"),
    ("terraform_output", "output KEY of terraform component C; deferred until the outputs exist"),
];

/// expr-lang's builtins: signature (without the name) and help.
const BUILTINS: &[(&str, &str, &str)] = &[
    ("len", "(v) → int", "length of a string, list or map"),
    ("abs", "(n) → number", "absolute value"),
    ("ceil", "(n) → float", "smallest integer value not below n"),
    ("floor", "(n) → float", "largest integer value not above n"),
    ("round", "(n) → float", "n rounded half away from zero"),
    ("int", "(v) → int", "v as an integer (parses strings)"),
    ("float", "(v) → float", "v as a float (parses strings)"),
    (
        "max",
        "(n, …) → number",
        "the largest argument (or item of one list)",
    ),
    (
        "min",
        "(n, …) → number",
        "the smallest argument (or item of one list)",
    ),
    ("mean", "(n, …) → float", "the average of the numbers"),
    ("median", "(n, …) → float", "the median of the numbers"),
    (
        "trim",
        "(s, [chars]) → string",
        "s without leading and trailing whitespace (or chars)",
    ),
    ("trimPrefix", "(s, prefix) → string", "s without the prefix"),
    ("trimSuffix", "(s, suffix) → string", "s without the suffix"),
    ("upper", "(s) → string", "s in upper case"),
    ("lower", "(s) → string", "s in lower case"),
    (
        "splitAfter",
        "(s, sep, [n]) → list",
        "s cut after every separator",
    ),
    (
        "replace",
        "(s, old, new) → string",
        "every old in s replaced by new",
    ),
    ("repeat", "(s, n) → string", "s repeated n times"),
    (
        "indexOf",
        "(s, sub) → int",
        "byte index of the first sub in s, or -1",
    ),
    (
        "lastIndexOf",
        "(s, sub) → int",
        "byte index of the last sub in s, or -1",
    ),
    (
        "hasPrefix",
        "(s, prefix) → bool",
        "whether s starts with prefix",
    ),
    (
        "hasSuffix",
        "(s, suffix) → bool",
        "whether s ends with suffix",
    ),
    (
        "join",
        "(list, [sep]) → string",
        "the items joined with sep",
    ),
    ("keys", "(map) → list", "the keys of a map"),
    ("values", "(map) → list", "the values of a map"),
    ("toPairs", "(map) → list", "[key, value] pairs of a map"),
    ("fromPairs", "(list) → map", "a map from [key, value] pairs"),
    ("concat", "(list, …) → list", "the lists one after another"),
    (
        "flatten",
        "(list) → list",
        "nested lists flattened into one",
    ),
    (
        "uniq",
        "(list) → list",
        "the items without repeats, first seen order",
    ),
    ("first", "(list) → any", "the first item, or nil"),
    ("last", "(list) → any", "the last item, or nil"),
    ("take", "(list, n) → list", "the first n items"),
    ("get", "(v, key) → any", "v[key], or nil when absent"),
    (
        "sort",
        "(list, [order]) → list",
        "the items sorted (\"asc\" or \"desc\")",
    ),
    ("reverse", "(list) → list", "the items in reverse order"),
    ("toJSON", "(v) → string", "v as indented JSON"),
    ("toBase64", "(s) → string", "s encoded as standard base64"),
    ("fromBase64", "(s) → string", "decodes standard base64 text"),
    ("fromJSON", "(s) → any", "parses JSON text"),
    ("type", "(v) → string", "the type name of v"),
    ("bitand", "(a, b) → int", "bitwise and"),
    ("bitor", "(a, b) → int", "bitwise or"),
    ("bitxor", "(a, b) → int", "bitwise exclusive or"),
    ("bitnand", "(a, b) → int", "bitwise and-not"),
    ("bitshl", "(a, n) → int", "a shifted left by n bits"),
    (
        "bitshr",
        "(a, n) → int",
        "a shifted right by n bits (sign kept)",
    ),
    (
        "bitushr",
        "(a, n) → int",
        "a shifted right by n bits (zero filled)",
    ),
    ("bitnot", "(a) → int", "bitwise not"),
    (
        "all",
        "(list, predicate) → bool",
        "whether every item satisfies the predicate (`#` is the item)",
    ),
    (
        "none",
        "(list, predicate) → bool",
        "whether no item satisfies the predicate",
    ),
    (
        "any",
        "(list, predicate) → bool",
        "whether some item satisfies the predicate",
    ),
    (
        "one",
        "(list, predicate) → bool",
        "whether exactly one item satisfies the predicate",
    ),
    (
        "filter",
        "(list, predicate) → list",
        "the items that satisfy the predicate",
    ),
    ("map", "(list, expr) → list", "expr of every item (`#`)"),
    (
        "find",
        "(list, predicate) → any",
        "the first item that satisfies the predicate",
    ),
    (
        "findIndex",
        "(list, predicate) → int",
        "the index of the first such item, or -1",
    ),
    (
        "findLast",
        "(list, predicate) → any",
        "the last item that satisfies the predicate",
    ),
    (
        "findLastIndex",
        "(list, predicate) → int",
        "the index of the last such item, or -1",
    ),
    ("groupBy", "(list, expr) → map", "the items grouped by expr"),
    (
        "count",
        "(list, [predicate]) → int",
        "how many items satisfy the predicate (or are true)",
    ),
    (
        "sum",
        "(list, [expr]) → number",
        "the sum of the items (or of expr)",
    ),
    (
        "sortBy",
        "(list, expr, [order]) → list",
        "the items sorted by expr",
    ),
    (
        "reduce",
        "(list, expr, [initial]) → any",
        "folds the list (`#acc` and `#`)",
    ),
];

fn ty(t: Ty) -> &'static str {
    match t {
        Ty::Any => "any",
        Ty::Str => "string",
        Ty::Int => "int",
        Ty::Float => "float",
        Ty::Bool => "bool",
        Ty::List => "list",
        Ty::Map => "map",
    }
}

fn signature(name: &str, sig: &Signature) -> String {
    let mut params: Vec<String> = sig.params.iter().map(|&t| ty(t).to_string()).collect();
    if let Some(t) = sig.variadic {
        params.push(format!("{}…", ty(t)));
    }
    format!("{name}({}) → {}", params.join(", "), ty(sig.ret))
}

/// Every function, Windsor's first (they replace builtins of the same name).
pub fn all() -> Vec<Function> {
    let mut out: Vec<Function> = crate::expr::windsor::functions()
        .iter()
        .map(|f| Function {
            name: f.name,
            signature: f
                .sigs
                .iter()
                .map(|s| signature(f.name, s))
                .collect::<Vec<_>>()
                .join(" | "),
            help: WINDSOR_HELP
                .iter()
                .find(|(n, _)| *n == f.name)
                .map_or("", |(_, h)| h),
            windsor: true,
        })
        .collect();
    for (name, sig, help) in BUILTINS {
        if out.iter().any(|f| f.name == *name) {
            continue;
        }
        out.push(Function {
            name,
            signature: format!("{name}{sig}"),
            help,
            windsor: false,
        });
    }
    out
}

pub fn find(name: &str) -> Option<Function> {
    all().into_iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_function_has_help_and_nothing_else_does() {
        let table = all();
        let mut engine: Vec<&str> = crate::expr::builtin_names()
            .chain(crate::expr::windsor::functions().iter().map(|f| f.name))
            .collect();
        engine.sort_unstable();
        engine.dedup();
        let mut ours: Vec<&str> = table.iter().map(|f| f.name).collect();
        ours.sort_unstable();
        assert_eq!(ours, engine);
        assert!(
            table.iter().all(|f| !f.help.is_empty()),
            "a function without help"
        );
        let cidr = find("cidrsubnets").map(|f| f.signature);
        assert_eq!(cidr.as_deref(), Some("cidrsubnets(string, int…) → list"));
    }
}
