//! Shim modules for Terraform components whose module is not the project's own
//! `terraform/<path>` (a component with a remote `source`): `terraform/<ID>/main.tf`
//! calling the real module with every variable passed through, `variables.tf` with the
//! module's variable blocks and `outputs.tf` re-exporting its outputs, so that
//! `terraform -chdir=DIR/terraform/<ID> init` and `apply` work with the
//! `terraform.tfvars.json` and `backend.tf.json` beside them (Windsor's shim,
//! reference §1.3; docs/render.md, Terraform).
//!
//! Where the module is (and so what it declares) is found by the caller ([`Module`]):
//! a directory bpc can read (an `oci://` module in the project's OCI cache, a local
//! source's directory), or an address only Terraform can fetch (git, http), whose
//! variables are unknown until `terraform init`.

use super::module_variables;
use crate::expr::Value;
use crate::files::Diagnostic;
use hcl::expr::{Traversal, Variable};
use hcl::{Attribute, Block, Body, Expression};

/// A component whose module is remote, as [`super::terraform`] sees it.
#[derive(Debug)]
pub struct Remote<'a> {
    pub id: &'a str,
    /// The component's `source` (a source name, or a URL given directly).
    pub source: &'a str,
    /// The source's URL (the `source` itself when it is a URL).
    pub url: Option<&'a str>,
    /// `<pathPrefix>/<path>` inside the source.
    pub subdir: String,
    /// The module address Terraform would fetch (`plan.json` `module`).
    pub address: &'a str,
}

/// Where a component's module is.
#[derive(Debug)]
pub enum Module {
    /// A directory bpc read: its path from the project root (`/`-separated, may climb
    /// out with `..`), and its `*.tf` files `(name, text)` in name order.
    Read {
        dir: String,
        files: Vec<(String, String)>,
    },
    /// What it declares is not known: `dir` is where it will be in the project (an
    /// OCI artifact not pulled yet), else Terraform fetches `address`; `why` says so.
    Unread { dir: Option<String>, why: String },
}

/// The shim of one component, to be added to the tree.
pub struct Shim {
    pub files: Vec<(String, String)>,
    /// Said on stderr and in `plan.json` when the module's variables are unknown.
    pub note: Option<String>,
    /// The module's variables when bpc read them, and where (`variables.tf` names).
    pub variables: Option<(String, module_variables::Variables)>,
    pub warning: Option<Diagnostic>,
}

/// A variable or output block of the real module, as its attributes are written.
struct Declared {
    name: String,
    attributes: Vec<(String, Expression)>,
}

/// The shim files of component `remote` in `dir` (`terraform/<ID>`); `up` leads from
/// that directory to the project root (`../../../` …, ending in `/` unless empty).
pub fn shim(
    remote: &Remote<'_>,
    module: Module,
    dir: &str,
    up: &str,
    inputs: Option<&Value>,
) -> Shim {
    let (source, read) = match module {
        Module::Read { dir: at, files } => (format!("{up}{at}"), Ok((at, files))),
        Module::Unread { dir: Some(at), why } => (format!("{up}{at}"), Err(why)),
        Module::Unread { dir: None, why } => (remote.address.to_string(), Err(why)),
    };
    let mut warning = None;
    let mut why = String::new();
    let declared = match read {
        Ok((at, files)) => match declarations(&at, &files) {
            Ok(d) => Some((at, files, d)),
            Err(w) => {
                why = format!("the variables of {} cannot be read", remote.address);
                warning = Some(w);
                None
            }
        },
        Err(w) => {
            why = w;
            None
        }
    };
    let mut out = Vec::new();
    let Some((at, files, (variables, outputs))) = declared else {
        // Unknown: pass the component's own inputs through, by their names.
        let all = input_names(inputs);
        let names: Vec<&String> = all.iter().filter(|n| is_identifier(n)).collect();
        let variables: Vec<Declared> = names
            .iter()
            .map(|n| Declared {
                name: n.to_string(),
                attributes: Vec::new(),
            })
            .collect();
        out.push((format!("{dir}/main.tf"), main_tf(&source, &variables)));
        out.push((
            format!("{dir}/variables.tf"),
            blocks("variable", &variables),
        ));
        out.push((
            format!("{dir}/outputs.tf"),
            format!(
                "# The outputs of {} are unknown to bpc: none are re-exported.\n",
                remote.address
            ),
        ));
        let shown: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        let note = format!(
            "terraform component `{}`: {why}; its shim passes the component's inputs through by name ({}) and re-exports no outputs",
            remote.id,
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(", ")
            }
        );
        return Shim {
            files: out,
            note: Some(note),
            variables: None,
            warning,
        };
    };
    out.push((format!("{dir}/main.tf"), main_tf(&source, &variables)));
    out.push((
        format!("{dir}/variables.tf"),
        blocks("variable", &variables),
    ));
    let outputs = reexported(outputs);
    out.push((format!("{dir}/outputs.tf"), blocks("output", &outputs)));
    // What the module takes, as for a local module (docs/render.md, `variables.json`).
    let parsed = module_variables::parse(&at, &files).ok();
    if let Some(parsed) = &parsed {
        let inputs = inputs.and_then(Value::as_map);
        if let Some(text) = module_variables::variables_json(remote.address, parsed, inputs) {
            out.push((format!("{dir}/variables.json"), text));
        }
    }
    Shim {
        files: out,
        note: None,
        variables: parsed.map(|p| (at, p)),
        warning,
    }
}

