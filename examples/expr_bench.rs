//! Times the expression engine on a file of cases in the conformance format.
//!
//! `cargo run --release --example expr_bench -- FILE [ENVS]` where FILE is JSON Lines
//! (`{"id", "mode": "expr"|"tmpl", "input", "env", "options"}`) and ENVS the
//! environments (default: `envs.json` beside FILE). Prints a TSV line per case (`id`,
//! compile ns, run ns) and last `expr bench: N cases, compile median X ns, run median
//! Y ns`. `options` are read as the conformance README describes them.
//!
//! `expr_bench --expect FILE [ENVS]` times nothing: it prints every case again with an
//! `expect` field holding bpc's result, for files whose expectations bpc writes and Go
//! checks (`bench/gen-template-expressions.py`).
//!
//! `expr_bench --profile N FILE [ENVS]` times nothing either: it runs every compiled
//! case N times, for `valgrind --tool=callgrind` (instruction counts of the run path).

use bpc::expr::host::{NullHost, TerraformOutputs};
use bpc::expr::{Engine, EngineConfig, ErrorKind, Map, Value};
use bpc::value::json::{from_json, to_json, FromJson, ToJson};
use serde_json::Value as Json;
use std::hint::black_box;
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Mean time per call of `f`, in ns, over enough iterations to take ~`budget_ms`.
fn time_per_call(budget_ms: u64, mut f: impl FnMut()) -> f64 {
    let mut iterations = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..iterations {
            f();
        }
        let elapsed = start.elapsed();
        if elapsed.as_millis() as u64 >= budget_ms || iterations >= 1 << 24 {
            return elapsed.as_nanos() as f64 / iterations as f64;
        }
        iterations *= 4;
    }
}

fn fail(message: String) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// The host a case's `options` ask for (conformance README, Options).
fn host_for(options: Option<&Json>) -> NullHost {
    let Some(opts) = options else {
        return NullHost::default();
    };
    let outputs = opts
        .get("terraform_outputs")
        .map(|j| from_json(j, FromJson::Tagged));
    let provider = opts.get("terraform_mode").and_then(Json::as_str) == Some("provider");
    let evaluate_deferred = opts
        .get("evaluate_deferred")
        .and_then(Json::as_bool)
        .unwrap_or(true);
    let terraform = match (provider, outputs) {
        (true, _) if !evaluate_deferred => TerraformOutputs::Deferred,
        (true, out) => TerraformOutputs::Provider(out.unwrap_or(Value::Nil)),
        (false, Some(out)) => TerraformOutputs::Mocked(out, Default::default()),
        (false, None) => TerraformOutputs::Unregistered,
    };
    NullHost { terraform }
}

fn engine(registered: bool) -> Engine {
    Engine::new(EngineConfig {
        terraform_output: registered,
        interpolation: bpc::expr::template::Dialect::Windsor,
    })
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let expect_mode = args.first().map(String::as_str) == Some("--expect");
    if expect_mode {
        args.remove(0);
    }
    let mut profile_runs = None;
    if args.first().map(String::as_str) == Some("--profile") {
        args.remove(0);
        let n = args.first().and_then(|n| n.parse::<u32>().ok());
        profile_runs = Some(n.unwrap_or_else(|| fail("--profile takes a number".into())));
        args.remove(0);
    }
    let Some(file) = args.first().cloned() else {
        eprintln!("usage: expr_bench [--expect] FILE.jsonl [ENVS.json]");
        std::process::exit(2);
    };
    let path = std::path::Path::new(&file);
    let envs_path = match args.get(1) {
        Some(p) => std::path::PathBuf::from(p),
        None => path.with_file_name("envs.json"),
    };
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", p.display())))
    };
    let envs: Json = serde_json::from_str(&read(&envs_path))
        .unwrap_or_else(|e| fail(format!("{}: {e}", envs_path.display())));
    let (mut compiles, mut runs) = (Vec::new(), Vec::new());
    let mut count = 0usize;
    for (n, line) in read(path).lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut case: Json =
            serde_json::from_str(line).unwrap_or_else(|e| fail(format!("{file}:{}: {e}", n + 1)));
        let id = case["id"].as_str().unwrap_or("?").to_string();
        let input = case["input"].as_str().unwrap_or_default().to_string();
        let tmpl = case["mode"].as_str() == Some("tmpl");
        let env_name = case["env"].as_str().unwrap_or_default();
        let scope: Map = match from_json(&envs[env_name], FromJson::Tagged) {
            Value::Map(m) => (*m).clone(),
            _ => Map::default(),
        };
        let host = host_for(case.get("options"));
        let registered = !matches!(host.terraform, TerraformOutputs::Unregistered);
        let engine = engine(registered);

        if expect_mode {
            let result = if tmpl {
                engine.render_template(&input, &scope, &host)
            } else {
                engine.eval(&input, &scope, &host)
            };
            case["expect"] = match result {
                Ok(v) => serde_json::json!({ "ok": to_json(&v, ToJson::Tagged) }),
                Err(e) => serde_json::json!({ "err": match e.kind {
                    ErrorKind::Compile => "compile",
                    ErrorKind::Run => "run",
                    ErrorKind::Deferred => "deferred",
                }}),
            };
            println!("{case}");
            continue;
        }

        if let Some(n) = profile_runs {
            if let (false, Ok(program)) = (tmpl, engine.compile(&input)) {
                for _ in 0..n {
                    let _ = black_box(engine.run(&program, &scope, &host));
                }
            }
            continue;
        }

        let compile_ns = if tmpl {
            0.0
        } else {
            time_per_call(20, || {
                // A fresh engine each time: the compile cache must not hide the cost.
                let engine = self::engine(registered);
                let _ = black_box(engine.compile(black_box(&input)));
            })
        };
        let run_ns = if tmpl {
            time_per_call(20, || {
                let _ = black_box(engine.render_template(&input, &scope, &host));
            })
        } else {
            match engine.compile(&input) {
                Ok(program) => time_per_call(20, || {
                    let _ = black_box(engine.run(&program, &scope, &host));
                }),
                Err(_) => f64::NAN,
            }
        };
        println!("{id}\t{compile_ns:.0}\t{run_ns:.0}");
        count += 1;
        if !tmpl {
            compiles.push(compile_ns);
        }
        if run_ns.is_finite() {
            runs.push(run_ns);
        }
    }
    if !expect_mode && profile_runs.is_none() {
        println!(
            "expr bench: {count} cases, compile median {:.0} ns, run median {:.0} ns",
            median(compiles),
            median(runs)
        );
    }
}
