//! Every file bpc has read, by [`FileId`]: its display path and text. Append-only and
//! shared between threads, so a span can be resolved to `file:line:col` anywhere, late.

use super::span::FileId;
use std::sync::{Arc, OnceLock, RwLock};

/// One loaded file. Line starts are computed on first use: most files never need them.
#[derive(Debug)]
pub struct SourceFile {
    pub path: String,
    pub text: Arc<str>,
    line_starts: OnceLock<Vec<u32>>,
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<Arc<str>>) -> SourceFile {
        SourceFile {
            path: path.into(),
            text: text.into(),
            line_starts: OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.text
                        .bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect()
        })
    }

    /// Clamps `offset` into the text and onto a character boundary.
    fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    pub fn location(&self, offset: usize) -> Location {
        let offset = self.clamp(offset);
        let starts = self.line_starts();
        let line_index = starts.partition_point(|&s| s as usize <= offset) - 1;
        let line_start = starts[line_index] as usize;
        Location {
            line: line_index + 1,
            column: self.text[line_start..offset].chars().count() + 1,
        }
    }

    /// The text of 1-based `line`, without its line break; empty past the end.
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts().len()
    }

    pub fn line_text(&self, line: usize) -> &str {
        let starts = self.line_starts();
        let Some(&start) = line.checked_sub(1).and_then(|i| starts.get(i)) else {
            return "";
        };
        let end = starts
            .get(line)
            .map_or(self.text.len(), |&next| next as usize - 1);
        let text = &self.text[start as usize..end];
        text.strip_suffix('\r').unwrap_or(text)
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|i| self.line_starts().get(i))
            .map_or(self.text.len(), |&s| s as usize)
    }
}

#[derive(Debug, Default)]
pub struct FileMap {
    files: RwLock<Vec<Arc<SourceFile>>>,
}

impl FileMap {
    pub fn new() -> FileMap {
        FileMap::default()
    }

    /// `path:line:col` of a span's start, for one-line mentions (explain, provenance).
    pub fn describe(&self, span: super::Span) -> String {
        match (
            self.path(span.file),
            self.location(span.file, span.start as usize),
        ) {
            (Some(path), Some(loc)) => format!("{path}:{}:{}", loc.line, loc.column),
            (Some(path), None) => path,
            _ => "<unknown>".to_string(),
        }
    }

    /// Registers a file; `path` is how diagnostics name it (relative where possible).
    pub fn add(&self, path: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        let file = Arc::new(SourceFile::new(path, text));
        let mut files = self.files.write().unwrap_or_else(|p| p.into_inner());
        files.push(file);
        FileId((files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Option<Arc<SourceFile>> {
        let files = self.files.read().unwrap_or_else(|p| p.into_inner());
        files.get(id.0 as usize).cloned()
    }

    pub fn text(&self, id: FileId) -> Option<Arc<str>> {
        self.get(id).map(|f| f.text.clone())
    }

    pub fn path(&self, id: FileId) -> Option<String> {
        self.get(id).map(|f| f.path.clone())
    }

    pub fn location(&self, id: FileId, offset: usize) -> Option<Location> {
        self.get(id).map(|f| f.location(offset))
    }

    pub fn len(&self) -> usize {
        self.files.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let map = FileMap::new();
        let a = map.add("a.yaml", "one\ntwo é x\r\nthree");
        let b = map.add("b.yaml", "");
        assert_ne!(a, b);
        let loc = |offset| map.location(a, offset).expect("file");
        assert_eq!(loc(0), Location { line: 1, column: 1 });
        assert_eq!(loc(3), Location { line: 1, column: 4 });
        assert_eq!(loc(4), Location { line: 2, column: 1 });
        // 'x' follows the two-byte 'é': byte 11, character column 7.
        assert_eq!(loc(11), Location { line: 2, column: 7 });
        // Inside 'é': clamped back to its start.
        assert_eq!(loc(9), Location { line: 2, column: 5 });
        assert_eq!(loc(1000), Location { line: 3, column: 6 });
        let file = map.get(a).expect("file");
        assert_eq!(file.line_text(2), "two é x");
        assert_eq!(file.line_text(3), "three");
        assert_eq!(file.line_text(4), "");
        assert_eq!(file.line_text(0), "");
        assert_eq!(map.location(b, 5), Some(Location { line: 1, column: 1 }));
        assert_eq!(map.path(FileId(7)), None);
    }

    #[test]
    fn shared_between_threads() {
        let map = Arc::new(FileMap::new());
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let map = map.clone();
                std::thread::spawn(move || map.add(format!("f{i}"), "x"))
            })
            .collect();
        let mut ids: Vec<u32> = handles
            .into_iter()
            .map(|h| h.join().map(|id| id.0).unwrap_or(u32::MAX))
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 1, 2, 3]);
        assert_eq!(map.len(), 4);
    }
}
