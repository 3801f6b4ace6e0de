//! Narrowing and comparing graphs: `--focus NAME` keeps one node with everything it
//! waits for and everything that waits for it; `--diff OTHER` lays two contexts'
//! graphs over each other and marks what only one of them has.

use super::{Change, Edge, Graph};
use std::collections::{BTreeSet, HashSet};

/// `graph` narrowed to the nodes named `name` (a node id such as `terraform/net`, or a
/// bare name), their ancestors and their descendants.
pub fn focus(graph: &Graph, name: &str) -> Result<Graph, String> {
    let starts: Vec<&str> = graph
        .nodes
        .iter()
        .filter(|n| n.id == name || n.name == name)
        .map(|n| n.id.as_str())
        .collect();
    if starts.is_empty() {
        let known: BTreeSet<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
        let hint = known
            .iter()
            .min_by_key(|k| crate::template::keys::edit_distance(name, k))
            .map(|k| format!("; did you mean `{k}`?"))
            .unwrap_or_default();
        return Err(format!(
            "--focus: no node named `{name}` in the graph{hint}"
        ));
    }
    let mut keep: HashSet<&str> = starts.iter().copied().collect();
    for forward in [true, false] {
        let mut stack: Vec<&str> = starts.clone();
        let mut seen: HashSet<&str> = HashSet::new();
        while let Some(at) = stack.pop() {
            for e in &graph.edges {
                let (here, next) = if forward {
                    (&e.from, &e.to)
                } else {
                    (&e.to, &e.from)
                };
                if here == at && seen.insert(next.as_str()) {
                    keep.insert(next.as_str());
                    stack.push(next.as_str());
                }
            }
        }
    }
    Ok(Graph {
        context: graph.context.clone(),
        nodes: graph
            .nodes
            .iter()
            .filter(|n| keep.contains(n.id.as_str()))
            .cloned()
            .collect(),
        edges: graph
            .edges
            .iter()
            .filter(|e| keep.contains(e.from.as_str()) && keep.contains(e.to.as_str()))
            .cloned()
            .collect(),
        cycles: graph.cycles.clone(),
    })
}

/// `this` and `other` in one graph: what both have unmarked, what only `this` has
/// [`Change::Added`], what only `other` has [`Change::Removed`] (after this graph's
/// own nodes and edges, in the other's order).
pub fn diff(this: &Graph, other: &Graph) -> Graph {
    let key = |e: &Edge| (e.from.clone(), e.to.clone(), e.kind);
    let other_nodes: HashSet<&str> = other.nodes.iter().map(|n| n.id.as_str()).collect();
    let this_nodes: HashSet<&str> = this.nodes.iter().map(|n| n.id.as_str()).collect();
    let other_edges: HashSet<_> = other.edges.iter().map(key).collect();
    let this_edges: HashSet<_> = this.edges.iter().map(key).collect();
    let mut out = Graph {
        context: format!("{} (compared with {})", this.context, other.context),
        cycles: this.cycles.clone(),
        ..Graph::default()
    };
    out.cycles.extend(
        other
            .cycles
            .iter()
            .map(|e| format!("in context {}: {e}", other.context)),
    );
    for n in &this.nodes {
        let mut n = n.clone();
        if !other_nodes.contains(n.id.as_str()) {
            n.change = Change::Added;
        }
        out.nodes.push(n);
    }
    for n in other
        .nodes
        .iter()
        .filter(|n| !this_nodes.contains(n.id.as_str()))
    {
        let mut n = n.clone();
        n.change = Change::Removed;
        out.nodes.push(n);
    }
    for e in &this.edges {
        let mut e = e.clone();
        if !other_edges.contains(&key(&e)) {
            e.change = Change::Added;
        }
        out.edges.push(e);
    }
    for e in other.edges.iter().filter(|e| !this_edges.contains(&key(e))) {
        let mut e = e.clone();
        e.change = Change::Removed;
        out.edges.push(e);
    }
    out
}
