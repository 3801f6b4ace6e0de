//! The server loop: one thread reads the editor's messages, keeps the open
//! documents, rebuilds the [`Snapshot`] after each burst of edits (the debounce: no
//! edit for the quiet period, or a request that needs the analysis) and answers
//! requests from the newest snapshot; test runs happen on their own thread.

use super::documents::Documents;
use super::position::LineIndex;
use super::settings::Settings;
use super::snapshot::{Reuse, Snapshot};
use super::test_runs::TestRuns;
use lsp_server::{Connection, ExtractError, Message, Notification, Request, Response};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use std::collections::VecDeque;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the server offers (docs/lsp.md lists it).
pub fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec![".".into(), "{".into(), "'".into(), " ".into()]),
            ..lsp::CompletionOptions::default()
        }),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        code_lens_provider: Some(lsp::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands: vec![
                super::test_lens::RUN.to_string(),
                super::test_lens::SHOW.to_string(),
            ],
            ..lsp::ExecuteCommandOptions::default()
        }),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        ..lsp::ServerCapabilities::default()
    }
}

/// Serves one client over `connection` until it exits.
pub fn serve(connection: Connection) -> Result<(), String> {
    let capabilities = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let params = connection
        .initialize(capabilities)
        .map_err(|e| format!("initialize: {e}"))?;
    let params: lsp::InitializeParams =
        serde_json::from_value(params).map_err(|e| format!("initialize params: {e}"))?;
    let root = workspace_root(&params)?;
    let settings = params
        .initialization_options
        .as_ref()
        .map_or_else(Settings::default, |o| Settings::default().updated(o));
    let tests = TestRuns::spawn(connection.sender.clone());
    let watch_files = super::snapshot::watch_registration(&params);
    let mut server = Server {
        root,
        settings,
        documents: Documents::default(),
        snapshot: None,
        generation: 0,
        dirty_since: Some(Instant::now()),
        changed: BTreeSet::new(),
        published: BTreeMap::new(),
        tests,
        reuse: Reuse::new(),
        last_analysis: None,
        backlog: VecDeque::new(),
        shutting_down: false,
        connection: &connection,
    };
    if let Some(request) = watch_files {
        server.reuse.watch_files(&server.root);
        server.send(Message::Request(request));
    }
    server.run()
}

/// The workspace folder (else the root URI, else the process's directory).
#[allow(deprecated)] // `root_uri` and `root_path` are how older clients say it.
fn workspace_root(params: &lsp::InitializeParams) -> Result<PathBuf, String> {
    let from_folders = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .and_then(|f| super::uri::to_path(&f.uri));
    let from_uri = params.root_uri.as_ref().and_then(super::uri::to_path);
    let from_path = params.root_path.as_ref().map(PathBuf::from);
    let root = match from_folders.or(from_uri).or(from_path) {
        Some(root) => root,
        None => std::env::current_dir().map_err(|e| format!("current directory: {e}"))?,
    };
    Ok(root.canonicalize().unwrap_or(root))
}

struct Server<'c> {
    root: PathBuf,
    settings: Settings,
    documents: Documents,
    snapshot: Option<Arc<Snapshot>>,
    generation: u64,
    /// When the first edit not yet analysed arrived.
    dirty_since: Option<Instant>,
    /// Documents edited since the last analysis (always published, so the editor
    /// sees their new version analysed).
    changed: BTreeSet<PathBuf>,
    /// What was last published per file (test files excepted).
    published: BTreeMap<PathBuf, Vec<lsp::Diagnostic>>,
    tests: TestRuns,
    /// Files read and facets parsed by earlier analyses.
    reuse: Reuse,
    /// How long the last analysis took (`None` before the first).
    last_analysis: Option<Duration>,
    /// Messages that arrived while an analysis ran, handled in order after it.
    backlog: VecDeque<Message>,
    /// `shutdown` was answered: only `exit` is served now.
    shutting_down: bool,
    connection: &'c Connection,
}

