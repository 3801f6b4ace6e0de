//! `bpc lsp` latency: the time from sending `textDocument/didChange` to receiving the
//! `textDocument/publishDiagnostics` for that version, on a copy of the windsor-core
//! corpus (with values for context `local`) and on a 1 000-facet template from
//! `bench/gen-template.py`. The server runs in this process over an in-memory
//! connection (the pipes of a real editor add well under a millisecond).
//!
//! `cargo run --release --example lsp_bench [-- --edits 20 --debounce 30 --tests on --incremental on]`
//!
//! Each edit replaces the document's whole text, alternating between a version with a
//! misspelt reference and one without, so every analysis changes the diagnostics.
//! Prints min, median and max per template. `--debounce` is the server's quiet
//! period (`bpc.debounceMs`, default 30 ms), included in the figures; `--tests off`
//! runs no test cases (they run on their own thread and compete for the cores).
//! Each template is measured with `bpc.incremental` off (every analysis checks and
//! composes everything, as before the incremental engine) and on, one after the other;
//! `--incremental on|off` runs one of them. `--watch-files on` has the client declare
//! that it watches files for the server (`workspace/didChangeWatchedFiles` dynamic
//! registration, as VS Code does): the server then reads only the files it is told
//! changed instead of listing and reading the template on every analysis.

#[path = "support/synthetic.rs"]
mod synthetic;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Options {
    edits: usize,
    debounce: u64,
    tests: bool,
    /// `None`: both, side by side (incremental off, then on) per template.
    incremental: Option<bool>,
    /// The client offers to watch files (the server then registers for it).
    watch_files: bool,
}

