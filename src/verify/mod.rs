//! `bpc verify`: whether a context's render works once Flux reconciles it, found
//! offline. Every rendered Flux Kustomization is built as kustomize-controller builds
//! it ([`build`], with a real kustomize, [`tool`]), its post-build substitutions applied
//! ([`substitute`]), every object validated ([`schema`]) and the deployment checked as
//! a whole ([`deployment`]); each finding points at the facet that wrote the
//! Kustomization, component or substitution at fault ([`provenance`], [`report`]).
//!
//! Builds are the cost: each distinct (tree, path, components, patches, target
//! namespace) is built once per run, in parallel, whatever the number of contexts that
//! share it; substitution and validation are per context, in memory.

pub(crate) mod build;
mod confine;
pub(crate) mod deployment;
pub(crate) mod given_crds;
pub mod provenance;
pub(crate) mod report;
pub(crate) mod schema;
pub(crate) mod substitute;
pub(crate) mod tool;

use crate::compose::face::Composition;
use crate::files::{FileId, FileMap, Span};
use crate::render::Rendered;
use crate::template::Template;
use build::{Built, Request, Workspace};
use deployment::{Issue, Placed};
use provenance::{Provenance, Written};
use report::{Check, ContextReport, Finding, Report};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use tool::Tool;

/// One context to verify: its composition and its render (Flux manifests as JSON).
pub struct Input<'a> {
    pub name: String,
    pub composition: &'a Composition,
    pub template: &'a Template,
    pub rendered: &'a Rendered,
}

/// What a run shares: the project, the kustomize, the diagnostics' files.
pub struct Run<'a> {
    /// The project root: the own GitRepository's tree and the OCI cache's home.
    pub root: &'a Path,
    pub tool: &'a Tool,
    pub files: &'a FileMap,
    pub threads: usize,
    /// Called as builds finish: (done, total).
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
    /// Rego policies to run on every object a context applies (`--policy`).
    pub policies: Option<Policies<'a>>,
    /// CRDs given with `--crds`, for kinds no CRD of a context's build defines.
    pub crds: &'a schema::Crds,
}

/// The policies of `bpc verify --policy`, and what they read the context's values with.
#[derive(Clone, Copy)]
pub struct Policies<'a> {
    pub loaded: &'a crate::policy::Policies,
    pub budget: crate::policy::Budget,
    /// The schema that says which values are masked.
    pub schema: Option<&'a crate::compose::face::Schema>,
}

/// A context's Kustomizations, planned, and what was found before building.
type Plan = (Vec<Planned>, Vec<Finding>);

/// A tree file registered for diagnostics, with its text.
type Registered = Option<(FileId, std::sync::Arc<str>)>;

/// One Kustomization of a context, planned.
struct Planned {
    name: String,
    object: Json,
    /// Index into the run's distinct builds.
    build: Option<usize>,
    /// Component directories (`kustomize/x/y`) of the build, with the component names.
    components: Vec<(String, String)>,
}

/// Verifies every context of `inputs`.
pub fn verify(run: &Run<'_>, inputs: &[Input<'_>]) -> Result<Report, String> {
    let mut workspace = Workspace::new()?;
    let mut requests: Vec<Request> = Vec::new();
    let mut index: HashMap<Request, usize> = HashMap::new();
    let mut plans = Vec::new();
    for input in inputs {
        let (planned, findings) = plan(run, input, &mut workspace, &mut |r| {
            *index.entry(r.clone()).or_insert_with(|| {
                requests.push(r);
                requests.len() - 1
            })
        })?;
        plans.push((planned, findings));
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    let order: Vec<usize> = (0..requests.len()).collect();
    let builds: Vec<Result<Built, String>> = crate::parallel::map(&order, run.threads, |&i| {
        let built = workspace.build(run.tool, &requests[i], i);
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        (run.progress)(n, requests.len());
        built
    });
    let validators = schema::Validators::default();
    let tree_files = TreeFiles::default();
    let pairs: Vec<(&Input<'_>, Plan)> = inputs.iter().zip(plans).collect();
    let contexts = crate::parallel::map(&pairs, run.threads, |(input, (planned, findings))| {
        let mut cx = ContextCheck {
            run,
            input,
            provenance: Provenance {
                composition: input.composition,
                template: input.template,
            },
            workspace: &workspace,
            requests: &requests,
            builds: &builds,
            validators: &validators,
            tree_files: &tree_files,
            report: ContextReport {
                name: input.name.clone(),
                kustomizations: planned.len(),
                findings: findings.clone(),
                ..ContextReport::default()
            },
        };
        cx.check(planned);
        cx.report
    });
    Ok(Report {
        tool: run.tool.describe(),
        builds: requests.len(),
        contexts,
    })
}

/// The rendered Flux objects of a context (`flux/**/*.json`, the index left out).
fn rendered_objects(rendered: &Rendered) -> Vec<Json> {
    rendered
        .files
        .iter()
        .filter(|(path, _)| {
            path.starts_with("flux/")
                && path.ends_with(".json")
                && path.as_str() != "flux/deferred.json"
        })
        .filter_map(|(_, bytes)| serde_json::from_slice(bytes).ok())
        .collect()
}

fn text<'j>(value: &'j Json, pointer: &str) -> Option<&'j str> {
    value.pointer(pointer).and_then(Json::as_str)
}

