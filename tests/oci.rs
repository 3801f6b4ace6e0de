//! Projects built on published blueprints (docs/semantics.md S14), against a real
//! registry: Debian's `docker-registry` (distribution 2.8) started on a free
//! 127.0.0.1 port. Where it is not installed these tests say so loudly and pass.

mod support;

use bpc::oci::registry::{self, Artifact};
use bpc::oci::{AuthEnv, Reference};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use support::*;

/// `bpc push oci://<host>/<repo>:<tag>` from `project`; returns the printed digest.
#[track_caller]
fn push(project: &std::path::Path, home: &Home, url: &str) -> String {
    let out = run(bpc(project, home).args(["push", url]), true);
    let text = stdout(&out);
    assert!(
        text.starts_with("Blueprint pushed successfully: "),
        "{text}"
    );
    text.rsplit('(')
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches(')')
        .to_string()
}

/// `bpc compose --format json` in `project`, parsed.
#[track_caller]
fn compose_json(project: &std::path::Path, home: &Home, extra: &[&str]) -> Value {
    let out = run(
        bpc(project, home)
            .args(["compose", "--format", "json"])
            .args(extra),
        true,
    );
    serde_json::from_slice(&out.stdout).expect("JSON blueprint")
}

/// The blueprint without what names the template's source: `sources`, and every
/// component's `source`.
fn without_sources(mut blueprint: Value) -> Value {
    if let Some(m) = blueprint.as_object_mut() {
        m.remove("sources");
        // A dev context's repository is named after the project's folder (Windsor's
        // rule), and the two projects compared live in different temp folders.
        m.remove("repository");
        for list in ["terraform", "kustomize", "flux"] {
            if let Some(Value::Array(items)) = m.get_mut(list) {
                for item in items {
                    if let Some(i) = item.as_object_mut() {
                        i.remove("source");
                    }
                }
            }
        }
    }
    blueprint
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// Pushes a hand-made layer (a tar of `entries`, raw names) as `reference`.
fn push_raw(reference: &str, entries: &[(&str, &[u8])]) {
    let mut tar = Vec::new();
    for (name, data) in entries {
        let mut header = tar::Header::new_gnu();
        // Written byte by byte: the tar crate refuses `..` in names, as it should.
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        tar.extend_from_slice(header.as_bytes());
        tar.extend_from_slice(data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.resize(tar.len() + 1024, 0);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar).expect("gzip");
    let artifact = Artifact {
        layer: gz.finish().expect("gzip"),
        config: b"{}".to_vec(),
        annotations: BTreeMap::new(),
    };
    let reference = Reference::parse(reference).expect("reference");
    registry::push(&reference, &AuthEnv::default(), &artifact).expect("push");
}

#[test]
fn a_pushed_blueprint_composes_as_its_template_does_locally() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1.0.0", reg.host());
    let digest = push(publisher.path(), &home, &url);
    // Same template, same digest: the push is reproducible.
    assert_eq!(push(publisher.path(), &home, &url), digest);

    let consumer = consumer(&[("demo", &url, None)]);
    let pulled = compose_json(consumer.path(), &home, &[]);
    let local = compose_json(publisher.path(), &home, &[]);
    assert_eq!(without_sources(pulled.clone()), without_sources(local));
    assert_eq!(pulled["terraform"][0]["inputs"]["workers"], 6, "{pulled}");
    // The published blueprint is its own source, listed by URL.
    assert_eq!(pulled["sources"][0]["name"], "demo");
    assert_eq!(pulled["sources"][0]["url"], url.as_str());
    assert_eq!(pulled["terraform"][0]["source"], "demo");
    assert_eq!(pulled["kustomize"][0]["source"], "demo");

    // Windsor's cache layout: the decompressed layer, byte for byte, and the tree.
    let cache = cache_dir(consumer.path(), &reg.host(), "acme/demo", "v1.0.0");
    let out = run(
        bpc(publisher.path(), &home).args(["bundle", "--tag", "v1.0.0", "-o", "dist/"]),
        true,
    );
    assert!(
        stdout(&out).contains("dist/demo-v1.0.0.tar.gz"),
        "{}",
        stdout(&out)
    );
    let bundled = std::fs::read(publisher.path().join("dist/demo-v1.0.0.tar.gz")).unwrap();
    assert_eq!(
        std::fs::read(cache.join("artifact.tar")).unwrap(),
        gunzip(&bundled)
    );
    assert!(cache.join("_template/facets/demo.yaml").is_file());
    assert!(cache.join("terraform/demo/net/variables.tf").is_file());
    assert!(!cache.join("terraform/demo/net/terraform.tfstate").exists());
    assert!(cache
        .join("kustomize/demo/app/kustomization.yaml")
        .is_file());
    let meta = std::fs::read_to_string(cache.join("metadata.yaml")).unwrap();
    assert!(meta.starts_with("name: \"demo\"\n"), "{meta}");
    assert!(!cache.join("_template/metadata.yaml").exists());

    // Every command of one context reads the pulled template.
    let out = run(
        bpc(consumer.path(), &home).args(["eval", "democfg.workers"]),
        true,
    );
    assert_eq!(stdout(&out).trim(), "6");
    let out = run(bpc(consumer.path(), &home).args(["show", "values"]), true);
    assert!(stdout(&out).contains("size: 3"), "{}", stdout(&out));
    run(
        bpc(consumer.path(), &home).args(["render", "--out", "out"]),
        true,
    );
    assert!(consumer
        .path()
        .join("out/terraform/demo-net/terraform.tfvars.json")
        .is_file());
    run(
        bpc(consumer.path(), &home).args(["explain", "terraform.demo-net.inputs.workers"]),
        true,
    );
}

#[test]
fn the_cache_is_reused_offline_and_no_cache_pulls_again() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    push(publisher.path(), &home, &url);
    let consumer = consumer(&[("demo", &url, None)]);
    let first = compose_json(consumer.path(), &home, &[]);
    let fresh = support::consumer(&[("demo", &url, None)]);
    drop(reg);

    // The registry is gone: the cache answers, offline or not.
    assert_eq!(compose_json(consumer.path(), &home, &["--offline"]), first);
    assert_eq!(compose_json(consumer.path(), &home, &[]), first);
    // NO_CACHE asks the registry again, which is gone.
    let out = run(
        bpc(consumer.path(), &home)
            .args(["compose"])
            .env("NO_CACHE", "true"),
        false,
    );
    assert!(
        stderr(&out).contains("failed to pull oci://"),
        "{}",
        stderr(&out)
    );
    // --offline with nothing cached says what is missing and never connects.
    let out = run(
        bpc(fresh.path(), &home).args(["compose", "--offline"]),
        false,
    );
    let err = stderr(&out);
    assert!(err.contains("is not in the cache"), "{err}");
    assert!(err.contains("--offline"), "{err}");
    assert!(err.contains("contexts/local/blueprint.yaml"), "{err}");
}

