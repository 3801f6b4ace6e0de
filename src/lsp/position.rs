//! Positions as the protocol counts them: zero-based lines and UTF-16 code units
//! within a line. bpc's spans are byte offsets; every conversion goes through here.

use lsp_types::{Position, Range};
use std::sync::Arc;

/// Where each line of a text starts, for converting both ways.
pub struct LineIndex {
    text: Arc<str>,
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex::shared(Arc::from(text))
    }

    /// The index of a text held elsewhere (a loaded file's), without copying it.
    pub fn shared(text: Arc<str>) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped into the text and back onto a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of `position`; a character past the line's end is its end
    /// (the protocol says so), a line past the text's end is the text's end.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(self.text.len(), |&next| next - 1);
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= position.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_both_ways() {
        // `é` is one UTF-16 unit and two bytes; `𝄞` two units and four bytes.
        let text = "a: é𝄞x\nb: 1\r\nlast";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap_or_default();
        assert_eq!(index.position(x), Position::new(0, 6));
        assert_eq!(index.offset(Position::new(0, 6)), x);
        assert_eq!(
            index.position(text.find('b').unwrap_or_default()),
            Position::new(1, 0)
        );
        assert_eq!(
            index.offset(Position::new(1, 99)),
            text.find('\n').unwrap_or(0) + 6
        );
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(text.len() + 5), Position::new(2, 4));
        // Inside the four-byte character: back to its start.
        let clef = text.find('𝄞').unwrap_or_default();
        assert_eq!(index.position(clef + 1), Position::new(0, 4));
    }
}