/// The Kustomizations of a context, each with its build request (registered through
/// `request`), and what is wrong before building: a path or component that is not a
/// directory, a source verify cannot read.
fn plan(
    run: &Run<'_>,
    input: &Input<'_>,
    workspace: &mut Workspace,
    request: &mut dyn FnMut(Request) -> usize,
) -> Result<Plan, String> {
    let objects = rendered_objects(input.rendered);
    let provenance = Provenance {
        composition: input.composition,
        template: input.template,
    };
    let mut planned = Vec::new();
    let mut findings = Vec::new();
    // Source roots with no `kustomize/` at all, and the Kustomizations that read them:
    // one finding each, not one per Kustomization.
    let mut treeless: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for object in objects.iter().filter(|o| is_flux_kustomization(o)) {
        let name = text(object, "/metadata/name")
            .unwrap_or_default()
            .to_string();
        let mut entry = Planned {
            name: name.clone(),
            object: object.clone(),
            build: None,
            components: Vec::new(),
        };
        let root = match source_root(run.root, &input.name, object, &objects) {
            Ok(root) => root,
            Err(why) => {
                findings.push(
                    Finding::new(
                        Check::SourceNotRead,
                        format!("kustomization `{name}` was not built: {why}"),
                    )
                    .kustomization(&name)
                    .with(|d| at(d, provenance.field(&name, "source"), "its source")),
                );
                planned.push(entry);
                continue;
            }
        };
        if !root.join("kustomize").is_dir() {
            treeless.entry(root).or_default().push(name);
            planned.push(entry);
            continue;
        }
        let path = build::normalize(text(object, "/spec/path").unwrap_or_default());
        if let Some(near) = deployment::missing_dir(&root, &path) {
            let written = provenance.field(&name, "path");
            findings.push(
                Finding::new(
                    Check::MissingPath,
                    format!(
                        "the path `{path}` of kustomization `{name}` is not a directory of {}",
                        shown(run.root, &root.join("kustomize"))
                    ),
                )
                .kustomization(&name)
                .with(|d| at_or_near(d, written, "the kustomization's path", near)),
            );
            planned.push(entry);
            continue;
        }
        let (present, missing) =
            present_components(run.root, &root, &path, &name, object, &provenance);
        findings.extend(missing);
        let components = present.iter().map(|(_, c)| c.clone()).collect();
        entry.components = present;
        let tree = workspace.tree(&root)?;
        let patches = object
            .pointer("/spec/patches")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(Json::to_string)
            .collect();
        entry.build = Some(request(Request {
            tree,
            path,
            components,
            patches,
            target_namespace: text(object, "/spec/targetNamespace").map(str::to_string),
        }));
        planned.push(entry);
    }
    for (root, names) in treeless {
        findings.push(treeless_finding(&shown(run.root, &root), &names));
    }
    Ok((planned, findings))
}

/// The components of the Kustomization `name` (its `spec.path` is `path` in the tree
/// at `root`) that are directories of the tree, as (tree directory, entry); and a
/// finding for each that is not.
fn present_components(
    project: &Path,
    root: &Path,
    path: &str,
    name: &str,
    object: &Json,
    provenance: &Provenance<'_>,
) -> (Vec<(String, String)>, Vec<Finding>) {
    let mut present = Vec::new();
    let mut findings = Vec::new();
    for c in object
        .pointer("/spec/components")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        let dir = build::normalize(&format!("{path}/{c}"));
        let Some(near) = deployment::missing_dir(root, &dir) else {
            present.push((dir, c.to_string()));
            continue;
        };
        let written = provenance.entry(name, "components", c);
        let near = near.and_then(|n| n.strip_prefix(&format!("{path}/")).map(str::to_string));
        findings.push(
            Finding::new(
                Check::MissingComponent,
                format!(
                    "component `{c}` of kustomization `{name}` is not a directory of {}",
                    shown(project, &root.join(path))
                ),
            )
            .kustomization(name)
            .with(|d| at_or_near(d, written, "the component", near)),
        );
    }
    (present, findings)
}

/// One finding for a source root without `kustomize/` (`shown`, relative to the
/// project), naming the Kustomizations that read it.
fn treeless_finding(shown: &str, names: &[String]) -> Finding {
    Finding::new(
        Check::MissingPath,
        format!(
            "{} has no `kustomize/` directory: none of the {} kustomization(s) reading it can be built ({})",
            match shown {
                "" => "the project".to_string(),
                p => format!("`{p}`"),
            },
            names.len(),
            names.join(", ")
        ),
    )
}

