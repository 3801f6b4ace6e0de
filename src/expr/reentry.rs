//! Host re-entry: how a host function that evaluates text itself (`yaml(text,
//! input)`, `yamlString(path, input)`, `jsonnet` reading the scope) gets back into the
//! engine. The evaluator knows the engine only as a [`Reenter`], which `engine.rs`
//! implements, so the files layer one way: engine → eval → reentry.

use super::error::{ErrorKind, ExprError};
use super::host::Host;
use super::native::{Interpolate, NativeError};
use super::scope::Scope;
use crate::value::{Map, Value};

/// What the evaluator needs of the engine: `${…}` text rendered from inside a host
/// function.
pub(crate) trait Reenter {
    /// Renders the `${…}` in `text` against `scope`, `depth` host re-entries deep
    /// (refused past [`super::limits::MAX_REENTRY`]).
    fn render_nested(
        &self,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
        depth: u32,
    ) -> Result<Value, ExprError>;
}

/// Lets host functions evaluate templates against the scope of the running
/// expression.
pub(crate) struct Reentry<'a> {
    pub engine: &'a dyn Reenter,
    pub scope: &'a dyn Scope,
    pub host: &'a dyn Host,
    /// How many host functions re-entered the engine to get here.
    pub depth: u32,
}

impl Interpolate for Reentry<'_> {
    fn interpolate(&self, text: &str, input: Value) -> Result<Value, NativeError> {
        let scope = WithInput {
            inner: self.scope,
            input,
        };
        self.engine
            .render_nested(text, &scope, self.host, self.depth + 1)
            .map_err(to_native_error)
    }

    fn scope(&self) -> Value {
        self.scope.all().unwrap_or(Value::Nil)
    }
}

fn to_native_error(e: ExprError) -> NativeError {
    match e.kind {
        ErrorKind::Deferred => NativeError::deferred(e.message),
        _ => NativeError::run(e.message),
    }
}

/// The running scope plus the name `input`.
struct WithInput<'a> {
    inner: &'a dyn Scope,
    input: Value,
}

impl Scope for WithInput<'_> {
    fn lookup(&self, path: &[&str]) -> Result<Option<(Value, usize)>, ExprError> {
        if path.first() == Some(&"input") {
            return Ok(Some((self.input.clone(), 1)));
        }
        self.inner.lookup(path)
    }

    fn all(&self) -> Result<Value, ExprError> {
        let mut map = match self.inner.all()? {
            Value::Map(m) => (*m).clone(),
            _ => Map::default(),
        };
        map.insert("input".into(), self.input.clone());
        Ok(Value::map(map))
    }
}
