//! `jsonnet(path)`: evaluates a Jsonnet file read through the host and returns its
//! output as values. As in Windsor, the whole scope is `std.extVar('context')`, a
//! small helper library is `std.extVar('helpers')`, imports resolve relative to the
//! importing file (through the host, so they cannot leave its root), and the output
//! goes through JSON. Integral numbers come back as integers so they print as `4`,
//! not `4.0` (Windsor's float64 values print that way too); others are floats.
//!
//! The library cannot be interrupted, recurses on nesting and may panic, so an
//! evaluation never runs on the caller's thread. Where the process can start a copy
//! of itself (the `bpc` binary), evaluations run in worker processes (`worker`): past
//! the deadline or the memory budget ([`JsonnetLimits`]) the worker is killed and the
//! system takes back all it held, which the language server and `--watch`, running
//! for hours, need. Elsewhere (the library linked into another program) they run on a
//! thread of their own (`thread`), abandoned when stopped. Errors name the Jsonnet
//! file, line and column.

mod thread;
mod wire;
pub mod worker;

use super::args;
use super::json;
use crate::expr::host::JsonnetLimits;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::value::json::FromJson;
use crate::value::Value;
use rsjsonnet_lang::arena::Arena;
use rsjsonnet_lang::interner::InternedStr;
use rsjsonnet_lang::program::{
    AnalyzeError, Callbacks, EvalError, EvalErrorKind, EvalStackTraceItem, ImportError, LoadError,
    NativeError as JsonnetNativeError, Program, Thunk, Value as JsonnetValue,
};
use rsjsonnet_lang::span::{SpanContextId, SpanId};
use std::collections::HashMap;

pub const JSONNET: NativeFn = NativeFn {
    name: "jsonnet",
    sigs: &[Signature {
        params: &[Ty::Str],
        variadic: None,
        ret: Ty::Any,
    }],
    call: jsonnet,
};

/// Stack of a thread that evaluates: the Jsonnet parser recurses on nesting.
const THREAD_STACK: usize = 64 * 1024 * 1024;
/// Jsonnet call depth (the library's own limit, raised from its default of 500 only
/// moderately: deep recursion is almost always a bug in the file).
const MAX_CALL_DEPTH: usize = 1000;
/// Files one evaluation may import.
const MAX_IMPORTS: usize = 1000;
/// Longest JSON output accepted.
const MAX_OUTPUT: usize = crate::expr::limits::MAX_STRING;

/// `std.extVar('helpers')`: lookups by dotted path with typed defaults.
const HELPERS: &str = r#"
local keys(path) = if std.isArray(path) then path else std.split(path, '.');
local walk(value, path) =
  if std.length(path) == 0 then value
  else if std.isObject(value) && std.objectHas(value, path[0]) then walk(value[path[0]], path[1:])
  else null;
local typed(check, value, default) = if value != null && check(value) then value else default;
{
  get(obj, path, default=null):: local v = walk(obj, keys(path)); if v == null then default else v,
  has(obj, path):: walk(obj, keys(path)) != null,
  getString(obj, path, default=''):: typed(std.isString, walk(obj, keys(path)), default),
  getNumber(obj, path, default=0):: typed(std.isNumber, walk(obj, keys(path)), default),
  getInt(obj, path, default=0)::
    local v = typed(std.isNumber, walk(obj, keys(path)), default);
    if std.isNumber(v) then std.floor(v) else v,
  getBool(obj, path, default=false):: typed(std.isBoolean, walk(obj, keys(path)), default),
  getObject(obj, path, default={}):: typed(std.isObject, walk(obj, keys(path)), default),
  getArray(obj, path, default=[]):: typed(std.isArray, walk(obj, keys(path)), default),
  // The host of an endpoint, as the Windsor CLI's helper gives it: one leading
  // `https://` or `http://` dropped, then everything from the first `:` on
  // (`10.5.0.10:50000` -> `10.5.0.10`; a path without a port is kept).
  baseUrl(endpoint)::
    local rest =
      if std.startsWith(endpoint, 'https://') then std.substr(endpoint, 8, std.length(endpoint) - 8)
      else if std.startsWith(endpoint, 'http://') then std.substr(endpoint, 7, std.length(endpoint) - 7)
      else endpoint;
    std.split(rest, ':')[0],
  removeEmptyKeys(obj):: {
    [k]: obj[k]
    for k in std.objectFields(obj)
    if !(obj[k] == null || obj[k] == '' || obj[k] == {} || obj[k] == [])
  },
}
"#;

