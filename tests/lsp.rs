//! `bpc lsp` at the protocol level: the binary spawned, JSON-RPC over its pipes, on a
//! copy of the public windsor-core corpus (tests/conformance/windsor-core-eaa2bcea,
//! MPL-2.0) with values for the `local` context and a misspelling seeded in the
//! editor's copy of a facet.

mod client;

use crate::common::copy_dir;
use client::{uri, Client};
use indoc::indoc;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_bpc");
const FACET: &str = "contexts/_template/facets/platform-docker.yaml";
const VALUES: &str = "platform: docker
workstation:
  runtime: colima
dns:
  domain: test.local
gateway:
  enabled: false
network:
  cidr_block: 10.5.0.0/16
cluster:
  driver: talos
  controlplanes:
    nodes:
      controlplane-1:
        endpoint: 10.5.0.10:50000
        node: 10.5.0.10
        hostname: controlplane-1
";

/// A copy of the corpus in a temporary directory, with `contexts/local/values.yaml`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/windsor-core-eaa2bcea");
    copy_dir(&corpus, dir.path());
    let local = dir.path().join("contexts/local");
    std::fs::create_dir_all(&local).expect("mkdir");
    std::fs::write(local.join("values.yaml"), VALUES).expect("values");
    let root = dir.path().canonicalize().expect("canonical");
    (dir, root)
}

/// Zero-based (line, UTF-16 column) of the first `needle` in `text` (ASCII lines).
fn position_of(text: &str, needle: &str) -> (u64, u64) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in text"));
    let line = text[..at].matches('\n').count();
    let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line as u64, column as u64)
}

/// A server on `root`, initialized with `settings` besides a short debounce.
fn started(root: &Path, settings: serde_json::Value) -> Client {
    let mut bpc = json!({"debounceMs": 10});
    if let (Some(all), Some(more)) = (bpc.as_object_mut(), settings.as_object()) {
        all.extend(more.clone());
    }
    let mut client = Client::start(BIN, root);
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri(root),
            "capabilities": {},
            "initializationOptions": {"bpc": bpc},
        }),
    );
    client.notify("initialized", json!({}));
    client
}

fn start(root: &Path) -> Client {
    let mut client = Client::start(BIN, root);
    let result = client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri(root),
            "capabilities": {},
            "initializationOptions": {"bpc": {"debounceMs": 10}},
        }),
    );
    let caps = &result["capabilities"];
    for cap in [
        "hoverProvider",
        "definitionProvider",
        "completionProvider",
        "documentSymbolProvider",
        "workspaceSymbolProvider",
    ] {
        assert!(!caps[cap].is_null(), "{cap} missing: {caps}");
    }
    client.notify("initialized", json!({}));
    client
}

fn diagnostics_of(client: &mut Client, file: &str, version: i64) -> Vec<Value> {
    let params = client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == file && p["version"] == version
    });
    params["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn with_code<'d>(diagnostics: &'d [Value], code: &str) -> Vec<&'d Value> {
    diagnostics.iter().filter(|d| d["code"] == code).collect()
}

