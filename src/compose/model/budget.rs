//! The output budget: references can multiply a small template into an
//! enormous blueprint (ten references to a block that holds ten references …). Values
//! are shared while expressions pass them around, so the blow-up happens where an
//! expression's result is copied into a component; each such result is measured
//! there, and the composed blueprint once more before anything is written. The walk
//! stops at the first value that takes the total past the budget, so measuring costs
//! at most the budget, and that value's path is what the error names.

use crate::expr::Value;
use crate::files::Diagnostic;
use crate::template::identity::component_id_of;

/// Checks the blueprint against `budget` bytes (an estimate of its compact JSON size).
pub fn check(blueprint: &Value, budget: usize) -> Result<(), Diagnostic> {
    check_knowing(blueprint, budget, &Sizes::default())
}

/// The estimated sizes of some components' values, by the address of their map
/// (what [`size_within`] gives for each): a blueprint whose other parts and these
/// sizes add up to no more than the budget is not walked through them again.
pub type Sizes = rustc_hash::FxHashMap<usize, usize>;

/// As [`check`], taking the sizes of the components listed in `known` from it.
pub(crate) fn check_knowing(
    blueprint: &Value,
    budget: usize,
    known: &Sizes,
) -> Result<(), Diagnostic> {
    if !known.is_empty() {
        let mut walk = Walk {
            used: 0,
            budget,
            path: Vec::new(),
            text: None,
            known,
            threads: 1,
        };
        if walk.visit(blueprint) {
            return Ok(());
        }
    }
    // Over the budget: walked whole, for the path where it crossed.
    let Some(path) = crossing(blueprint, budget) else {
        return Ok(());
    };
    let path = path.trim_start_matches('.');
    Err(Diagnostic::error(format!(
        "the composed blueprint is larger than the output budget of {}; it was crossed at `{path}`",
        amount(budget)
    ))
    .with_note(format!(
        "`bpc explain {}` shows where that value came from",
        explain_path(path)
    ))
    .with_help(HELP))
}

/// As [`check`], for a blueprint whose components were left to the writer: `apart`
/// is what [`check_knowing`] would add for them (each component's [`size_within`],
/// plus one), and `whole` gives the blueprint with them, for the message when it
/// does not fit.
pub(crate) fn check_apart(
    blueprint: &Value,
    budget: usize,
    apart: usize,
    whole: impl FnOnce() -> Value,
) -> Result<(), Diagnostic> {
    if fits_apart(blueprint, budget, apart) {
        return Ok(());
    }
    check_knowing(&whole(), budget, &Sizes::default())
}

/// Whether [`check_apart`] lets the blueprint through.
pub(crate) fn fits_apart(blueprint: &Value, budget: usize, apart: usize) -> bool {
    let none = Sizes::default();
    let mut walk = Walk {
        used: apart,
        budget,
        path: Vec::new(),
        text: None,
        known: &none,
        threads: 1,
    };
    walk.visit(blueprint)
}

/// Where inside `value` its estimated size passes `budget` (`""` for the value
/// itself, else `.key` / `[index]` steps), or None when it fits.
fn crossing(value: &Value, budget: usize) -> Option<String> {
    size_within(value, budget).err()
}

/// The estimated size of `value` when it is at most `budget`, else where it crossed.
pub(crate) fn size_within(value: &Value, budget: usize) -> Result<usize, String> {
    let mut walk = Walk {
        used: 0,
        budget,
        path: Vec::new(),
        text: None,
        known: &Sizes::default(),
        threads: 1,
    };
    if walk.visit(value) {
        Ok(walk.used)
    } else {
        Err(walk.spelled())
    }
}

/// Checks that `value` written as text — indented JSON or YAML, whichever is asked
/// for — fits in `budget` bytes, before any of the text is built. Deep nesting costs
/// little as compact JSON but its indentation grows with every level, so this walk
/// charges each line its indentation, each string its escapes and each line of a
/// block string its indentation too: an upper bound of both writers' output.
/// `what` names the document in the error (`the blueprint`, `the values`).
pub fn check_text(value: &Value, budget: usize, what: &str) -> Result<(), Diagnostic> {
    check_text_on(crate::parallel::cores(), value, budget, what)
}

/// [`check_text`], the items of long lists measured on up to `threads` threads.
fn check_text_on(
    threads: usize,
    value: &Value,
    budget: usize,
    what: &str,
) -> Result<(), Diagnostic> {
    let none = Sizes::default();
    let walk = |threads| Walk {
        used: 0,
        budget,
        path: Vec::new(),
        text: Some(0),
        known: &none,
        threads,
    };
    if threads > 1 && walk(threads).visit(value) {
        return Ok(());
    }
    // Over the budget (or one thread): walked in order, for the path where it crossed.
    let mut walk = walk(1);
    if walk.visit(value) {
        return Ok(());
    }
    Err(text_error(walk.spelled(), budget, what))
}

/// The error for `value`, whose text a writer found larger than `budget` bytes (see
/// [`check_text`]): the walk names where it crossed.
pub(crate) fn text_over(value: &Value, budget: usize, what: &str) -> Diagnostic {
    match check_text_on(1, value, budget, what) {
        Err(d) => d,
        // The walk charges at least what either writer writes, so it crosses too.
        Ok(()) => text_error(String::new(), budget, what),
    }
}

