//! Watch mode, driven in-process: the watch loop runs on a thread over a throwaway
//! project; the test writes files and waits (with a generous timeout, never a sleep)
//! for the round each write starts, then checks the output. A broken input leaves the
//! previous output untouched and reports the error at its file:line:col; fixing it
//! replaces the output and says what changed. Unit tests of the command line, because
//! they build the commands' watch jobs, which are private to it.

use super::watch::Watched;
use super::{Cli, Command};
use crate::watch::{Event, Job, Outcome, Settings, Stopper};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

/// The two lines every facet file starts with.
const FACET_HEAD: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";

/// A project in a temp dir: `files` are (relative path, contents).
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        write(&dir.path().join(path), text);
    }
    dir
}

/// Long enough for a loaded machine; a round normally takes milliseconds.
const PATIENCE: Duration = Duration::from_secs(60);

const BASE: &str = "metadata:\n  name: base\nterraform:\n  - name: network\n    path: network\n    inputs:\n      cidr: ${network.cidr ?? '10.0.0.0/16'}\n";

/// A project with one facet and context `dev`.
fn small_project() -> tempfile::TempDir {
    let facet = format!("{FACET_HEAD}{BASE}");
    project(&[
        ("_template/facets/base.yaml", facet.as_str()),
        (
            "contexts/dev/values.yaml",
            "network:\n  cidr: 10.1.0.0/16\n",
        ),
    ])
}

/// The watch job of `bpc ARGS… --project ROOT`.
fn job(root: &Path, args: &[&str]) -> Box<dyn Job + Send> {
    let root = root.to_string_lossy().to_string();
    let argv = ["bpc"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--project", root.as_str()]);
    let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}"));
    let watched = match cli.command {
        Command::Compose(args) => Watched::Compose(args),
        Command::Render(args) => Watched::Render(args),
        Command::Test(args) => Watched::Test(args),
        other => panic!("not a watched command: {other:?}"),
    };
    super::watch::job(watched, false).unwrap_or_else(|e| panic!("{e:?}"))
}