#[test]
fn nested_sources_are_pulled_and_install_decides_what_is_merged() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let platform_url = format!("oci://{}/acme/platform:v1", reg.host());
    let app_url = format!("oci://{}/acme/app:v1", reg.host());
    push(publisher("platform", &[]).path(), &home, &platform_url);
    push(
        publisher("app", &[("platform", &platform_url)]).path(),
        &home,
        &app_url,
    );
    let names = |b: &Value| -> Vec<String> {
        b["terraform"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| c["name"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };

    // The app's own sources are pulled but not merged.
    let only_app = consumer(&[("app", &app_url, None)]);
    let b = compose_json(only_app.path(), &home, &[]);
    assert_eq!(names(&b), ["app-net"], "{b}");
    assert!(
        cache_dir(only_app.path(), &reg.host(), "acme/platform", "v1")
            .join("artifact.tar")
            .is_file()
    );

    // Listed by the context with `install` omitted: merged.
    let both = consumer(&[("platform", &platform_url, None), ("app", &app_url, None)]);
    let b = compose_json(both.path(), &home, &[]);
    assert_eq!(names(&b), ["platform-net", "app-net"], "{b}");
    assert_eq!(b["terraform"][0]["source"], "platform");
    assert_eq!(b["terraform"][1]["source"], "app");

    // `install: false`: loaded, not merged.
    let not_installed = consumer(&[
        ("platform", &platform_url, Some(false)),
        ("app", &app_url, None),
    ]);
    let b = compose_json(not_installed.path(), &home, &[]);
    assert_eq!(names(&b), ["app-net"], "{b}");
    assert!(
        cache_dir(not_installed.path(), &reg.host(), "acme/platform", "v1")
            .join("artifact.tar")
            .is_file()
    );
}

#[test]
fn a_layer_whose_bytes_do_not_match_its_digest_is_refused() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    push(publisher.path(), &home, &url);
    let bundled = run(
        bpc(publisher.path(), &home).args(["bundle", "--tag", "v1", "-o", "demo.tar.gz"]),
        true,
    );
    let digest = stdout(&bundled)
        .rsplit(", ")
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches(')')
        .to_string();
    // Corrupt the stored blob in place, keeping its size.
    let blob = reg.blob_file(&digest);
    let mut bytes = std::fs::read(&blob).expect("stored blob");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();

    let consumer = consumer(&[("demo", &url, None)]);
    let out = run(bpc(consumer.path(), &home).args(["compose"]), false);
    let err = stderr(&out);
    // Refused while streaming (the client checks as it reads) or after: either way
    // the message names the digest the manifest promised.
    assert!(err.contains("failed to read layer data"), "{err}");
    assert!(err.to_lowercase().contains("digest"), "{err}");
    assert!(err.contains(&digest), "{err}");
    assert!(!consumer
        .path()
        .join(".windsor/cache/oci")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
}

#[test]
fn credentials_come_from_the_docker_config() {
    let reg = crate::registry!(true);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    // No credentials: refused, and the message says where they were looked for.
    let out = run(bpc(publisher.path(), &home).args(["push", &url]), false);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("the registry {} refused access", reg.host())),
        "{err}"
    );
    assert!(err.contains("config.json (absent)"), "{err}");
    assert!(err.contains("docker login"), "{err}");

    home.login(&reg.host(), "bpc", "wrong");
    let out = run(bpc(publisher.path(), &home).args(["push", &url]), false);
    assert!(stderr(&out).contains("refused access"), "{}", stderr(&out));

    home.login(&reg.host(), "bpc", "s3cret");
    push(publisher.path(), &home, &url);
    let consumer = consumer(&[("demo", &url, None)]);
    let b = compose_json(consumer.path(), &home, &[]);
    assert_eq!(b["terraform"][0]["name"], "demo-net");

    // A credential helper, as `credHelpers` names it (`docker-credential-<name> get`).
    let helped = Home::new();
    let bin = helped.0.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-bpctest");
    std::fs::write(
        &helper,
        "#!/bin/sh\nread server\nprintf '{\"ServerURL\":\"%s\",\"Username\":\"bpc\",\"Secret\":\"s3cret\"}' \"$server\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        helped.0.path().join("config.json"),
        format!(r#"{{"credHelpers":{{"{}":"bpctest"}}}}"#, reg.host()),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fresh = support::consumer(&[("demo", &url, None)]);
    let out = run(
        bpc(fresh.path(), &helped)
            .args(["compose", "--format", "json"])
            .env("PATH", path),
        true,
    );
    assert!(stdout(&out).contains("demo-net"), "{}", stdout(&out));

    let stranger = Home::new();
    let fresh = support::consumer(&[("demo", &url, None)]);
    let out = run(bpc(fresh.path(), &stranger).args(["compose"]), false);
    let err = stderr(&out);
    assert!(err.contains("refused access"), "{err}");
    assert!(err.contains("credentials were looked for in"), "{err}");
    assert!(err.contains("contexts/local/blueprint.yaml"), "{err}");
}

#[test]
fn tar_entries_escaping_the_root_are_refused_before_anything_is_written() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let blueprint = format!("{BLUEPRINT_HEAD}metadata:\n  name: evil\n");
    for (tag, bad) in [
        ("dots", "../evil.yaml"),
        ("nested", "_template/../../evil.yaml"),
        ("abs", "/tmp/evil.yaml"),
    ] {
        let url = format!("oci://{}/acme/evil:{tag}", reg.host());
        push_raw(
            &url,
            &[
                ("_template/blueprint.yaml", blueprint.as_bytes()),
                (bad, b"x: 1\n"),
            ],
        );
        let consumer = consumer(&[("evil", &url, None)]);
        let out = run(bpc(consumer.path(), &home).args(["compose"]), false);
        let err = stderr(&out);
        assert!(err.contains("invalid path in tar archive"), "{err}");
        assert!(err.contains(bad), "{err}");
        let cache = cache_dir(consumer.path(), &reg.host(), "acme/evil", tag);
        assert!(
            !cache.exists(),
            "a refused artifact left {}",
            cache.display()
        );
        assert!(!consumer.path().join(".windsor/cache/evil.yaml").exists());
    }
}