/// [`at`], with the nearest existing directory as help when there is one.
fn at_or_near(
    d: crate::files::Diagnostic,
    written: Option<Written>,
    label: &str,
    near: Option<String>,
) -> crate::files::Diagnostic {
    let d = at(d, written, label);
    match near {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d,
    }
}

fn is_flux_kustomization(object: &Json) -> bool {
    text(object, "/kind") == Some("Kustomization")
        && text(object, "/apiVersion")
            .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
}

/// The directory holding the `kustomize/` tree a Kustomization's source points at:
/// the project for the context's own GitRepository, the pulled artifact in the OCI
/// cache for an OCIRepository.
fn source_root(
    root: &Path,
    context: &str,
    object: &Json,
    objects: &[Json],
) -> Result<PathBuf, String> {
    let kind = text(object, "/spec/sourceRef/kind").unwrap_or_default();
    let name = text(object, "/spec/sourceRef/name").unwrap_or_default();
    if kind == "GitRepository" && name == context {
        return Ok(root.to_path_buf());
    }
    let source = objects
        .iter()
        .find(|o| text(o, "/kind") == Some(kind) && text(o, "/metadata/name") == Some(name));
    match (kind, source) {
        ("OCIRepository", Some(source)) => {
            let url = text(source, "/spec/url").unwrap_or_default();
            let tag = text(source, "/spec/ref/tag").unwrap_or("latest");
            let reference = crate::oci::reference::Reference::parse(&format!("{url}:{tag}"))?;
            let dir = crate::oci::cache::dir(root, &reference);
            if dir.join("kustomize").is_dir() {
                Ok(dir)
            } else {
                Err(format!(
                    "OCIRepository `{name}` ({url}:{tag}) is not in the project's cache ({}); \
                     `bpc render` pulls it",
                    shown(root, &dir)
                ))
            }
        }
        (_, None) => Err(format!("its source {kind} `{name}` is not rendered")),
        _ => Err(format!(
            "its source {kind} `{name}` is a git repository, which verify does not fetch"
        )),
    }
}

/// `path` relative to the project root when under it.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| path.display().to_string())
}

/// Points `d` at what `written` names, or says nothing wrote it in the template.
fn at(
    d: crate::files::Diagnostic,
    written: Option<Written>,
    label: &str,
) -> crate::files::Diagnostic {
    match written {
        Some(w) => d.with_primary(w.span, format!("{label}, written by {}", w.by)),
        None => {
            d.with_note("written by bpc's render, not by a facet (the `crds` layer or a default)")
        }
    }
}

/// The files of the kustomize trees registered for diagnostics, each once.
#[derive(Default)]
struct TreeFiles {
    ids: Mutex<HashMap<PathBuf, Registered>>,
}

impl TreeFiles {
    fn get(
        &self,
        files: &FileMap,
        disk: &Path,
        shown: &str,
    ) -> Option<(FileId, std::sync::Arc<str>)> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.entry(disk.to_path_buf())
            .or_insert_with(|| {
                let text: std::sync::Arc<str> = std::fs::read_to_string(disk).ok()?.into();
                Some((files.add(shown, text.clone()), text))
            })
            .clone()
    }
}

/// The checks of one context after the builds.
struct ContextCheck<'a, 'r> {
    run: &'a Run<'r>,
    input: &'a Input<'a>,
    provenance: Provenance<'a>,
    workspace: &'a Workspace,
    requests: &'a [Request],
    builds: &'a [Result<Built, String>],
    validators: &'a schema::Validators,
    tree_files: &'a TreeFiles,
    report: ContextReport,
}

impl ContextCheck<'_, '_> {
    fn push(&mut self, finding: Finding) {
        self.report.findings.push(finding);
    }