impl Server<'_> {
    fn run(&mut self) -> Result<(), String> {
        let mut last_edit = Instant::now();
        loop {
            let message = match self.backlog.pop_front() {
                Some(waiting) => waiting,
                None => match self.dirty_since {
                    Some(_) => {
                        let deadline =
                            last_edit + quiet_period(self.settings.debounce_ms, self.last_analysis);
                        match self.connection.receiver.recv_deadline(deadline) {
                            Ok(m) => m,
                            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                                self.analyse();
                                continue;
                            }
                            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(()),
                        }
                    }
                    None => match self.connection.receiver.recv() {
                        Ok(m) => m,
                        Err(_) => return Ok(()),
                    },
                },
            };
            match message {
                Message::Request(request) if self.shutting_down => {
                    // After `shutdown` the protocol allows only `exit`.
                    self.send(Message::Response(Response::new_err(
                        request.id,
                        lsp_server::ErrorCode::InvalidRequest as i32,
                        "the server is shutting down".into(),
                    )));
                }
                Message::Request(request)
                    if request.method
                        == <lsp::request::Shutdown as lsp::request::Request>::METHOD =>
                {
                    self.shutting_down = true;
                    self.send(Message::Response(Response::new_ok(
                        request.id,
                        serde_json::Value::Null,
                    )));
                }
                Message::Notification(n)
                    if n.method
                        == <lsp::notification::Exit as lsp::notification::Notification>::METHOD =>
                {
                    // The protocol's exit status: 0 after `shutdown`, 1 without.
                    return if self.shutting_down {
                        Ok(())
                    } else {
                        Err("the client sent `exit` without `shutdown` first".to_string())
                    };
                }
                Message::Notification(_) if self.shutting_down => {}
                Message::Request(request) => {
                    if self.dirty_since.is_some() {
                        self.analyse();
                    }
                    // A bug in one answer must not take the editor's server down.
                    let id = request.id.clone();
                    let response = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.request(request)
                    }))
                    .unwrap_or_else(|_| {
                        Response::new_err(
                            id,
                            lsp_server::ErrorCode::InternalError as i32,
                            "bpc lsp failed on this request (a bug: please report it)".into(),
                        )
                    });
                    self.send(Message::Response(response));
                }
                Message::Notification(notification) => {
                    if self.notification(notification) {
                        last_edit = Instant::now();
                        self.dirty_since.get_or_insert(last_edit);
                    }
                }
                Message::Response(_) => {}
            }
        }
    }

    fn send(&self, message: Message) {
        // A closed channel means the client is gone; the loop ends on the next read.
        let _ = self.connection.sender.send(message);
    }

    /// Handles a notification; `true` when it calls for a new analysis.
    fn notification(&mut self, n: Notification) -> bool {
        use lsp::notification::*;
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let opened = about_document(n.params, |p: &lsp::DidOpenTextDocumentParams| {
                    &p.text_document.uri
                });
                let Some((path, p)) = opened else {
                    return false;
                };
                self.changed.insert(path.clone());
                self.reuse.document_changed(&path);
                self.documents
                    .open(path, p.text_document.text, p.text_document.version);
                true
            }
            DidChangeTextDocument::METHOD => {
                let changed = about_document(n.params, |p: &lsp::DidChangeTextDocumentParams| {
                    &p.text_document.uri
                });
                let Some((path, p)) = changed else {
                    return false;
                };
                self.changed.insert(path.clone());
                self.reuse.document_changed(&path);
                self.documents
                    .change(&path, p.text_document.version, p.content_changes)
            }
            DidCloseTextDocument::METHOD => {
                let closed = about_document(n.params, |p: &lsp::DidCloseTextDocumentParams| {
                    &p.text_document.uri
                });
                let Some((path, _)) = closed else {
                    return false;
                };
                self.documents.close(&path);
                self.reuse.document_changed(&path);
                true
            }
            DidSaveTextDocument::METHOD => {
                let saved = about_document(n.params, |p: &lsp::DidSaveTextDocumentParams| {
                    &p.text_document.uri
                });
                match saved {
                    Some((path, _)) => self.reuse.document_changed(&path),
                    None => self.reuse.engine.unknown_changes(),
                }
                true
            }
            DidChangeWatchedFiles::METHOD => {
                self.reuse.files_changed(n.params);
                true
            }
            DidChangeConfiguration::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeConfigurationParams>(n.params)
                else {
                    return false;
                };
                let next = self.settings.updated(&p.settings);
                let changed = next != self.settings;
                if next.pull != self.settings.pull {
                    // The user changed how pulls go: failed ones may be tried again.
                    self.reuse.failed_pulls = crate::oci::FailedPulls::default();
                }
                self.settings = next;
                changed
            }
            _ => false,
        }
    }

    /// Builds the snapshot on a thread of its own while this one keeps reading the
    /// client: what arrives meanwhile waits in the backlog, and an edit (or a shutdown)
    /// cancels the analysis, whose result then is dropped unseen. `None` when it was
    /// cancelled or failed.
    fn build_snapshot(&mut self) -> Option<Result<Snapshot, ()>> {
        let (root, settings, documents) = (&self.root, &self.settings, &self.documents);
        let (generation, reuse) = (self.generation, &mut self.reuse);
        let cancel = Arc::new(AtomicBool::new(false));
        let (receiver, backlog) = (&self.connection.receiver, &mut self.backlog);
        let built = std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("lsp-analysis".into())
                .stack_size(ANALYSIS_STACK)
                .spawn_scoped(scope, || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        Snapshot::build(root, settings, documents, generation, reuse, &cancel)
                    }))
                    .map_err(|_| ())
                });
            let Ok(worker) = worker else {
                return Some(Err(()));
            };
            let mut client_gone = false;
            while !worker.is_finished() {
                if client_gone {
                    std::thread::sleep(ANALYSIS_POLL);
                    continue;
                }
                match receiver.recv_timeout(ANALYSIS_POLL) {
                    Ok(message) => {
                        if makes_analysis_moot(&message) {
                            cancel.store(true, Ordering::SeqCst);
                        }
                        backlog.push_back(message);
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                        cancel.store(true, Ordering::SeqCst);
                        client_gone = true;
                    }
                }
            }
            let built = worker.join().unwrap_or(Err(()));
            (!cancel.load(Ordering::SeqCst)).then_some(built)
        });
        if built.is_none() {
            // The incremental memo may hold what the cancelled compositions left
            // unfinished: the next analysis starts afresh.
            self.reuse = self.reuse.afresh();
            self.dirty_since.get_or_insert_with(Instant::now);
        }
        built
    }

    /// Rebuilds the snapshot, publishes what changed and hands it to the test thread.
    fn analyse(&mut self) {
        self.generation += 1;
        self.dirty_since = None;
        let started = Instant::now();
        let Some(built) = self.build_snapshot() else {
            return;
        };
        let Ok(snapshot) = built else {
            // A bug while analysing: say so, keep the last analysis, start afresh.
            self.reuse = self.reuse.afresh();
            let params = lsp::ShowMessageParams {
                typ: lsp::MessageType::ERROR,
                message: "bpc lsp failed to analyse the project (a bug: please report it)".into(),
            };
            if let Ok(params) = serde_json::to_value(params) {
                self.send(Message::Notification(Notification {
                    method: lsp::notification::ShowMessage::METHOD.to_string(),
                    params,
                }));
            }
            return;
        };
        let snapshot = Arc::new(snapshot);
        let converting = Instant::now();
        let found = super::diagnostics::of_snapshot(&snapshot);
        let mut timings: Vec<String> = snapshot
            .timings
            .iter()
            .map(|(step, took)| format!("{step} {:.1} ms", took.as_secs_f64() * 1e3))
            .collect();
        timings.push(format!(
            "diagnostics {:.1} ms",
            converting.elapsed().as_secs_f64() * 1e3
        ));
        let log = lsp::LogMessageParams {
            typ: lsp::MessageType::LOG,
            message: format!(
                "bpc: analysis {} (context `{}`, {} context(s)): {}",
                snapshot.generation,
                snapshot.context,
                snapshot.compositions.len(),
                timings.join(", ")
            ),
        };
        if let Ok(params) = serde_json::to_value(log) {
            self.send(Message::Notification(Notification {
                method: lsp::notification::LogMessage::METHOD.to_string(),
                params,
            }));
        }
        let tests_dir = snapshot.template_dir().map(|d| d.join("tests"));
        let is_test = |p: &Path| {
            tests_dir.as_ref().is_some_and(|d| p.starts_with(d))
                && p.to_string_lossy().contains(".test.y")
        };
        let mut next: BTreeMap<PathBuf, Vec<lsp::Diagnostic>> = found.files;
        if !found.unplaced.is_empty() {
            for (path, _) in self.documents.iter() {
                next.entry(path.clone())
                    .or_default()
                    .extend(found.unplaced.iter().cloned());
            }
        }
        next.retain(|p, _| !is_test(p));
        let changed = std::mem::take(&mut self.changed);
        let paths: BTreeSet<PathBuf> = next
            .keys()
            .chain(self.published.keys())
            .chain(changed.iter().filter(|p| !is_test(p)))
            .cloned()
            .collect();
        for path in paths {
            let now = next.get(&path).cloned().unwrap_or_default();
            let unchanged = self
                .published
                .get(&path)
                .is_some_and(|before| *before == now)
                || (now.is_empty() && !self.published.contains_key(&path));
            if unchanged && !changed.contains(&path) {
                continue;
            }
            let version = self.documents.get(&path).map(|d| d.version);
            if let Some(message) = super::publish::publish(&path, now, version) {
                self.send(message);
            }
        }
        self.published = next;
        self.last_analysis = Some(started.elapsed());
        self.snapshot = Some(snapshot.clone());
        if self.settings.tests {
            self.tests
                .latest
                .store(snapshot.generation, Ordering::SeqCst);
            let _ = self.tests.queue.send(snapshot);
        }
    }

    fn request(&mut self, request: Request) -> Response {
        use lsp::request::*;
        let id = request.id.clone();
        let result = match request.method.as_str() {
            HoverRequest::METHOD => self.answer::<HoverRequest>(request, |s, p| s.hover(p)),
            GotoDefinition::METHOD => {
                self.answer::<GotoDefinition>(request, |s, p| s.definition(p))
            }
            References::METHOD => self.answer::<References>(request, |s, p| s.references(p)),
            Completion::METHOD => self.answer::<Completion>(request, |s, p| s.completion(p)),
            CodeLensRequest::METHOD => {
                self.answer::<CodeLensRequest>(request, |s, p| s.code_lens(p))
            }
            ExecuteCommand::METHOD => self.answer::<ExecuteCommand>(request, |s, p| s.execute(p)),
            DocumentSymbolRequest::METHOD => {
                self.answer::<DocumentSymbolRequest>(request, |s, p| s.document_symbols(p))
            }
            WorkspaceSymbolRequest::METHOD => {
                self.answer::<WorkspaceSymbolRequest>(request, |s, p| s.workspace_symbols(p))
            }
            _ => Err((
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("unhandled method {}", request.method),
            )),
        };
        match result {
            Ok(value) => Response::new_ok(id, value),
            Err((code, message)) => Response::new_err(id, code, message),
        }
    }

    fn answer<R: lsp::request::Request>(
        &mut self,
        request: Request,
        f: impl FnOnce(&Self, R::Params) -> R::Result,
    ) -> Result<serde_json::Value, (i32, String)> {
        let params = match request.extract::<R::Params>(R::METHOD) {
            Ok((_, params)) => params,
            Err(ExtractError::JsonError { error, .. }) => {
                return Err((
                    lsp_server::ErrorCode::InvalidParams as i32,
                    error.to_string(),
                ))
            }
            Err(ExtractError::MethodMismatch(r)) => {
                return Err((
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("unhandled method {}", r.method),
                ))
            }
        };
        let result = f(self, params);
        serde_json::to_value(result)
            .map_err(|e| (lsp_server::ErrorCode::InternalError as i32, e.to_string()))
    }

    /// The snapshot, the document's path, text and the byte offset of `position`.
    fn at(
        &self,
        document: &lsp::TextDocumentPositionParams,
    ) -> Option<(&Snapshot, PathBuf, String, usize)> {
        let snapshot = self.snapshot.as_deref()?;
        let path = local_path(&document.text_document.uri)?;
        let text = self.documents.text(&path)?;
        let offset = LineIndex::new(&text).offset(document.position);
        Some((snapshot, path, text, offset))
    }

    fn hover(&self, p: lsp::HoverParams) -> Option<lsp::Hover> {
        let (snapshot, path, text, offset) = self.at(&p.text_document_position_params)?;
        let (markdown, start, end) = super::hover::hover(snapshot, &path, &text, offset)?;
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(LineIndex::new(&text).range(start, end)),
        })
    }

    fn definition(&self, p: lsp::GotoDefinitionParams) -> Option<lsp::GotoDefinitionResponse> {
        let (snapshot, path, text, offset) = self.at(&p.text_document_position_params)?;
        let found = super::definition::definition(snapshot, &path, &text, offset);
        (!found.is_empty()).then_some(lsp::GotoDefinitionResponse::Array(found))
    }

    fn references(&self, p: lsp::ReferenceParams) -> Option<Vec<lsp::Location>> {
        let (snapshot, _, text, offset) = self.at(&p.text_document_position)?;
        let declaration = p.context.include_declaration;
        Some(super::references::references(
            snapshot,
            &text,
            offset,
            declaration,
        ))
    }

    fn completion(&self, p: lsp::CompletionParams) -> Option<lsp::CompletionResponse> {
        let (snapshot, _, text, offset) = self.at(&p.text_document_position)?;
        let items = super::completion::completion(snapshot, &text, offset);
        Some(lsp::CompletionResponse::Array(items))
    }

    fn code_lens(&self, p: lsp::CodeLensParams) -> Option<Vec<lsp::CodeLens>> {
        let snapshot = self.snapshot.as_deref()?;
        let path = local_path(&p.text_document.uri)?;
        Some(super::test_lens::lenses(snapshot, &path))
    }

    /// Runs a test command; the text goes to the user and back as the answer.
    fn execute(&self, p: lsp::ExecuteCommandParams) -> Option<serde_json::Value> {
        let snapshot = self.snapshot.as_deref()?;
        let name = p.arguments.first()?.as_str()?;
        let result = super::test_lens::execute(snapshot, &p.command, name);
        let (text, failed) = match &result {
            Ok(text) => (text.clone(), false),
            Err(text) => (text.clone(), true),
        };
        let (method, params) = if p.command == super::test_lens::SHOW && !failed {
            let params = lsp::LogMessageParams {
                typ: lsp::MessageType::INFO,
                message: text.clone(),
            };
            (
                lsp::notification::LogMessage::METHOD,
                serde_json::to_value(params),
            )
        } else {
            let params = lsp::ShowMessageParams {
                typ: if failed {
                    lsp::MessageType::ERROR
                } else {
                    lsp::MessageType::INFO
                },
                message: text.clone(),
            };
            (
                lsp::notification::ShowMessage::METHOD,
                serde_json::to_value(params),
            )
        };
        if let Ok(params) = params {
            self.send(Message::Notification(Notification {
                method: method.to_string(),
                params,
            }));
        }
        Some(serde_json::json!({"passed": !failed, "text": text}))
    }

    fn document_symbols(
        &self,
        p: lsp::DocumentSymbolParams,
    ) -> Option<lsp::DocumentSymbolResponse> {
        let snapshot = self.snapshot.as_deref()?;
        let path = local_path(&p.text_document.uri)?;
        Some(lsp::DocumentSymbolResponse::Nested(
            super::symbols::document(snapshot, &path),
        ))
    }

    fn workspace_symbols(
        &self,
        p: lsp::WorkspaceSymbolParams,
    ) -> Option<lsp::WorkspaceSymbolResponse> {
        let snapshot = self.snapshot.as_deref()?;
        Some(lsp::WorkspaceSymbolResponse::Flat(
            super::symbols::workspace(snapshot, &p.query),
        ))
    }
}

