//! Fetching an artifact's manifest within [`MAX_BYTES`], as distribution caps what it
//! accepts: the declared length is checked first and the bytes while they stream (no
//! buffer of the declared size is made up front). An image index resolves to its
//! linux/amd64 manifest, whose bytes must hash to the digest the index names. The
//! `oci-client` crate reads a manifest (and any error reply, and a token reply) whole,
//! so this request, its token exchange (`token.rs`) and the blob request after it are
//! bpc's own. Of an error reply only the first [`ERROR_BYTES`] are read.

use super::token::Access;
use oci_client::errors::{OciDistributionError, OciEnvelope};
use oci_client::manifest::{
    OciImageManifest, OciManifest, IMAGE_MANIFEST_LIST_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE,
    OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE,
};
use oci_client::secrets::RegistryAuth;
use sha2::{Digest, Sha256};

/// The largest manifest accepted, distribution's own limit (docs/limits.md).
pub const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// A manifest, and how the repository's blobs are asked for.
pub struct Found {
    pub manifest: OciImageManifest,
    pub digest: String,
    /// `<scheme>://<registry>/v2/<repository>/`.
    pub repository: String,
    /// The `Authorization` header the manifest was asked with.
    pub authorization: Option<String>,
}

/// How much of an error reply is read.
const ERROR_BYTES: u64 = 64 * 1024;

/// Why a manifest was not had.
pub enum Error {
    /// What the registry or the connection said, as `oci-client` words it.
    Registry(OciDistributionError),
    /// The manifest (or the index's entry) is not acceptable; the message says why.
    Refused(String),
    /// The manifest is over [`MAX_BYTES`].
    TooLarge(String),
}

impl From<OciDistributionError> for Error {
    fn from(e: OciDistributionError) -> Error {
        Error::Registry(e)
    }
}

/// The image manifest of `image` and its digest, asked with `auth` over `http`.
pub async fn pull(
    http: &reqwest::Client,
    image: &oci_client::Reference,
    auth: &RegistryAuth,
    plain_http: bool,
) -> Result<Found, Error> {
    let scheme = if plain_http { "http" } else { "https" };
    let v2 = format!("{scheme}://{}/v2/", image.resolve_registry());
    let mut header =
        super::token::authorization(http, &v2, image.repository(), Access::Pull, auth).await;
    let repository = format!("{v2}{}/", image.repository());
    let base = format!("{repository}manifests/");
    let tag = image.tag().unwrap_or("latest");
    let mut challenge = None;
    let mut first = fetch(
        http,
        &format!("{base}{tag}"),
        header.as_deref(),
        &mut challenge,
    )
    .await;
    // Refused with a challenge of its own (a repository more private than `/v2/`):
    // answered once, as distribution's clients do.
    if let (Err(_), Some(challenge)) = (&first, challenge.take()) {
        let answer =
            super::token::answer(http, &challenge, image.repository(), Access::Pull, auth).await;
        if answer.is_some() && answer != header {
            header = answer;
            first = fetch(http, &format!("{base}{tag}"), header.as_deref(), &mut None).await;
        }
    }
    let (manifest, digest) = first?;
    let found = |manifest, digest| Found {
        manifest,
        digest,
        repository: repository.clone(),
        authorization: header.clone(),
    };
    let index = match manifest {
        OciManifest::Image(m) => return Ok(found(m, digest)),
        OciManifest::ImageIndex(index) => index,
    };
    let Some(entry) = oci_client::client::linux_amd64_resolver(&index.manifests) else {
        return Err(Error::Refused(
            "its image index has no linux/amd64 manifest".to_string(),
        ));
    };
    let (manifest, actual) = fetch(
        http,
        &format!("{base}{entry}"),
        header.as_deref(),
        &mut None,
    )
    .await?;
    if actual != entry {
        return Err(Error::Refused(format!(
            "the manifest the index names as {entry} hashes to {actual}"
        )));
    }
    match manifest {
        OciManifest::Image(m) => Ok(found(m, actual)),
        OciManifest::ImageIndex(_) => Err(Error::Refused(format!(
            "the index entry {entry} is an index itself"
        ))),
    }
}

/// `sha256:<hex>` of `data`.
pub fn sha256(data: &[u8]) -> String {
    hex_digest(&Sha256::digest(data))
}

