//! The integration tests' builder, in the style of casey/just's `tests/test.rs`: a test
//! reads as the template it is about, then the command and what it prints.
//!
//! ```ignore
//! Test::new()
//!     .facet("a.yaml", indoc! {"
//!         metadata:
//!           name: a
//!         terraform:
//!           - path: net
//!     "})
//!     .compose()
//!     .stdout(indoc! {"…"})
//!     .run();
//! ```
//!
//! `run` writes a throwaway project (a temp dir holding `windsor.yaml` and the files
//! given), runs the `bpc` binary there with a cleared environment (`NO_COLOR=1`, no
//! `WINDSOR_CONTEXT`), and compares stdout, stderr and the exit status exactly, printing
//! a line diff on a mismatch. Diagnostics name files relative to the project, so their
//! text is stable; any absolute path of the project left in the output reads
//! `[project]`. A test that builds its project itself, or changes it between runs,
//! runs in it with `Test::in_project` (masked the same way); other directories a run
//! touches (a home, say) are masked with `Test::masking`. The binary is the only thing
//! used, so these tests do not depend on the library's internals.
#![allow(dead_code)]

#[allow(unused_imports)]
pub use indoc::indoc;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The two lines every facet file starts with.
pub const FACET_HEAD: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
/// The two lines every blueprint file starts with.
pub const BLUEPRINT_HEAD: &str =
    "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";

/// A project in a temp dir: `files` are (relative path, contents).
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    dir
}

/// An `--all-contexts` summary with its time column, the one part that varies from run
/// to run, written `[time]`; the padding the column's width decides goes with it.
pub fn untimed(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let mut line = line.to_string();
        if line.starts_with("context  ") {
            if let Some(at) = line.find(" time  ") {
                let start = line[..at].trim_end().len();
                line.replace_range(start..at + " time".len(), "  time");
            }
        } else if let Some(at) = line.find(" ms") {
            let number = line[..at].trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
            let start = number.trim_end().len();
            if number.len() < at && number.ends_with(' ') {
                line.replace_range(start..at + " ms".len(), "  [time]");
            }
        }
        out.push_str(&line);
    }
    out
}

/// `text` with the temp dir `dir` (made by `project`) written `[project]`: its path, and
/// its folder name where a dev context's repository URL is built from it.
pub fn masked(dir: &Path, text: &str) -> String {
    masked_as(dir, "[project]", text)
}

/// `text` with the directory `dir` written `label`: its path (as given and
/// canonical) and, for a temp dir, its name.
pub fn masked_as(dir: &Path, label: &str, text: &str) -> String {
    let mut text = text.to_string();
    for path in [dir.canonicalize().ok(), Some(dir.to_path_buf())]
        .into_iter()
        .flatten()
    {
        text = text.replace(path.to_string_lossy().as_ref(), label);
    }
    // A temp dir's name, `.tmpXXXXXX`, is unique enough to replace wherever it stands.
    match dir.file_name().map(|name| name.to_string_lossy()) {
        Some(name) if name.starts_with(".tmp") => text.replace(name.as_ref(), label),
        _ => text,
    }
}

pub fn write(root: &Path, path: &str, text: impl AsRef<[u8]>) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, text).expect("write");
}

/// Asserts `text` against the snapshot `snapshots/NAME.snap`. A macro, not a function,
/// so that the snapshot records the test file that made it as its `source`.
macro_rules! snap {
    ($name:expr, $text:expr $(,)?) => {
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $text);
        })
    };
}

/// The separator between the input and the output in a snapshot made by `Output::snap`.
pub const OUTPUT_MARK: &str = "\n=== ";

/// One run of `bpc` in a throwaway project, and what it must print.
#[must_use = "a Test does nothing until .run()"]
pub struct Test {
    files: Vec<(String, Vec<u8>)>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    subdir: Option<String>,
    /// Directories written as a label in what the run prints, in this order.
    masks: Vec<(PathBuf, String)>,
    timeout: Option<Duration>,
    memory_limit: Option<u64>,
    stdout: Option<String>,
    stderr: Option<String>,
    status: Status,
}

/// The exit status a run must have.
enum Status {
    Code(i32),
    Failure,
    Any,
}

impl Default for Test {
    fn default() -> Self {
        Self::new()
    }
}

impl Test {
    /// A project holding only `windsor.yaml` (`version: v1alpha1`).
    pub fn new() -> Self {
        Test {
            files: vec![("windsor.yaml".into(), b"version: v1alpha1\n".to_vec())],
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            subdir: None,
            masks: Vec::new(),
            timeout: None,
            memory_limit: None,
            stdout: None,
            stderr: None,
            status: Status::Code(0),
        }
    }

