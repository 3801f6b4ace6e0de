//! The names an expression may read, as one tree: schema properties, config block keys
//! (same-name blocks of every facet merged), built-ins and the fields Windsor
//! materialises. Each node knows whether keys it does not list are allowed below it,
//! and what the schema says of its type.

use crate::files::Span;
use crate::template::Template;
use crate::yaml::{Node, NodeKind};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Built-in names of the scope (S4).
pub const BUILTINS: &[&str] = &["context", "context_path", "project_root", "projectName"];

/// Paths Windsor's typed configuration materialises whatever the schema says (S4).
const TYPED_FIELDS: &[&[&str]] = &[
    &["cluster", "controlplanes", "nodes"],
    &["cluster", "workers", "nodes"],
    &["workstation", "arch"],
    // Windsor's context configuration section for the workstation's git livereload.
    &["git", "livereload"],
];

/// `$ref` chains deeper than this are not followed (a cycle, or an absurd schema).
const MAX_REF_DEPTH: u32 = 32;

#[derive(Clone, Debug, Default)]
pub struct Shape {
    pub children: BTreeMap<Arc<str>, Shape>,
    /// Keys it does not list are allowed below it (free-form maps, values computed
    /// by expressions, `additionalProperties: true`).
    pub open: bool,
    /// The shape of every key not listed (`additionalProperties: {…}`).
    pub each: Option<Box<Shape>>,
    /// The schema's `type`s; empty when it says none.
    pub types: Vec<String>,
    pub enumeration: Option<Vec<serde_json::Value>>,
    /// Where the schema declares it.
    pub schema_span: Option<Span>,
    /// Where a config block writes it (the first such key).
    pub config_span: Option<Span>,
    /// A config block writes it (so the schema's type and enum are not the whole story).
    pub written: bool,
}

/// How far a path gets in the tree.
pub enum Resolution<'a> {
    /// Every segment names something; the shape of the last.
    Known(&'a Shape),
    /// A segment is below a node that allows any key.
    Open,
    /// Segment `at` is not a key of `parent`.
    Unknown { at: usize, parent: &'a Shape },
}

impl Shape {
    /// The same tree, positions compared by file path and offsets (a file read
    /// again has another id but the same text and positions).
    pub fn same_as(&self, other: &Shape, sources: &crate::files::FileMap) -> bool {
        let span = |a: &Option<Span>, b: &Option<Span>| match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                (a.start, a.end) == (b.start, b.end)
                    && (a.file == b.file || sources.path(a.file) == sources.path(b.file))
            }
            _ => false,
        };
        self.open == other.open
            && self.written == other.written
            && self.types == other.types
            && self.enumeration == other.enumeration
            && span(&self.schema_span, &other.schema_span)
            && span(&self.config_span, &other.config_span)
            && match (&self.each, &other.each) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same_as(b, sources),
                _ => false,
            }
            && self.children.len() == other.children.len()
            && self
                .children
                .iter()
                .zip(&other.children)
                .all(|((ka, a), (kb, b))| ka == kb && a.same_as(b, sources))
    }

    pub fn resolve(&self, path: &[Arc<str>]) -> Resolution<'_> {
        let mut shape = self;
        for (at, segment) in path.iter().enumerate() {
            shape = match shape.children.get(segment) {
                Some(child) => child,
                None => match &shape.each {
                    Some(each) => each,
                    None if shape.open => return Resolution::Open,
                    None => return Resolution::Unknown { at, parent: shape },
                },
            };
        }
        Resolution::Known(shape)
    }

    fn child(&mut self, name: &str) -> &mut Shape {
        self.children.entry(Arc::from(name)).or_default()
    }

    fn merge(&mut self, other: Shape) {
        for (name, child) in other.children {
            match self.children.get_mut(&name) {
                Some(mine) => mine.merge(child),
                None => {
                    self.children.insert(name, child);
                }
            }
        }
        self.open |= other.open;
        if let Some(each) = other.each {
            match &mut self.each {
                Some(mine) => mine.merge(*each),
                None => self.each = Some(each),
            }
        }
        for t in other.types {
            if !self.types.contains(&t) {
                self.types.push(t);
            }
        }
        if let Some(values) = other.enumeration {
            self.enumeration.get_or_insert_with(Vec::new).extend(values);
        }
        self.schema_span = self.schema_span.or(other.schema_span);
        self.config_span = self.config_span.or(other.config_span);
        self.written |= other.written;
    }

    /// Whether a value of JSON type `kind` may stand here, as far as the schema says.
    pub fn admits(&self, value: &serde_json::Value) -> bool {
        if self.types.is_empty() || self.written || value.is_null() {
            return true;
        }
        self.types.iter().any(|t| match t.as_str() {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            _ => true,
        })
    }

    /// The schema's enum, unless a config block may write other values.
    pub fn closed_enum(&self) -> Option<&[serde_json::Value]> {
        match (&self.enumeration, self.written) {
            (Some(values), false) => Some(values),
            _ => None,
        }
    }

    /// The names one level down, for did-you-mean.
    pub fn names(&self) -> Vec<&str> {
        self.children.keys().map(|k| &**k).collect()
    }
}