fn text_error(path: String, budget: usize, what: &str) -> Diagnostic {
    let path = path.trim_start_matches('.');
    let at = if path.is_empty() {
        String::new()
    } else {
        format!("; it was crossed at `{path}`")
    };
    Diagnostic::error(format!(
        "{what} written as text is larger than the output budget of {}{at}",
        amount(budget)
    ))
    .with_note("nothing was written; the size counts the indentation of every nested level")
    .with_help(HELP)
}

/// The address a component value's map is known by in [`Sizes`].
pub(crate) fn map_address(map: &std::sync::Arc<crate::expr::Map>) -> usize {
    std::sync::Arc::as_ptr(map) as usize
}

/// `64 MiB`, or plain bytes for budgets that are not whole MiB.
pub(crate) fn amount(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The help line of every budget error.
pub(crate) const HELP: &str = "values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB";

/// The part of `path` that `explain` understands (components and map keys).
fn explain_path(path: &str) -> &str {
    path.find('[').map_or(path, |i| &path[..i])
}

/// One step of the path to the value being measured, kept without allocating: the
/// walk visits every element, the path is only spelled out on failure.
enum Step<'v> {
    Key(&'v str),
    Index(usize),
    Component(&'v Value, usize),
}

struct Walk<'v> {
    used: usize,
    budget: usize,
    path: Vec<Step<'v>>,
    /// For [`check_text`]: the nesting level of the value being visited (the
    /// indentation of each of its lines is twice that).
    text: Option<usize>,
    /// Sizes of component values known already (see [`check_knowing`]).
    known: &'v Sizes,
    /// Threads the items of a long list may be measured on. With more than one, a
    /// walk that crosses the budget in such a list does not say where.
    threads: usize,
}

/// Bytes `s` takes as an escaped JSON or double-quoted YAML string, or as a YAML block
/// whose lines are indented `indent`: the larger of the two.
fn text_cost(s: &str, indent: usize) -> usize {
    // Most strings have nothing to escape and no line break: one byte each.
    if s.bytes()
        .all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b != 0x7f)
    {
        return s.len().saturating_add(2);
    }
    let mut cost = 2usize;
    for b in s.bytes() {
        cost = cost.saturating_add(match b {
            b'\n' => 2usize.max(indent + 1),
            b'"' | b'\\' | b'\t' | b'\r' => 2,
            0..=0x1f | 0x7f => 6,
            _ => 1,
        });
    }
    cost
}

impl<'v> Walk<'v> {
    /// False once the budget is spent; `path` then leads to the value that spent it.
    fn visit(&mut self, value: &'v Value) -> bool {
        let own = match (value, self.text) {
            (Value::Nil | Value::Bool(_), _) => 5,
            (Value::Int(_) | Value::Uint(_), Some(_)) => 20,
            (Value::Float(_), Some(_)) => 24,
            (Value::Int(_) | Value::Uint(_) | Value::Float(_), None) => 8,
            (Value::Str(s), Some(level)) => text_cost(s, 2 * level + 2),
            (Value::Str(s), None) => s.len() + 2,
            (Value::List(_) | Value::Map(_), Some(level)) => 2 * level + 3,
            (Value::List(_) | Value::Map(_), None) => 2,
        };
        self.used = self.used.saturating_add(own);
        if self.used > self.budget {
            return false;
        }
        match value {
            Value::List(items) => {
                let components =
                    matches!(self.path.as_slice(), [Step::Key("terraform" | "kustomize")]);
                // The blueprint's component lists, whose items `known` may hold.
                let listed = matches!(
                    self.path.as_slice(),
                    [Step::Key("terraform" | "kustomize" | "flux")]
                );
                let line = self.text.map_or(0, |level| 2 * level + 4);
                self.text = self.text.map(|level| level + 1);
                let measured = self.measured_apart(items);
                for (i, item) in items.iter().enumerate() {
                    self.used = self.used.saturating_add(line);
                    let size = match item {
                        _ if measured.is_some() => measured.as_ref().map(|sizes| &sizes[i]),
                        Value::Map(map) if listed => self.known.get(&map_address(map)),
                        _ => None,
                    };
                    if let Some(size) = size {
                        self.used = self.used.saturating_add(size + 1);
                        if self.used > self.budget {
                            return false;
                        }
                        continue;
                    }
                    self.path.push(if components {
                        Step::Component(item, i)
                    } else {
                        Step::Index(i)
                    });
                    if !self.visit(item) {
                        return false;
                    }
                    self.path.pop();
                    self.used = self.used.saturating_add(1);
                }
                self.text = self.text.map(|level| level - 1);
            }
            Value::Map(map) => {
                let line = self.text.map_or(0, |level| 2 * level + 4);
                self.text = self.text.map(|level| level + 1);
                for (key, item) in map.iter() {
                    let key_cost = match self.text {
                        Some(level) => text_cost(key, 2 * level) + 4 + line,
                        None => key.len() + 4,
                    };
                    self.used = self.used.saturating_add(key_cost);
                    self.path.push(Step::Key(key));
                    if !self.visit(item) {
                        return false;
                    }
                    self.path.pop();
                }
                self.text = self.text.map(|level| level - 1);
            }
            _ => {}
        }
        self.used <= self.budget
    }

