//! The helper library Jsonnet files get as `std.extVar('helpers')`, as the Windsor CLI
//! defines it.

use crate::common::{bpc, project};

/// `helpers.baseUrl(endpoint)` for endpoints of every shape, with what the Windsor CLI
/// (7b6bca77) returned for each (the oracle gave these): one leading `https://` or
/// `http://` goes, then everything from the first `:` on. So `certSANs` built from a
/// Talos endpoint hold the host alone.
#[test]
fn base_url_is_the_endpoint_host_as_windsor_gives_it() {
    let cases: &[(&str, &str)] = &[
        ("10.5.0.10:50000", "10.5.0.10"),
        ("10.5.0.10", "10.5.0.10"),
        ("https://host:8443/path/x", "host"),
        ("https://host/path", "host/path"),
        ("https://host/", "host/"),
        ("http://host", "host"),
        ("host/path", "host/path"),
        ("host:80/path", "host"),
        ("host:50000/", "host"),
        ("[::1]:50000", "["),
        ("user@host:22", "user@host"),
        ("https://user:pw@host:8/p?q=1#f", "user"),
        ("tcp://10.0.0.1:6443", "tcp"),
        ("HTTP://Host:1/a", "HTTP"),
        ("https://http://y:2", "http"),
        ("http://https://x:1", "https"),
        ("foo/https://bar:1", "foo/https"),
        ("https:///x", "/x"),
        ("//host:1/x", "//host"),
        ("host?x=1", "host?x=1"),
        ("", ""),
        (":50000", ""),
    ];
    let endpoints: Vec<String> = cases.iter().map(|(e, _)| format!("{e:?}")).collect();
    let jsonnet = format!(
        "local h = std.extVar('helpers');\n[h.baseUrl(e) for e in [{}]]\n",
        endpoints.join(", ")
    );
    let dir = project(&[
        ("_template/blueprint.yaml", "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: helpers\n"),
        ("_template/endpoints.jsonnet", &jsonnet),
    ]);
    let out = bpc(
        dir.path(),
        &["eval", "jsonnet('endpoints.jsonnet')", "--format", "json"],
    );
    let got: Vec<String> = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", out.stdout, out.stderr));
    let want: Vec<&str> = cases.iter().map(|(_, host)| *host).collect();
    assert_eq!(got, want);
}
