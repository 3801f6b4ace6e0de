//! What the engine needs from its embedder: files, environment variables and
//! Terraform outputs. The engine never touches the disk or the process itself, so a
//! composition is a pure function of what the host hands it.

use super::value::Value;

/// How `terraform_output(component, key)` behaves (conformance/expr README, Options).
#[derive(Clone, Debug, Default)]
pub enum TerraformOutputs {
    /// Not registered: the name is undefined and calling it is a run error.
    #[default]
    Unregistered,
    /// `windsor test` semantics: the mocked value, or nil when absent.
    Mocked(Value),
    /// `bpc test` semantics (S11): the mocked value; an unmocked component or key is a
    /// run error instead of nil.
    Strict(Value),
    /// Production semantics at composition time: every call is deferred.
    Deferred,
    /// Production semantics with known outputs: missing key is an error, a
    /// component without outputs gives nil.
    Provider(Value),
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
    /// Budgets for `jsonnet()`.
    fn jsonnet_limits(&self) -> JsonnetLimits {
        JsonnetLimits::default()
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