fn hover_text(client: &mut Client, file: &str, (line, character): (u64, u64)) -> String {
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": file}, "position": {"line": line, "character": character}}),
    );
    hover["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn diagnostics_hover_definition_completion_over_the_protocol() {
    let (_dir, root) = project();
    let path = root.join(FACET);
    let file = uri(&path);
    let on_disk = std::fs::read_to_string(&path).expect("facet");
    let seeded = on_disk.replacen("${cluster.endpoint ??", "${cluster.endpiont ??", 1);
    assert_ne!(seeded, on_disk);
    let mut client = start(&root);

    // The editor's unsaved text counts: the misspelling is reported at its range.
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "yaml", "version": 1, "text": seeded}}),
    );
    let diagnostics = diagnostics_of(&mut client, &file, 1);
    let unknown = with_code(&diagnostics, "unknown-reference");
    assert_eq!(unknown.len(), 1, "{diagnostics:#?}");
    let (line, column) = position_of(&seeded, "cluster.endpiont");
    assert_eq!(
        unknown[0]["range"],
        json!({"start": {"line": line, "character": column},
               "end": {"line": line, "character": column + "cluster.endpiont".len() as u64}})
    );
    let message = unknown[0]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        "`cluster.endpiont` reads `endpiont`, which `cluster` does not have [unknown-reference]\ndid you mean `cluster.endpoint`?"
    );
    assert_eq!(unknown[0]["severity"], 2);

    // Fix it with a ranged edit: the finding goes away.
    let end = column + "cluster.endpiont".len() as u64;
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": file, "version": 2},
               "contentChanges": [{"range": {"start": {"line": line, "character": end - 6},
                                             "end": {"line": line, "character": end}},
                                   "text": "dpoint"}]}),
    );
    let diagnostics = diagnostics_of(&mut client, &file, 2);
    assert!(
        with_code(&diagnostics, "unknown-reference").is_empty(),
        "{diagnostics:#?}"
    );

    // Hover on a config reference: its value in context `local` and its origin.
    let at = position_of(&on_disk, "network.cidr_block, 10");
    let text = hover_text(&mut client, &file, (at.0, at.1 + 9));
    assert_eq!(
        text,
        "**`network.cidr_block`** : `string`\n\nin context `local`:\n```yaml\n\"10.5.0.0/16\"\n```\n\n```text\nnetwork.cidr_block = \"10.5.0.0/16\"\n\nconfig block `network`, in order applied:\n  1. facet `platform-base` (contexts/_template/facets/platform-base.yaml:185:11, source `template`), ordinal 199, merge\n     10.5.0.0/16\n     → excluded: when `(network.cidr_block ?? '') == ''` is false\n  2. facet `platform-base` (contexts/_template/facets/platform-base.yaml:189:11, source `template`), ordinal 199, merge\n  3. facet `platform-base` (contexts/_template/facets/platform-base.yaml:194:11, source `template`), ordinal 199, merge\n\ncontext value: \"10.5.0.0/16\"\n  - contexts/local/values.yaml sets \"10.5.0.0/16\"\n  (facet config wins over context values, S4)\n```\n\nschema: Cluster network CIDR. Windsor either creates this network (cloud VPCs, incus bridges, docker bridges, hyperv NodePort NetNat) or attaches to an existing one at this address (metal, hyperv with net_adapter). Override when the default conflicts with existing routes on the host. · type: `string` · default: `\"10.5.0.0/16\"`"
    );

    // Hover on a function: signature and help.
    let at = position_of(&on_disk, "cidrhost(");
    let text = hover_text(&mut client, &file, (at.0, at.1 + 2));
    assert_eq!(
        text,
        "```\ncidrhost(string, int) → string\n```\nthe address of host number N in a CIDR prefix — Windsor function"
    );

    // Go to definition: `talos.talos_version` → the `talos` config block's key.
    let at = position_of(&on_disk, "talos.talos_version");
    let found = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": file}, "position": {"line": at.0, "character": at.1 + 8}}),
    );
    let found = found.as_array().cloned().unwrap_or_default();
    assert!(!found.is_empty(), "no definition");
    let target = &found[0];
    let target_path = target["uri"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("file://")
        .to_string();
    let target_text = std::fs::read_to_string(&target_path).expect("target file");
    let line = target["range"]["start"]["line"]
        .as_u64()
        .unwrap_or(u64::MAX) as usize;
    let line_text = target_text.lines().nth(line).unwrap_or_default();
    assert!(
        line_text.trim_start().starts_with("talos_version:"),
        "{target}: {line_text}"
    );

    // Find references of `network.cidr_block`: its reads across facets and the
    // template, several facets of them.
    let at = position_of(&on_disk, "network.cidr_block, 10");
    let refs = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": file}, "position": {"line": at.0, "character": at.1 + 9},
               "context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().cloned().unwrap_or_default();
    let here = refs.iter().any(|r| {
        r["uri"] == file && r["range"]["start"] == json!({"line": at.0, "character": at.1})
    });
    assert!(here, "the read under the cursor is missing: {refs:#?}");
    let files: std::collections::BTreeSet<&str> =
        refs.iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(files.len() > 1, "reads in one facet only: {files:?}");

    // Completion after `cluster.` lists the schema's keys below `cluster`.
    let at = position_of(&on_disk, "cluster.controlplanes.disks");
    let items = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": file}, "position": {"line": at.0, "character": at.1 + 8}}),
    );
    let labels: Vec<&str> = items.as_array().map_or(Vec::new(), |a| {
        a.iter().filter_map(|i| i["label"].as_str()).collect()
    });
    for expected in ["controlplanes", "workers", "driver"] {
        assert!(labels.contains(&expected), "{expected} not in {labels:?}");
    }
    assert!(
        !labels.contains(&"cidrhost"),
        "functions only at the root: {labels:?}"
    );

    // The outline names the facet's components.
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": file}}),
    );
    fn outline(symbols: &Value, depth: usize, out: &mut String) {
        for s in symbols.as_array().into_iter().flatten() {
            let (name, detail) = (s["name"].as_str(), s["detail"].as_str());
            let indent = "  ".repeat(depth);
            out.push_str(&format!(
                "{indent}{} — {}\n",
                name.unwrap_or("?"),
                detail.unwrap_or("?")
            ));
            outline(&s["children"], depth + 1, out);
        }
    }
    let mut tree = String::new();
    outline(&symbols, 0, &mut tree);
    assert_eq!(
        tree,
        indoc! {"
            docker — facet
              talos_common — config block
              talos_node_targets — config block
              cluster_endpoint_fallback — config block
              cluster — terraform component
              lb — flux system
        "}
    );

    assert!(client.stop().success());
}

