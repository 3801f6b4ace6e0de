#!/usr/bin/env python3
"""Builds the real-template expression benchmark: every facet `when` and every `${...}`
body of the public windsor-core templates, each evaluated against several scopes taken
from the template's own test cases. The output is in the expression-conformance format
(`id`, `mode`, `input`, `env`, `options`, `expect`), so both `examples/expr_bench.rs`
and Go's `go-expr-bench` read it.

usage: bench/gen-template-expressions.py [CORPUS_DIR ...]
       (default: ../shared/conformance/windsor-core-eaa2bcea and
        ../shared/conformance/windsor-core-75d2a6c1; run from the project root)

Writes benches/templates/cases.jsonl and benches/templates/envs.json.

A scope is what a facet's expressions see in a test case: the schema defaults, the
case's `values` on top (dotted keys expanded), and the literal values of the facet
file's unconditional `config` entries (so `pki_effective.issuer_component` resolves to
a map member instead of nil). The case's `terraformOutputs` become the `options` of
expressions that call `terraform_output`. Scopes come from the test file of the same
name as the facet, spread over its cases (first, middle, last...), so each expression
runs against data its authors wrote for it.

`expect` is filled in by bpc (`expr_bench --expect`); `go-expr-bench` then checks Go
gives the same results, so both engines are timed doing the same work. Cases that fail
to evaluate in bpc are dropped: a composition that errors is not the path being timed.
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

SCOPES_PER_FACET = 3
TAGS = {"float", "map", "int", "int64", "uint64", "duration", "time", "go"}


def bodies(text):
    """The bodies of the `${...}` in text (braces counted, quotes skipped)."""
    out, i = [], 0
    while True:
        start = text.find("${", i)
        if start < 0:
            return out
        depth, j, quote = 1, start + 2, None
        while j < len(text):
            c = text[j]
            if quote:
                if c == "\\":
                    j += 1
                elif c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if depth != 0:
            return out
        body = text[start + 2 : j]
        if body.strip():
            out.append(body)
        i = j + 1


def expressions(node, key, found):
    if isinstance(node, dict):
        for k, v in node.items():
            expressions(v, k, found)
    elif isinstance(node, list):
        for v in node:
            expressions(v, key, found)
    elif isinstance(node, str):
        if key == "when" and "${" not in node:
            found.append(node)
        else:
            found.extend(bodies(node))


def literal(node):
    """node without the leaves that hold `${...}` (None when nothing is left)."""
    if isinstance(node, dict):
        out = {k: literal(v) for k, v in node.items()}
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(node, list):
        return [v for v in (literal(x) for x in node) if v is not None]
    if isinstance(node, str) and "${" in node:
        return None
    return node


def config_literals(docs):
    out = {}
    for doc in docs:
        for entry in (doc or {}).get("config") or []:
            if isinstance(entry, dict) and "name" in entry and "when" not in entry:
                value = literal(entry.get("value"))
                if value is not None:
                    out.setdefault(entry["name"], value)
    return out


def schema_defaults(schema):
    if not isinstance(schema, dict):
        return None
    if "default" in schema:
        return schema["default"]
    out = {}
    for name, sub in (schema.get("properties") or {}).items():
        d = schema_defaults(sub)
        if d is not None and d != {}:
            out[name] = d
    return out


def merge(base, top):
    if isinstance(base, dict) and isinstance(top, dict):
        out = dict(base)
        for k, v in top.items():
            out[k] = merge(out[k], v) if k in out else v
        return out
    return top


def expand_dotted(values):
    out = {}
    for k, v in (values or {}).items():
        cur = out
        parts = str(k).split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = v
    return out


def encode(v):
    """The conformance value encoding: floats tagged, tag-like maps wrapped."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return {"float": v}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        m = {str(k): encode(x) for k, x in v.items()}
        return {"map": m} if len(m) == 1 and next(iter(m)) in TAGS else m
    return str(v)  # dates and other YAML scalars reach Windsor as text


def spread(items, n):
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def corpus_cases(corpus, envs, seen):
    name = os.path.basename(corpus.rstrip("/")).removeprefix("windsor-core-")
    template = os.path.join(corpus, "contexts", "_template")
    schema_path = os.path.join(template, "schema.yaml")
    defaults = schema_defaults(load_all(schema_path)[0]) if os.path.exists(schema_path) else {}
    facets_dir = os.path.join(template, "facets")
    tests_dir = os.path.join(template, "tests")
    base_tests = sorted(f for f in os.listdir(tests_dir) if f.endswith(".test.yaml"))
    cases = []
    for facet_file in sorted(os.listdir(facets_dir)):
        if not facet_file.endswith((".yaml", ".yml")):
            continue
        docs = load_all(os.path.join(facets_dir, facet_file))
        found = []
        for doc in docs:
            expressions(doc, None, found)
        # Each expression text once over all corpora, with the scopes of the first
        # facet that writes it.
        unique = [e for e in dict.fromkeys(found) if e not in seen]
        seen.update(unique)
        if not unique:
            continue
        stem = facet_file.rsplit(".", 1)[0]
        test_file = f"{stem}.test.yaml"
        if test_file not in base_tests:
            # Facets without their own tests (config-talos) borrow the base platform's.
            test_file = next(t for t in base_tests if "base" in t)
        test_cases = load_all(os.path.join(tests_dir, test_file))[0]["cases"]
        config = config_literals(docs)
        for n, case in enumerate(spread(test_cases, SCOPES_PER_FACET)):
            env_id = f"{name}/{stem}/{n + 1}"
            scope = merge(merge(defaults, config), expand_dotted(case.get("values")))
            envs[env_id] = encode(scope)
            outputs = encode(case.get("terraformOutputs") or {})
            for i, expr in enumerate(unique, 1):
                c = {"id": f"{env_id}/{i}", "mode": "expr", "input": expr, "env": env_id}
                if "terraform_output" in expr:
                    c["options"] = {"terraform_outputs": outputs}
                cases.append(c)
    return cases


def main():
    corpora = sys.argv[1:] or [
        "../shared/conformance/windsor-core-eaa2bcea",
        "../shared/conformance/windsor-core-75d2a6c1",
    ]
    out_dir = os.path.join("benches", "templates")
    os.makedirs(out_dir, exist_ok=True)
    envs, cases, seen = {}, [], set()
    for corpus in corpora:
        cases.extend(corpus_cases(corpus, envs, seen))
    envs_path = os.path.join(out_dir, "envs.json")
    with open(envs_path, "w") as f:
        json.dump(envs, f, indent=1, sort_keys=True)
        f.write("\n")
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tmp:
        for c in cases:
            tmp.write(json.dumps(c) + "\n")
    filled = subprocess.run(
        ["cargo", "run", "--quiet", "--release", "--example", "expr_bench", "--",
         "--expect", tmp.name, envs_path],
        check=True, capture_output=True, text=True,
    ).stdout
    os.unlink(tmp.name)
    kept = dropped = 0
    with open(os.path.join(out_dir, "cases.jsonl"), "w") as f:
        for line in filled.splitlines():
            case = json.loads(line)
            if "ok" not in case["expect"]:
                dropped += 1
                continue
            kept += 1
            f.write(json.dumps(case) + "\n")
    distinct = len({c["input"] for c in cases})
    print(f"{distinct} distinct expressions, {len(envs)} scopes, "
          f"{kept} cases ({dropped} dropped: evaluation fails in these scopes)")


main()