fn jsonnet(call: &Call<'_>, args: &[Value]) -> Result<Value, NativeError> {
    let path = args::string(args.first().unwrap_or(&Value::Nil), "jsonnet() path")?;
    let (name, bytes) = call
        .host
        .read_file(path)
        .map_err(|e| NativeError::run(format!("failed to read jsonnet file {path}: {e}")))?;
    let context = json::marshal(&call.interp.scope()).map_err(|e| {
        NativeError::run(format!(
            "failed to pass the context to jsonnet file {path}: {e}"
        ))
    })?;
    let limits = call.host.jsonnet_limits();
    let job = Job {
        name,
        source: bytes,
        context,
    };
    let output = match worker::executable() {
        Some(executable) => worker::evaluate(executable, call.host, job, limits),
        None => thread::evaluate_on_thread(call.host, job, limits),
    }
    .map_err(|e| NativeError::run(format!("failed to evaluate jsonnet file {path}: {e}")))?;
    parse_output(&output)
        .map_err(|e| NativeError::run(format!("jsonnet file {path} must output valid JSON: {e}")))
}

/// One evaluation: the file, its text and the scope as JSON.
struct Job {
    name: String,
    source: Vec<u8>,
    context: String,
}

/// Reads an import for an evaluation: `(importing file, path as written)` → the file's
/// name and bytes, or why not.
type Import<'a> = dyn FnMut(&str, &str) -> Result<(String, Vec<u8>), String> + 'a;

fn over_time(limits: &JsonnetLimits) -> String {
    format!(
        "evaluation ran longer than the jsonnet time limit of {} s; raise it with --jsonnet-timeout SECONDS",
        limits.timeout.as_secs_f64()
    )
}

fn over_memory(limits: &JsonnetLimits) -> String {
    format!(
        "evaluation used more than the jsonnet memory limit of {} MiB; raise it with --jsonnet-memory MIB",
        limits.memory / (1024 * 1024)
    )
}

/// Evaluates the file and manifests its value as JSON text.
fn evaluate(import: &mut Import<'_>, job: &Job) -> Result<String, String> {
    let Job {
        name,
        source,
        context,
    } = job;
    let arena = Arena::new();
    let mut program = Program::new(&arena);
    program.set_max_stack(MAX_CALL_DEPTH);
    let mut files = Files {
        import,
        names: HashMap::new(),
        loaded: HashMap::new(),
        error: None,
    };

    let context = files.load(&mut program, "<context>", context.as_bytes(), false)?;
    let name_context = program.intern_str("context");
    program.add_ext_var(name_context, &context);
    let helpers = files.load(&mut program, "<helpers>", HELPERS.as_bytes(), true)?;
    let name_helpers = program.intern_str("helpers");
    program.add_ext_var(name_helpers, &helpers);

    let main = files.load(&mut program, name, source, true)?;
    let value = program.eval_value(&main, &mut files).map_err(|e| {
        files
            .error
            .take()
            .unwrap_or_else(|| files.describe_eval(&program, &e))
    })?;
    let text = program
        .manifest_json(&value, false)
        .map_err(|e| files.describe_eval(&program, &e))?;
    if text.len() > MAX_OUTPUT {
        return Err(format!("output is longer than {MAX_OUTPUT} bytes"));
    }
    Ok(text)
}

/// The files of one evaluation: which source context is which file (so imports
/// resolve relative to their importer and errors name file:line:col) and each file's
/// thunk (Jsonnet evaluates a file once however often it is imported).
struct Files<'c, 'p> {
    import: &'c mut Import<'c>,
    names: HashMap<SpanContextId, (String, Vec<u8>)>,
    loaded: HashMap<String, Thunk<'p>>,
    /// The reason of the last failed import (the library's error carries none).
    error: Option<String>,
}

