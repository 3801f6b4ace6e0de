//! Reading policies: every `.rego` file under the `--policy` paths (a `*_test.rego`
//! file is a test of the policies, not one), parsed into one engine, and the rules the
//! conftest conventions look at found in the packages asked for.

use crate::files::{Diagnostic, FileId, FileMap, Span};
use regorus::unstable::{Parser, Rule, RuleHead};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest policy file read.
const MAX_POLICY_BYTES: u64 = 4 * 1024 * 1024;

/// What a rule's findings are, by its name's prefix (conftest's conventions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleKind {
    /// `deny`, `deny_…`: an error.
    Deny,
    /// `violation`, `violation_…`: an error whose objects may carry more than `msg`.
    Violation,
    /// `warn`, `warn_…`: a warning.
    Warn,
}

impl RuleKind {
    /// The kind of a rule named `name` and the name without its prefix (`""` for the
    /// bare `deny`), which is what an `exception` names; `None` for any other rule.
    pub fn of(name: &str) -> Option<(RuleKind, &str)> {
        for (prefix, kind) in [
            ("deny", RuleKind::Deny),
            ("violation", RuleKind::Violation),
            ("warn", RuleKind::Warn),
        ] {
            let Some(rest) = name.strip_prefix(prefix) else {
                continue;
            };
            if rest.is_empty() {
                return Some((kind, ""));
            }
            if let Some(suffix) = rest.strip_prefix('_') {
                if !suffix.is_empty() {
                    return Some((kind, suffix));
                }
            }
        }
        None
    }
}

/// One rule a finding can come from.
#[derive(Clone, Debug)]
pub struct RuleRef {
    /// The package, dotted (`main`, `kubernetes.admission`).
    pub package: String,
    pub name: String,
    pub kind: RuleKind,
    /// Its first definition, for errors while evaluating it.
    pub at: Span,
}

impl RuleRef {
    /// `data.<package>.<name>`, what the engine evaluates.
    pub fn query(&self) -> String {
        format!("data.{}.{}", self.package, self.name)
    }
}

/// The loaded policies: the engine holding them, the finding rules of the packages
/// asked for, and where each package's `exception` rule is (if it has one).
#[derive(Clone)]
pub struct Policies {
    pub engine: regorus::Engine,
    pub rules: Vec<RuleRef>,
    pub exceptions: Vec<RuleRef>,
    /// The policy files read, for the summary.
    pub files: usize,
}

/// The `.rego` files under each of `paths` (a file is taken as it is), in path order
/// per argument; `*_test.rego` left out.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Diagnostic> {
    let wanted = |name: &str| name.ends_with(".rego") && !name.ends_with("_test.rego");
    crate::files::listing::files_under(paths, wanted, "policy")
}