/// The module's outputs as the shim re-exports them (`module.main.<name>`), each
/// keeping its description and sensitivity.
fn reexported(outputs: Vec<Declared>) -> Vec<Declared> {
    outputs
        .into_iter()
        .map(|o| {
            let value = Expression::from(
                Traversal::builder(Variable::unchecked("module"))
                    .attr("main")
                    .attr(o.name.as_str())
                    .build(),
            );
            // Windsor's order: description, value, then sensitive.
            let (description, rest): (Vec<_>, Vec<_>) = o
                .attributes
                .into_iter()
                .partition(|(k, _)| k == "description");
            let mut attributes = description;
            attributes.push(("value".to_string(), value));
            attributes.extend(rest);
            Declared {
                name: o.name,
                attributes,
            }
        })
        .collect()
}

/// The `variable` blocks (description, type, default, sensitive, nullable, as
/// written) and `output` blocks (description, sensitive) of a module's files, in file
/// and declaration order; a variable or output whose name is not an HCL identifier is
/// left out (Terraform refuses it too).
fn declarations(
    dir: &str,
    files: &[(String, String)],
) -> Result<(Vec<Declared>, Vec<Declared>), Diagnostic> {
    let (mut variables, mut outputs) = (Vec::new(), Vec::new());
    for (name, text) in files {
        let body = hcl::parse(text).map_err(|e| {
            Diagnostic::warning(format!("cannot read {dir}/{name} as HCL: {e}")).with_help(
                "the shim of a component using this module passes its inputs through by name instead",
            )
        })?;
        for block in body.blocks() {
            let (kind, keep): (&mut Vec<Declared>, &[&str]) = match block.identifier() {
                "variable" => (
                    &mut variables,
                    &["description", "type", "default", "sensitive", "nullable"],
                ),
                "output" => (&mut outputs, &["description", "sensitive"]),
                _ => continue,
            };
            let Some(label) = block.labels().first().map(|l| l.as_str().to_string()) else {
                continue;
            };
            if !is_identifier(&label) || kind.iter().any(|d| d.name == label) {
                continue;
            }
            let attributes = keep
                .iter()
                .filter_map(|k| {
                    block
                        .body()
                        .attributes()
                        .find(|a| a.key() == *k)
                        .map(|a| (k.to_string(), a.expr().clone()))
                })
                .collect();
            kind.push(Declared {
                name: label,
                attributes,
            });
        }
    }
    Ok((variables, outputs))
}

fn is_identifier(name: &str) -> bool {
    hcl::Identifier::new(name).is_ok()
}