#[test]
fn contexts_switch_and_composition_errors_name_the_context() {
    let (_dir, root) = project();
    let path = root.join(FACET);
    let file = uri(&path);
    let text = std::fs::read_to_string(&path).expect("facet");
    let mut client = start(&root);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "yaml", "version": 1, "text": text}}),
    );
    diagnostics_of(&mut client, &file, 1);
    // Context `bare` has no values: `dns.enabled` is unset and a gateway expression fails.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"bpc": {"context": "bare"}}}),
    );
    let gateway = uri(&root.join("contexts/_template/facets/option-gateway.yaml"));
    let params = client.wait_for("textDocument/publishDiagnostics", |p| p["uri"] == gateway);
    let messages: Vec<&str> = params["diagnostics"].as_array().map_or(Vec::new(), |a| {
        a.iter().filter_map(|d| d["message"].as_str()).collect()
    });
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("in context `bare`: expression failed")),
        "{messages:#?}"
    );
    let at = position_of(&text, "network.cidr_block, 10");
    let hover = hover_text(&mut client, &file, (at.0, at.1 + 9));
    assert_eq!(
        hover,
        "**`network.cidr_block`** : `string`\n\nin context `bare`:\n```yaml\n\"10.5.0.0/16\"\n```\n\nother contexts:\n- `local`: `\"10.5.0.0/16\"`\n\nwritten by:\n- config block `network` of facet `platform-base` (contexts/_template/facets/platform-base.yaml:188:7), merge, when `(network.cidr_block ?? '') == ''`\n- config block `network` of facet `platform-base` (contexts/_template/facets/platform-base.yaml:189:11), merge, when `(network.loadbalancer_ips.start ?? '') == ''`\n- config block `network` of facet `platform-base` (contexts/_template/facets/platform-base.yaml:194:11), merge, when `(network.loadbalancer_ips.end ?? '') == ''`\n- config block `network` of facet `hyperv` (contexts/_template/facets/platform-hyperv.yaml:49:11), merge, when `(network.gateway ?? '') == ''`\n- config block `network` of facet `hyperv` (contexts/_template/facets/platform-hyperv.yaml:53:11), merge, when `len(network.nameservers ?? []) == 0`\n- config block `network` of facet `hyperv` (contexts/_template/facets/platform-hyperv.yaml:87:11), merge, when `gateway.service_type == 'NodePort'`\n\nschema: Cluster network CIDR. Windsor either creates this network (cloud VPCs, incus bridges, docker bridges, hyperv NodePort NetNat) or attaches to an existing one at this address (metal, hyperv with net_adapter). Override when the default conflicts with existing routes on the host. · type: `string` · default: `\"10.5.0.0/16\"`"
    );
    assert!(client.stop().success());
}

