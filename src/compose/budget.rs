//! The output budget (issue 14): references can multiply a small template into an
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

/// Where inside `value` its estimated size passes `budget` (`""` for the value
/// itself, else `.key` / `[index]` steps), or None when it fits.
fn crossing(value: &Value, budget: usize) -> Option<String> {
    size_within(value, budget).err()
}

/// The estimated size of `value` when it is at most `budget`, else where it crossed.
pub fn size_within(value: &Value, budget: usize) -> Result<usize, String> {
    let mut walk = Walk {
        used: 0,
        budget,
        path: Vec::new(),
    };
    if walk.visit(value) {
        Ok(walk.used)
    } else {
        Err(walk.spelled())
    }
}

/// `64 MiB`, or plain bytes for budgets that are not whole MiB.
pub fn amount(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The help line of every budget error.
pub const HELP: &str = "values that repeat other values multiply; if the size is intended, raise the budget with --max-output MIB";

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
}

impl<'v> Walk<'v> {
    /// False once the budget is spent; `path` then leads to the value that spent it.
    fn visit(&mut self, value: &'v Value) -> bool {
        let own = match value {
            Value::Nil | Value::Bool(_) => 5,
            Value::Int(_) | Value::Uint(_) | Value::Float(_) => 8,
            Value::Str(s) => s.len() + 2,
            Value::List(_) | Value::Map(_) => 2,
        };
        self.used = self.used.saturating_add(own);
        if self.used > self.budget {
            return false;
        }
        match value {
            Value::List(items) => {
                let components =
                    matches!(self.path.as_slice(), [Step::Key("terraform" | "kustomize")]);
                for (i, item) in items.iter().enumerate() {
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
            }
            Value::Map(map) => {
                for (key, item) in map.iter() {
                    self.used = self.used.saturating_add(key.len() + 4);
                    self.path.push(Step::Key(key));
                    if !self.visit(item) {
                        return false;
                    }
                    self.path.pop();
                }
            }
            _ => {}
        }
        self.used <= self.budget
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
}