    fn check(&mut self, planned: &[Planned]) {
        let rendered = rendered_objects(self.input.rendered);
        let config_maps: BTreeMap<&str, &Json> = rendered
            .iter()
            .filter(|o| text(o, "/kind") == Some("ConfigMap"))
            .filter_map(|o| Some((text(o, "/metadata/name")?, o)))
            .collect();
        let deferred: BTreeSet<(String, String)> = self
            .input
            .rendered
            .deferred
            .iter()
            .filter_map(|d| d.split_once('.'))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let gitops = rendered
            .iter()
            .find(|o| text(o, "/kind") == Some("Namespace"))
            .and_then(|o| text(o, "/metadata/name"))
            .unwrap_or("system-gitops")
            .to_string();
        let mut placed: Vec<Placed> = rendered
            .iter()
            .map(|o| Placed {
                value: o.clone(),
                owner: None,
                file: None,
                empty: Vec::new(),
            })
            .collect();
        for k in planned {
            let Some(b) = k.build else { continue };
            match &self.builds[b] {
                Err(why) => {
                    let remote = self.workspace.remote_of(&self.requests[b]);
                    // A patch names the object it changes: a failure that mentions one
                    // points at the patches.
                    let written = if why.contains("patch") {
                        self.provenance.field(&k.name, "patches")
                    } else {
                        self.provenance.kustomization(&k.name)
                    };
                    let finding = if remote.is_empty() {
                        Finding::new(
                            Check::BuildFailed,
                            format!("kustomization `{}` does not build", k.name),
                        )
                    } else {
                        Finding::new(
                            Check::RemoteResource,
                            format!(
                                "kustomization `{}` cannot be built offline: it includes remote resources ({})",
                                k.name,
                                remote.join(", ")
                            ),
                        )
                    };
                    let finding = finding.kustomization(&k.name).with(|d| {
                        at(d, written, "the kustomization")
                            .with_note(format!("kustomize: {}", tidy(why, &self.requests[b].path)))
                    });
                    self.push(finding);
                }
                Ok(built) => {
                    let objects = self.substituted(k, built, &config_maps, &deferred);
                    placed.extend(objects);
                }
            }
        }
        self.report.objects = placed.len();
        let mut crds = schema::Crds::default();
        for p in &placed {
            crds.add(&p.value);
        }
        crds.fill_from(self.run.crds);
        for p in &placed {
            self.validate(p, &crds, planned);
        }
        for issue in deployment::check(&placed, &gitops) {
            self.issue(issue, &placed, planned);
        }
        if let Some(policies) = self.run.policies {
            self.policies(policies, &placed, planned);
        }
    }

    /// The policies over every object the context applies (built and rendered), each
    /// finding at the component or Kustomization the object comes from.
    fn policies(&mut self, policies: Policies<'_>, placed: &[Placed], planned: &[Planned]) {
        let data = crate::policy::input::context_data(
            &self.input.name,
            &self.input.composition.context,
            policies.schema,
        );
        let texts = placed.iter().map(|p| p.value.to_string()).collect();
        let outcome = match crate::policy::evaluate::evaluate(
            policies.loaded,
            data,
            texts,
            policies.budget,
        ) {
            Ok(outcome) => outcome,
            Err(d) => {
                self.push(Finding {
                    check: Check::PolicyDenied,
                    kustomization: None,
                    object: None,
                    file: None,
                    diagnostic: d,
                });
                return;
            }
        };
        for raw in outcome.findings {
            let (Some(rule), Some(p)) =
                (policies.loaded.rules.get(raw.rule), placed.get(raw.input))
            else {
                continue;
            };
            let check = match rule.kind {
                crate::policy::RuleKind::Warn => Check::PolicyWarned,
                _ => Check::PolicyDenied,
            };
            let (written, label) = self.origin_any(p, planned, "name");
            let mut finding = Finding::new(
                check,
                format!("{} (policy {}.{})", raw.message, rule.package, rule.name),
            )
            .object(id_of(&p.value))
            .file(p.file.clone());
            if let Some(owner) = &p.owner {
                finding = finding.kustomization(owner);
            }
            self.push(finding.with(|d| at(d, written, label)));
        }
    }

    /// The origin of an object of Kustomization `k` from tree file `file`: the
    /// component entry whose directory holds the file, else the Kustomization.
    fn origin_of(&self, k: &Planned, file: Option<&str>) -> (Option<Written>, &'static str) {
        if let Some(file) = file {
            for (dir, name) in &k.components {
                if file.starts_with(&format!("{dir}/")) {
                    if let Some(w) = self.provenance.entry(&k.name, "components", name) {
                        return (Some(w), "the component it comes from");
                    }
                }
            }
        }
        (
            self.provenance.kustomization(&k.name),
            "the kustomization that builds it",
        )
    }

    /// The origin of any object of the context: a built one's component or
    /// Kustomization, a rendered Kustomization's `field` (else the Kustomization).
    fn origin_any(
        &self,
        p: &Placed,
        planned: &[Planned],
        field: &str,
    ) -> (Option<Written>, &'static str) {
        match self.planned(planned, p.owner.as_deref()) {
            Some(k) => self.origin_of(k, p.file.as_deref()),
            None if is_flux_kustomization(&p.value) => {
                (self.provenance.field(p.name(), field), "the kustomization")
            }
            None => (None, "the rendered object"),
        }
    }

