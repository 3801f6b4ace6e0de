//! A position inside an emitted document, as the comment hook sees it.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSegment<'a> {
    Key(&'a str),
    Index(usize),
}

impl fmt::Display for PathSegment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSegment::Key(k) => f.write_str(k),
            PathSegment::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// `terraform[0].inputs.name` style text for a path.
pub fn format_path(path: &[PathSegment<'_>]) -> String {
    let mut out = String::new();
    for segment in path {
        if matches!(segment, PathSegment::Key(_)) && !out.is_empty() {
            out.push('.');
        }
        out.push_str(&segment.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let path = [
            PathSegment::Key("terraform"),
            PathSegment::Index(0),
            PathSegment::Key("inputs"),
        ];
        assert_eq!(format_path(&path), "terraform[0].inputs");
        assert_eq!(format_path(&[]), "");
    }
}
