//! The `oci` surface of the fuzz driver: pulls from a registry stand-in in this
//! process whose answers each input decides (a mutated manifest, a layer that is
//! whole, cut short, not gzip, of another digest or lying about its size, error
//! replies with terminal escapes and long bodies, bearer challenges with odd token
//! answers), then the layer unpacked and its entries checked as a pull checks them;
//! every 50th input is pulled into a scratch project's cache as `fetch` does.
//!
//! An input is text: a first line of choices (`status layer auth`), then the
//! manifest the stand-in serves.

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};

/// What the stand-in answers for the current input.
#[derive(Clone, Default)]
struct Scenario {
    manifest_status: u16,
    manifest: String,
    layer: Vec<u8>,
    /// Ask for a bearer token first, and what the token endpoint answers.
    token: Option<String>,
    error_body: String,
}

pub struct StandIn {
    port: u16,
    scenario: Mutex<Scenario>,
    /// A well-formed layer: a gzip tar of a small template.
    layer: Vec<u8>,
    project: tempfile::TempDir,
}

/// The one stand-in of the run, started on first use.
pub fn stand_in() -> &'static StandIn {
    static STAND_IN: OnceLock<&'static StandIn> = OnceLock::new();
    STAND_IN.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let stand_in: &'static StandIn = Box::leak(Box::new(StandIn {
            port,
            scenario: Mutex::new(Scenario::default()),
            layer: template_layer(),
            project: tempfile::tempdir().expect("scratch project"),
        }));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || stand_in.answer(stream));
            }
        });
        stand_in
    })
}

fn template_layer() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, text) in [
        ("metadata.yaml", "name: fuzz\nversion: v1\n"),
        ("_template/facets/a.yaml", "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: a\nterraform:\n  - path: net\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, text.as_bytes()).expect("tar");
    }
    let tar = tar.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).expect("gzip");
    gz.finish().expect("gzip")
}

fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