/// A real editor: Neovim's built-in LSP client, headless, shows the seeded
/// misspelling at its range, a hover with the value and its origin, and a definition
/// on the config block.
#[test]
fn neovim_shows_the_diagnostic_hover_and_definition() {
    let found = std::process::Command::new("nvim").arg("--version").output();
    let Ok(version) = found else {
        eprintln!(
            "\n\n*** SKIPPED: neovim is not installed (apt-get install -y neovim); \
             the end-to-end editor test did not run ***\n"
        );
        return;
    };
    assert!(version.status.success());
    let (dir, root) = project();
    let out = dir.path().join("nvim-result.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/nvim.lua");
    let status = std::process::Command::new("nvim")
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("BPC_ROOT", &root)
        .env("BPC_BIN", BIN)
        .env("BPC_OUT", &out)
        .env_remove("WINDSOR_CONTEXT")
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run nvim");
    assert!(status.success());
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("nvim wrote no result"))
            .expect("result JSON");
    assert!(result["error"].is_null(), "{result:#}");
    let text = std::fs::read_to_string(root.join(FACET)).expect("facet");
    let (line, column) = position_of(&text, "cluster.endpoint ??");
    let diagnostics = result["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(diagnostics.len(), 1, "{result:#}");
    let d = &diagnostics[0];
    assert_eq!(
        (d["lnum"].as_u64(), d["col"].as_u64()),
        (Some(line), Some(column)),
        "{d}"
    );
    assert_eq!(
        (d["end_lnum"].as_u64(), d["end_col"].as_u64()),
        (Some(line), Some(column + 16)),
        "{d}"
    );
    let hover = result["hover"].as_str().unwrap_or_default();
    assert!(
        hover.contains("10.5.0.0/16") && hover.contains("contexts/local/values.yaml"),
        "{hover}"
    );
    let definition = &result["definition"];
    let target = definition["uri"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("file://");
    let target_text = std::fs::read_to_string(target).expect("definition target");
    let line = definition["line"].as_u64().unwrap_or(u64::MAX) as usize;
    let line_text = target_text.lines().nth(line).unwrap_or_default();
    assert!(
        line_text.trim_start().starts_with("talos_version:"),
        "{definition}: {line_text}"
    );
}

/// Test files: a failing expectation (in the editor's unsaved text) is a diagnostic on
/// its case; code lenses run a case and show its blueprint.
#[test]
fn failing_expectations_and_test_lenses() {
    let (_dir, root) = project();
    let path = root.join("contexts/_template/tests/platform-docker.test.yaml");
    let file = uri(&path);
    let on_disk = std::fs::read_to_string(&path).expect("test file");
    let broken = on_disk.replacen(
        "cluster_endpoint: https://10.5.0.10:6443",
        "cluster_endpoint: https://10.9.9.9:6443",
        1,
    );
    assert_ne!(broken, on_disk);
    let mut client = start(&root);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "yaml", "version": 1, "text": broken}}),
    );
    let case = "minimal config creates workstation compute cluster chain with default CSI";
    let params = client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == file && p["diagnostics"].to_string().contains("test-failure")
    });
    let failures: Vec<Value> = params["diagnostics"].as_array().map_or(Vec::new(), |a| {
        a.iter()
            .filter(|d| d["code"] == "test-failure")
            .cloned()
            .collect()
    });
    assert_eq!(failures.len(), 1, "{failures:#?}");
    let message = failures[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("test case `{case}` fails")),
        "{message}"
    );
    assert_eq!(
        message,
        "test case `minimal config creates workstation compute cluster chain with default CSI` fails\nterraform[cluster].inputs.cluster_endpoint: expected \"https://10.9.9.9:6443\", got \"https://10.5.0.10:6443\""
    );
    let (line, _) = position_of(&broken, case);
    assert_eq!(failures[0]["range"]["start"]["line"], line);

    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": file}}),
    );
    let lenses = lenses.as_array().cloned().unwrap_or_default();
    let commands: Vec<(&str, &str)> = lenses
        .iter()
        .filter(|l| l["command"]["arguments"][0] == case)
        .filter_map(|l| {
            Some((
                l["command"]["command"].as_str()?,
                l["command"]["title"].as_str()?,
            ))
        })
        .collect();
    assert_eq!(
        commands,
        [
            ("bpc.runTest", "▶ run test"),
            ("bpc.showTest", "show blueprint")
        ]
    );
    let ran = client.request(
        "workspace/executeCommand",
        json!({"command": "bpc.runTest", "arguments": [case]}),
    );
    assert_eq!(ran["passed"], false, "{ran}");
    assert!(
        ran["text"].as_str().unwrap_or_default().starts_with('✗'),
        "{ran}"
    );
    let shown = client.request(
        "workspace/executeCommand",
        json!({"command": "bpc.showTest", "arguments": [case]}),
    );
    assert_eq!(shown["passed"], true, "{shown}");
    snap!(
        "lsp_show_test_blueprint",
        shown["text"].as_str().unwrap_or_default()
    );
    assert!(client.stop().success());
}

