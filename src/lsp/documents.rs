//! The documents the editor has open: their text as typed, which stands for the file
//! on disk until the editor closes it. Changes arrive whole or as ranged edits.

use super::position::LineIndex;
use lsp_types::TextDocumentContentChangeEvent;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Document {
    pub text: String,
    pub version: i32,
}

#[derive(Default)]
pub struct Documents {
    open: BTreeMap<PathBuf, Document>,
}

impl Documents {
    pub fn open(&mut self, path: PathBuf, text: String, version: i32) {
        self.open.insert(path, Document { text, version });
    }

    pub fn close(&mut self, path: &Path) {
        self.open.remove(path);
    }

    /// Applies the editor's changes in order; a change without a range replaces the
    /// whole text. `false` when the document is not open.
    pub fn change(
        &mut self,
        path: &Path,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let Some(doc) = self.open.get_mut(path) else {
            return false;
        };
        for change in changes {
            match change.range {
                Some(range) => {
                    let index = LineIndex::new(&doc.text);
                    let start = index.offset(range.start);
                    let end = index.offset(range.end).max(start);
                    doc.text.replace_range(start..end, &change.text);
                }
                None => doc.text = change.text,
            }
        }
        doc.version = version;
        true
    }

    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.open.get(path)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, &Document)> {
        self.open.iter()
    }

    /// The text of `path`: the open document's, else the file on disk's when it is a
    /// regular file of at most a template file's size (a FIFO or a device named by
    /// a request is never opened for reading).
    pub fn text(&self, path: &Path) -> Option<String> {
        use std::io::Read;
        if let Some(doc) = self.open.get(path) {
            return Some(doc.text.clone());
        }
        let limit = crate::files::tree::MAX_FILE_BYTES;
        let file = crate::files::tree::open_regular(path, "", Some(limit)).ok()?;
        let mut text = String::new();
        file.take(limit).read_to_string(&mut text).ok()?;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    #[cfg(unix)]
    #[test]
    fn a_request_on_a_fifo_never_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED: mkfifo is not available here");
            return;
        }
        // Opening a FIFO for reading would block until a writer came: never returns.
        assert_eq!(Documents::default().text(&fifo), None);
        let file = dir.path().join("f.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        assert_eq!(Documents::default().text(&file).as_deref(), Some("a: 1\n"));
    }

    #[test]
    fn ranged_and_whole_changes() {
        let mut docs = Documents::default();
        let path = PathBuf::from("/p/f.yaml");
        docs.open(path.clone(), "a: é\nb: 2\n".to_string(), 1);
        let edit = |l1, c1, l2, c2, text: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l1, c1), Position::new(l2, c2))),
            range_length: None,
            text: text.to_string(),
        };
        assert!(docs.change(
            &path,
            2,
            vec![edit(0, 3, 0, 4, "x"), edit(1, 3, 1, 4, "20")]
        ));
        assert_eq!(
            docs.get(&path).map(|d| d.text.as_str()),
            Some("a: x\nb: 20\n")
        );
        let whole = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "new".to_string(),
        };
        assert!(docs.change(&path, 3, vec![whole]));
        assert_eq!(
            docs.get(&path).map(|d| (d.text.as_str(), d.version)),
            Some(("new", 3))
        );
        assert!(!docs.change(Path::new("/other"), 1, Vec::new()));
    }
}
