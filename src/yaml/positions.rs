//! saphyr-parser reports positions in characters; spans are byte offsets. For ASCII text
//! (nearly every template) the two agree and no table is built.

pub(crate) struct CharToByte {
    /// Byte offset of every character, plus the text length; empty for ASCII text.
    offsets: Vec<u32>,
    len: usize,
}

impl CharToByte {
    pub(crate) fn new(text: &str) -> CharToByte {
        let offsets = if text.is_ascii() {
            Vec::new()
        } else {
            let mut offsets: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
            offsets.push(text.len() as u32);
            offsets
        };
        CharToByte {
            offsets,
            len: text.len(),
        }
    }

    pub(crate) fn byte(&self, char_index: usize) -> usize {
        if self.offsets.is_empty() {
            char_index.min(self.len)
        } else {
            self.offsets
                .get(char_index)
                .map_or(self.len, |&b| b as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_unicode() {
        let ascii = CharToByte::new("abc");
        assert_eq!(ascii.byte(2), 2);
        assert_eq!(ascii.byte(9), 3);
        let wide = CharToByte::new("éa€b");
        assert_eq!(wide.byte(0), 0);
        assert_eq!(wide.byte(1), 2);
        assert_eq!(wide.byte(2), 3);
        assert_eq!(wide.byte(3), 6);
        assert_eq!(wide.byte(4), 7);
        assert_eq!(wide.byte(5), 7);
    }
}
