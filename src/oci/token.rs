//! The `Authorization` a pull sends, found as distribution's clients find it: the
//! registry's `/v2/` answers with a challenge; `Basic` takes the credential as it is,
//! `Bearer` sends the client to the challenge's realm for a token scoped to pulling the
//! repository (with the credential, if there is one). A Docker identity token is sent
//! as a bearer token without asking. The realm's reply is read [`MAX_REPLY`] at most.
//! A token that cannot be had is no token: the registry's refusal of the request then
//! says what is wrong.

use oci_client::secrets::RegistryAuth;

/// The most bytes of a token reply read.
pub const MAX_REPLY: usize = 64 * 1024;

/// The header value to pull `repository` from the registry at `v2` (its
/// `<scheme>://<registry>/v2/` URL) with `auth`, if one is needed and can be had.
pub async fn authorization(
    http: &reqwest::Client,
    v2: &str,
    repository: &str,
    auth: &RegistryAuth,
) -> Option<String> {
    if let RegistryAuth::Bearer(token) = auth {
        return Some(format!("Bearer {token}"));
    }
    let basic = match auth {
        RegistryAuth::Basic(user, password) => Some((user.as_str(), password.as_str())),
        _ => None,
    };
    let probe = http.get(v2).send().await.ok()?;
    let challenge = probe
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()?
        .to_string();
    drop(probe);
    let Some((realm, service)) = bearer(&challenge) else {
        // A Basic challenge (or one bpc does not know): the credential as it is.
        return basic.map(|(user, password)| basic_header(user, password));
    };
    let scope = format!("repository:{repository}:pull");
    let mut query = vec![("scope", scope.as_str())];
    if let Some(s) = &service {
        query.push(("service", s.as_str()));
    }
    let mut request = http.get(&realm).query(&query);
    if let Some((user, password)) = basic {
        request = request.header(reqwest::header::AUTHORIZATION, basic_header(user, password));
    }
    let reply = request.send().await.ok()?;
    if !reply.status().is_success() {
        return None;
    }
    let body = bounded(reply).await?;
    let answer: serde_json::Value = serde_json::from_slice(&body).ok()?;
    let token = ["token", "access_token"]
        .iter()
        .find_map(|k| answer.get(k).and_then(|v| v.as_str()))
        .filter(|t| !t.is_empty())?;
    Some(format!("Bearer {token}"))
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
