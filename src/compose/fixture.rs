//! A template held in memory and what its stages are given, for the stages' unit
//! tests: `Fixture::new(&[("facets/a.yaml", "…")])`, then each stage called in turn.

use crate::compose::activate;
use crate::compose::collect::{self, part::Collected};
use crate::compose::config::Resolver;
use crate::compose::merge::{self, Lists};
use crate::compose::model::activation::Activated;
use crate::compose::model::component::Merged;
use crate::compose::model::inputs::Environment;
use crate::compose::model::origin::Origins;
use crate::compose::model::precedence::Precedence;
use crate::compose::scope::Values;
use crate::compose::{finish, flux, validate};
use crate::compose::{
    model::inputs::{Builtins, Layer, Limits},
    shared::expressions::Expressions,
};
use crate::expr::host::TerraformOutputs;
use crate::expr::{Engine, EngineConfig, Map};
use crate::files::{Diagnostic, FileMap, FileTree};
use crate::template::{Template, TemplateId};
use std::sync::Arc;

pub struct Fixture {
    pub template: Template,
    pub engine: Engine,
    pub layers: Vec<Layer>,
    pub builtins: Builtins,
    pub environment: Environment,
    pub terraform: TerraformOutputs,
    pub precedence: Precedence,
}

impl Fixture {
    /// The template made of `files` (tree path, text).
    pub fn new(files: &[(&str, &str)]) -> Fixture {
        let tree = FileTree::from_files(
            files
                .iter()
                .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec())),
            "template",
        )
        .expect("the fixture's paths are safe");
        let template = crate::template::load(Arc::new(tree), Arc::new(FileMap::new()))
            .unwrap_or_else(|ds| panic!("the fixture's template loads: {ds:?}"));
        Fixture {
            template,
            engine: Engine::new(EngineConfig::default()),
            layers: Vec::new(),
            builtins: Builtins {
                context: "test".into(),
                context_path: "/project/contexts/test".into(),
                project_root: "/project".into(),
            },
            environment: Environment::Fixed(Default::default()),
            terraform: TerraformOutputs::Unregistered,
            precedence: Precedence::default(),
        }
    }

    /// A template of one facet that does nothing.
    pub fn empty() -> Fixture {
        Fixture::new(&[("facets/none.yaml", &facet("none", ""))])
    }

    /// One more layer of context values, from YAML text.
    /// The template as one loaded for a single composition: its facets' component
    /// bodies lent to collection (`template::bodies`).
    pub fn lending(mut self) -> Fixture {
        let bodies = crate::template::bodies::Bodies::lend(&mut self.template.facets);
        self.template.bodies = Some(bodies);
        self
    }

    pub fn values(mut self, name: &str, yaml: &str) -> Fixture {
        let file = self.template.files.add(name, yaml);
        let node = crate::yaml::parse(yaml, file).expect("the fixture's values parse");
        self.layers.push(Layer::of_file(name.into(), node));
        self
    }

    pub fn with(&self) -> Expressions<'_> {
        Expressions {
            engine: &self.engine,
            environment: &self.environment,
            terraform: &self.terraform,
            limits: Limits::default(),
            precedence: self.precedence,
            work: None,
            memory: Default::default(),
        }
    }

    pub fn value_inputs(&self) -> Values<'_> {
        Values {
            layers: &self.layers,
            builtins: &self.builtins,
            schema_defaults: false,
            config_defaults: false,
            files: &self.template.files,
        }
    }

    /// Stage 2: the context values.
    pub fn context(&self) -> Arc<Map> {
        self.value_inputs()
            .scope(None, None)
            .unwrap_or_else(|ds| panic!("the fixture's values are valid: {ds:?}"))
    }

    /// Stages 2–3: the context values and the facets they make active.
    pub fn activated(&self) -> (Arc<Map>, Activated) {
        let context = self.context();
        let activation = activate::activate(&self.with(), &self.template, &context)
            .unwrap_or_else(|ds| panic!("the fixture's facets activate: {ds:?}"));
        (context, activation)
    }

    /// Stages 2–4, then `run` with the resolver.
    pub fn resolved<T>(&self, run: impl FnOnce(&Resolver<'_>, &Activated) -> T) -> T {
        let (context, activation) = self.activated();
        let with = self.with();
        let resolver = Resolver::new(&with, &self.template, context, &activation.active);
        run(&resolver, &activation)
    }

    /// Stages 2–5, the template's part gathered.
    pub fn collected(&self, origins: &mut Origins) -> Collected {
        let part = self.resolved(|resolver, activation| {
            let context = resolver.context.clone();
            let activation = Activated {
                active: activation.active.clone(),
                outcome: activation.outcome.clone(),
            };
            collect::part(
                TemplateId::Composing,
                resolver,
                activation,
                context,
                origins,
            )
        });
        let part = part.unwrap_or_else(|ds| panic!("the fixture's part collects: {ds:?}"));
        collect::gather(vec![part]).unwrap_or_else(|ds| panic!("one part gathers: {ds:?}"))
    }

    /// Stages 2–6: the merged component lists.
    pub fn merged(&self, origins: &mut Origins) -> (Collected, Lists) {
        let mut collected = self.collected(origins);
        let lists = merge::lists(
            std::mem::take(&mut collected.contributions),
            None,
            crate::compose::model::for_explain::ForExplain::Kept,
            Default::default(),
        );
        (collected, lists)
    }

    /// Stages 2–9: the merged lists finished (the order they were written in taken
    /// first) and their flux systems compiled.
    pub fn compiled(&self, origins: &mut Origins) -> Compiled {
        let (collected, mut lists) = self.merged(origins);
        let written = validate::Written::of(&lists);
        let has_crds = !collected.outputs.crds.is_empty();
        let crds_layer = finish::finish(&mut lists, None, has_crds, &self.template, origins, None);
        let kustomizations = flux::compile(&lists, origins);
        Compiled {
            collected,
            lists,
            written,
            crds_layer,
            kustomizations,
        }
    }
}

/// What [`Fixture::compiled`] gives.
pub struct Compiled {
    pub collected: Collected,
    /// The finished lists.
    pub lists: Lists,
    pub written: validate::Written,
    pub crds_layer: Option<String>,
    /// Every Flux Kustomization, or why the systems do not compile.
    pub kustomizations: Result<Merged, Vec<Diagnostic>>,
}

/// A facet file's text: the header, then `body` (its keys, unindented).
pub fn facet(name: &str, body: &str) -> String {
    format!(
        "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: {name}\n{body}"
    )
}

/// The ids of `merged`, in order.
pub fn ids(merged: &crate::compose::model::component::Merged) -> Vec<&str> {
    merged.components.keys().map(AsRef::as_ref).collect()
}

/// A component as compact JSON, its fields in blueprint order.
pub fn json(merged: &crate::compose::model::component::Merged, id: &str) -> String {
    let component = merged
        .components
        .get(id)
        .unwrap_or_else(|| panic!("no component `{id}` in {:?}", ids(merged)));
    crate::value::json::compact(&crate::compose::model::blueprint::component_value(
        component,
    ))
}

/// The messages of `ds`, one a line.
pub fn messages(ds: &[crate::files::Diagnostic]) -> String {
    ds.iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
