#!/usr/bin/env python3
"""Extracts every facet `when` and every `${...}` body of a template into JSON Lines in
the expression-conformance format, for `cargo run --release --example expr_bench`.

usage: extract-expressions.py TEMPLATE_DIR TEST_FILE CASE_NAME OUT_DIR

The scope (`envs.json`, env "corpus") is the `values` of one test case, so the
expressions run against realistic data.
"""
import json
import os
import sys

import yaml


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


def walk(node, key, found):
    if isinstance(node, dict):
        for k, v in node.items():
            walk(v, k, found)
    elif isinstance(node, list):
        for v in node:
            walk(v, key, found)
    elif isinstance(node, str):
        if key == "when" and "${" not in node:
            found.append(node)
        else:
            found.extend(bodies(node))


def expand_dotted(values):
    out = {}
    for k, v in values.items():
        cur = out
        parts = k.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = v
    return out


def main():
    template, test_file, case_name, out_dir = sys.argv[1:5]
    found = []
    facets = os.path.join(template, "facets")
    for root, _, files in sorted(os.walk(facets)):
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(root, name)) as f:
                    for doc in yaml.safe_load_all(f):
                        walk(doc, None, found)
    with open(test_file) as f:
        cases = yaml.safe_load(f)["cases"]
    case = next(c for c in cases if c["name"] == case_name)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "envs.json"), "w") as f:
        json.dump({"corpus": expand_dotted(case.get("values", {}))}, f, indent=1)
    with open(os.path.join(out_dir, "corpus-expressions.jsonl"), "w") as f:
        for n, expr in enumerate(found, 1):
            f.write(json.dumps({"id": f"corpus/{n}", "mode": "expr", "input": expr, "env": "corpus"}) + "\n")
    print(f"{len(found)} expressions")


main()