/// Reads `paths` into one engine (each file registered in `files`, so errors show its
/// lines) and finds the finding rules of `namespaces`.
pub fn load(
    paths: &[PathBuf],
    namespaces: &[String],
    files: &FileMap,
) -> Result<Policies, Vec<Diagnostic>> {
    let mut engine = regorus::Engine::new();
    let mut ids: BTreeMap<String, FileId> = BTreeMap::new();
    let mut errors = Vec::new();
    let found = discover(paths).map_err(|d| vec![d])?;
    if found.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(vec![Diagnostic::error(format!(
            "no policy (`.rego` file other than `*_test.rego`) under {}",
            names.join(", ")
        ))]);
    }
    for path in &found {
        let shown = path.display().to_string();
        let text = match read(path) {
            Ok(text) => text,
            Err(d) => {
                errors.push(d);
                continue;
            }
        };
        let id = files.add(shown.clone(), text.as_str());
        ids.insert(shown.clone(), id);
        if let Err(e) = add(&mut engine, &shown, text) {
            errors.push(engine_error(&e, files, &ids, "invalid policy"));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let Declared {
        mut rules,
        exceptions,
        mut packages,
    } = declared(&mut engine, namespaces, &ids);
    if rules.is_empty() {
        // A misspelt --namespace would otherwise pass every check.
        packages.sort();
        return Err(vec![Diagnostic::error(format!(
            "the policies have no `deny`, `violation` or `warn` rule in package {}",
            namespaces
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ))
        .with_help(format!(
            "the packages they define: {}; choose one with --namespace",
            packages.join(", ")
        ))]);
    }
    rules.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    // Analysing the policies once here reports what is wrong in them (an unknown
    // function, an unsafe variable) before any input, and every context's copy of
    // the engine starts analysed.
    if let Err(e) = engine.eval_query("true".to_string(), false) {
        return Err(vec![engine_error(
            &e.to_string(),
            files,
            &ids,
            "invalid policy",
        )]);
    }
    Ok(Policies {
        engine,
        rules,
        exceptions,
        files: found.len(),
    })
}

/// The finding rules (`deny`, `violation`, `warn` and their `_name` forms) and the
/// `exception` rules of the packages in `namespaces`, each once, at its first
/// definition; and every package the policies define.
struct Declared {
    rules: Vec<RuleRef>,
    exceptions: Vec<RuleRef>,
    packages: Vec<String>,
}

fn declared(
    engine: &mut regorus::Engine,
    namespaces: &[String],
    ids: &BTreeMap<String, FileId>,
) -> Declared {
    let mut rules = Vec::new();
    let mut exceptions = Vec::new();
    let mut packages: Vec<String> = Vec::new();
    for module in engine.get_modules().iter() {
        let Ok(package) = Parser::get_path_ref_components(&module.package.refr) else {
            continue;
        };
        // `package main` reads as `data.main`.
        let package: Vec<&str> = package.iter().map(|s| s.text()).collect();
        let package = package
            .strip_prefix(&["data"])
            .unwrap_or(&package)
            .join(".");
        if !packages.contains(&package) {
            packages.push(package.clone());
        }
        if !namespaces.contains(&package) {
            continue;
        }
        for rule in &module.policy {
            let (refr, span) = match rule.as_ref() {
                Rule::Spec { head, span, .. } => match head {
                    RuleHead::Compr { refr, .. }
                    | RuleHead::Set { refr, .. }
                    | RuleHead::Func { refr, .. } => (refr, span),
                },
                Rule::Default { refr, span, .. } => (refr, span),
            };
            let Ok(parts) = Parser::get_path_ref_components(refr) else {
                continue;
            };
            let Some(name) = parts.first().map(|s| s.text().to_string()) else {
                continue;
            };
            let Some(file) = ids.get(span.source.get_path().as_str()) else {
                continue;
            };
            let at = Span::new(*file, span.start as usize, span.end as usize);
            let known = |list: &[RuleRef]| {
                list.iter()
                    .any(|r: &RuleRef| r.package == package && r.name == name)
            };
            if name == "exception" {
                if !known(&exceptions) {
                    exceptions.push(RuleRef {
                        package: package.clone(),
                        name,
                        kind: RuleKind::Deny,
                        at,
                    });
                }
            } else if let Some((kind, _)) = RuleKind::of(&name) {
                if !known(&rules) {
                    rules.push(RuleRef {
                        package: package.clone(),
                        name,
                        kind,
                        at,
                    });
                }
            }
        }
    }
    Declared {
        rules,
        exceptions,
        packages,
    }
}

/// Adds one policy as Rego v1 (`deny contains msg if …`) or, when it does not parse
/// so, as the older v0 (`deny[msg] { … }`), which conftest's examples are written
/// in. When neither parses, the error shown is the one of the reading that got
/// further into the file.
fn add(engine: &mut regorus::Engine, path: &str, text: String) -> Result<(), String> {
    engine.set_rego_v0(false);
    let v1 = match engine.add_policy(path.to_string(), text.clone()) {
        Ok(_) => return Ok(()),
        Err(e) => e.to_string(),
    };
    engine.set_rego_v0(true);
    let v0 = engine
        .add_policy(path.to_string(), text)
        .map_err(|e| e.to_string());
    engine.set_rego_v0(false);
    match v0 {
        Ok(_) => Ok(()),
        Err(v0) if place_of(&v0) > place_of(&v1) => Err(v0),
        Err(_) => Err(v1),
    }
}

/// The line and column an engine error names (`--> file:line:col`).
fn place_of(text: &str) -> Option<(usize, usize)> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("--> ")?;
        let mut parts = rest.rsplitn(3, ':');
        let col = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        Some((line, col))
    })
}

fn read(path: &Path) -> Result<String, Diagnostic> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| Diagnostic::error(format!("cannot read policy {shown}: {e}")))?;
    if meta.len() > MAX_POLICY_BYTES {
        return Err(Diagnostic::error(format!(
            "policy {shown} is {} bytes, more than the {MAX_POLICY_BYTES} a policy may have",
            meta.len()
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| Diagnostic::error(format!("cannot read policy {shown}: {e}")))
}

/// An engine error as a diagnostic: the engine writes `--> file:line:col`, the line,
/// a caret and `error: what`; the diagnostic points at that place of the file.
pub fn engine_error(
    text: &str,
    files: &FileMap,
    ids: &BTreeMap<String, FileId>,
    what: &str,
) -> Diagnostic {
    let message = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| text.trim())
        .to_string();
    let place = text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("--> ")?;
        let mut parts = rest.rsplitn(3, ':');
        let col: usize = parts.next()?.parse().ok()?;
        let line: usize = parts.next()?.parse().ok()?;
        Some((parts.next()?.to_string(), line, col))
    });
    let located = place.and_then(|(path, line, col)| {
        let id = *ids.get(&path)?;
        let file = files.get(id)?;
        let start = file.line_start(line) + col.saturating_sub(1);
        Some(Span::new(id, start, start + 1))
    });
    let d = Diagnostic::error(format!("{what}: {message}"));
    match located {
        Some(span) => d.with_primary(span, "here"),
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::RuleKind;

    #[test]
    fn rule_names_follow_the_conftest_prefixes() {
        assert_eq!(RuleKind::of("deny"), Some((RuleKind::Deny, "")));
        assert_eq!(
            RuleKind::of("deny_latest"),
            Some((RuleKind::Deny, "latest"))
        );
        assert_eq!(RuleKind::of("violation"), Some((RuleKind::Violation, "")));
        assert_eq!(RuleKind::of("warn_x_y"), Some((RuleKind::Warn, "x_y")));
        assert_eq!(RuleKind::of("denylist"), None);
        assert_eq!(RuleKind::of("deny_"), None);
        assert_eq!(RuleKind::of("allow"), None);
    }
}
