//! Rego policies over what bpc produces (docs/policy.md): the composed blueprint, the
//! rendered Flux objects and the Terraform variables of a context, evaluated with
//! conftest's conventions (packages `main` or `--namespace`, rules `deny`,
//! `violation`, `warn`, exceptions by `exception` rules), each finding traced back to
//! the facet line that produced what it is about.

pub mod evaluate;
pub mod input;
pub mod load;
pub mod trace;

pub use evaluate::Budget;
pub use load::{load, Policies, RuleKind};

use crate::compose::face::Composition;
use crate::files::{Diagnostic, Severity};
use std::collections::BTreeMap;

/// One finding of one context.
#[derive(Clone, Debug)]
pub struct Finding {
    pub severity: Severity,
    /// `package.rule`: `main.deny_unpinned`.
    pub rule: String,
    pub message: String,
    /// The input document it is about (`blueprint.yaml`, `flux/kustomizations/dns.json`).
    pub input: String,
    pub context: String,
    pub place: Option<trace::Place>,
    /// The object the rule returned, when it returned one instead of a string.
    pub object: Option<serde_json::Value>,
}

impl Finding {
    /// The finding as a diagnostic: its message and rule, at the template line it
    /// traces to, with the contexts it was found in and the input.
    pub fn diagnostic(&self, contexts: &[String]) -> Diagnostic {
        let message = if self.message.is_empty() {
            format!("policy rule `{}` holds", self.rule)
        } else {
            self.message.clone()
        };
        let mut d = Diagnostic::new(self.severity, format!("{message} [policy {}]", self.rule));
        if let Some(place) = &self.place {
            d = d.with_primary(place.span, place.label.clone());
        }
        let names: Vec<String> = contexts.iter().map(|n| format!("`{n}`")).collect();
        let noun = if names.len() == 1 {
            "context"
        } else {
            "contexts"
        };
        d.with_note(format!("{noun} {}, in {}", names.join(", "), self.input))
    }
}

/// What the policies found in one context.
#[derive(Debug, Default)]
pub struct Checked {
    pub findings: Vec<Finding>,
    /// Findings an `exception` rule let through.
    pub excepted: usize,
    /// Input documents evaluated.
    pub inputs: usize,
}

/// Evaluates `policies` over context `name`: its composition, the files its render
/// made (rendered as JSON), and its values masked by `schema`.
pub fn check_context(
    policies: &Policies,
    name: &str,
    composition: &Composition,
    rendered: &BTreeMap<String, Vec<u8>>,
    schema: Option<&crate::compose::face::Schema>,
    budget: Budget,
) -> Result<Checked, Diagnostic> {
    let inputs = input::gather(composition, rendered)?;
    let data = input::context_data(name, &composition.context, schema);
    let texts = inputs.iter().map(|i| i.json.clone()).collect();
    let outcome = evaluate::evaluate(policies, data, texts, budget)
        .map_err(|d| d.with_context(format!("in context `{name}`")))?;
    let findings = outcome
        .findings
        .into_iter()
        .filter_map(|raw| {
            let rule = policies.rules.get(raw.rule)?;
            let doc = inputs.get(raw.input)?;
            let severity = match rule.kind {
                RuleKind::Deny | RuleKind::Violation => Severity::Error,
                RuleKind::Warn => Severity::Warning,
            };
            Some(Finding {
                severity,
                rule: format!("{}.{}", rule.package, rule.name),
                message: raw.message,
                input: doc.name.clone(),
                context: name.to_string(),
                place: trace::place(composition, &doc.subject, raw.path.as_deref()),
                object: raw.object,
            })
        })
        .collect();
    Ok(Checked {
        findings,
        excepted: outcome.excepted,
        inputs: inputs.len(),
    })
}
