//! The project's `remote.origin.url`, which the Windsor CLI uses for the primary
//! GitRepository when the blueprint names no `repository` and the context is not a dev
//! context (docs/render.md, Flux: sources). Read from the git configuration file of the
//! repository holding the project (the nearest ancestor with `.git`, a worktree's
//! `gitdir:` file followed to its common directory), without running git.

use std::path::{Path, PathBuf};

/// The origin URL in Windsor's host/path form, or `None` when the project is not in a
/// git repository or the repository has no `origin` remote.
pub fn origin(project_root: &Path) -> Option<String> {
    let config = config_file(project_root)?;
    let text = std::fs::read_to_string(config).ok()?;
    remote_origin_url(&text).map(|url| host_path(&url))
}

/// The `config` file of the repository holding `dir`.
fn config_file(dir: &Path) -> Option<PathBuf> {
    for dir in dir.ancestors() {
        let dot_git = dir.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git.join("config"));
        }
        if dot_git.is_file() {
            // A worktree or submodule: `gitdir: <path>`, whose `commondir` (if any)
            // holds the shared config.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let git_dir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            let git_dir = dir.join(git_dir);
            let common = std::fs::read_to_string(git_dir.join("commondir"))
                .ok()
                .map(|c| git_dir.join(c.trim()))
                .unwrap_or(git_dir);
            return Some(common.join("config"));
        }
    }
    None
}

/// `url` of the `[remote "origin"]` section of a git config file.
fn remote_origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let section: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            in_origin = section == "[remote\"origin\"]";
            continue;
        }
        if !in_origin {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            if key.trim().eq_ignore_ascii_case("url") {
                let value = value.trim().trim_matches('"').to_string();
                return (!value.is_empty()).then_some(value);
            }
        }
    }
    None
}

/// Windsor's host/path form of a remote URL: scheme, user info and a `.git` suffix
/// dropped, an scp-like `git@host:path` turned into `host/path` (checked with the
/// Windsor CLI 7b6bca77: `git@github.com:acme/platform.git` → `github.com/acme/platform`,
/// `ssh://git@host:2222/a/b.git` → `host:2222/a/b`, `https://user:tok@github.com/a/b` →
/// `github.com/a/b`, `/srv/git/local.git` → `srv/git/local`).
fn host_path(url: &str) -> String {
    let (rest, scheme) = match url.split_once("://") {
        Some((_, rest)) => (rest, true),
        None => (url, false),
    };
    // User info ends at the last `@` before the path.
    let slash = rest.find('/').unwrap_or(rest.len());
    let rest = match rest[..slash].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    let mut out = rest.to_string();
    if !scheme {
        // scp-like `host:path` (not a path with a colon later on).
        if let Some(colon) = out.find(':') {
            if out[..colon].find('/').is_none() {
                out.replace_range(colon..=colon, "/");
            }
        }
    }
    let out = out.trim_start_matches('/').trim_end_matches('/');
    out.strip_suffix(".git").unwrap_or(out).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_take_windsors_host_path_form() {
        for (url, want) in [
            (
                "git@github.com:acme/platform.git",
                "github.com/acme/platform",
            ),
            (
                "https://gitlab.example.com/group/sub/repo.git",
                "gitlab.example.com/group/sub/repo",
            ),
            (
                "ssh://git@host.example:2222/a/b.git",
                "host.example:2222/a/b",
            ),
            ("https://user:tok@github.com/a/b", "github.com/a/b"),
            ("/srv/git/local.git", "srv/git/local"),
        ] {
            assert_eq!(host_path(url), want, "{url}");
        }
    }

    #[test]
    fn the_origin_section_is_found() {
        let config = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/up.git\n[remote \"origin\"]\n\turl = git@github.com:acme/p.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n";
        assert_eq!(
            remote_origin_url(config).as_deref(),
            Some("git@github.com:acme/p.git")
        );
        assert_eq!(remote_origin_url("[core]\n\tbare = false\n"), None);
    }

    #[test]
    fn a_repository_above_the_project_is_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = dir.path().join(".git");
        std::fs::create_dir_all(&git).expect("mkdir");
        std::fs::write(
            git.join("config"),
            "[remote \"origin\"]\n\turl = https://github.com/acme/p.git\n",
        )
        .expect("write");
        let project = dir.path().join("infra/project");
        std::fs::create_dir_all(&project).expect("mkdir");
        assert_eq!(origin(&project).as_deref(), Some("github.com/acme/p"));
    }
}
