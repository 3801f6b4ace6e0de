//! `bpc lsp`: a Language Server Protocol server on stdio for writing facet
//! templates. Each burst of edits reloads the template with the open documents laid
//! over the files on disk ([`snapshot`]), checks it and composes every context;
//! diagnostics, hovers, definitions, completions and symbols come from that
//! analysis. docs/lsp.md lists the capabilities.

mod completion;
mod cursor;
mod definition;
mod diagnostics;
mod documents;
mod functions;
mod hover;
mod lookup;
mod position;
mod publish;
mod references;
pub mod server;
mod settings;
mod snapshot;
mod symbols;
mod test_lens;
mod test_runs;
pub mod transport;
mod uri;

/// Serves one editor over stdin/stdout until it exits.
pub fn serve_stdio() -> Result<(), String> {
    let (connection, threads) = transport::stdio()?;
    let served = server::serve(connection);
    let joined = threads.join();
    served.and(joined)
}
