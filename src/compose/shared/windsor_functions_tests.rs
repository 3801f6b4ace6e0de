//! The Windsor functions through the engine, with files, environment and Terraform
//! outputs from compose's real host ([`crate::compose::shared::host::TemplateHost`]): what the
//! conformance suite cannot cover (it has no files and no environment). They live
//! here, not in `expr`, because the engine does not know the host above it.

use crate::compose::{model::inputs::Environment, shared::host::TemplateHost};
use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, EngineConfig, ErrorKind, Map, Value};
use crate::files::FileTree;
use std::collections::BTreeMap;

struct Fixture {
    _dir: tempfile::TempDir,
    tree: FileTree,
}

/// A template root `tpl/` with a facet directory, plus a secret next to the root.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("tpl");
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("configs/ca.pem", "-----CERT-----\n");
    write("facets/list.yaml", "- a: 1\n  b: two\n");
    write("facets/tpl.yaml", "name: ${input.n}-${suffix}\n");
    write(
        "facets/main.jsonnet",
        "local lib = import '../lib/lib.libsonnet';\n\
         local ctx = std.extVar('context');\n\
         local h = std.extVar('helpers');\n\
         { n: ctx.n + lib.one, name: h.getString(ctx, 'obj.name', 'none'),\n\
           missing: h.get(ctx, 'obj.nope', 'dflt'), list: [1, 2.5] }\n",
    );
    write("lib/lib.libsonnet", "{ one: 1 }\n");
    write("facets/escape.jsonnet", "import '../../secret.libsonnet'\n");
    write("facets/broken.jsonnet", "{ a: error 'boom' }\n");
    write("facets/func.jsonnet", "function(x) x\n");
    std::fs::write(dir.path().join("secret.libsonnet"), "{ leaked: true }").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "leaked").expect("write");
    let tree = FileTree::open(&root).expect("open");
    Fixture { _dir: dir, tree }
}

fn scope() -> Map {
    let mut obj = Map::default();
    obj.insert("name".into(), Value::from("svc"));
    let mut m = Map::default();
    m.insert("n".into(), Value::Int(41));
    m.insert("suffix".into(), Value::from("x"));
    m.insert("obj".into(), Value::map(obj));
    m
}

fn eval(fx: &Fixture, env: &Environment, source: &str) -> Result<Value, (ErrorKind, String)> {
    let terraform = TerraformOutputs::Unregistered;
    let host = TemplateHost {
        tree: &fx.tree,
        file: "facets/provider.yaml",
        environment: env,
        terraform: &terraform,
        jsonnet: Default::default(),
        work: None,
    };
    let engine = Engine::new(EngineConfig::default());
    engine
        .eval(source, &scope(), &host)
        .map_err(|e| (e.kind, e.message))
}

fn no_env() -> Environment {
    Environment::Fixed(BTreeMap::new())
}

fn text(v: Result<Value, (ErrorKind, String)>) -> String {
    match v {
        Ok(Value::Str(s)) => s.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn file_reads_relative_to_the_facet() {
    let fx = fixture();
    assert_eq!(
        text(eval(&fx, &no_env(), "file('../configs/ca.pem')")),
        "-----CERT-----\n"
    );
}

#[test]
fn file_refuses_paths_leaving_the_root() {
    let fx = fixture();
    for path in [
        "../../secret.txt",
        "/etc/passwd",
        "../configs/../../secret.txt",
    ] {
        let got = eval(&fx, &no_env(), &format!("file('{path}')"));
        assert!(
            matches!(&got, Err((ErrorKind::Run, m)) if m.starts_with("failed to read file")),
            "{path}: {got:?}"
        );
    }
}

#[test]
fn yaml_reads_files_and_unwraps_a_single_map() {
    let fx = fixture();
    let got = eval(&fx, &no_env(), "yaml('list.yaml').b").map_err(|e| e.1);
    assert_eq!(
        got.ok().and_then(|v| v.as_str().map(String::from)),
        Some("two".into())
    );
    let got = eval(&fx, &no_env(), "type(yaml('list.yaml').a)").map_err(|e| e.1);
    assert_eq!(
        got.ok().and_then(|v| v.as_str().map(String::from)),
        Some("uint".into())
    );
}

#[test]
fn jsonnet_sees_the_scope_helpers_and_imports() {
    let fx = fixture();
    let got = eval(&fx, &no_env(), "jsonnet('main.jsonnet')").map_err(|e| e.1);
    let Ok(Value::Map(m)) = got else {
        panic!("{got:?}");
    };
    // Through JSON, integral numbers come back as integers, others as floats.
    assert!(matches!(m.get("n"), Some(Value::Int(42))));
    assert_eq!(m.get("name").and_then(Value::as_str), Some("svc"));
    assert_eq!(m.get("missing").and_then(Value::as_str), Some("dflt"));
    assert!(matches!(
        m.get("list").and_then(Value::as_list),
        Some([Value::Int(1), Value::Float(b)]) if *b == 2.5
    ));
}

#[test]
fn jsonnet_failures_are_run_errors() {
    let fx = fixture();
    for (file, fragment) in [
        ("escape.jsonnet", "cannot import"),
        ("broken.jsonnet", "failed to evaluate jsonnet file"),
        ("func.jsonnet", "failed to evaluate jsonnet file"),
        ("absent.jsonnet", "failed to read jsonnet file"),
    ] {
        let got = eval(&fx, &no_env(), &format!("jsonnet('{file}')"));
        assert!(
            matches!(&got, Err((ErrorKind::Run, m)) if m.contains(fragment)),
            "{file}: {got:?}"
        );
    }
}

#[test]
fn env_reads_only_the_hosts_environment() {
    let fx = fixture();
    let mut vars = BTreeMap::new();
    vars.insert("TOKEN".to_string(), "s3cret".to_string());
    let env = Environment::Fixed(vars);
    assert_eq!(text(eval(&fx, &env, "env('TOKEN')")), "s3cret");
    assert!(matches!(eval(&fx, &env, "env('PATH')"), Ok(Value::Nil)));
    assert_eq!(
        text(eval(&fx, &env, "env('NOPE') ?? 'fallback'")),
        "fallback"
    );
    assert!(matches!(
        eval(&fx, &env, "env(1)"),
        Err((ErrorKind::Compile, _))
    ));
    assert!(matches!(
        eval(&fx, &env, "env(obj)"),
        Err((ErrorKind::Run, _))
    ));
}

#[test]
fn json_string_is_compact_and_sorted() {
    let fx = fixture();
    assert_eq!(
        text(eval(
            &fx,
            &no_env(),
            "jsonString({b: [1, 2.5, nil], a: 'x<y'})"
        )),
        r#"{"a":"x\u003cy","b":[1,2.5,null]}"#
    );
}

#[test]
fn yaml_string_overloads_are_checked() {
    let fx = fixture();
    assert!(matches!(
        eval(&fx, &no_env(), "yamlString(1, {})"),
        Err((ErrorKind::Compile, _))
    ));
    assert!(matches!(
        eval(&fx, &no_env(), "yamlString('a', {}, 1)"),
        Err((ErrorKind::Compile, _))
    ));
    assert_eq!(text(eval(&fx, &no_env(), "yamlString(1)")), "1\n");
}
