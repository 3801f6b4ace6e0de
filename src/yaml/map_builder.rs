//! Builds one mapping while the loader reads it: rejects duplicate keys and applies
//! `<<` merge keys.
//!
//! Merge semantics (YAML merge-key type, as goccy and most loaders apply it): keys written
//! in the mapping win over merged ones wherever they appear; among merged maps the first
//! one that provides a key wins (`<<: [*a, *b]` prefers `a`). A key keeps the position of
//! its first appearance, so `<<: *base` followed by overrides reads like a spread.

use super::error::YamlError;
use super::node::{Key, Node};
use std::collections::HashMap;

/// Above this many entries a hash index replaces the linear key search.
const LINEAR_SEARCH_LIMIT: usize = 16;

#[derive(Default)]
pub(crate) struct MapBuilder {
    entries: Vec<(Key, Node)>,
    /// `merged[i]` is true while entry `i` came from a `<<` merge (and may be overridden).
    merged: Vec<bool>,
    index: Option<HashMap<std::sync::Arc<str>, usize>>,
}

impl MapBuilder {
    pub(crate) fn insert_written(&mut self, key: Key, node: Node) -> Result<(), YamlError> {
        match self.find(&key.name) {
            None => self.push(key, node, false),
            Some(i) if self.merged[i] => {
                self.entries[i] = (key, node);
                self.merged[i] = false;
            }
            Some(i) => {
                let first = &self.entries[i].0;
                return Err(YamlError::new(
                    key.span,
                    format!("mapping key \"{}\" is already defined", key.name),
                )
                .with_related(first.span, "first defined here"));
            }
        }
        Ok(())
    }

    pub(crate) fn insert_merged(&mut self, key: Key, node: Node) {
        if self.find(&key.name).is_none() {
            self.push(key, node, true);
        }
    }

    pub(crate) fn finish(self) -> Vec<(Key, Node)> {
        self.entries
    }

    fn push(&mut self, key: Key, node: Node, merged: bool) {
        if let Some(index) = &mut self.index {
            index.insert(key.name.clone(), self.entries.len());
        }
        self.entries.push((key, node));
        self.merged.push(merged);
        if self.index.is_none() && self.entries.len() > LINEAR_SEARCH_LIMIT {
            let index = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.name.clone(), i))
                .collect();
            self.index = Some(index);
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.entries.iter().position(|(k, _)| &*k.name == name),
        }
    }
}