    /// The size of each of `items` (at the walk's level) measured on threads of their
    /// own, when the list is long and nothing is known of its items; each size is
    /// what visiting the item adds, or more than the budget (the walk of an item
    /// stops there too, shared subtrees would otherwise make it long).
    fn measured_apart(&self, items: &'v [Value]) -> Option<Vec<usize>> {
        let threads = self
            .threads
            .min(items.len() / crate::parallel::ITEMS_PER_THREAD);
        if threads < 2 || !self.known.is_empty() {
            return None;
        }
        let (text, known, budget) = (self.text, self.known, self.budget);
        Some(crate::parallel::map(items, threads, |item| {
            let mut walk = Walk {
                used: 0,
                budget,
                path: Vec::new(),
                text,
                known,
                threads: 1,
            };
            walk.visit(item);
            walk.used
        }))
    }

    fn spelled(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
                Step::Component(item, i) => match component_id_of(item) {
                    Some(id) => {
                        out.push('.');
                        out.push_str(&id);
                    }
                    None => out.push_str(&format!("[{i}]")),
                },
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Map;

    #[test]
    fn names_the_value_that_crossed_the_budget() {
        let mut component = Map::default();
        component.insert("path".into(), Value::from("net"));
        let mut inputs = Map::default();
        inputs.insert("small".into(), Value::from("x"));
        inputs.insert(
            "big".into(),
            Value::list(vec![Value::from("y".repeat(100)); 3]),
        );
        component.insert("inputs".into(), Value::map(inputs));
        let mut blueprint = Map::default();
        blueprint.insert("terraform".into(), Value::list(vec![Value::map(component)]));
        let blueprint = Value::map(blueprint);
        assert!(check(&blueprint, 1000).is_ok());
        let err = check(&blueprint, 250).expect_err("over");
        assert!(
            err.message.contains("`terraform.net.inputs.big[1]`"),
            "{}",
            err.message
        );
        assert!(err.notes[0].contains("bpc explain terraform.net.inputs.big"));
    }

    #[test]
    fn long_lists_measured_on_several_threads_give_the_verdict_and_message_of_one() {
        let item = |k: usize| {
            let mut c = Map::default();
            c.insert("name".into(), Value::from(format!("c{k}")));
            c.insert("text".into(), Value::from("line\n".repeat(k % 3)));
            c.insert("n".into(), Value::list(vec![Value::Int(k as i64)]));
            Value::map(c)
        };
        let mut blueprint = Map::default();
        blueprint.insert("kind".into(), Value::from("Blueprint"));
        blueprint.insert(
            "terraform".into(),
            Value::list((0..1300).map(item).collect()),
        );
        let blueprint = Value::map(blueprint);
        let total = (1..)
            .map(|k| 1000 * k)
            .find(|&b| check_text_on(1, &blueprint, b, "it").is_ok())
            .expect("fits some budget");
        // Around the total, and below what one item takes.
        for budget in (total - 1100..total + 10).step_by(7).chain([10, 60]) {
            let one = check_text_on(1, &blueprint, budget, "it").map_err(|d| d.message);
            for threads in [2, 3] {
                let many = check_text_on(threads, &blueprint, budget, "it").map_err(|d| d.message);
                assert_eq!(many, one, "budget {budget}, {threads} threads");
            }
        }
    }

    #[test]
    fn known_component_sizes_give_the_verdict_and_message_of_a_whole_walk() {
        let component = |name: &str, size: usize| {
            let mut c = Map::default();
            c.insert("name".into(), Value::from(name));
            c.insert("path".into(), Value::from("p".repeat(size)));
            Value::map(c)
        };
        let (a, b) = (component("a", 10), component("b", 40));
        let mut blueprint = Map::default();
        blueprint.insert("kind".into(), Value::from("Blueprint"));
        blueprint.insert("terraform".into(), Value::list(vec![a.clone()]));
        blueprint.insert("flux".into(), Value::list(vec![b.clone()]));
        let blueprint = Value::map(blueprint);
        let mut known = Sizes::default();
        for v in [&a, &b] {
            let (Value::Map(map), Ok(size)) = (v, size_within(v, usize::MAX)) else {
                panic!("a map with a size");
            };
            known.insert(map_address(map), size);
        }
        let total = size_within(&blueprint, usize::MAX).expect("a size");
        for budget in total - 60..total + 3 {
            let whole = check(&blueprint, budget).map_err(|d| d.message);
            let knowing = check_knowing(&blueprint, budget, &known).map_err(|d| d.message);
            assert_eq!(knowing, whole, "budget {budget} of {total}");
        }
        // A wrong size shows that the known ones are used.
        let wrong: Sizes = known.keys().map(|k| (*k, 0)).collect();
        assert!(check_knowing(&blueprint, total - 20, &wrong).is_ok());
    }
}
