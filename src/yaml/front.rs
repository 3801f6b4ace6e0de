//! The way in: each text goes to the fast front end ([`super::fast`]) first, and to
//! the full loader ([`super::load`]) where the fast one hands it over. Kept apart from
//! both so that neither names the other's entry point.

use super::error::YamlError;
use super::intern::Interner;
use super::load::parse_full_in;
use super::node::Node;
use crate::files::FileId;

/// Parses a single-document YAML text. An empty text (or one with only comments) is a
/// null node; a second document is an error.
pub fn parse(text: &str, file: FileId) -> Result<Node, YamlError> {
    parse_with_warnings(text, file).map(|(node, _)| node)
}

/// [`parse`], with what the document says that bpc reads but does not honour: tags
/// with no meaning for bpc (`!custom`), `!!binary` (kept as its base64 text). Each is
/// a warning at the tag's node.
pub fn parse_with_warnings(text: &str, file: FileId) -> Result<(Node, Vec<YamlError>), YamlError> {
    parse_interned(text, file, &mut Interner::default())
}

/// [`parse_with_warnings`], sharing keys and short strings with the other trees that
/// `interner` has made (the files one thread of the template loader reads).
pub fn parse_interned(
    text: &str,
    file: FileId,
    interner: &mut Interner,
) -> Result<(Node, Vec<YamlError>), YamlError> {
    if let Some(node) = super::fast::parse(text, file, interner) {
        return Ok((node, Vec::new()));
    }
    parse_full_in(text, file, interner)
}

/// The fast front end alone: `None` where it hands the text to the full loader.
#[doc(hidden)]
pub fn parse_fast(text: &str, file: FileId) -> Option<Node> {
    super::fast::parse(text, file, &mut Interner::default())
}