/// The YAML around expressions: a dependsOn entry leads to its component, a facet
/// only the editor has (never saved) joins the template, completion offers component
/// keys and dependency names there, workspace symbols find it, and a schema key's
/// hover gives its description, type and default.
#[test]
fn dependencies_new_facets_completion_symbols_and_schema() {
    let (_dir, root) = project();
    let mut client = start(&root);
    let facet = uri(&root.join(FACET));
    let text = std::fs::read_to_string(root.join(FACET)).expect("facet");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": facet, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let at = position_of(&text, "      - compute");
    let found = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": facet}, "position": {"line": at.0, "character": at.1 + 9}}),
    );
    let found = found.as_array().cloned().unwrap_or_default();
    let lands = found.iter().any(|l| {
        let path = l["uri"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("file://");
        let line = l["range"]["start"]["line"].as_u64().unwrap_or(u64::MAX) as usize;
        path.ends_with("facets/option-workstation.yaml")
            && std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.lines().nth(line).map(|l| l.contains("name: compute")))
                .unwrap_or(false)
    });
    assert!(lands, "{found:#?}");

    let new_path = root.join("contexts/_template/facets/zz-new.yaml");
    let new = uri(&new_path);
    let new_text = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: zz-new\nterraform:\n  - name: extra\n    dependsOn:\n      - \n    \n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": new, "languageId": "yaml", "version": 1, "text": new_text}}),
    );
    let labels = |client: &mut Client, line: u64, character: u64| -> Vec<String> {
        let items = client.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": new}, "position": {"line": line, "character": character}}),
        );
        items.as_array().map_or(Vec::new(), |a| {
            a.iter()
                .filter_map(|i| i["label"].as_str().map(String::from))
                .collect()
        })
    };
    let names = labels(&mut client, 7, 8);
    assert!(
        names.contains(&"compute".to_string()) && names.contains(&"cluster".to_string()),
        "{names:?}"
    );
    let keys = labels(&mut client, 8, 4);
    for key in ["inputs", "dependsOn", "path", "strategy"] {
        assert!(keys.contains(&key.to_string()), "{key} not in {keys:?}");
    }
    let symbols = client.request("workspace/symbol", json!({"query": "zz-new"}));
    assert!(
        symbols
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["location"]["uri"] == new)),
        "{symbols}"
    );

    let schema_path = root.join("contexts/_template/schema.yaml");
    let schema = uri(&schema_path);
    let schema_text = std::fs::read_to_string(&schema_path).expect("schema");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": schema, "languageId": "yaml", "version": 1, "text": schema_text}}),
    );
    let at = position_of(&schema_text, "\n  platform:");
    let hover = hover_text(&mut client, &schema, (at.0 + 1, 4));
    assert_eq!(
        hover,
        "**`platform`**\n\nInfrastructure platform. Selects the platform facet (cluster driver defaults, policy, PKI, telemetry, ingress, storage).\n\ntype: `string`\n\ndefault: `\"none\"`\n\none of: `[\"none\",\"aws\",\"azure\",\"hetzner\",\"incus\",\"metal\",\"docker\",\"hyperv\"]`"
    );
    // A property with a `$ref` keeps its own description.
    let at = position_of(&schema_text, "\n  id:\n");
    let hover = hover_text(&mut client, &schema, (at.0 + 1, 3));
    assert_eq!(
        hover,
        "**`id`**\n\nContext id (short identifier for this deployment). Flows into cluster names, terraform workspace names, and other downstream identifiers that require a DNS-1123 label.\n\ntype: `string`"
    );
    assert!(client.stop().success());
}

