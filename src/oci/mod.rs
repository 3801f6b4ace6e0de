//! Blueprints published as OCI artifacts, the Windsor CLI's way: `oci://` references,
//! pulling into the project's `.windsor/cache/oci/` (the layout the Windsor CLI reads
//! and writes), loading a pulled template, and bundling and pushing one.
//! docs/semantics.md S14 has the rules; docs/limits.md the budgets.

pub mod archive;
pub mod auth;
pub mod bundle;
pub mod cache;
pub mod cred_helper;
pub mod load;
pub mod manifest;
pub mod metadata;
pub mod reference;
pub mod registry;
pub mod shown;
pub mod sources;
pub mod token;

pub use auth::AuthEnv;
pub use reference::Reference;
pub use registry::Failure;

use std::path::{Path, PathBuf};

/// How pulls behave; the command line fills it from `--offline` and the environment.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Never contact a registry: a reference not in the cache is an error.
    pub offline: bool,
    /// `NO_CACHE=1|true`: pull again even when the cache has the artifact.
    pub no_cache: bool,
    /// Where credentials are looked up.
    pub auth: AuthEnv,
    /// The Windsor CLI version `cliVersion` constraints are checked against
    /// (`dev` checks nothing, as a development build of the Windsor CLI).
    pub windsor_version: String,
}

/// The Windsor CLI release bpc answers `cliVersion` checks as, unless
/// `BPC_WINDSOR_VERSION` says otherwise: the format bpc implements is that of the
/// Windsor CLI at 7b6bca77, which loads templates requiring `>=0.9.0`.
pub const WINDSOR_VERSION: &str = "0.9.0";

impl Settings {
    /// `NO_CACHE` and the credential variables as the process has them.
    pub fn from_process(offline: bool) -> Settings {
        let no_cache = std::env::var("NO_CACHE")
            .map(|v| v == "1" || v.eq_ignore_ascii_case("true"))
            .unwrap_or(false);
        let windsor_version = std::env::var("BPC_WINDSOR_VERSION")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| WINDSOR_VERSION.to_string());
        Settings {
            offline,
            no_cache,
            auth: AuthEnv::from_process(),
            windsor_version,
        }
    }
}

/// The cache directory holding `reference` for the project at `root`, pulling it
/// first unless the cache already has it (and `NO_CACHE` is not set). Either way the
/// entry is held for reading until the process exits (see [`cache`]); a process pulls
/// one reference once, `NO_CACHE` or not.
pub fn fetch(root: &Path, reference: &Reference, settings: &Settings) -> Result<PathBuf, Failure> {
    let dir = cache::dir(root, reference);
    if cache::held(&dir) {
        return Ok(dir);
    }
    let fail = |m: String| Failure {
        message: format!("failed to pull {reference}: {m}"),
        help: None,
    };
    if settings.offline || !settings.no_cache {
        let cached = cache::open(&dir).map_err(|m| Failure {
            message: format!("cannot read {reference} from the cache: {m}"),
            help: None,
        })?;
        if cached {
            return Ok(dir);
        }
    }
    if settings.offline {
        return Err(Failure {
            message: format!(
                "{reference} is not in the cache ({} has no artifact.tar) and --offline forbids pulling it",
                dir.strip_prefix(root).unwrap_or(&dir).display()
            ),
            help: Some("run once without --offline (or `windsor init`) to pull it into the cache".to_string()),
        });
    }
    let pulled = registry::pull(reference, &settings.auth, archive::MAX_LAYER_BYTES)?;
    let tar = archive::decompress(&pulled.layer).map_err(fail)?;
    cache::store(&dir, &tar, settings.no_cache).map_err(fail)?;
    Ok(dir)
}
