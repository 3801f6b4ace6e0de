//! The `Authorization` a pull or a push sends, found as distribution's clients find it: the
//! registry's `/v2/` answers with a challenge; `Basic` takes the credential as it is,
//! `Bearer` sends the client to the challenge's realm for a token scoped to pulling (or
//! pushing to) the repository (with the credential, if there is one); a Docker identity token is
//! exchanged there for an access token. A `/v2/` open to anyone still gets the
//! credential, since the repository may be private; and a manifest request refused
//! with a challenge of its own is answered once (`manifest`). The realm's reply is
//! read [`MAX_REPLY`] at most.
//! A token that cannot be had is no token: the registry's refusal of the request then
//! says what is wrong.

use oci_client::secrets::RegistryAuth;

/// The most bytes of a token reply read.
pub const MAX_REPLY: usize = 64 * 1024;

/// What a token is asked for: `pull`, or `pull,push` to push.
#[derive(Clone, Copy)]
pub enum Access {
    Pull,
    Push,
}

impl Access {
    fn actions(self) -> &'static str {
        match self {
            Access::Pull => "pull",
            Access::Push => "pull,push",
        }
    }
}

/// The header value to reach `repository` at the registry at `v2` (its
/// `<scheme>://<registry>/v2/` URL) for `access` with `auth`, if one is needed and can
/// be had.
pub async fn authorization(
    http: &reqwest::Client,
    v2: &str,
    repository: &str,
    access: Access,
    auth: &RegistryAuth,
) -> Option<String> {
    let probe = http.get(v2).send().await.ok()?;
    let challenge = probe
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    drop(probe);
    match challenge {
        Some(challenge) => answer(http, &challenge, repository, access, auth).await,
        // `/v2/` is open to anyone: the credential still goes with the requests, since
        // the repository may not be (`Basic` as it is, a token as a bearer).
        None => match auth {
            RegistryAuth::Basic(user, password) => Some(basic_header(user, password)),
            RegistryAuth::Bearer(token) => Some(format!("Bearer {token}")),
            RegistryAuth::Anonymous => None,
        },
    }
}

/// The `Authorization` that answers `challenge` (a `WWW-Authenticate` header) for
/// `access` to `repository` with `auth`: a `Bearer` challenge sends the client to its realm
/// for a token (a Docker identity token is exchanged there as an OAuth2 refresh
/// token, as docker and go-containerregistry do); any other takes `Basic` as it is.
pub async fn answer(
    http: &reqwest::Client,
    challenge: &str,
    repository: &str,
    access: Access,
    auth: &RegistryAuth,
) -> Option<String> {
    let Some((realm, service)) = bearer(challenge) else {
        return match auth {
            RegistryAuth::Basic(user, password) => Some(basic_header(user, password)),
            RegistryAuth::Bearer(token) => Some(format!("Bearer {token}")),
            RegistryAuth::Anonymous => None,
        };
    };
    let scope = format!("repository:{repository}:{}", access.actions());
    if let RegistryAuth::Bearer(identity) = auth {
        let exchanged = exchange(http, &realm, service.as_deref(), &scope, identity).await;
        return Some(format!(
            "Bearer {}",
            exchanged.as_deref().unwrap_or(identity)
        ));
    }
    let mut query = vec![("scope", scope.as_str())];
    if let Some(s) = &service {
        query.push(("service", s.as_str()));
    }
    let mut request = http.get(&realm).query(&query);
    if let RegistryAuth::Basic(user, password) = auth {
        request = request.header(reqwest::header::AUTHORIZATION, basic_header(user, password));
    }
    let reply = request.send().await.ok()?;
    if !reply.status().is_success() {
        return None;
    }
    token_of(reply).await.map(|t| format!("Bearer {t}"))
}

/// An identity token exchanged at `realm` for an access token (the OAuth2
/// `refresh_token` grant of distribution's token protocol).
async fn exchange(
    http: &reqwest::Client,
    realm: &str,
    service: Option<&str>,
    scope: &str,
    identity: &str,
) -> Option<String> {
    let mut form = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", identity),
        ("client_id", "bpc"),
        ("scope", scope),
    ];
    if let Some(s) = service {
        form.push(("service", s));
    }
    let body: Vec<String> = form
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encoded(v)))
        .collect();
    let reply = http
        .post(realm)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body.join("&"))
        .send()
        .await
        .ok()?;
    if !reply.status().is_success() {
        return None;
    }
    token_of(reply).await
}

/// The token of a token endpoint's JSON reply (`access_token` or `token`).
async fn token_of(reply: reqwest::Response) -> Option<String> {
    let body = bounded(reply).await?;
    let answer: serde_json::Value = serde_json::from_slice(&body).ok()?;
    ["access_token", "token"]
        .iter()
        .find_map(|k| answer.get(k).and_then(|v| v.as_str()))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// `text` as a value of `application/x-www-form-urlencoded`.
fn form_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn basic_header(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The realm and service of the first `Bearer` challenge of a `WWW-Authenticate`
/// header.
fn bearer(header: &str) -> Option<(String, Option<String>)> {
    http_auth::ChallengeParser::new(header)
        .filter_map(Result::ok)
        .find(|c| c.scheme.eq_ignore_ascii_case("Bearer"))
        .and_then(|c| {
            let param = |name: &str| {
                c.params
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.to_unescaped())
            };
            Some((param("realm")?, param("service")))
        })
}

/// The reply's body, or `None` past [`MAX_REPLY`] bytes.
async fn bounded(reply: reqwest::Response) -> Option<Vec<u8>> {
    use futures_util::StreamExt;
    if reply.content_length().is_some_and(|n| n > MAX_REPLY as u64) {
        return None;
    }
    let mut body = Vec::new();
    let mut stream = reply.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.ok()?;
        if body.len() + chunk.len() > MAX_REPLY {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::bearer;

    #[test]
    fn bearer_challenges() {
        assert_eq!(
            bearer(
                r#"Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push""#
            ),
            Some((
                "https://auth.example/token".to_string(),
                Some("reg".to_string())
            ))
        );
        assert_eq!(
            bearer(r#"Basic realm="x", Bearer realm="https://t""#),
            Some(("https://t".to_string(), None))
        );
        assert_eq!(bearer(r#"Basic realm="registry""#), None);
        assert_eq!(bearer("Bearer service=\"no realm\""), None);
    }
}
