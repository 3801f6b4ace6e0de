//! The one notification both the analysis and the test thread send: a file's
//! diagnostics, replacing what the editor showed for it.

use lsp_server::{Message, Notification};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use std::path::Path;

/// A `textDocument/publishDiagnostics` notification.
pub fn publish(
    path: &Path,
    diagnostics: Vec<lsp::Diagnostic>,
    version: Option<i32>,
) -> Option<Message> {
    let params = lsp::PublishDiagnosticsParams {
        uri: super::uri::from_path(path)?,
        diagnostics,
        version,
    };
    Some(Message::Notification(Notification::new(
        lsp::notification::PublishDiagnostics::METHOD.to_string(),
        params,
    )))
}
