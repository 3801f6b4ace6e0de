//! What a composition is given besides its template: the context's value layers and
//! built-in names, where `env()` reads from, and the budgets.

use crate::expr::host::JsonnetLimits;
use crate::expr::Value;
use crate::files::{FileMap, Span};
use crate::yaml::Node;
use std::collections::BTreeMap;

/// Budgets of one composition beyond the expression engine's own (docs/limits.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub jsonnet: JsonnetLimits,
    /// Largest composed blueprint, in bytes of its compact JSON form.
    pub output_bytes: usize,
    /// Evaluation steps all the expressions of one composition may take.
    pub steps: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            jsonnet: Default::default(),
            output_bytes: 64 * 1024 * 1024,
            steps: crate::expr::work::DEFAULT_MAX_STEPS,
        }
    }
}

/// Whether a dependency cycle is an error or is kept to be shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cycles {
    #[default]
    Reject,
    Keep,
}

/// One layer of context values, and where its YAML is when it has some (so a schema
/// violation can point at the line that set the value).
#[derive(Clone, Debug)]
pub struct Layer {
    /// Shown in messages and `explain`: `contexts/local/values.yaml`, `--set`, …
    pub name: String,
    pub value: Value,
    pub yaml: Option<LayerYaml>,
}

/// Where a layer's values are written. Only the place is kept, not the parsed tree:
/// a values file can be large, and its spans are needed only when a message points
/// into it, so the text (kept in the source map anyway) is parsed again then.
#[derive(Clone, Debug)]
pub struct LayerYaml {
    /// The span of the layer's root mapping (its file is the span's file).
    pub span: Span,
    /// Keys from the file's root down to the layer (`contexts`, `<ctx>` for a section
    /// of windsor.yaml; empty for a whole file).
    pub within: Vec<String>,
}

impl Layer {
    /// The layer a whole YAML file makes. The tree is turned into values as it is
    /// taken apart, so a large file is not held twice.
    pub(crate) fn of_file(name: String, node: Node) -> Layer {
        let span = node.span;
        Layer {
            name,
            value: node.into_value(),
            yaml: Some(LayerYaml {
                span,
                within: Vec::new(),
            }),
        }
    }

    /// The span of the value this layer writes at `path`, if its YAML writes that
    /// whole path.
    pub fn locate(&self, path: &[String], files: &FileMap) -> Option<Span> {
        let yaml = self.yaml.as_ref()?;
        let text = files.text(yaml.span.file)?;
        let root = crate::yaml::parse(&text, yaml.span.file).ok()?;
        let mut cur: &Node = &root;
        for seg in yaml.within.iter().chain(path) {
            cur = cur.get(seg)?;
        }
        Some(cur.span)
    }
}

/// Built-in names every expression sees (S4).
#[derive(Clone, Debug, Default)]
pub struct Builtins {
    pub context: String,
    pub context_path: String,
    pub project_root: String,
}

/// Where `env()` reads from.
#[derive(Clone, Debug, Default)]
pub enum Environment {
    /// The process environment (plain `bpc compose`).
    #[default]
    Process,
    /// Exactly these variables (test cases are hermetic).
    Fixed(BTreeMap<String, String>),
}
