//! Running cases: each composes in isolation from its own inputs only (S11): its
//! `values` (schema defaults only when asked), its `terraformOutputs` as mocks, its
//! `env` as the whole environment. Never the user's context files. Cases run in
//! parallel; results come back in discovery order.

use super::case::{Case, ExpectError};
use super::matcher::{check, Composed, Mismatch};
use crate::compose::face::ContextPatches;
use crate::compose::face::Schema;
use crate::compose::face::{Composition, Inputs};
use crate::compose::model::inputs::Environment;
use crate::compose::model::inputs::{Builtins, Layer};
use crate::expr::host::{OutputReads, TerraformOutputs};
use crate::expr::Engine;
use crate::expr::{Map, Value};
use crate::files::Diagnostic;
use crate::template::Strategy;
use crate::template::Template;
use std::collections::HashMap;

/// The context name test cases compose under (as Windsor's runner does).
pub(crate) const TEST_CONTEXT: &str = "test";

/// What `terraform_output(c, k)` gives in a case with `terraformOutputs` when `k` (or
/// all of `c`) is not mocked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnmockedOutputs {
    /// nil, so `?? fallback` applies; reading a component that is not in the
    /// composed blueprint fails the case (the Windsor CLI's rule).
    #[default]
    Null,
    /// A run error naming the component and key (`--unmocked-outputs error`): every
    /// output a case reads must be mocked.
    Error,
}

/// Which Windsor CLI's test runner the matcher follows where they differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindsorCompat {
    /// Windsor's main after 0.9: `expect.config` / `exclude.config` are compared
    /// (windsorcli/cli#3268).
    #[default]
    Latest,
    /// The 0.9 CLI (7b6bca77): `config` expectations compare nothing.
    V0_9,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub compat: WindsorCompat,
    /// Apply schema defaults to every case (`--schema-defaults`).
    pub schema_defaults: bool,
    pub unmocked_outputs: UnmockedOutputs,
    pub precedence: crate::compose::model::precedence::Precedence,
    /// Budgets of each case's composition.
    pub limits: crate::compose::model::inputs::Limits,
}

pub struct CaseResult {
    pub mismatches: Vec<Mismatch>,
    /// Composition errors (a failure unless the case expects one).
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    /// The composed blueprint, for snapshots and `--explain`.
    pub composition: Option<Composition>,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }
}

pub struct Runner<'a> {
    pub template: &'a Template,
    pub schema: Option<&'a Schema>,
    pub engine: &'a Engine,
    pub project_root: String,
    pub options: RunOptions,
    /// The template's `patches/<name>/` files: in a test, the template root is the
    /// context directory Windsor reads them from (S13).
    pub patches: ContextPatches,
    /// The policies of `bpc test --policy`, run on a case's composition (and what it
    /// renders) for the case's `policies:`; `None` without policies.
    pub policies: Option<PolicyRun<'a>>,
}

/// The policies' findings on a composition of a case.
pub type PolicyRun<'a> =
    &'a (dyn Fn(&Composition) -> Result<Vec<crate::policy::Finding>, Vec<Diagnostic>> + Sync);

