//! Marks the `dependsOn` edges that lie on a cycle, so a composition that failed on
//! one can still be drawn with the loop highlighted: an edge is on a cycle when both
//! of its ends belong to one strongly connected component of the `dependsOn` graph
//! (a self-dependency included). Every cycle is marked, not only the one the error
//! names, since fixing that one would show the next.

use super::{EdgeKind, Graph};
use std::collections::HashMap;

pub(super) fn mark(graph: &mut Graph) {
    let index: HashMap<&str, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let ends: Vec<Option<(usize, usize)>> = graph
        .edges
        .iter()
        .map(|e| {
            let wait = e.kind == EdgeKind::DependsOn;
            wait.then(|| Some((*index.get(e.from.as_str())?, *index.get(e.to.as_str())?)))
                .flatten()
        })
        .collect();
    let component = components(graph.nodes.len(), ends.iter().flatten().copied());
    let mut size = vec![0usize; graph.nodes.len()];
    for &c in &component {
        size[c] += 1;
    }
    for (edge, ends) in graph.edges.iter_mut().zip(&ends) {
        if let Some((from, to)) = *ends {
            let together = component[from] == component[to];
            edge.in_cycle = together && (from == to || size[component[from]] > 1);
        }
    }
}

/// The strongly connected component of every node (Kosaraju, iterative so a long
/// chain cannot overflow the stack): an id per node, equal for nodes that reach each
/// other.
fn components(nodes: usize, edges: impl Iterator<Item = (usize, usize)>) -> Vec<usize> {
    let mut forward = vec![Vec::new(); nodes];
    let mut backward = vec![Vec::new(); nodes];
    for (from, to) in edges {
        forward[from].push(to);
        backward[to].push(from);
    }
    // First pass: nodes in order of finishing a depth-first search.
    let mut finished = Vec::with_capacity(nodes);
    let mut seen = vec![false; nodes];
    for start in 0..nodes {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![(start, 0usize)];
        while let Some((node, next)) = stack.last_mut() {
            if let Some(&to) = forward[*node].get(*next) {
                *next += 1;
                if !seen[to] {
                    seen[to] = true;
                    stack.push((to, 0));
                }
            } else {
                finished.push(*node);
                stack.pop();
            }
        }
    }
    // Second pass, on the reversed edges in reverse finishing order: each search
    // collects exactly one component.
    let mut component = vec![usize::MAX; nodes];
    for (id, &start) in finished.iter().rev().enumerate() {
        if component[start] != usize::MAX {
            continue;
        }
        component[start] = id;
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &from in &backward[node] {
                if component[from] == usize::MAX {
                    component[from] = id;
                    stack.push(from);
                }
            }
        }
    }
    component
}
