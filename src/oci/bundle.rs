//! Making an artifact of a template, laid out as the Windsor CLI's `windsor bundle`
//! lays it out: the root `metadata.yaml` first, then `_template/**` (the template
//! directory), `kustomize/**` and `terraform/**` (from the project, minus Terraform
//! state, variables, plans and overrides), regular files only, as a gzip'd tar.
//!
//! Unlike the Windsor CLI's, the result is reproducible: entries in name order, every
//! mtime, uid and gid 0, modes 0644 or 0755, a gzip header without time or name, and a
//! `metadata.yaml` whose timestamp is `$SOURCE_DATE_EPOCH` (else the epoch) and whose
//! git and builder fields are empty. The same files always give the same bytes.

use super::registry::{self, Artifact, CLI_VERSION_ANNOTATION};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest file bundled, and the most files (docs/limits.md).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
pub const MAX_FILES: usize = 100_000;

/// A bundled template.
pub struct Bundle {
    pub name: String,
    pub version: String,
    /// The `cliVersion` constraint of the template's `metadata.yaml`, if any.
    pub cli_version: Option<String>,
    /// The gzip'd tar.
    pub layer: Vec<u8>,
    /// Archive paths, in archive order.
    pub files: Vec<String>,
    pub timestamp: String,
    /// Where the name and the version came from, for messages: `--tag`, or
    /// `metadata.yaml:LINE:COL` (the path as the project names it).
    pub name_from: String,
    pub version_from: String,
}

/// What the name and version come from.
pub struct Naming {
    /// Used when the template's `metadata.yaml` has no `name`.
    pub name: Option<String>,
    /// Overrides the `version` of `metadata.yaml`.
    pub version: Option<String>,
    /// `name` overrides `metadata.yaml` too (`bpc bundle -t name:version`).
    pub name_wins: bool,
    /// Where `name` and `version` come from, for messages (`--tag`).
    pub from: &'static str,
}

/// Bundles the template directory `template` with the `kustomize/` and `terraform/`
/// directories of `project`.
pub fn bundle(template: &Path, project: &Path, naming: &Naming) -> Result<Bundle, String> {
    if !template.is_dir() {
        return Err(format!(
            "{} is not a directory: only a template directory can be bundled",
            template.display()
        ));
    }
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    // Links are followed only where they stay inside: the template's within the
    // template, the modules' within the project, as the loader confines them.
    let within = |dir: &Path| {
        dir.canonicalize()
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))
    };
    let template_root = within(template)?;
    let project_root = within(project)?;
    collect(template, "_template", &template_root, &mut files, |_| false)?;
    collect(
        &project.join("kustomize"),
        "kustomize",
        &project_root,
        &mut files,
        |_| false,
    )?;
    collect(
        &project.join("terraform"),
        "terraform",
        &project_root,
        &mut files,
        skipped_terraform_file,
    )?;
    let own = files.remove("_template/metadata.yaml");
    let (input, at) = match &own {
        Some(path) => {
            let shown = path.strip_prefix(project).unwrap_or(path);
            read_metadata(path, &shown.to_string_lossy().replace('\\', "/"))?
        }
        None => (BTreeMap::new(), BTreeMap::new()),
    };
    let from_file = |k: &str| {
        input
            .get(k)
            .cloned()
            .map(|v| (v, at.get(k).cloned().unwrap_or_default()))
    };
    let from_naming = |v: &Option<String>| v.clone().map(|v| (v, naming.from.to_string()));
    let (name, name_from) = if naming.name_wins {
        from_naming(&naming.name).or_else(|| from_file("name"))
    } else {
        from_file("name").or_else(|| from_naming(&naming.name))
    }
    .filter(|(n, _)| !n.is_empty())
    .ok_or(
        "name is required: give it in the template's metadata.yaml or with --tag name:version",
    )?;
    let (version, version_from) = from_naming(&naming.version)
        .or_else(|| from_file("version"))
        .filter(|(v, _)| !v.is_empty())
        .ok_or("version is required: give it in the template's metadata.yaml, with --tag, or as the pushed tag")?;
    let cli_version = input.get("cliVersion").cloned();
    let timestamp = timestamp();
    let metadata = render_metadata(&name, &version, &input, &timestamp);

    let mut tar = tar::Builder::new(Vec::new());
    tar.mode(tar::HeaderMode::Deterministic);
    let mut order = vec!["metadata.yaml".to_string()];
    append(&mut tar, "metadata.yaml", metadata.as_bytes(), 0o644)?;
    for (name, path) in &files {
        let data = read_file(path)?;
        append(&mut tar, name, &data, mode_of(path))?;
        order.push(name.clone());
    }
    let tar = tar.into_inner().map_err(|e| e.to_string())?;
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).map_err(|e| e.to_string())?;
    let layer = gz.finish().map_err(|e| e.to_string())?;
    Ok(Bundle {
        name,
        version,
        cli_version,
        layer,
        files: order,
        timestamp,
        name_from,
        version_from,
    })
}

