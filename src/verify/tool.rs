//! The kustomize that builds: `kubectl kustomize` (kubectl embeds kustomize) or a
//! `kustomize` binary on PATH, found once per run and named in the report.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one build may run before it is stopped (docs/limits.md).
pub const BUILD_TIME: Duration = Duration::from_secs(300);

/// The most output one build may write (docs/limits.md).
pub const MAX_BUILD_OUTPUT: u64 = 256 * 1024 * 1024;

/// The most of kustomize's error text kept for a finding.
const MAX_ERROR_TEXT: u64 = 64 * 1024;

/// A kustomize bpc can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    program: PathBuf,
    /// `kubectl kustomize` rather than `kustomize build`.
    kubectl: bool,
    /// What the tool says its kustomize version is (for the report).
    pub version: String,
    /// How long one build may run, and how much it may write.
    budget: (Duration, u64),
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
                    budget: (BUILD_TIME, MAX_BUILD_OUTPUT),
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
                    budget: (BUILD_TIME, MAX_BUILD_OUTPUT),
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
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A group of its own, so that a build stopped for time takes whatever it
        // started with it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        // Both pipes are drained as they fill, each up to its bound, so a build that
        // writes much can neither block on a full pipe nor grow without end.
        let (time, max_output) = self.budget;
        let stdout = child.stdout.take().map(|out| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                // Past the bound the pipe is closed: the build then ends on a write.
                let _ = out.take(max_output + 1).read_to_end(&mut text);
                text
            })
        });
        let stderr = child.stderr.take().map(|err| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                let _ = err.take(MAX_ERROR_TEXT).read_to_end(&mut text);
                text
            })
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() > time => {
                    stop_group(&mut child);
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(format!("cannot wait for kustomize: {e}")),
            }
        };
        let Some(status) = status else {
            return Err(format!(
                "kustomize ran longer than {} s and was stopped",
                time.as_secs_f64()
            ));
        };
        let stdout = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
        let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        if stdout.len() as u64 > max_output {
            return Err(format!(
                "kustomize wrote more than {max_output} bytes and was not read further"
            ));
        }
        if status.success() {
            String::from_utf8(stdout).map_err(|_| "kustomize wrote text that is not UTF-8".into())
        } else {
            Err(String::from_utf8_lossy(&stderr).trim().to_string())
        }
    }
}

/// Kills `child` and every process of its group, and reaps it.
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(group) = i32::try_from(child.id()) {
        // SAFETY: a plain system call on the group this build was started in.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The first executable named `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A "kustomize" that is a shell script doing `body`, with a small budget.
    fn fake(dir: &Path, body: &str, budget: (Duration, u64)) -> Tool {
        use std::os::unix::fs::PermissionsExt;
        let program = dir.join("kustomize");
        std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Tool {
            program,
            kubectl: false,
            version: "fake".into(),
            budget,
        }
    }

    #[test]
    fn a_build_that_hangs_is_stopped_and_one_that_floods_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let hangs = fake(dir.path(), "sleep 30", (Duration::from_millis(300), 1024));
        let started = Instant::now();
        let error = hangs.build(dir.path()).unwrap_err();
        assert_eq!(error, "kustomize ran longer than 0.3 s and was stopped");
        assert!(started.elapsed() < Duration::from_secs(20));

        let floods = fake(dir.path(), "yes kind: x", (Duration::from_secs(20), 1024));
        let error = floods.build(dir.path()).unwrap_err();
        assert_eq!(
            error,
            "kustomize wrote more than 1024 bytes and was not read further"
        );

        let fails = fake(
            dir.path(),
            "echo 'Error: accumulating resources' >&2; exit 1",
            (Duration::from_secs(20), 1024),
        );
        assert_eq!(
            fails.build(dir.path()).unwrap_err(),
            "Error: accumulating resources"
        );

        let builds = fake(
            dir.path(),
            "echo 'kind: ConfigMap'",
            (Duration::from_secs(20), 1024),
        );
        assert_eq!(builds.build(dir.path()).unwrap(), "kind: ConfigMap\n");
    }
}
