//! Talking to a registry: pulling an artifact's first layer (its digest and size checked
//! against the manifest) and pushing an artifact. The requests are bpc's own, on
//! `reqwest`, so that every reply is bounded (`manifest.rs`, `token.rs`, `upload.rs`);
//! the `oci-client` crate gives the types and the wording of registry errors.
//! The calls are async; each runs to completion on a one-thread runtime made for it,
//! so the rest of bpc stays synchronous.

use super::auth::{self, AuthEnv, Credential, Lookup};
use super::manifest;
pub use super::manifest::sha256;
use super::reference::Reference;
use super::shown;
use super::upload;
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use std::collections::BTreeMap;
use std::time::Duration;

/// Seconds to wait for a connection, and for the next bytes of a response
/// (docs/limits.md).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a whole pull may take (a registry sending a byte a minute passes every
/// read's timeout; docs/limits.md).
pub(crate) const PULL_DEADLINE: Duration = Duration::from_secs(600);

/// The Windsor CLI's media types and manifest annotation keys.
pub(crate) const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub(crate) const CONFIG_MEDIA_TYPE: &str = "application/vnd.windsorcli.blueprint.v1+json";
pub(crate) const LAYER_MEDIA_TYPE: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
pub(crate) const CLI_VERSION_ANNOTATION: &str = "windsorcli.dev/cli-version";

/// A failure, with a hint for the user when there is one.
#[derive(Clone, Debug)]
pub struct Failure {
    pub message: String,
    pub help: Option<String>,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            help: None,
        }
    }
}

/// A pulled layer: its bytes as stored in the registry (compressed).
pub struct Pulled {
    pub layer_digest: String,
    pub manifest_digest: String,
    pub annotations: BTreeMap<String, String>,
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    // rustls needs a process-wide crypto provider; a second install is a no-op error.
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start the network runtime: {e}")))
}

/// The HTTP client of every registry request: connections and reads time out.
fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .user_agent(concat!("bpc/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| describe(&OciDistributionError::from(e)))
}

fn client_reference(reference: &Reference) -> oci_client::Reference {
    oci_client::Reference::with_tag(
        reference.host().to_string(),
        reference.path(),
        reference.tag.clone(),
    )
}

fn registry_auth(credential: &Credential) -> RegistryAuth {
    match credential {
        Credential::Anonymous => RegistryAuth::Anonymous,
        Credential::Basic(u, p) => RegistryAuth::Basic(u.clone(), p.clone()),
        Credential::Token(t) => RegistryAuth::Bearer(t.clone()),
    }
}

/// Whether an error is the registry refusing access (401/403, UNAUTHORIZED, DENIED).
fn refused(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::AuthenticationFailure(_)
        | OciDistributionError::UnauthorizedError { .. } => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
        OciDistributionError::ServerError { code, .. } => *code == 401 || *code == 403,
        _ => false,
    }
}

fn unknown_manifest(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown | OciErrorCode::NotFound
            )
        }),
        OciDistributionError::ServerError { code, .. } => *code == 404,
        _ => false,
    }
}

/// The most characters of a registry's reply a message shows.
pub const SHOWN_BODY: usize = 512;

