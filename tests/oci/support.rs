//! What the OCI tests run against: Debian's `docker-registry` (distribution 2.8) on a
//! free 127.0.0.1 port, killed when dropped; a scripted HTTP server for what a real
//! registry will not do (stall mid-blob, lie about a size); a hermetic credential
//! environment for runs of the `bpc` binary ([`Home`], given to a run by
//! [`WithHome::home`]); and the template the tests publish.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// A `docker-registry serve` process.
pub struct Registry {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

/// The bcrypt hash of `s3cret` (cost 5) for user `bpc`, as distribution's htpasswd
/// reader needs it.
pub const HTPASSWD: &str = "bpc:$2b$05$XoHdMPkqC5lpigwx6Xk59O5JhcttejGOzDTl1AtHi816hQBNRh3Y6\n";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Registry {
    /// Starts a registry (with htpasswd auth when `auth`); `None`, after a loud
    /// message, when `docker-registry` is not installed.
    pub fn start(auth: bool) -> Option<Registry> {
        let found = Command::new("docker-registry")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !found {
            eprintln!(
                "\n*** SKIPPED: docker-registry is not installed (apt-get install docker-registry; .ci/run does it): this OCI registry test did not run ***\n"
            );
            return None;
        }
        // One registry starts at a time, so no two of them take the same free port; a
        // registry that could not bind its port (another process took it) exits, and
        // is started again on another.
        static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..5 {
            if let Some(registry) = Registry::start_on(free_port(), auth) {
                return Some(registry);
            }
        }
        panic!("the registry did not start on any of 5 free ports");
    }

    fn start_on(port: u16, auth: bool) -> Option<Registry> {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = format!(
            "version: 0.1\nlog: {{level: error}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\n  delete: {{enabled: true}}\nhttp: {{addr: 127.0.0.1:{port}}}\n",
            dir.path().join("data").display()
        );
        if auth {
            std::fs::write(dir.path().join("htpasswd"), HTPASSWD).expect("htpasswd");
            config.push_str(&format!(
                "auth:\n  htpasswd: {{realm: test, path: {}}}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        std::fs::write(dir.path().join("config.yml"), config).expect("config");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let mut registry = Registry { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen on {port}"
            );
            if registry.child.try_wait().ok().flatten().is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Whoever answered, the registry must still be running to be ours.
        std::thread::sleep(Duration::from_millis(100));
        if registry.child.try_wait().ok().flatten().is_some() {
            return None;
        }
        Some(registry)
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The file holding blob `digest` (`sha256:<hex>`) in the registry's storage.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The registry, or return from the test (it was skipped loudly).
#[macro_export]
macro_rules! registry {
    ($auth:expr) => {
        match support::Registry::start($auth) {
            Some(r) => r,
            None => return,
        }
    };
}

/// A hermetic home: no Docker config unless the test writes one.
pub struct Home(pub tempfile::TempDir);

impl Home {
    pub fn new() -> Home {
        Home(tempfile::tempdir().expect("home"))
    }

    /// `config.json` with basic credentials for `registry`.
    pub fn login(&self, registry: &str, user: &str, password: &str) {
        let token = base64(&format!("{user}:{password}"));
        std::fs::write(
            self.0.path().join("config.json"),
            format!(r#"{{"auths":{{"{registry}":{{"auth":"{token}"}}}}}}"#),
        )
        .expect("config.json");
    }
}

impl Home {
    /// Installs `docker-credential-<name>` in `<home>/bin`, a shell script whose body
    /// reads the server key into `$server` first; returns a `PATH` that finds it.
    pub fn credential_helper(&self, name: &str, body: &str) -> String {
        let bin = self.0.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let helper = bin.join(format!("docker-credential-{name}"));
        // The key comes without a newline, as Docker sends it: `read` then fails, but
        // sets the variable.
        std::fs::write(&helper, format!("#!/bin/sh\nread -r server\n{body}")).expect("helper");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }
}

fn base64(text: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A run of bpc in the credential environment of a [`Home`].
pub trait WithHome {
    /// `home` is `$HOME` and `$DOCKER_CONFIG`, and reads `[home]` in what the run
    /// prints.
    fn home(self, home: &Home) -> Self;
}

impl WithHome for Test {
    fn home(self, home: &Home) -> Test {
        let dir = home.0.path();
        self.env("HOME", &dir.to_string_lossy())
            .env("DOCKER_CONFIG", &dir.to_string_lossy())
            .masking(dir, "[home]")
    }
}

pub use crate::common::{write, Test, BLUEPRINT_HEAD, FACET_HEAD};

/// A project publishing template `name`: a facet with one terraform component
/// `<name>-net` (whose module is under `terraform/`), one kustomization and a config
/// block; `sources` are (name, url) entries of its `blueprint.yaml`.
pub fn publisher(name: &str, sources: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "windsor.yaml", "context: local\n");
    let mut blueprint = format!("{BLUEPRINT_HEAD}metadata:\n  name: {name}\n");
    if !sources.is_empty() {
        blueprint.push_str("sources:\n");
        for (n, url) in sources {
            blueprint.push_str(&format!("  - name: {n}\n    url: {url}\n"));
        }
    }
    write(root, "contexts/_template/blueprint.yaml", blueprint);
    write(
        root,
        "contexts/_template/metadata.yaml",
        format!("name: {name}\ndescription: the {name} blueprint\ncliVersion: \">=0.9.0\"\n"),
    );
    write(
        root,
        "contexts/_template/schema.yaml",
        "$schema: https://json-schema.org/draft/2020-12/schema\ntype: object\nproperties:\n  size:\n    type: integer\n    default: 2\n",
    );
    write(
        root,
        &format!("contexts/_template/facets/{name}.yaml"),
        format!(
            "{FACET_HEAD}metadata:\n  name: {name}\nconfig:\n  - name: {name}cfg\n    value:\n      workers: ${{size * 2}}\nterraform:\n  - name: {name}-net\n    path: {name}/net\n    inputs:\n      workers: ${{{name}cfg.workers}}\nkustomize:\n  - name: {name}-app\n    path: {name}/app\n"
        ),
    );
    write(root, "contexts/local/values.yaml", "size: 3\n");
    write(
        root,
        &format!("terraform/{name}/net/variables.tf"),
        "variable \"workers\" {\n  type = number\n}\n",
    );
    write(
        root,
        &format!("terraform/{name}/net/terraform.tfstate"),
        "{}",
    );
    write(
        root,
        &format!("kustomize/{name}/app/kustomization.yaml"),
        "resources: []\n",
    );
    dir
}

/// A project without a template whose context `local` lists `sources` as (name,
/// url, install) entries.
pub fn consumer(sources: &[(&str, &str, Option<bool>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "windsor.yaml", "context: local\n");
    write(root, "contexts/local/values.yaml", "size: 3\n");
    let mut blueprint = format!("{BLUEPRINT_HEAD}metadata:\n  name: local\nsources:\n");
    for (n, url, install) in sources {
        blueprint.push_str(&format!("  - name: {n}\n    url: {url}\n"));
        if let Some(i) = install {
            blueprint.push_str(&format!("    install: {i}\n"));
        }
    }
    write(root, "contexts/local/blueprint.yaml", blueprint);
    dir
}

/// The cache directory of `registry/repository:tag` in `project`.
pub fn cache_dir(project: &Path, registry: &str, repository: &str, tag: &str) -> PathBuf {
    let key = format!("{registry}/{repository}:{tag}").replace(['/', ':'], "_");
    project.join(".windsor/cache/oci").join(key)
}

/// One scripted answer of [`Scripted`].
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    /// Send only this many bytes of the body, then stall until the server is dropped.
    pub stall_after: Option<usize>,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
}

/// A registry stand-in that answers each request path by a function.
pub struct Scripted {
    pub port: u16,
    stop: Arc<AtomicBool>,
    /// Receives a message when a reply stalls.
    pub stalled: mpsc::Receiver<String>,
}

impl Scripted {
    pub fn start(route: impl Fn(&str, Option<&str>) -> Reply + Send + Sync + 'static) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let route = Arc::new(route);
        let flag = stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let route = route.clone();
                let flag = flag.clone();
                let tx = tx.clone();
                std::thread::spawn(move || serve(stream, &*route, &flag, &tx));
            }
        });
        Scripted {
            port,
            stop,
            stalled: rx,
        }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(
    stream: TcpStream,
    route: &(dyn Fn(&str, Option<&str>) -> Reply + Send + Sync),
    stop: &AtomicBool,
    stalled: &mpsc::Sender<String>,
) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut length = 0usize;
        let mut authorization = None;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("authorization") {
                    authorization = Some(value.trim().to_string());
                }
            }
        }
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let reply = route(&path, authorization.as_deref());
        // A reply with `Transfer-Encoding: chunked` among its headers is sent in
        // chunks, its length untold.
        let chunked = reply
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
        let mut head = format!(
            "HTTP/1.1 {} X\r\nContent-Type: {}\r\n",
            reply.status, reply.content_type
        );
        if !chunked {
            head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
        }
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        if writer.write_all(head.as_bytes()).is_err() {
            return;
        }
        match reply.stall_after {
            Some(n) => {
                let _ = writer.write_all(&reply.body[..n.min(reply.body.len())]);
                let _ = writer.flush();
                let _ = stalled.send(path);
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return;
            }
            None if chunked => {
                for chunk in reply.body.chunks(64 * 1024) {
                    let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
                    framed.extend_from_slice(chunk);
                    framed.extend_from_slice(b"\r\n");
                    if writer.write_all(&framed).is_err() {
                        return;
                    }
                }
                if writer.write_all(b"0\r\n\r\n").is_err() {
                    return;
                }
            }
            None => {
                if writer.write_all(&reply.body).is_err() {
                    return;
                }
            }
        }
    }
}
