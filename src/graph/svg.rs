//! The graph laid out and drawn as SVG, in-process: `layout-rs` places the nodes
//! (layered, with edge-crossing reduction) and calls back for each shape, and this
//! file writes those shapes with the ids, classes and tooltips the HTML page and a
//! reader need. Numbers are printed with one decimal, so the same graph gives the
//! same bytes.

use super::{Change, EdgeKind, Graph, NodeKind};
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;
use std::fmt::Write as _;

/// Graphs up to this many nodes are laid out with edge-crossing reduction, whose cost
/// grows fastest (a chain of 160 nodes: 6.6 s with it, 0.15 s without).
const CROSSINGS_REDUCED_UP_TO: usize = 100;

/// The most nodes a drawing takes: even without crossing reduction the layout grows
/// faster than the square of the size (a chain of 400 nodes: 3.3 s; of 800: 53 s).
pub const MAX_NODES: usize = 400;

/// The SVG of `graph` (a lone `<svg>` element, UTF-8, no external references), or
/// why it is too large to lay out.
pub fn write(graph: &Graph) -> Result<String, String> {
    if graph.nodes.len() > MAX_NODES {
        return Err(format!(
            "the graph of context `{}` has {} nodes, more than the {MAX_NODES} an SVG or HTML drawing takes (its layout grows faster than the square of the size); write it with --format dot or --format mermaid and draw it with Graphviz or Mermaid, or draw a part of it with --focus NAME",
            graph.context,
            graph.nodes.len()
        ));
    }
    let drawing = draw(graph);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w:.1} {h:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" class=\"bpc-graph\">",
        w = drawing.width,
        h = drawing.height
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&title(graph)));
    out.push_str(STYLE);
    for edge in &drawing.edges {
        let e = &graph.edges[edge.index];
        let _ = writeln!(
            out,
            "<g class=\"edge {} {}{}\" data-from=\"{}\" data-to=\"{}\"><title>{} → {}: {}</title><path d=\"{}\" marker-end=\"url(#arrow)\"/></g>",
            edge_class(e.kind),
            change_class(e.change),
            if e.in_cycle { " cycle" } else { "" },
            escape(&e.from),
            escape(&e.to),
            escape(&e.from),
            escape(&e.to),
            escape(&cycle_why(e)),
            edge.path
        );
    }
    for node in &drawing.nodes {
        let n = &graph.nodes[node.index];
        let mut tip = format!("{} `{}`", n.kind.noun(), n.name);
        for (k, v) in &n.details {
            let _ = write!(tip, "\n{k}: {v}");
        }
        let _ = writeln!(
            out,
            "<g class=\"node {} {}\" data-id=\"{}\"><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            kind_class(n.kind),
            change_class(n.change),
            escape(&n.id),
            escape(&tip),
            node.x,
            node.y,
            node.w,
            node.h,
            if n.kind == NodeKind::Kustomization { 10 } else { 2 },
            node.x + node.w / 2.0,
            node.y + node.h / 2.0,
            escape(&n.name)
        );
    }
    out.push_str("</svg>\n");
    Ok(out)
}

fn title(graph: &Graph) -> String {
    let mut title = format!("bpc graph: context {}", graph.context);
    for error in &graph.cycles {
        let _ = write!(title, "\n{error}");
    }
    title
}

fn cycle_why(edge: &super::Edge) -> String {
    if edge.in_cycle {
        format!("{} (on a dependsOn cycle)", edge.why)
    } else {
        edge.why.clone()
    }
}