/// A client that watches files for the server (dynamic registration of
/// `workspace/didChangeWatchedFiles`) is asked to, and the files it reports are read
/// again: the server then reads only what it is told changed, so a facet created on
/// disk and reported shows its findings, and removed and reported, loses them.
#[test]
fn files_the_client_reports_changed_on_disk_are_read_again() {
    let (_dir, root) = project();
    let mut client = Client::start(BIN, &root);
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri(&root),
            "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
            "initializationOptions": {"bpc": {"debounceMs": 10, "tests": false}},
        }),
    );
    client.notify("initialized", json!({}));
    let registration = client.wait_for("client/registerCapability", |_| true);
    assert_eq!(
        registration["registrations"][0]["method"], "workspace/didChangeWatchedFiles",
        "{registration}"
    );
    let facet = uri(&root.join(FACET));
    let text = std::fs::read_to_string(root.join(FACET)).expect("facet");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": facet, "languageId": "yaml", "version": 1, "text": text}}),
    );
    diagnostics_of(&mut client, &facet, 1);

    let on_disk = root.join("contexts/_template/facets/zz-disk.yaml");
    let disk_uri = uri(&on_disk);
    std::fs::write(
        &on_disk,
        "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: zz-disk\nterraform:\n  - name: zz\n    path: zz\n    inputs:\n      a: ${clutser.name}\n",
    )
    .expect("write");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": disk_uri, "type": 1}]}),
    );
    let misspelt = |p: &Value| {
        p["diagnostics"].as_array().is_some_and(|d| {
            d.iter()
                .any(|d| d["message"].to_string().contains("clutser"))
        })
    };
    client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == disk_uri && misspelt(p)
    });
    std::fs::remove_file(&on_disk).expect("rm");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": disk_uri, "type": 3}]}),
    );
    client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == disk_uri && p["diagnostics"].as_array().is_some_and(|d| d.is_empty())
    });
    assert!(client.stop().success());
}

/// A `jsonnet()` file that grows past its memory budget, analysed again after every
/// edit: each evaluation is stopped and reported on the facet line, and the server
/// gives the memory back each time. With 64 MiB a run, twelve runs held for good would
/// be over 750 MiB; the server stays far below that.
#[test]
fn runaway_jsonnet_evaluations_give_their_memory_back() {
    let dir = crate::common::project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!(
                "{}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{jsonnet('../grow.jsonnet')}}\n",
                crate::common::FACET_HEAD
            ),
        ),
        (
            "_template/grow.jsonnet",
            "local grow(s, n) = if n == 0 then std.length(s) else grow(s + s, n - 1); grow('ab', 40)\n",
        ),
    ]);
    let root = dir.path().canonicalize().expect("canonical");
    let mut client = started(&root, json!({"jsonnetMemoryMiB": 64}));
    let facet = uri(&root.join("_template/facets/a.yaml"));
    let text = std::fs::read_to_string(root.join("_template/facets/a.yaml")).expect("facet");
    let over_budget = |diagnostics: &[Value]| {
        diagnostics.iter().any(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.contains("more than the jsonnet memory limit of 64 MiB"))
        })
    };
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": facet, "languageId": "yaml", "version": 1, "text": text}}),
    );
    assert!(over_budget(&diagnostics_of(&mut client, &facet, 1)));
    for version in 2..=12 {
        // A trailing comment changes the text, not what it means.
        let edited = format!("{text}# edit {version}\n");
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": facet, "version": version}, "contentChanges": [{"text": edited}]}),
        );
        let diagnostics = diagnostics_of(&mut client, &facet, version);
        assert!(
            over_budget(&diagnostics),
            "version {version}: {diagnostics:?}"
        );
    }
    match client.resident_kib() {
        Some(kib) => assert!(kib < 256 * 1024, "the server holds {kib} KiB"),
        None => eprintln!("SKIPPED the memory check: /proc/<pid>/status is not readable here"),
    }
    assert!(client.stop().success());
}

