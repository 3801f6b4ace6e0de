//! Evaluating the loaded policies over one context's inputs, under a time and a memory
//! budget.
//!
//! The engine checks its own clock as it works (regorus's execution timer): a rule
//! still running when the context's time is spent stops with an error naming it. What
//! the engine allocates is counted by bpc's allocator on the thread the evaluation
//! runs on ([`crate::alloc::run_metered`]): past the memory budget, or past the
//! deadline inside a builtin that does not look at the clock, the thread is stopped at
//! its next allocation and abandoned, and the error names the rule it was in.

use super::load::{Policies, RuleKind, RuleRef};
use crate::alloc::Stopped;
use crate::files::Diagnostic;
use regorus::Value;
use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long and how much memory the policies may take over one context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub timeout: Duration,
    pub memory: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            timeout: Duration::from_secs(10),
            memory: 1024 * 1024 * 1024,
        }
    }
}

/// One finding as a rule returned it.
#[derive(Clone, Debug, PartialEq)]
pub struct Raw {
    /// Index into [`Policies::rules`].
    pub rule: usize,
    /// Index into the inputs.
    pub input: usize,
    pub message: String,
    /// The `path` the rule gave (keys and indices into its input), if any.
    pub path: Option<Vec<PathSeg>>,
    /// The whole object the rule returned, when it returned one.
    pub object: Option<serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// What the policies said over one context.
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Vec<Raw>,
    /// Findings an `exception` rule let through.
    pub excepted: usize,
}

/// No rule is being evaluated (the inputs are being read).
const NO_RULE: usize = usize::MAX;

/// Evaluates every finding rule of `policies` on each input (JSON texts), with
/// `data` (JSON) added to the policies' data.
pub fn evaluate(
    policies: &Policies,
    data: String,
    inputs: Vec<String>,
    budget: Budget,
) -> Result<Outcome, Diagnostic> {
    let deadline = Instant::now() + budget.timeout;
    let current = Arc::new(AtomicUsize::new(NO_RULE));
    let engine = policies.engine.clone();
    let rules = policies.rules.clone();
    let exceptions = policies.exceptions.clone();
    let at = Arc::clone(&current);
    let job = move || run(engine, &rules, &exceptions, &data, &inputs, deadline, &at);
    // A little past the engine's own deadline, so that its clock speaks first
    // wherever it is looked at.
    let backstop = deadline + Duration::from_millis(500);
    match crate::alloc::run_metered("policy", budget.memory, backstop, job) {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(Failure::Engine { rule, error })) => {
            Err(engine_failure(policies, rule, &error, budget))
        }
        Ok(Err(Failure::Input(message))) => Err(Diagnostic::error(message)),
        Err(stopped) => {
            let rule = current.load(Ordering::SeqCst);
            Err(stopped_failure(policies, rule, stopped, budget))
        }
    }
}

enum Failure {
    Engine { rule: usize, error: String },
    Input(String),
}

fn run(
    mut engine: regorus::Engine,
    rules: &[RuleRef],
    exceptions: &[RuleRef],
    data: &str,
    inputs: &[String],
    deadline: Instant,
    current: &AtomicUsize,
) -> Result<Outcome, Failure> {
    let data =
        Value::from_json_str(data).map_err(|e| Failure::Input(format!("the context data: {e}")))?;
    engine
        .add_data(data)
        .map_err(|e| Failure::Input(format!("the context data: {e}")))?;
    let mut outcome = Outcome::default();
    for (index, text) in inputs.iter().enumerate() {
        current.store(NO_RULE, Ordering::SeqCst);
        let input = Value::from_json_str(text)
            .map_err(|e| Failure::Input(format!("a policy input is not JSON: {e}")))?;
        engine.set_input(input);
        let mut excepted: BTreeSet<(String, String)> = BTreeSet::new();
        for (e, rule) in exceptions.iter().enumerate() {
            // Exceptions are numbered after the finding rules.
            let value = eval(&mut engine, rule, rules.len() + e, deadline, current)?;
            for names in items(&value) {
                for name in items(names) {
                    if let Ok(name) = name.as_string() {
                        excepted.insert((rule.package.clone(), name.to_string()));
                    }
                }
            }
        }
        for (r, rule) in rules.iter().enumerate() {
            let value = eval(&mut engine, rule, r, deadline, current)?;
            let suffix = RuleKind::of(&rule.name).map_or("", |(_, s)| s);
            let exempt = excepted.contains(&(rule.package.clone(), suffix.to_string()));
            for item in findings_of(&value) {
                if exempt {
                    outcome.excepted += 1;
                    continue;
                }
                outcome.findings.push(raw(item, r, index));
            }
        }
    }
    current.store(NO_RULE, Ordering::SeqCst);
    Ok(outcome)
}

