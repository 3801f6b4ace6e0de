//! Facets left hollow at load: a run that composes one context once can
//! tell, while the facets are parsed, that some of them will not apply, and keep of
//! those only what composing reads from an inactive facet.
//!
//! A facet is certainly inactive when its `when`, evaluated against the context's
//! values before any facet is active (the first round of activation, S5), is false
//! and reads no name that any facet's config block defines: no round of activation
//! can then see another value, so the `when` stays false. The first half is decided
//! in the parse threads, as each file is parsed (the caller's [`Inactive`] test);
//! the second once every facet is known, and a facet whose `when` read a block name
//! is parsed again in full. Every facet is still parsed and checked in full first,
//! so its syntax errors and warnings are the same as without this.

use super::facet::{ComponentEntry, ComponentKind, ConfigBlock, Facet};
use crate::yaml::{Node, NodeKind};
use std::collections::HashSet;
use std::sync::Arc;

/// The test the parse threads run on each facet: `Some(names its `when` read)` when
/// that `when` is false before any facet is active, `None` otherwise (no `when`,
/// true, an error, or the whole scope read: composing decides those as usual).
pub type Inactive<'a> = dyn Fn(&Arc<Facet>) -> Option<HashSet<String>> + Sync + 'a;

/// Builds the [`Inactive`] test from the template's schema once it is read (the
/// context's scope applies its defaults); `None` leaves every facet whole.
pub type Pruning<'a> = dyn Fn(Option<&Node>) -> Option<Box<Inactive<'a>>> + 'a;

/// Templates with fewer facet files load whole: their trees are small, and the test
/// costs more than the memory saved (the 22 facets of `windsor-render-eaa2bcea`'s
/// project, threshold lowered to 1: 1–3 facets left hollow per context, and a
/// compose took 8.9 ms instead of 8.5 ms).
pub const FROM_FACETS: usize = 256;

/// The keys `entry`'s identity is made of ([`super::identity::merge_key`]): all an
/// inactive facet's component is read for (to name it among the exclusions).
fn identity_keys(entry: &ComponentEntry) -> &'static [&'static str] {
    let named = entry
        .node
        .get("name")
        .and_then(Node::as_str)
        .is_some_and(|name| !name.is_empty());
    match entry.kind {
        ComponentKind::Terraform if !named => &["path", "source"],
        _ => &["name"],
    }
}

/// What an inactive facet keeps: its name, place, ordinal and `when` (activation
/// evaluates it again), its config blocks' names (the block index lists every
/// facet's), and for each component the fields of its identity.
pub fn hollow(facet: Facet) -> Facet {
    Facet {
        config: facet.config.into_iter().map(hollow_block).collect(),
        components: facet.components.into_iter().map(hollow_entry).collect(),
        requires: Vec::new(),
        crds: Vec::new(),
        substitutions: None,
        backend: None,
        messages: Vec::new(),
        hollow: true,
        ..facet
    }
}

fn hollow_block(block: ConfigBlock) -> ConfigBlock {
    ConfigBlock {
        body: Node::placeholder(block.body.span),
        requires: Vec::new(),
        ..block
    }
}

fn hollow_entry(entry: ComponentEntry) -> ComponentEntry {
    let keys = identity_keys(&entry);
    let node = match entry.node.kind {
        NodeKind::Map(entries) => Node {
            kind: NodeKind::Map(
                entries
                    .into_vec()
                    .into_iter()
                    .filter(|(k, _)| keys.contains(&&*k.name))
                    .collect(),
            ),
            ..entry.node
        },
        kind => Node { kind, ..entry.node },
    };
    ComponentEntry {
        node,
        when: None,
        requires: Box::new([]),
        ..entry
    }
}