impl<'p> Files<'_, 'p> {
    fn load(
        &mut self,
        program: &mut Program<'p>,
        name: &str,
        source: &[u8],
        with_stdlib: bool,
    ) -> Result<Thunk<'p>, String> {
        let (context, _) = program
            .span_manager_mut()
            .insert_source_context(source.len());
        self.names
            .insert(context, (name.to_string(), source.to_vec()));
        program
            .load_source(context, source, with_stdlib, name)
            .map_err(|e| self.describe_load(program, &e))
    }

    /// `file:line:col` of a span, when it lies in one of our files.
    fn locate(&self, program: &Program<'p>, span: SpanId) -> Option<String> {
        let (context, start, _) = program.span_manager().get_span(span);
        let (name, source) = self.names.get(&context)?;
        let before = source.get(..start)?;
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        Some(format!("{name}:{line}:{column}"))
    }

    fn describe_load(&self, program: &Program<'p>, err: &LoadError) -> String {
        let (span, message) = match err {
            LoadError::Lex(e) => (lex_span(e), format!("syntax error: {}", variant_words(e))),
            LoadError::Parse(rsjsonnet_lang::parser::ParseError::Expected {
                span,
                expected,
                instead,
            }) => (
                Some(*span),
                format!(
                    "syntax error: expected {}, found {}",
                    expected
                        .iter()
                        .map(variant_words)
                        .collect::<Vec<_>>()
                        .join(" or "),
                    variant_words(instead)
                ),
            ),
            LoadError::Analyze(e) => (analyze_span(e), variant_words(e)),
        };
        self.at(program, span, message)
    }

    fn describe_eval(&self, program: &Program<'p>, err: &EvalError) -> String {
        use EvalErrorKind as K;
        let (span, message) = match &err.kind {
            K::ExplicitError { span, message } => (Some(*span), format!("error: {message}")),
            K::AssertFailed { span, message } => (
                Some(*span),
                match message {
                    Some(m) => format!("assertion failed: {m}"),
                    None => "assertion failed".to_string(),
                },
            ),
            K::UnknownObjectField { span, field_name } => {
                (Some(*span), format!("field `{field_name}` does not exist"))
            }
            K::NumericIndexOutOfRange {
                span,
                index,
                length,
            } => (
                Some(*span),
                format!("index {index} is out of range for an array of {length}"),
            ),
            K::InvalidBinaryOpTypes {
                span,
                op,
                lhs_type,
                rhs_type,
            } => (
                *span,
                format!(
                    "operator {} cannot take {} and {}",
                    variant_words(op),
                    variant_words(lhs_type),
                    variant_words(rhs_type)
                ),
            ),
            K::InvalidStdFuncArgType {
                func_name,
                arg_index,
                got_type,
                ..
            } => (
                None,
                format!(
                    "std.{func_name}: argument {} has the wrong type ({})",
                    arg_index + 1,
                    variant_words(got_type)
                ),
            ),
            K::UnknownExtVar { name } => (None, format!("unknown external variable `{name}`")),
            K::Other { span, message } => (*span, message.clone()),
            K::StackOverflow | K::InfiniteRecursion => (
                None,
                format!("stack overflow (more than {MAX_CALL_DEPTH} nested calls)"),
            ),
            other => (eval_span(other), variant_words(other)),
        };
        // Without a span of its own, the innermost place of the stack trace.
        let span = span.or_else(|| {
            err.stack_trace.iter().find_map(|item| match item {
                EvalStackTraceItem::Expr { span } => Some(*span),
                EvalStackTraceItem::Call { span, .. } => *span,
                EvalStackTraceItem::Variable { span, .. } => Some(*span),
                _ => None,
            })
        });
        self.at(program, span, message)
    }

    fn at(&self, program: &Program<'p>, span: Option<SpanId>, message: String) -> String {
        match span.and_then(|s| self.locate(program, s)) {
            Some(place) => format!("{place}: {message}"),
            None => message,
        }
    }

    /// Reads `path` relative to the file that holds the span `from`, through the
    /// caller's host.
    fn read(
        &mut self,
        program: &Program<'p>,
        from: SpanId,
        path: &str,
    ) -> Result<(String, Vec<u8>), ImportError> {
        let (context, _, _) = program.span_manager().get_span(from);
        let importer = self
            .names
            .get(&context)
            .map(|(n, _)| n.clone())
            .unwrap_or_default();
        if self.names.len() > MAX_IMPORTS {
            return Err(self.fail(format!("more than {MAX_IMPORTS} imports")));
        }
        let result = (self.import)(&importer, path);
        let place = self.locate(program, from).unwrap_or(importer);
        result.map_err(|e| self.fail(format!("{place}: cannot import {path:?}: {e}")))
    }

    fn fail(&mut self, message: String) -> ImportError {
        self.error = Some(message);
        ImportError
    }
}

/// A library value's variant name as words (`UnknownVariable { … }` → "unknown
/// variable"): readable without the library's span internals.
fn variant_words(value: &impl std::fmt::Debug) -> String {
    let debug = format!("{value:?}");
    let mut words = String::new();
    for (i, c) in debug
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .enumerate()
    {
        if c.is_uppercase() && i > 0 {
            words.push(' ');
        }
        words.extend(c.to_lowercase());
    }
    words
}

