//! Docker credential helpers, as `credHelpers` and `credsStore` name them: the program
//! `docker-credential-<name>` run with the argument `get`, the server key on its
//! standard input, answering `{"Username": …, "Secret": …}` on its standard output.
//! A helper that has nothing for the key exits non-zero saying `credentials not found
//! in native keychain`: that is no credential, not a failure (Docker and
//! go-containerregistry read it so). A helper's output may hold a secret, so a failure
//! shows one line of it at most, cleaned of control characters.

use super::shown;
use std::io::Write;
use std::process::{Command, Stdio};

/// What a helper answers when it has no credential for the key.
const NOT_FOUND: &str = "credentials not found in native keychain";

/// The most characters of a failing helper's output a message shows.
const SHOWN: usize = 120;

/// What a helper answers: its `Username` and `Secret` (a username `<token>` means
/// the secret is an identity token).
pub struct Answer {
    pub username: String,
    pub secret: String,
}

/// Asks the helper `name` for the credential of `server`; `Ok(None)` when it has none.
pub fn get(name: &str, server: &str) -> Result<Option<Answer>, String> {
    if name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(format!(
            "the credential helper name `{}` is not a plain name",
            shown::one_line(name, SHOWN)
        ));
    }
    let program = format!("docker-credential-{name}");
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the credential helper {program}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading closes the pipe; its answer still counts.
        let _ = stdin.write_all(server.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cannot run the credential helper {program}: {e}"))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    if !out.status.success() {
        if stdout == NOT_FOUND || stderr == NOT_FOUND {
            return Ok(None);
        }
        // Docker's helpers say what went wrong on standard output.
        let said = shown::one_line(if stdout.is_empty() { &stderr } else { &stdout }, SHOWN);
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        return Err(format!(
            "the credential helper {program} failed ({}){said}",
            out.status
        ));
    }
    let answer: serde_json::Value = serde_json::from_str(&stdout).map_err(|_| {
        format!("the credential helper {program} answered something other than credentials JSON")
    })?;
    let field = |k: &str| answer.get(k).and_then(|v| v.as_str()).unwrap_or_default();
    let (user, secret) = (field("Username"), field("Secret"));
    Ok((!secret.is_empty()).then(|| Answer {
        username: user.to_string(),
        secret: secret.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_path_is_refused() {
        // An answer has no Debug (it holds a secret): matched, not unwrapped.
        match get("../../tmp/evil", "ghcr.io") {
            Err(e) => assert!(e.contains("not a plain name"), "{e}"),
            Ok(_) => panic!("a helper name with a path was run"),
        }
    }
}
