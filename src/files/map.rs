//! Every file bpc has read, by [`FileId`]: its display path and text. Append-only and
//! shared between threads, so a span can be resolved to `file:line:col` anywhere, late.

use super::source_text::SourceText;
use super::span::FileId;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};

/// One loaded file. Line starts are computed on first use: most files never need them.
#[derive(Debug)]
pub struct SourceFile {
    pub path: String,
    text: SourceText,
    line_starts: OnceLock<Vec<u32>>,
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl SourceFile {
    fn new(path: impl Into<String>, text: SourceText) -> SourceFile {
        SourceFile {
            path: path.into(),
            text,
            line_starts: OnceLock::new(),
        }
    }

    /// The text; empty where it was let go of and the file has changed since (see
    /// [`SourceFile::readable`]).
    pub fn text(&self) -> &str {
        self.text.get().map_or("", |text| text)
    }

    /// Whether the text is there to show: always, unless it was let go of once parsed
    /// ([`FileMap::letting_go_of_texts`]) and the file changed on disk since.
    pub fn readable(&self) -> bool {
        self.text.get().is_some()
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.text()
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
        let text = self.text();
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
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
            column: self.text()[line_start..offset].chars().count() + 1,
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
        let body = self.text();
        let end = starts
            .get(line)
            .map_or(body.len(), |&next| next as usize - 1);
        let text = &body[start as usize..end];
        text.strip_suffix('\r').unwrap_or(text)
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|i| self.line_starts().get(i))
            .map_or(self.text().len(), |&s| s as usize)
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, for a
/// message about a file that is not in a [`FileMap`]; `None` past the end or inside
/// a character.
pub fn line_and_column(text: &str, offset: usize) -> Option<Location> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(Location {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    })
}

/// What a [`FileMap`] will hold of a text read from disk ([`FileMap::holding`]).
#[derive(Debug)]
pub struct Held(SourceText);

#[derive(Debug, Default)]
pub struct FileMap {
    files: RwLock<Vec<Arc<SourceFile>>>,
    /// Whether texts read from disk are let go of once parsed ([`FileMap::holding`]).
    let_go: bool,
}

impl FileMap {
    pub fn new() -> FileMap {
        FileMap::default()
    }

    /// A map that keeps a text read from disk only until it is parsed, and reads it
    /// again if a message needs it: for a run that composes once and exits.
    pub fn letting_go_of_texts() -> FileMap {
        FileMap {
            let_go: true,
            ..FileMap::default()
        }
    }

    /// Whether this map lets go of texts once parsed (see [`FileMap::holding`]).
    pub fn lets_go_of_texts(&self) -> bool {
        self.let_go
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
        self.add_held(path, Held(SourceText::Kept(text.into())))
    }

    /// What this map will hold of `text`, read from `disk` (`None`: not from disk)
    /// and about to be parsed: the text itself, or, in a map [letting go of
    /// texts](FileMap::letting_go_of_texts), only what reads it again (its length and
    /// hash). Made on the thread that read the text, which hashes it; registered in
    /// order with [`FileMap::add_held`]. The caller's text is then the only copy, let
    /// go of when the caller has parsed it.
    pub fn holding(&self, text: &Arc<str>, disk: Option<PathBuf>) -> Held {
        Held(match disk.filter(|_| self.let_go) {
            Some(disk) => SourceText::on_disk(text, disk),
            None => SourceText::Kept(Arc::clone(text)),
        })
    }