/// A watch running `job` on its own thread, its events on a channel.
struct Running {
    events: Receiver<Event>,
    stopper: Stopper,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Running {
    fn start(mut job: Box<dyn Job + Send>) -> Running {
        let signals = crate::watch::signals();
        let stopper = signals.stopper();
        let (sender, events) = channel();
        let settings = Settings {
            debounce: Duration::from_millis(50),
        };
        let thread = std::thread::spawn(move || {
            crate::watch::watch(job.as_mut(), settings, signals, |event| {
                // The test may have stopped listening; the watch goes on until stopped.
                let _ = sender.send(event);
            })
        });
        Running {
            events,
            stopper,
            thread: Some(thread),
        }
    }

    /// The next round's number, changed paths and outcome.
    fn round(&self) -> (usize, Vec<PathBuf>, Outcome) {
        loop {
            match self.events.recv_timeout(PATIENCE) {
                Ok(Event::Round {
                    number,
                    changed,
                    outcome,
                }) => return (number, changed, outcome),
                Ok(Event::Trouble(message)) => eprintln!("watch: {message}"),
                Err(e) => panic!("no round within {PATIENCE:?}: {e}"),
            }
        }
    }

    /// The next round, which must have succeeded: its summary.
    fn done(&self) -> String {
        match self.round().2 {
            Outcome::Done { summary, .. } => summary,
            Outcome::Failed { report } => panic!("round failed:\n{report}"),
        }
    }

    /// The next round, which must have failed: its report.
    fn failed(&self) -> String {
        match self.round().2 {
            Outcome::Failed { report } => report,
            Outcome::Done { summary, .. } => panic!("round succeeded: {summary}"),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(thread) = self.thread.take() {
            let stopped = thread.join().expect("watch thread");
            if !std::thread::panicking() {
                stopped.expect("watch ran");
            }
        }
    }
}

/// Writes `path` as one rename from outside the watched directories, so the watch sees
/// one complete change (a plain write is a truncation and a write, which a loaded
/// machine may deliver far enough apart to make two rounds).
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut staged = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut staged, text.as_bytes()).expect("write");
    staged.persist(path).expect("rename into place");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `bpc compose --context dev --out OUT`.
fn compose_job(root: &Path, out: &Path) -> Box<dyn Job + Send> {
    let out = out.to_string_lossy().to_string();
    job(
        root,
        &["compose", "--context", "dev", "--out", out.as_str()],
    )
}

#[test]
fn compose_recomposes_keeps_the_last_good_output_and_summarises_changes() {
    let dir = small_project();
    let root = dir.path();
    let out = root.join("blueprint.yaml");
    let watch = Running::start(compose_job(root, &out));
    let (number, _, first) = watch.round();
    assert_eq!(number, 1);
    assert!(
        matches!(&first, Outcome::Done { summary, .. } if summary.ends_with("1 component(s), 0 kustomization(s)")),
        "{first:?}"
    );
    assert!(read(&out).contains("cidr: 10.1.0.0/16"));

    // A value changes: recomposed, the changed component named.
    write(
        &root.join("contexts/dev/values.yaml"),
        "network:\n  cidr: 10.2.0.0/16\n",
    );
    let (_, changed, outcome) = watch.round();
    assert!(
        changed
            .iter()
            .any(|p| p.ends_with("contexts/dev/values.yaml")),
        "{changed:?}"
    );
    assert!(
        matches!(&outcome, Outcome::Done { summary, .. } if summary.contains("components: 1 changed (network)")),
        "{outcome:?}"
    );
    let good = read(&out);
    assert!(good.contains("cidr: 10.2.0.0/16"), "{good}");

    // A broken facet: the error at file:line:col, the output untouched.
    let facet = root.join("_template/facets/base.yaml");
    write(
        &facet,
        &format!("{FACET_HEAD}{BASE}      size: ${{network.cidr +* 1}}\n"),
    );
    let report = watch.failed();
    assert!(
        report.contains("_template/facets/base.yaml:10:29"),
        "{report}"
    );
    assert_eq!(read(&out), good);

    // Fixed, with a second component: replaced, the addition named.
    write(
        &facet,
        &format!("{FACET_HEAD}{BASE}  - name: dns\n    path: dns\n"),
    );
    let summary = watch.done();
    assert!(summary.contains("components: 1 added (dns)"), "{summary}");
    assert!(read(&out).contains("name: dns"));
}

#[test]
fn files_read_by_jsonnet_and_the_context_overlay_are_inputs() {
    let facet = format!(
        "{FACET_HEAD}metadata:\n  name: base\nterraform:\n  - name: cluster\n    path: cluster\n    inputs:\n      groups: ${{jsonnet(\"../configs/groups.jsonnet\")}}\n"
    );
    let dir = project(&[
        ("_template/facets/base.yaml", facet.as_str()),
        ("_template/configs/groups.jsonnet", "{ size: 1 }\n"),
        ("contexts/dev/values.yaml", "{}\n"),
    ]);
    let root = dir.path();
    let out = root.join("out/blueprint.yaml");
    std::fs::create_dir_all(root.join("out")).expect("mkdir");
    let mut job = compose_job(root, &out);
    let inputs = job.round().inputs;
    assert!(inputs.covers(&root.join("contexts/dev/blueprint.yaml")));
    assert!(inputs.covers(&root.join("windsor.yaml")));
    assert!(!inputs.covers(&out));

    let watch = Running::start(job);
    watch.done();
    write(
        &root.join("_template/configs/groups.jsonnet"),
        "{ size: 3 }\n",
    );
    let summary = watch.done();
    assert!(
        summary.contains("components: 1 changed (cluster)"),
        "{summary}"
    );
    assert!(read(&out).contains("size: 3"));

    // The context's own blueprint is watched (what it does is another matter).
    write(
        &root.join("contexts/dev/blueprint.yaml"),
        "kind: Blueprint\n",
    );
    let (_, changed, _) = watch.round();
    assert!(
        changed
            .iter()
            .any(|p| p.ends_with("contexts/dev/blueprint.yaml")),
        "{changed:?}"
    );
}

#[test]
fn render_replaces_the_tree_and_keeps_it_when_a_round_fails() {
    let dir = small_project();
    let root = dir.path();
    let out = root.join("render");
    let out_arg = out.to_string_lossy().to_string();
    let watch = Running::start(job(
        root,
        &["render", "--context", "dev", "--out", out_arg.as_str()],
    ));
    watch.done();
    let tfvars = out.join("terraform/network/terraform.tfvars.json");
    assert!(read(&tfvars).contains("10.1.0.0/16"));

    write(&root.join("contexts/dev/values.yaml"), "network: [\n");
    let report = watch.failed();
    assert!(report.contains("contexts/dev/values.yaml:1:10"), "{report}");
    assert!(read(&tfvars).contains("10.1.0.0/16"));

    write(
        &root.join("contexts/dev/values.yaml"),
        "network:\n  cidr: 10.9.0.0/16\n",
    );
    let summary = watch.done();
    assert!(summary.contains("1 changed (network)"), "{summary}");
    assert!(read(&tfvars).contains("10.9.0.0/16"));
}

#[test]
fn test_reruns_the_cases() {
    let dir = small_project();
    let root = dir.path();
    write(
        &root.join("_template/tests/main.test.yaml"),
        "cases:\n  - name: default cidr\n    expect:\n      terraform:\n        - name: network\n          inputs:\n            cidr: 10.0.0.0/16\n",
    );
    let watch = Running::start(job(root, &["test"]));
    assert_eq!(watch.done(), "1 passed, 0 failed");
    write(
        &root.join("_template/facets/base.yaml"),
        &format!("{FACET_HEAD}{}", BASE.replace("10.0.0.0/16", "10.7.0.0/16")),
    );
    assert_eq!(watch.done(), "0 passed, 1 failed");
    write(&root.join("_template/tests/main.test.yaml"), "cases: [\n");
    let report = watch.failed();
    assert!(
        report.contains("_template/tests/main.test.yaml:1:8"),
        "{report}"
    );
}

#[test]
fn stopping_ends_the_watch() {
    let dir = small_project();
    let out = dir.path().join("b.yaml");
    let mut watch = Running::start(compose_job(dir.path(), &out));
    watch.done();
    watch.stopper.stop();
    let thread = watch.thread.take().expect("thread");
    assert_eq!(thread.join().expect("joined"), Ok(()));
}