fn eval(
    engine: &mut regorus::Engine,
    rule: &RuleRef,
    index: usize,
    deadline: Instant,
    current: &AtomicUsize,
) -> Result<Value, Failure> {
    current.store(index, Ordering::SeqCst);
    let left = deadline.saturating_duration_since(Instant::now());
    engine.set_execution_timer_config(regorus::utils::limits::ExecutionTimerConfig {
        limit: left.max(Duration::from_millis(1)),
        check_interval: NonZeroU32::MIN,
    });
    engine.eval_rule(rule.query()).map_err(|e| Failure::Engine {
        rule: index,
        error: e.to_string(),
    })
}

/// The members of a set or array; a lone value as itself; nothing for undefined.
fn items(value: &Value) -> Vec<&Value> {
    match value {
        Value::Set(set) => set.iter().collect(),
        Value::Array(list) => list.iter().collect(),
        Value::Undefined | Value::Null => Vec::new(),
        other => vec![other],
    }
}

/// The findings a rule's value stands for: each member of a set or array; `false`
/// and empty collections are none.
fn findings_of(value: &Value) -> Vec<&Value> {
    match value {
        Value::Bool(false) => Vec::new(),
        _ => items(value),
    }
}

fn raw(item: &Value, rule: usize, input: usize) -> Raw {
    let json: serde_json::Value = serde_json::from_str(&item.to_json_str().unwrap_or_default())
        .unwrap_or(serde_json::Value::Null);
    let (message, path, object) = match &json {
        serde_json::Value::String(s) => (s.clone(), None, None),
        serde_json::Value::Object(map) => {
            let message = match map.get("msg") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => json.to_string(),
            };
            (
                message,
                map.get("path").and_then(path_of),
                Some(json.clone()),
            )
        }
        serde_json::Value::Bool(true) => (String::new(), None, None),
        other => (other.to_string(), None, None),
    };
    Raw {
        rule,
        input,
        message,
        path,
        object,
    }
}

/// A `path` a rule returned: a list of keys and indices, or a dotted string whose
/// all-digit parts are indices.
fn path_of(value: &serde_json::Value) -> Option<Vec<PathSeg>> {
    match value {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|s| match s {
                serde_json::Value::String(k) => Some(PathSeg::Key(k.clone())),
                serde_json::Value::Number(n) => n.as_u64().map(|i| PathSeg::Index(i as usize)),
                _ => None,
            })
            .collect(),
        serde_json::Value::String(text) => Some(
            text.split('.')
                .filter(|s| !s.is_empty())
                .map(|s| match s.parse::<usize>() {
                    Ok(i) => PathSeg::Index(i),
                    Err(_) => PathSeg::Key(s.to_string()),
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The rule numbered `rule` (finding rules first, then exceptions).
fn rule_label(policies: &Policies, rule: usize) -> Option<&RuleRef> {
    match rule.checked_sub(policies.rules.len()) {
        Some(e) => policies.exceptions.get(e),
        None => policies.rules.get(rule),
    }
}

fn engine_failure(policies: &Policies, rule: usize, error: &str, budget: Budget) -> Diagnostic {
    let over_time = error.contains("execution exceeded time limit")
        || error.contains("TimeLimitExceeded")
        || error.contains("time limit");
    let Some(r) = rule_label(policies, rule) else {
        return Diagnostic::error(format!("policy evaluation failed: {error}"));
    };
    let name = format!("{}.{}", r.package, r.name);
    if over_time {
        return over(r, &name, &format!("did not finish within {} (the policy time budget)", seconds(budget.timeout)))
            .with_help("a rule that loops over large ranges or joins inputs with themselves can take unbounded time; --policy-timeout SECONDS raises the budget");
    }
    let message = error
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| error.trim());
    Diagnostic::error(format!("policy rule `{name}` failed: {message}"))
        .with_primary(r.at, "this rule")
}

fn stopped_failure(
    policies: &Policies,
    rule: usize,
    stopped: Stopped,
    budget: Budget,
) -> Diagnostic {
    let what = match stopped {
        Stopped::OverMemory => format!(
            "held more than {} MiB (the policy memory budget)",
            budget.memory / (1024 * 1024)
        ),
        Stopped::OverTime => format!(
            "did not finish within {} (the policy time budget)",
            seconds(budget.timeout)
        ),
        Stopped::Failed => "stopped: the policy engine failed internally".to_string(),
    };
    let help = match stopped {
        Stopped::OverMemory => "--policy-memory MIB raises the budget",
        _ => "--policy-timeout SECONDS raises the budget",
    };
    match rule_label(policies, rule) {
        Some(r) => over(r, &format!("{}.{}", r.package, r.name), &what).with_help(help),
        None => Diagnostic::error(format!("reading the policy inputs {what}")).with_help(help),
    }
}

fn over(rule: &RuleRef, name: &str, what: &str) -> Diagnostic {
    Diagnostic::error(format!("policy rule `{name}` {what}")).with_primary(rule.at, "this rule")
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}