    fn planned<'p>(&self, planned: &'p [Planned], owner: Option<&str>) -> Option<&'p Planned> {
        planned.iter().find(|k| Some(k.name.as_str()) == owner)
    }

    /// The variables of `k`'s post-build substitution, where each comes from, and the
    /// findings of its `substituteFrom` (a missing ConfigMap, a Secret, a bad name).
    fn variables(
        &mut self,
        k: &Planned,
        config_maps: &BTreeMap<&str, &Json>,
        deferred: &BTreeSet<(String, String)>,
    ) -> (
        BTreeMap<String, String>,
        BTreeSet<String>,
        Vec<String>,
        bool,
    ) {
        let mut vars = BTreeMap::new();
        let mut waiting = BTreeSet::new();
        let mut from = Vec::new();
        let mut secrets = false;
        for r in k
            .object
            .pointer("/spec/postBuild/substituteFrom")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let kind = text(r, "/kind").unwrap_or_default();
            let name = text(r, "/name").unwrap_or_default();
            let optional = r.get("optional") == Some(&Json::Bool(true));
            from.push(format!("{kind} `{name}`"));
            if kind == "Secret" {
                secrets = true;
                let written = self.provenance.kustomization(&k.name);
                let finding = Finding::new(
                    Check::SecretNotRead,
                    format!(
                        "kustomization `{}` substitutes from Secret `{name}`, which is not available offline: its variables are not checked",
                        k.name
                    ),
                )
                .kustomization(&k.name)
                .with(|d| at(d, written, "the kustomization"));
                self.push(finding);
                continue;
            }
            let Some(cm) = config_maps.get(name) else {
                if !optional {
                    let written = self.provenance.kustomization(&k.name);
                    let finding = Finding::new(
                        Check::MissingConfigMap,
                        format!(
                            "kustomization `{}` substitutes from ConfigMap `{name}`, which the render does not hold",
                            k.name
                        ),
                    )
                    .kustomization(&k.name)
                    .with(|d| at(d, written, "the kustomization"));
                    self.push(finding);
                }
                continue;
            };
            for (key, value) in cm
                .get("data")
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
            {
                self.check_name(k, key, &format!("ConfigMap `{name}`"));
                vars.insert(key.clone(), value.as_str().unwrap_or_default().to_string());
            }
            for (map, key) in deferred {
                if map == name {
                    waiting.insert(key.clone());
                }
            }
        }
        for (key, value) in k
            .object
            .pointer("/spec/postBuild/substitute")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            self.check_name(k, key, "postBuild.substitute");
            vars.insert(key.clone(), value.as_str().unwrap_or_default().to_string());
        }
        (vars, waiting, from, secrets)
    }

    fn check_name(&mut self, k: &Planned, key: &str, place: &str) {
        if substitute::valid_name(key) {
            return;
        }
        let written = self.provenance.field(&k.name, "substitutions");
        let finding = Finding::new(
            Check::InvalidVariable,
            format!(
                "`{key}` of {place} is not a variable name Flux accepts (`^[_a-zA-Z][_a-zA-Z0-9]*$`): kustomization `{}` fails",
                k.name
            ),
        )
        .kustomization(&k.name)
        .with(|d| at(d, written, "the substitutions"));
        self.push(finding);
    }

    /// `built`'s objects with `k`'s substitutions and common metadata applied, each
    /// unresolved variable reported.
    fn substituted(
        &mut self,
        k: &Planned,
        built: &Built,
        config_maps: &BTreeMap<&str, &Json>,
        deferred: &BTreeSet<(String, String)>,
    ) -> Vec<Placed> {
        for remote in &built.remote {
            let written = self.provenance.kustomization(&k.name);
            let finding = Finding::new(
                Check::RemoteResource,
                format!("kustomization `{}` includes the remote resource {remote}, which is not fetched or checked", k.name),
            )
            .kustomization(&k.name)
            .with(|d| at(d, written, "the kustomization"));
            self.push(finding);
        }
        for (index, why) in &built.unparsed {
            let finding = Finding::new(
                Check::UnparsedObject,
                format!(
                    "document {} built by kustomization `{}` is not YAML: {why}",
                    index + 1,
                    k.name
                ),
            )
            .kustomization(&k.name);
            self.push(finding);
        }
        let post_build = k.object.pointer("/spec/postBuild").is_some();
        let (vars, waiting, from, secrets) = if post_build {
            self.variables(k, config_maps, deferred)
        } else {
            Default::default()
        };
        let mut out = Vec::new();
        for object in &built.objects {
            let mut value = object.value.clone();
            let mut empty = Vec::new();
            if post_build && !disabled(&object.value) {
                let done = substitute::substitute(&object.text, &vars);
                empty = done.empty.clone();
                if done.text != object.text {
                    match build::parse(&done.text) {
                        Ok(v) => {
                            value = v;
                            build::take_origin(&mut value);
                        }
                        Err(why) => {
                            let finding = Finding::new(
                                Check::UnparsedObject,
                                format!(
                                    "{} of kustomization `{}` is not YAML after substitution: {why}",
                                    id_of(&object.value),
                                    k.name
                                ),
                            )
                            .kustomization(&k.name)
                            .object(id_of(&object.value))
                            .file(object.file.clone());
                            self.push(finding);
                        }
                    }
                }
                for var in done.unresolved.iter().filter(|v| !waiting.contains(*v)) {
                    if !secrets {
                        self.unresolved(k, object, var, &vars, &from);
                    }
                }
                for expr in &done.malformed {
                    let finding = Finding::new(
                        Check::InvalidVariable,
                        format!(
                            "`{expr}` in {} of kustomization `{}` is no substitution Flux can parse",
                            id_of(&object.value),
                            k.name
                        ),
                    )
                    .kustomization(&k.name)
                    .object(id_of(&object.value))
                    .file(object.file.clone())
                    .with(|d| {
                        let d = self.in_file(d, object.file.as_deref(), expr);
                        d.with_help("write `$${…}` for text Flux must leave alone, or annotate the object `kustomize.toolkit.fluxcd.io/substitute: disabled`")
                    });
                    self.push(finding);
                }
            }
            common_metadata(&mut value, &k.object);
            out.push(Placed {
                value,
                owner: Some(k.name.clone()),
                file: object.file.clone(),
                empty,
            });
        }
        out
    }

    fn unresolved(
        &mut self,
        k: &Planned,
        object: &build::Object,
        var: &str,
        vars: &BTreeMap<String, String>,
        from: &[String],
    ) {
        let field = field_with(&object.value, var).unwrap_or_default();
        let written = self.provenance.field(&k.name, "substitutions");
        let near = deployment::closest(var, vars.keys().map(String::as_str));
        let label = if self
            .provenance
            .composition
            .kustomizations
            .components
            .get(k.name.as_str())
            .and_then(|c| c.get("substitutions"))
            .is_some()
        {
            "the substitutions expected to provide it"
        } else {
            "the kustomization, which has no substitutions"
        };
        let finding = Finding::new(
            Check::UnresolvedVariable,
            format!(
                "`${{{var}}}` in {}{} is set by no substitution of kustomization `{}`",
                id_of(&object.value),
                if field.is_empty() { String::new() } else { format!(" (field `{field}`)") },
                k.name
            ),
        )
        .kustomization(&k.name)
        .object(id_of(&object.value))
        .file(object.file.clone())
        .with(|d| {
            let d = at(d, written, label);
            let d = self.in_file(d, object.file.as_deref(), &format!("${{{var}"));
            let d = d.with_note(if from.is_empty() {
                "the kustomization has no postBuild.substituteFrom".to_string()
            } else {
                format!("substituteFrom: {}", from.join(", "))
            });
            let d = d.with_note("kustomize-controller v1.9 and later fail the reconcile on it (StrictPostBuildSubstitutions, on by default); earlier ones write an empty string");
            match near {
                Some(near) => d.with_help(format!("did you mean `{near}`? (or give it a default: `${{{var}:=…}}`)")),
                None => d.with_help(format!("set `{var}` in the kustomization's substitutions, or give it a default: `${{{var}:=…}}`")),
            }
        });
        self.push(finding);
    }

    /// Adds the first place `needle` appears in tree file `file` as a secondary span.
    fn in_file(
        &self,
        d: crate::files::Diagnostic,
        file: Option<&str>,
        needle: &str,
    ) -> crate::files::Diagnostic {
        let Some(file) = file else { return d };
        let Some(tree_root) = self.tree_root(file) else {
            return d.with_note(format!("in {file}"));
        };
        let disk = tree_root.join(file);
        let shown_path = shown(self.run.root, &disk);
        match self.tree_files.get(self.run.files, &disk, &shown_path) {
            Some((id, text)) => match text.find(needle) {
                Some(start) => d.with_secondary(
                    Span::new(id, start, start + needle.len()),
                    "here in the kustomize tree",
                ),
                None => d.with_note(format!("in {shown_path}")),
            },
            None => d.with_note(format!("in {shown_path}")),
        }
    }

    /// The source root a tree file (`kustomize/…`) of this context lies in.
    fn tree_root(&self, file: &str) -> Option<PathBuf> {
        self.requests
            .iter()
            .map(|r| self.workspace.root(r.tree))
            .find(|root| root.join(file).is_file())
            .map(Path::to_path_buf)
    }

    fn validate(&mut self, p: &Placed, crds: &schema::Crds, planned: &[Planned]) {
        let origin = || self.origin_any(p, planned, "name");
        let missing: Vec<&str> = [
            ("/apiVersion", "apiVersion"),
            ("/kind", "kind"),
            ("/metadata/name", "metadata.name"),
        ]
        .into_iter()
        .filter(|(ptr, _)| text(&p.value, ptr).is_none_or(str::is_empty))
        .map(|(_, f)| f)
        .collect();
        if !missing.is_empty() {
            let (written, label) = origin();
            let finding = Finding::new(
                Check::IncompleteObject,
                format!("{} has no {}", id_of(&p.value), missing.join(", ")),
            )
            .object(id_of(&p.value))
            .file(p.file.clone())
            .with(|d| at(d, written, label));
            let finding = match &p.owner {
                Some(o) => finding.kustomization(o),
                None => finding,
            };
            self.push(finding);
            return;
        }
        match self.validators.check(crds, &p.value) {
            schema::Verdict::Valid => {}
            schema::Verdict::Unchecked => {
                let key = format!(
                    "{} {}",
                    text(&p.value, "/apiVersion").unwrap_or_default(),
                    text(&p.value, "/kind").unwrap_or_default()
                );
                *self.report.unchecked.entry(key).or_default() += 1;
            }
            schema::Verdict::Invalid(errors, schema) => {
                let (written, label) = origin();
                let mut finding = Finding::new(
                    Check::SchemaViolation,
                    format!(
                        "{} does not match {}: {}",
                        id_of(&p.value),
                        schema.describe(),
                        errors[0]
                    ),
                )
                .object(id_of(&p.value))
                .file(p.file.clone())
                .with(|d| {
                    let mut d = at(d, written, label);
                    for e in &errors[1..] {
                        d = d.with_note(e.clone());
                    }
                    d
                });
                if let Some(file) = &p.file {
                    finding =
                        finding.with(|d| d.with_note(format!("the object comes from {file}")));
                }
                if !p.empty.is_empty() {
                    let names: Vec<String> = p.empty.iter().map(|v| format!("`{v}`")).collect();
                    finding = finding.with(|d| {
                        d.with_note(format!(
                            "substituted into it with an empty value: {}",
                            names.join(", ")
                        ))
                    });
                }
                if let Some(o) = &p.owner {
                    finding = finding.kustomization(o);
                }
                self.push(finding);
            }
        }
    }

    /// The finding of an object that kustomizations `a` and `b` both build.
    fn two_owners(&self, a: &Placed, b: &Placed, planned: &[Planned]) -> Finding {
        let origin = |p: &Placed| self.origin_any(p, planned, "namespace");
        let (first_written, _) = origin(a);
        let (written, label) = origin(b);
        Finding::new(
            Check::TwoOwners,
            format!(
                "{} is built by two kustomizations, `{}` and `{}`: each reconcile undoes the other's, and pruning one deletes it",
                b.id(),
                a.owner.as_deref().unwrap_or_default(),
                b.owner.as_deref().unwrap_or_default()
            ),
        )
        .kustomization(b.owner.as_deref().unwrap_or_default())
        .object(b.id())
        .file(b.file.clone())
        .with(|d| {
            let mut d = at(d, written, label);
            if let Some(w) = first_written {
                d = d.with_secondary(w.span, format!("`{}` builds it too, written by {}", a.owner.as_deref().unwrap_or_default(), w.by));
            }
            for p in [a, b] {
                if let Some(f) = &p.file {
                    d = d.with_note(format!("`{}` builds it from {f}", p.owner.as_deref().unwrap_or_default()));
                }
            }
            d
        })
    }

    fn issue(&mut self, issue: Issue, placed: &[Placed], planned: &[Planned]) {
        let origin = |p: &Placed| self.origin_any(p, planned, "namespace");
        let finding = match issue {
            Issue::TwoOwners { object, first } => {
                self.two_owners(&placed[first], &placed[object], planned)
            }
            Issue::MissingChartSource {
                object,
                field,
                kind,
                namespace,
                name,
                near,
            } => {
                let p = &placed[object];
                placed_finding(
                    p,
                    Check::MissingChartSource,
                    format!(
                        "{} reads its chart from {kind} `{name}` in namespace `{namespace}` ({field}), which no kustomization of the context builds",
                        p.id()
                    ),
                    origin(p),
                    "HelmRelease",
                )
                .with(|d| match near {
                    Some(near) => d.with_help(format!("did you mean `{near}`?")),
                    None => d,
                })
            }
            Issue::MissingDependency {
                object,
                namespace,
                name,
            } => {
                let p = &placed[object];
                placed_finding(
                    p,
                    Check::MissingDependency,
                    format!(
                        "{} depends on HelmRelease `{name}` in namespace `{namespace}`, which no kustomization of the context builds: Flux never installs it",
                        p.id()
                    ),
                    origin(p),
                    "HelmRelease",
                )
            }
            Issue::MissingNamespace { object, namespace } => {
                let p = &placed[object];
                placed_finding(
                    p,
                    Check::MissingNamespace,
                    format!(
                        "{} lives in namespace `{namespace}`, which no kustomization of the context creates and a cluster does not have",
                        p.id()
                    ),
                    origin(p),
                    "object",
                )
            }
        };
        self.push(finding);
    }
}