/// The tree of every readable name of `template`.
pub fn names(template: &Template) -> Shape {
    let mut root = match &template.schema {
        Some(schema) => SchemaReader { root: schema }.shape(schema, 0),
        None => Shape {
            open: true,
            ..Shape::default()
        },
    };
    for name in BUILTINS {
        root.child(name);
    }
    for path in TYPED_FIELDS {
        let mut shape = &mut root;
        for segment in *path {
            shape = shape.child(segment);
        }
        shape.open = true;
    }
    for facet in &template.facets {
        for block in &facet.config {
            let mut shape = &mut root;
            for segment in block.name.split('.') {
                shape = shape.child(segment);
                shape.written = true;
            }
            shape.config_span = shape.config_span.or(Some(block.name_span));
            config_body(shape, &block.body);
        }
    }
    root
}

/// What a config block body adds below its name: its keys, recursively; a computed
/// value may be anything, so it is open.
fn config_body(shape: &mut Shape, body: &Node) {
    shape.written = true;
    match &body.kind {
        NodeKind::Map(entries) => {
            for (key, value) in entries {
                let child = shape.child(&key.name);
                child.config_span = child.config_span.or(Some(key.span));
                config_body(child, value);
            }
        }
        NodeKind::Str(text) if crate::expr::template::contains_expression(text) => {
            shape.open = true
        }
        _ => {}
    }
}

struct SchemaReader<'s> {
    root: &'s Node,
}

impl SchemaReader<'_> {
    fn shape(&self, node: &Node, depth: u32) -> Shape {
        let mut shape = Shape::default();
        if depth > MAX_REF_DEPTH || !matches!(node.kind, NodeKind::Map(_)) {
            shape.open = true;
            return shape;
        }
        if let Some(target) = node.get("$ref").and_then(Node::as_str) {
            match self.pointer(target) {
                Some(referenced) => shape.merge(self.shape(referenced, depth + 1)),
                None => shape.open = true,
            }
        }
        match node.get("type").map(|t| &t.kind) {
            Some(NodeKind::Str(t)) => shape.types.push(t.to_string()),
            Some(NodeKind::Seq(items)) => shape
                .types
                .extend(items.iter().filter_map(Node::as_str).map(str::to_string)),
            _ => {}
        }
        if let Some(values) = node.get("enum") {
            if let serde_json::Value::Array(items) = json(values) {
                shape.enumeration = Some(items);
            }
        }
        if let Some(value) = node.get("const") {
            shape.enumeration = Some(vec![json(value)]);
        }
        let properties = node.get("properties");
        if let Some(NodeKind::Map(entries)) = properties.map(|p| &p.kind) {
            for (key, value) in entries {
                let mut child = self.shape(value, depth + 1);
                child.schema_span = Some(key.span);
                shape.children.insert(key.name.clone(), child);
            }
        }
        match node.get("additionalProperties").map(|a| &a.kind) {
            Some(NodeKind::Bool(false)) => {}
            Some(NodeKind::Map(_)) => {
                if let Some(each) = node.get("additionalProperties") {
                    shape.each = Some(Box::new(self.shape(each, depth + 1)));
                }
            }
            Some(_) => shape.open = true,
            // Properties listed and nothing said of others: the author gave the shape.
            None => shape.open |= properties.is_none() && !is_scalar(&shape.types),
        }
        if node.get("patternProperties").is_some() {
            shape.open = true;
        }
        for combinator in ["allOf", "anyOf", "oneOf"] {
            if let Some(NodeKind::Seq(branches)) = node.get(combinator).map(|b| &b.kind) {
                for branch in branches {
                    let mut branch = self.shape(branch, depth + 1);
                    // A branch that only constrains (a pattern, `required`) adds no keys.
                    branch.open &= branch_declares_object(&branch);
                    shape.merge(branch);
                }
            }
        }
        for key in ["then", "else"] {
            if let Some(branch) = node.get(key) {
                let mut branch = self.shape(branch, depth + 1);
                branch.open &= branch_declares_object(&branch);
                shape.merge(branch);
            }
        }
        shape
    }

    /// `#/$defs/name` and other local JSON pointers.
    fn pointer(&self, target: &str) -> Option<&Node> {
        let path = target.strip_prefix("#")?;
        let mut node = self.root;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            let part = part.replace("~1", "/").replace("~0", "~");
            node = node.get(&part)?;
        }
        Some(node)
    }
}

fn branch_declares_object(branch: &Shape) -> bool {
    branch.types.iter().any(|t| t == "object")
}

fn is_scalar(types: &[String]) -> bool {
    !types.is_empty() && types.iter().all(|t| t != "object" && t != "array")
}

fn json(node: &Node) -> serde_json::Value {
    crate::value::json::to_json(
        &node.to_value(),
        crate::value::json::ToJson::NonFiniteAsNull,
    )
}
