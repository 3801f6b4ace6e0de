//! Reading one facet document into the [`Facet`] model (S2): required fields are
//! checked, unknown keys warned about with a hint, every problem reported with its
//! position. Nothing here evaluates an expression.

use super::facet::*;
use super::keys;
use super::ordinal::default_ordinal;
use crate::files::{Diagnostic, FileId, Span};
use crate::yaml::{Key, Node, NodeKind};
use std::borrow::Cow;

const FACET_KIND: &str = "Facet";
const BLUEPRINT_KIND: &str = "Blueprint";
pub const API_VERSION: &str = "blueprints.windsorcli.dev/v1alpha1";

/// Collects the problems found while reading one file.
pub struct Reader<'a> {
    pub diagnostics: &'a mut Vec<Diagnostic>,
}

impl Reader<'_> {
    fn error(&mut self, span: Span, message: impl Into<String>, label: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::error(message).with_primary(span, label));
    }

    /// Warns about keys of `node` that are not in `known`; `context` names the level.
    /// `context` is written only into a warning: a component's is not formatted unless
    /// one of its keys is unknown.
    fn check_keys(&mut self, node: &Node, known: &[&str], context: &dyn std::fmt::Display) {
        let NodeKind::Map(entries) = &node.kind else {
            return;
        };
        for (key, _) in entries {
            if known.contains(&&*key.name) {
                continue;
            }
            let mut d = Diagnostic::warning(format!("unknown key `{}` in {context}", key.name))
                .with_primary(key.span, "not a key bpc knows here");
            if let Some(hint) = keys::suggest(&key.name, known) {
                d = d.with_help(format!("did you mean `{hint}`?"));
            }
            self.diagnostics.push(d);
        }
    }

    /// Warns about keys of `owner`'s patches and their targets that Windsor drops.
    fn check_patch_keys(&mut self, owner: &Node) {
        let Some(NodeKind::Seq(patches)) = owner.get("patches").map(|p| &p.kind) else {
            return;
        };
        for patch in patches {
            self.check_keys(patch, keys::PATCH, &"a patch");
            if let Some(target) = patch.get("target") {
                self.check_keys(target, keys::PATCH_TARGET, &"a patch `target`");
            }
        }
    }

    /// A string field; YAML booleans and numbers are read as their text, as Windsor's
    /// decoder does (`when: true` is the expression `true`).
    /// Borrowed from the node when it is a string: most are only looked at.
    pub fn string<'n>(&mut self, node: &'n Node, what: &str) -> Option<Cow<'n, str>> {
        match &node.kind {
            NodeKind::Str(s) => Some(Cow::Borrowed(s)),
            NodeKind::Bool(b) => Some(Cow::Owned(b.to_string())),
            NodeKind::Int(n) => Some(Cow::Owned(n.to_string())),
            NodeKind::Uint(n) => Some(Cow::Owned(n.to_string())),
            NodeKind::Float(f) => Some(Cow::Owned(f.to_string())),
            NodeKind::Null => None,
            _ => {
                self.error(
                    node.span,
                    format!("{what} must be a string, found {}", node.type_label()),
                    "expected a string",
                );
                None
            }
        }
    }

    pub fn int(&mut self, node: &Node, what: &str) -> Option<i64> {
        match &node.kind {
            NodeKind::Int(n) => Some(*n),
            NodeKind::Str(s) => match s.trim().parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    self.error(
                        node.span,
                        format!("{what} must be an integer"),
                        "not an integer",
                    );
                    None
                }
            },
            _ => {
                self.error(
                    node.span,
                    format!("{what} must be an integer, found {}", node.type_label()),
                    "expected an integer",
                );
                None
            }
        }
    }

    pub fn condition(&mut self, node: Option<&Node>, what: &str) -> Option<Condition> {
        let node = node?;
        let text = self.string(node, what)?;
        if text.trim().is_empty() {
            return None;
        }
        Some(Condition {
            text: text.into_owned(),
            node: node.clone(),
        })
    }

    pub fn strategy(&mut self, node: Option<&Node>) -> Strategy {
        let Some(node) = node else {
            return Strategy::Merge;
        };
        let Some(text) = self.string(node, "`strategy`") else {
            return Strategy::Merge;
        };
        match Strategy::parse(&text) {
            Some(s) => s,
            None => {
                let mut d = Diagnostic::error(format!("invalid strategy `{text}`"))
                    .with_primary(node.span, "must be `merge`, `replace` or `remove`");
                if let Some(meant) = super::keys::suggest(&text, &["merge", "replace", "remove"]) {
                    d = d.with_help(format!("did you mean `{meant}`?"));
                }
                self.diagnostics.push(d);
                Strategy::Merge
            }
        }
    }

    /// Like [`Reader::list`], for a node the caller owns: the items are moved out, not
    /// copied (a facet's components are most of its document).
    fn owned_list(&mut self, node: Option<Node>, what: &str) -> Vec<Node> {
        match node {
            Some(Node {
                kind: NodeKind::Seq(items),
                ..
            }) => items.into_vec(),
            Some(other) => {
                self.list(Some(&other), what);
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    fn list<'n>(&mut self, node: Option<&'n Node>, what: &str) -> &'n [Node] {
        match node.map(|n| &n.kind) {
            Some(NodeKind::Seq(items)) => items,
            Some(NodeKind::Null) | None => &[],
            Some(_) => {
                let node = node.expect("matched Some above");
                self.error(
                    node.span,
                    format!("{what} must be a list, found {}", node.type_label()),
                    "expected a list",
                );
                &[]
            }
        }
    }

    fn requirements(&mut self, node: Option<&Node>) -> Vec<Requirement> {
        let mut out = Vec::new();
        for item in self.list(node, "`requires`") {
            if !matches!(item.kind, NodeKind::Map(_)) {
                self.error(
                    item.span,
                    "a `requires` entry must be a map",
                    "expected `paths:`",
                );
                continue;
            }
            self.check_keys(item, keys::REQUIREMENT, &"a `requires` entry");
            let mut paths = Vec::new();
            for p in self.list(item.get("paths"), "`paths`") {
                if let Some(text) = self.string(p, "a required path") {
                    paths.push((text.into_owned(), p.span));
                }
            }
            if paths.is_empty() {
                self.error(
                    item.span,
                    "a `requires` entry needs at least one path",
                    "`paths` is missing or empty",
                );
                continue;
            }
            let message = item
                .get("message")
                .and_then(|m| self.string(m, "`message`"));
            let when = self.condition(item.get("when"), "`when`");
            out.push(Requirement {
                paths,
                message: message.map(Cow::into_owned),
                when,
                span: item.span,
            });
        }
        out
    }

    fn config_block(&mut self, node: Node, position: usize) -> Option<ConfigBlock> {
        let NodeKind::Map(entries) = &node.kind else {
            self.error(
                node.span,
                format!("a config block must be a map, found {}", node.type_label()),
                "expected `name:` and a body",
            );
            return None;
        };
        let Some(name_node) = node.get("name") else {
            self.error(
                node.span,
                "a config block needs a `name`",
                "no `name:` here",
            );
            return None;
        };
        let name = self
            .string(name_node, "a config block's `name`")?
            .into_owned();
        if name.is_empty() {
            self.error(
                name_node.span,
                "a config block's `name` is empty",
                "empty name",
            );
            return None;
        }
        let name_span = name_node.span;
        let when = self.condition(node.get("when"), "`when`");
        let ordinal = node.get("ordinal").and_then(|o| self.int(o, "`ordinal`"));
        let strategy = self.strategy(node.get("strategy"));
        let requires = self.requirements(node.get("requires"));
        let has_value = node.get("value").is_some();
        if has_value {
            let extra: Vec<&Key> = entries
                .iter()
                .map(|(k, _)| k)
                .filter(|k| !keys::CONFIG_BLOCK.contains(&&*k.name))
                .collect();
            for k in extra {
                self.diagnostics.push(
                    Diagnostic::warning(format!(
                        "key `{}` is ignored: block `{name}` has a `value:` body",
                        k.name
                    ))
                    .with_primary(k.span, "not part of the block's value"),
                );
            }
        }
        // S6: `value:` holds the body; without it every other key is the body.
        let span = node.span;
        let NodeKind::Map(entries) = node.kind else {
            return None;
        };
        let body = if has_value {
            entries
                .into_vec()
                .into_iter()
                .find(|(k, _)| &*k.name == "value")
                .map(|(_, v)| v)?
        } else {
            let body: Box<[(Key, Node)]> = entries
                .into_vec()
                .into_iter()
                .filter(|(k, _)| !keys::CONFIG_BLOCK.contains(&&*k.name))
                .collect();
            Node {
                kind: NodeKind::Map(body),
                span,
                style: None,
            }
        };
        Some(ConfigBlock {
            name,
            name_span,
            when,
            body,
            ordinal,
            strategy,
            requires,
            position,
        })
    }

    fn component(
        &mut self,
        kind: ComponentKind,
        node: Node,
        position: usize,
    ) -> Option<ComponentEntry> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            self.error(
                node.span,
                format!(
                    "a {} must be a map, found {}",
                    kind.noun(),
                    node.type_label()
                ),
                "expected a map",
            );
            return None;
        }
        let known = super::fields::component_keys(kind);
        self.check_keys(&node, known, &format_args!("a {}", kind.noun()));
        if kind == ComponentKind::FluxSystem {
            if let Some(install) = node.get("install") {
                self.check_keys(install, super::fields::tier_keys(), &"an install tier");
                self.check_patch_keys(install);
            }
            if let Some(NodeKind::Seq(variants)) = node.get("resources").map(|r| &r.kind) {
                for v in variants {
                    self.check_keys(v, super::fields::tier_keys(), &"a resources variant");
                    self.check_patch_keys(v);
                }
            }
        } else {
            self.check_patch_keys(&node);
        }
        match kind {
            ComponentKind::Terraform => {
                let has = |k: &str| node.get(k).is_some_and(|n| !n.is_null());
                if !has("name") && !has("path") {
                    self.error(
                        node.span,
                        "a terraform component needs a `name` or a `path`",
                        "neither `name:` nor `path:` here",
                    );
                    return None;
                }
            }
            ComponentKind::Kustomize | ComponentKind::FluxSystem => {
                let name = node.get("name").and_then(|n| self.string(n, "`name`"));
                if name.is_none_or(|n| n.is_empty()) {
                    self.error(
                        node.span,
                        format!("a {} needs a `name`", kind.noun()),
                        "no `name:` here",
                    );
                    return None;
                }
            }
        }
        Some(ComponentEntry {
            kind,
            when: self.condition(node.get("when"), "`when`").map(Box::new),
            strategy: self.strategy(node.get("strategy")),
            ordinal: node.get("ordinal").and_then(|o| self.int(o, "`ordinal`")),
            requires: self.requirements(node.get("requires")).into(),
            node,
            position,
        })
    }

    /// Reads one facet document. Returns `None` when the file is not usable at all;
    /// every problem has been pushed to the diagnostics.
    pub fn facet(&mut self, node: Node, path: &str, file: FileId) -> Option<Facet> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            self.error(
                node.span,
                format!("a facet must be a map, found {}", node.type_label()),
                "expected `kind: Facet` and its fields",
            );
            return None;
        }
        self.check_keys(&node, keys::FACET, &"a facet");
        let usable = self.header_usable(&node);
        let meta = node.get("metadata");
        if let Some(m) = meta {
            self.check_keys(m, keys::METADATA, &"`metadata`");
        }
        let name_node = meta.and_then(|m| m.get("name"));
        let name = name_node.and_then(|n| self.string(n, "`metadata.name`").map(Cow::into_owned));
        let (name, name_span) = match (name, name_node) {
            (Some(n), Some(node)) if !n.is_empty() => (n, node.span),
            (_, at) => {
                self.error(
                    at.map_or(node.span, |n| n.span),
                    "a facet needs a non-empty `metadata.name`",
                    "missing name",
                );
                return None;
            }
        };
        let basename = path.rsplit('/').next().unwrap_or(path);
        let ordinal = match node.get("ordinal") {
            Some(o) => self.int(o, "`ordinal`").unwrap_or(0),
            None => default_ordinal(basename),
        };
        let when = self.condition(node.get("when"), "`when`");
        let requires = self.requirements(node.get("requires"));
        for item in self.list(node.get("messages"), "`messages`") {
            self.check_keys(item, keys::MESSAGE, &"a message");
        }
        if let Some(s) = node.get("substitutions") {
            if !matches!(s.kind, NodeKind::Map(_) | NodeKind::Null) {
                self.error(s.span, "`substitutions` must be a map", "expected a map");
            }
        }
        // Everything below moves parts out of the document instead of copying them.
        let mut doc = node;
        let mut config = Vec::new();
        let blocks = self.owned_list(take_entry(&mut doc, "config"), "`config`");
        for (i, item) in blocks.into_iter().enumerate() {
            if let Some(b) = self.config_block(item, i) {
                config.push(b);
            }
        }
        let mut components = Vec::new();
        for (key, kind) in [
            ("terraform", ComponentKind::Terraform),
            ("kustomize", ComponentKind::Kustomize),
        ] {
            let items = self.owned_list(take_entry(&mut doc, key), &format!("`{key}`"));
            for (i, item) in items.into_iter().enumerate() {
                if let Some(c) = self.component(kind, item, i) {
                    components.push(c);
                }
            }
        }
        self.flux_entries(take_entry(&mut doc, "flux"), &mut components);
        let crds = self.owned_list(take_entry(&mut doc, "crds"), "`crds`");
        let mut messages = self.messages(take_entry(&mut doc, "messages"));
        if !usable {
            return None;
        }
        // Kept as long as the template: no spare room from growing (a facet of ten
        // components held room for sixteen).
        config.shrink_to_fit();
        components.shrink_to_fit();
        messages.shrink_to_fit();
        Some(Facet {
            name,
            name_span,
            path: path.to_string(),
            file,
            ordinal,
            when,
            config,
            components,
            requires,
            crds,
            substitutions: take_entry(&mut doc, "substitutions"),
            backend: take_entry(&mut doc, "backend"),
            messages,
            hollow: false,
        })
    }

    /// Whether the facet's `kind` and `apiVersion` are the ones bpc reads (each wrong
    /// or missing one is an error).
    fn header_usable(&mut self, node: &Node) -> bool {
        let mut usable = true;
        match node.get("kind").map(|k| (k, k.as_str())) {
            Some((_, Some(FACET_KIND))) => {}
            Some((k, _)) => {
                self.error(
                    k.span,
                    format!("`kind` must be `{FACET_KIND}`"),
                    "wrong kind",
                );
                usable = false;
            }
            None => {
                self.error(node.span, "a facet needs `kind: Facet`", "no `kind:` here");
                usable = false;
            }
        }
        match node.get("apiVersion").map(|k| (k, k.as_str())) {
            Some((_, Some(API_VERSION))) => {}
            Some((k, _)) => {
                self.error(
                    k.span,
                    format!("`apiVersion` must be `{API_VERSION}`"),
                    "unsupported apiVersion",
                );
                usable = false;
            }
            None => {
                self.error(
                    node.span,
                    format!("a facet needs `apiVersion: {API_VERSION}`"),
                    "no `apiVersion:` here",
                );
                usable = false;
            }
        }
        usable
    }

    /// The `flux:` entries, into `components` after the `kustomize:` ones (positions
    /// continue so both lists keep file order): the system form compiles into tiers;
    /// the plain form is a kustomization (`kustomize:` is its older spelling).
    fn flux_entries(&mut self, entries: Option<Node>, components: &mut Vec<ComponentEntry>) {
        let start = components.len();
        let items = self.owned_list(entries, "`flux`");
        for (i, item) in items.into_iter().enumerate() {
            let system = keys::FLUX_SYSTEM_ONLY.iter().any(|k| item.get(k).is_some())
                || match &item.kind {
                    crate::yaml::NodeKind::Map(entries) => {
                        super::fields::patches_flux_system(entries.iter().map(|(k, _)| &*k.name))
                    }
                    _ => false,
                };
            let kind = if system {
                ComponentKind::FluxSystem
            } else {
                ComponentKind::Kustomize
            };
            if let Some(c) = self.component(kind, item, start + i) {
                components.push(c);
            }
        }
    }

    /// The `messages:` entries, each with its `text` and `when`.
    fn messages(&mut self, entries: Option<Node>) -> Vec<Message> {
        let mut messages = Vec::new();
        for mut item in self.owned_list(entries, "`messages`") {
            let when = self.condition(item.get("when"), "`when`");
            match take_entry(&mut item, "text") {
                Some(text) => messages.push(Message { text, when }),
                None => self.error(item.span, "a message needs `text`", "no `text:` here"),
            }
        }
        messages
    }
}