fn describe(error: &OciDistributionError) -> String {
    // reqwest's own message names the URL but not the cause; the chain has it. What a
    // registry replies is the registry's to choose: the description stays one line,
    // without terminal escapes, and short.
    let line = |s: &str| shown::joined(s, 2 * SHOWN_BODY);
    let mut text = match error {
        OciDistributionError::ServerError { url, code, message } => format!(
            "Server error: url {url}, code: {code}, message: {}",
            shown::joined(message, SHOWN_BODY)
        ),
        other => line(&other.to_string()),
    };
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        let more = line(&s.to_string());
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

fn searched_help(lookup: &Lookup) -> String {
    let mut help = String::from("credentials were looked for in: ");
    if lookup.searched.is_empty() {
        help.push_str("no file ($DOCKER_CONFIG, $HOME, $REGISTRY_AUTH_FILE and $XDG_RUNTIME_DIR are all unset)");
    } else {
        help.push_str(&lookup.searched.join("; "));
    }
    match &lookup.from {
        Some(from) => help.push_str(&format!("; the registry refused the ones from {from}")),
        None => help.push_str("; none matched, so the request was anonymous"),
    }
    help
}

/// Pulls the first layer of `reference` (at most `max_layer` bytes) into `layer` as it
/// streams, checking its size and sha256 against the manifest; only a layer that
/// passes is left in `layer` (rewound), never more than the bytes that arrived. Credentials come from the keychain files of
/// `env`; when the registry refuses them the manifest is asked for anonymously once,
/// as the Windsor CLI does.
pub fn pull(
    reference: &Reference,
    env: &AuthEnv,
    max_layer: u64,
    layer: &mut std::fs::File,
) -> Result<Pulled, Failure> {
    pull_within(reference, env, max_layer, layer, PULL_DEADLINE)
}

/// [`pull`], given up past `deadline` however the registry keeps it going.
fn pull_within(
    reference: &Reference,
    env: &AuthEnv,
    max_layer: u64,
    layer: &mut std::fs::File,
    deadline: Duration,
) -> Result<Pulled, Failure> {
    let lookup = auth::lookup(env, reference).map_err(Failure::new)?;
    let rt = runtime()?;
    let image = client_reference(reference);
    let at = reference.to_string();
    let plain = reference.plain_http();
    let late = || {
        Failure::new(format!(
            "failed to pull {at}: it took longer than {} s in all and was given up",
            deadline.as_secs_f64()
        ))
    };
    rt.block_on(async {
        tokio::time::timeout(
            deadline,
            pull_on(&lookup, &image, &at, plain, reference, max_layer, layer),
        )
        .await
        .unwrap_or_else(|_| Err(late()))
    })
}

async fn pull_on(
    lookup: &Lookup,
    image: &oci_client::Reference,
    at: &str,
    plain: bool,
    reference: &Reference,
    max_layer: u64,
    into: &mut std::fs::File,
) -> Result<Pulled, Failure> {
    {
        let http = http_client().map_err(|e| Failure::new(format!("failed to pull {at}: {e}")))?;
        let mut result =
            manifest::pull(&http, image, &registry_auth(&lookup.credential), plain).await;
        if let Err(manifest::Error::Registry(e)) = &result {
            if refused(e) && lookup.credential != Credential::Anonymous {
                // Refused credentials: once more anonymously, as the Windsor CLI does.
                let retry = manifest::pull(&http, image, &RegistryAuth::Anonymous, plain).await;
                if retry.is_ok() {
                    result = retry;
                }
            }
        }
        let found = result.map_err(|e| {
            let e = match e {
                manifest::Error::Registry(e) => e,
                manifest::Error::TooLarge(why) => {
                    return Failure {
                        message: format!("failed to pull {at}: {why}"),
                        help: Some("docs/limits.md lists the limits of pulled artifacts".to_string()),
                    }
                }
                manifest::Error::Refused(why) => {
                    return Failure::new(format!("failed to pull {at}: {why}"))
                }
            };
            if refused(&e) {
                Failure {
                    message: format!(
                        "failed to pull {at}: the registry {} refused access ({})",
                        reference.registry,
                        describe(&e)
                    ),
                    help: Some(searched_help(lookup)),
                }
            } else if unknown_manifest(&e) {
                Failure {
                    message: format!(
                        "failed to pull {at}: the registry {} has no tag `{}` in repository `{}` ({})",
                        reference.registry,
                        reference.tag,
                        reference.repository,
                        describe(&e)
                    ),
                    help: Some("check the tag (it is required: there is no implicit `latest`) and the repository".to_string()),
                }
            } else {
                Failure::new(format!("failed to pull {at}: {}", describe(&e)))
            }
        })?;
        let Some(layer) = found.manifest.layers.first() else {
            return Err(Failure::new(format!(
                "failed to pull {at}: no layers found in image"
            )));
        };
        if layer.size < 0 || layer.size as u64 > max_layer {
            return Err(Failure {
                message: format!(
                    "failed to pull {at}: its layer is {} bytes, over the limit of {} MiB",
                    layer.size,
                    max_layer >> 20
                ),
                help: Some("docs/limits.md lists the limits of pulled artifacts".to_string()),
            });
        }
        fetch_blob(&http, &found, layer, into)
            .await
            .map_err(|m| Failure::new(format!("failed to pull {at}: {m}")))?;
        Ok(Pulled {
            layer_digest: layer.digest.clone(),
            manifest_digest: found.digest.clone(),
            annotations: found.manifest.annotations.clone().unwrap_or_default(),
        })
    }
}

/// The blob of `layer`, written to `into` in chunks up to its declared size (which
/// the caller has checked against its limit), hashed as it arrives, then checked.
async fn fetch_blob(
    http: &reqwest::Client,
    found: &manifest::Found,
    layer: &OciDescriptor,
    into: &mut std::fs::File,
) -> Result<(), String> {
    use futures_util::StreamExt;
    use sha2::Digest;
    use std::io::{Seek, Write};
    // The digest becomes part of the URL: only a well-formed one is asked for.
    let well_formed = layer.digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if !well_formed {
        return Err(format!(
            "the manifest names its layer by `{}`, not a sha256 digest",
            shown::one_line(&layer.digest, 100)
        ));
    }
    let url = format!("{}blobs/{}", found.repository, layer.digest);
    let mut request = http.get(&url);
    if let Some(value) = &found.authorization {
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let failed = |e: OciDistributionError| format!("failed to read layer data: {}", describe(&e));
    let response = request
        .send()
        .await
        .map_err(|e| failed(OciDistributionError::from(e)))?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(failed(manifest::refusal(response, &url).await));
    }
    let spool = |e: std::io::Error| format!("cannot keep the layer while it downloads: {e}");
    into.set_len(0).map_err(spool)?;
    into.rewind().map_err(spool)?;
    let mut stream = response.bytes_stream();
    let expected = layer.size.max(0) as u64;
    let mut hash = sha2::Sha256::new();
    let mut arrived = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("failed to read layer data: {e}"))?;
        arrived += chunk.len() as u64;
        if arrived > expected {
            return Err(format!(
                "failed to read layer data: the registry sent more than the {expected} bytes the manifest declares"
            ));
        }
        hash.update(&chunk);
        into.write_all(&chunk).map_err(spool)?;
    }
    if arrived != expected {
        return Err(format!(
            "failed to read layer data: got {arrived} of the {expected} bytes the manifest declares"
        ));
    }
    let actual = manifest::hex_digest(&hash.finalize());
    if actual != layer.digest {
        return Err(format!(
            "failed to read layer data: digest mismatch: the layer's bytes hash to {actual}, the manifest says {}",
            layer.digest
        ));
    }
    into.rewind().map_err(spool)?;
    Ok(())
}

