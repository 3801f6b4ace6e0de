//! The kustomize that builds: `kubectl kustomize` (kubectl embeds kustomize) or a
//! `kustomize` binary on PATH, found once per run and named in the report.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A kustomize bpc can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    program: PathBuf,
    /// `kubectl kustomize` rather than `kustomize build`.
    kubectl: bool,
    /// What the tool says its kustomize version is (for the report).
    pub version: String,
}

impl Tool {
    /// `kubectl` first (Flux's kustomize-controller and kubectl share the kustomize
    /// API), else `kustomize`; an error naming both when neither is on PATH.
    pub fn find() -> Result<Tool, String> {
        if let Some(program) = on_path("kubectl") {
            let out = Command::new(&program)
                .args(["version", "--client"])
                .output();
            if let Some(out) = out.ok().filter(|o| o.status.success()) {
                let text = String::from_utf8_lossy(&out.stdout);
                let version = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Kustomize Version:"))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_else(|| "unknown".to_string());
                return Ok(Tool {
                    program,
                    kubectl: true,
                    version,
                });
            }
        }
        if let Some(program) = on_path("kustomize") {
            let out = Command::new(&program).arg("version").output();
            if let Some(out) = out.ok().filter(|o| o.status.success()) {
                let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
                return Ok(Tool {
                    program,
                    kubectl: false,
                    version,
                });
            }
        }
        Err(
            "no kustomize to build with: neither `kubectl` (for `kubectl kustomize`) nor \
             `kustomize` is on PATH"
                .to_string(),
        )
    }

    /// How the report names the tool: `kubectl kustomize (kustomize v5.5.0)`.
    pub fn describe(&self) -> String {
        let how = if self.kubectl {
            "kubectl kustomize"
        } else {
            "kustomize build"
        };
        format!("{how} (kustomize {})", self.version)
    }

    /// Builds the kustomization in `dir`: the objects as YAML, or kustomize's error.
    /// Files may lie outside `dir` (Flux builds with no load restriction inside the
    /// source).
    pub fn build(&self, dir: &Path) -> Result<String, String> {
        let mut command = Command::new(&self.program);
        if self.kubectl {
            command.arg("kustomize");
        } else {
            command.arg("build");
        }
        command
            .args(["--load-restrictor", "LoadRestrictionsNone"])
            .arg(dir)
            .env_remove("KUBECONFIG");
        let out = command
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        if out.status.success() {
            String::from_utf8(out.stdout)
                .map_err(|_| "kustomize wrote text that is not UTF-8".into())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }
}

/// The first executable named `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