#[test]
fn errors_name_the_tag_the_artifact_and_the_cli_version() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    push(publisher.path(), &home, &url);

    let missing = format!("oci://{}/acme/demo:v9", reg.host());
    let c = consumer(&[("demo", &missing, None)]);
    let err = stderr(&run(bpc(c.path(), &home).args(["compose"]), false));
    assert!(
        err.contains("has no tag `v9` in repository `acme/demo`"),
        "{err}"
    );

    let untagged = format!("oci://{}/acme/demo", reg.host());
    let c = consumer(&[("demo", &untagged, None)]);
    let err = stderr(&run(bpc(c.path(), &home).args(["compose"]), false));
    assert!(
        err.contains("expected oci://registry/repository:tag"),
        "{err}"
    );

    // A layer without _template/ is not a blueprint.
    let bare = format!("oci://{}/acme/bare:v1", reg.host());
    push_raw(&bare, &[("blueprint.yaml", b"kind: Blueprint\n")]);
    let c = consumer(&[("bare", &bare, None)]);
    let err = stderr(&run(bpc(c.path(), &home).args(["compose"]), false));
    assert!(err.contains("is not a Windsor blueprint artifact"), "{err}");

    // The template requires Windsor >=0.9.0.
    let c = consumer(&[("demo", &url, None)]);
    let err = stderr(&run(
        bpc(c.path(), &home)
            .args(["compose"])
            .env("BPC_WINDSOR_VERSION", "0.8.1"),
        false,
    ));
    assert!(
        err.contains("demo:v1 is incompatible with this CLI (CLI version 0.8.1 does not satisfy required constraint '>=0.9.0')"),
        "{err}"
    );
    run(
        bpc(c.path(), &home)
            .args(["compose"])
            .env("BPC_WINDSOR_VERSION", "0.9.3"),
        true,
    );
}

