//! YAML text → [`Node`] tree, on saphyr-parser's event API.
//!
//! The loader resolves everything consumers should not have to know about: anchors and
//! aliases are expanded (within [`ALIAS_EXPANSION_LIMIT`] so a "billion laughs" document
//! fails fast), `<<` merge keys are applied, duplicate keys are errors that name both
//! places, tags of the core schema are honoured, and plain scalars are typed as goccy/go-yaml
//! types them (see [`super::scalar`]). The tree is built with an explicit stack, and nesting
//! is limited to [`MAX_DEPTH`] so that no input can exhaust the call stack of the recursive
//! consumers downstream.

use super::error::YamlError;
use super::intern::Interner;
use super::map_builder::MapBuilder;
use super::node::{Key, Node, NodeKind, ScalarStyle};
use super::positions::CharToByte;
use super::scalar::{self, PlainScalar};
use crate::files::{FileId, Span};
use saphyr_parser::{Event, Parser, ScalarStyle as SaphyrStyle, StrInput, Tag};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Deepest nesting of lists and maps a document may have.
pub const MAX_DEPTH: usize = 256;

/// Most nodes that alias expansion may produce in one document. Real templates reuse a
/// few hundred nodes; an exponential alias bomb hits this within microseconds.
pub const ALIAS_EXPANSION_LIMIT: usize = 100_000;

/// [`super::parse_with_warnings`] on saphyr-parser's events alone, without the fast front end
/// (`super::fast`) that reads the common shapes. Every error comes from here; the
/// benchmark and the fuzz driver compare the two.
#[doc(hidden)]
pub fn parse_full(text: &str, file: FileId) -> Result<(Node, Vec<YamlError>), YamlError> {
    parse_full_in(text, file, &mut Interner::default())
}

/// [`parse_full`], sharing strings through `interner`.
pub(crate) fn parse_full_in(
    text: &str,
    file: FileId,
    interner: &mut Interner,
) -> Result<(Node, Vec<YamlError>), YamlError> {
    let mut loader = Loader::new(text, file, interner);
    let mut docs = loader
        .documents(true)
        .map_err(|e| super::error::hint_unquoted_expression(e, text))?;
    let node = docs
        .pop()
        .unwrap_or_else(|| null_node(Span::new(file, 0, 0)));
    Ok((node, loader.warnings))
}

/// Parses every document of a multi-document stream (`---` separated), in order.
pub fn parse_all(text: &str, file: FileId) -> Result<Vec<Node>, YamlError> {
    Loader::new(text, file, &mut Interner::default())
        .documents(false)
        .map_err(|e| super::error::hint_unquoted_expression(e, text))
}

fn null_node(span: Span) -> Node {
    Node {
        kind: NodeKind::Null,
        span,
        style: Some(ScalarStyle::Plain),
    }
}

/// A node that has been anchored, kept for the aliases that refer to it.
struct Anchor {
    node: Node,
    /// Number of nodes in the tree, charged to the expansion budget per alias.
    size: usize,
    /// The scalar as written (decoded), when the node is a scalar: an alias used as a
    /// mapping key needs the text, not the typed value.
    text: Option<String>,
}

enum Collection {
    Seq(Vec<Node>),
    Map {
        builder: MapBuilder,
        /// The key read and waiting for its value; `None` means the next node is a key.
        pending: Option<PendingKey>,
    },
}

struct PendingKey {
    key: Key,
    merge: bool,
}

struct Frame {
    collection: Collection,
    start: usize,
    /// End of the last child, so a block collection's span stops at its last character.
    last_end: usize,
    anchor: usize,
    tag: Option<String>,
    size: usize,
}

struct Loader<'a> {
    text: &'a str,
    file: FileId,
    parser: Parser<'a, StrInput<'a>>,
    positions: CharToByte,
    anchors: HashMap<usize, Anchor>,
    expanded: usize,
    stack: Vec<Frame>,
    /// Mapping keys and short string values shared with other trees; see
    /// [`Key::name`].
    interner: &'a mut Interner,
    /// Tags read but not honoured (see [`super::parse_with_warnings`]); at most
    /// [`TAG_WARNINGS_LIMIT`].
    warnings: Vec<YamlError>,
}

/// Most tag warnings one file reports (a file of a million tags says so once).
const TAG_WARNINGS_LIMIT: usize = 20;

