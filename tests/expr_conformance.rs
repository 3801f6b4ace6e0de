//! Runs the expression conformance suite (tests/conformance/expr/README.md).
//! `BPC_EXPR_CASES` may point at another copy of the case directory.

use bpc::expr::host::{Host, TerraformOutputs};
use bpc::expr::{Engine, EngineConfig, ErrorKind, Map, Value};
use bpc::value::json::{from_json, FromJson};
use bpc::value::Equality;
use serde_json::Value as Json;
use std::path::PathBuf;

fn case_dir() -> PathBuf {
    match std::env::var_os("BPC_EXPR_CASES") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/expr"),
    }
}

/// Decodes the suite's value encoding (README, "Value encoding").
fn decode(j: &Json) -> Value {
    from_json(j, FromJson::Tagged)
}

struct TestHost {
    terraform: TerraformOutputs,
}

impl Host for TestHost {
    fn read_file(&self, path: &str) -> Result<(String, Vec<u8>), String> {
        Err(format!("file not found: {path}"))
    }
    fn read_relative(&self, _from: &str, path: &str) -> Result<(String, Vec<u8>), String> {
        self.read_file(path)
    }
    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }
    fn terraform_outputs(&self) -> &TerraformOutputs {
        &self.terraform
    }
}

fn host_for(options: Option<&Json>) -> (bool, TestHost) {
    let Some(opts) = options else {
        return (
            false,
            TestHost {
                terraform: TerraformOutputs::Unregistered,
            },
        );
    };
    let outputs = opts.get("terraform_outputs").map(decode);
    let provider = opts.get("terraform_mode").and_then(Json::as_str) == Some("provider");
    let deferred_ok = opts
        .get("evaluate_deferred")
        .and_then(Json::as_bool)
        .unwrap_or(true);
    let terraform = match (provider, outputs) {
        (true, _) if !deferred_ok => TerraformOutputs::Deferred,
        (true, out) => TerraformOutputs::Provider(out.unwrap_or(Value::Nil)),
        (false, Some(out)) => TerraformOutputs::Mocked(out, Default::default()),
        (false, None) => TerraformOutputs::Unregistered,
    };
    let registered = !matches!(terraform, TerraformOutputs::Unregistered);
    (registered, TestHost { terraform })
}

fn show(r: &Result<Value, bpc::expr::ExprError>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => format!("err {:?}: {}", e.kind, e.message),
    }
}

/// Cases where bpc gives a different answer than Go on purpose, with the reason
/// (docs/conformance.md).
const DELIBERATE_DEVIATIONS: &[(&str, &str)] = &[(
    "builtins_collection/13",
    "Go's fromPairs builds a map[any]any, which never deep-equals the map[string]any it \
     came from; bpc has one map type, so a round trip compares equal",
)];

#[test]
fn expr_conformance() {
    let dir = case_dir();
    let envs_text = std::fs::read_to_string(dir.join("envs.json")).expect("envs.json");
    let envs: Json = serde_json::from_str(&envs_text).expect("envs.json is JSON");
    let cases_text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl");
    let plain = Engine::new(EngineConfig {
        terraform_output: false,
        interpolation: bpc::expr::template::Dialect::Windsor,
    });
    let with_terraform = Engine::new(EngineConfig {
        terraform_output: true,
        interpolation: bpc::expr::template::Dialect::Windsor,
    });

    let mut passed = 0;
    let mut failures = Vec::new();
    let mut deviations: Vec<String> = Vec::new();
    for line in cases_text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Json = serde_json::from_str(line).expect("case is JSON");
        let id = case["id"].as_str().unwrap_or("?");
        let input = case["input"].as_str().unwrap_or("");
        let env = match decode(&envs[case["env"].as_str().unwrap_or("")]) {
            Value::Map(m) => (*m).clone(),
            _ => Map::default(),
        };
        let (registered, host) = host_for(case.get("options"));
        let engine = if registered { &with_terraform } else { &plain };
        let got = if case["mode"] == "tmpl" {
            engine.render_template(input, &env, &host)
        } else {
            engine.eval(input, &env, &host)
        };
        let expect = &case["expect"];
        let ok = match (
            expect.get("ok"),
            expect.get("err").and_then(Json::as_str),
            &got,
        ) {
            (Some(want), _, Ok(v)) => decode(want).equals(v, Equality::SAME_RESULT),
            (None, Some(kind), Err(e)) => {
                let have = match e.kind {
                    ErrorKind::Compile => "compile",
                    ErrorKind::Run => "run",
                    ErrorKind::Deferred => "deferred",
                };
                have == kind
            }
            _ => false,
        };
        if ok {
            passed += 1;
        } else if DELIBERATE_DEVIATIONS.iter().any(|(d, _)| *d == id) {
            deviations.push(id.to_string());
        } else {
            failures.push(format!(
                "{id}: {input:?}\n    expected {expect}\n    got      {}",
                show(&got)
            ));
        }
    }
    println!(
        "expr conformance: {passed} passed, {} failed, {} deliberate deviations",
        failures.len(),
        deviations.len()
    );
    let listed: Vec<&str> = DELIBERATE_DEVIATIONS.iter().map(|(d, _)| *d).collect();
    assert_eq!(
        deviations, listed,
        "a deliberate deviation now matches Go: drop it"
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