fn options() -> Options {
    let mut o = Options {
        edits: 20,
        debounce: 30,
        tests: true,
        incremental: None,
        watch_files: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--edits" => o.edits = value.parse().expect("--edits N"),
            "--debounce" => o.debounce = value.parse().expect("--debounce MS"),
            "--tests" => o.tests = value == "on",
            "--incremental" => o.incremental = Some(value == "on"),
            "--watch-files" => o.watch_files = value == "on",
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    o
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

const LOCAL_VALUES: &str = "platform: docker\nworkstation:\n  runtime: colima\ndns:\n  domain: test.local\ngateway:\n  enabled: false\nnetwork:\n  cidr_block: 10.5.0.0/16\ncluster:\n  driver: talos\n  controlplanes:\n    nodes:\n      controlplane-1:\n        endpoint: 10.5.0.10:50000\n        node: 10.5.0.10\n        hostname: controlplane-1\n";

/// (project root, facet to edit, its text with and without a misspelling).
fn windsor_core(dir: &Path) -> (PathBuf, PathBuf, String, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = dir.join("windsor-core");
    copy_dir(&repo.join("tests/conformance/windsor-core-eaa2bcea"), &root);
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::write(root.join("contexts/local/values.yaml"), LOCAL_VALUES).expect("values");
    let facet = root.join("contexts/_template/facets/platform-docker.yaml");
    let good = std::fs::read_to_string(&facet).expect("facet");
    let bad = good.replacen("${cluster.endpoint ??", "${cluster.endpiont ??", 1);
    (root, facet, good, bad)
}

fn synthetic_template(dir: &Path, facets: usize) -> (PathBuf, PathBuf, String, String) {
    let root = synthetic::generate(dir, facets);
    let facets_dir = root.join("contexts/_template/facets");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&facets_dir)
        .expect("facets")
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let facet = names[names.len() / 2].clone();
    let good = std::fs::read_to_string(&facet).expect("facet");
    let bad = good.replacen("${network.cidr", "${network.cdir", 1);
    assert_ne!(good, bad, "no reference to misspell in {}", facet.display());
    (root, facet, good, bad)
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Waits for the diagnostics of `file` at `version`; the server's log lines (its
/// analysis timings) go to `log`, other messages are skipped.
fn wait_diagnostics(client: &Connection, file: &str, version: i64, log: &mut String) -> Value {
    loop {
        let message = client
            .receiver
            .recv_timeout(Duration::from_secs(120))
            .expect("server answers");
        if let Message::Notification(n) = message {
            if n.method == "window/logMessage" {
                *log = n.params["message"].as_str().unwrap_or_default().to_string();
            }
            if n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == file
                && n.params["version"] == version
            {
                return n.params;
            }
        }
    }
}

/// Times the edits; `marker` is the misspelt name the bad text's diagnostic names.
fn measure(
    name: &str,
    (root, facet, good, bad): (PathBuf, PathBuf, String, String),
    marker: &str,
    o: &Options,
    incremental: bool,
) {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || bpc::lsp::server::serve(server));
    let root = root.canonicalize().expect("root");
    let facet = facet.canonicalize().expect("facet");
    let file = uri(&facet);
    let send = |m: Message| client.sender.send(m).expect("send");
    send(Message::Request(Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({"processId": null, "rootUri": uri(&root),
               "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": o.watch_files}}},
               "initializationOptions": {"bpc": {"debounceMs": o.debounce, "tests": o.tests,
                                                  "incremental": incremental}}}),
    )));
    loop {
        if let Ok(Message::Response(_)) = client.receiver.recv() {
            break;
        }
    }
    send(Message::Notification(Notification::new(
        "initialized".into(),
        json!({}),
    )));
    let open = Instant::now();
    send(Message::Notification(Notification::new(
        "textDocument/didOpen".into(),
        json!({"textDocument": {"uri": file, "languageId": "yaml", "version": 0, "text": good}}),
    )));
    let mut log = String::new();
    wait_diagnostics(&client, &file, 0, &mut log);
    let first = open.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::new();
    for i in 1..=o.edits {
        let text = if i % 2 == 1 { &bad } else { &good };
        let sent = Instant::now();
        send(Message::Notification(Notification::new(
            "textDocument/didChange".into(),
            json!({"textDocument": {"uri": file, "version": i}, "contentChanges": [{"text": text}]}),
        )));
        let params = wait_diagnostics(&client, &file, i as i64, &mut log);
        times.push(sent.elapsed().as_secs_f64() * 1e3);
        let misspelt = params["diagnostics"].as_array().is_some_and(|d| {
            d.iter()
                .any(|d| d["message"].as_str().is_some_and(|m| m.contains(marker)))
        });
        assert_eq!(misspelt, i % 2 == 1, "edit {i}: {params}");
        // A pause as between keystroke bursts, so test runs of the last snapshot
        // overlap the next edit as they would in an editor.
        std::thread::sleep(Duration::from_millis(50));
    }
    send(Message::Request(Request::new(
        RequestId::from(2),
        "shutdown".into(),
        Value::Null,
    )));
    send(Message::Notification(Notification::new(
        "exit".into(),
        Value::Null,
    )));
    drop(client);
    let _ = thread.join();
    times.sort_by(f64::total_cmp);
    println!(
        "{name}\tfirst {first:.1} ms\tdidChange→publishDiagnostics over {} edits: min {:.1}  median {:.1}  max {:.1} ms",
        times.len(),
        times[0],
        times[times.len() / 2],
        times[times.len() - 1]
    );
    println!("  last analysis: {log}");
}

fn main() {
    let o = options();
    let dir = tempfile::tempdir().expect("tempdir");
    println!(
        "debounce {} ms, tests {}, client watches files {}",
        o.debounce,
        if o.tests { "on" } else { "off" },
        if o.watch_files { "on" } else { "off" }
    );
    let modes: Vec<bool> = match o.incremental {
        Some(on) => vec![on],
        None => vec![false, true],
    };
    let core = windsor_core(dir.path());
    let large = synthetic_template(dir.path(), 1000);
    for (name, project, marker) in [
        ("windsor-core", core, "endpiont"),
        ("synthetic-1000", large, "cdir"),
    ] {
        for &incremental in &modes {
            let label = format!(
                "{name} (incremental {})",
                if incremental { "on" } else { "off" }
            );
            measure(&label, project.clone(), marker, &o, incremental);
        }
    }
}