/// A finding on the built object `p`, at the facet line `origin` names, with the tree
/// file the object (`what`: "HelmRelease", "object") comes from as a note.
fn placed_finding(
    p: &Placed,
    check: Check,
    message: String,
    (written, label): (Option<Written>, &str),
    what: &str,
) -> Finding {
    Finding::new(check, message)
        .object(p.id())
        .file(p.file.clone())
        .owned_by(owner_of(p))
        .with(|d| {
            let d = at(d, written, label);
            match &p.file {
                Some(f) => d.with_note(format!("the {what} comes from {f}")),
                None => d,
            }
        })
}

/// kustomize's message without kubectl's log prefix and the workspace's paths.
fn tidy(message: &str, path: &str) -> String {
    let message = match message.find("err=") {
        Some(i) if message.starts_with('E') => message[i + 4..]
            .trim_matches('"')
            .replace("\\\"", "\"")
            .replace("\\\\", "\\"),
        _ => message.to_string(),
    };
    let mut out = String::new();
    for (i, part) in message.split("/bpc-verify-").enumerate() {
        if i == 0 {
            out.push_str(part);
            continue;
        }
        // `<tmp>/bpc-verify-XXXX/<tree>/kustomize/…` → `kustomize/…`
        let rest = part.splitn(3, '/').nth(2).unwrap_or(part);
        if let Some(cut) = out.rfind(['\'', '"', ' ']) {
            out.truncate(cut + 1);
        }
        out.push_str(rest);
    }
    // The build's own directory stands for the Kustomization's path.
    let leaf = path.rsplit('/').next().unwrap_or(path);
    regex::Regex::new(r"\.bpc-build-[0-9]+")
        .map(|r| r.replace_all(&out, leaf).into_owned())
        .unwrap_or(out)
}

