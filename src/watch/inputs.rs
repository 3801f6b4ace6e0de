//! What a watched run reads, as paths to watch: the template directory (facets,
//! schema, blueprint, tests, and every file `file()` or `jsonnet()` can read, since
//! those are confined to the template tree), each local source's directory, the
//! project's `windsor.yaml`, `contexts/` (values and each context's `blueprint.yaml`
//! overlay) and `terraform/` (the modules `render` checks inputs against), `--values`
//! files and the `--terraform-outputs` file.
//!
//! Whole directories rather than the files one composition happened to read: a facet
//! added later, or a file a `when` switches on, must trigger a round too, and the tree
//! records no reads. What the run writes is never an input, so writing its own output
//! cannot start another round.

use crate::session::{Options, Session};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Watched with everything below them.
    pub dirs: Vec<PathBuf>,
    /// Watched one by one (through their directory, so an editor's save by rename is
    /// seen too).
    pub files: Vec<PathBuf>,
    /// Outputs of the run: never inputs, even when they lie below an input directory.
    pub outputs: Vec<PathBuf>,
}

impl Inputs {
    /// The inputs of `session`, or, when it could not be opened, of the project the
    /// options point at (its whole directory when even discovery failed).
    pub fn of(options: &Options, session: Option<&Session>, outputs: &[PathBuf]) -> Inputs {
        let mut inputs = Inputs {
            outputs: outputs.iter().map(|p| absolute(&options.cwd, p)).collect(),
            ..Inputs::default()
        };
        for file in &options.locate.values {
            inputs.files.push(absolute(&options.cwd, file));
        }
        if let Some(file) = &options.terraform_outputs {
            inputs.files.push(absolute(&options.cwd, file));
        }
        let discovered;
        let project = match session {
            Some(session) => &session.project,
            None => match crate::project::discover(
                &options.cwd,
                &options.locate,
                options.env_context.clone(),
                &crate::files::FileMap::new(),
            ) {
                Ok(project) => {
                    discovered = project;
                    &discovered
                }
                Err(_) => {
                    let dir = options.locate.project.as_deref().unwrap_or(Path::new(""));
                    inputs.dirs.push(absolute(&options.cwd, dir));
                    return inputs;
                }
            },
        };
        let root = absolute(&options.cwd, &project.root);
        inputs.files.push(root.join("windsor.yaml"));
        inputs.dirs.push(root.join("contexts"));
        // Local Terraform modules, whose variables `render` checks inputs against.
        inputs.dirs.push(root.join("terraform"));
        match project.template.root_dir() {
            Some(dir) => inputs.dirs.push(dir),
            // An archive: the file itself.
            None => {
                if let Some(archive) = &options.locate.template {
                    inputs.files.push(absolute(&options.cwd, archive));
                }
            }
        }
        if let Some(session) = session {
            for upstream in &session.template.upstream {
                inputs.dirs.extend(upstream.template.tree.root_dir());
            }
        }
        inputs.dirs.sort();
        inputs.dirs.dedup();
        inputs.files.sort();
        inputs.files.dedup();
        inputs
    }

    /// Whether a change at `path` concerns the run.
    pub fn covers(&self, path: &Path) -> bool {
        let path = canonical(path);
        let input = self.files.contains(&path) || self.dirs.iter().any(|d| path.starts_with(d));
        input && !self.outputs.iter().any(|out| is_output(out, &path)) && !editor_temporary(&path)
    }
}

/// `path` is the output `out`, lies below it, or is (or lies below) one of the
/// temporary siblings bpc writes it through (`.<name>.…`: a render's new tree, the old
/// one being deleted).
fn is_output(out: &Path, path: &Path) -> bool {
    if path.starts_with(out) {
        return true;
    }
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
        return false;
    };
    let temporary = format!(".{}.", name.to_string_lossy());
    path.ancestors().any(|a| {
        a.parent() == Some(parent)
            && a.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&temporary))
    })
}

/// The scratch files editors save through (vim's `4913`, `.x.swp` and `x~`, Emacs's
/// `.#x` and `#x#`, JetBrains' `x___jb_tmp___`, GNOME's `.goutputstream-…`, Kate's
/// `.x.kate-swp`, `sed -i`'s `sedXXXXXX`): their changes start no round and are not
/// named in the watch line; the real file's change that follows is.
fn editor_temporary(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    let sed_scratch = name.len() == 9
        && name.starts_with("sed")
        && name[3..].bytes().all(|b| b.is_ascii_alphanumeric());
    name == "4913"
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".swo")
        || name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with("___jb_tmp___")
        || name.ends_with("___jb_old___")
        || name.starts_with(".goutputstream-")
        || name.ends_with(".kate-swp")
        || sed_scratch
}

/// `path` taken from `cwd`, symlinks resolved as far as it exists (the file itself may
/// be missing: a values file not written yet), so it compares with watcher paths.
pub fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    canonical(&cwd.join(path))
}

fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => canonical(parent).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_and_their_temporary_files_are_not_inputs() {
        let inputs = Inputs {
            dirs: vec![PathBuf::from("/p/contexts")],
            files: vec![PathBuf::from("/p/windsor.yaml")],
            outputs: vec![
                PathBuf::from("/p/contexts/out.yaml"),
                PathBuf::from("/p/contexts/render"),
            ],
        };
        assert!(inputs.covers(Path::new("/p/windsor.yaml")));
        assert!(inputs.covers(Path::new("/p/contexts/dev/values.yaml")));
        assert!(!inputs.covers(Path::new("/p/other.yaml")));
        assert!(!inputs.covers(Path::new("/p/contexts/out.yaml")));
        assert!(!inputs.covers(Path::new("/p/contexts/.out.yaml.x1.bpc-tmp")));
        assert!(!inputs.covers(Path::new("/p/contexts/render/terraform/a.json")));
        assert!(!inputs.covers(Path::new("/p/contexts/.render.bpc-new-7")));
        // What is inside a render's temporary trees (written, or deleted after the
        // swap) is output too.
        assert!(!inputs.covers(Path::new(
            "/p/contexts/.render.bpc-new-7/terraform/a/terraform.tfvars.json"
        )));
        assert!(!inputs.covers(Path::new("/p/contexts/.render.bpc-old-7/kustomize/x.yaml")));
    }

    #[test]
    fn editor_scratch_files_are_not_inputs() {
        let inputs = Inputs {
            dirs: vec![PathBuf::from("/p/t")],
            ..Inputs::default()
        };
        assert!(inputs.covers(Path::new("/p/t/facets/a.yaml")));
        for scratch in [
            "/p/t/facets/4913",
            "/p/t/facets/a.yaml~",
            "/p/t/facets/.a.yaml.swp",
            "/p/t/facets/.#a.yaml",
            "/p/t/facets/#a.yaml#",
            "/p/t/facets/a.yaml___jb_tmp___",
            "/p/t/facets/.goutputstream-XYZ123",
            "/p/t/facets/sedAb12Cd",
        ] {
            assert!(!inputs.covers(Path::new(scratch)), "{scratch}");
        }
    }
}