/// A registry stand-in serving the bundle of `publisher` as `acme/demo:v1`; the
/// blob reply comes from `blob`.
fn scripted(layer: Vec<u8>, declared: Option<i64>, blob: fn(&[u8]) -> Reply) -> Scripted {
    let digest = registry::sha256(&layer);
    let config = b"{}".to_vec();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.windsorcli.blueprint.v1+json",
                   "size": config.len(), "digest": registry::sha256(&config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "size": declared.unwrap_or(layer.len() as i64), "digest": digest}],
    })
    .to_string();
    Scripted::start(move |path, _| {
        if path.contains("/manifests/") {
            Reply {
                status: 200,
                content_type: "application/vnd.oci.image.manifest.v1+json".into(),
                body: manifest.clone().into_bytes(),
                stall_after: None,
                headers: Vec::new(),
            }
        } else if path.contains("/blobs/") {
            blob(&layer)
        } else {
            Reply {
                status: 200,
                content_type: "application/json".into(),
                body: b"{}".to_vec(),
                stall_after: None,
                headers: Vec::new(),
            }
        }
    })
}

fn bundle_of_demo(home: &Home) -> Vec<u8> {
    let publisher = publisher("demo", &[]);
    run(
        bpc(publisher.path(), home).args(["bundle", "--tag", "v1", "-o", "demo.tar.gz"]),
        true,
    );
    std::fs::read(publisher.path().join("demo.tar.gz")).unwrap()
}

