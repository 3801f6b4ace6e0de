//! The artifact's root `metadata.yaml`: its `name` (which names a blueprint whose
//! `metadata.name` is `template`) and its `cliVersion` constraint, checked with the
//! rules of the Masterminds semver library the Windsor CLI uses: comparators `=`, `!=`,
//! `>`, `>=`, `<`, `<=`, `~`, `^`, partial versions and `x` wildcards, comparators
//! joined by spaces or commas, alternatives by `||`.

use crate::yaml::NodeKind;
use std::path::Path;

/// What bpc reads of `metadata.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    pub name: Option<String>,
    pub cli_version: Option<String>,
}

/// The largest `metadata.yaml` read from the cache (docs/limits.md).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Reads `<dir>/metadata.yaml`; `Ok(None)` when there is none. Only a regular file
/// is read (a FIFO would block, a link to `/dev/zero` never end), and at most
/// [`MAX_BYTES`] of it.
pub fn read(dir: &Path) -> Result<Option<Metadata>, String> {
    let path = dir.join("metadata.yaml");
    let Some(text) = read_regular(&path)? else {
        return Ok(None);
    };
    let map = crate::files::FileMap::default();
    let file = map.add(path.display().to_string(), text);
    let text = map.text(file).unwrap_or_default();
    let node = crate::yaml::parse(&text, file)
        .map_err(|e| format!("failed to parse {}: {}", path.display(), e.message))?;
    if !matches!(node.kind, NodeKind::Map(_) | NodeKind::Null) {
        return Err(format!("failed to parse {}: not a map", path.display()));
    }
    let text_of = |key: &str| {
        node.get(key)
            .and_then(|n| n.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(Some(Metadata {
        name: text_of("name"),
        cli_version: text_of("cliVersion"),
    }))
}

/// The text of the regular file `path`; `Ok(None)` when nothing is there.
fn read_regular(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Not following a link, and not waiting for a FIFO's writer.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let shown = path.display();
    let not_regular = || format!("{shown} is not a regular file; the cache holds only files");
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) => {
            return Err(not_regular())
        }
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "{shown} is {} bytes, over the {} KiB a metadata.yaml may have",
            meta.len(),
            MAX_BYTES >> 10
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{shown} grew past the {} KiB a metadata.yaml may have while it was read",
            MAX_BYTES >> 10
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{shown} is not UTF-8"))
}

/// Checks `version` against `constraint` as the Windsor CLI does: no check for an
/// empty constraint or a `dev`/`main`/`latest` version; the version's pre-release part
/// is ignored.
pub fn check(version: &str, constraint: &str) -> Result<(), String> {
    let constraint = constraint.trim();
    if constraint.is_empty() || version.is_empty() || matches!(version, "dev" | "main" | "latest") {
        return Ok(());
    }
    let v =
        parse_version(version).ok_or_else(|| format!("invalid CLI version format '{version}'"))?;
    let mut any = false;
    for alternative in constraint.split("||") {
        let comparators = comparators(alternative)
            .ok_or_else(|| format!("invalid cliVersion constraint '{constraint}'"))?;
        if comparators.iter().all(|c| c.holds(v)) {
            any = true;
        }
    }
    if any {
        Ok(())
    } else {
        Err(format!(
            "CLI version {version} does not satisfy required constraint '{constraint}'"
        ))
    }
}

type Version = (u64, u64, u64);

/// `v1.2.3-rc.1+b` → (1, 2, 3); the pre-release and build parts are dropped.
fn parse_version(text: &str) -> Option<Version> {
    let core = text.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut out = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.parse().ok()?;
    }
    Some((out[0], out[1], out[2]))
}

/// A partial version: how many of its parts were written (a wildcard ends it).
fn parse_partial(text: &str) -> Option<(Version, usize)> {
    let core = text.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    if core.is_empty() || core == "*" || core.eq_ignore_ascii_case("x") {
        return Some(((0, 0, 0), 0));
    }
    let mut out = [0u64; 3];
    let mut given = 0;
    for (i, p) in core.split('.').enumerate() {
        if i >= 3 {
            return None;
        }
        if p == "*" || p.eq_ignore_ascii_case("x") {
            break;
        }
        out[i] = p.parse().ok()?;
        given = i + 1;
    }
    Some(((out[0], out[1], out[2]), given))
}

