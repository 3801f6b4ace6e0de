//! One evaluation in a context's composed scope, outside any facet (`bpc eval
//! --project`): the context values, schema defaults and typed fields, the config
//! blocks of the facets the context activates and, with local sources, their config —
//! each computed by the stages [`super::compose`] runs, so the answer is what a facet
//! expression of the composing template would get.

use super::host::TemplateHost;
use super::{activated_scope, resolver, sources, Inputs};
use crate::expr::host::Host;
use crate::expr::Scope;
use crate::files::Diagnostic;

/// The tree path the evaluation stands at: a file at the template root, so `file()`
/// and `jsonnet()` paths are relative to the root.
const AT_ROOT: &str = "<expression>";

/// Runs `run` against the composing template's scope and a host whose files are the
/// template's. Fails only where composing would: value layers that break the schema,
/// a `when` that cannot be evaluated, a local source that does not compose.
pub fn with_scope<T>(
    inputs: &Inputs<'_>,
    run: impl FnOnce(&dyn Scope, &dyn Host) -> T,
) -> Result<T, Vec<Diagnostic>> {
    let visible = sources::visible_config(inputs)?;
    let (context, activation) =
        activated_scope(inputs, inputs.template, inputs.schema, visible.as_ref())?;
    let resolver = resolver(inputs, inputs.template, &context, &activation);
    let host = TemplateHost {
        tree: &inputs.template.tree,
        file: AT_ROOT,
        environment: &inputs.environment,
        terraform: &inputs.terraform,
        jsonnet: inputs.limits.jsonnet,
    };
    Ok(run(&resolver, &host))
}
