//! `unused-config-key` and `unread-schema-property`: names written (by a config block)
//! or declared (by the schema) that no expression and no `requires:` reads. Only the
//! outermost unread name is reported; reading a map whole reads everything below it.

use super::finding::{Finding, FindingId};
use super::names::Shape;
use std::collections::HashSet;

/// Every path read, and every path some read goes through.
#[derive(Default)]
pub struct ReadSet {
    whole: HashSet<String>,
    through: HashSet<String>,
}

impl ReadSet {
    pub fn add(&mut self, segments: &[impl AsRef<str>]) {
        let mut path = String::new();
        for (i, segment) in segments.iter().enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push_str(segment.as_ref());
            self.through.insert(path.clone());
        }
        self.whole.insert(path);
    }

    /// Read itself, below it, or as part of a map read whole above it.
    fn is_read(&self, path: &str) -> bool {
        if self.through.contains(path) {
            return true;
        }
        path.match_indices('.')
            .any(|(i, _)| self.whole.contains(&path[..i]))
    }
}

pub fn check(names: &Shape, reads: &ReadSet, out: &mut Vec<Finding>) {
    walk(names, "", reads, out);
}

fn walk(shape: &Shape, prefix: &str, reads: &ReadSet, out: &mut Vec<Finding>) {
    for (name, child) in &shape.children {
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        if reads.is_read(&path) {
            walk(child, &path, reads, out);
            continue;
        }
        if let Some(span) = child.config_span {
            out.push(Finding::at(
                FindingId::UnusedConfigKey,
                span,
                format!("config value `{path}` is never read"),
                "written here, read nowhere",
            ));
        } else if let Some(span) = child.schema_span {
            out.push(Finding::at(
                FindingId::UnreadSchemaProperty,
                span,
                format!("schema property `{path}` is read by no expression"),
                "declared here",
            ));
        }
    }
}
