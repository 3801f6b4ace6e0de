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

    /// The text of `path`: the open document's, else the file on disk's.
    pub fn text(&self, path: &Path) -> Option<String> {
        match self.open.get(path) {
            Some(doc) => Some(doc.text.clone()),
            None => std::fs::read_to_string(path).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

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
