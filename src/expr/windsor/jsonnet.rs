//! `jsonnet(path)`: evaluates a Jsonnet file read through the host and returns its
//! output as values. As in Windsor, the whole scope is `std.extVar('context')`, a
//! small helper library is `std.extVar('helpers')`, imports resolve relative to the
//! importing file (through the host, so they cannot leave its root), and the output
//! goes through JSON, so every number comes back as a float.
//!
//! The evaluator runs on its own thread with a large stack: the Jsonnet parser
//! recurses on nesting, and a panic inside the library must become an error rather
//! than take the composition down.

use super::args;
use super::json;
use crate::expr::host::Host;
use crate::expr::native::{Call, NativeError, NativeFn, Signature, Ty};
use crate::expr::value::{Map, Value};
use rsjsonnet_lang::arena::Arena;
use rsjsonnet_lang::interner::InternedStr;
use rsjsonnet_lang::program::{
    Callbacks, EvalStackTraceItem, ImportError, NativeError as JsonnetNativeError, Program, Thunk,
    Value as JsonnetValue,
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

/// Stack of the evaluation thread.
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
  // scheme://host[:port] of a URL, without path, query or trailing slash.
  baseUrl(url)::
    local parts = std.splitLimit(url, '://', 1);
    if std.length(parts) == 2 then parts[0] + '://' + std.split(parts[1], '/')[0]
    else std.split(url, '/')[0],
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
    let output = evaluate_isolated(call.host, &name, &bytes, &context)
        .map_err(|e| NativeError::run(format!("failed to evaluate jsonnet file {path}: {e}")))?;
    parse_output(&output)
        .map_err(|e| NativeError::run(format!("jsonnet file {path} must output valid JSON: {e}")))
}

/// Runs [`evaluate`] on a thread of its own (see the module comment).
fn evaluate_isolated(
    host: &dyn Host,
    name: &str,
    source: &[u8],
    context: &str,
) -> Result<String, String> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("jsonnet".into())
            .stack_size(THREAD_STACK)
            .spawn_scoped(scope, || evaluate(host, name, source, context))
            .map_err(|e| format!("cannot start the jsonnet evaluator: {e}"))?;
        worker
            .join()
            .unwrap_or_else(|_| Err("the jsonnet evaluator failed internally".to_string()))
    })
}

/// Evaluates the file and manifests its value as JSON text.
fn evaluate(host: &dyn Host, name: &str, source: &[u8], context: &str) -> Result<String, String> {
    let arena = Arena::new();
    let mut program = Program::new(&arena);
    program.set_max_stack(MAX_CALL_DEPTH);
    let mut files = Files {
        host,
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
            .unwrap_or_else(|| format!("{:?}", e.kind))
    })?;
    let text = program
        .manifest_json(&value, false)
        .map_err(|e| format!("{:?}", e.kind))?;
    if text.len() > MAX_OUTPUT {
        return Err(format!("output is longer than {MAX_OUTPUT} bytes"));
    }
    Ok(text)
}

/// The files of one evaluation: which source context is which file (so imports
/// resolve relative to their importer) and each file's thunk (Jsonnet evaluates a
/// file once however often it is imported).
struct Files<'h, 'p> {
    host: &'h dyn Host,
    names: HashMap<SpanContextId, String>,
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
        self.names.insert(context, name.to_string());
        program
            .load_source(context, source, with_stdlib, name)
            .map_err(|e| format!("{name}: {e:?}"))
    }

    /// Reads `path` relative to the file that holds the span `from`.
    fn read(
        &mut self,
        program: &Program<'p>,
        from: SpanId,
        path: &str,
    ) -> Result<(String, Vec<u8>), ImportError> {
        let (context, _, _) = program.span_manager().get_span(from);
        let importer = self.names.get(&context).cloned().unwrap_or_default();
        if self.names.len() > MAX_IMPORTS {
            return Err(self.fail(format!("more than {MAX_IMPORTS} imports")));
        }
        self.host
            .read_relative(&importer, path)
            .map_err(|e| self.fail(format!("cannot import {path:?} from {importer}: {e}")))
    }

    fn fail(&mut self, message: String) -> ImportError {
        self.error = Some(message);
        ImportError
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

/// JSON text → values the way Go's `json.Unmarshal` into `any` makes them: every
/// number a float.
fn parse_output(text: &str) -> Result<Value, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(from_json(json))
}

fn from_json(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::from(s),
        serde_json::Value::Array(items) => Value::list(items.into_iter().map(from_json).collect()),
        serde_json::Value::Object(fields) => {
            let mut map = Map::with_capacity_and_hasher(fields.len(), Default::default());
            for (k, v) in fields {
                map.insert(k.into(), from_json(v));
            }
            Value::map(map)
        }
    }
}
