//! A written document kept in pieces, in order.
//!
//! A blueprint of 10 000 facets is a few megabytes of YAML, built at the end of the
//! run, when the most memory is in use. Grown as one `String`, it copied itself at
//! every doubling (about twice its size touched), and the texts of a long list
//! written on several threads were copied once more to join them. In pieces of at
//! most about [`PIECE`] bytes, each allocated once at that size, the document costs
//! its own size: the writer starts a new piece at a line's start once the current one
//! is full, and texts written apart are joined by moving their pieces.

/// Bytes after which the writer starts a new piece (at the next line it begins).
pub const PIECE: usize = 64 << 10;

/// A document as its pieces; joined, they are its text.
#[derive(Clone, Debug, Default)]
pub struct Pieces {
    pieces: Vec<String>,
}

impl Pieces {
    /// The document's length in bytes.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(String::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.iter().all(String::is_empty)
    }

    /// Adds a piece after the others (nothing for an empty one).
    pub fn push(&mut self, piece: String) {
        if !piece.is_empty() {
            self.pieces.push(piece);
        }
    }

    /// Moves `later`'s pieces after these.
    pub fn append(&mut self, later: Pieces) {
        self.pieces.extend(later.pieces);
    }

    /// The pieces as bytes, in order, to be written one after another.
    pub fn as_bytes(&self) -> Vec<&[u8]> {
        self.pieces.iter().map(String::as_bytes).collect()
    }

    /// The whole text (a document of one piece is not copied).
    pub fn into_string(mut self) -> String {
        if self.pieces.len() <= 1 {
            return self.pieces.pop().unwrap_or_default();
        }
        let mut text = String::with_capacity(self.len());
        self.pieces.iter().for_each(|piece| text.push_str(piece));
        text
    }
}

/// Moves `later`'s pieces after a text being written: the pieces `done` (of
/// `done_len` bytes in all) and the piece `out` (which then starts again empty).
pub fn append_after(done: &mut Pieces, done_len: &mut usize, out: &mut String, later: Pieces) {
    let current = std::mem::take(out);
    *done_len += current.len() + later.len();
    done.push(current);
    done.append(later);
}

/// A text being written in pieces, between the writes of a writer made for each
/// (the item writers of `emit::yaml` and `emit::json`): the pieces finished, their
/// length, and the piece being written.
#[derive(Default)]
pub struct Unfinished {
    pub done: Pieces,
    pub done_len: usize,
    pub out: String,
}

impl Unfinished {
    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.done_len + self.out.len()
    }

    /// The text written, in pieces.
    pub fn finish(mut self) -> Pieces {
        self.done.push(self.out);
        self.done
    }
}

impl From<String> for Pieces {
    fn from(text: String) -> Pieces {
        let mut pieces = Pieces::default();
        pieces.push(text);
        pieces
    }
}

/// Equal when the texts are, wherever the pieces are cut (compared a run of bytes at
/// a time: `--watch` compares each new blueprint with the last one written).
impl PartialEq for Pieces {
    fn eq(&self, other: &Pieces) -> bool {
        if self.len() != other.len() {
            return false;
        }
        let (mut mine, mut theirs) = (self.pieces.iter(), other.pieces.iter());
        let (mut a, mut b): (&[u8], &[u8]) = (&[], &[]);
        loop {
            if a.is_empty() {
                match mine.next() {
                    Some(piece) => a = piece.as_bytes(),
                    // As long as the other: both are at their ends.
                    None => return true,
                }
            } else if b.is_empty() {
                match theirs.next() {
                    Some(piece) => b = piece.as_bytes(),
                    None => return true,
                }
            } else {
                let n = a.len().min(b.len());
                if a[..n] != b[..n] {
                    return false;
                }
                (a, b) = (&a[n..], &b[n..]);
            }
        }
    }
}

impl Eq for Pieces {}

#[cfg(test)]
mod tests {
    use super::Pieces;

    fn pieces(parts: &[&str]) -> Pieces {
        let mut p = Pieces::default();
        parts.iter().for_each(|s| p.push(s.to_string()));
        p
    }

    #[test]
    fn the_text_is_the_pieces_joined_wherever_they_are_cut() {
        let a = pieces(&["kind: A\n", "", "name: x\n"]);
        let b = pieces(&["kind: A\nna", "me: x\n"]);
        assert_eq!(a.len(), 16);
        assert_eq!(a, b);
        assert_ne!(a, pieces(&["kind: A\nname: y\n"]));
        assert_ne!(
            a,
            pieces(&["kind: A\n", "name: y\n"]),
            "differs in the last byte"
        );
        assert_ne!(a, pieces(&["kind: A\nname: x"]), "shorter");
        assert_eq!(a.clone().into_string(), "kind: A\nname: x\n");
        assert_eq!(a.as_bytes().len(), 2, "empty pieces are not kept");
        let mut joined = pieces(&["a\n"]);
        joined.append(pieces(&["b\n", "c\n"]));
        assert_eq!(joined.into_string(), "a\nb\nc\n");
        assert!(Pieces::default().is_empty());
        assert_eq!(Pieces::default().into_string(), "");
    }
}
