//! The graph as a Mermaid flowchart, to paste into a README or a pull request (GitHub
//! and GitLab draw it).

use super::{Change, EdgeKind, Graph, NodeKind};
use std::fmt::Write as _;

pub fn write(graph: &Graph) -> String {
    let mut out = String::new();
    for error in &graph.cycles {
        let _ = writeln!(out, "%% error: {}", error.replace('\n', " "));
    }
    out.push_str("flowchart TD\n");
    let index = |id: &str| graph.nodes.iter().position(|n| n.id == id);
    for (i, node) in graph.nodes.iter().enumerate() {
        let label = label(&node.name);
        let _ = match node.kind {
            NodeKind::Terraform => writeln!(out, "  n{i}[\"{label}\"]"),
            NodeKind::Kustomization => writeln!(out, "  n{i}(\"{label}\")"),
            NodeKind::Source => writeln!(out, "  n{i}[(\"{label}\")]"),
        };
    }
    let mut styles = Vec::new();
    let mut drawn = 0;
    for edge in &graph.edges {
        let (Some(from), Some(to)) = (index(&edge.from), index(&edge.to)) else {
            continue;
        };
        let arrow = match edge.kind {
            EdgeKind::DependsOn if edge.in_cycle => "-- cycle -->",
            EdgeKind::DependsOn => "-->",
            EdgeKind::Output => "-. output .->",
            EdgeKind::Source => "-.->",
        };
        let _ = writeln!(out, "  n{from} {arrow} n{to}");
        if edge.in_cycle {
            styles.push(format!(
                "  linkStyle {drawn} stroke:{},stroke-width:4px",
                super::dot::CYCLE_COLOR
            ));
        }
        match edge.change {
            Change::Same => {}
            Change::Added => styles.push(format!(
                "  linkStyle {drawn} stroke:#16a34a,stroke-width:3px"
            )),
            Change::Removed => styles.push(format!(
                "  linkStyle {drawn} stroke:#dc2626,stroke-width:3px"
            )),
        }
        drawn += 1;
    }
    out.push_str("  classDef terraform fill:#dbeafe,stroke:#1d4ed8\n");
    out.push_str("  classDef kustomization fill:#dcfce7,stroke:#15803d\n");
    out.push_str("  classDef source fill:#f1f5f9,stroke:#64748b\n");
    out.push_str("  classDef added stroke:#16a34a,stroke-width:3px\n");
    out.push_str("  classDef removed stroke:#dc2626,stroke-width:3px,stroke-dasharray:4\n");
    for kind in [
        NodeKind::Terraform,
        NodeKind::Kustomization,
        NodeKind::Source,
    ] {
        let members: Vec<String> = (0..graph.nodes.len())
            .filter(|i| graph.nodes[*i].kind == kind)
            .map(|i| format!("n{i}"))
            .collect();
        if !members.is_empty() {
            let _ = writeln!(out, "  class {} {}", members.join(","), kind.prefix());
        }
    }
    for (change, class) in [(Change::Added, "added"), (Change::Removed, "removed")] {
        let members: Vec<String> = (0..graph.nodes.len())
            .filter(|i| graph.nodes[*i].change == change)
            .map(|i| format!("n{i}"))
            .collect();
        if !members.is_empty() {
            let _ = writeln!(out, "  class {} {class}", members.join(","));
        }
    }
    for s in styles {
        out.push_str(&s);
        out.push('\n');
    }
    out
}

/// A node label inside `"…"`: Mermaid's entity codes for the characters that would
/// end or break it.
fn label(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