impl Runner<'_> {
    pub fn compose_case(&self, case: &Case) -> Result<Composition, Vec<Diagnostic>> {
        let layers = vec![Layer {
            name: format!("values of case `{}`", case.name),
            value: case.values.clone(),
            yaml: None,
        }];
        let terraform = match (&case.terraform_outputs, self.options.unmocked_outputs) {
            (Some(mocks), UnmockedOutputs::Null) => {
                TerraformOutputs::Mocked(mocks.clone(), OutputReads::default())
            }
            (Some(mocks), UnmockedOutputs::Error) => TerraformOutputs::Strict(mocks.clone()),
            (None, _) => TerraformOutputs::Deferred,
        };
        let inputs = Inputs {
            template: self.template,
            schema: self.schema,
            engine: self.engine,
            layers,
            apply_schema_defaults: case.apply_schema_defaults || self.options.schema_defaults,
            // `windsor test` does not apply the CLI's config defaults.
            config_defaults: false,
            builtins: Builtins {
                context: TEST_CONTEXT.to_string(),
                context_path: format!("{}/contexts/{TEST_CONTEXT}", self.project_root),
                project_root: self.project_root.clone(),
            },
            environment: Environment::Fixed(case.env.clone()),
            terraform,
            precedence: self.options.precedence,
            cycles: crate::compose::model::inputs::Cycles::Reject,
            limits: self.options.limits,
            work: crate::expr::work::Work::new(self.options.limits.steps),
            overlay: None,
            context_patches: Some(&self.patches),
            for_explain: crate::compose::model::for_explain::ForExplain::Kept,
        };
        let composition = inputs.compose()?;
        if let TerraformOutputs::Mocked(_, reads) = &inputs.terraform {
            missing_output_components(&composition, reads).map_err(|d| vec![d])?;
        }
        Ok(composition)
    }

    pub fn run_case(&self, case: &Case) -> CaseResult {
        let result = self.compose_case(case);
        let mut out = CaseResult {
            mismatches: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
            composition: None,
        };
        // What composing said (context patches that name nothing, …); the command
        // prints each distinct warning once, so the template's own are not repeated.
        if let Ok(c) = &result {
            out.warnings.extend(c.warnings.iter().cloned());
        }
        match (result, &case.expect_error) {
            (Ok(c), ExpectError::No) => {
                let config =
                    (self.options.compat == WindsorCompat::Latest).then(|| config_scope(&c));
                let composed = Composed {
                    blueprint: &c.blueprint,
                    kustomizations: c
                        .kustomizations
                        .components
                        .values()
                        .map(crate::compose::model::blueprint::component_value)
                        .collect(),
                    messages: c.messages.clone(),
                    config: config.as_ref(),
                };
                for (spec, present) in [(&case.expect, true), (&case.exclude, false)] {
                    if let Some(spec) = spec {
                        let o = check(&composed, spec, present, &case.file);
                        out.mismatches.extend(o.mismatches);
                        out.warnings.extend(o.warnings);
                    }
                }
                if let Some(expect) = &case.policies {
                    out.mismatches.extend(self.check_policies(expect, &c));
                }
                out.composition = Some(c);
            }
            (Ok(c), _) => {
                out.mismatches.push(Mismatch {
                    path: String::new(),
                    message: "expected composition to fail, but it succeeded".to_string(),
                });
                out.composition = Some(c);
            }
            (Err(errors), ExpectError::No) => {
                out.mismatches.push(Mismatch {
                    path: String::new(),
                    message: format!("composition failed: {}", first_message(&errors)),
                });
                out.errors = errors;
            }
            (Err(errors), ExpectError::Any) => out.errors = errors,
            (Err(errors), ExpectError::Containing(text)) => {
                if !errors.iter().any(|e| e.full_text().contains(text.as_str())) {
                    out.mismatches.push(Mismatch {
                        path: String::new(),
                        message: format!(
                            "composition failed, but no error contains {text:?}; it said: {}",
                            first_message(&errors)
                        ),
                    });
                }
                out.errors = errors;
            }
        }
        out
    }

    /// A case's `policies:` against what the policies find on its composition.
    fn check_policies(
        &self,
        expect: &super::policies::PolicyExpect,
        composition: &Composition,
    ) -> Vec<Mismatch> {
        let Some(run) = self.policies else {
            return vec![Mismatch {
                path: "policies".to_string(),
                message: "the case asserts policies, but no --policy was given".to_string(),
            }];
        };
        match run(composition) {
            Ok(findings) => super::policies::check(expect, &findings),
            Err(errors) => vec![Mismatch {
                path: "policies".to_string(),
                message: format!("the policies failed: {}", first_message(&errors)),
            }],
        }
    }

    /// Runs `cases` on up to `threads` threads; results in the order of `cases`.
    pub fn run_all(&self, cases: &[&Case], threads: usize) -> Vec<CaseResult> {
        crate::parallel::map(cases, threads, |case| self.run_case(case))
    }
}

/// The composed config scope as the Windsor CLI's test runner compares it
/// (windsorcli/cli#3270, #3271): each config block's value after composition (context
/// values over it where both set a path, S4), for the names an included block still
/// defines — a block its `when` left out, or one a later `strategy: remove` dropped,
/// is not there, even where the context values have a key of that name.
fn config_scope(composition: &Composition) -> Map {
    let mut defined: HashMap<&str, bool> = HashMap::new();
    for record in composition.config_log.iter().filter(|r| r.included) {
        defined.insert(&record.name, record.strategy != Strategy::Remove);
    }
    composition
        .config
        .iter()
        .filter(|(name, _)| defined.get(&***name) == Some(&true))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// A case that mocks outputs may read any output of a component its blueprint has
/// (unmocked ones are nil), but reading a component the blueprint does not have is
/// an error: the component was misspelt or left out by a `when`.
fn missing_output_components(
    composition: &Composition,
    reads: &OutputReads,
) -> Result<(), Diagnostic> {
    let present: std::collections::HashSet<String> = composition
        .blueprint
        .as_map()
        .and_then(|m| m.get("terraform"))
        .and_then(Value::as_list)
        .map(|list| {
            list.iter()
                .filter_map(crate::template::identity::component_id_of)
                .collect()
        })
        .unwrap_or_default();
    let missing: Vec<(String, Vec<String>)> = reads
        .snapshot()
        .into_iter()
        .filter(|(component, _)| !present.contains(component))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.iter().map(|(c, _)| c.as_str()).collect();
    let mut diagnostic = Diagnostic::error(format!(
        "component not found: {} (terraform_output() reads a component that is not in the composed blueprint)",
        names.join(", ")
    ));
    for (component, files) in &missing {
        diagnostic = diagnostic.with_note(format!("`{component}` is read in {}", files.join(", ")));
    }
    Err(diagnostic)
}

fn first_message(errors: &[Diagnostic]) -> String {
    errors
        .iter()
        .find(|d| d.is_error())
        .map(|d| d.message.clone())
        .unwrap_or_else(|| "unknown error".to_string())
}