/// An artifact to push: the gzip layer, the config blob and the manifest annotations.
pub struct Artifact {
    pub layer: Vec<u8>,
    pub config: Vec<u8>,
    pub annotations: BTreeMap<String, String>,
}

impl Artifact {
    /// The manifest the Windsor CLI writes for such an artifact.
    pub fn manifest(&self) -> OciImageManifest {
        OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.to_string()),
            config: OciDescriptor {
                media_type: CONFIG_MEDIA_TYPE.to_string(),
                digest: sha256(&self.config),
                size: self.config.len() as i64,
                urls: None,
                annotations: None,
                artifact_type: None,
            },
            layers: vec![OciDescriptor {
                media_type: LAYER_MEDIA_TYPE.to_string(),
                digest: sha256(&self.layer),
                size: self.layer.len() as i64,
                urls: None,
                annotations: None,
                artifact_type: None,
            }],
            subject: None,
            artifact_type: None,
            annotations: Some(self.annotations.clone()),
        }
    }
}

/// Pushes `artifact` as `reference`; returns the manifest's digest. There is no
/// anonymous fallback: a refused push names where credentials were looked for.
pub fn push(reference: &Reference, env: &AuthEnv, artifact: &Artifact) -> Result<String, Failure> {
    let lookup = auth::lookup(env, reference).map_err(Failure::new)?;
    let rt = runtime()?;
    let image = client_reference(reference);
    let manifest = artifact.manifest();
    // The manifest's exact bytes are bpc's, so its digest is known before the push
    // and the same template always gives the same digest.
    let body = serde_json::to_vec(&manifest)
        .map_err(|e| Failure::new(format!("cannot serialise the manifest: {e}")))?;
    let digest = sha256(&body);
    let fail = |e: OciDistributionError| {
        if refused(&e) {
            Failure {
                message: format!(
                    "failed to push {reference}: the registry {} refused access ({})",
                    reference.registry,
                    describe(&e)
                ),
                help: Some(format!(
                    "{}; log in with `docker login {}`",
                    searched_help(&lookup),
                    reference.registry
                )),
            }
        } else {
            Failure::new(format!("failed to push {reference}: {}", describe(&e)))
        }
    };
    let http =
        http_client().map_err(|e| Failure::new(format!("failed to push {reference}: {e}")))?;
    let blobs = [
        upload::Blob {
            bytes: &artifact.layer,
            digest: &manifest.layers[0].digest,
        },
        upload::Blob {
            bytes: &artifact.config,
            digest: &manifest.config.digest,
        },
    ];
    let auth = registry_auth(&lookup.credential);
    let plain = reference.plain_http();
    let late = || {
        Failure::new(format!(
            "failed to push {reference}: it took longer than {} s in all and was given up",
            PULL_DEADLINE.as_secs()
        ))
    };
    rt.block_on(async {
        let pushed = upload::push(
            &http,
            &image,
            &auth,
            plain,
            &blobs,
            &body,
            MANIFEST_MEDIA_TYPE,
        );
        match tokio::time::timeout(PULL_DEADLINE, pushed).await {
            Ok(result) => result.map_err(fail),
            Err(_) => Err(late()),
        }
    })?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};

    /// A registry that answers every request with a head and then one byte of body
    /// every 100 ms: each read is quick, the whole never ends.
    fn dripping() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).unwrap_or(0) > 2 {
                        line.clear();
                    }
                    let mut writer = stream;
                    let _ = write!(writer, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
                    for _ in 0..100_000 {
                        if writer
                            .write_all(b" ")
                            .and_then(|()| writer.flush())
                            .is_err()
                        {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                });
            }
        });
        port
    }

    #[test]
    fn a_registry_that_drips_is_given_up_at_the_deadline() {
        let port = dripping();
        let reference = Reference::parse(&format!("oci://127.0.0.1:{port}/acme/x:v1")).unwrap();
        let started = std::time::Instant::now();
        let failure = pull_within(
            &reference,
            &AuthEnv::default(),
            1 << 20,
            &mut tempfile::tempfile().unwrap(),
            Duration::from_millis(700),
        )
        .err()
        .expect("the pull is given up");
        assert_eq!(
            failure.message,
            format!("failed to pull oci://127.0.0.1:{port}/acme/x:v1: it took longer than 0.7 s in all and was given up")
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
