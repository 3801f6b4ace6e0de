//! `bpc bundle` and `bpc push`: a template published as a Windsor blueprint artifact
//! (a `.tar.gz` file, or pushed to an OCI registry), laid out as the Windsor CLI's
//! `windsor bundle` / `windsor push` lay it out, and reproducible (S14).

use super::args::WhereArgs;
use crate::files::out_path::write_atomically;
use crate::oci::bundle::{self, Bundle, Naming};
use crate::oci::{metadata, registry, Reference, Settings};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug, Clone, Default)]
#[command(after_help = "Examples:
  bpc bundle                                   # ./<name>-<version>.tar.gz from metadata.yaml
  bpc bundle --tag core:v1.2.0 -o dist/
  bpc bundle --tag v1.2.0 -o core.tar.gz")]
pub struct BundleArgs {
    #[command(flatten)]
    pub at: WhereArgs,
    /// `NAME:VERSION`, or `VERSION` alone (the name then comes from metadata.yaml).
    #[arg(long, short = 't', value_name = "NAME:VERSION|VERSION")]
    pub tag: Option<String>,
    /// Output file, or a directory for `<name>-<version>.tar.gz` (default: `.`).
    #[arg(long, short = 'o', value_name = "PATH", default_value = ".")]
    pub output: PathBuf,
}

#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:
  bpc push oci://ghcr.io/acme/platform:v1.2.0
  bpc push oci://127.0.0.1:5000/windsorcli/core:v0.1.0 --project ../core")]
pub struct PushArgs {
    /// Where to push: `oci://REGISTRY/REPOSITORY:TAG` (the tag is the version).
    #[arg(value_name = "oci://REGISTRY/REPO:TAG")]
    pub reference: String,
    #[command(flatten)]
    pub at: WhereArgs,
}

/// The project root and template directory the flags name.
fn locate(at: &WhereArgs) -> Result<(PathBuf, PathBuf), String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let root = match &at.project {
        Some(p) => cwd.join(p),
        None => cwd
            .ancestors()
            .find(|d| d.join("windsor.yaml").is_file())
            .unwrap_or(&cwd)
            .to_path_buf(),
    };
    let template = match &at.template {
        Some(t) => cwd.join(t),
        None if root.join("contexts").join("_template").is_dir() => {
            root.join("contexts").join("_template")
        }
        None => root.join("_template"),
    };
    if !template.is_dir() {
        return Err(format!(
            "no template to bundle: {} is not a directory (give --template DIR)",
            template.display()
        ));
    }
    Ok((root, template))
}

/// Bundles, then checks the template's own `cliVersion` against the Windsor version
/// bpc answers as.
fn make(at: &WhereArgs, naming: &Naming) -> Result<Bundle, String> {
    let (root, template) = locate(at)?;
    let bundle = bundle::bundle(&template, &root, naming)?;
    if let Some(c) = &bundle.cli_version {
        metadata::check(&Settings::from_process(false).windsor_version, c)?;
    }
    Ok(bundle)
}

pub fn run_bundle(args: BundleArgs) -> ExitCode {
    let naming = match args.tag.as_deref() {
        None => Naming {
            name: None,
            version: None,
            name_wins: false,
            from: "--tag",
        },
        Some(tag) if tag.contains(':') => match tag.split_once(':') {
            Some((n, v)) if !n.is_empty() && !v.is_empty() && !v.contains(':') => Naming {
                name: Some(n.to_string()),
                version: Some(v.to_string()),
                name_wins: true,
                from: "--tag",
            },
            _ => {
                eprintln!("error: --tag must be NAME:VERSION or VERSION, got: {tag}");
                return ExitCode::from(2);
            }
        },
        Some(version) => Naming {
            name: None,
            version: Some(version.to_string()),
            name_wins: false,
            from: "--tag",
        },
    };
    let result = make(&args.at, &naming).and_then(|b| {
        let path = output_path(&args.output, &b)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        write_atomically(&path, &b.layer)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok((path, b))
    });
    match result {
        Ok((path, b)) => {
            println!(
                "Blueprint bundled successfully: {} ({} files, {})",
                path.display(),
                b.files.len(),
                b.digest()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `-o` as `windsor bundle` reads it: an existing directory, a path ending in `/` or
/// a path without an extension is a directory for `<name>-<version>.tar.gz`.
/// The name and the version then name the file, so each must be a plain name.
fn output_path(output: &Path, b: &Bundle) -> Result<PathBuf, String> {
    let text = output.to_string_lossy();
    let dir = output.is_dir() || text.ends_with('/') || output.extension().is_none();
    if dir {
        bundle::plain_file_name_part(&b.name, "name", &b.name_from)?;
        bundle::plain_file_name_part(&b.version, "version", &b.version_from)?;
        Ok(output.join(format!("{}-{}.tar.gz", b.name, b.version)))
    } else {
        Ok(output.to_path_buf())
    }
}

pub fn run_push(args: PushArgs) -> ExitCode {
    let reference = match Reference::parse(&args.reference) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // The tag is the version; the name is metadata.yaml's, else the repository path.
    let naming = Naming {
        name: Some(reference.repository.clone()),
        version: Some(reference.tag.clone()),
        name_wins: false,
        from: "the pushed reference",
    };
    let bundle = match make(&args.at, &naming) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let settings = Settings::from_process(false);
    match registry::push(&reference, &settings.auth, &bundle.artifact()) {
        Ok(digest) => {
            println!("Blueprint pushed successfully: {reference} ({digest})");
            ExitCode::SUCCESS
        }
        Err(f) => {
            // Rendered as every other diagnostic without a place in a file.
            let mut d = crate::files::Diagnostic::error(f.message);
            if let Some(help) = f.help {
                d = d.with_help(help);
            }
            super::terminal::report(&[d], &crate::files::FileMap::new());
            ExitCode::from(1)
        }
    }
}
