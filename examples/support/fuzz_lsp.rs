//! The `lsp` surface of the fuzz driver: a stream of JSON-RPC frames (edits, requests
//! at any position, settings, garbage, broken framing) read by the server's transport
//! and handed to one live `bpc lsp` server in this process, over the template written
//! to a scratch directory. Each input ends with a request whose answer must come: a
//! server that panicked out of its loop or stopped answering fails the run.

use crossbeam_channel::{unbounded, Receiver, Sender};
use lsp_server::{Connection, Message, Request, RequestId};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The facet the inputs edit, relative to the scratch project.
const EDITED: &str = "_template/facets/fuzz.yaml";

/// A server serving one scratch project for the whole run.
pub struct Rig {
    connection: Mutex<Client>,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

/// The client's end of the connection.
struct Client {
    to_server: Sender<Message>,
    from_server: Receiver<Message>,
    next_id: i32,
}

/// How long the closing request may take to be answered (an analysis included).
const PATIENCE: Duration = Duration::from_secs(30);

impl Rig {
    /// A server over `files` (paths relative to the template) in a scratch project.
    pub fn start(files: &std::collections::BTreeMap<String, Vec<u8>>) -> Rig {
        let dir = tempfile::tempdir().expect("scratch directory");
        let root = dir.path().canonicalize().expect("canonical");
        for (path, bytes) in files {
            let at = root.join("_template").join(path);
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(at, bytes).expect("write");
        }
        std::fs::write(root.join("windsor.yaml"), "version: v1alpha1\n").expect("write");
        let (server, client) = Connection::memory();
        std::thread::Builder::new()
            .name("fuzz-lsp-server".into())
            .spawn(move || {
                let _ = bpc::lsp::server::serve(server);
            })
            .expect("server thread");
        let mut connection = Client {
            to_server: client.sender,
            from_server: client.receiver,
            next_id: 0,
        };
        let params = json!({
            "processId": null,
            "rootUri": uri(&root),
            "capabilities": {},
            "initializationOptions": {"bpc": {"debounceMs": 0, "tests": false}},
        });
        connection.ask("initialize", params);
        let _ = connection
            .to_server
            .send(Message::Notification(lsp_server::Notification {
                method: "initialized".into(),
                params: json!({}),
            }));
        Rig {
            connection: Mutex::new(connection),
            root,
            _dir: dir,
        }
    }

    /// Runs one input: the frames of `stream` as the transport reads them, then a
    /// request that must be answered.
    pub fn run(&self, stream: &str) {
        match self.connection.lock() {
            Ok(mut client) => client.run(stream),
            Err(_) => panic!("an earlier input broke the server's connection"),
        }
    }
}

impl Client {
    /// Sends a request and waits for its answer; panics when none comes.
    fn ask(&mut self, method: &str, params: Value) {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_string(), params);
        assert!(
            self.to_server.send(Message::Request(request)).is_ok(),
            "the server is gone"
        );
        loop {
            match self.from_server.recv_timeout(PATIENCE) {
                Ok(Message::Response(r)) if r.id == id => return,
                Ok(_) => {}
                Err(e) => panic!("the server did not answer {method}: {e}"),
            }
        }
    }

    fn run(&mut self, stream: &str) {
        let (messages, read) = unbounded();
        let (refusals, _refused) = unbounded();
        let _ = bpc::lsp::transport::read_messages(&mut stream.as_bytes(), &messages, &refusals);
        drop(messages);
        for message in read.try_iter() {
            let message = match message {
                // The session lives on across inputs: no second initialize, no end.
                Message::Request(r) if ["initialize", "shutdown"].contains(&r.method.as_str()) => {
                    continue
                }
                Message::Notification(n) if n.method == "exit" => continue,
                Message::Request(mut r) => {
                    self.next_id += 1;
                    r.id = RequestId::from(self.next_id);
                    Message::Request(r)
                }
                other => other,
            };
            assert!(self.to_server.send(message).is_ok(), "the server is gone");
        }
        self.ask("workspace/symbol", json!({"query": ""}));
    }
}

impl Rig {
    /// The stream of one input: a few messages, each framed, sometimes broken.
    pub fn input(&self, rng: &mut super::Rng, donors: &[String]) -> String {
        let document = uri(&self.root.join(EDITED));
        let documents = [
            document.clone(),
            uri(&self.root.join("_template/facets/missing.yaml")),
            uri(&self.root.join("windsor.yaml")),
            "file:///".to_string(),
            "untitled:Untitled-1".to_string(),
            "file:///nonexistent/%ZZ/..".to_string(),
        ];
        let mut stream = String::new();
        for _ in 0..1 + rng.below(4) {
            let target = if rng.below(4) == 0 {
                rng.pick(&documents).clone()
            } else {
                document.clone()
            };
            let position = json!({"line": rng.below(60), "character": rng.below(90)});
            let at = json!({"textDocument": {"uri": target}, "position": position});
            let message = match rng.below(20) {
                // Edits are rarer than requests: each one costs an analysis.
                0 => {
                    let donor = rng.pick(donors).clone();
                    let text = super::mutate(rng, &donor, donors);
                    json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": target, "languageId": "yaml", "version": rng.below(1000), "text": text}}})
                }
                1 => {
                    let donor = rng.pick(donors).clone();
                    let text = super::mutate(rng, &donor, donors);
                    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": target, "version": rng.below(1000)}, "contentChanges": [{"range": {"start": position, "end": {"line": rng.below(60), "character": rng.below(90)}}, "text": text}]}})
                }
                2 => {
                    json!({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"bpc": {"context": *rng.pick(&["", "local", "prod", "../..", "a\u{1b}b"]), "debounceMs": rng.below(3), "tests": false}}}})
                }
                3 => {
                    json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {"textDocument": {"uri": 7}, "position": "x"}})
                }
                4 => {
                    json!({"jsonrpc": "2.0", "id": "s", "method": "workspace/executeCommand", "params": {"command": *rng.pick(&["bpc.runTest", "bpc.showBlueprint", "nope"]), "arguments": [rng.below(3), target]}})
                }
                5 => {
                    json!({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": target}}})
                }
                6 => {
                    json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": target}}})
                }
                7 => {
                    json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": target}}})
                }
                8 => {
                    json!({"jsonrpc": "2.0", "id": 4, "method": "textDocument/references", "params": {"textDocument": {"uri": target}, "position": position, "context": {"includeDeclaration": true}}})
                }
                9 => json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method", "params": null}),
                10..=12 => {
                    json!({"jsonrpc": "2.0", "id": 6, "method": "textDocument/completion", "params": at})
                }
                13..=15 => {
                    json!({"jsonrpc": "2.0", "id": 7, "method": "textDocument/definition", "params": at})
                }
                _ => {
                    json!({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": at})
                }
            };
            let mut body = message.to_string();
            if rng.below(10) == 0 {
                body = super::mutate(rng, &body, &[]);
            }
            stream.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        if rng.below(20) == 0 {
            stream = super::mutate(rng, &stream, &[]);
        }
        stream
    }
}

/// The one server of the run, started on first use.
pub fn rig(files: &std::collections::BTreeMap<String, Vec<u8>>) -> &'static Rig {
    static RIG: std::sync::OnceLock<Rig> = std::sync::OnceLock::new();
    RIG.get_or_init(|| Rig::start(files))
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}
