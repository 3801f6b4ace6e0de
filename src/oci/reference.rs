//! `oci://registry/repository:tag` references, read with the Windsor CLI's rules: the
//! registry is everything before the first `/`, the tag everything after the last `:`,
//! and the tag is mandatory (there is no implicit `latest`).

use std::fmt;

/// One parsed `oci://` reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    /// Host, with its port when it has one (`127.0.0.1:5000`, `ghcr.io`).
    pub registry: String,
    /// Path inside the registry (`windsorcli/core`).
    pub repository: String,
    pub tag: String,
}

impl Reference {
    /// Parses `oci://registry/repository:tag`; the message says what is wrong.
    pub fn parse(url: &str) -> Result<Reference, String> {
        let Some(rest) = url.strip_prefix("oci://") else {
            return Err(format!("invalid OCI reference format: {url}"));
        };
        let malformed = || {
            format!("invalid OCI reference format, expected oci://registry/repository:tag: {url}")
        };
        if has_credentials(url) {
            // Never repeated: the part before `@` holds a password.
            let (_, after) = rest.split_once('@').unwrap_or_default();
            let host = after.split('/').next().unwrap_or_default();
            return Err(format!(
                "invalid OCI reference oci://***@{after}: credentials in the URL are refused \
                 (they would end up in the cache's directory name and in messages); log in \
                 with `docker login {host}` instead"
            ));
        }
        let (registry, path) = rest.split_once('/').ok_or_else(malformed)?;
        let (repository, tag) = path.rsplit_once(':').ok_or_else(malformed)?;
        if registry.is_empty() || repository.is_empty() || tag.is_empty() {
            return Err(malformed());
        }
        let repo_ok = repository.len() >= 2
            && repository.len() <= 255
            && repository
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-./".contains(&b))
            && !repository.starts_with('/')
            && !repository.ends_with('/')
            && !repository.contains("//");
        if !repo_ok {
            return Err(format!(
                "invalid repository `{repository}` in {url}: a repository is 2 to 255 characters of a-z, 0-9, `_`, `-`, `.` and `/`"
            ));
        }
        let tag_ok = tag.len() <= 128
            && tag
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !tag_ok {
            return Err(format!(
                "invalid tag `{tag}` in {url}: a tag is at most 128 characters of A-Z, a-z, 0-9, `_`, `.` and `-`"
            ));
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag: tag.to_string(),
        })
    }

    /// The directory name of this reference under `.windsor/cache/oci/`: `registry/repository:tag`
    /// with every `/` and `:` turned into `_`, as the Windsor CLI names it.
    pub fn cache_key(&self) -> String {
        format!("{}/{}:{}", self.registry, self.repository, self.tag).replace(['/', ':'], "_")
    }

    /// The host the registry is reached at: a first segment with no `.` or `:` that is
    /// not `localhost` is a Docker Hub namespace, as in Docker's own reference rules.
    pub fn host(&self) -> &str {
        if self.registry.contains(['.', ':']) || self.registry == "localhost" {
            &self.registry
        } else {
            "index.docker.io"
        }
    }

    /// The repository path on that host (`library/` is not added: Windsor adds none).
    pub fn path(&self) -> String {
        if self.host() == self.registry {
            self.repository.clone()
        } else {
            format!("{}/{}", self.registry, self.repository)
        }
    }

    /// Whether the Windsor CLI reaches this registry over plain HTTP: loopback names and
    /// addresses with a port, `*.localhost`, and the private IPv4 ranges.
    pub fn plain_http(&self) -> bool {
        let host = self.host();
        let (name, port) = match host.rsplit_once(':') {
            Some((n, p)) if !n.ends_with(':') && p.bytes().all(|b| b.is_ascii_digit()) => {
                (n, Some(p))
            }
            _ => (host, None),
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if name == "localhost" {
            return port.is_some();
        }
        if name.ends_with(".localhost") || name == "::1" {
            return true;
        }
        match name.parse::<std::net::Ipv4Addr>() {
            Ok(ip) => ip.is_loopback() || ip.is_private(),
            Err(_) => false,
        }
    }

    /// What a pull of `registry/path:tag` is called in the client library.
    pub fn client_reference(&self) -> String {
        format!("{}/{}:{}", self.host(), self.path(), self.tag)
    }
}

/// Whether `url` names credentials before its host (`oci://user:password@host/…`).
pub fn has_credentials(url: &str) -> bool {
    url.strip_prefix("oci://")
        .and_then(|rest| rest.split('/').next())
        .is_some_and(|registry| registry.contains('@'))
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "oci://{}/{}:{}",
            self.registry, self.repository, self.tag
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Reference;

    #[test]
    fn windsor_grammar() {
        let r = Reference::parse("oci://127.0.0.1:5000/blueprints/core:v1.2.3").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "blueprints/core");
        assert_eq!(r.tag, "v1.2.3");
        assert_eq!(r.cache_key(), "127.0.0.1_5000_blueprints_core_v1.2.3");
        assert!(r.plain_http());
        assert!(Reference::parse("oci://ghcr.io/org/bp").is_err());
        assert!(Reference::parse("ghcr.io/org/bp:v1").is_err());
        assert!(Reference::parse("oci://ghcr.io/Org/bp:v1").is_err());
        assert!(Reference::parse("oci://ghcr.io/org/bp:v1+build").is_err());
        assert!(Reference::parse("oci:///org/bp:v1").is_err());
    }

    #[test]
    fn hosts_and_schemes() {
        let hub = Reference::parse("oci://registry/bp/core:v1").unwrap();
        assert_eq!(hub.host(), "index.docker.io");
        assert_eq!(hub.path(), "registry/bp/core");
        assert_eq!(hub.cache_key(), "registry_bp_core_v1");
        let ghcr = Reference::parse("oci://ghcr.io/windsorcli/core:v0.3.0").unwrap();
        assert!(!ghcr.plain_http());
        for (url, plain) in [
            ("oci://localhost:5000/a/b:t", true),
            ("oci://localhost/a/b:t", false),
            ("oci://reg.localhost/a/b:t", true),
            ("oci://10.1.2.3:80/a/b:t", true),
            ("oci://192.168.1.2/a/b:t", true),
            ("oci://8.8.8.8/a/b:t", false),
        ] {
            assert_eq!(Reference::parse(url).unwrap().plain_http(), plain, "{url}");
        }
    }
}
