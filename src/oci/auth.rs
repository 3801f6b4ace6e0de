//! Registry credentials, looked up where the Windsor CLI's keychain looks: Docker's
//! `config.json` (`auths` entries, `credHelpers`, `credsStore`), else the file
//! `$REGISTRY_AUTH_FILE`, else the containers `auth.json`; anonymous when none of them
//! has an entry. Entries are tried under `registry/repository`, then `registry`; a
//! credential helper that has nothing for a key (`credentials not found in native
//! keychain`) is no entry, so the next key is tried, then the request goes anonymous,
//! as with Docker and go-containerregistry.

use super::cred_helper;
pub use super::credential::Credential;
use super::reference::Reference;
use docker_credential::{CredentialRetrievalError, DockerCredential};
use std::path::{Path, PathBuf};

/// The environment variables the lookup reads, captured by the caller (the session
/// never reads the process environment itself).
#[derive(Clone, Debug, Default)]
pub struct AuthEnv {
    pub docker_config: Option<PathBuf>,
    pub home: Option<PathBuf>,
    pub registry_auth_file: Option<PathBuf>,
    pub xdg_runtime_dir: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
}

impl AuthEnv {
    /// The variables as the process has them.
    pub fn from_process() -> AuthEnv {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        AuthEnv {
            docker_config: var("DOCKER_CONFIG"),
            home: var("HOME"),
            registry_auth_file: var("REGISTRY_AUTH_FILE"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }
}

/// The credential for `reference` and the files that were looked at (for messages).
pub struct Lookup {
    pub credential: Credential,
    pub searched: Vec<String>,
    /// Where the credential came from, when one was found.
    pub from: Option<String>,
}

/// Looks up the credential for `reference`; an error is a file or helper that could
/// not be read, named in the message.
pub fn lookup(env: &AuthEnv, reference: &Reference) -> Result<Lookup, String> {
    let mut searched = Vec::new();
    let keys = keys(reference);
    let docker_dir = env
        .docker_config
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".docker")));
    let home_config = env
        .home
        .as_ref()
        .map(|h| h.join(".docker").join("config.json"));
    let docker_file = docker_dir.map(|d| d.join("config.json"));
    let docker_exists = docker_file.as_ref().is_some_and(|f| f.is_file())
        || home_config.as_ref().is_some_and(|f| f.is_file());
    // Docker's file first; if it exists the other files are not read (as the
    // keychain the Windsor CLI uses decides).
    let files: Vec<PathBuf> = if docker_exists {
        docker_file.into_iter().collect()
    } else if let Some(file) = &env.registry_auth_file {
        vec![file.clone()]
    } else {
        let mut v = Vec::new();
        if let Some(run) = &env.xdg_runtime_dir {
            v.push(run.join("containers").join("auth.json"));
        }
        let config = env
            .xdg_config_home
            .clone()
            .or_else(|| env.home.as_ref().map(|h| h.join(".config")));
        if let Some(c) = config {
            v.push(c.join("containers").join("auth.json"));
        }
        if let Some(f) = docker_file {
            v.insert(0, f);
        }
        v
    };
    for file in files {
        let shown = file.display().to_string();
        if !file.is_file() {
            searched.push(format!("{shown} (absent)"));
            continue;
        }
        searched.push(format!("{shown} (auths, credHelpers, credsStore)"));
        for key in &keys {
            match read_entry(&file, key) {
                Ok(Some(credential)) => {
                    return Ok(Lookup {
                        credential,
                        searched,
                        from: Some(format!("{shown} entry `{key}`")),
                    })
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(format!(
                        "cannot read credentials for `{key}` from {shown}: {e}"
                    ))
                }
            }
        }
        // The first file that exists decides, as in the keychain.
        break;
    }
    Ok(Lookup {
        credential: Credential::Anonymous,
        searched,
        from: None,
    })
}

/// The keys an entry can be under, most specific first.
fn keys(reference: &Reference) -> Vec<String> {
    let host = reference.host();
    if host == "index.docker.io" {
        return vec!["https://index.docker.io/v1/".to_string()];
    }
    vec![format!("{host}/{}", reference.path()), host.to_string()]
}

/// The credential `file` has for `key`, in the order Docker's config is read: the
/// `credHelpers` helper of the key, else its `auths` entry, else the `credsStore`
/// helper. A helper that has nothing for the key is no credential.
fn read_entry(file: &Path, key: &str) -> Result<Option<Credential>, String> {
    let text = std::fs::read(file).map_err(|e| e.to_string())?;
    let config: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("not valid JSON: {e}"))?;
    let own_helper = config
        .get("credHelpers")
        .and_then(|h| h.get(key))
        .and_then(|v| v.as_str())
        .filter(|name| !name.is_empty());
    if let Some(name) = own_helper {
        return helped(name, key);
    }
    if let Some(auths) = config.get("auths") {
        // Only `auths`: the crate would run the helpers itself, without telling
        // "nothing stored" from a failure.
        let only = serde_json::json!({ "auths": auths }).to_string();
        match docker_credential::get_credential_from_reader(only.as_bytes(), key) {
            Ok(DockerCredential::UsernamePassword(user, password)) => {
                return Ok(Some(Credential::Basic(user, password)))
            }
            Ok(DockerCredential::IdentityToken(token)) => {
                return Ok(Some(Credential::Token(token)))
            }
            Err(CredentialRetrievalError::NoCredentialConfigured) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let store = config
        .get("credsStore")
        .and_then(|v| v.as_str())
        .filter(|name| !name.is_empty());
    match store {
        Some(name) => helped(name, key),
        None => Ok(None),
    }
}

/// The credential helper `name` has for `key`.
fn helped(name: &str, key: &str) -> Result<Option<Credential>, String> {
    Ok(cred_helper::get(name, key)?.map(|answer| {
        if answer.username == "<token>" {
            Credential::Token(answer.secret)
        } else {
            Credential::Basic(answer.username, answer.secret)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_by_repository_then_registry() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"auths":{"127.0.0.1:5000":{"auth":"dTpw"},"127.0.0.1:5000/bp/special":{"username":"s","password":"q"}}}"#,
        )
        .unwrap();
        let env = AuthEnv {
            docker_config: Some(dir.path().to_path_buf()),
            ..AuthEnv::default()
        };
        let general = Reference::parse("oci://127.0.0.1:5000/bp/core:v1").unwrap();
        let found = lookup(&env, &general).unwrap();
        assert!(found.credential == Credential::Basic("u".into(), "p".into()));
        let special = Reference::parse("oci://127.0.0.1:5000/bp/special:v1").unwrap();
        let found = lookup(&env, &special).unwrap();
        assert!(found.credential == Credential::Basic("s".into(), "q".into()));
        let other = Reference::parse("oci://ghcr.io/bp/core:v1").unwrap();
        let found = lookup(&env, &other).unwrap();
        assert!(found.credential == Credential::Anonymous);
        assert_eq!(found.searched.len(), 1);
    }
}
