//! `bpc graph`: a context's deployment order as a picture (DOT, Mermaid, SVG or a
//! self-contained HTML page); with several contexts, one file per context.

use super::args::{env_context, ContextsArgs, ProjectArgs};
use super::contexts;
use super::terminal::report;
use crate::all_contexts::{Counts, Done};
use crate::files::{Diagnostic, FileMap};
use crate::graph::{self, Graph};
use crate::session::Session;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz (`dot -Tsvg`).
    Dot,
    /// A Mermaid flowchart (GitHub and GitLab draw it in Markdown).
    Mermaid,
    /// SVG, laid out by bpc itself.
    Svg,
    /// One self-contained page: pan, zoom, hover for provenance, click to highlight.
    Html,
}

impl GraphFormat {
    fn extension(self) -> &'static str {
        match self {
            GraphFormat::Dot => "dot",
            GraphFormat::Mermaid => "mmd",
            GraphFormat::Svg => "svg",
            GraphFormat::Html => "html",
        }
    }

    fn write(self, graph: &Graph) -> Result<String, String> {
        match self {
            GraphFormat::Dot => Ok(graph::dot::write(graph)),
            GraphFormat::Mermaid => Ok(graph::mermaid::write(graph)),
            GraphFormat::Svg => graph::svg::write(graph),
            GraphFormat::Html => graph::html::write(graph),
        }
    }
}

#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:
  bpc graph --format mermaid                       # paste into a README or pull request
  bpc graph --context prod --format html --out graph.html
  bpc graph --focus cluster                        # one node, what it waits for, what waits for it
  bpc graph --context prod --diff staging --format svg --out diff.svg")]
pub struct GraphArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
    /// Write to FILE (replaced atomically; `-` for stdout); with several contexts, the
    /// directory for `<context>.<dot|mmd|svg|html>`.
    #[arg(long, short = 'o', value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// Keep only node NAME (`cluster`, or `terraform/cluster` where names clash), what
    /// it waits for and what waits for it.
    #[arg(long, value_name = "NAME")]
    pub focus: Option<String>,
    /// Lay another context's graph over this one: what only this context has is
    /// green, what only OTHER has is red.
    #[arg(long, value_name = "OTHER")]
    pub diff: Option<String>,
    /// Terraform outputs (component → output → value) that resolve `terraform_output()`.
    #[arg(long, value_name = "FILE")]
    pub terraform_outputs: Option<PathBuf>,
    #[command(flatten)]
    pub contexts: ContextsArgs,
}

pub fn run(args: GraphArgs) -> ExitCode {
    if let Some(selection) = args.contexts.selection(&args.project) {
        return contexts::run_each(
            &args.project,
            args.terraform_outputs.clone(),
            args.out.as_deref(),
            &selection,
            |session, name, dir| {
                let file = dir.join(format!("{name}.{}", args.format.extension()));
                let made = session.compose_to_draw(Some(name)).and_then(|composition| {
                    let counts = Counts::of(&composition);
                    let cycles = composition.cycles.clone();
                    Ok((counts, cycles, graph_of(session, &args, composition)?))
                });
                match made {
                    Ok((counts, cycles, text)) => {
                        match super::output::emit(Some(&file), &[text.as_bytes()]) {
                            // Drawn, but the composition is still wrong: the context fails.
                            Ok(()) if !cycles.is_empty() => Done::failed(cycles),
                            Ok(()) => Done {
                                counts: Some(counts),
                                ..Done::default()
                            },
                            Err(e) => Done::failed(vec![Diagnostic::error(e)]),
                        }
                    }
                    Err(errors) => Done::failed(errors),
                }
            },
        );
    }
    let sources = Arc::new(FileMap::new());
    let text = args
        .project
        .session_options(env_context(), args.terraform_outputs.clone())
        .and_then(|options| Session::open(options, sources.clone()))
        .and_then(|session| {
            let composition = session.compose_to_draw(None)?;
            report(&composition.warnings, &sources);
            let cycles = composition.cycles.clone();
            Ok((cycles, graph_of(&session, &args, composition)?))
        });
    let (cycles, text) = match text {
        Ok(made) => made,
        Err(errors) => {
            report(&errors, &sources);
            return ExitCode::from(1);
        }
    };
    match super::output::emit(args.out.as_deref(), &[text.as_bytes()]) {
        // The graph shows the cycle; the command still fails, as compose would.
        Ok(()) if !cycles.is_empty() => {
            report(&cycles, &sources);
            ExitCode::from(1)
        }
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&[Diagnostic::error(e)], &sources);
            ExitCode::from(1)
        }
    }
}

/// The graph of `composition` as `args` asks: narrowed, compared, written.
fn graph_of(
    session: &Session,
    args: &GraphArgs,
    composition: crate::compose::face::Composition,
) -> Result<String, Vec<Diagnostic>> {
    let mut graph = session.graph(&composition)?;
    if let Some(other) = &args.diff {
        let theirs = session.graph(&session.compose_to_draw(Some(other))?)?;
        graph = graph::select::diff(&graph, &theirs);
    }
    if let Some(name) = &args.focus {
        graph = graph::select::focus(&graph, name).map_err(|e| vec![Diagnostic::error(e)])?;
    }
    args.format
        .write(&graph)
        .map_err(|e| vec![Diagnostic::error(e)])
}