    /// Registers a file of which the map holds `held` ([`FileMap::holding`]).
    pub fn add_held(&self, path: impl Into<String>, held: Held) -> FileId {
        let file = Arc::new(SourceFile::new(path, held.0));
        let mut files = self.files.write().unwrap_or_else(|p| p.into_inner());
        files.push(file);
        FileId((files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Option<Arc<SourceFile>> {
        let files = self.files.read().unwrap_or_else(|p| p.into_inner());
        files.get(id.0 as usize).cloned()
    }

    pub fn text(&self, id: FileId) -> Option<Arc<str>> {
        self.get(id).and_then(|f| f.text.get().cloned())
    }

    pub fn path(&self, id: FileId) -> Option<String> {
        self.get(id).map(|f| f.path.clone())
    }

    /// Where `offset` is in file `id`; `None` for an unknown file, or one whose text
    /// is not [readable](SourceFile::readable).
    pub fn location(&self, id: FileId, offset: usize) -> Option<Location> {
        self.get(id)
            .filter(|f| f.readable())
            .map(|f| f.location(offset))
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
    fn a_line_and_column_of_text_outside_the_map() {
        let at = line_and_column("a: 1\nnamé: x\n", 12).unwrap();
        assert_eq!((at.line, at.column), (2, 7));
        assert!(line_and_column("é", 1).is_none());
        assert!(line_and_column("ab", 3).is_none());
    }

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

    /// A map letting go of texts, with one file parsed from `dir/name` holding `text`.
    fn let_go_of(dir: &std::path::Path, name: &str, text: &str) -> (FileMap, FileId) {
        let disk = dir.join(name);
        std::fs::write(&disk, text).expect("write");
        let map = FileMap::letting_go_of_texts();
        let id = map.add_held(name, map.holding(&Arc::from(text), Some(disk)));
        (map, id)
    }

    #[test]
    fn a_text_let_go_of_is_read_again_for_a_message() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (map, id) = let_go_of(dir.path(), "a.yaml", "one\ntwo\n");
        assert_eq!(map.text(id).as_deref(), Some("one\ntwo\n"));
        assert_eq!(map.location(id, 5), Some(Location { line: 2, column: 2 }));
        assert_eq!(map.get(id).expect("file").line_text(2), "two");
    }

    #[test]
    fn a_text_changed_on_disk_since_is_not_shown_for_the_one_parsed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (map, id) = let_go_of(dir.path(), "a.yaml", "one\ntwo\n");
        // Same length, other bytes: the hash tells them apart.
        std::fs::write(dir.path().join("a.yaml"), "one\ntwX\n").expect("write");
        assert_eq!(map.text(id), None);
        assert_eq!(map.location(id, 5), None);
        assert_eq!(map.describe(crate::files::Span::new(id, 5, 6)), "a.yaml");
        let d = crate::files::Diagnostic::error("bad value")
            .with_primary(crate::files::Span::new(id, 4, 7), "here");
        assert_eq!(
            crate::files::render(&d, &map, false),
            "error: bad value\n= note: a.yaml changed on disk while bpc ran: the place is not shown\n"
        );
    }

    #[test]
    fn only_a_map_letting_go_of_texts_and_only_files_from_disk_let_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gone = dir.path().join("gone.yaml");
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a: 1\n"), Arc::from("b: 2\n"));
        let keeping = FileMap::new();
        let kept = keeping.add_held("gone.yaml", keeping.holding(&a, Some(gone.clone())));
        assert_eq!(keeping.text(kept).as_deref(), Some("a: 1\n"));
        let letting_go = FileMap::letting_go_of_texts();
        let buffer = letting_go.add_held("buffer.yaml", letting_go.holding(&b, None));
        assert_eq!(letting_go.text(buffer).as_deref(), Some("b: 2\n"));
        let on_disk = letting_go.add_held("gone.yaml", letting_go.holding(&a, Some(gone)));
        assert_eq!(letting_go.text(on_disk), None, "the file was never on disk");
    }

    #[cfg(unix)]
    #[test]
    fn what_took_a_files_place_is_not_followed_or_waited_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "one\ntwo\n").expect("write");
        let (map, id) = let_go_of(dir.path(), "link.yaml", "one\ntwo\n");
        std::fs::remove_file(dir.path().join("link.yaml")).expect("remove");
        std::os::unix::fs::symlink(&secret, dir.path().join("link.yaml")).expect("symlink");
        assert_eq!(map.text(id), None, "a symlink is not followed");
        let (map, id) = let_go_of(dir.path(), "fifo.yaml", "x: 1\n");
        std::fs::remove_file(dir.path().join("fifo.yaml")).expect("remove");
        let fifo =
            std::ffi::CString::new(dir.path().join("fifo.yaml").as_os_str().as_encoded_bytes())
                .expect("path");
        // SAFETY: `mkfifo` reads the NUL-terminated path and creates a FIFO there.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(map.text(id), None, "a FIFO is not waited on");
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