impl<'a> Loader<'a> {
    fn new(text: &'a str, file: FileId, interner: &'a mut Interner) -> Loader<'a> {
        Loader {
            text,
            file,
            parser: Parser::new_from_str(text),
            positions: CharToByte::new(text),
            anchors: HashMap::new(),
            expanded: 0,
            stack: Vec::new(),
            interner,
            warnings: Vec::new(),
        }
    }

    /// Templates use a few dozen distinct keys over and over.
    fn intern(&mut self, name: &str) -> Arc<str> {
        self.interner.key(name)
    }

    /// One allocation for each distinct short string value.
    fn intern_value(&mut self, kind: NodeKind) -> NodeKind {
        match kind {
            NodeKind::Str(text) => NodeKind::Str(self.interner.value_of(text)),
            other => other,
        }
    }

    /// Records a tag bpc reads but does not honour.
    fn tag_warning(&mut self, tag: &Tag, span: Span) {
        if self.warnings.len() >= TAG_WARNINGS_LIMIT {
            return;
        }
        let name = tag_name(tag);
        let message = if tag.is_yaml_core_schema() && tag.suffix == "binary" {
            "the tag !!binary is not decoded: bpc has no bytes type, so the value stays its base64 text".to_string()
        } else if tag.is_yaml_core_schema() {
            return;
        } else if tag.handle.is_empty() && tag.suffix == "!" {
            // `!` only forces a string: honoured.
            return;
        } else {
            format!("the tag {name} has no meaning for bpc and is dropped; the value is read as if it were not tagged")
        };
        let mut warning = YamlError::new(span, message);
        warning.help = Some(if tag.suffix == "binary" {
            "decode it where it is needed with fromBase64(...)".to_string()
        } else {
            "remove the tag, or quote the value if it must stay text".to_string()
        });
        self.warnings.push(warning);
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    /// The next event with its byte range.
    fn next(&mut self) -> Result<(Event<'a>, usize, usize), YamlError> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => Ok((
                event,
                self.positions.byte(span.start.index()),
                self.positions.byte(span.end.index()),
            )),
            Some(Err(err)) => {
                let at = self.positions.byte(err.marker().index());
                Err(self.syntax_error(at, err.info()))
            }
            None => {
                let end = self.text.len();
                Err(YamlError::new(
                    self.span(end, end),
                    "unexpected end of the YAML stream",
                ))
            }
        }
    }

    /// The parser's error at byte `at`. Inside a flow collection (`[` or `{`), the
    /// error names where it opened: a bracket left open is the usual cause, and the
    /// parser only notices it where the text stops making sense, often at the end of
    /// the file, a place with nothing to show.
    fn syntax_error(&self, at: usize, info: &str) -> YamlError {
        let parser_says = YamlError::new(self.span(at, at), info);
        let parser_says = super::syntax_help::explain(parser_says, self.text, at, info);
        let Some((open, kind, close)) = self.innermost_flow() else {
            return parser_says;
        };
        let bracket = self.span(open, open + 1);
        let at_end = self
            .text
            .get(at..)
            .is_none_or(|rest| rest.trim().is_empty());
        if !at_end {
            return parser_says.with_related(bracket, format!("inside the {kind} opened here"));
        }
        let end = self.text.trim_end().len();
        let mut err = YamlError::new(
            bracket,
            format!("this {kind} is never closed: the file ends before its `{close}`"),
        )
        .with_related(self.span(end, end), "the file ends here");
        err.help = Some(format!("close it with `{close}`"));
        err
    }

    /// The innermost open `[…]` or `{…}`: its start, what it is and what closes it.
    fn innermost_flow(&self) -> Option<(usize, &'static str, char)> {
        self.stack
            .iter()
            .rev()
            .find_map(|frame| match self.text.as_bytes().get(frame.start) {
                Some(b'[') => Some((frame.start, "flow sequence", ']')),
                Some(b'{') => Some((frame.start, "flow mapping", '}')),
                _ => None,
            })
    }

    fn documents(&mut self, single: bool) -> Result<Vec<Node>, YamlError> {
        let mut docs = Vec::new();
        loop {
            let (event, start, end) = self.next()?;
            match event {
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                Event::StreamEnd => return Ok(docs),
                Event::DocumentStart(_) => {
                    if single && !docs.is_empty() {
                        return Err(YamlError::new(
                            self.span(start, end.max(start + 3).min(self.text.len())),
                            "expected a single YAML document, found a second one",
                        ));
                    }
                    docs.push(self.document()?);
                }
                _ => {
                    return Err(YamlError::new(
                        self.span(start, end),
                        "unexpected YAML content outside a document",
                    ))
                }
            }
        }
    }

    /// Reads the events of one document up to and including its root node.
    fn document(&mut self) -> Result<Node, YamlError> {
        self.anchors.clear();
        self.expanded = 0;
        self.stack.clear();
        loop {
            let (event, start, end) = self.next()?;
            let done = match event {
                Event::Nothing => None,
                Event::Scalar(value, style, anchor, tag) => {
                    self.scalar(value, style, anchor, tag, start, end)?
                }
                Event::Alias(id) => self.alias(id, start, end)?,
                Event::SequenceStart(anchor, tag) => {
                    self.open(Collection::Seq(Vec::new()), anchor, tag, start, end)?;
                    None
                }
                Event::MappingStart(anchor, tag) => {
                    let map = Collection::Map {
                        builder: MapBuilder::default(),
                        pending: None,
                    };
                    self.open(map, anchor, tag, start, end)?;
                    None
                }
                Event::SequenceEnd | Event::MappingEnd => self.close(start, end)?,
                Event::StreamStart
                | Event::StreamEnd
                | Event::DocumentStart(_)
                | Event::DocumentEnd => {
                    return Err(YamlError::new(
                        self.span(start, end),
                        "unexpected end of document",
                    ))
                }
            };
            if let Some(root) = done {
                return Ok(root);
            }
        }
    }

    fn expecting_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                collection: Collection::Map { pending: None, .. },
                ..
            })
        )
    }

    fn scalar(
        &mut self,
        value: Cow<'a, str>,
        style: SaphyrStyle,
        anchor: usize,
        tag: Option<Cow<'a, Tag>>,
        start: usize,
        end: usize,
    ) -> Result<Option<Node>, YamlError> {
        let start = if anchor != 0 || tag.is_some() {
            skip_properties(self.text, start, end)
        } else {
            start
        };
        let span = self.span(start, end);
        let style = convert_style(style);
        if let Some(tag) = tag.as_deref() {
            self.tag_warning(tag, span);
        }
        if self.expecting_key() {
            let merge = match tag.as_deref() {
                None => style == ScalarStyle::Plain && value == "<<",
                Some(tag) => tag.is_yaml_core_schema() && tag.suffix == "merge",
            };
            if anchor != 0 {
                let node = Node {
                    kind: scalar_kind(value.clone(), style, tag.as_deref(), span)?,
                    span,
                    style: Some(style),
                };
                self.remember(anchor, node, 1, Some(value.to_string()));
            }
            let key = Key {
                name: self.intern(&value),
                span,
            };
            self.set_pending(key, merge);
            return Ok(None);
        }
        let text = (anchor != 0).then(|| value.to_string());
        let kind = scalar_kind(value, style, tag.as_deref(), span)?;
        let kind = self.intern_value(kind);
        let node = Node {
            kind,
            span,
            style: Some(style),
        };
        if anchor != 0 {
            self.remember(anchor, node.clone(), 1, text);
        }
        self.attach(node, 1)
    }

    fn alias(&mut self, id: usize, start: usize, end: usize) -> Result<Option<Node>, YamlError> {
        let alias_span = self.span(start, end);
        let Some(anchor) = self.anchors.get(&id) else {
            // The parser knows the name, so the node is still being read.
            return Err(YamlError::new(
                alias_span,
                "alias refers to a node that contains it (recursive alias)",
            ));
        };
        if self.expecting_key() {
            let Some(text) = anchor.text.clone() else {
                return Err(YamlError::new(
                    alias_span,
                    "an alias used as a mapping key must refer to a scalar",
                ));
            };
            let key = Key {
                name: self.intern(&text),
                span: alias_span,
            };
            self.set_pending(key, false);
            return Ok(None);
        }
        self.expanded = self.expanded.saturating_add(anchor.size);
        if self.expanded > ALIAS_EXPANSION_LIMIT {
            return Err(YamlError::new(
                alias_span,
                format!(
                    "aliases expand to more than {ALIAS_EXPANSION_LIMIT} nodes; \
                     the document repeats an anchor too often (an alias bomb?)"
                ),
            ));
        }
        let (node, size) = (anchor.node.clone(), anchor.size);
        self.attach(node, size)
    }

    fn open(
        &mut self,
        collection: Collection,
        anchor: usize,
        tag: Option<Cow<'a, Tag>>,
        start: usize,
        end: usize,
    ) -> Result<(), YamlError> {
        if self.expecting_key() {
            return Err(YamlError::new(
                self.span(start, end.max(start + 1)),
                "a list or map cannot be used as a mapping key",
            ));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::new(
                self.span(start, end),
                format!("lists and maps are nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let start = if anchor != 0 || tag.is_some() {
            skip_properties(self.text, start, end.max(start))
        } else {
            start
        };
        if let Some(tag) = tag.as_deref() {
            let span = self.span(start, end.max(start));
            self.tag_warning(tag, span);
        }
        self.stack.push(Frame {
            collection,
            start,
            last_end: end.max(start),
            anchor,
            tag: tag.map(|t| tag_name(&t)),
            size: 1,
        });
        Ok(())
    }

    fn close(&mut self, start: usize, end: usize) -> Result<Option<Node>, YamlError> {
        let Some(frame) = self.stack.pop() else {
            return Err(YamlError::new(
                self.span(start, end),
                "unbalanced end of a list or map",
            ));
        };
        // A flow collection ends at its bracket; a block one at its last child.
        let end = if end > start { end } else { frame.last_end };
        let span = self.span(frame.start, end);
        // Growth leaves up to half of a collection's buffer unused; a large document is
        // mostly small collections, so that slack would be a good part of its tree.
        let kind = match frame.collection {
            Collection::Seq(items) => NodeKind::Seq(items.into_boxed_slice()),
            Collection::Map { builder, .. } => NodeKind::Map(builder.finish().into_boxed_slice()),
        };
        if let Some(tag) = &frame.tag {
            check_collection_tag(tag, &kind, span)?;
        }
        let node = Node {
            kind,
            span,
            style: None,
        };
        if frame.anchor != 0 {
            self.remember(frame.anchor, node.clone(), frame.size, None);
        }
        self.attach(node, frame.size)
    }

    fn remember(&mut self, id: usize, node: Node, size: usize, text: Option<String>) {
        self.anchors.insert(id, Anchor { node, size, text });
    }

    fn set_pending(&mut self, key: Key, merge: bool) {
        if let Some(Frame {
            collection: Collection::Map { pending, .. },
            last_end,
            ..
        }) = self.stack.last_mut()
        {
            *last_end = (*last_end).max(key.span.end as usize);
            *pending = Some(PendingKey { key, merge });
        }
    }

    /// Hands a finished node to the collection being read; returns it when it is the root.
    fn attach(&mut self, node: Node, size: usize) -> Result<Option<Node>, YamlError> {
        let Some(frame) = self.stack.last_mut() else {
            return Ok(Some(node));
        };
        frame.size = frame.size.saturating_add(size);
        frame.last_end = frame.last_end.max(node.span.end as usize);
        match &mut frame.collection {
            Collection::Seq(items) => items.push(node),
            Collection::Map { builder, pending } => match pending.take() {
                Some(PendingKey { key, merge: false }) => builder.insert_written(key, node)?,
                Some(PendingKey { merge: true, .. }) => merge_into(builder, node)?,
                None => {
                    return Err(YamlError::new(node.span, "mapping value without a key"));
                }
            },
        }
        Ok(None)
    }
}

/// Applies the value of a `<<` key: a map, or a list of maps (earlier ones win).
fn merge_into(builder: &mut MapBuilder, value: Node) -> Result<(), YamlError> {
    let span = value.span;
    let not_mergeable = || YamlError::new(span, "the merge key `<<` takes a map or a list of maps");
    match value.kind {
        NodeKind::Map(entries) => {
            for (key, node) in entries {
                builder.insert_merged(key, node);
            }
        }
        NodeKind::Seq(items) => {
            for item in items {
                let NodeKind::Map(entries) = item.kind else {
                    return Err(not_mergeable());
                };
                for (key, node) in entries {
                    builder.insert_merged(key, node);
                }
            }
        }
        _ => return Err(not_mergeable()),
    }
    Ok(())
}

fn convert_style(style: SaphyrStyle) -> ScalarStyle {
    match style {
        SaphyrStyle::Plain => ScalarStyle::Plain,
        SaphyrStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        SaphyrStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        SaphyrStyle::Literal => ScalarStyle::Literal,
        SaphyrStyle::Folded => ScalarStyle::Folded,
    }
}

/// `!!int` for core-schema tags, the written form for others.
fn tag_name(tag: &Tag) -> String {
    if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        tag.to_string()
    }
}