impl StandIn {
    /// The text of one input.
    pub fn input(&self, rng: &mut super::Rng) -> String {
        let status = *rng.pick(&[200, 200, 200, 200, 401, 404, 500, 302]);
        let layer = *rng.pick(&["whole", "whole", "short", "garbage", "other", "zeros"]);
        let auth = *rng.pick(&["none", "none", "bearer", "bearer-garbage"]);
        let layer_digest = digest(&self.layer);
        let config = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
        let size = match rng.below(6) {
            0 => -1,
            1 => 1 << 40,
            _ => self.layer.len() as i64,
        };
        let mut manifest = format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.windsorcli.blueprint.v1","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"{config}","size":2}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"{layer_digest}","size":{size}}}],"annotations":{{"org.opencontainers.image.title":"fuzz"}}}}"#
        );
        if rng.below(3) == 0 {
            manifest = super::mutate(rng, &manifest, &[]);
        }
        format!("{status} {layer} {auth}\n{manifest}")
    }

    /// Pulls with the stand-in answering as `text` says; panics only on a bug.
    pub fn run(&self, text: &str, run_number: u64) {
        let (choices, manifest) = text.split_once('\n').unwrap_or((text, ""));
        let mut words = choices.split_whitespace();
        let status = words.next().and_then(|w| w.parse().ok()).unwrap_or(200);
        let layer = match words.next().unwrap_or("whole") {
            "short" => self.layer[..self.layer.len() / 2].to_vec(),
            "garbage" => b"\x1b]0;not a layer\x07".repeat(40),
            "other" => template_layer().into_iter().rev().collect(),
            "zeros" => vec![0; 4096],
            _ => self.layer.clone(),
        };
        let token = match words.next().unwrap_or("none") {
            "bearer" => Some(r#"{"token":"t0k3n"}"#.to_string()),
            "bearer-garbage" => Some("\u{1b}[2J{{{".repeat(1000)),
            _ => None,
        };
        let error_body = format!(
            r#"{{"errors":[{{"code":"DENIED","message":"no \u001b[31m{}"}}]}}"#,
            "x".repeat(run_number as usize % 70_000)
        );
        if let Ok(mut scenario) = self.scenario.lock() {
            *scenario = Scenario {
                manifest_status: status,
                manifest: manifest.to_string(),
                layer,
                token,
                error_body,
            };
        }
        let url = format!("oci://127.0.0.1:{}/fuzz/blueprint:v1", self.port);
        let reference = bpc::oci::Reference::parse(&url).expect("the stand-in's reference");
        let settings = bpc::oci::Settings {
            no_cache: true,
            ..bpc::oci::Settings::default()
        };
        if run_number % 50 == 0 {
            let _ = bpc::oci::fetch(self.project.path(), &reference, &settings);
            return;
        }
        let max = bpc::oci::archive::MAX_LAYER_BYTES;
        let (Ok(mut layer), Ok(scratch)) = (tempfile::tempfile(), tempfile::tempdir()) else {
            return;
        };
        if bpc::oci::registry::pull(&reference, &settings.auth, max, &mut layer).is_ok() {
            let mut tar = Vec::new();
            if bpc::oci::archive::unpack(&mut layer, &mut tar, &mut |_| Ok(())).is_ok() {
                let _ = bpc::oci::archive::extract(&tar[..], scratch.path());
            }
        }
    }

    fn answer(&self, stream: TcpStream) {
        let Ok(read_half) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(read_half);
        let _ = stream.set_nodelay(true);
        let mut writer = stream;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (mut length, mut authorized) = (0usize, false);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 {
                    return;
                }
                if header == "\r\n" {
                    break;
                }
                let lower = header.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                authorized |= lower.starts_with("authorization:");
            }
            let _ = (&mut reader)
                .take(length as u64)
                .read_to_end(&mut Vec::new());
            let scenario = self.scenario.lock().map(|s| s.clone()).unwrap_or_default();
            let challenge = format!(
                "Bearer realm=\"http://127.0.0.1:{}/token\",service=\"fuzz\"",
                self.port
            );
            let (status, content_type, body, headers): (u16, &str, Vec<u8>, Vec<(&str, String)>) =
                if path.starts_with("/token") {
                    let token = scenario.token.clone().unwrap_or_default();
                    (200, "application/json", token.into_bytes(), vec![])
                } else if scenario.token.is_some() && !authorized {
                    (
                        401,
                        "application/json",
                        scenario.error_body.into_bytes(),
                        vec![("WWW-Authenticate", challenge)],
                    )
                } else if path.contains("/manifests/") {
                    match scenario.manifest_status {
                        200 => (
                            200,
                            "application/vnd.oci.image.manifest.v1+json",
                            scenario.manifest.into_bytes(),
                            vec![],
                        ),
                        302 => (
                            302,
                            "text/plain",
                            Vec::new(),
                            vec![(
                                "Location",
                                format!("http://127.0.0.1:{}/v2/elsewhere", self.port),
                            )],
                        ),
                        401 => (
                            401,
                            "application/json",
                            scenario.error_body.into_bytes(),
                            vec![("WWW-Authenticate", challenge)],
                        ),
                        other => (
                            other,
                            "application/json",
                            scenario.error_body.into_bytes(),
                            vec![],
                        ),
                    }
                } else if path.contains("/blobs/") {
                    if path.ends_with(
                        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
                    ) {
                        (200, "application/octet-stream", b"{}".to_vec(), vec![])
                    } else {
                        (200, "application/octet-stream", scenario.layer, vec![])
                    }
                } else {
                    (200, "application/json", b"{}".to_vec(), vec![])
                };
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            // One write: a head and a body sent apart wait on the peer's delayed ACK.
            let mut reply = head.into_bytes();
            reply.extend_from_slice(&body);
            if writer.write_all(&reply).is_err() {
                return;
            }
        }
    }
}
