//! Pushing an artifact as distribution's clients do, with bpc's own requests (as for
//! pulling, `manifest.rs`), so that every reply is bounded: each blob the registry
//! lacks is uploaded in one `POST` and one `PUT`, then the manifest is put under the
//! tag. The token is asked for `pull,push`; a request refused with a challenge of its
//! own is answered once. Credentials go only to the registry itself: an upload
//! location on another host gets none. Of an error reply only the first 64 KiB are
//! read.

use super::manifest::refusal;
use super::token::{self, Access};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use reqwest::{Method, StatusCode, Url};

/// A blob of the artifact and its digest.
pub struct Blob<'a> {
    pub bytes: &'a [u8],
    pub digest: &'a str,
}

/// Pushes `blobs` (those the registry lacks) and then `manifest`, of `media_type`, as
/// `image`.
pub async fn push(
    http: &reqwest::Client,
    image: &oci_client::Reference,
    auth: &RegistryAuth,
    plain_http: bool,
    blobs: &[Blob<'_>],
    manifest: &[u8],
    media_type: &str,
) -> Result<(), OciDistributionError> {
    let scheme = if plain_http { "http" } else { "https" };
    let origin = Url::parse(&format!("{scheme}://{}/", image.resolve_registry()))
        .map_err(|e| OciDistributionError::UrlParseError(e.to_string()))?;
    let v2 = format!("{origin}v2/");
    let repository = format!("{v2}{}/", image.repository());
    let header = token::authorization(http, &v2, image.repository(), Access::Push, auth).await;
    let mut session = Session {
        http,
        auth,
        repository: image.repository().to_string(),
        origin,
        header,
        answered: false,
    };
    for blob in blobs {
        let at = url(&format!("{repository}blobs/{}", blob.digest))?;
        if session.send(Method::HEAD, at, None).await?.status() == StatusCode::OK {
            continue;
        }
        let start = url(&format!("{repository}blobs/uploads/"))?;
        let started = session.expect(Method::POST, start, None).await?;
        let location = started
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                OciDistributionError::SpecViolationError(
                    "the registry started an upload without a Location".to_string(),
                )
            })?;
        let mut upload = session
            .origin
            .join(location)
            .map_err(|e| OciDistributionError::UrlParseError(e.to_string()))?;
        upload.query_pairs_mut().append_pair("digest", blob.digest);
        let body = ("application/octet-stream", blob.bytes);
        session.expect(Method::PUT, upload, Some(body)).await?;
    }
    let tag = image.tag().unwrap_or("latest");
    let at = url(&format!("{repository}manifests/{tag}"))?;
    session
        .expect(Method::PUT, at, Some((media_type, manifest)))
        .await?;
    Ok(())
}

fn url(text: &str) -> Result<Url, OciDistributionError> {
    Url::parse(text).map_err(|e| OciDistributionError::UrlParseError(e.to_string()))
}

/// The requests of one push, with the `Authorization` they carry.
struct Session<'a> {
    http: &'a reqwest::Client,
    auth: &'a RegistryAuth,
    repository: String,
    origin: Url,
    header: Option<String>,
    /// Whether a challenge was answered already (only one is).
    answered: bool,
}

impl Session<'_> {
    /// Sends the request; a success, or the registry's refusal as an error.
    async fn expect(
        &mut self,
        method: Method,
        url: Url,
        body: Option<(&str, &[u8])>,
    ) -> Result<reqwest::Response, OciDistributionError> {
        let shown = url.to_string();
        let response = self.send(method, url, body).await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(refusal(response, &shown).await)
        }
    }

    /// Sends the request, once more with a new `Authorization` when the registry
    /// refuses it with a challenge that gives one.
    async fn send(
        &mut self,
        method: Method,
        url: Url,
        body: Option<(&str, &[u8])>,
    ) -> Result<reqwest::Response, OciDistributionError> {
        let response = self.once(method.clone(), url.clone(), body).await?;
        if response.status() != StatusCode::UNAUTHORIZED || self.answered {
            return Ok(response);
        }
        let Some(challenge) = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
        else {
            return Ok(response);
        };
        self.answered = true;
        let answer = token::answer(
            self.http,
            &challenge,
            &self.repository,
            Access::Push,
            self.auth,
        )
        .await;
        if answer.is_none() || answer == self.header {
            return Ok(response);
        }
        self.header = answer;
        self.once(method, url, body).await
    }

    async fn once(
        &self,
        method: Method,
        url: Url,
        body: Option<(&str, &[u8])>,
    ) -> Result<reqwest::Response, OciDistributionError> {
        let same_host = url.origin() == self.origin.origin();
        let mut request = self.http.request(method, url);
        if let (Some(value), true) = (&self.header, same_host) {
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        request = match body {
            Some((content_type, bytes)) => request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(bytes.to_vec()),
            None => request.header(reqwest::header::CONTENT_LENGTH, 0),
        };
        Ok(request.send().await?)
    }
}