/// The parser's span of a node with an anchor or tag starts at those properties; a caret
/// belongs under the value itself.
fn skip_properties(text: &str, start: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut pos = start;
    let limit = end.min(bytes.len());
    while pos < limit {
        match bytes[pos] {
            b'&' | b'!' => {
                while pos < limit && !bytes[pos].is_ascii_whitespace() {
                    pos += 1;
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            _ => break,
        }
    }
    if pos >= limit {
        start
    } else {
        pos
    }
}

fn scalar_kind(
    value: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
    span: Span,
) -> Result<NodeKind, YamlError> {
    let Some(tag) = tag else {
        return Ok(if style == ScalarStyle::Plain {
            plain_kind(&value)
        } else {
            NodeKind::Str(Arc::from(value.as_ref()))
        });
    };
    if !tag.is_yaml_core_schema() {
        // `!` forces a string; application tags (`!Ref`, …) carry no meaning for bpc.
        return Ok(
            if (tag.handle.is_empty() && tag.suffix == "!") || style != ScalarStyle::Plain {
                NodeKind::Str(Arc::from(value.as_ref()))
            } else {
                plain_kind(&value)
            },
        );
    }
    let wrong = |what: &str| {
        YamlError::new(
            span,
            format!("`{value}` is not {what} (tagged !!{})", tag.suffix),
        )
    };
    Ok(match tag.suffix.as_str() {
        "str" | "binary" | "timestamp" => NodeKind::Str(Arc::from(value.as_ref())),
        "null" => match scalar::resolve_keyword(&value) {
            Some(PlainScalar::Null) => NodeKind::Null,
            _ => return Err(wrong("null")),
        },
        "bool" => match scalar::resolve_keyword(&value) {
            Some(PlainScalar::Bool(b)) => NodeKind::Bool(b),
            _ => return Err(wrong("a boolean")),
        },
        "int" => match scalar::parse_number(&value) {
            Some(scalar::Number::Int(n)) => NodeKind::Int(n),
            Some(scalar::Number::Uint(n)) => NodeKind::Uint(n),
            _ => return Err(wrong("an integer")),
        },
        "float" => match scalar::resolve_keyword(&value) {
            Some(PlainScalar::Float(f)) => NodeKind::Float(f),
            _ => match scalar::parse_number(&value) {
                Some(scalar::Number::Int(n)) => NodeKind::Float(n as f64),
                Some(scalar::Number::Uint(n)) => NodeKind::Float(n as f64),
                Some(scalar::Number::Float(f)) => NodeKind::Float(f),
                None => return Err(wrong("a number")),
            },
        },
        other => {
            return Err(YamlError::new(
                span,
                format!("the tag !!{other} cannot be applied to a scalar"),
            ))
        }
    })
}

pub(super) fn plain_kind(value: &str) -> NodeKind {
    plain_non_string(value).unwrap_or_else(|| NodeKind::Str(Arc::from(value)))
}

/// What a plain scalar reads as when that is not a string (null, a boolean, a
/// number); `None` for a string, which the caller allocates (or interns) itself.
pub(super) fn plain_non_string(value: &str) -> Option<NodeKind> {
    Some(match scalar::resolve_plain(value) {
        PlainScalar::Null => NodeKind::Null,
        PlainScalar::Bool(b) => NodeKind::Bool(b),
        PlainScalar::Int(n) => NodeKind::Int(n),
        PlainScalar::Uint(n) => NodeKind::Uint(n),
        PlainScalar::Float(f) => NodeKind::Float(f),
        PlainScalar::Str(_) => return None,
    })
}

fn check_collection_tag(tag: &str, kind: &NodeKind, span: Span) -> Result<(), YamlError> {
    let fits = match tag {
        "!!map" | "!!omap" | "!!set" => matches!(kind, NodeKind::Map(_)),
        "!!seq" | "!!pairs" => matches!(kind, NodeKind::Seq(_)),
        other if other.starts_with("!!") => false,
        // Application tags carry no meaning for bpc.
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        let what = if matches!(kind, NodeKind::Map(_)) {
            "a map"
        } else {
            "a list"
        };
        Err(YamlError::new(
            span,
            format!("the tag {tag} cannot be applied to {what}"),
        ))
    }
}