#[derive(Debug)]
enum Op {
    Ge,
    Gt,
    Le,
    Lt,
    Ne,
}

#[derive(Debug)]
struct Comparator(Op, Version);

impl Comparator {
    fn holds(&self, v: Version) -> bool {
        match self.0 {
            Op::Ge => v >= self.1,
            Op::Gt => v > self.1,
            Op::Le => v <= self.1,
            Op::Lt => v < self.1,
            Op::Ne => v != self.1,
        }
    }
}

/// The version after the last written part, bumped: `1.2` → `1.3.0`.
fn bump(v: Version, given: usize) -> Version {
    match given {
        0 => (u64::MAX, 0, 0),
        1 => (v.0 + 1, 0, 0),
        2 => (v.0, v.1 + 1, 0),
        _ => (v.0, v.1, v.2 + 1),
    }
}

fn comparators(text: &str) -> Option<Vec<Comparator>> {
    let mut out = Vec::new();
    let tokens: Vec<&str> = text
        .split([',', ' ', '\t'])
        .filter(|t| !t.is_empty())
        .collect();
    // An operator written apart from its version (`>= 1.2`) joins the next token.
    let mut joined: Vec<String> = Vec::new();
    let mut pending = String::new();
    for t in tokens {
        if t.chars().all(|c| "<>=!~^".contains(c)) {
            pending.push_str(t);
        } else {
            joined.push(format!("{pending}{t}"));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        return None;
    }
    for token in joined {
        let op_len = token
            .find(|c: char| !"<>=!~^".contains(c))
            .unwrap_or(token.len());
        let (op, rest) = token.split_at(op_len);
        let (v, given) = parse_partial(rest)?;
        let upper = bump(v, given);
        match op {
            "" | "=" | "==" => {
                if given == 3 {
                    out.push(Comparator(Op::Ge, v));
                    out.push(Comparator(Op::Le, v));
                } else {
                    out.push(Comparator(Op::Ge, v));
                    out.push(Comparator(Op::Lt, upper));
                }
            }
            "!=" => out.push(Comparator(Op::Ne, v)),
            ">" => {
                if given == 3 {
                    out.push(Comparator(Op::Gt, v));
                } else {
                    out.push(Comparator(Op::Ge, upper));
                }
            }
            ">=" | "=>" => out.push(Comparator(Op::Ge, v)),
            "<" => out.push(Comparator(Op::Lt, v)),
            "<=" | "=<" => {
                if given == 3 {
                    out.push(Comparator(Op::Le, v));
                } else {
                    out.push(Comparator(Op::Lt, upper));
                }
            }
            "~" | "~>" => {
                out.push(Comparator(Op::Ge, v));
                out.push(Comparator(Op::Lt, bump(v, given.clamp(1, 2))));
            }
            "^" => {
                out.push(Comparator(Op::Ge, v));
                let upper = if v.0 > 0 || given <= 1 {
                    (v.0 + 1, 0, 0)
                } else if v.1 > 0 || given == 2 {
                    (0, v.1 + 1, 0)
                } else {
                    (0, 0, v.2 + 1)
                };
                out.push(Comparator(Op::Lt, upper));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn masterminds_constraints() {
        assert!(check("0.9.0", ">=0.9.0").is_ok());
        assert!(check("v0.9.0-rc.1", ">=0.9.0").is_ok());
        assert_eq!(
            check("0.8.5", ">=0.9.0").unwrap_err(),
            "CLI version 0.8.5 does not satisfy required constraint '>=0.9.0'"
        );
        assert!(check("1.4.0", ">= 1.2, < 2.0").is_ok());
        assert!(check("2.0.0", ">= 1.2, < 2.0").is_err());
        assert!(check("1.2.9", "~1.2").is_ok());
        assert!(check("1.3.0", "~1.2").is_err());
        assert!(check("1.9.0", "^1.2.3").is_ok());
        assert!(check("0.3.0", "^0.2.3").is_err());
        assert!(check("3.0.0", "<1 || >=3").is_ok());
        assert!(check("1.2.5", "1.2.x").is_ok());
        assert!(check("dev", ">=99").is_ok());
        assert!(check("1.0.0", "!!1").is_err());
    }
}
