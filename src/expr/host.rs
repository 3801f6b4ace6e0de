//! What the engine needs from its embedder: files, environment variables and
//! Terraform outputs. The engine never touches the disk or the process itself, so a
//! composition is a pure function of what the host hands it.

use crate::value::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// How `terraform_output(component, key)` behaves (conformance/expr README, Options).
#[derive(Clone, Debug, Default)]
pub enum TerraformOutputs {
    /// Not registered: the name is undefined and calling it is a run error.
    #[default]
    Unregistered,
    /// `windsor test` semantics: the mocked value, or nil when absent. Every component
    /// read is logged, so the runner can fail a case that reads the outputs of a
    /// component its blueprint does not have.
    Mocked(Value, OutputReads),
    /// `bpc test` semantics (S11): the mocked value; an unmocked component or key is a
    /// run error instead of nil.
    Strict(Value),
    /// Production semantics at composition time: every call is deferred.
    Deferred,
    /// Production semantics with known outputs: missing key is an error, a
    /// component without outputs gives nil.
    Provider(Value),
}

/// The components whose outputs a composition read, each with the files that read
/// them (shared by the clones of one [`TerraformOutputs`]).
#[derive(Clone, Debug, Default)]
pub struct OutputReads(Arc<Mutex<BTreeMap<String, Vec<String>>>>);

impl OutputReads {
    pub fn record(&self, component: &str, file: Option<&str>) {
        if let Ok(mut reads) = self.0.lock() {
            let files = reads.entry(component.to_string()).or_default();
            if let Some(file) = file.filter(|f| !files.iter().any(|seen| seen == f)) {
                files.push(file.to_string());
            }
        }
    }

    /// Component → the files that read its outputs, by component name.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<String>> {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// Budgets of one `jsonnet()` evaluation (docs/limits.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonnetLimits {
    /// Wall-clock time one evaluation may take.
    pub timeout: std::time::Duration,
    /// Bytes one evaluation may hold allocated at once.
    pub memory: usize,
}

impl Default for JsonnetLimits {
    fn default() -> Self {
        JsonnetLimits {
            timeout: std::time::Duration::from_secs(10),
            memory: 1024 * 1024 * 1024,
        }
    }
}

pub trait Host: Sync {
    /// Reads a file named by an expression, relative to the file that holds the
    /// expression. The host resolves and confines the path (it must refuse anything
    /// that leaves its root) and returns the canonical name it read with the bytes.
    fn read_file(&self, path: &str) -> Result<(String, Vec<u8>), String>;
    /// Reads a file relative to another file the host returned earlier (jsonnet imports).
    fn read_relative(&self, from: &str, path: &str) -> Result<(String, Vec<u8>), String>;
    /// `env(name)`.
    fn env_var(&self, name: &str) -> Option<String>;
    fn terraform_outputs(&self) -> &TerraformOutputs;
    /// The file holding the expression being evaluated, when there is one.
    fn current_file(&self) -> Option<&str> {
        None
    }

    /// Budgets for `jsonnet()`.
    fn jsonnet_limits(&self) -> JsonnetLimits {
        JsonnetLimits::default()
    }

    /// The work budget of the composition the expression belongs to, if any.
    fn work(&self) -> Option<&crate::expr::work::Work> {
        None
    }
}

/// A host with no files and no environment: what `bpc eval` and tests start from.
#[derive(Default)]
pub struct NullHost {
    pub terraform: TerraformOutputs,
}

impl Host for NullHost {
    fn read_file(&self, path: &str) -> Result<(String, Vec<u8>), String> {
        Err(format!("no files are available here (reading {path:?})"))
    }
    fn read_relative(&self, _from: &str, path: &str) -> Result<(String, Vec<u8>), String> {
        self.read_file(path)
    }
    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }
    fn terraform_outputs(&self) -> &TerraformOutputs {
        &self.terraform
    }
}