/// How long to wait after an edit before analysing: `debounce_ms` at most, and no
/// longer than the last analysis took. The wait only pays when it saves an analysis
/// that the next keystroke would make stale; waiting longer than an analysis lasts
/// adds more latency than it can save work, so a small template is analysed almost at
/// once and a large one still waits for a pause in typing.
fn quiet_period(debounce_ms: u64, last_analysis: Option<Duration>) -> Duration {
    let most = Duration::from_millis(debounce_ms);
    last_analysis.map_or(most, |took| took.min(most))
}

/// The path of a document URI, resolved as the analysis names files.
/// A notification's parameters about one document, with the document's local path;
/// `None` (the notification is ignored) when they do not decode or name no local file.
fn about_document<P: serde::de::DeserializeOwned>(
    params: serde_json::Value,
    uri: impl Fn(&P) -> &lsp::Uri,
) -> Option<(PathBuf, P)> {
    let params = serde_json::from_value::<P>(params).ok()?;
    Some((local_path(uri(&params))?, params))
}

fn local_path(uri: &lsp::Uri) -> Option<PathBuf> {
    let path = super::uri::to_path(uri)?;
    Some(path.canonicalize().unwrap_or(path))
}

/// Stack of the analysis thread: as deep as the main thread's, which analysed before.
const ANALYSIS_STACK: usize = 8 * 1024 * 1024;