/// `module "main" { source = …; <name> = var.<name> … }`, names sorted.
fn main_tf(source: &str, variables: &[Declared]) -> String {
    let mut names: Vec<&str> = variables.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    let mut block = Block::builder("module")
        .add_label("main")
        .add_attribute(Attribute::new("source", source));
    for name in names {
        let value = Traversal::builder(Variable::unchecked("var"))
            .attr(name)
            .build();
        block = block.add_attribute(Attribute::new(name, Expression::from(value)));
    }
    to_hcl(Body::builder().add_block(block.build()).build())
}

/// One `<kind> "<name>" { … }` block per declaration, in order.
fn blocks(kind: &str, declared: &[Declared]) -> String {
    let mut body = Body::builder();
    for d in declared {
        let mut block = Block::builder(kind).add_label(d.name.as_str());
        for (key, expr) in &d.attributes {
            block = block.add_attribute(Attribute::new(key.as_str(), expr.clone()));
        }
        body = body.add_block(block.build());
    }
    to_hcl(body.build())
}

fn to_hcl(body: Body) -> String {
    let mut text = align(&hcl::to_string(&body).unwrap_or_default());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The `=` of consecutive `key = value` lines at one indentation lined up, as
/// `terraform fmt` does.
fn align(text: &str) -> String {
    fn split(line: &str) -> Option<(usize, &str, &str)> {
        let indent = line.len() - line.trim_start().len();
        let (key, value) = line[indent..].split_once(" = ")?;
        is_identifier(key).then_some((indent, key, value))
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len() + 64);
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, _, _)) = split(lines[i]) else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        };
        let mut j = i;
        while j < lines.len() && split(lines[j]).is_some_and(|(n, _, _)| n == indent) {
            j += 1;
        }
        let width = lines[i..j]
            .iter()
            .filter_map(|l| split(l))
            .map(|(_, k, _)| k.len())
            .max()
            .unwrap_or(0);
        for line in &lines[i..j] {
            if let Some((_, key, value)) = split(line) {
                out.push_str(&format!("{:indent$}{key:width$} = {value}\n", ""));
            }
        }
        i = j;
    }
    out
}

/// The names of a component's inputs that reach Terraform (every non-null one, the
/// deferred ones included), sorted.
pub fn input_names(inputs: Option<&Value>) -> Vec<String> {
    let mut names: Vec<String> = inputs
        .and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| !v.is_nil())
                .map(|(k, _)| k.to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The path from directory `from` to `to` (both absolute and free of `.`/`..` and
/// links), `/`-separated; empty when they are the same.
pub fn relative(from: &std::path::Path, to: &std::path::Path) -> String {
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    parts.join("/")
}

/// An absolute form of `path` with links resolved as far as it exists, and the rest
/// appended as written (`.` dropped, `..` going up), for [`relative`].
pub fn resolved(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut existing = absolute.clone();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(c) = existing.canonicalize() {
            break c;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break existing,
        }
    };
    let mut out = base;
    for part in rest.iter().rev() {
        match std::path::Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => out.push(part),
        }
    }
    out
}