/// The Kustomization a finding about `p` concerns: the one that builds it, or the
/// rendered Kustomization itself.
fn owner_of(p: &Placed) -> Option<&str> {
    match &p.owner {
        Some(owner) => Some(owner),
        None if is_flux_kustomization(&p.value) => Some(p.name()),
        None => None,
    }
}

/// Whether an object turns substitution off for itself.
fn disabled(value: &Json) -> bool {
    ["annotations", "labels"].iter().any(|m| {
        value
            .pointer(&format!("/metadata/{m}"))
            .and_then(|a| a.get(substitute::DISABLE_KEY))
            .and_then(Json::as_str)
            == Some("disabled")
    })
}

/// `spec.commonMetadata` of the Kustomization laid over an object's labels and
/// annotations, as the controller does after building.
fn common_metadata(value: &mut Json, kustomization: &Json) {
    let Some(common) = kustomization.pointer("/spec/commonMetadata") else {
        return;
    };
    let Some(meta) = value.get_mut("metadata").and_then(Json::as_object_mut) else {
        return;
    };
    for key in ["labels", "annotations"] {
        if let Some(Json::Object(extra)) = common.get(key) {
            let target = meta
                .entry(key)
                .or_insert_with(|| Json::Object(Default::default()));
            if let Json::Object(target) = target {
                for (k, v) in extra {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// `Kind/namespace/name` of an object.
fn id_of(value: &Json) -> String {
    let kind = text(value, "/kind").unwrap_or("?");
    let name = text(value, "/metadata/name").unwrap_or("?");
    match text(value, "/metadata/namespace") {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// The dotted path of the first string of `value` that reads `${var…}`.
fn field_with(value: &Json, var: &str) -> Option<String> {
    fn walk(v: &Json, path: &mut Vec<String>, needle: &str) -> bool {
        match v {
            Json::String(s) => s.contains(needle),
            Json::Object(m) => m.iter().any(|(k, x)| {
                path.push(k.clone());
                if walk(x, path, needle) {
                    return true;
                }
                path.pop();
                false
            }),
            Json::Array(items) => items.iter().enumerate().any(|(i, x)| {
                path.push(format!("[{i}]"));
                if walk(x, path, needle) {
                    return true;
                }
                path.pop();
                false
            }),
            _ => false,
        }
    }
    let mut path = Vec::new();
    let needle = format!("${{{var}");
    walk(value, &mut path, &needle).then(|| {
        let mut out = String::new();
        for p in path {
            if !p.starts_with('[') && !out.is_empty() {
                out.push('.');
            }
            out.push_str(&p);
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_field_holding_a_variable_is_named_by_its_path() {
        let object = json!({"spec": {"hosts": ["a", "x.${domain}"], "port": "${port:=80}"}});
        assert_eq!(
            field_with(&object, "domain").as_deref(),
            Some("spec.hosts[1]")
        );
        assert_eq!(field_with(&object, "port").as_deref(), Some("spec.port"));
        assert_eq!(field_with(&object, "other"), None);
    }

    #[test]
    fn kustomize_messages_lose_the_log_prefix_and_the_workspace() {
        let raw = r#"E1129 01:40:16.852549   18931 run.go:72] "command failed" err="accumulating: '/tmp/bpc-verify-6UzZN3/0/kustomize/demo/.bpc-build-7': no match""#;
        assert_eq!(
            tidy(raw, "kustomize/demo/resources"),
            "accumulating: 'kustomize/demo/resources': no match"
        );
    }

    #[test]
    fn common_metadata_is_laid_over_the_objects_labels() {
        let mut object = json!({"metadata": {"name": "a", "labels": {"app": "x", "env": "old"}}});
        let kustomization = json!({"spec": {"commonMetadata": {"labels": {"env": "prod"}}}});
        common_metadata(&mut object, &kustomization);
        assert_eq!(
            object["metadata"]["labels"],
            json!({"app": "x", "env": "prod"})
        );
    }
}
