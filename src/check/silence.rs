//! Silencing findings: in a template file, `# bpc:allow ID …` on the finding's line or
//! the line above it, or `# bpc:allow-file ID …` anywhere in the file; for a project,
//! `check.allow` in `bpc.yaml` at the project root (an id, or `{id, file}`).

use super::finding::{Finding, FindingId};
use crate::files::{Diagnostic, FileMap};
use crate::yaml::{Node, NodeKind};

/// One project-wide permission: this id, in every file or in one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    pub id: FindingId,
    /// A path inside the template (`facets/aws.yaml`); `None` for every file.
    pub file: Option<String>,
}

const MARK: &str = "bpc:allow";

/// The ids a comment on `line` allows: `# bpc:allow a b` (line-wide) or
/// `# bpc:allow-file a b` (file-wide, `file_wide` set).
fn allowed_on(line: &str, file_wide: bool) -> Vec<&str> {
    let Some(hash) = line.find('#') else {
        return Vec::new();
    };
    let comment = line[hash + 1..].trim_start();
    let Some(rest) = comment.strip_prefix(MARK) else {
        return Vec::new();
    };
    let rest = match (rest.strip_prefix("-file"), file_wide) {
        (Some(rest), true) => rest,
        (None, false) => rest,
        _ => return Vec::new(),
    };
    if !rest.starts_with(char::is_whitespace) {
        return Vec::new();
    }
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .collect()
}

pub fn is_silenced(finding: &Finding, sources: &FileMap, project: &[Allow]) -> bool {
    let Some(span) = finding.span() else {
        return false;
    };
    let id = finding.id.as_str();
    let path = sources.path(span.file).unwrap_or_default();
    if project.iter().any(|a| {
        a.id == finding.id
            && a.file
                .as_deref()
                .is_none_or(|f| path == f || path.ends_with(&format!("/{f}")))
    }) {
        return true;
    }
    let Some(file) = sources.get(span.file) else {
        return false;
    };
    let line = file.location(span.start as usize).line;
    let here = file.line_text(line);
    let above = if line > 1 {
        file.line_text(line - 1)
    } else {
        ""
    };
    if allowed_on(here, false).contains(&id) || allowed_on(above, false).contains(&id) {
        return true;
    }
    // Most files have no file-wide comment: skip reading them line by line.
    file.text().contains("bpc:allow-file")
        && (1..=file.line_count()).any(|n| allowed_on(file.line_text(n), true).contains(&id))
}

/// `check.allow` of a project's `bpc.yaml`; ids it does not know are errors at the id.
pub fn project_allows(config: &Node) -> Result<Vec<Allow>, Vec<Diagnostic>> {
    let Some(allow) = config.get("check").and_then(|c| c.get("allow")) else {
        return Ok(Vec::new());
    };
    let NodeKind::Seq(items) = &allow.kind else {
        return Err(vec![Diagnostic::error("`check.allow` must be a list")
            .with_primary(allow.span, "expected a list of finding ids")]);
    };
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for item in items {
        let (id_node, file) = match &item.kind {
            NodeKind::Map(_) => (
                item.get("id").unwrap_or(item),
                item.get("file").and_then(Node::as_str).map(str::to_string),
            ),
            _ => (item, None),
        };
        match id_node.as_str().and_then(FindingId::parse) {
            Some(id) => out.push(Allow { id, file }),
            None => {
                let known: Vec<&str> = FindingId::ALL.iter().map(|i| i.as_str()).collect();
                let hint = id_node
                    .as_str()
                    .and_then(|t| crate::template::keys::suggest(t, &known));
                let message = match id_node.as_str() {
                    Some(text) => format!("`{text}` is not a finding id of `bpc check`"),
                    None => "a silenced finding needs an id (text), or a map with `id`".to_string(),
                };
                let mut d = Diagnostic::error(message).with_primary(id_node.span, "unknown id");
                d = match hint {
                    Some(h) => d.with_help(format!("did you mean `{h}`?")),
                    None => d.with_help(format!("the ids are: {}", known.join(", "))),
                };
                errors.push(d);
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}