/// `sha256:` and the hex of a finished sha256 hash.
pub fn hex_digest(hash: &[u8]) -> String {
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for b in hash {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// One manifest request: the parsed manifest and the sha256 of its bytes.
async fn fetch(
    http: &reqwest::Client,
    url: &str,
    authorization: Option<&str>,
    challenge: &mut Option<String>,
) -> Result<(OciManifest, String), Error> {
    use futures_util::StreamExt;
    let accept = [
        OCI_IMAGE_MEDIA_TYPE,
        IMAGE_MANIFEST_MEDIA_TYPE,
        OCI_IMAGE_INDEX_MEDIA_TYPE,
        IMAGE_MANIFEST_LIST_MEDIA_TYPE,
    ]
    .join(", ");
    let mut request = http.get(url).header(reqwest::header::ACCEPT, accept);
    if let Some(value) = authorization {
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let response = request.send().await.map_err(OciDistributionError::from)?;
    let status = response.status();
    if status != reqwest::StatusCode::OK {
        if status == reqwest::StatusCode::UNAUTHORIZED {
            *challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
        }
        return Err(Error::Registry(refusal(response, url).await));
    }
    if let Some(length) = response.content_length() {
        if length > MAX_BYTES {
            return Err(too_large(format!("{length} bytes")));
        }
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(OciDistributionError::from)?;
        if body.len() as u64 + chunk.len() as u64 > MAX_BYTES {
            return Err(too_large(format!("more than {MAX_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    let manifest: OciManifest = serde_json::from_slice(&body)
        .map_err(|e| Error::Registry(OciDistributionError::ManifestParsingError(e.to_string())))?;
    Ok((manifest, sha256(&body)))
}

fn too_large(size: String) -> Error {
    Error::TooLarge(format!(
        "its manifest is {size}, over the limit of {} MiB",
        MAX_BYTES >> 20
    ))
}

/// What a reply other than 200 says, as `oci-client` reads it (so messages read the
/// same); only its first [`ERROR_BYTES`] are read, as they are only shown, cut short.
pub async fn refusal(response: reqwest::Response, url: &str) -> OciDistributionError {
    use futures_util::StreamExt;
    let status = response.status();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        let room = ERROR_BYTES as usize - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == ERROR_BYTES as usize {
            break;
        }
    }
    status_error(status, &body, url)
}

fn status_error(status: reqwest::StatusCode, body: &[u8], url: &str) -> OciDistributionError {
    let url = url.to_string();
    match status {
        reqwest::StatusCode::UNAUTHORIZED => OciDistributionError::UnauthorizedError { url },
        s if s.is_success() => OciDistributionError::SpecViolationError(format!(
            "Expected HTTP Status {}, got {s} instead",
            reqwest::StatusCode::OK
        )),
        s if s.is_client_error() => match serde_json::from_slice::<OciEnvelope>(body) {
            Ok(envelope) => OciDistributionError::RegistryError { envelope, url },
            Err(_) => OciDistributionError::ServerError {
                code: s.as_u16(),
                url,
                message: String::from_utf8_lossy(body).to_string(),
            },
        },
        s => OciDistributionError::ServerError {
            code: s.as_u16(),
            url,
            message: String::from_utf8_lossy(body).to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};

    /// A registry whose `/v2/` is open to anyone (or challenges, with `challenge_v2`)
    /// and whose repository answers only `Bearer good`; its token endpoint gives `good`
    /// for the Basic credential `u:p` and for the refresh token `refresh`.
    fn registry(challenge_v2: bool) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    continue;
                }
                let (method, path) = {
                    let mut words = line.split_whitespace();
                    (
                        words.next().unwrap_or("").to_string(),
                        words.next().unwrap_or("").to_string(),
                    )
                };
                let (mut length, mut authorization) = (0usize, String::new());
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    let lower = header.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if let Some(v) = header
                        .strip_prefix("authorization: ")
                        .or_else(|| header.strip_prefix("Authorization: "))
                    {
                        authorization = v.trim().to_string();
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let body = String::from_utf8_lossy(&body).to_string();
                let challenge = format!(
                    "WWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"reg\"\r\n"
                );
                let manifest = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[]}"#;
                let (status, extra, reply) = if path == "/v2/" {
                    if challenge_v2 {
                        ("401", challenge.clone(), String::new())
                    } else {
                        ("200", String::new(), "{}".to_string())
                    }
                } else if path.starts_with("/token") {
                    let basic_ok = method == "GET" && authorization == "Basic dTpw";
                    let refresh_ok = method == "POST"
                        && body.contains("grant_type=refresh_token")
                        && body.contains("refresh_token=refresh")
                        && body.contains("scope=repository%3Aacme%2Fx%3Apull");
                    if basic_ok || refresh_ok {
                        (
                            "200",
                            String::new(),
                            r#"{"access_token":"good"}"#.to_string(),
                        )
                    } else {
                        ("401", String::new(), String::new())
                    }
                } else if authorization == "Bearer good" {
                    (
                        "200",
                        "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n".to_string(),
                        manifest.to_string(),
                    )
                } else {
                    (
                        "401",
                        challenge,
                        r#"{"errors":[{"code":"UNAUTHORIZED","message":"no"}]}"#.to_string(),
                    )
                };
                let _ = write!(
                    writer,
                    "HTTP/1.1 {status} X\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            }
        });
        port
    }

    fn pulled(port: u16, auth: &RegistryAuth) -> bool {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let image: oci_client::Reference = format!("127.0.0.1:{port}/acme/x:v1").parse().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let http = reqwest::Client::builder().build().unwrap();
            pull(&http, &image, auth, true).await.is_ok()
        })
    }

    #[test]
    fn a_private_repository_behind_an_open_v2_gets_the_credential() {
        let port = registry(false);
        assert!(pulled(port, &RegistryAuth::Basic("u".into(), "p".into())));
        assert!(!pulled(port, &RegistryAuth::Anonymous));
        assert!(!pulled(
            port,
            &RegistryAuth::Basic("u".into(), "wrong".into())
        ));
    }

    #[test]
    fn an_identity_token_is_exchanged_for_an_access_token() {
        let port = registry(true);
        assert!(pulled(port, &RegistryAuth::Bearer("refresh".into())));
        assert!(!pulled(port, &RegistryAuth::Bearer("stale".into())));
    }
}
