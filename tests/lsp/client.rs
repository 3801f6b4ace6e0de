//! A minimal LSP client for the tests: spawns `bpc lsp`, frames JSON-RPC messages with
//! Content-Length headers over its pipes, and waits for responses and notifications.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    /// Notifications read while waiting for something else.
    pub notifications: Vec<Value>,
    next_id: i64,
}

/// How long any one answer may take before the test fails (a debug build on a
/// loaded machine; the figures that matter are in the benchmark).
pub const PATIENCE: Duration = Duration::from_secs(60);

impl Client {
    pub fn start(bin: &str, cwd: &Path) -> Client {
        let mut child = Command::new(bin)
            .arg("lsp")
            .current_dir(cwd)
            .env_remove("WINDSOR_CONTEXT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn bpc lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("Content-Length header")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let value: Value = serde_json::from_slice(&body).expect("JSON body");
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            notifications: Vec::new(),
            next_id: 1,
        }
    }

    pub fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Writes `bytes` to the server as they are, framed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Waits for any message satisfying `pred` (looking at those already received
    /// first); consumes it.
    pub fn wait_for_message(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.notifications.iter().position(&pred) {
            return self.notifications.remove(i);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = self.next(deadline).unwrap_or_else(|| {
                panic!(
                    "no message as expected; received: {}",
                    serde_json::to_string_pretty(&self.notifications).unwrap_or_default()
                )
            });
            if pred(&message) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response's `result` (panics on an error).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = self
                .next(deadline)
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                if let Some(error) = message.get("error") {
                    panic!("{method} failed: {error}");
                }
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    fn next(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming.recv_timeout(left).ok()
    }

    /// Waits for a notification `method` whose params satisfy `pred` (looking at
    /// those already received first); consumes it.
    pub fn wait_for(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method && pred(&n["params"]))
        {
            return self.notifications.remove(i)["params"].clone();
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let Some(message) = self.next(deadline) else {
                panic!(
                    "no {method} as expected; received: {}",
                    serde_json::to_string_pretty(&self.notifications).unwrap_or_default()
                );
            };
            if message["method"] == method && pred(&message["params"]) {
                return message["params"].clone();
            }
            self.notifications.push(message);
        }
    }

    /// The server's resident memory in KiB (`VmRSS` of /proc), where the system tells.
    pub fn resident_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// shutdown, exit, and the process's exit status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// The process's exit status, once it has exited.
    pub fn wait_exit(mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "bpc lsp did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `file://` URI of an absolute path (the test paths need no escaping).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}
