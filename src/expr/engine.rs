//! The entry point: compile expressions (cached by source text), run them against a
//! scope and a host, and render `${…}` templates.

use super::compiler::Compiler;
use super::error::ExprError;
use super::eval::Evaluator;
use super::host::Host;
use super::lexer;
use super::limits::{MAX_REENTRY, MAX_SOURCE};
use super::native::NativeFn;
use super::parser;
use super::program::Program;
use super::reentry::Reenter;
use super::scope::Scope;
use super::template::{self, Dialect};
use super::windsor;
use crate::value::Value;
use std::sync::{Arc, RwLock};

#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Register `terraform_output` at all (otherwise the name is undefined and
    /// calling it fails at run time, as in Windsor without a Terraform provider).
    pub terraform_output: bool,
    /// How `${…}` in strings is rendered: bpc's rules (S6, S7) or Windsor's loop.
    pub interpolation: Dialect,
}

/// Entries kept in the compile cache before it is cleared.
const CACHE_CAPACITY: usize = 16 * 1024;

/// A cached compilation outcome (errors are cached too: the text will not change).
type Compiled = Result<Arc<Program>, ExprError>;

pub struct Engine {
    natives: Vec<NativeFn>,
    interpolation: Dialect,
    /// FxHash: every expression of a composition is looked up here once per use (a
    /// third of the lookup went to SipHash); the capacity bounds what a text crafted
    /// to collide could cost.
    cache: RwLock<rustc_hash::FxHashMap<Arc<str>, Compiled>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        let natives = windsor::functions()
            .iter()
            .filter(|f| config.terraform_output || f.name != "terraform_output")
            .copied()
            .collect();
        let mut engine = Engine::with_functions(natives);
        engine.interpolation = config.interpolation;
        engine
    }

    /// An engine with exactly these host functions (tests and embedders).
    pub fn with_functions(natives: Vec<NativeFn>) -> Engine {
        Engine {
            natives,
            interpolation: Dialect::default(),
            cache: RwLock::new(Default::default()),
        }
    }

    /// Compiles `source`, reusing an earlier compilation of the same text.
    pub fn compile(&self, source: &str) -> Result<Arc<Program>, ExprError> {
        if let Ok(cache) = self.cache.read() {
            if let Some(hit) = cache.get(source) {
                return hit.clone();
            }
        }
        let result = self.compile_uncached(source);
        if let Ok(mut cache) = self.cache.write() {
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            cache.insert(source.into(), result.clone());
        }
        result
    }

    /// Compiles without touching the cache.
    fn compile_uncached(&self, source: &str) -> Result<Arc<Program>, ExprError> {
        if source.len() > MAX_SOURCE {
            return Err(ExprError::compile(
                format!("expression is longer than {MAX_SOURCE} bytes"),
                0..source.len(),
            ));
        }
        let ast = self.parse(source)?;
        let mut compiler = Compiler::new(&self.natives);
        let (root, _) = compiler.compile(&ast)?;
        Ok(Arc::new(Program {
            root,
            source: source.into(),
            calls_host: compiler.calls_host(),
        }))
    }

    /// The syntax tree of `source`, for static checks that read an expression without
    /// running it (`bpc check`).
    pub fn parse(&self, source: &str) -> Result<super::ast::Node, ExprError> {
        let tokens = lexer::tokenize(source)?;
        let is_native = |name: &str| self.is_function(name);
        parser::parse(tokens, &is_native)
    }

    /// Whether `name` is a host function this engine registers.
    pub fn is_function(&self, name: &str) -> bool {
        self.natives.iter().any(|f| f.name == name)
    }

    pub fn run(
        &self,
        program: &Program,
        scope: &dyn Scope,
        host: &dyn Host,
    ) -> Result<Value, ExprError> {
        Evaluator::new(self, scope, host, 0).eval_root(&program.root)
    }

    pub fn eval(
        &self,
        source: &str,
        scope: &dyn Scope,
        host: &dyn Host,
    ) -> Result<Value, ExprError> {
        let program = self.compile(source)?;
        self.run(&program, scope, host)
    }

    /// Evaluates a string with `${…}` interpolation (conformance README, tmpl mode).
    pub fn render_template(
        &self,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
    ) -> Result<Value, ExprError> {
        self.render_nested(text, scope, host, 0)
    }

    /// [`Engine::render_template`], and whether the value depends on nothing but
    /// `text` and `scope`: every expression it ran is pure (calls no host function).
    /// Rendering the same text against the same scope again then gives the same value.
    pub fn render_template_pure(
        &self,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
    ) -> Result<(Value, bool), ExprError> {
        let pure = std::cell::Cell::new(true);
        let value = self.render_noting(text, scope, host, 0, &pure)?;
        Ok((value, pure.get()))
    }

    /// Renders `text`, clearing `pure` if an expression it runs calls a host function.
    fn render_noting(
        &self,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
        depth: u32,
        pure: &std::cell::Cell<bool>,
    ) -> Result<Value, ExprError> {
        if depth > MAX_REENTRY {
            return Err(ExprError::run(
                "templates nest too deeply through host functions",
                0..text.len(),
            ));
        }
        let mut eval = |body: &str, offset: usize| -> Result<Value, ExprError> {
            let shift = |mut e: ExprError| {
                e.span = e.span.start + offset..e.span.end + offset;
                e
            };
            let program = self.compile(body).map_err(shift)?;
            if !program.is_pure() {
                pure.set(false);
            }
            Evaluator::new(self, scope, host, depth)
                .eval_root(&program.root)
                .map_err(shift)
        };
        template::render(text, self.interpolation, &mut eval)
    }
}

impl Reenter for Engine {
    /// Template rendering from inside a host function, `depth` levels deep.
    fn render_nested(
        &self,
        text: &str,
        scope: &dyn Scope,
        host: &dyn Host,
        depth: u32,
    ) -> Result<Value, ExprError> {
        self.render_noting(text, scope, host, depth, &std::cell::Cell::new(true))
    }
}

#[cfg(test)]
mod tests {
    use super::{Engine, EngineConfig};
    use crate::expr::host::NullHost;
    use crate::value::{Map, Value};

    /// A template's value depends on the scope alone unless an expression in it calls
    /// a host function, wherever the call sits.
    #[test]
    fn a_template_is_pure_unless_it_calls_a_host_function() {
        let engine = Engine::new(EngineConfig::default());
        let mut scope = Map::default();
        scope.insert("xs".into(), Value::list(vec![Value::str("a")]));
        let pure = |text: &str| {
            engine
                .render_template_pure(text, &scope, &NullHost::default())
                .map(|(_, pure)| pure)
                .map_err(|e| e.message)
        };
        assert_eq!(pure("${len(xs) > 0 ? upper(xs[0]) : 'none'}"), Ok(true));
        assert_eq!(pure("${xs[0]}-${len(xs)}"), Ok(true));
        assert_eq!(pure("${env('HOME') ?? ''}"), Ok(false));
        assert_eq!(pure("${xs[0]}-${env('HOME') ?? ''}"), Ok(false));
        assert_eq!(pure("${map(xs, env(#) ?? '')}"), Ok(false));
        assert_eq!(pure("${let f = 'x'; f}"), Ok(true));
    }
}