impl Bundle {
    /// The artifact to push: Windsor's config blob and manifest annotations.
    pub fn artifact(&self) -> Artifact {
        let mut labels = serde_json::Map::new();
        labels.insert(
            "org.opencontainers.image.description".into(),
            format!("Windsor blueprint artifact for {}", self.name).into(),
        );
        labels.insert(
            "org.opencontainers.image.title".into(),
            self.name.clone().into(),
        );
        let config = serde_json::json!({
            "architecture": "amd64",
            "created": "0001-01-01T00:00:00Z",
            "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": null},
            "config": {"Labels": labels},
        });
        let mut annotations = BTreeMap::new();
        for (k, v) in [
            ("org.opencontainers.image.created", self.timestamp.as_str()),
            ("org.opencontainers.image.source", "unknown"),
            ("org.opencontainers.image.revision", "unknown"),
            ("org.opencontainers.image.title", self.name.as_str()),
            ("org.opencontainers.image.version", self.version.as_str()),
        ] {
            annotations.insert(k.to_string(), v.to_string());
        }
        if let Some(c) = &self.cli_version {
            annotations.insert(CLI_VERSION_ANNOTATION.to_string(), c.clone());
        }
        Artifact {
            layer: self.layer.clone(),
            config: serde_json::to_vec(&config).unwrap_or_default(),
            annotations,
        }
    }

    /// The layer's digest (what `windsor bundle`'s file would hash to).
    pub fn digest(&self) -> String {
        registry::sha256(&self.layer)
    }
}

fn append(
    tar: &mut tar::Builder<Vec<u8>>,
    name: &str,
    data: &[u8],
    mode: u32,
) -> Result<(), String> {
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut header, name, data)
        .map_err(|e| format!("cannot add {name} to the archive: {e}"))
}

/// Every regular file under `dir` (none if it does not exist) as `<prefix>/<rel>`;
/// `.terraform` directories are skipped, and files `skip` names. A symbolic link that
/// leads outside `root` (canonical) is an error naming it: a link to
/// `~/.docker/config.json` or `/proc/self/environ` must not be published.
fn collect(
    dir: &Path,
    prefix: &str,
    root: &Path,
    out: &mut BTreeMap<String, PathBuf>,
    skip: fn(&str) -> bool,
) -> Result<(), String> {
    if !dir.is_dir() {
        return Ok(());
    }
    let mut todo = vec![(dir.to_path_buf(), prefix.to_string())];
    while let Some((current, rel)) = todo.pop() {
        let entries =
            std::fs::read_dir(&current).map_err(|e| format!("{}: {e}", current.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", current.display()))?;
            let name = entry.file_name().to_string_lossy().to_string();
            let path = entry.path();
            let archived = format!("{rel}/{name}");
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                let target = path
                    .canonicalize()
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if !target.starts_with(root) {
                    return Err(format!(
                        "{} is a symbolic link to {}, outside {}: bundle and push publish \
                         only files inside it",
                        path.display(),
                        target.display(),
                        root.display()
                    ));
                }
            }
            let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if meta.is_dir() {
                if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                    return Err(format!(
                        "{} is a symbolic link to a directory; bundle the directory itself",
                        path.display()
                    ));
                }
                if name != ".terraform" {
                    todo.push((path, archived));
                }
                continue;
            }
            if !meta.is_file() || skip(&name) {
                continue;
            }
            if archived.contains("..") {
                return Err(format!(
                    "{}: a name holding `..` is refused by every Windsor loader; rename it",
                    path.display()
                ));
            }
            if meta.len() > MAX_FILE_BYTES {
                return Err(format!(
                    "{} is {} bytes, over the {} MiB a bundled file may have",
                    path.display(),
                    meta.len(),
                    MAX_FILE_BYTES >> 20
                ));
            }
            out.insert(archived, path);
            if out.len() > MAX_FILES {
                return Err(format!("more than {MAX_FILES} files to bundle"));
            }
        }
    }
    Ok(())
}

/// The Terraform files `windsor bundle` leaves out, by base name.
fn skipped_terraform_file(name: &str) -> bool {
    name == "override.tf"
        || name == "override.tf.json"
        || name.ends_with("_override.tf")
        || name.ends_with("_override.tf.json")
        || name.ends_with(".tfstate")
        || name.contains(".tfstate.")
        || name.ends_with(".tfvars")
        || name.ends_with(".tfvars.json")
        || name.ends_with(".tfplan")
        || name == ".terraformrc"
        || name == "terraform.rc"
        || name == "crash.log"
        || (name.starts_with("crash.") && name.ends_with(".log"))
}

fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(unix)]
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    let exec = std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if exec {
        0o755
    } else {
        0o644
    }
}

#[cfg(not(unix))]
fn mode_of(_path: &Path) -> u32 {
    0o644
}

/// The scalar fields of the template's `metadata.yaml` (`tags` as a YAML flow list),
/// and where each is (`shown:LINE:COL`).
type Fields = BTreeMap<String, String>;

fn read_metadata(path: &Path, shown: &str) -> Result<(Fields, Fields), String> {
    let text = read_file(path)?;
    let text = String::from_utf8(text).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let map = crate::files::FileMap::default();
    let file = map.add(shown.to_string(), text);
    let text = map.text(file).unwrap_or_default();
    let node = crate::yaml::parse(&text, file)
        .map_err(|e| format!("failed to parse metadata.yaml: {}", e.message))?;
    let mut out = BTreeMap::new();
    let mut at = BTreeMap::new();
    for key in [
        "name",
        "description",
        "version",
        "author",
        "homepage",
        "license",
        "cliVersion",
    ] {
        if let Some(n) = node.get(key) {
            if let Some(v) = n.as_str() {
                out.insert(key.to_string(), v.to_string());
                at.insert(key.to_string(), map.describe(n.span));
            }
        }
    }
    if let Some(tags) = node
        .get("tags")
        .and_then(|n| n.to_value().as_list().map(|l| l.to_vec()))
    {
        let tags: Vec<String> = tags.iter().filter_map(|t| t.as_str().map(quote)).collect();
        out.insert("tags".to_string(), format!("[{}]", tags.join(", ")));
    }
    Ok((out, at))
}

/// Checks that `value` (the bundle's `what`, from `from`) can stand in a file name
/// without leading elsewhere: no path separator, no drive, no control character.
pub fn plain_file_name_part(value: &str, what: &str, from: &str) -> Result<(), String> {
    let bad = value
        .chars()
        .find(|c| matches!(c, '/' | '\\' | ':') || c.is_control());
    match bad {
        None => Ok(()),
        Some(c) => Err(format!(
            "{from}: the {what} {} cannot name the bundle file: it holds {} (give a plain \
             {what}, or name the file with -o FILE.tar.gz)",
            super::shown::joined(&format!("`{value}`"), 200),
            match c {
                '/' | '\\' | ':' => format!("`{c}`"),
                c => format!("the control character U+{:04X}", c as u32),
            }
        )),
    }
}

/// A YAML double-quoted string (JSON's escaping is valid YAML).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// The root `metadata.yaml`, keys in the Windsor CLI's order.
fn render_metadata(
    name: &str,
    version: &str,
    input: &BTreeMap<String, String>,
    timestamp: &str,
) -> String {
    let mut out = format!("name: {}\n", quote(name));
    let field = |out: &mut String, key: &str, value: Option<&String>| {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.push_str(&format!("{key}: {}\n", quote(v)));
        }
    };
    field(&mut out, "description", input.get("description"));
    out.push_str(&format!("version: {}\n", quote(version)));
    field(&mut out, "author", input.get("author"));
    if let Some(tags) = input.get("tags") {
        out.push_str(&format!("tags: {tags}\n"));
    }
    field(&mut out, "homepage", input.get("homepage"));
    field(&mut out, "license", input.get("license"));
    field(&mut out, "cliVersion", input.get("cliVersion"));
    out.push_str(&format!("timestamp: {}\n", quote(timestamp)));
    out.push_str("git:\n  commitSHA: \"\"\n  remoteURL: \"\"\n");
    out.push_str("builder:\n  user: \"\"\n  email: \"\"\n");
    out
}

/// `$SOURCE_DATE_EPOCH` as RFC 3339 UTC, else the epoch.
fn timestamp() -> String {
    let secs: i64 = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    rfc3339(secs)
}

fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_785_997_348), "2026-08-06T06:22:28Z");
    }

    #[test]
    fn terraform_filter() {
        for skipped in [
            "override.tf",
            "a_override.tf.json",
            "terraform.tfstate",
            "terraform.tfstate.backup",
            "x.tfvars",
            "plan.tfplan",
            "crash.1.log",
        ] {
            assert!(skipped_terraform_file(skipped), "{skipped}");
        }
        for kept in ["main.tf", ".terraform.lock.hcl", "variables.tf"] {
            assert!(!skipped_terraform_file(kept), "{kept}");
        }
    }
}
