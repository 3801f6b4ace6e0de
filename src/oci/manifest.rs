//! Fetching an artifact's manifest within [`MAX_BYTES`], as distribution caps what it
//! accepts: the declared length is checked first and the bytes while they stream (no
//! buffer of the declared size is made up front). An image index resolves to its
//! linux/amd64 manifest, whose bytes must hash to the digest the index names. The
//! `oci-client` crate reads a manifest (and any error reply, and a token reply) whole,
//! so this request, its token exchange (`token.rs`) and the blob request after it are
//! bpc's own. Of an error reply only the first [`ERROR_BYTES`] are read.

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
    let header = super::token::authorization(http, &v2, image.repository(), auth).await;
    let repository = format!("{v2}{}/", image.repository());
    let base = format!("{repository}manifests/");
    let found = |manifest, digest| Found {
        manifest,
        digest,
        repository: repository.clone(),
        authorization: header.clone(),
    };
    let tag = image.tag().unwrap_or("latest");
    let (manifest, digest) = fetch(http, &format!("{base}{tag}"), header.as_deref()).await?;
    let index = match manifest {
        OciManifest::Image(m) => return Ok(found(m, digest)),
        OciManifest::ImageIndex(index) => index,
    };
    let Some(entry) = oci_client::client::linux_amd64_resolver(&index.manifests) else {
        return Err(Error::Refused(
            "its image index has no linux/amd64 manifest".to_string(),
        ));
    };
    let (manifest, actual) = fetch(http, &format!("{base}{entry}"), header.as_deref()).await?;
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
    let hash = Sha256::digest(data);
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for b in hash.iter() {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// One manifest request: the parsed manifest and the sha256 of its bytes.
async fn fetch(
    http: &reqwest::Client,
    url: &str,
    authorization: Option<&str>,
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