    /// Runs in an existing directory (a repository fixture) instead of a throwaway
    /// project; the files given are not written.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Test {
            files: Vec::new(),
            cwd: Some(dir.into()),
            ..Test::new()
        }
    }

    /// Runs in an existing project the test made (a temp dir it may change between
    /// runs); the files given are not written. As in a throwaway project, the
    /// project's path reads `[project]` in what the run prints ([`masked`]).
    pub fn in_project(dir: &Path) -> Self {
        Test::in_dir(dir).masking(dir, "[project]")
    }

    /// The directory `dir` reads `label` in what the run prints (its path, as given
    /// and canonical, and the name of a temp dir).
    pub fn masking(mut self, dir: &Path, label: &str) -> Self {
        self.masks.push((dir.to_path_buf(), label.into()));
        self
    }

    /// The run is killed, and the test fails, if it has not ended after `limit`: for
    /// a run that might wait forever (on a FIFO, on a stalled server).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The process's data segment (its heap) may not grow past `bytes`
    /// (`RLIMIT_DATA`): a run that would hold more in memory fails.
    #[cfg(target_os = "linux")]
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// A file of the project, replacing one of the same path.
    pub fn file(self, path: &str, text: impl Into<String>) -> Self {
        self.file_bytes(path, text.into().into_bytes())
    }

    /// A file of the project given as bytes (an archive, say).
    pub fn file_bytes(mut self, path: &str, bytes: Vec<u8>) -> Self {
        match self.files.iter_mut().find(|(p, _)| p == path) {
            Some(slot) => slot.1 = bytes,
            None => self.files.push((path.to_string(), bytes)),
        }
        self
    }

    /// Without `windsor.yaml`: the project root is then the current directory.
    pub fn no_windsor_yaml(mut self) -> Self {
        self.files.retain(|(p, _)| p != "windsor.yaml");
        self
    }

    pub fn windsor(self, text: &str) -> Self {
        self.file("windsor.yaml", text)
    }

    /// `_template/facets/NAME`: the facet head (`kind`, `apiVersion`, two lines) and then
    /// `body`, so line N of `body` is line N+2 of the file.
    pub fn facet(self, name: &str, body: &str) -> Self {
        self.file(
            &format!("_template/facets/{name}"),
            format!("{FACET_HEAD}{body}"),
        )
    }

    /// `_template/schema.yaml`, as written.
    pub fn schema(self, text: &str) -> Self {
        self.file("_template/schema.yaml", text)
    }

    /// `_template/blueprint.yaml`: the blueprint head and then `body`.
    pub fn blueprint(self, body: &str) -> Self {
        self.file(
            "_template/blueprint.yaml",
            format!("{BLUEPRINT_HEAD}{body}"),
        )
    }

    /// `contexts/CONTEXT/values.yaml`, as written.
    pub fn values(self, context: &str, text: &str) -> Self {
        self.file(&format!("contexts/{context}/values.yaml"), text)
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// `bpc compose`, followed by the arguments given before or after this.
    pub fn compose(mut self) -> Self {
        self.args.insert(0, "compose".into());
        self
    }

    /// An environment variable of the run (the environment is otherwise empty).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs in this subdirectory of the project.
    pub fn current_dir(mut self, subdir: &str) -> Self {
        self.subdir = Some(subdir.into());
        self
    }

    /// Stdout must be exactly this.
    pub fn stdout(mut self, text: impl Into<String>) -> Self {
        self.stdout = Some(text.into());
        self
    }

    /// Stderr must be exactly this.
    pub fn stderr(mut self, text: impl Into<String>) -> Self {
        self.stderr = Some(text.into());
        self
    }

    /// The exit status must be this (0 unless said).
    pub fn status(mut self, code: i32) -> Self {
        self.status = Status::Code(code);
        self
    }

    /// Any exit status other than 0.
    pub fn failure(mut self) -> Self {
        self.status = Status::Failure;
        self
    }

    /// Any exit status: the test checks `Output::status` itself.
    pub fn any_status(mut self) -> Self {
        self.status = Status::Any;
        self
    }

    /// Exit status 1 with exactly this on stderr.
    pub fn fails(self, stderr: impl Into<String>) -> Self {
        self.status(1).stderr(stderr)
    }

    /// The project's files and the command line, as a snapshot description.
    pub fn input(&self) -> String {
        let mut out = String::new();
        for (path, bytes) in &self.files {
            let Ok(text) = std::str::from_utf8(bytes) else {
                let _ = writeln!(out, "--- {path} ({} bytes)", bytes.len());
                continue;
            };
            let _ = writeln!(out, "--- {path}");
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        let masked_dir = self
            .cwd
            .as_ref()
            .and_then(|dir| self.masks.iter().find(|(masked, _)| masked == dir));
        if let Some((_, label)) = masked_dir {
            let _ = writeln!(out, "$ cd {label}");
        } else if let Some(dir) = &self.cwd {
            let shown = dir
                .strip_prefix(repo())
                .unwrap_or(dir)
                .display()
                .to_string();
            let shown = if shown.is_empty() { ".".into() } else { shown };
            let _ = writeln!(out, "$ cd {shown}  # in the repository");
        }
        if let Some(sub) = &self.subdir {
            let _ = writeln!(out, "$ cd {sub}");
        }
        let _ = write!(out, "$ bpc {}", self.args.join(" "));
        out
    }

    /// The command `run` starts, for a test that drives the process itself (kills it
    /// halfway, say): its directory (`in_dir`, `in_project`), arguments and
    /// environment. Nothing is written and nothing is checked.
    pub fn command(&self) -> Command {
        let dir = self
            .cwd
            .as_ref()
            .expect("Test::command runs in an existing directory (in_dir, in_project)");
        match &self.subdir {
            Some(sub) => self.command_in(&dir.join(sub)),
            None => self.command_in(dir),
        }
    }

    fn command_in(&self, cwd: &Path) -> Command {
        let mut cmd = command(cwd);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        #[cfg(target_os = "linux")]
        if let Some(bytes) = self.memory_limit {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe and touches only the child.
            unsafe {
                cmd.pre_exec(move || {
                    let limit = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        cmd
    }

    /// Writes the project, runs bpc, checks what was asked; the output for more checks.
    #[track_caller]
    pub fn run(self) -> Output {
        let input = self.input();
        let (tempdir, root) = match &self.cwd {
            Some(dir) => (None, dir.clone()),
            None => {
                let dir = tempfile::tempdir().expect("temp dir");
                // A folder of a fixed name: a dev context's repository URL is built
                // from it (docs/semantics.md S4).
                let root = dir.path().join("project");
                std::fs::create_dir_all(&root).expect("mkdir");
                for (path, text) in &self.files {
                    write(&root, path, text);
                }
                (Some(dir), root)
            }
        };
        let cwd = match &self.subdir {
            Some(sub) => root.join(sub),
            None => root.clone(),
        };
        let mut cmd = self.command_in(&cwd);
        let out = match self.timeout {
            Some(limit) => output_within(&mut cmd, limit)
                .unwrap_or_else(|| panic!("{input}\n\nbpc did not end within {limit:?}")),
            None => cmd.output().expect("run bpc"),
        };
        let throwaway = tempdir
            .as_ref()
            .map(|_| (root.clone(), "[project]".to_string()));
        let masks: Vec<_> = throwaway.iter().chain(&self.masks).collect();
        let shown = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes).into_owned();
            masks
                .iter()
                .fold(text, |text, (dir, label)| masked_as(dir, label, &text))
        };
        let output = Output {
            stdout: shown(&out.stdout),
            stderr: shown(&out.stderr),
            status: out.status.code(),
            input,
            root,
            _tempdir: tempdir,
        };
        let mut problems = String::new();
        for (stream, want, got) in [
            ("stdout", &self.stdout, &output.stdout),
            ("stderr", &self.stderr, &output.stderr),
        ] {
            if let Some(want) = want.as_ref().filter(|want| *want != got) {
                let _ = write!(
                    problems,
                    "{stream} differs (- want, + got):\n{}",
                    diff(want, got)
                );
            }
        }
        match self.status {
            Status::Code(code) if output.status != Some(code) => {
                let _ = writeln!(problems, "exit status {:?}, want {code}", output.status);
            }
            Status::Failure if output.success() => {
                let _ = writeln!(problems, "exit status 0, want a failure");
            }
            _ => {}
        }
        if !problems.is_empty() {
            panic!(
                "{}\n\n{problems}\n--- stdout\n{}--- stderr\n{}",
                output.input, output.stdout, output.stderr
            );
        }
        output
    }
}

/// The `bpc` command in `dir`, with nothing of the environment but `PATH`, and no
/// colour.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bpc"));
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("NO_COLOR", "1");
    cmd
}

/// `cmd` run to its end, or killed (and `None`) if it has not ended after `limit`.
fn output_within(cmd: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bpc");
    // Both pipes are read as the process writes them, so a full pipe never stalls it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("bpc runs") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(std::process::Output {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    })
}

/// The bytes of `pipe` to its end, read on a thread of their own.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    let mut pipe = pipe.expect("a piped stream");
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// `bpc ARGS…` in the existing directory `dir`, whatever its exit status (for tests
/// that check the status themselves or change the project between runs); `dir` reads
/// `[project]` in what it printed ([`masked`]).
pub fn bpc(dir: &Path, args: &[&str]) -> Output {
    Test::in_project(dir)
        .args(args.iter().copied())
        .any_status()
        .run()
}

/// The blueprint of context `local` as `bpc compose --all-contexts` writes it in the
/// project of `run`: a composition that keeps everything, to hold a one-context run's
/// output against.
pub fn local_among_all_contexts(run: &Output) -> String {
    let out = run.root.join("all");
    let among = bpc(
        &run.root,
        &["compose", "--all-contexts", "--out", &out.to_string_lossy()],
    );
    assert!(among.success(), "{}", among.text());
    std::fs::read_to_string(out.join("local.yaml")).unwrap_or_default()
}

/// What a run printed, and its project (kept until this is dropped).
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: Option<i32>,
    /// The files and the command, as `Test::input` wrote them.
    pub input: String,
    /// The project directory.
    pub root: PathBuf,
    _tempdir: Option<tempfile::TempDir>,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// Stdout then stderr.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The text of a snapshot of the run: its input (its files and command line) and
    /// then, after a line `=== LABEL`, `text` (what bpc printed), so the snapshot reads
    /// as what was run above what it printed (`snap!(name, out.with_input(…))`).
    pub fn with_input(&self, label: &str, text: &str) -> String {
        format!("{}{OUTPUT_MARK}{label}\n{text}", self.input)
    }
}

/// A line diff of `want` and `got` (longest common subsequence), `-`/`+`/` ` prefixed.
pub fn diff(want: &str, got: &str) -> String {
    let a: Vec<&str> = want.split_inclusive('\n').collect();
    let b: Vec<&str> = got.split_inclusive('\n').collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    let mut line = |sign: char, text: &str| {
        out.push(sign);
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push_str("⏎ (no newline)\n");
        }
    };
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            line(' ', a[i]);
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            line('+', b[j]);
            j += 1;
        } else {
            line('-', a[i]);
            i += 1;
        }
    }
    out
}

