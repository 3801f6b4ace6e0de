//! A test case's `policies:` (docs/testing.md): which findings the policies of
//! `bpc test --policy DIR` must give on the case's blueprint, render and values.
//!
//! ```yaml
//! policies:
//!   deny: ["runs a single NAT gateway"]   # each text in some denial; no other denial
//!   warn: []                              # no warning
//! ```
//!
//! A kind left out is not checked.

use super::matcher::Mismatch;
use crate::files::{Diagnostic, Severity};
use crate::policy::Finding;
use crate::yaml::{Node, NodeKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyExpect {
    /// Texts the denials (`deny`, `violation`) must contain, one denial each at least,
    /// every denial containing one of them.
    pub deny: Option<Vec<String>>,
    /// The same for warnings.
    pub warn: Option<Vec<String>>,
}

/// Reads a case's `policies:` value.
pub fn parse(node: &Node) -> Result<PolicyExpect, Diagnostic> {
    let NodeKind::Map(entries) = &node.kind else {
        return Err(
            Diagnostic::error("`policies` must be a map with `deny` and/or `warn` lists")
                .with_primary(node.span, "expected a map"),
        );
    };
    let mut expect = PolicyExpect {
        deny: None,
        warn: None,
    };
    for (key, value) in entries {
        let slot = match &*key.name {
            "deny" => &mut expect.deny,
            "warn" => &mut expect.warn,
            other => {
                return Err(Diagnostic::error(format!(
                    "unknown key `{other}` in `policies` (expected `deny` or `warn`)"
                ))
                .with_primary(key.span, "here"))
            }
        };
        let texts = match &value.kind {
            NodeKind::Seq(items) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_string).ok_or_else(|| {
                        Diagnostic::error(format!(
                            "`policies.{}` lists the texts of findings: strings",
                            key.name
                        ))
                        .with_primary(item.span, "expected a string")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            NodeKind::Null => Vec::new(),
            _ => {
                return Err(Diagnostic::error(format!(
                    "`policies.{}` must be a list of texts",
                    key.name
                ))
                .with_primary(value.span, "expected a list"))
            }
        };
        *slot = Some(texts);
    }
    Ok(expect)
}

/// What differs between `expect` and the policies' `findings`.
pub fn check(expect: &PolicyExpect, findings: &[Finding]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (key, wanted, severity, what) in [
        ("deny", &expect.deny, Severity::Error, "denial"),
        ("warn", &expect.warn, Severity::Warning, "warning"),
    ] {
        let Some(wanted) = wanted else { continue };
        let found: Vec<&Finding> = findings.iter().filter(|f| f.severity == severity).collect();
        for text in wanted {
            if !found.iter().any(|f| f.message.contains(text.as_str())) {
                out.push(Mismatch {
                    path: format!("policies.{key}"),
                    message: format!("no {what} contains {text:?}"),
                });
            }
        }
        for f in found {
            if !wanted.iter().any(|t| f.message.contains(t.as_str())) {
                out.push(Mismatch {
                    path: format!("policies.{key}"),
                    message: format!(
                        "unexpected {what} {:?} [{}] on {}",
                        f.message, f.rule, f.input
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check, PolicyExpect};
    use crate::files::Severity;
    use crate::policy::Finding;

    fn finding(severity: Severity, message: &str) -> Finding {
        Finding {
            severity,
            rule: "main.deny".to_string(),
            message: message.to_string(),
            input: "blueprint.yaml".to_string(),
            context: "test".to_string(),
            place: None,
            object: None,
        }
    }

    #[test]
    fn each_text_needs_a_finding_and_each_finding_a_text() {
        let findings = [
            finding(Severity::Error, "network runs a single NAT gateway"),
            finding(Severity::Warning, "Kustomization dns may take 20m0s"),
        ];
        let expect = PolicyExpect {
            deny: Some(vec!["single NAT".to_string()]),
            warn: None,
        };
        assert!(check(&expect, &findings).is_empty());
        let none = PolicyExpect {
            deny: Some(Vec::new()),
            warn: Some(vec!["dns".to_string(), "pki".to_string()]),
        };
        let messages: Vec<String> = check(&none, &findings)
            .into_iter()
            .map(|m| format!("{}: {}", m.path, m.message))
            .collect();
        assert_eq!(
            messages,
            [
                "policies.deny: unexpected denial \"network runs a single NAT gateway\" [main.deny] on blueprint.yaml",
                "policies.warn: no warning contains \"pki\"",
            ]
        );
    }
}
