//! Every place a template evaluates something, found without composing: `when`s,
//! `${…}` in config blocks, component fields, substitutions, backends and messages,
//! and the paths `requires:` names. Each expression is parsed once, here.

use crate::expr::ast;
use crate::expr::{Engine, ExprError};
use crate::files::{FileMap, Span};
use crate::template::fields::{field_for, Eval};
use crate::template::{ComponentKind, Condition, Facet, Requirement, Template};
use crate::yaml::{Node, NodeKind};
use std::ops::Range;

/// What an expression belongs to, for reachability and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Owner {
    Facet,
    Block(usize),
    Component(usize),
    Other,
}

/// One expression of the template.
pub struct Site<'t> {
    /// Index into `template.facets`.
    pub facet: usize,
    pub owner: Owner,
    /// A `when` (decides whether its owner is active).
    pub is_when: bool,
    /// The YAML string the expression is written in.
    pub node: &'t Node,
    /// Byte offset of the expression inside the string's value.
    pub offset: usize,
    pub parsed: Result<ast::Node, ExprError>,
}

/// A path named by `requires:`.
pub struct RequiredPath<'t> {
    pub facet: usize,
    pub path: &'t str,
    pub span: Span,
}

#[derive(Default)]
pub struct Sites<'t> {
    pub expressions: Vec<Site<'t>>,
    pub required: Vec<RequiredPath<'t>>,
}

/// The file span of `range` (byte offsets into the expression) of a site.
pub fn span_of(site: &Site<'_>, range: Range<usize>, files: &FileMap) -> Span {
    let node = site.node;
    let Some(text) = files.text(node.span.file) else {
        return node.span;
    };
    let start = crate::yaml::content_offset(node, &text, site.offset + range.start);
    let end = crate::yaml::content_offset(node, &text, site.offset + range.end);
    Span::new(node.span.file, start, end.max(start))
}

pub fn collect<'t>(template: &'t Template, engine: &Engine) -> Sites<'t> {
    collect_where(template, engine, |_| true)
}

/// As [`collect`], for the facets (by index) `wanted` says only.
pub fn collect_where<'t>(
    template: &'t Template,
    engine: &Engine,
    wanted: impl Fn(usize) -> bool,
) -> Sites<'t> {
    let mut collector = Collector {
        engine,
        sites: Sites::default(),
        facet: 0,
        owner: Owner::Facet,
    };
    for (index, facet) in template.facets.iter().enumerate() {
        if !wanted(index) {
            continue;
        }
        collector.facet = index;
        collector.facet_sites(facet);
    }
    collector.sites
}

struct Collector<'t, 'e> {
    engine: &'e Engine,
    sites: Sites<'t>,
    facet: usize,
    owner: Owner,
}

impl<'t> Collector<'t, '_> {
    fn facet_sites(&mut self, facet: &'t Facet) {
        self.owner = Owner::Facet;
        self.condition(facet.when.as_ref());
        self.requirements(&facet.requires);
        for (i, block) in facet.config.iter().enumerate() {
            self.owner = Owner::Block(i);
            self.condition(block.when.as_ref());
            self.requirements(&block.requires);
            self.strings(&block.body);
        }
        for (i, component) in facet.components.iter().enumerate() {
            self.owner = Owner::Component(i);
            self.condition(component.when.as_deref());
            self.requirements(&component.requires);
            self.component(component.kind, &component.node);
        }
        self.owner = Owner::Other;
        for message in &facet.messages {
            self.condition(message.when.as_ref());
            self.strings(&message.text);
        }
        for node in facet
            .substitutions
            .iter()
            .chain(&facet.backend)
            .chain(&facet.crds)
        {
            self.strings(node);
        }
    }

    fn condition(&mut self, condition: Option<&'t Condition>) {
        let Some(condition) = condition else { return };
        if crate::expr::template::contains_expression(&condition.text) {
            self.template_string(&condition.node, &condition.text, true);
        } else if !condition.text.trim().is_empty() {
            self.push(&condition.node, 0, &condition.text, true);
        }
    }

    fn requirements(&mut self, requirements: &'t [Requirement]) {
        for requirement in requirements {
            // A requirement's `when` decides the requirement, not its owner.
            let owner = std::mem::replace(&mut self.owner, Owner::Other);
            self.condition(requirement.when.as_ref());
            self.owner = owner;
            for (path, span) in &requirement.paths {
                self.sites.required.push(RequiredPath {
                    facet: self.facet,
                    path,
                    span: *span,
                });
            }
        }
    }

    /// The evaluated fields of a component: literal ones (identity, intervals) are
    /// never expressions, patches only in their `patch` text.
    fn component(&mut self, kind: ComponentKind, node: &'t Node) {
        let NodeKind::Map(entries) = &node.kind else {
            return;
        };
        for (key, value) in entries {
            if crate::template::fields::is_directive(&key.name) {
                continue;
            }
            match field_for(kind, &key.name).map(|f| f.eval) {
                // Flux system secrets are passed on as written, but their `${…}` are
                // meant as expressions, so a misspelt name there is a mistake too.
                Some(Eval::Literal) if &*key.name != "secrets" => {}
                Some(Eval::Patches) => self.patches(value),
                _ => self.strings(value),
            }
        }
    }

    fn patches(&mut self, node: &'t Node) {
        let NodeKind::Seq(items) = &node.kind else {
            return;
        };
        for item in items {
            if let Some(patch) = item.get("patch") {
                self.strings(patch);
            }
        }
    }

    /// Every string below `node`; keys are never evaluated (S7). A nested `when:`
    /// (flux resource variants) is a condition.
    fn strings(&mut self, node: &'t Node) {
        match &node.kind {
            NodeKind::Str(text) => self.template_string(node, text, false),
            NodeKind::Seq(items) => items.iter().for_each(|item| self.strings(item)),
            NodeKind::Map(entries) => {
                for (key, value) in entries {
                    match (&*key.name, &value.kind) {
                        ("when", NodeKind::Str(text))
                            if !crate::expr::template::contains_expression(text) =>
                        {
                            let owner = std::mem::replace(&mut self.owner, Owner::Other);
                            self.push(value, 0, text, true);
                            self.owner = owner;
                        }
                        _ => self.strings(value),
                    }
                }
            }
            _ => {}
        }
    }

    fn template_string(&mut self, node: &'t Node, text: &'t str, is_when: bool) {
        for body in crate::expr::template::bodies(text) {
            match body {
                Ok((offset, body)) => self.push(node, offset, body, is_when),
                Err(e) => self.sites.expressions.push(Site {
                    facet: self.facet,
                    owner: self.owner,
                    is_when,
                    node,
                    offset: 0,
                    parsed: Err(e),
                }),
            }
        }
    }

    fn push(&mut self, node: &'t Node, offset: usize, text: &'t str, is_when: bool) {
        let parsed = self.engine.parse(text);
        self.sites.expressions.push(Site {
            facet: self.facet,
            owner: self.owner,
            is_when,
            node,
            offset,
            parsed,
        });
    }
}
