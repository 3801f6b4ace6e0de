//! YAML node ↔ value. Spans are dropped going to a value; a value turned back into a
//! node gets one span for every node (the place that produced it).
//!
//! These are inherent methods of [`Node`] written here, beside [`Value`], so that the
//! YAML layer does not need to know values: `yaml` sits below `value`.

use super::{Map, Value};
use crate::files::Span;
use crate::yaml::{Key, Node, NodeKind, ScalarStyle};
use std::sync::Arc;

/// How integers become values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IntMapping {
    /// `Int` stays `Int`, `Uint` stays `Uint`.
    Signed,
    /// Non-negative integers become `Uint`, as Go's YAML decoder yields `uint64` for them
    /// (what Windsor's `yaml()` function returns).
    GoYaml,
}

impl Node {
    /// The value of this node: integers as `Int` (above `i64::MAX`: `Uint`).
    pub fn to_value(&self) -> Value {
        node_to_value(self, IntMapping::Signed)
    }

    /// As [`Node::to_value`], consuming the node: each part is freed once converted,
    /// so a large document is never held twice.
    pub fn into_value(self) -> Value {
        match self.kind {
            NodeKind::Seq(items) => {
                let mut values: Vec<Value> =
                    items.into_vec().into_iter().map(Node::into_value).collect();
                // Collected in place, the list would keep the nodes' larger buffer.
                values.shrink_to_fit();
                Value::List(Arc::new(values))
            }
            NodeKind::Map(entries) => {
                let mut map = Map::with_capacity(entries.len());
                for (key, value) in entries {
                    map.insert(key.name, value.into_value());
                }
                Value::Map(Arc::new(map))
            }
            _ => node_to_value(&self, IntMapping::Signed),
        }
    }

    /// The value as Go's YAML decoder would produce it: non-negative integers as `Uint`.
    pub fn to_value_go_yaml(&self) -> Value {
        node_to_value(self, IntMapping::GoYaml)
    }

    /// A node for `value`, every part of it carrying `span`. Strings are plain-styled (a
    /// value has no source style).
    pub fn from_value(value: &Value, span: Span) -> Node {
        let (kind, style) = match value {
            Value::Nil => (NodeKind::Null, Some(ScalarStyle::Plain)),
            Value::Bool(b) => (NodeKind::Bool(*b), Some(ScalarStyle::Plain)),
            Value::Int(n) => (NodeKind::Int(*n), Some(ScalarStyle::Plain)),
            Value::Uint(n) => match i64::try_from(*n) {
                Ok(small) => (NodeKind::Int(small), Some(ScalarStyle::Plain)),
                Err(_) => (NodeKind::Uint(*n), Some(ScalarStyle::Plain)),
            },
            Value::Float(f) => (NodeKind::Float(*f), Some(ScalarStyle::Plain)),
            Value::Str(s) => (NodeKind::Str(Arc::clone(s)), Some(ScalarStyle::Plain)),
            Value::List(items) => (
                NodeKind::Seq(items.iter().map(|v| Node::from_value(v, span)).collect()),
                None,
            ),
            Value::Map(map) => (
                NodeKind::Map(
                    map.iter()
                        .map(|(k, v)| {
                            let key = Key {
                                name: Arc::clone(k),
                                span,
                            };
                            (key, Node::from_value(v, span))
                        })
                        .collect(),
                ),
                None,
            ),
        };
        Node { kind, span, style }
    }
}

fn node_to_value(node: &Node, ints: IntMapping) -> Value {
    match &node.kind {
        NodeKind::Null => Value::Nil,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Int(n) => match ints {
            IntMapping::GoYaml if *n >= 0 => Value::Uint(*n as u64),
            _ => Value::Int(*n),
        },
        NodeKind::Uint(n) => Value::Uint(*n),
        NodeKind::Float(f) => Value::Float(*f),
        NodeKind::Str(s) => Value::Str(Arc::clone(s)),
        NodeKind::Seq(items) => Value::List(Arc::new(
            items.iter().map(|n| node_to_value(n, ints)).collect(),
        )),
        NodeKind::Map(entries) => {
            let mut map = Map::with_capacity(entries.len());
            for (key, value) in entries {
                map.insert(Arc::clone(&key.name), node_to_value(value, ints));
            }
            Value::Map(Arc::new(map))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileId;

    #[test]
    fn to_value_keeps_types_and_order() {
        let doc = crate::yaml::parse("z: 1\na: [x, 2.5, null, -3]\nm: {k: true}\n", FileId(0))
            .expect("yaml");
        let value = doc.to_value();
        let map = value.as_map().expect("map");
        assert_eq!(
            map.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["z", "a", "m"]
        );
        assert!(matches!(map["z"], Value::Int(1)));
        let go = doc.to_value_go_yaml();
        let go_map = go.as_map().expect("map");
        assert!(matches!(go_map["z"], Value::Uint(1)));
        let list = go_map["a"].as_list().expect("list");
        assert!(matches!(list[3], Value::Int(-3)));
        let back = Node::from_value(&value, doc.span);
        assert_eq!(back.to_value().as_map().map(|m| m.len()), Some(3));
    }
}