/// Copies directory `from` (files and subdirectories) to `to`, creating it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `bpc compose ARGS…` in `dir` must exit 1; its stderr.
#[track_caller]
pub fn compose_err(dir: &Path, args: &[&str]) -> String {
    let out = Test::in_dir(dir)
        .compose()
        .args(args.iter().copied())
        .status(1)
        .run();
    masked(dir, &out.stderr)
}

/// `bpc compose ARGS…` in `dir` must succeed; the blueprint.
#[track_caller]
pub fn compose_ok(dir: &Path, args: &[&str]) -> String {
    let out = Test::in_dir(dir).compose().args(args.iter().copied()).run();
    masked(dir, &out.stdout)
}

/// A project with one facet that sets a terraform component.
pub fn simple() -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET_HEAD}metadata:\n  name: a\nterraform:\n  - path: net\n"),
        ),
    ])
}

/// What `bpc compose` prints for `simple()`.
pub const SIMPLE: &str = indoc! {"
    kind: Blueprint
    apiVersion: blueprints.windsorcli.dev/v1alpha1
    metadata:
      name: local
      description: Blueprint for the local context
    repository:
      url: http://git.test/git/[project]
      ref:
        branch: main
      secretName: flux-system
    sources:
    - name: template
      install: true
    terraform:
    - path: net
    configMaps:
      values-common:
        CONTEXT: local
        DOMAIN: test
"};

/// The text of a facet `app` with `n` Terraform components (`c0`, `c1`, …) whose
/// inputs carry `tag`.
pub fn components(n: usize, tag: &str) -> String {
    let mut text = format!("{FACET_HEAD}metadata:\n  name: app\nterraform:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  - name: c{i}\n    path: c{i}\n    inputs:\n      tag: {tag}\n      i: {i}\n"
        ));
    }
    text
}

/// A project whose template is the facet of `components(2, "one")`.
pub fn small() -> tempfile::TempDir {
    project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        ("_template/facets/app.yaml", &components(2, "one")),
    ])
}

/// A path as text, for a command line (the tests' temp dirs have UTF-8 names).
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
