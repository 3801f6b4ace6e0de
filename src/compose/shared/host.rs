//! The [`Host`] compose gives the expression engine: files come from the template tree
//! (relative to the file holding the expression, never outside the template root, S8),
//! the environment from the caller (the process for compose, the case's `env:` in
//! tests), and Terraform outputs as configured.

use crate::compose::model::inputs::Environment;
use crate::expr::host::{Host, JsonnetLimits, TerraformOutputs};
use crate::expr::work::Work;
use crate::files::FileTree;

pub struct TemplateHost<'a> {
    pub tree: &'a FileTree,
    /// Tree path of the file that holds the expression (`facets/provider-aws.yaml`).
    pub file: &'a str,
    pub environment: &'a Environment,
    pub terraform: &'a TerraformOutputs,
    pub jsonnet: JsonnetLimits,
    /// The composition's work budget, shared by all its evaluations.
    pub work: Option<&'a Work>,
}

impl Host for TemplateHost<'_> {
    fn read_file(&self, path: &str) -> Result<(String, Vec<u8>), String> {
        self.read_relative(self.file, path)
    }

    fn read_relative(&self, from: &str, path: &str) -> Result<(String, Vec<u8>), String> {
        let resolved = self.tree.resolve(from, path).map_err(|e| e.to_string())?;
        let bytes = self.tree.read(&resolved).map_err(|e| e.to_string())?;
        Ok((resolved, bytes.to_vec()))
    }

    fn env_var(&self, name: &str) -> Option<String> {
        match self.environment {
            Environment::Process => std::env::var(name).ok(),
            Environment::Fixed(vars) => vars.get(name).cloned(),
        }
    }

    fn terraform_outputs(&self) -> &TerraformOutputs {
        self.terraform
    }

    fn current_file(&self) -> Option<&str> {
        Some(self.file)
    }

    fn jsonnet_limits(&self) -> JsonnetLimits {
        self.jsonnet
    }

    fn work(&self) -> Option<&Work> {
        self.work
    }
}