const STYLE: &str = "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#475569\"/></marker></defs>
<style>
.bpc-graph { font-family: sans-serif; font-size: 13px; }
.bpc-graph .node rect { stroke: #334155; stroke-width: 1.5; }
.bpc-graph .node text { text-anchor: middle; dominant-baseline: central; fill: #0f172a; pointer-events: none; }
.bpc-graph .terraform rect { fill: #dbeafe; }
.bpc-graph .kustomization rect { fill: #dcfce7; }
.bpc-graph .source rect { fill: #f1f5f9; }
.bpc-graph .edge path { fill: none; stroke: #475569; stroke-width: 1.5; }
.bpc-graph .edge.output path { stroke-dasharray: 6 4; stroke: #b45309; }
.bpc-graph .edge.source path { stroke-dasharray: 2 3; stroke: #94a3b8; }
.bpc-graph .added rect, .bpc-graph .edge.added path { stroke: #16a34a; stroke-width: 3; }
.bpc-graph .removed rect, .bpc-graph .edge.removed path { stroke: #dc2626; stroke-width: 3; stroke-dasharray: 4 3; }
.bpc-graph .edge.cycle path { stroke: #c026d3; stroke-width: 3.5; }
</style>
";

fn kind_class(kind: NodeKind) -> &'static str {
    kind.prefix()
}

fn edge_class(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::DependsOn => "depends-on",
        EdgeKind::Output => "output",
        EdgeKind::Source => "source",
    }
}

fn change_class(change: Change) -> &'static str {
    match change {
        Change::Same => "same",
        Change::Added => "added",
        Change::Removed => "removed",
    }
}

/// Text for SVG/HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
    }
    out
}

/// Where the layout put things, in graph order.
struct Drawing {
    width: f64,
    height: f64,
    nodes: Vec<PlacedNode>,
    edges: Vec<PlacedEdge>,
}

struct PlacedNode {
    index: usize,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

struct PlacedEdge {
    index: usize,
    path: String,
}

fn draw(graph: &Graph) -> Drawing {
    let mut canvas = Canvas::default();
    if graph.nodes.is_empty() {
        return Drawing {
            width: 10.0,
            height: 10.0,
            nodes: Vec::new(),
            edges: Vec::new(),
        };
    }
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let mut handles = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let label_width = node.name.chars().count() as f64 * 8.0 + 24.0;
        let size = Point::new(label_width.max(60.0), 36.0);
        let shape = ShapeKind::new_box(&node.name);
        let element = Element::create_with_properties(
            shape,
            StyleAttr::simple(),
            Orientation::LeftToRight,
            size,
            format!("n{i}"),
        );
        handles.push(vg.add_node(element));
    }
    let index: std::collections::HashMap<&str, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    for (i, edge) in graph.edges.iter().enumerate() {
        let (Some(&from), Some(&to)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
        else {
            continue;
        };
        if from == to {
            continue;
        }
        let style = match edge.kind {
            EdgeKind::DependsOn => LineStyleKind::Normal,
            EdgeKind::Output => LineStyleKind::Dashed,
            EdgeKind::Source => LineStyleKind::Dotted,
        };
        let look = StyleAttr::new(Color::fast("black"), 2, None, 0, 15);
        let arrow = Arrow::with_properties(
            LineEndKind::None,
            LineEndKind::Arrow,
            style,
            "",
            &look,
            format!("e{i}"),
            &None,
            &None,
        );
        vg.add_edge(arrow, handles[from], handles[to]);
    }
    let reduce_crossings = graph.nodes.len() <= CROSSINGS_REDUCED_UP_TO;
    vg.do_it(false, !reduce_crossings, false, &mut canvas);
    let mut nodes: Vec<PlacedNode> = canvas.nodes;
    nodes.sort_by_key(|n| n.index);
    let mut edges: Vec<PlacedEdge> = canvas.edges;
    edges.sort_by_key(|e| e.index);
    Drawing {
        width: canvas.width + 10.0,
        height: canvas.height + 10.0,
        nodes,
        edges,
    }
}

/// The backend `layout-rs` draws on: keeps the rectangles of nodes and the paths of
/// edges (recognised by the properties given to them above), nothing else.
#[derive(Default)]
struct Canvas {
    width: f64,
    height: f64,
    nodes: Vec<PlacedNode>,
    edges: Vec<PlacedEdge>,
}

impl Canvas {
    fn grow(&mut self, p: Point) {
        self.width = self.width.max(p.x);
        self.height = self.height.max(p.y);
    }
}

fn index_of(properties: &Option<String>, prefix: char) -> Option<usize> {
    properties.as_deref()?.strip_prefix(prefix)?.parse().ok()
}

impl RenderBackend for Canvas {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        _: &StyleAttr,
        properties: Option<String>,
        _: Option<ClipHandle>,
    ) {
        if let Some(index) = index_of(&properties, 'n') {
            self.grow(Point::new(xy.x + size.x, xy.y + size.y));
            self.nodes.push(PlacedNode {
                index,
                x: xy.x,
                y: xy.y,
                w: size.x,
                h: size.y,
            });
        }
    }

    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    fn draw_text(&mut self, _: Point, _: &str, _: &StyleAttr) {}

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _: bool,
        _: (bool, bool),
        _: &StyleAttr,
        properties: Option<String>,
        _: &str,
    ) {
        let Some(index) = index_of(&properties, 'e') else {
            return;
        };
        if path.len() < 2 {
            return;
        }
        for (a, b) in path {
            self.grow(*a);
            self.grow(*b);
        }
        let mut d = format!(
            "M {:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {:.1} {:.1}",
            path[0].0.x,
            path[0].0.y,
            path[0].1.x,
            path[0].1.y,
            path[1].0.x,
            path[1].0.y,
            path[1].1.x,
            path[1].1.y
        );
        for (a, b) in path.iter().skip(2) {
            let _ = write!(d, " S {:.1} {:.1}, {:.1} {:.1}", a.x, a.y, b.x, b.y);
        }
        self.edges.push(PlacedEdge { index, path: d });
    }

    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}
