//! The graph in Graphviz's DOT language (`dot -Tsvg` draws it; `--format svg` draws
//! it without Graphviz).

use super::{Change, EdgeKind, Graph, NodeKind};
use std::fmt::Write as _;

pub fn write(graph: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "digraph {} {{",
        quote(&format!("bpc: context {}", graph.context))
    );
    out.push_str("  rankdir=TB;\n  node [fontname=\"sans-serif\", fontsize=12, style=filled];\n");
    if !graph.cycles.is_empty() {
        // The errors as the graph's caption, above the loop they explain.
        let _ = writeln!(
            out,
            "  labelloc=t;\n  fontcolor=\"{CYCLE_COLOR}\";\n  label={};",
            quote(&graph.cycles.join("\n"))
        );
    }
    out.push_str("  edge [fontname=\"sans-serif\", fontsize=10, color=\"#475569\"];\n");
    for node in &graph.nodes {
        let (shape, fill) = match node.kind {
            NodeKind::Terraform => ("box", "#dbeafe"),
            NodeKind::Kustomization => ("box", "#dcfce7"),
            NodeKind::Source => ("cylinder", "#f1f5f9"),
        };
        let style = if node.kind == NodeKind::Kustomization {
            "\"rounded,filled\""
        } else {
            "filled"
        };
        let mut tip = format!("{} {}", node.kind.noun(), node.name);
        for (k, v) in &node.details {
            let _ = write!(tip, "\n{k}: {v}");
        }
        let _ = write!(
            out,
            "  {} [label={}, shape={shape}, style={style}, fillcolor=\"{fill}\", tooltip={}",
            quote(&node.id),
            quote(&node.name),
            quote(&tip)
        );
        out.push_str(change_attrs(node.change));
        out.push_str("];\n");
    }
    for edge in &graph.edges {
        let style = match edge.kind {
            EdgeKind::DependsOn => "solid",
            EdgeKind::Output => "dashed",
            EdgeKind::Source => "dotted",
        };
        let _ = write!(
            out,
            "  {} -> {} [style={style}, tooltip={}",
            quote(&edge.from),
            quote(&edge.to),
            quote(&edge.why)
        );
        if edge.kind == EdgeKind::Output {
            out.push_str(", color=\"#b45309\"");
        }
        if edge.in_cycle {
            let _ = write!(
                out,
                ", color=\"{CYCLE_COLOR}\", penwidth=3, label=\"cycle\""
            );
        }
        out.push_str(change_attrs(edge.change));
        out.push_str("];\n");
    }
    out.push_str("}\n");
    out
}

/// Edges on a `dependsOn` cycle, in every format: apart from the green and red of
/// `--diff`.
pub(super) const CYCLE_COLOR: &str = "#c026d3";

fn change_attrs(change: Change) -> &'static str {
    match change {
        Change::Same => "",
        Change::Added => ", color=\"#16a34a\", penwidth=3",
        Change::Removed => ", color=\"#dc2626\", penwidth=3",
    }
}

/// A DOT string literal (`\n` becomes a centred line break).
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
