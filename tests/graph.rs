//! `bpc graph` draws what waits for what, read from the render itself, in
//! DOT, Mermaid, SVG and a self-contained HTML page that a real browser shows.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// The example template of the repository, in the repository.
fn example(args: &[&str]) -> Output {
    Test::in_dir(repo())
        .args(["graph"])
        .args(args.iter().copied())
        .run()
}

/// A copy of the public windsor-core template with a bare-metal development context.
fn windsor_core() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(
        &repo().join("tests/conformance/windsor-core-eaa2bcea"),
        dir.path(),
    );
    let values = indoc! {r#"
        id: wmetal01
        platform: metal
        dev: true
        network:
          cidr_block: 10.5.0.0/16
          loadbalancer_driver: kube-vip
          loadbalancer_mode: arp
          loadbalancer_ips:
            start: "10.5.1.10"
            end: "10.5.1.100"
        cluster:
          driver: talos
          controlplanes:
            nodes:
              controlplane-1:
                endpoint: 10.5.0.10:50000
                node: 10.5.0.10
                hostname: controlplane-1
          workers:
            volumes:
              - /var/mnt/local
    "#};
    std::fs::create_dir_all(dir.path().join("contexts/metal-dev")).expect("mkdir");
    std::fs::write(dir.path().join("contexts/metal-dev/values.yaml"), values).expect("values");
    dir
}

#[test]
fn the_example_template_as_dot_and_mermaid() {
    snap!("graph_example_dot", &example(&["--format", "dot"]).stdout);
    snap!(
        "graph_example_mermaid",
        &example(&["--format", "mermaid"]).stdout,
    );
}

#[test]
fn a_windsor_core_context_as_mermaid() {
    let dir = windsor_core();
    let out = bpc(
        dir.path(),
        &["graph", "--context", "metal-dev", "--format", "mermaid"],
    );
    assert!(out.success(), "{}", out.stderr);
    snap!("graph_windsor_core_metal_dev_mermaid", &out.stdout);
}

/// `"a" -> "b" [style=solid, …` lines of a DOT graph: `(a, b)` for each `dependsOn`.
fn dot_dependencies(dot: &str) -> BTreeSet<(String, String)> {
    dot.lines()
        .filter(|l| l.contains(" -> ") && l.contains("style=solid"))
        .map(|l| {
            let parts: Vec<&str> = l.trim().split('"').collect();
            (parts[1].to_string(), parts[3].to_string())
        })
        .collect()
}

#[test]
fn every_edge_is_a_dependency_the_render_wrote_and_every_dependency_an_edge() {
    let dir = windsor_core();
    let render = bpc(
        dir.path(),
        &[
            "render",
            "--context",
            "metal-dev",
            "--format",
            "json",
            "--out",
            "r",
        ],
    );
    assert!(render.success(), "{}", render.stderr);
    let mut rendered = BTreeSet::new();
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
    };
    for entry in std::fs::read_dir(dir.path().join("r/flux/kustomizations"))
        .expect("ls")
        .flatten()
    {
        let k = read(&entry.path());
        let name = k["metadata"]["name"].as_str().expect("name").to_string();
        for dep in k["spec"]["dependsOn"].as_array().into_iter().flatten() {
            let dep = dep["name"].as_str().expect("dep name");
            rendered.insert((
                format!("kustomization/{dep}"),
                format!("kustomization/{name}"),
            ));
        }
    }
    let plan = read(&dir.path().join("r/terraform/plan.json"));
    for c in plan["components"].as_array().expect("components") {
        let id = c["id"].as_str().expect("id");
        for dep in c["dependsOn"].as_array().into_iter().flatten() {
            let dep = dep.as_str().expect("dep");
            rendered.insert((format!("terraform/{dep}"), format!("terraform/{id}")));
        }
    }
    assert!(!rendered.is_empty());
    let dot = bpc(dir.path(), &["graph", "--context", "metal-dev"]);
    assert!(dot.success(), "{}", dot.stderr);
    assert_eq!(dot_dependencies(&dot.stdout), rendered);
}

