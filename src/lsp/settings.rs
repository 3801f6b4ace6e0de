//! The server's settings: which context hovers and diagnostics use, and how long to
//! wait after an edit before analysing. They come from `initializationOptions` and
//! `workspace/didChangeConfiguration`, either bare (`{"context": "prod"}`) or under a
//! `bpc` section (`{"bpc": {"context": "prod"}}`).

use crate::expr::host::JsonnetLimits;
use serde_json::Value;

/// Quiet time after the last edit before the template is analysed again.
pub const DEFAULT_DEBOUNCE_MS: u64 = 30;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `bpc.context`; `None` for the project's default (as `bpc compose` picks it).
    pub context: Option<String>,
    pub debounce_ms: u64,
    /// Run the template's tests after each analysis (`bpc.tests`, default on).
    pub tests: bool,
    /// Reuse the last analysis's compositions and check findings where the edit did
    /// not reach them (`bpc.incremental`, default on; off checks and composes
    /// everything each time, to compare or to rule the reuse out).
    pub incremental: bool,
    /// `bpc.jsonnetMemoryMiB` and `bpc.jsonnetTimeoutSeconds`: the budgets of one
    /// `jsonnet()` evaluation, as `--jsonnet-memory` and `--jsonnet-timeout` set them.
    pub jsonnet: JsonnetLimits,
    /// `bpc.pull`: may the server pull `oci://` blueprints missing from the project's
    /// cache (default off: opening a cloned repository must not contact a host of the
    /// repository's choosing until the user says so).
    pub pull: bool,
    /// `bpc.policies`: Rego policy files or directories (relative to the project root)
    /// whose findings on the current context are shown at the facet lines they trace
    /// to (docs/policy.md); none by default.
    pub policies: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            context: None,
            debounce_ms: DEFAULT_DEBOUNCE_MS,
            tests: true,
            incremental: true,
            jsonnet: JsonnetLimits::default(),
            pull: false,
            policies: Vec::new(),
        }
    }
}

impl Settings {
    /// These settings with what `value` sets; keys it does not name stay as they are.
    /// An empty context string means the project's default again.
    pub fn updated(&self, value: &Value) -> Settings {
        let section = value.get("bpc").unwrap_or(value);
        let mut next = self.clone();
        if let Some(context) = section.get("context") {
            next.context = context
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_string);
        }
        if let Some(ms) = section.get("debounceMs").and_then(Value::as_u64) {
            next.debounce_ms = ms.min(5_000);
        }
        if let Some(tests) = section.get("tests").and_then(Value::as_bool) {
            next.tests = tests;
        }
        if let Some(incremental) = section.get("incremental").and_then(Value::as_bool) {
            next.incremental = incremental;
        }
        if let Some(pull) = section.get("pull").and_then(Value::as_bool) {
            next.pull = pull;
        }
        if let Some(policies) = section.get("policies") {
            next.policies = match policies {
                Value::String(one) if !one.is_empty() => vec![one.clone()],
                Value::Array(many) => many
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
        }
        if let Some(mib) = section.get("jsonnetMemoryMiB").and_then(Value::as_u64) {
            let mib = usize::try_from(mib.clamp(1, 1 << 20)).unwrap_or(1 << 20);
            next.jsonnet.memory = mib * 1024 * 1024;
        }
        if let Some(seconds) = section.get("jsonnetTimeoutSeconds").and_then(Value::as_f64) {
            if seconds.is_finite() && seconds > 0.0 {
                next.jsonnet.timeout = std::time::Duration::from_secs_f64(seconds.min(3600.0));
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_or_under_bpc() {
        let s = Settings::default().updated(&json!({"context": "prod", "debounceMs": 5}));
        assert_eq!(s.context.as_deref(), Some("prod"));
        assert_eq!(s.debounce_ms, 5);
        let s = s.updated(&json!({"bpc": {"context": "", "tests": false}}));
        assert_eq!(s.context, None);
        assert!(!s.tests);
        assert_eq!(s.debounce_ms, 5);
        assert!(s.incremental);
        assert!(!s.updated(&json!({"incremental": false})).incremental);
        let budgets = s.updated(&json!({"jsonnetMemoryMiB": 64, "jsonnetTimeoutSeconds": 0.5}));
        assert_eq!(budgets.jsonnet.memory, 64 * 1024 * 1024);
        assert_eq!(
            budgets.jsonnet.timeout,
            std::time::Duration::from_millis(500)
        );
        assert!(!s.pull);
        assert!(s.updated(&json!({"bpc": {"pull": true}})).pull);
        let refused = s.updated(&json!({"jsonnetTimeoutSeconds": -1}));
        assert_eq!(refused.jsonnet, JsonnetLimits::default());
    }
}
