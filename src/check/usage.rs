//! `unused-config-key` and `unread-schema-property`: names written (by a config block)
//! or declared (by the schema) that no expression and no `requires:` reads. Only the
//! outermost unread name is reported; reading a map whole reads everything below it.

use super::finding::{Finding, FindingId};
use super::names::Shape;
use std::collections::HashMap;

/// Every path read, and every path some read goes through, each with how many reads
/// name it (so that a facet's reads can be taken out again when it changes).
#[derive(Default)]
pub struct ReadSet {
    whole: HashMap<String, usize>,
    through: HashMap<String, usize>,
}

impl ReadSet {
    pub fn add(&mut self, segments: &[impl AsRef<str>]) {
        self.count(segments, true);
    }

    /// Takes out one read [`ReadSet::add`] put in.
    pub fn remove(&mut self, segments: &[impl AsRef<str>]) {
        self.count(segments, false);
    }

    fn count(&mut self, segments: &[impl AsRef<str>], add: bool) {
        let bump = |map: &mut HashMap<String, usize>, path: &str| {
            if add {
                *map.entry(path.to_string()).or_default() += 1;
            } else if let Some(n) = map.get_mut(path) {
                *n -= 1;
                if *n == 0 {
                    map.remove(path);
                }
            }
        };
        let mut path = String::new();
        for (i, segment) in segments.iter().enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push_str(segment.as_ref());
            bump(&mut self.through, &path);
        }
        bump(&mut self.whole, &path);
    }

    /// Read itself, below it, or as part of a map read whole above it.
    fn is_read(&self, path: &str) -> bool {
        if self.through.contains_key(path) {
            return true;
        }
        path.match_indices('.')
            .any(|(i, _)| self.whole.contains_key(&path[..i]))
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
