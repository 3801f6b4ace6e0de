//! The graph as one self-contained HTML page: the SVG of [`super::svg`] inline, a
//! little CSS and script, nothing fetched from the network. Drag to pan, wheel to
//! zoom, hover a node for its path, source, facet and provenance, click a node to
//! highlight what it waits for and what waits for it (click the background to clear).

use super::svg::escape;
use super::Graph;

/// The page, or why the graph is too large to draw (as [`super::svg::write`]).
pub fn write(graph: &Graph) -> Result<String, String> {
    let svg = super::svg::write(graph)?;
    let title = escape(&format!("bpc graph: context {}", graph.context));
    let counts = format!(
        "{} node(s), {} edge(s)",
        graph.nodes.len(),
        graph.edges.len()
    );
    // A failed composition's cycle errors, in a banner above the picture.
    let errors: String = graph
        .cycles
        .iter()
        .map(|e| format!("<p class=\"error\">error: {}</p>\n", escape(e)))
        .collect();
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header><h1>{title}</h1><span>{counts}</span><span class=\"legend\"><b class=\"terraform\">terraform</b><b class=\"kustomization\">kustomization</b><b class=\"source\">source</b> solid: dependsOn · dashed: terraform output · dotted: source</span></header>\n{errors}<main id=\"canvas\">\n{svg}</main>\n<aside id=\"details\">Hover a node to see where it comes from; click it to highlight its dependencies and dependants.</aside>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    ))
}

const CSS: &str = "
body { margin: 0; font-family: sans-serif; display: grid; grid-template-rows: auto auto 1fr auto; height: 100vh; }
.error { margin: 0; padding: 4px 12px; color: #86198f; background: #fae8ff; font-family: monospace; font-size: 12px; }
header { padding: 6px 12px; border-bottom: 1px solid #cbd5e1; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
.legend b { font-weight: normal; padding: 1px 6px; margin-right: 4px; border: 1px solid #94a3b8; }
.legend .terraform { background: #dbeafe; } .legend .kustomization { background: #dcfce7; } .legend .source { background: #f1f5f9; }
#canvas { overflow: hidden; cursor: grab; }
#canvas svg { width: 100%; height: 100%; }
#details { padding: 6px 12px; border-top: 1px solid #cbd5e1; white-space: pre-wrap; font-family: monospace; font-size: 12px; min-height: 4em; }
.dim { opacity: 0.15; }
.focus rect { stroke: #7c3aed !important; stroke-width: 3 !important; }
";

const SCRIPT: &str = r#"
(function () {
  var svg = document.querySelector('#canvas svg');
  if (!svg) { return; }
  var details = document.getElementById('details');
  var box = svg.viewBox.baseVal;
  var view = { x: box.x, y: box.y, w: box.width, h: box.height };
  function apply() { svg.setAttribute('viewBox', view.x + ' ' + view.y + ' ' + view.w + ' ' + view.h); }
  svg.removeAttribute('width'); svg.removeAttribute('height');
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect();
    var px = view.x + (ev.clientX - r.left) / r.width * view.w;
    var py = view.y + (ev.clientY - r.top) / r.height * view.h;
    var k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    view.x = px - (px - view.x) * k; view.y = py - (py - view.y) * k;
    view.w *= k; view.h *= k; apply();
  }, { passive: false });
  var drag = null;
  svg.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
  window.addEventListener('mouseup', function () { setTimeout(function () { drag = null; }, 0); });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) { return; }
    var r = svg.getBoundingClientRect();
    var dx = (ev.clientX - drag.x) / r.width * view.w, dy = (ev.clientY - drag.y) / r.height * view.h;
    if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 2) { drag.moved = true; }
    view.x -= dx; view.y -= dy; drag.x = ev.clientX; drag.y = ev.clientY; apply();
  });
  var nodes = Array.prototype.slice.call(svg.querySelectorAll('g.node'));
  var edges = Array.prototype.slice.call(svg.querySelectorAll('g.edge'));
  function reach(start, forward) {
    var seen = {}; seen[start] = true; var stack = [start];
    while (stack.length) {
      var at = stack.pop();
      edges.forEach(function (e) {
        var here = forward ? e.dataset.from : e.dataset.to, next = forward ? e.dataset.to : e.dataset.from;
        if (here === at && !seen[next]) { seen[next] = true; stack.push(next); }
      });
    }
    return seen;
  }
  function clear() {
    nodes.concat(edges).forEach(function (el) { el.classList.remove('dim'); el.classList.remove('focus'); });
  }
  nodes.forEach(function (n) {
    n.addEventListener('mouseenter', function () {
      var t = n.querySelector('title'); details.textContent = t ? t.textContent : n.dataset.id;
    });
    n.addEventListener('click', function (ev) {
      ev.stopPropagation();
      if (drag && drag.moved) { return; }
      clear();
      var id = n.dataset.id, down = reach(id, true), up = reach(id, false);
      nodes.forEach(function (m) { if (!down[m.dataset.id] && !up[m.dataset.id]) { m.classList.add('dim'); } });
      edges.forEach(function (e) {
        var inDown = down[e.dataset.from] && down[e.dataset.to], inUp = up[e.dataset.from] && up[e.dataset.to];
        if (!inDown && !inUp) { e.classList.add('dim'); }
      });
      n.classList.add('focus');
    });
  });
  svg.addEventListener('click', function () { if (!(drag && drag.moved)) { clear(); } });
  document.body.setAttribute('data-graph-nodes', String(nodes.length));
  document.body.setAttribute('data-graph-edges', String(edges.length));
})();
"#;