/// Finds the module of `remote` for the project at `root` (absolute, links resolved):
/// an `oci://` module in the project's OCI cache (`.windsor/cache/oci/<key>/…`, where
/// bpc and Windsor pull artifacts), a local source's directory (`local_sources`: its
/// name → the directory bpc loaded it from), else an address Terraform fetches.
/// `read` gives the `*.tf` files of a directory, `None` when it is not one.
pub fn locate(
    remote: &Remote<'_>,
    root: &std::path::Path,
    local_sources: &std::collections::BTreeMap<String, std::path::PathBuf>,
    read: impl Fn(&std::path::Path) -> Option<Vec<(String, String)>>,
) -> Module {
    let url = remote.url.unwrap_or(remote.source);
    if url.starts_with("oci://") {
        let reference = remote
            .address
            .strip_prefix("oci://")
            .and_then(|rest| rest.split_once("//"))
            .map(|(r, _)| crate::oci::Reference::parse(&format!("oci://{r}")));
        let Some(Ok(reference)) = reference else {
            return Module::Unread {
                dir: None,
                why: format!(
                    "the variables of {} are unknown: it is not a valid OCI reference",
                    remote.address
                ),
            };
        };
        let key = reference.cache_key();
        let entry = format!(".windsor/cache/oci/{key}");
        let dir = format!("{entry}/{}", remote.subdir);
        let complete = crate::oci::cache::complete(&root.join(&entry));
        return match read(&root.join(&dir)).filter(|_| complete) {
            Some(files) => Module::Read { dir, files },
            None => Module::Unread {
                why: format!(
                    "the variables of {} are unknown: it is not in the project's OCI cache ({dir}), which `bpc compose` or `windsor init` fills",
                    remote.address
                ),
                dir: Some(dir),
            },
        };
    }
    if crate::template::source_entry::local_path(url).is_some() {
        let Some(base) = local_sources.get(remote.source) else {
            return Module::Unread {
                dir: None,
                why: format!(
                    "the variables of {} are unknown: source `{}` is not a directory bpc loaded",
                    remote.address, remote.source
                ),
            };
        };
        let module = resolved(&base.join(&remote.subdir));
        let dir = relative(root, &module);
        return match read(&module) {
            Some(files) => Module::Read { dir, files },
            None => Module::Unread {
                why: format!(
                    "the variables of {} are unknown: there is no module directory at {dir}",
                    remote.address,
                ),
                dir: Some(dir),
            },
        };
    }
    Module::Unread {
        dir: None,
        why: format!(
            "the variables of {} are unknown until `terraform init` fetches it",
            remote.address
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn remote() -> Remote<'static> {
        Remote {
            id: "cluster",
            source: "core",
            url: Some("oci://ghcr.io/acme/core:v1"),
            subdir: "terraform/cluster".into(),
            address: "oci://ghcr.io/acme/core:v1//terraform/cluster",
        }
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a/b/c")), "");
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a")), "../..");
        assert_eq!(relative(Path::new("/a/x"), Path::new("/a/y/z")), "../y/z");
    }

    #[test]
    fn a_read_module_gets_every_variable_and_output() {
        let files = vec![
            (
                "main.tf".to_string(),
                "variable \"zeta\" {\n  type = list(string)\n  default = [\"a\"]\n}\noutput \"id\" { value = 1 }\n".to_string(),
            ),
            (
                "variables.tf".to_string(),
                "variable \"alpha\" {\n  type = string\n  description = \"The A\"\n  sensitive = true\n}\n".to_string(),
            ),
        ];
        let module = Module::Read {
            dir: ".windsor/cache/oci/x/terraform/cluster".into(),
            files,
        };
        let s = shim(&remote(), module, "terraform/cluster", "../../../", None);
        assert!(s.note.is_none());
        let main = &s.files[0].1;
        assert!(
            main.contains("source = \"../../../.windsor/cache/oci/x/terraform/cluster\""),
            "{main}"
        );
        assert!(
            main.find("alpha  = var.alpha") < main.find("zeta   = var.zeta"),
            "{main}"
        );
        let variables = hcl::parse(&s.files[1].1).expect("variables.tf parses");
        let names: Vec<_> = variables
            .blocks()
            .map(|b| b.labels()[0].as_str().to_string())
            .collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let outputs = hcl::parse(&s.files[2].1).expect("outputs.tf parses");
        assert_eq!(outputs.blocks().count(), 1);
        assert!(s.files[2].1.contains("module.main.id"), "{}", s.files[2].1);
    }

    #[test]
    fn an_unread_module_passes_inputs_through_with_a_note() {
        let module = Module::Unread {
            dir: None,
            why: "the variables of X are unknown until `terraform init` fetches it".into(),
        };
        let inputs = crate::value::json::parse(
            r#"{"b": 1, "a": "x", "n": null}"#,
            crate::value::json::FromJson::Typed,
        )
        .expect("json");
        let s = shim(
            &remote(),
            module,
            "terraform/cluster",
            "../../",
            Some(&inputs),
        );
        let note = s.note.expect("a note");
        assert!(note.contains("unknown until `terraform init`"), "{note}");
        assert!(s.files[0]
            .1
            .contains("oci://ghcr.io/acme/core:v1//terraform/cluster"));
        for (_, text) in &s.files {
            hcl::parse(text).expect("valid HCL");
        }
    }
}