/// The config block names a facet's text appears to define: the `name:` values of
/// the lines under a top-level `config:` key, read line by line without parsing.
/// Only a guess, made before anything is parsed so that a facet whose `when` reads
/// a block defined in a later file is not left hollow only to be parsed again (in
/// the Windsor template's `aws` context, 7 of the 10 facets left hollow without it):
/// a name it misses is caught after parsing ([`to_restore`]), one it adds only keeps
/// a facet whole.
pub fn block_names_written(text: &str) -> Vec<String> {
    const KEY: &str = "config:";
    let mut names = Vec::new();
    // Where a line starts with the key: a SIMD search, as every facet's text is read.
    let starts = text
        .starts_with(KEY)
        .then_some(0)
        .into_iter()
        .chain(memchr::memmem::find_iter(text.as_bytes(), b"\nconfig:").map(|at| at + 1));
    for start in starts {
        let line_end = text[start..]
            .find('\n')
            .map_or(text.len(), |end| start + end);
        if text[start..line_end].trim_end() != KEY {
            continue;
        }
        for line in text[line_end..].lines() {
            if !line.is_empty() && !line.starts_with([' ', '\t', '-', '#']) {
                break; // the next top-level key
            }
            let item = line.trim_start().trim_start_matches("- ").trim_start();
            if let Some(value) = item.strip_prefix("name:") {
                let value = value.trim().trim_matches(['"', '\'']);
                if !value.is_empty() {
                    names.push(value.to_string());
                }
            }
        }
    }
    names
}

/// One parse thread's side: the test, the block names guessed from every facet's
/// text ([`block_names_written`]), and those of the facets the thread has parsed
/// so far. A `when` that read one of those is not tested further, so few facets are
/// left hollow only to be parsed again.
pub struct Pruner<'t, 'a> {
    inactive: &'t Inactive<'a>,
    guessed: &'t HashSet<String>,
    seen: HashSet<String>,
}

impl<'t, 'a> Pruner<'t, 'a> {
    pub fn new(inactive: &'t Inactive<'a>, guessed: &'t HashSet<String>) -> Self {
        Pruner {
            inactive,
            guessed,
            seen: HashSet::new(),
        }
    }

    /// `facet`, hollow if the test finds it inactive and its `when` read no block
    /// name guessed or seen by this thread (its own blocks included), with the names
    /// that `when` read (for [`to_restore`]).
    pub fn take(&mut self, facet: Arc<Facet>) -> (Arc<Facet>, Option<HashSet<String>>) {
        for block in &facet.config {
            if !self.seen.contains(&block.name) {
                self.seen.insert(block.name.clone());
            }
        }
        match (self.inactive)(&facet) {
            Some(read)
                if !read
                    .iter()
                    .any(|n| self.seen.contains(n) || self.guessed.contains(n)) =>
            {
                let facet = Arc::try_unwrap(facet).unwrap_or_else(|f| (*f).clone());
                (Arc::new(hollow(facet)), Some(read))
            }
            _ => (facet, None),
        }
    }
}

/// Which of the hollow facets must be parsed again in full: those whose `when` read
/// a name some facet's config block defines (`reads[i]` is what facet `i`'s `when`
/// read, for the hollow ones).
pub fn to_restore(facets: &[&Facet], reads: &[Option<HashSet<String>>]) -> Vec<usize> {
    let block_names: HashSet<&str> = facets
        .iter()
        .flat_map(|f| f.config.iter().map(|b| b.name.as_str()))
        .collect();
    reads
        .iter()
        .enumerate()
        .filter(|(_, read)| {
            read.as_ref()
                .is_some_and(|names| names.iter().any(|n| block_names.contains(n.as_str())))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The guess at block names, read from a facet's text.
#[cfg(test)]
mod tests {
    use super::block_names_written;

    #[test]
    fn the_names_under_a_top_level_config_key_are_guessed() {
        let text = "metadata:\n  name: net\nconfig:\n  - name: cluster\n    workers: 2\n\n  - name: 'dns'\n    value: {name: inner}\nterraform:\n  - name: vpc\n";
        assert_eq!(block_names_written(text), ["cluster", "dns"]);
    }

    #[test]
    fn a_config_key_that_is_not_at_the_top_level_is_not_read() {
        let text = "terraform:\n  - name: vpc\n    config:\n      - name: nope\nmyconfig:\n  - name: nope\n";
        assert!(block_names_written(text).is_empty());
    }
}
