//! Facets left hollow at load (issue 25): a run that composes one context once can
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

use super::facet::{ComponentEntry, ConfigBlock, Facet};
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
/// and the facets parsed again cost more than the memory saved (the 22 facets of
/// `windsor-render-eaa2bcea`'s project: 16 of the 19 false at first read a config
/// block name, and its compose took 8.8 ms instead of 8.3 ms).
pub const FROM_FACETS: usize = 256;

/// The keys a component's identity is made of (`collect::identity`): all an
/// inactive facet's component is read for (to name it among the exclusions).
const IDENTITY_KEYS: [&str; 3] = ["name", "path", "source"];

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
        body: Node {
            kind: NodeKind::Null,
            span: block.body.span,
            style: None,
        },
        requires: Vec::new(),
        ..block
    }
}

fn hollow_entry(entry: ComponentEntry) -> ComponentEntry {
    let node = match entry.node.kind {
        NodeKind::Map(entries) => Node {
            kind: NodeKind::Map(
                entries
                    .into_vec()
                    .into_iter()
                    .filter(|(k, _)| IDENTITY_KEYS.contains(&&*k.name))
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
