//! Times the expression engine on a file of cases in the conformance format.
//!
//! `cargo run --release --example expr_bench -- FILE` where FILE is JSON Lines
//! (`{"id", "mode": "expr"|"tmpl", "input", "env"}`) with `envs.json` beside it. Prints a
//! TSV line per case (`id`, compile ns, run ns) and last
//! `expr bench: compile median X ns, run median Y ns`.

use bpc::expr::case_codec::decode;
use bpc::expr::host::{NullHost, TerraformOutputs};
use bpc::expr::{Engine, EngineConfig, Map, Value};
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

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: expr_bench FILE.jsonl (with envs.json beside it)");
        std::process::exit(2);
    };
    let path = std::path::Path::new(&file);
    let envs_path = path.with_file_name("envs.json");
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).unwrap_or_else(|e| {
            eprintln!("cannot read {}: {e}", p.display());
            std::process::exit(1)
        })
    };
    let envs: serde_json::Value = serde_json::from_str(&read(&envs_path)).unwrap_or_else(|e| {
        eprintln!("{}: {e}", envs_path.display());
        std::process::exit(1)
    });
    let host = NullHost {
        terraform: TerraformOutputs::Deferred,
    };
    let (mut compiles, mut runs) = (Vec::new(), Vec::new());
    for (n, line) in read(path).lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: serde_json::Value = match serde_json::from_str(line) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{file}:{}: {e}", n + 1);
                std::process::exit(1);
            }
        };
        let id = case["id"].as_str().unwrap_or("?").to_string();
        let input = case["input"].as_str().unwrap_or_default().to_string();
        let tmpl = case["mode"].as_str() == Some("tmpl");
        let env_name = case["env"].as_str().unwrap_or_default();
        let scope: Map = match decode(&envs[env_name]) {
            Value::Map(m) => (*m).clone(),
            _ => Map::new(),
        };
        let registered = case.get("options").is_some();
        let compile_ns = if tmpl {
            0.0
        } else {
            time_per_call(20, || {
                // A fresh engine each time: the compile cache must not hide the cost.
                let engine = Engine::new(EngineConfig {
                    terraform_output: registered,
                    interpolation: bpc::expr::template::Dialect::Windsor,
                });
                let _ = black_box(engine.compile(black_box(&input)));
            })
        };
        let engine = Engine::new(EngineConfig {
            terraform_output: true,
            interpolation: bpc::expr::template::Dialect::Windsor,
        });
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
        if !tmpl {
            compiles.push(compile_ns);
        }
        if run_ns.is_finite() {
            runs.push(run_ns);
        }
    }
    println!(
        "expr bench: compile median {:.0} ns, run median {:.0} ns",
        median(compiles),
        median(runs)
    );
}