/// Messages a client gets wrong are answered as JSON-RPC says and the server goes on:
/// a body that is not JSON (parse error), JSON that is no JSON-RPC message (invalid
/// request, with its id), and a body longer than the server reads (refused as it
/// streams past, never held whole).
#[test]
fn malformed_and_oversized_messages_are_answered_and_serving_goes_on() {
    let (_dir, root) = project();
    let mut client = start(&root);
    let framed = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    client.send_raw(framed("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":").as_bytes());
    let parse_error = client.wait_for_message(|m| m["error"]["code"] == -32700);
    assert_eq!(parse_error["id"], Value::Null);

    client.send_raw(framed(r#"{"jsonrpc": "2.0", "id": 41, "method": 41}"#).as_bytes());
    let invalid = client.wait_for_message(|m| m["error"]["code"] == -32600);
    assert_eq!(invalid["id"], 41);

    let oversized: u64 = 80 * 1024 * 1024;
    client.send_raw(format!("Content-Length: {oversized}\r\n\r\n").as_bytes());
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..80 {
        client.send_raw(&chunk);
    }
    let refused = client.wait_for_message(|m| {
        m["error"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("longer than the 67108864 bytes the server reads"))
    });
    assert_eq!(refused["id"], Value::Null);
    if let Some(kib) = client.resident_kib() {
        assert!(kib < 64 * 1024 + 40 * 1024, "the server holds {kib} KiB");
    }
    let facet = uri(&root.join(FACET));
    let text = std::fs::read_to_string(root.join(FACET)).expect("facet");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": facet, "languageId": "yaml", "version": 1, "text": text}}),
    );
    diagnostics_of(&mut client, &facet, 1);
    assert!(client.stop().success());
}

/// A cloned repository whose context lists a published blueprint: the server does not
/// contact the registry until the user allows pulls (`bpc.pull`), and a pull that
/// failed is not tried again on every analysis.
#[test]
fn published_blueprints_are_pulled_only_when_allowed_and_failures_are_remembered() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&connections);
    std::thread::spawn(move || {
        // A registry that hangs up at once.
        for stream in listener.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    let url = format!("oci://127.0.0.1:{port}/acme/demo:v1");
    let dir = crate::common::project(&[
        ("windsor.yaml", "context: local\n"),
        (
            "contexts/local/blueprint.yaml",
            &format!(
                "{}metadata:\n  name: local\nsources:\n  - name: demo\n    url: {url}\n",
                crate::common::BLUEPRINT_HEAD
            ),
        ),
    ]);
    let root = dir.path().canonicalize().expect("canonical");
    let blueprint = uri(&root.join("contexts/local/blueprint.yaml"));
    let mut client = start(&root);
    let says = |needle: &'static str| {
        move |p: &Value| {
            p["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d.to_string().contains(needle)))
        }
    };
    client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == blueprint && says("forbids pulling it")(p) && says("bpc.pull: true")(p)
    });
    let count = || connections.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(count(), 0, "the server contacted the registry uninvited");

    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"bpc": {"pull": true}}}),
    );
    client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == blueprint && says("failed to pull")(p)
    });
    let tried = count();
    assert!(tried > 0, "the pull was never tried");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"bpc": {"debounceMs": 11}}}),
    );
    client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == blueprint && says("not tried again")(p)
    });
    assert_eq!(count(), tried, "the failed pull was tried again");
    assert!(client.stop().success());
}

