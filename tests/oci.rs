//! Projects built on published blueprints (docs/semantics.md S14), against a real
//! registry: Debian's `docker-registry` (distribution 2.8) started on a free
//! 127.0.0.1 port. Where it is not installed these tests say so loudly and pass.

pub mod support;

use crate::common::Output;
use bpc::oci::registry::{self, Artifact};
use bpc::oci::{AuthEnv, Reference};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;
use support::*;

/// `bpc push oci://<host>/<repo>:<tag>` from `project`; returns the printed digest.
#[track_caller]
fn push(project: &std::path::Path, home: &Home, url: &str) -> String {
    let text = Test::in_project(project)
        .home(home)
        .args(["push", url])
        .run()
        .stdout;
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
    let out = Test::in_project(project)
        .home(home)
        .args(["compose", "--format", "json"])
        .args(extra.iter().copied())
        .run();
    serde_json::from_str(&out.stdout).expect("JSON blueprint")
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

/// The error `message` at the `url:` line of source `name` in the consumer's
/// `contexts/local/blueprint.yaml`, with `help` if any, as bpc prints it.
fn at_source(name: &str, url: &str, message: &str, help: Option<&str>) -> String {
    let carets = "^".repeat(url.len());
    let help = help.map_or(String::new(), |h| format!("  = help: {h}\n"));
    format!(
        "error: {message}\n \
         --> contexts/local/blueprint.yaml:7:10\n  \
         |\n\
         7 |     url: {url}\n  \
         |          {carets} this source\n  \
         |\n  \
         = note: source `{name}` of contexts/local/blueprint.yaml\n\
         {help}\n"
    )
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
    let with_modes: Vec<_> = entries.iter().map(|(n, d)| (*n, *d, 0o644)).collect();
    push_raw_with_modes(reference, &with_modes);
}

/// As [`push_raw`], each entry with its mode.
fn push_raw_with_modes(reference: &str, entries: &[(&str, &[u8], u32)]) {
    let mut tar = Vec::new();
    for (name, data, mode) in entries {
        let mut header = tar::Header::new_gnu();
        // Written byte by byte: the tar crate refuses `..` in names, as it should.
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(*mode);
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
    let out = Test::in_project(publisher.path())
        .home(&home)
        .args(["bundle", "--tag", "v1.0.0", "-o", "dist/"])
        .run();
    // The same digest on every run: the bundle is reproducible.
    assert_eq!(
        out.stdout,
        "Blueprint bundled successfully: dist/demo-v1.0.0.tar.gz (6 files, \
         sha256:945f90c90597b2cecdffda85876f11cc86487fdfaea9a776d94b1c4f235a3646)\n"
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
    let out = Test::in_project(consumer.path())
        .home(&home)
        .args(["eval", "democfg.workers"])
        .run();
    assert_eq!(out.stdout.trim(), "6");
    let out = Test::in_project(consumer.path())
        .home(&home)
        .args(["show", "values"])
        .run();
    assert_eq!(
        out.stdout,
        indoc::indoc! {"
        size: 3
        dev: true
        platform: docker
        workstation:
          runtime: docker
          services:
            dns: true
            git: true
            registries: true
          arch: amd64
        dns:
          domain: test
        cluster:
          driver: talos
          controlplanes:
            nodes: {}
          workers:
            nodes: {}
    "}
    );
    Test::in_project(consumer.path())
        .home(&home)
        .args(["render", "--out", "out"])
        .run();
    assert!(consumer
        .path()
        .join("out/terraform/demo-net/terraform.tfvars.json")
        .is_file());
    Test::in_project(consumer.path())
        .home(&home)
        .args(["explain", "terraform.demo-net.inputs.workers"])
        .run();
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
    let host = reg.host();
    drop(reg);

    // The registry is gone: the cache answers, offline or not.
    assert_eq!(compose_json(consumer.path(), &home, &["--offline"]), first);
    assert_eq!(compose_json(consumer.path(), &home, &[]), first);
    // NO_CACHE asks the registry again, which is gone.
    let out = Test::in_project(consumer.path())
        .home(&home)
        .args(["compose"])
        .env("NO_CACHE", "true")
        .failure()
        .run();
    assert_eq!(
        out.stderr,
        at_source(
            "demo",
            &url,
            &format!(
                "failed to pull {url}: error sending request for url \
                 (http://{host}/v2/acme/demo/manifests/v1): client error (Connect): tcp \
                 connect error: Connection refused (os error 111)"
            ),
            None
        )
    );
    // --offline with nothing cached says what is missing and never connects.
    let out = Test::in_project(fresh.path())
        .home(&home)
        .args(["compose", "--offline"])
        .failure()
        .run();
    let cache = format!(".windsor/cache/oci/{}_acme_demo_v1", host.replace(':', "_"));
    assert_eq!(
        out.stderr,
        at_source(
            "demo",
            &url,
            &format!(
                "{url} is not in the cache ({cache} has no artifact.tar) and --offline \
                 forbids pulling it"
            ),
            Some("run once without --offline (or `windsor init`) to pull it into the cache")
        )
    );
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
    let bundled = Test::in_project(publisher.path())
        .home(&home)
        .args(["bundle", "--tag", "v1", "-o", "demo.tar.gz"])
        .run();
    let digest = bundled
        .stdout
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
    let corrupted = registry::sha256(&bytes);
    std::fs::write(&blob, bytes).unwrap();

    let consumer = consumer(&[("demo", &url, None)]);
    let out = Test::in_project(consumer.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run();
    let err = out.stderr;
    // Refused while streaming (the client checks as it reads) or after: either way
    // the message names the digest the manifest promised and the one the bytes have.
    let refused = |reason: &str| {
        at_source(
            "demo",
            &url,
            &format!("failed to pull {url}: failed to read layer data: {reason}"),
            None,
        )
    };
    let streaming = refused(&format!(
        "Invalid digest. Expected {digest}, got {corrupted}"
    ));
    let after = refused(&format!(
        "digest mismatch: the layer's bytes hash to {corrupted}, the manifest says {digest}"
    ));
    assert!(err == streaming || err == after, "{err}");
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
    let out = Test::in_project(publisher.path())
        .home(&home)
        .args(["push", &url])
        .failure()
        .run();
    let host = reg.host();
    // Worded as a refused pull is.
    let refused = format!(
        "error: failed to push {url}: the registry {host} refused access (Not authorized: url \
         http://{host}/v2/acme/demo/blobs/uploads/)\n"
    );
    assert_eq!(
        out.stderr,
        format!(
            "{refused}= help: credentials were looked for in: [home]/config.json (absent); \
             [home]/.config/containers/auth.json (absent); none matched, so the request was \
             anonymous; log in with `docker login {host}`\n\n"
        )
    );

    home.login(&reg.host(), "bpc", "wrong");
    let out = Test::in_project(publisher.path())
        .home(&home)
        .args(["push", &url])
        .failure()
        .run();
    assert_eq!(
        out.stderr,
        format!(
            "{refused}= help: credentials were looked for in: [home]/config.json (auths, \
             credHelpers, credsStore); the registry refused the ones from [home]/config.json \
             entry `{host}`; log in with `docker login {host}`\n\n"
        )
    );

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
    let out = Test::in_project(fresh.path())
        .home(&helped)
        .args(["compose", "--format", "json"])
        .env("PATH", &path)
        .run();
    let helped_blueprint: Value = serde_json::from_str(&out.stdout).expect("JSON blueprint");
    assert_eq!(without_sources(helped_blueprint), without_sources(b));

    let stranger = Home::new();
    let fresh = support::consumer(&[("demo", &url, None)]);
    let out = Test::in_project(fresh.path())
        .home(&stranger)
        .args(["compose"])
        .failure()
        .run();
    let host = reg.host();
    assert_eq!(
        out.stderr,
        at_source(
            "demo",
            &url,
            &format!(
                "failed to pull {url}: the registry {host} refused access (Not authorized: url \
                 http://{host}/v2/acme/demo/manifests/v1)"
            ),
            Some(
                "credentials were looked for in: [home]/config.json (absent); \
                 [home]/.config/containers/auth.json (absent); none matched, so the request \
                 was anonymous"
            )
        )
    );
}

#[test]
fn a_creds_store_that_has_nothing_for_a_key_is_no_credential() {
    let reg = crate::registry!(true);
    let host = reg.host();
    let publisher = publisher("demo", &[]);
    let url = format!("oci://{host}/acme/demo:v1");
    let pusher = Home::new();
    pusher.login(&host, "bpc", "s3cret");
    push(publisher.path(), &pusher, &url);

    // Docker Desktop's way: `credsStore`, and `auths` entries left empty. The store
    // knows the registry, not the repository: the repository key is not found, the
    // registry key is.
    let home = Home::new();
    let path = home.credential_helper(
        "bpcstore",
        &format!(
            "if [ \"$server\" = \"{host}\" ]; then\n  \
             printf '{{\"ServerURL\":\"%s\",\"Username\":\"bpc\",\"Secret\":\"s3cret\"}}' \"$server\"\n\
             else\n  echo 'credentials not found in native keychain'\n  exit 1\nfi\n"
        ),
    );
    write(
        home.0.path(),
        "config.json",
        format!(r#"{{"auths":{{"{host}":{{}}}},"credsStore":"bpcstore"}}"#),
    );
    let project = consumer(&[("demo", &url, None)]);
    let out = Test::in_project(project.path())
        .home(&home)
        .args(["compose", "--format", "json"])
        .env("PATH", &path)
        .run();
    let b: Value = serde_json::from_str(&out.stdout).expect("JSON blueprint");
    assert_eq!(b["terraform"][0]["name"], "demo-net");
    // Pushing asks the store the same way.
    Test::in_project(publisher.path())
        .home(&home)
        .args(["push", &format!("oci://{host}/acme/other:v1")])
        .env("PATH", &path)
        .run();

    // A store with nothing at all: the pull is anonymous, as a public registry wants.
    let public = crate::registry!(false);
    let public_url = format!("oci://{}/acme/demo:v1", public.host());
    push(publisher.path(), &Home::new(), &public_url);
    let empty = Home::new();
    let path = empty.credential_helper(
        "bpcempty",
        "echo 'credentials not found in native keychain'\nexit 1\n",
    );
    write(
        empty.0.path(),
        "config.json",
        r#"{"credsStore":"bpcempty"}"#,
    );
    let project = consumer(&[("demo", &public_url, None)]);
    Test::in_project(project.path())
        .home(&empty)
        .args(["compose"])
        .env("PATH", &path)
        .run();

    // A store that fails: one line of what it said, never the rest (it may hold a
    // secret).
    let broken = Home::new();
    let path = broken.credential_helper(
        "bpcbroken",
        "printf '\\033[31mkeychain locked\\033[0m\\nSecret: hunter2\\n'\n\
         echo 'token=abc123' >&2\nexit 3\n",
    );
    write(
        broken.0.path(),
        "config.json",
        r#"{"credsStore":"bpcbroken"}"#,
    );
    let project = consumer(&[("demo", &public_url, None)]);
    let out = Test::in_project(project.path())
        .home(&broken)
        .args(["compose"])
        .env("PATH", &path)
        .failure()
        .run();
    let err = out.stderr;
    assert!(!err.contains("hunter2") && !err.contains("abc123"), "{err}");
    assert_eq!(
        err,
        at_source(
            "demo",
            &public_url,
            &format!(
                "cannot read credentials for `{}/acme/demo` from [home]/config.json: the \
                 credential helper docker-credential-bpcbroken failed (exit status: 3): \
                 keychain locked",
                public.host()
            ),
            None
        )
    );
}

/// `text` with a process's own `/proc/<pid>/` written `/proc/[pid]/`.
fn without_pid(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/proc/") {
        out.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("[pid]");
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(unix)]
#[test]
fn bundle_and_push_refuse_links_that_lead_out_of_the_project() {
    let home = Home::new();
    home.login("127.0.0.1:5000", "bpc", "s3cret");
    let publisher = publisher("demo", &[]);
    let root = publisher.path();
    // A link that stays inside is followed: its file is bundled.
    std::os::unix::fs::symlink("net/variables.tf", root.join("terraform/demo/shared.tf")).unwrap();
    let out = Test::in_project(root)
        .home(&home)
        .args(["bundle", "--tag", "v1", "-o", "inside.tar.gz"])
        .run();
    assert!(out.stdout.contains("(7 files, "), "{}", out.stdout);

    let config = home.0.path().join("config.json");
    // Each target is shown resolved, the home as `[home]`, a pid as `[pid]`.
    for (link, target, shown_target, confined_to) in [
        (
            "contexts/_template/facets/creds.yaml",
            config.as_path(),
            "[home]/config.json",
            "/contexts/_template",
        ),
        (
            "terraform/demo/net/env.tf",
            std::path::Path::new("/proc/self/environ"),
            "/proc/[pid]/environ",
            "",
        ),
    ] {
        std::os::unix::fs::symlink(target, root.join(link)).unwrap();
        let expected = format!(
            "error: [project]/{link} is a symbolic link to {shown_target}, outside \
             [project]{confined_to}: bundle and push publish only files inside it\n"
        );
        let out = Test::in_project(root)
            .home(&home)
            .args(["bundle", "--tag", "v1", "-o", "out.tar.gz"])
            .failure()
            .run();
        assert_eq!(without_pid(&out.stderr), expected);
        assert!(!root.join("out.tar.gz").exists());
        // Push reads the same files, and stops before it connects.
        let out = Test::in_project(root)
            .home(&home)
            .args(["push", "oci://127.0.0.1:5000/acme/demo:v1"])
            .failure()
            .run();
        assert_eq!(without_pid(&out.stderr), expected);
        std::fs::remove_file(root.join(link)).unwrap();
    }
}

#[test]
fn the_bundle_file_is_named_by_plain_names_only() {
    let home = Home::new();
    let publisher = publisher("demo", &[]);
    let root = publisher.path();
    let metadata = "contexts/_template/metadata.yaml";
    let refused = |from: &str, what: &str, value: &str, holds: &str| {
        format!(
            "error: {from}: the {what} `{value}` cannot name the bundle file: it holds \
             {holds} (give a plain {what}, or name the file with -o FILE.tar.gz)\n"
        )
    };
    for (text, args, expected) in [
        (
            "name: ../../x\nversion: v1\n",
            vec![],
            refused(&format!("{metadata}:1:7"), "name", "../../x", "`/`"),
        ),
        (
            "name: /tmp/x\nversion: v1\n",
            vec![],
            refused(&format!("{metadata}:1:7"), "name", "/tmp/x", "`/`"),
        ),
        (
            "name: demo\nversion: 1/../../../x\n",
            vec![],
            refused(
                &format!("{metadata}:2:10"),
                "version",
                "1/../../../x",
                "`/`",
            ),
        ),
        (
            "name: demo\n",
            vec!["--tag", "../../x:v1"],
            refused("--tag", "name", "../../x", "`/`"),
        ),
        (
            "name: demo\n",
            vec!["--tag", "..\\..\\x"],
            refused("--tag", "version", "..\\..\\x", "`\\`"),
        ),
        (
            "name: \"demo\\x1b[2J\"\nversion: v1\n",
            vec![],
            refused(
                &format!("{metadata}:1:7"),
                "name",
                "demo",
                "the control character U+001B",
            ),
        ),
    ] {
        write(root, metadata, text);
        let out = Test::in_project(root)
            .home(&home)
            .args(["bundle", "-o", "dist/"])
            .args(args.iter().copied())
            .failure()
            .run();
        assert_eq!(out.stderr, expected, "{text}");
        // Nothing written, in -o or beside the project.
        assert!(!root.join("dist").exists());
        assert!(!root.join("../x-v1.tar.gz").exists());
    }
    // Named by -o, the file needs no plain name.
    write(root, metadata, "name: team/demo\nversion: v1\n");
    Test::in_project(root)
        .home(&home)
        .args(["bundle", "-o", "dist/demo.tar.gz"])
        .run();
    assert!(root.join("dist/demo.tar.gz").is_file());
}

#[test]
fn tar_entries_escaping_the_root_are_refused_before_anything_is_written() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let blueprint = format!("{BLUEPRINT_HEAD}metadata:\n  name: evil\n");
    for (tag, bad, why) in [
        (
            "dots",
            "../evil.yaml",
            "path contains directory traversal sequence",
        ),
        (
            "nested",
            "_template/../../evil.yaml",
            "path contains directory traversal sequence",
        ),
        ("abs", "/tmp/evil.yaml", "absolute paths are not allowed"),
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
        let out = Test::in_project(consumer.path())
            .home(&home)
            .args(["compose"])
            .failure()
            .run();
        assert_eq!(
            out.stderr,
            at_source(
                "evil",
                &url,
                &format!("failed to pull {url}: invalid path in tar archive: {why}: {bad}"),
                None
            )
        );
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
    let err = Test::in_project(c.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    let host = reg.host();
    assert_eq!(
        err,
        at_source(
            "demo",
            &missing,
            &format!(
                "failed to pull {missing}: the registry {host} has no tag `v9` in repository \
                 `acme/demo` (Registry error: url http://{host}/v2/acme/demo/manifests/v9, \
                 envelope: OCI API errors: [OCI API error: manifest unknown])"
            ),
            Some(
                "check the tag (it is required: there is no implicit `latest`) and the repository"
            )
        )
    );

    let untagged = format!("oci://{}/acme/demo", reg.host());
    let c = consumer(&[("demo", &untagged, None)]);
    let err = Test::in_project(c.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    assert_eq!(
        err,
        at_source(
            "demo",
            &untagged,
            &format!(
                "invalid OCI reference format, expected oci://registry/repository:tag: {untagged}"
            ),
            None
        )
    );

    // A layer without _template/ is not a blueprint.
    let bare = format!("oci://{}/acme/bare:v1", reg.host());
    push_raw(&bare, &[("blueprint.yaml", b"kind: Blueprint\n")]);
    let c = consumer(&[("bare", &bare, None)]);
    let err = Test::in_project(c.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    let cache = format!(".windsor/cache/oci/{}_acme_bare_v1", host.replace(':', "_"));
    assert_eq!(
        err,
        at_source(
            "bare",
            &bare,
            &format!(
                "{bare} is not a Windsor blueprint artifact: it has no _template/ directory \
                 ({cache} holds artifact.tar)"
            ),
            Some(
                "a blueprint artifact keeps its template under _template/ (what `windsor \
                 bundle` and `bpc bundle` write)"
            )
        )
    );

    // The template requires Windsor >=0.9.0.
    let c = consumer(&[("demo", &url, None)]);
    let err = Test::in_project(c.path())
        .home(&home)
        .args(["compose"])
        .env("BPC_WINDSOR_VERSION", "0.8.1")
        .failure()
        .run()
        .stderr;
    assert_eq!(
        err,
        at_source(
            "demo",
            &url,
            "demo:v1 is incompatible with this CLI (CLI version 0.8.1 does not satisfy \
             required constraint '>=0.9.0') — bpc answers cliVersion checks as Windsor 0.8.1",
            Some(
                "pin an older tag for this source, or set BPC_WINDSOR_VERSION to the Windsor \
                 version the project uses"
            )
        )
    );
    Test::in_project(c.path())
        .home(&home)
        .args(["compose"])
        .env("BPC_WINDSOR_VERSION", "0.9.3")
        .run();
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
    Test::in_project(publisher.path())
        .home(home)
        .args(["bundle", "--tag", "v1", "-o", "demo.tar.gz"])
        .run();
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
    let mut child = Test::in_project(consumer.path())
        .home(&home)
        .arg("compose")
        .command()
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
    let err = Test::in_project(consumer.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    assert_eq!(
        err,
        at_source(
            "demo",
            &url,
            &format!(
                "failed to pull {url}: its layer is 314572800 bytes, over the limit of 256 MiB"
            ),
            Some("docs/limits.md lists the limits of pulled artifacts")
        )
    );
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
    let out = Test::in_project(project.path())
        .home(&home)
        .args(["compose", "--all-contexts", "--out", "out"])
        .failure()
        .run();
    let carets = "^".repeat(v2.len());
    assert_eq!(
        out.stderr,
        format!(
            "== context `prod` ==\n\
             error: context `prod` is built on {v2}, but this run loaded {v1} (from context \
             `local`)\n \
             --> contexts/prod/blueprint.yaml:5:10\n  \
             |\n\
             5 |     url: {v2}\n  \
             |          {carets} another published blueprint\n  \
             |\n  \
             = help: compose that context on its own (--context), not in one run with the \
             others\n\n"
        )
    );
    assert_eq!(
        crate::common::untimed(&out.stdout),
        indoc::indoc! {"
            context  components  kustomizations  time  status
            local             1               1  [time]  ok
            prod              -               -  [time]  failed (1 error(s))
            staging           1               1  [time]  ok
            3 context(s): 2 ok, 1 failed
        "}
    );
    assert!(project.path().join("out/staging.yaml").is_file());
    assert!(project.path().join("out/local.yaml").is_file());
    // On its own, prod composes with its own blueprint.
    Test::in_project(project.path())
        .home(&home)
        .args(["compose", "--context", "prod"])
        .run();
}

/// A publisher of `demo` whose template has `extra` more facets, each with one
/// Terraform component: enough files that loading the pulled template takes a while.
fn publisher_with_facets(extra: usize) -> tempfile::TempDir {
    let project = publisher("demo", &[]);
    for i in 0..extra {
        write(
            project.path(),
            &format!("contexts/_template/facets/extra-{i:03}.yaml"),
            format!(
                "{FACET_HEAD}metadata:\n  name: extra-{i:03}\nterraform:\n  - name: extra-{i:03}\n    path: demo/net\n    inputs:\n      workers: {i}\n"
            ),
        );
    }
    project
}

/// Starts every run at once (a thread each), whatever their exit status, then waits
/// for them all.
fn at_once(runs: Vec<Test>) -> Vec<Output> {
    std::thread::scope(|scope| {
        let running: Vec<_> = runs
            .into_iter()
            .map(|run| scope.spawn(move || run.any_status().run()))
            .collect();
        running
            .into_iter()
            .map(|run| run.join().expect("bpc ends"))
            .collect()
    })
}

/// Why `out` is not a successful run printing one of `expected` (sources aside).
fn wrong(out: &Output, expected: &[&Value]) -> Option<String> {
    if !out.success() {
        return Some(format!("exit status {:?}: {}", out.status, out.stderr));
    }
    match serde_json::from_str::<Value>(&out.stdout) {
        Ok(b) if expected.contains(&&without_sources(b.clone())) => None,
        Ok(b) => Some(format!(
            "exit 0 with another blueprint: {} terraform components",
            b["terraform"].as_array().map_or(0, Vec::len)
        )),
        Err(e) => Some(format!("exit 0 with no JSON blueprint: {e}")),
    }
}

/// How many of `failures` exited 0 (with a wrong blueprint).
fn exit_0(failures: &[String]) -> usize {
    failures.iter().filter(|f| f.starts_with("exit 0")).count()
}

/// Rounds of runs started at once in [`runs_started_at_once_on_an_empty_cache_all_compose_the_published_blueprint`]
/// and the NO_CACHE test after it; enough that a cache entry replaced under a
/// reader shows.
const ROUNDS: usize = 20;
const AT_ONCE: usize = 4;

#[test]
fn runs_started_at_once_on_an_empty_cache_all_compose_the_published_blueprint() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let publisher = publisher_with_facets(40);
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    push(publisher.path(), &home, &url);
    let expected = without_sources(compose_json(publisher.path(), &home, &[]));
    assert_eq!(expected["terraform"].as_array().map(Vec::len), Some(41));

    let mut failures = Vec::new();
    for _ in 0..ROUNDS {
        let project = consumer(&[("demo", &url, None)]);
        let runs = (0..AT_ONCE)
            .map(|_| {
                Test::in_project(project.path())
                    .home(&home)
                    .args(["compose", "--format", "json"])
            })
            .collect();
        failures.extend(at_once(runs).iter().filter_map(|o| wrong(o, &[&expected])));
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed ({} of them with exit 0); the first: {}",
        failures.len(),
        ROUNDS * AT_ONCE,
        exit_0(&failures),
        failures[0]
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_run_reading_the_cache_waits_while_another_process_writes_the_entry() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    push(publisher("demo", &[]).path(), &home, &url);
    let project = consumer(&[("demo", &url, None)]);
    let first = compose_json(project.path(), &home, &[]);
    let cache = cache_dir(project.path(), &reg.host(), "acme/demo", "v1");
    let key = cache
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let lock = project
        .path()
        .join(format!(".windsor/cache/oci/.bpc/{key}.lock"));
    assert!(lock.is_file());

    // util-linux's flock holds the entry's lock as a writer does, for 1.5 s after
    // it says so.
    let started = project.path().join("holding");
    let mut writer = std::process::Command::new("flock")
        .arg("--exclusive")
        .arg(&lock)
        .arg("-c")
        .arg(format!("touch '{}'; sleep 1.5", started.display()))
        .spawn()
        .expect("flock runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "flock never held the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let reading = std::time::Instant::now();
    let again = compose_json(project.path(), &home, &["--offline"]);
    let waited = reading.elapsed();
    assert!(writer.wait().expect("flock ends").success());
    assert_eq!(again, first);
    assert!(
        waited >= std::time::Duration::from_millis(1200),
        "the run read the entry while it was locked for writing (after {waited:?})"
    );
}

#[test]
fn no_cache_runs_at_once_after_the_tag_moved_all_compose_a_whole_blueprint() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let url = format!("oci://{}/acme/demo:v1", reg.host());
    let publishers = [publisher_with_facets(40), publisher_with_facets(30)];
    let expected: Vec<Value> = publishers
        .iter()
        .map(|p| without_sources(compose_json(p.path(), &home, &[])))
        .collect();
    push(publishers[1].path(), &home, &url);
    let project = consumer(&[("demo", &url, None)]);
    compose_json(project.path(), &home, &[]);
    let cache = cache_dir(project.path(), &reg.host(), "acme/demo", "v1");

    let mut failures = Vec::new();
    for round in 0..ROUNDS {
        // The tag moves to the other template before every round.
        let (now, before) = (round % 2, (round + 1) % 2);
        push(publishers[now].path(), &home, &url);
        let runs = (0..AT_ONCE)
            .map(|i| {
                let run = Test::in_project(project.path())
                    .home(&home)
                    .args(["compose", "--format", "json"]);
                if i % 2 == 0 {
                    run.env("NO_CACHE", "1")
                } else {
                    run
                }
            })
            .collect();
        for (i, out) in at_once(runs).iter().enumerate() {
            // A run that pulls sees the moved tag; one that reads the cache sees
            // either template, but always a whole one.
            let allowed = if i % 2 == 0 {
                vec![&expected[now]]
            } else {
                vec![&expected[now], &expected[before]]
            };
            failures.extend(wrong(out, &allowed));
        }
        let entry = compose_json(project.path(), &home, &["--offline"]);
        if without_sources(entry) != expected[now] {
            failures.push(format!(
                "round {round}: the cache does not hold the moved tag"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed ({} of them with exit 0); the first: {}",
        failures.len(),
        ROUNDS * (AT_ONCE + 1),
        exit_0(&failures),
        failures[0]
    );
    assert!(cache.join("artifact.tar").is_file());
    // Every replaced entry and staging directory is gone; the lock file stays.
    let private: Vec<String> = std::fs::read_dir(project.path().join(".windsor/cache/oci/.bpc"))
        .expect("the lock directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    let key = cache.file_name().unwrap_or_default().to_string_lossy();
    assert_eq!(private, [format!("{key}.lock")]);
}

#[test]
fn a_registry_error_body_is_shown_short_and_without_terminal_escapes() {
    let home = Home::new();
    let server = Scripted::start(|_, _| {
        let mut body = b"\x1b]0;owned\x07\x1b[31mbroken\x1b[0m".to_vec();
        body.extend(std::iter::repeat_n(b'x', 1 << 20));
        body.extend(b"\nthe end");
        Reply {
            status: 500,
            content_type: "text/plain".into(),
            body,
            stall_after: None,
            headers: Vec::new(),
        }
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let project = consumer(&[("demo", &url, None)]);
    let err = Test::in_project(project.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    assert_eq!(
        err,
        at_source(
            "demo",
            &url,
            &format!(
                "failed to pull {url}: Server error: url \
                 http://127.0.0.1:{}/v2/acme/demo/manifests/v1, code: 500, message: broken{}…",
                server.port,
                "x".repeat(registry::SHOWN_BODY - "broken".len())
            ),
            None
        )
    );

    // The same of a blob's error reply.
    let server = scripted(bundle_of_demo(&home), None, |_| {
        let mut body = b"\x1b[2Jgone".to_vec();
        body.extend(std::iter::repeat_n(b'y', 1 << 20));
        Reply {
            status: 503,
            content_type: "text/plain".into(),
            body,
            stall_after: None,
            headers: Vec::new(),
        }
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let project = consumer(&[("demo", &url, None)]);
    let err = Test::in_project(project.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run()
        .stderr;
    let prefix = format!(
        "error: failed to pull {url}: failed to read layer data: Server error: url \
         http://127.0.0.1:{}/v2/acme/demo/blobs/sha256:",
        server.port
    );
    assert!(err.starts_with(&prefix), "{err}");
    let message = format!(
        ", code: 503, message: gone{}…\n",
        "y".repeat(registry::SHOWN_BODY - "gone".len())
    );
    assert!(err.contains(&message), "{err}");
    assert!(err.len() < 2000 && !err.contains('\x1b'), "{err}");
}

#[cfg(unix)]
#[test]
fn a_cached_metadata_yaml_is_read_only_as_a_bounded_regular_file() {
    let home = Home::new();
    let url = "oci://127.0.0.1:5000/acme/demo:v1";
    let project = consumer(&[("demo", url, None)]);
    let cache = cache_dir(project.path(), "127.0.0.1:5000", "acme/demo", "v1");
    write(&cache, "artifact.tar", "a complete entry");
    write(
        &cache,
        "_template/blueprint.yaml",
        format!("{BLUEPRINT_HEAD}metadata:\n  name: demo\n"),
    );
    let metadata = cache.join("metadata.yaml");
    let shown = ".windsor/cache/oci/127.0.0.1_5000_acme_demo_v1/metadata.yaml";
    let refused = |why: &str| at_source("demo", url, &format!("[project]/{shown} {why}"), None);
    // Each read of metadata.yaml could wait forever if it followed what it must not.
    let offline = || {
        Test::in_project(project.path())
            .home(&home)
            .args(["compose", "--offline"])
            .timeout(Duration::from_secs(30))
    };

    // A FIFO would wait for a writer forever.
    let made = std::process::Command::new("mkfifo")
        .arg(&metadata)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let not_regular = refused("is not a regular file; the cache holds only files");
    offline().failure().stderr(&not_regular).run();

    // A link (here to a device that never ends) is not followed.
    std::fs::remove_file(&metadata).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &metadata).unwrap();
    offline().failure().stderr(&not_regular).run();

    // A regular file over the limit.
    std::fs::remove_file(&metadata).unwrap();
    let big = format!("name: demo\ndescription: {}\n", "x".repeat(1 << 20));
    std::fs::write(&metadata, &big).unwrap();
    offline()
        .failure()
        .stderr(refused(&format!(
            "is {} bytes, over the 1024 KiB a metadata.yaml may have",
            big.len()
        )))
        .run();

    // Within it, the entry composes.
    std::fs::write(&metadata, "name: demo\n").unwrap();
    offline().run();
}

#[cfg(unix)]
#[test]
fn cached_files_are_never_writable_by_others() {
    use std::os::unix::fs::PermissionsExt;
    let reg = crate::registry!(false);
    let home = Home::new();
    let url = format!("oci://{}/acme/modes:v1", reg.host());
    let blueprint = format!("{BLUEPRINT_HEAD}metadata:\n  name: modes\n");
    push_raw_with_modes(
        &url,
        &[
            ("metadata.yaml", b"name: modes\n", 0o666),
            ("_template/blueprint.yaml", blueprint.as_bytes(), 0o777),
            ("terraform/net/main.tf", b"", 0o646),
            ("terraform/net/run.sh", b"", 0o775),
        ],
    );
    let project = consumer(&[("modes", &url, None)]);
    Test::in_project(project.path())
        .home(&home)
        .args(["compose"])
        .run();
    let cache = cache_dir(project.path(), &reg.host(), "acme/modes", "v1");
    let mode = |p: &str| {
        std::fs::metadata(cache.join(p))
            .expect("cached")
            .permissions()
            .mode()
            & 0o777
    };
    let modes: Vec<(&str, u32)> = [
        "",
        "artifact.tar",
        "metadata.yaml",
        "_template",
        "_template/blueprint.yaml",
        "terraform/net",
        "terraform/net/main.tf",
        "terraform/net/run.sh",
    ]
    .into_iter()
    .map(|p| (p, mode(p)))
    .collect();
    assert_eq!(
        modes,
        [
            ("", 0o755),
            ("artifact.tar", 0o644),
            ("metadata.yaml", 0o644),
            ("_template", 0o755),
            ("_template/blueprint.yaml", 0o755),
            ("terraform/net", 0o755),
            ("terraform/net/main.tf", 0o644),
            ("terraform/net/run.sh", 0o755),
        ]
    );
}

#[test]
fn a_reference_holding_credentials_is_refused_without_repeating_them() {
    let home = Home::new();
    let url = "oci://bpc:hunter2@127.0.0.1:9/acme/demo:v1";
    let refused = "invalid OCI reference oci://***@127.0.0.1:9/acme/demo:v1: credentials in the \
                   URL are refused (they would end up in the cache's directory name and in \
                   messages); log in with `docker login 127.0.0.1:9` instead";
    let project = consumer(&[("demo", url, None)]);
    let out = Test::in_project(project.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run();
    assert_eq!(
        out.stderr,
        format!(
            "error: {refused}\n= note: source `demo` of contexts/local/blueprint.yaml:7:10\n\n"
        )
    );
    assert!(!project.path().join(".windsor/cache").exists());
    let publisher = publisher("demo", &[]);
    let out = Test::in_project(publisher.path())
        .home(&home)
        .args(["push", url])
        .failure()
        .run();
    assert_eq!(out.stderr, format!("error: {refused}\n"));
}

#[test]
fn a_manifest_over_the_size_limit_is_refused_while_it_streams() {
    let home = Home::new();
    // A valid manifest, over 4 MiB by one annotation.
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.windsorcli.blueprint.v1+json",
                   "size": 2, "digest": registry::sha256(b"{}")},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "size": 2, "digest": registry::sha256(b"{}")}],
        "annotations": {"padding": "x".repeat(5 << 20)},
    })
    .to_string()
    .into_bytes();
    let size = manifest.len();
    for (told, why) in [
        (
            true,
            format!("its manifest is {size} bytes, over the limit of 4 MiB"),
        ),
        (
            false,
            "its manifest is more than 4194304 bytes, over the limit of 4 MiB".to_string(),
        ),
    ] {
        let body = manifest.clone();
        let server = Scripted::start(move |path, _| Reply {
            status: if path.contains("/manifests/") {
                200
            } else {
                404
            },
            content_type: "application/vnd.oci.image.manifest.v1+json".into(),
            body: if path.contains("/manifests/") {
                body.clone()
            } else {
                b"{}".to_vec()
            },
            stall_after: None,
            headers: if told {
                Vec::new()
            } else {
                vec![("Transfer-Encoding".into(), "chunked".into())]
            },
        });
        let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
        let project = consumer(&[("demo", &url, None)]);
        let err = Test::in_project(project.path())
            .home(&home)
            .args(["compose"])
            .failure()
            .run()
            .stderr;
        assert_eq!(
            err,
            at_source(
                "demo",
                &url,
                &format!("failed to pull {url}: {why}"),
                Some("docs/limits.md lists the limits of pulled artifacts")
            )
        );
    }
}

#[test]
fn a_token_reply_over_the_limit_is_no_token() {
    let home = Home::new();
    let port = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(0));
    let seen = port.clone();
    // The realm hands out a token, in a reply padded past 64 KiB.
    let server = Scripted::start(move |path, auth| {
        let port = seen.load(std::sync::atomic::Ordering::SeqCst);
        let reply = |status: u16, body: Vec<u8>, headers: Vec<(String, String)>| Reply {
            status,
            content_type: "application/json".into(),
            body,
            stall_after: None,
            headers,
        };
        if path.starts_with("/token") {
            let padded = serde_json::json!({"token": "t0k3n", "padding": "x".repeat(70_000)});
            return reply(200, padded.to_string().into_bytes(), Vec::new());
        }
        if auth == Some("Bearer t0k3n") {
            return reply(500, b"the token must not be taken".to_vec(), Vec::new());
        }
        let challenge = format!(r#"Bearer realm="http://127.0.0.1:{port}/token",service="s""#);
        reply(
            401,
            b"{}".to_vec(),
            vec![("WWW-Authenticate".into(), challenge)],
        )
    });
    port.store(server.port, std::sync::atomic::Ordering::SeqCst);
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let project = consumer(&[("demo", &url, None)]);
    let out = Test::in_project(project.path())
        .home(&home)
        .args(["compose"])
        .failure()
        .run();
    assert_eq!(
        out.stderr,
        at_source(
            "demo",
            &url,
            &format!(
                "failed to pull {url}: the registry 127.0.0.1:{} refused access (Not \
                 authorized: url http://127.0.0.1:{}/v2/acme/demo/manifests/v1)",
                server.port, server.port
            ),
            Some(
                "credentials were looked for in: [home]/config.json (absent); \
                 [home]/.config/containers/auth.json (absent); none matched, so the request \
                 was anonymous"
            )
        )
    );
}

/// All the pulls of one run share one budget of unpacked bytes: two blueprints that
/// each unpack to 1.5 MiB (from a few KiB of layer) pass a budget of 4 MiB and are
/// refused by one of 2 MiB, at the source whose pull crossed it.
#[test]
fn the_pulls_of_one_run_share_one_budget_of_unpacked_bytes() {
    let reg = crate::registry!(false);
    let home = Home::new();
    let padding = "a few bytes that compress well\n".repeat(50_000);
    let mut urls = Vec::new();
    for name in ["platform", "app"] {
        let url = format!("oci://{}/acme/{name}:v1", reg.host());
        let project = publisher(name, &[]);
        support::write(project.path(), "contexts/_template/padding.txt", &padding);
        push(project.path(), &home, &url);
        urls.push(url);
    }
    let both = || consumer(&[("platform", &urls[0], None), ("app", &urls[1], None)]);
    let roomy = both();
    let out = Test::in_project(roomy.path())
        .home(&home)
        .args(["compose", "--format", "json"])
        .env("BPC_MAX_PULL_MIB", "4")
        .run();
    assert!(out.stdout.contains("platform-net"));
    let tight = both();
    let out = Test::in_project(tight.path())
        .home(&home)
        .args(["compose"])
        .env("BPC_MAX_PULL_MIB", "2")
        .failure()
        .run();
    assert!(
        out.stderr.contains(
            "unpack to more than 2 MiB in all, the limit of one run (BPC_MAX_PULL_MIB raises it)"
        ),
        "{}",
        out.stderr
    );
}

/// A layer that unpacks to `zeros` MiB more than the demo blueprint: the demo
/// bundle's tar, then a file `padding.bin` (not a kept path) of zeros, in gzip members
/// of one MiB each, so that the layer itself stays a few hundred KiB.
fn demo_layer_padded(home: &Home, zeros: usize) -> Vec<u8> {
    let mut tar = gunzip(&bundle_of_demo(home));
    while tar.len() >= 512 && tar[tar.len() - 512..].iter().all(|b| *b == 0) {
        tar.truncate(tar.len() - 512);
    }
    let mut header = tar::Header::new_gnu();
    header.set_path("padding.bin").unwrap();
    header.set_size((zeros as u64) << 20);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    tar.extend_from_slice(header.as_bytes());
    let gzip = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, bytes).expect("gzip");
        gz.finish().expect("gzip")
    };
    let mut layer = gzip(&tar);
    let mebibyte = gzip(&vec![0u8; 1 << 20]);
    for _ in 0..zeros {
        layer.extend_from_slice(&mebibyte);
    }
    // The end of the archive: two blocks of zeros.
    layer.extend_from_slice(&gzip(&[0u8; 1024]));
    layer
}

/// The layer streams to disk and unpacks from there: a blueprint whose layer unpacks
/// to 384 MiB composes in a process whose heap may not pass 192 MiB.
#[cfg(target_os = "linux")]
#[test]
fn a_layer_unpacks_from_disk_not_from_memory() {
    let home = Home::new();
    let layer = demo_layer_padded(&home, 384);
    let server = scripted(layer, None, |layer| Reply {
        status: 200,
        content_type: "application/octet-stream".into(),
        body: layer.to_vec(),
        stall_after: None,
        headers: Vec::new(),
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let consumer = consumer(&[("demo", &url, None)]);
    let out = Test::in_project(consumer.path())
        .home(&home)
        .args(["compose", "--format", "json"])
        .memory_limit(192 << 20)
        .run();
    let blueprint: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(blueprint["terraform"][0]["name"], "demo-net");
    let cache = cache_dir(
        consumer.path(),
        &format!("127.0.0.1:{}", server.port),
        "acme/demo",
        "v1",
    );
    let tar = std::fs::metadata(cache.join("artifact.tar")).expect("artifact.tar");
    assert!(tar.len() > 384 << 20, "artifact.tar is {} bytes", tar.len());
    assert!(!cache.join("padding.bin").exists());
}

fn reply(status: u16, body: Vec<u8>, headers: &[(&str, &str)]) -> Reply {
    Reply {
        status,
        content_type: "application/json".into(),
        body,
        stall_after: None,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    }
}

/// A push reads a registry's error reply as a pull does: the first 64 KiB at most
/// (a reply that promises 8 MiB and stops sending after 128 KiB is not waited on),
/// shown on one line, cut short, without terminal escapes.
#[test]
fn a_push_reads_a_registry_error_reply_bounded_and_shows_it_short() {
    let home = Home::new();
    let server = Scripted::start(|path, _| {
        if path.contains("/blobs/uploads/") {
            let mut body = b"\x1b]0;owned\x07\x1b[31mbroken\x1b[0m".to_vec();
            body.extend(std::iter::repeat_n(b'x', 8 << 20));
            Reply {
                stall_after: Some(128 << 10),
                ..reply(500, body, &[])
            }
        } else if path.contains("/blobs/") {
            reply(404, Vec::new(), &[])
        } else {
            reply(200, b"{}".to_vec(), &[])
        }
    });
    let url = format!("oci://127.0.0.1:{}/acme/demo:v1", server.port);
    let publisher = publisher("demo", &[]);
    Test::in_project(publisher.path())
        .home(&home)
        .args(["push", &url])
        .timeout(Duration::from_secs(30))
        .failure()
        .stderr(format!(
            "error: failed to push {url}: Server error: url \
             http://127.0.0.1:{}/v2/acme/demo/blobs/uploads/, code: 500, message: broken{}…\n\n",
            server.port,
            "x".repeat(registry::SHOWN_BODY - "broken".len())
        ))
        .run();
}

/// The registry gets the credentials; an upload location on another host does not.
#[test]
fn a_push_sends_credentials_to_the_registry_only() {
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>;
    let seen: Seen = Default::default();
    let record = |seen: &Seen, host: &str, path: &str, auth: Option<&str>| {
        let entry = (format!("{host}{path}"), auth.map(str::to_string));
        seen.lock().unwrap().push(entry);
    };
    let (elsewhere_seen, registry_seen) = (seen.clone(), seen.clone());
    let elsewhere = Scripted::start(move |path, auth| {
        record(&elsewhere_seen, "elsewhere", path, auth);
        reply(201, Vec::new(), &[])
    });
    let upload_at = format!("http://127.0.0.1:{}/upload/1", elsewhere.port);
    let registry = Scripted::start(move |path, auth| {
        if path == "/v2/" && auth.is_none() {
            return reply(
                401,
                Vec::new(),
                &[("WWW-Authenticate", "Basic realm=\"r\"")],
            );
        }
        record(&registry_seen, "registry", path, auth);
        if path.contains("/blobs/uploads/") {
            reply(202, Vec::new(), &[("Location", upload_at.as_str())])
        } else if path.contains("/blobs/") {
            reply(404, Vec::new(), &[])
        } else {
            reply(201, Vec::new(), &[])
        }
    });
    let host = format!("127.0.0.1:{}", registry.port);
    let home = Home::new();
    home.login(&host, "bpc", "s3cret");
    let publisher = publisher("demo", &[]);
    push(
        publisher.path(),
        &home,
        &format!("oci://{host}/acme/demo:v1"),
    );
    let basic = Some("Basic YnBjOnMzY3JldA==".to_string());
    let seen: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(at, auth)| (at.split('?').next().unwrap_or("").to_string(), auth.clone()))
        .filter(|(at, _)| !at.contains("/blobs/sha256:"))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "registry/v2/acme/demo/blobs/uploads/".to_string(),
                basic.clone()
            ),
            ("elsewhere/upload/1".to_string(), None),
            (
                "registry/v2/acme/demo/blobs/uploads/".to_string(),
                basic.clone()
            ),
            ("elsewhere/upload/1".to_string(), None),
            ("registry/v2/acme/demo/manifests/v1".to_string(), basic),
        ]
    );
}