/// How often the loop looks whether the analysis finished while no message arrives.
const ANALYSIS_POLL: Duration = Duration::from_millis(5);

/// Whether `message`, arriving during an analysis, makes its result moot: an edit of
/// what it analyses, new settings, or the end of the session.
fn makes_analysis_moot(message: &Message) -> bool {
    use lsp::notification::*;
    match message {
        Message::Notification(n) => [
            DidOpenTextDocument::METHOD,
            DidChangeTextDocument::METHOD,
            DidCloseTextDocument::METHOD,
            DidSaveTextDocument::METHOD,
            DidChangeWatchedFiles::METHOD,
            DidChangeConfiguration::METHOD,
            Exit::METHOD,
        ]
        .contains(&n.method.as_str()),
        Message::Request(r) => {
            r.method == <lsp::request::Shutdown as lsp::request::Request>::METHOD
        }
        Message::Response(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quiet_period_is_the_debounce_at_most_and_the_last_analysis_at_least_as_long() {
        let ms = Duration::from_millis;
        assert_eq!(quiet_period(30, None), ms(30), "before the first analysis");
        assert_eq!(quiet_period(30, Some(ms(8))), ms(8), "a cheap analysis");
        assert_eq!(quiet_period(30, Some(ms(200))), ms(30), "an expensive one");
        assert_eq!(quiet_period(0, Some(ms(8))), ms(0), "no debounce");
    }
}