#[test]
fn every_edge_says_why_it_exists() {
    let edges = |dot: &str| -> String {
        dot.lines()
            .filter(|l| l.contains(" -> "))
            .map(|l| format!("{}\n", l.trim()))
            .collect()
    };
    let dot = example(&["--format", "dot"]).stdout;
    assert_eq!(
        edges(&dot),
        indoc! {r##"
        "terraform/compute" -> "terraform/cluster" [style=solid, tooltip="written by facet `docker` at _template/facets/provider-docker.yaml:15:17"];
        "terraform/compute" -> "terraform/cluster" [style=dashed, tooltip="terraform_output(\"compute\", …): input `endpoints` reads its outputs", color="#b45309"];
        "kustomization/policy-base" -> "kustomization/csi" [style=solid, tooltip="written by facet `provider-base` at _template/facets/provider-base.yaml:18:17"];
        "source/local" -> "kustomization/csi" [style=dotted, tooltip="reconciles from GitRepository `local`"];
        "kustomization/policy-base" -> "kustomization/ingress" [style=solid, tooltip="written by facet `ingress` at _template/facets/option-ingress.yaml:10:17"];
        "source/local" -> "kustomization/ingress" [style=dotted, tooltip="reconciles from GitRepository `local`"];
        "source/local" -> "kustomization/policy-base" [style=dotted, tooltip="reconciles from GitRepository `local`"];
    "##}
    );
    // windsor-core's flux systems: a system's tiers wait for each other.
    let dir = windsor_core();
    let core = bpc(dir.path(), &["graph", "--context", "metal-dev"]).stdout;
    let tiers: String = edges(&core)
        .lines()
        .filter(|l| l.contains("tier link"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        tiers,
        indoc! {r#"
        "kustomization/gateway-install" -> "kustomization/gateway-resources" [style=solid, tooltip="tier link: tiers of flux system `gateway` run in order"];
        "kustomization/observability-install" -> "kustomization/observability-resources" [style=solid, tooltip="tier link: tiers of flux system `observability` run in order"];
        "kustomization/pki-install" -> "kustomization/pki-resources" [style=solid, tooltip="tier link: tiers of flux system `pki` run in order"];
        "kustomization/policy-install" -> "kustomization/policy-resources" [style=solid, tooltip="tier link: tiers of flux system `policy` run in order"];
        "kustomization/telemetry-install" -> "kustomization/telemetry-resources" [style=solid, tooltip="tier link: tiers of flux system `telemetry` run in order"];
    "#}
    );
}

#[test]
fn focus_keeps_a_node_with_its_ancestors_and_descendants() {
    let out = example(&["--format", "mermaid", "--focus", "cluster"]).stdout;
    assert_eq!(
        out.lines().take(5).collect::<Vec<_>>(),
        [
            "flowchart TD",
            "  n0[\"compute\"]",
            "  n1[\"cluster\"]",
            "  n0 --> n1",
            "  n0 -. output .-> n1"
        ]
    );
    Test::in_dir(repo())
        .args(["graph", "--focus", "clustr"])
        .fails("error: --focus: no node named `clustr` in the graph; did you mean `cluster`?\n\n")
        .run();
}

#[test]
fn diff_marks_what_only_one_context_has() {
    let test = || {
        Test::new()
            .facet(
                "a.yaml",
                indoc! {"
                    metadata:
                      name: a
                    terraform:
                      - path: net
                      - path: dns
                        when: provider == 'aws'
                        dependsOn: [net]
                "},
            )
            .values("aws", "provider: aws\n")
            .values("local", "provider: local\n")
    };
    let out = test()
        .args([
            "graph",
            "--context",
            "aws",
            "--diff",
            "local",
            "--format",
            "mermaid",
        ])
        .run()
        .stdout;
    assert_eq!(
        out,
        indoc! {r#"
        flowchart TD
          n0["net"]
          n1["dns"]
          n2[("local")]
          n0 --> n1
          classDef terraform fill:#dbeafe,stroke:#1d4ed8
          classDef kustomization fill:#dcfce7,stroke:#15803d
          classDef source fill:#f1f5f9,stroke:#64748b
          classDef added stroke:#16a34a,stroke-width:3px
          classDef removed stroke:#dc2626,stroke-width:3px,stroke-dasharray:4
          class n0,n1 terraform
          class n2 source
          class n1 added
          class n2 removed
          linkStyle 0 stroke:#16a34a,stroke-width:3px
    "#}
    );
    let out = test()
        .args([
            "graph",
            "--context",
            "local",
            "--diff",
            "aws",
            "--format",
            "dot",
        ])
        .run()
        .stdout;
    assert_eq!(
        out,
        indoc! {r##"
        digraph "bpc: context local (compared with aws)" {
          rankdir=TB;
          node [fontname="sans-serif", fontsize=12, style=filled];
          edge [fontname="sans-serif", fontsize=10, color="#475569"];
          "terraform/net" [label="net", shape=box, style=filled, fillcolor="#dbeafe", tooltip="terraform component net\npath: net\nsource: terraform/net\nfacet: a\nprovenance: _template/facets/a.yaml:6:11 (a, 0, merge)"];
          "source/local" [label="local", shape=cylinder, style=filled, fillcolor="#f1f5f9", tooltip="source local\nkind: GitRepository\nurl: http://git.test/git/project\nbranch: main", color="#16a34a", penwidth=3];
          "terraform/dns" [label="dns", shape=box, style=filled, fillcolor="#dbeafe", tooltip="terraform component dns\npath: dns\nsource: terraform/dns\nfacet: a\nprovenance: _template/facets/a.yaml:7:11 (a, 0, merge)", color="#dc2626", penwidth=3];
          "terraform/net" -> "terraform/dns" [style=solid, tooltip="written by facet `a` at _template/facets/a.yaml:9:17", color="#dc2626", penwidth=3];
        }
    "##}
    );
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let dir = windsor_core();
    for format in ["dot", "mermaid", "svg", "html"] {
        let args = ["graph", "--context", "metal-dev", "--format", format];
        let first = bpc(dir.path(), &args);
        assert!(first.success(), "{}", first.stderr);
        assert_eq!(first.stdout, bpc(dir.path(), &args).stdout, "{format}");
    }
}

#[test]
fn every_context_gets_its_own_file() {
    let out = Test::new()
        .facet(
            "a.yaml",
            "metadata:\n  name: a\nterraform:\n  - path: net\n",
        )
        .values("dev", "x: 1\n")
        .values("prod", "x: 2\n")
        .args([
            "graph",
            "--all-contexts",
            "--format",
            "svg",
            "--out",
            "graphs",
        ])
        .run();
    // One component, no source (neither context is a dev context); only the title
    // names the context.
    let dev = indoc! {r##"
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100.0 76.0" width="100.0" height="76.0" class="bpc-graph">
        <title>bpc graph: context dev</title>
        <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#475569"/></marker></defs>
        <style>
        .bpc-graph { font-family: sans-serif; font-size: 13px; }
        .bpc-graph .node rect { stroke: #334155; stroke-width: 1.5; }
        .bpc-graph .node text { text-anchor: middle; dominant-baseline: central; fill: #0f172a; pointer-events: none; }
        .bpc-graph .terraform rect { fill: #dbeafe; }
        .bpc-graph .kustomization rect { fill: #dcfce7; }
        .bpc-graph .source rect { fill: #f1f5f9; }
        .bpc-graph .edge path { fill: none; stroke: #475569; stroke-width: 1.5; }
        .bpc-graph .edge.output path { stroke-dasharray: 6 4; stroke: #b45309; }
        .bpc-graph .edge.source path { stroke-dasharray: 2 3; stroke: #94a3b8; }
        .bpc-graph .added rect, .bpc-graph .edge.added path { stroke: #16a34a; stroke-width: 3; }
        .bpc-graph .removed rect, .bpc-graph .edge.removed path { stroke: #dc2626; stroke-width: 3; stroke-dasharray: 4 3; }
        .bpc-graph .edge.cycle path { stroke: #c026d3; stroke-width: 3.5; }
        </style>
        <g class="node terraform same" data-id="terraform/net"><title>terraform component `net`
        path: net
        source: terraform/net
        facet: a
        provenance: _template/facets/a.yaml:6:11 (a, 0, merge)</title><rect x="30.0" y="30.0" width="60.0" height="36.0" rx="2"/><text x="60.0" y="48.0">net</text></g>
        </svg>
    "##};
    for context in ["dev", "prod"] {
        let svg = std::fs::read_to_string(out.path(&format!("graphs/{context}.svg"))).expect("svg");
        assert_eq!(
            svg,
            dev.replace("context dev", &format!("context {context}")),
            "{context}"
        );
    }
}

/// The HTML page opened in a real browser (Debian's `chromium`, headless): its script
/// runs, and every Kustomization and component of the context is drawn.
#[test]
fn the_html_page_renders_in_a_real_browser() {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("SKIPPED: no chromium installed (apt-get install -y chromium); the browser test did not run");
        return;
    };
    let dir = windsor_core();
    let out = bpc(
        dir.path(),
        &[
            "graph",
            "--context",
            "metal-dev",
            "--format",
            "html",
            "--out",
            "graph.html",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    let page = dir.path().join("graph.html");
    let html = std::fs::read_to_string(&page).expect("html");
    let nodes = html.matches("<g class=\"node ").count();
    let edges = html.matches("<g class=\"edge ").count();
    let profile = tempfile::tempdir().expect("profile dir");
    let headless = |extra: &[String]| {
        std::process::Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("run the browser")
    };
    let dom = headless(&["--dump-dom".to_string()]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains(&format!("data-graph-nodes=\"{nodes}\"")),
        "the page's script did not run:\n{dom}"
    );
    assert!(
        dom.contains(&format!("data-graph-edges=\"{edges}\"")),
        "{dom}"
    );
    for name in ["cni-install", "pki-resources", "cluster"] {
        assert!(
            dom.contains(&format!("data-id=\"kustomization/{name}\""))
                || dom.contains(&format!("data-id=\"terraform/{name}\"")),
            "{name} missing"
        );
    }
    let shot = dir.path().join("graph.png");
    headless(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1400,900".to_string(),
    ]);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot of {} bytes",
        png.len()
    );
}

/// A composition that fails on a `dependsOn` cycle is still drawn: the edges of the
/// loop are marked and the error is printed with the picture. The command fails all
/// the same, as `compose` does, and only `graph` tolerates the cycle.
#[test]
fn a_dependency_cycle_is_drawn_with_its_error() {
    let looped = || {
        Test::new().facet(
            "a.yaml",
            indoc! {"
                metadata:
                  name: a
                terraform:
                  - path: net
                  - path: dns
                    dependsOn: [net, cluster]
                  - path: cluster
                    dependsOn: [dns]
            "},
        )
    };
    let error = "terraform components depend on each other in a cycle: dns -> cluster -> dns";
    // What every command prints on stderr, graph and compose alike.
    let stderr = format!(
        "error: {error}\n{}",
        indoc! {"
             --> _template/facets/a.yaml:8:16
              |
            8 |     dependsOn: [net, cluster]
              |                ^^^^^^^^^^^^^^ this dependsOn is part of the cycle

        "}
    );
    let out = looped()
        .args(["graph", "--format", "mermaid"])
        .status(1)
        .stderr(&stderr)
        .run();
    assert_eq!(
        out.stdout,
        format!(
            "%% error: _template/facets/a.yaml:8:16: {error}\n{}",
            indoc! {r#"
                flowchart TD
                  n0["net"]
                  n1["dns"]
                  n2["cluster"]
                  n3[("local")]
                  n0 --> n1
                  n2 -- cycle --> n1
                  n1 -- cycle --> n2
                  classDef terraform fill:#dbeafe,stroke:#1d4ed8
                  classDef kustomization fill:#dcfce7,stroke:#15803d
                  classDef source fill:#f1f5f9,stroke:#64748b
                  classDef added stroke:#16a34a,stroke-width:3px
                  classDef removed stroke:#dc2626,stroke-width:3px,stroke-dasharray:4
                  class n0,n1,n2 terraform
                  class n3 source
                  linkStyle 1 stroke:#c026d3,stroke-width:4px
                  linkStyle 2 stroke:#c026d3,stroke-width:4px
            "#}
        )
    );
    let out = looped()
        .args(["graph", "--format", "html", "--out", "graph.html"])
        .status(1)
        .stderr(&stderr)
        .run();
    let html = std::fs::read_to_string(out.path("graph.html")).expect("the page is written");
    assert!(
        html.contains(&format!(
            "<p class=\"error\">error: _template/facets/a.yaml:8:16: {}</p>",
            error.replace('>', "&gt;")
        )),
        "{html}"
    );
    assert_eq!(
        html.matches("class=\"edge depends-on same cycle\"").count(),
        2,
        "{html}"
    );
    assert_eq!(
        html.matches("class=\"edge depends-on same\"").count(),
        1,
        "{html}"
    );
    looped().args(["compose"]).fails(stderr).run();
}

/// A facet with a chain of `n` Terraform components and one of `n` Kustomizations,
/// each waiting for the one before.
fn chain(n: usize) -> Test {
    let mut facet = String::from("metadata:\n  name: chain\nterraform:\n");
    for i in 0..n {
        facet.push_str(&format!("  - name: t{i}\n    path: t{i}\n"));
        if i > 0 {
            facet.push_str(&format!("    dependsOn: [t{}]\n", i - 1));
        }
    }
    facet.push_str("kustomize:\n");
    for i in 0..n {
        facet.push_str(&format!("  - name: k{i}\n    path: k{i}\n"));
        if i > 0 {
            facet.push_str(&format!("    dependsOn: [k{}]\n", i - 1));
        }
    }
    Test::new()
        .file("windsor.yaml", "version: v1alpha1\n")
        .file(
            "_template/facets/chain.yaml",
            format!("{FACET_HEAD}{facet}"),
        )
}

/// Long chains are drawn (past 100 nodes without crossing reduction, whose cost grows
/// fastest); past 400 nodes a drawing is refused with the formats that take any size,
/// and a part of the graph still draws.
#[test]
fn long_chains_are_drawn_or_refused_with_the_formats_that_take_them() {
    let drawn = chain(80).args(["graph", "--format", "svg"]).run();
    for i in [0, 40, 79] {
        assert!(
            drawn
                .stdout
                .contains(&format!("data-id=\"terraform/t{i}\"")),
            "t{i}"
        );
    }
    chain(200)
        .args(["graph", "--format", "html"])
        .fails(
            "error: the graph of context `local` has 401 nodes, more than the 400 an SVG or \
             HTML drawing takes (its layout grows faster than the square of the size); write \
             it with --format dot or --format mermaid and draw it with Graphviz or Mermaid, or \
             draw a part of it with --focus NAME\n\n",
        )
        .run();
    let dot = chain(200).args(["graph", "--format", "dot"]).run();
    assert!(dot.stdout.contains("\"terraform/t199\""));
    let part = chain(200)
        .args(["graph", "--format", "svg", "--focus", "k3"])
        .run();
    assert!(part.stdout.contains("data-id=\"kustomization/k3\""));
}
