//! Blueprints published as OCI artifacts, the Windsor CLI's way: `oci://` references,
//! pulling into the project's `.windsor/cache/oci/` (the layout the Windsor CLI reads
//! and writes), loading a pulled template, and bundling and pushing one.
//! docs/semantics.md S14 has the rules; docs/limits.md the budgets.

pub mod archive;
pub(crate) mod auth;
pub(crate) mod bundle;
pub(crate) mod cache;
pub(crate) mod cred_helper;
pub(crate) mod credential;
pub(crate) mod load;
pub(crate) mod lock_holders;
pub(crate) mod manifest;
pub(crate) mod metadata;
pub(crate) mod pulls;
pub(crate) mod reference;
pub mod registry;
pub(crate) mod shown;
pub(crate) mod sources;
pub(crate) mod token;
pub(crate) mod upload;

pub use auth::AuthEnv;
pub use reference::Reference;
pub use registry::Failure;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How pulls behave; the command line fills it from `--offline` and the environment.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Never contact a registry: a reference not in the cache is an error.
    pub offline: bool,
    /// What made the run offline and how the user allows pulls, for the message
    /// (by default `--offline`, and running once without it).
    pub offline_by: Option<OfflineBy>,
    /// Where pulls that failed are remembered so that they are not tried again (the
    /// language server analyses after every edit; a hanging registry would make each
    /// analysis wait). `None`: every run tries.
    pub failed: Option<FailedPulls>,
    /// `NO_CACHE=1|true`: pull again even when the cache has the artifact.
    pub no_cache: bool,
    /// Where credentials are looked up.
    pub auth: AuthEnv,
    /// The Windsor CLI version `cliVersion` constraints are checked against
    /// (`dev` checks nothing, as a development build of the Windsor CLI).
    pub windsor_version: String,
    /// What all the pulls of this run may unpack, together.
    pub budget: PullBudget,
}

/// The bytes all the pulls of one run may unpack, shared by every copy of the
/// settings: a small artifact that lists several sources, each a layer that unpacks
/// to the most one layer may, would otherwise cost that much again for each.
#[derive(Clone, Debug)]
pub struct PullBudget {
    used: Arc<std::sync::atomic::AtomicU64>,
    limit: u64,
}

/// [`PullBudget`]'s default: what one layer may unpack to.
pub(crate) const MAX_PULLED_BYTES: u64 = archive::MAX_TAR_BYTES;

impl Default for PullBudget {
    fn default() -> PullBudget {
        PullBudget::new(MAX_PULLED_BYTES)
    }
}

impl PullBudget {
    pub fn new(limit: u64) -> PullBudget {
        PullBudget {
            used: Arc::default(),
            limit,
        }
    }

    /// Counts `bytes` more unpacked; an error once the run's pulls pass the limit.
    fn charge(&self, bytes: u64) -> Result<(), String> {
        use std::sync::atomic::Ordering;
        let used = self
            .used
            .fetch_add(bytes, Ordering::SeqCst)
            .saturating_add(bytes);
        if used > self.limit {
            return Err(format!(
                "the blueprints pulled in this run unpack to more than {} MiB in all, the limit of one run (BPC_MAX_PULL_MIB raises it)",
                self.limit >> 20
            ));
        }
        Ok(())
    }
}

/// The Windsor CLI release bpc answers `cliVersion` checks as, unless
/// `BPC_WINDSOR_VERSION` says otherwise: the format bpc implements is that of the
/// Windsor CLI at 7b6bca77, which loads templates requiring `>=0.9.0`.
pub(crate) const WINDSOR_VERSION: &str = "0.9.0";

/// What forbids pulls, and how to allow them.
#[derive(Clone, Debug)]
pub struct OfflineBy {
    /// Says what forbids them (`the setting bpc.pull`).
    pub what: String,
    pub help: String,
}

/// Pulls that failed, by reference, for as long as the holder keeps it.
#[derive(Clone, Debug, Default)]
pub struct FailedPulls(Arc<Mutex<HashMap<String, Failure>>>);

impl FailedPulls {
    fn get(&self, reference: &Reference) -> Option<Failure> {
        let failed = self.0.lock().ok()?;
        failed.get(&reference.to_string()).cloned()
    }

    fn remember(&self, reference: &Reference, failure: &Failure) {
        if let Ok(mut failed) = self.0.lock() {
            failed.insert(reference.to_string(), failure.clone());
        }
    }
}

impl Settings {
    /// `NO_CACHE` and the credential variables as the process has them.
    pub(crate) fn from_process(offline: bool) -> Settings {
        let no_cache = std::env::var("NO_CACHE")
            .map(|v| v == "1" || v.eq_ignore_ascii_case("true"))
            .unwrap_or(false);
        let windsor_version = std::env::var("BPC_WINDSOR_VERSION")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| WINDSOR_VERSION.to_string());
        let budget = std::env::var("BPC_MAX_PULL_MIB")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or_else(PullBudget::default, |mib| {
                PullBudget::new(mib.saturating_mul(1024 * 1024))
            });
        Settings {
            offline,
            offline_by: None,
            budget,
            failed: None,
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
        let (what, help) = match &settings.offline_by {
            Some(by) => (by.what.as_str(), by.help.as_str()),
            None => (
                "--offline",
                "run once without --offline (or `windsor init`) to pull it into the cache",
            ),
        };
        return Err(Failure {
            message: format!(
                "{reference} is not in the cache ({} has no artifact.tar) and {what} forbids pulling it",
                dir.strip_prefix(root).unwrap_or(&dir).display()
            ),
            help: Some(help.to_string()),
        });
    }
    if let Some(earlier) = settings.failed.as_ref().and_then(|f| f.get(reference)) {
        return Err(Failure {
            message: format!(
                "{} (it failed earlier in this session and is not tried again)",
                earlier.message
            ),
            help: earlier.help,
        });
    }
    pull_into(&dir, reference, settings)
        .inspect_err(|failure| {
            if let Some(failed) = &settings.failed {
                failed.remember(reference, failure);
            }
        })
        .map(|()| dir)
}

/// Pulls `reference` and stores it as the cache entry `dir`: the layer streams to an
/// unnamed file beside the cache, unpacks from there into the staged `artifact.tar`
/// (each chunk charged to the run's budget), and the kept entries are extracted from
/// that file; nothing of it is held whole in memory.
fn pull_into(dir: &Path, reference: &Reference, settings: &Settings) -> Result<(), Failure> {
    let fail = |m: String| Failure {
        message: format!("failed to pull {reference}: {m}"),
        help: None,
    };
    let mut layer = cache::spool(dir).map_err(fail)?;
    registry::pull(
        reference,
        &settings.auth,
        archive::MAX_LAYER_BYTES,
        &mut layer,
    )
    .inspect_err(|_| cache::tidy(dir))?;
    cache::store(dir, settings.no_cache, |staging| {
        let path = staging.join("artifact.tar");
        use std::io::Write;
        let opened = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut tar = std::io::BufWriter::new(std::fs::File::create(&path).map_err(opened)?);
        archive::unpack(&mut layer, &mut tar, &mut |n| settings.budget.charge(n))?;
        tar.flush().map_err(opened)?;
        let tar = std::io::BufReader::new(std::fs::File::open(&path).map_err(opened)?);
        archive::extract(tar, staging)
    })
    .inspect_err(|_| cache::tidy(dir))
    .map_err(fail)
}