/// An analysis runs off the server's request loop and the next edit cancels it: a
/// template whose every context spends the whole expression budget (about a minute
/// of work in a debug build) is replaced by a light one before that analysis ends,
/// and the light one is analysed and published at once.
#[test]
fn an_edit_cancels_the_analysis_under_way() {
    let mut heavy =
        String::from("metadata:\n  name: heavy\nterraform:\n  - path: net\n    inputs:\n");
    for i in 0..300 {
        heavy.push_str(&format!(
            "      sum{i}: \"${{reduce(1..900000, #acc + #, {i})}}\"\n"
        ));
    }
    let facet_head = crate::common::FACET_HEAD;
    let mut files = vec![
        ("windsor.yaml".to_string(), "context: c0\n".to_string()),
        (
            "_template/facets/heavy.yaml".to_string(),
            format!("{facet_head}{heavy}"),
        ),
    ];
    for c in 0..4 {
        files.push((
            format!("contexts/c{c}/values.yaml"),
            "size: 1\n".to_string(),
        ));
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = crate::common::project(&borrowed);
    let root = dir.path().canonicalize().expect("canonical");
    let mut client = started(&root, json!({"tests": false}));
    let facet = uri(&root.join("_template/facets/heavy.yaml"));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": facet, "languageId": "yaml", "version": 1, "text": format!("{facet_head}{heavy}")}}),
    );
    // Let the heavy analysis start.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let light = format!(
        "{facet_head}metadata:\n  name: heavy\nterraform:\n  - path: net\n    inputs:\n      x: ${{nosuch_function(1)}}\n"
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": facet, "version": 2}, "contentChanges": [{"text": light}]}),
    );
    let diagnostics = diagnostics_of(&mut client, &facet, 2);
    assert!(
        diagnostics
            .iter()
            .any(|d| d.to_string().contains("nosuch_function")),
        "{diagnostics:?}"
    );
    assert!(client.stop().success());
}

/// The protocol's ending: after `shutdown` every request is refused and `exit` ends
/// the server with status 0; `exit` without `shutdown` ends it with status 1.
#[test]
fn shutdown_then_exit_in_the_protocol_s_order() {
    let (_dir, root) = project();
    let mut client = start(&root);
    client.send(json!({"jsonrpc": "2.0", "id": 900, "method": "shutdown"}));
    client.wait_for_message(|m| m["id"] == 900 && m["result"].is_null());
    client.send(
        json!({"jsonrpc": "2.0", "id": 901, "method": "workspace/symbol", "params": {"query": ""}}),
    );
    let refused = client.wait_for_message(|m| m["id"] == 901);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit().code(), Some(0));

    let mut abrupt = start(&root);
    abrupt.notify("exit", Value::Null);
    assert_eq!(abrupt.wait_exit().code(), Some(1));
}

/// `bpc.policies`: the findings of Rego policies on the current context are
/// diagnostics at the facet line they trace to.
#[test]
fn policy_findings_are_diagnostics_on_the_facet_line() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join("policies")).expect("mkdir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/policy/windsor-core/tfvars.rego"),
        root.join("policies/tfvars.rego"),
    )
    .expect("copy");
    let mut client = started(&root, json!({"policies": ["policies"]}));
    let path = root.join(FACET);
    let file = uri(&path);
    let text = std::fs::read_to_string(&path).expect("facet");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let diagnostics = diagnostics_of(&mut client, &file, 1);
    let found = with_code(&diagnostics, "policy");
    assert_eq!(found.len(), 1, "{diagnostics:#?}");
    let at = position_of(&text, "${talos.talos_version}");
    assert_eq!(
        (
            found[0]["message"].as_str(),
            found[0]["severity"].as_u64(),
            found[0]["range"]["start"]["line"].as_u64(),
            found[0]["range"]["start"]["character"].as_u64()
        ),
        (
            Some("component cluster runs Talos 1.13.7, older than 1.14.0 [policy main.deny_talos_version]\ncontext `local`, in terraform/cluster/terraform.tfvars.json"),
            Some(1),
            Some(at.0),
            Some(at.1)
        )
    );
    assert!(client.stop().success());
}
