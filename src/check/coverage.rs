//! Test coverage: composes every case of the template's `tests/` and records, per
//! facet, config block and component of the template, how many cases activate it and
//! which outcomes of its `when` some case produces.

use crate::compose::face::Composition;
use crate::compose::model::activation::Activation;
use crate::files::{FileMap, Span};
use crate::template::Template;
use crate::testing::case::Case;
use crate::testing::runner::Runner;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Item {
    Facet,
    ConfigBlock,
    Component,
}

/// One facet, config block or component and what the cases did with it.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub item: Item,
    /// `aws`, `aws/pki_effective`, `aws/terraform/cluster`.
    pub name: String,
    /// `file:line`.
    pub at: String,
    /// Cases in which it is active (blocks: included; components: contributed).
    pub cases: usize,
    /// Some case evaluated its `when` to true / to false; `None` without a `when`.
    pub when_true: Option<bool>,
    pub when_false: Option<bool>,
    #[serde(skip)]
    pub span: Span,
}

impl Row {
    /// The `when` outcomes no case produced.
    pub fn missing_branches(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.when_true == Some(false) {
            out.push("true");
        }
        if self.when_false == Some(false) {
            out.push("false");
        }
        out
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Coverage {
    pub cases: usize,
    /// Cases that did not compose (they count for nothing here).
    pub failed: usize,
    pub rows: Vec<Row>,
}

/// Runs `cases` on `suite` (which holds `template`) and tallies what they reach.
pub fn coverage(template: &Template, suite: &Runner<'_>, cases: &[&Case]) -> Coverage {
    let mut rows = skeleton(template);
    let mut failed = 0;
    for case in cases {
        match suite.compose_case(case) {
            Ok(composition) => tally(template, &composition, &mut rows),
            Err(_) => failed += 1,
        }
    }
    let sources = &template.files;
    for row in &mut rows {
        row.at = place(sources, row.span);
    }
    Coverage {
        cases: cases.len(),
        failed,
        rows,
    }
}

fn place(files: &FileMap, span: Span) -> String {
    match (
        files.path(span.file),
        files.location(span.file, span.start as usize),
    ) {
        (Some(path), Some(at)) => format!("{path}:{}", at.line),
        _ => String::new(),
    }
}

/// Rows in template order: each facet, then its blocks, then its components.
fn skeleton(template: &Template) -> Vec<Row> {
    let mut rows = Vec::new();
    let when = |w: bool| (w.then_some(false), w.then_some(false));
    for facet in &template.facets {
        let (t, f) = when(facet.when.is_some());
        rows.push(row(Item::Facet, facet.name.clone(), facet.name_span, t, f));
        for block in &facet.config {
            let (t, f) = when(block.when.is_some());
            let name = format!("{}/{}", facet.name, block.name);
            rows.push(row(Item::ConfigBlock, name, block.name_span, t, f));
        }
        for component in &facet.components {
            let (t, f) = when(component.when.is_some());
            let id = crate::template::identity::node_merge_key(component.kind, &component.node)
                .unwrap_or_default();
            let name = format!("{}/{}/{id}", facet.name, component.kind.list_key());
            rows.push(row(Item::Component, name, component.node.span, t, f));
        }
    }
    rows
}

fn row(item: Item, name: String, span: Span, t: Option<bool>, f: Option<bool>) -> Row {
    Row {
        item,
        name,
        at: String::new(),
        cases: 0,
        when_true: t,
        when_false: f,
        span,
    }
}

fn tally(template: &Template, composition: &Composition, rows: &mut [Row]) {
    let mut next = 0;
    for (i, facet) in template.facets.iter().enumerate() {
        let outcome = composition.activation.outcome.get(i).cloned();
        let active = matches!(outcome, Some(Activation::Active | Activation::Always));
        let facet_row = &mut rows[next];
        next += 1;
        if active {
            facet_row.cases += 1;
        }
        mark(
            facet_row,
            outcome.map(|o| o == Activation::Active),
            facet.when.is_some(),
        );
        for block in &facet.config {
            let included = composition
                .config_log
                .iter()
                .find(|r| r.facet == i && r.position == block.position)
                .map(|r| r.included);
            let block_row = &mut rows[next];
            next += 1;
            if included == Some(true) {
                block_row.cases += 1;
            }
            mark(block_row, included, block.when.is_some());
        }
        for component in &facet.components {
            let component_row = &mut rows[next];
            next += 1;
            if !active {
                continue;
            }
            let id = crate::template::identity::node_merge_key(component.kind, &component.node);
            // Entries of one id are told apart by their `when`'s place.
            let when_span = component.when.as_ref().map(|w| w.node.span);
            let excluded = composition.exclusions.iter().any(|e| {
                e.facet
                    == (crate::template::FacetId {
                        template: crate::template::TemplateId::Composing,
                        index: i,
                    })
                    && e.kind == component.kind
                    && id.as_deref() == Some(&*e.id)
                    && e.when.as_ref().map(|w| w.node.span) == when_span
            });
            if !excluded {
                component_row.cases += 1;
            }
            mark(component_row, Some(!excluded), component.when.is_some());
        }
    }
}

fn mark(row: &mut Row, outcome: Option<bool>, has_when: bool) {
    if !has_when {
        return;
    }
    match outcome {
        Some(true) => row.when_true = Some(true),
        Some(false) => row.when_false = Some(true),
        None => {}
    }
}