impl Reader<'_> {
    /// Checks `blueprint.yaml` as strictly as a facet: its header, the types
    /// of its sections and every component entry. Keys bpc does not know are kept in
    /// the output (S10), so they are not warned about here.
    pub fn blueprint(&mut self, node: &Node) {
        if !matches!(node.kind, NodeKind::Map(_)) {
            self.error(
                node.span,
                format!("blueprint.yaml must be a map, found {}", node.type_label()),
                "expected `kind: Blueprint` and its fields",
            );
            return;
        }
        for (key, want) in [("kind", BLUEPRINT_KIND), ("apiVersion", API_VERSION)] {
            match node.get(key) {
                Some(v) if v.as_str() == Some(want) => {}
                Some(v) => self.error(
                    v.span,
                    format!("`{key}` of blueprint.yaml must be `{want}`"),
                    format!("expected `{want}`"),
                ),
                None => self.error(
                    node.span,
                    format!("blueprint.yaml needs `{key}: {want}`"),
                    format!("no `{key}:` here"),
                ),
            }
        }
        for (key, what) in [("metadata", "`metadata`"), ("repository", "`repository`")] {
            if let Some(v) = node.get(key) {
                if !matches!(v.kind, NodeKind::Map(_) | NodeKind::Null) {
                    self.error(
                        v.span,
                        format!("{what} must be a map, found {}", v.type_label()),
                        "expected a map",
                    );
                }
            }
        }
        if let Some(m) = node.get("metadata") {
            self.check_keys(m, keys::METADATA, &"`metadata`");
            if let Some(name) = m.get("name") {
                self.string(name, "`metadata.name`");
            }
        }
        for item in self.list(node.get("sources"), "`sources`") {
            if !matches!(item.kind, NodeKind::Map(_)) {
                self.error(
                    item.span,
                    "a `sources` entry must be a map",
                    "expected a map",
                );
            }
        }
        for (key, kind) in [
            ("terraform", ComponentKind::Terraform),
            ("kustomize", ComponentKind::Kustomize),
        ] {
            let items = self.list(node.get(key), &format!("`{key}`"));
            for (i, item) in items.iter().enumerate() {
                self.component(kind, item.clone(), i);
            }
        }
        if let Some(s) = node.get("substitutions") {
            if !matches!(s.kind, NodeKind::Map(_) | NodeKind::Null) {
                self.error(s.span, "`substitutions` must be a map", "expected a map");
            }
        }
    }
}

/// Moves the value of `key` out of a map node (keys are unique: the loader rejects
/// duplicates).
fn take_entry(node: &mut Node, key: &str) -> Option<Node> {
    let NodeKind::Map(entries) = &mut node.kind else {
        return None;
    };
    let at = entries.iter().position(|(k, _)| &*k.name == key)?;
    let mut rest = std::mem::take(entries).into_vec();
    let taken = rest.remove(at).1;
    *entries = rest.into_boxed_slice();
    Some(taken)
}