#[test]
fn a_killed_pull_leaves_nothing_that_is_trusted_later() {
    let home = Home::new();
    let layer = bundle_of_demo(&home);
    let stalling = scripted(layer.clone(), None, |layer| Reply {
        status: 200,
        content_type: "application/octet-stream".into(),
        body: layer.to_vec(),
        stall_after: Some(layer.len() / 2),
        headers: Vec::new(),
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", stalling.port);
    let consumer = consumer(&[("demo", &url, None)]);
    let mut child = bpc(consumer.path(), &home)
        .args(["compose"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    stalling
        .stalled
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the pull reached the blob");
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    let cache = cache_dir(
        consumer.path(),
        &format!("127.0.0.1:{}", stalling.port),
        "acme/demo",
        "v1",
    );
    assert!(!cache.exists(), "a killed pull left {}", cache.display());
    drop(stalling);

    // The next run pulls afresh (from a registry that answers this time).
    let whole = scripted(layer, None, |layer| Reply {
        status: 200,
        content_type: "application/octet-stream".into(),
        body: layer.to_vec(),
        stall_after: None,
        headers: Vec::new(),
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", whole.port);
    let consumer = support::consumer(&[("demo", &url, None)]);
    let b = compose_json(consumer.path(), &home, &[]);
    assert_eq!(b["terraform"][0]["name"], "demo-net");
}

#[test]
fn a_layer_over_the_size_limit_is_not_downloaded() {
    let home = Home::new();
    let layer = bundle_of_demo(&home);
    let huge = scripted(layer, Some(300 * 1024 * 1024), |_| Reply {
        status: 500,
        content_type: "text/plain".into(),
        body: b"the blob must not be asked for".to_vec(),
        stall_after: None,
        headers: Vec::new(),
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", huge.port);
    let consumer = consumer(&[("demo", &url, None)]);
    let err = stderr(&run(bpc(consumer.path(), &home).args(["compose"]), false));
    assert!(err.contains("over the limit of 256 MiB"), "{err}");
}

#[test]
fn anonymous_token_auth_as_public_registries_ask_for_it() {
    let home = Home::new();
    let layer = bundle_of_demo(&home);
    let digest = registry::sha256(&layer);
    let config = b"{}".to_vec();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.windsorcli.blueprint.v1+json",
                   "size": config.len(), "digest": registry::sha256(&config)},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "size": layer.len(), "digest": digest}],
    })
    .to_string();
    let port = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(0));
    let seen = port.clone();
    let token_asks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let asks = token_asks.clone();
    let reply = |status: u16, body: Vec<u8>, headers: Vec<(String, String)>| Reply {
        status,
        content_type: "application/json".into(),
        body,
        stall_after: None,
        headers,
    };
    // Every /v2/ request needs the token the realm hands out to anyone who asks
    // for pull access to acme/demo.
    let server = Scripted::start(move |path, auth| {
        let port = seen.load(std::sync::atomic::Ordering::SeqCst);
        if path.starts_with("/token") {
            asks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let scoped = path.contains("scope=repository%3Aacme%2Fdemo%3Apull")
                || path.contains("scope=repository:acme/demo:pull");
            return if scoped {
                reply(200, br#"{"token":"t0k3n"}"#.to_vec(), Vec::new())
            } else {
                reply(400, path.as_bytes().to_vec(), Vec::new())
            };
        }
        if auth != Some("Bearer t0k3n") {
            let challenge = format!(
                r#"Bearer realm="http://127.0.0.1:{port}/token",service="scripted",scope="repository:acme/demo:pull""#
            );
            return reply(
                401,
                b"{}".to_vec(),
                vec![("WWW-Authenticate".into(), challenge)],
            );
        }
        if path.contains("/manifests/") {
            Reply {
                content_type: "application/vnd.oci.image.manifest.v1+json".into(),
                ..reply(200, manifest.clone().into_bytes(), Vec::new())
            }
        } else if path.contains("/blobs/") {
            reply(200, layer.clone(), Vec::new())
        } else {
            reply(200, b"{}".to_vec(), Vec::new())
        }
    });
    port.store(server.port, std::sync::atomic::Ordering::SeqCst);
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let consumer = consumer(&[("demo", &url, None)]);
    let b = compose_json(consumer.path(), &home, &[]);
    assert_eq!(b["terraform"][0]["name"], "demo-net");
    assert!(token_asks.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[test]
fn one_run_over_every_context_loads_one_published_blueprint() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let v1 = format!("oci://{}/acme/demo:v1", reg.host());
    let v2 = format!("oci://{}/acme/demo:v2", reg.host());
    push(publisher.path(), &home, &v1);
    push(publisher.path(), &home, &v2);
    let project = consumer(&[("demo", &v1, None)]);
    write(
        project.path(),
        "contexts/prod/blueprint.yaml",
        format!("{BLUEPRINT_HEAD}sources:\n  - name: demo\n    url: {v2}\n"),
    );
    write(
        project.path(),
        "contexts/staging/blueprint.yaml",
        format!("{BLUEPRINT_HEAD}sources:\n  - name: demo\n    url: {v1}\n"),
    );
    let out = run(
        bpc(project.path(), &home).args(["compose", "--all-contexts", "--out", "out"]),
        false,
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "context `prod` is built on {v2}, but this run loaded {v1}"
        )),
        "{err}"
    );
    assert!(project.path().join("out/staging.yaml").is_file());
    assert!(project.path().join("out/local.yaml").is_file());
    // On its own, prod composes with its own blueprint.
    run(
        bpc(project.path(), &home).args(["compose", "--context", "prod"]),
        true,
    );
}