fn lex_span(e: &rsjsonnet_lang::lexer::LexError) -> Option<SpanId> {
    use rsjsonnet_lang::lexer::LexError as L;
    Some(match e {
        L::InvalidChar { span, .. }
        | L::InvalidUtf8 { span, .. }
        | L::UnfinishedMultilineComment { span }
        | L::LeadingZeroInNumber { span }
        | L::MissingFracDigits { span }
        | L::MissingExpDigits { span } => *span,
        _ => return None,
    })
}

fn analyze_span(e: &AnalyzeError) -> Option<SpanId> {
    use AnalyzeError as A;
    Some(match e {
        A::UnknownVariable { span, .. }
        | A::TextBlockAsImportPath { span }
        | A::ComputedImportPath { span } => *span,
        A::SelfOutsideObject { self_span } => *self_span,
        A::SuperOutsideObject { super_span } => *super_span,
        A::DollarOutsideObject { dollar_span } => *dollar_span,
        A::RepeatedLocalName { repeated_span, .. }
        | A::RepeatedFieldName { repeated_span, .. }
        | A::RepeatedParamName { repeated_span, .. } => *repeated_span,
        A::PositionalArgAfterNamed { arg_span } => *arg_span,
    })
}

fn eval_span(kind: &EvalErrorKind) -> Option<SpanId> {
    use EvalErrorKind as K;
    match kind {
        K::InvalidIndexedType { span, .. }
        | K::InvalidSlicedType { span, .. }
        | K::SliceIndexOrStepIsNotNumber { span, .. }
        | K::StringIndexIsNotNumber { span, .. }
        | K::ArrayIndexIsNotNumber { span, .. }
        | K::NumericIndexIsNotValid { span, .. }
        | K::ObjectIndexIsNotString { span, .. }
        | K::RepeatedFieldName { span, .. }
        | K::FieldNameIsNotString { span, .. }
        | K::FieldOfNonObject { span }
        | K::SuperWithoutSuperObject { span }
        | K::ForSpecValueIsNotArray { span, .. }
        | K::CondIsNotBool { span, .. }
        | K::InvalidUnaryOpType { span, .. }
        | K::ImportFailed { span, .. } => Some(*span),
        K::CalleeIsNotFunction { span, .. }
        | K::TooManyCallArgs { span, .. }
        | K::UnknownCallParam { span, .. }
        | K::RepeatedCallParam { span, .. }
        | K::CallParamNotBound { span, .. }
        | K::NumberNotBitwiseSafe { span }
        | K::NumberOverflow { span }
        | K::NumberNan { span }
        | K::DivByZero { span }
        | K::ShiftByNegative { span } => *span,
        _ => None,
    }
}

impl<'p> Callbacks<'p> for Files<'_, 'p> {
    fn import(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> Result<Thunk<'p>, ImportError> {
        let (name, bytes) = self.read(program, from, path)?;
        if let Some(thunk) = self.loaded.get(&name) {
            return Ok(thunk.clone());
        }
        let thunk = self
            .load(program, &name, &bytes, true)
            .map_err(|e| self.fail(e))?;
        self.loaded.insert(name, thunk.clone());
        Ok(thunk)
    }

    fn import_str(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> Result<String, ImportError> {
        let (_, bytes) = self.read(program, from, path)?;
        String::from_utf8(bytes).map_err(|_| self.fail(format!("{path} is not UTF-8 text")))
    }

    fn import_bin(
        &mut self,
        program: &mut Program<'p>,
        from: SpanId,
        path: &str,
    ) -> Result<Vec<u8>, ImportError> {
        self.read(program, from, path).map(|(_, bytes)| bytes)
    }

    fn trace(&mut self, _: &mut Program<'p>, _: &str, _: &[EvalStackTraceItem]) {}

    fn native_call(
        &mut self,
        _: &mut Program<'p>,
        _: InternedStr<'p>,
        _: &[JsonnetValue<'p>],
    ) -> Result<JsonnetValue<'p>, JsonnetNativeError> {
        // No native functions are registered, so none can be called.
        Err(JsonnetNativeError)
    }
}

/// JSON text → values, numbers as [`FromJson::IntOrFloat`] says.
fn parse_output(text: &str) -> Result<Value, String> {
    crate::value::json::parse(text, FromJson::IntOrFloat).map_err(|e| e.to_string())
}
