//! `never-active`: a facet, config block or component whose `when` cannot be true
//! under the schema — a contradiction (`a == 'x' && a == 'y'`) or a value the schema's
//! enum does not have. A block or component is judged together with its facet's `when`.

use super::finding::{Finding, FindingId};
use super::names::{Resolution, Shape};
use super::reads::{literal, path_of};
use super::sites::{Owner, Site};
use crate::expr::ast::{BinOp, Kind, Node, UnOp};
use crate::template::Template;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Conjunctions past this many are not enumerated (the `when` is taken as possible).
const MAX_CONJUNCTIONS: usize = 256;

type Path = Vec<Arc<str>>;

/// A condition reduced to comparisons of paths with literals; anything else is
/// `Unknown` (could be either).
enum Cond {
    True,
    False,
    Unknown,
    Eq(Path, serde_json::Value),
    Ne(Path, serde_json::Value),
    In(Path, Vec<serde_json::Value>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

fn cond(node: &Node, negate: bool) -> Cond {
    match &node.kind {
        Kind::Bool(b) if *b != negate => Cond::True,
        Kind::Bool(_) => Cond::False,
        Kind::Unary(UnOp::Not, inner) => cond(inner, !negate),
        Kind::Binary(BinOp::And, a, b) | Kind::Binary(BinOp::Or, a, b) => {
            let and = matches!(node.kind, Kind::Binary(BinOp::And, ..)) != negate;
            let (a, b) = (Box::new(cond(a, negate)), Box::new(cond(b, negate)));
            if and {
                Cond::And(a, b)
            } else {
                Cond::Or(a, b)
            }
        }
        Kind::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) => {
            let (path, value) = match (path_of(a, &[]), literal(b), path_of(b, &[]), literal(a)) {
                (Some(p), Some(v), _, _) | (_, _, Some(p), Some(v)) => (p, v),
                _ => return Cond::Unknown,
            };
            if (*op == BinOp::Eq) != negate {
                Cond::Eq(path, value)
            } else {
                Cond::Ne(path, value)
            }
        }
        Kind::Binary(BinOp::In, a, b) if !negate => match (path_of(a, &[]), &b.kind) {
            (Some(path), Kind::List(items)) => {
                let values: Option<Vec<_>> = items.iter().map(literal).collect();
                values.map_or(Cond::Unknown, |v| Cond::In(path, v))
            }
            _ => Cond::Unknown,
        },
        _ => Cond::Unknown,
    }
}

/// The condition as a disjunction of conjunctions of atoms; `None` when too large.
fn disjuncts(c: &Cond) -> Option<Vec<Vec<&Cond>>> {
    Some(match c {
        Cond::True | Cond::Unknown => vec![vec![]],
        Cond::False => vec![],
        Cond::Eq(..) | Cond::Ne(..) | Cond::In(..) => vec![vec![c]],
        Cond::Or(a, b) => {
            let mut out = disjuncts(a)?;
            out.extend(disjuncts(b)?);
            (out.len() <= MAX_CONJUNCTIONS).then_some(out)?
        }
        Cond::And(a, b) => {
            let (a, b) = (disjuncts(a)?, disjuncts(b)?);
            if a.len() * b.len() > MAX_CONJUNCTIONS {
                return None;
            }
            a.iter()
                .flat_map(|x| b.iter().map(move |y| x.iter().chain(y).copied().collect()))
                .collect()
        }
    })
}

/// Whether some value of each path satisfies every atom together.
fn consistent(atoms: &[&Cond], names: &Shape) -> bool {
    let mut by_path: BTreeMap<&Path, Vec<&Cond>> = BTreeMap::new();
    for atom in atoms {
        if let Cond::Eq(p, _) | Cond::Ne(p, _) | Cond::In(p, _) = atom {
            by_path.entry(p).or_default().push(atom);
        }
    }
    by_path.iter().all(|(path, atoms)| {
        let allowed = match names.resolve(path) {
            Resolution::Known(shape) => shape.closed_enum(),
            _ => None,
        };
        let mut candidates: Option<Vec<&serde_json::Value>> =
            allowed.map(|values| values.iter().collect());
        for atom in atoms {
            let keep: Vec<&serde_json::Value> = match atom {
                Cond::Eq(_, v) if v.is_null() => continue,
                Cond::Eq(_, v) => vec![v],
                Cond::In(_, vs) => vs.iter().collect(),
                _ => continue,
            };
            candidates = Some(match candidates {
                None => keep,
                Some(c) => c.into_iter().filter(|v| keep.contains(v)).collect(),
            });
        }
        let Some(candidates) = candidates else {
            return true;
        };
        // Only a path pinned by `==`/`in` is impossible when nothing is left; `!=`
        // alone leaves the path unset, which satisfies it.
        let pinned = atoms
            .iter()
            .any(|a| matches!(a, Cond::Eq(_, v) if !v.is_null()) || matches!(a, Cond::In(..)));
        !pinned
            || candidates.iter().any(|v| {
                !atoms
                    .iter()
                    .any(|a| matches!(a, Cond::Ne(_, excluded) if excluded == *v))
            })
    })
}

fn possible(c: &Cond, names: &Shape) -> bool {
    match disjuncts(c) {
        Some(ds) => ds.iter().any(|d| consistent(d, names)),
        None => true,
    }
}

/// The `never-active` findings of the facets `sites` come from, each pushed onto
/// `out[facet index]` (a facet depends only on its own `when`s and the names).
pub fn check(template: &Template, sites: &[Site<'_>], names: &Shape, out: &mut [Vec<Finding>]) {
    // Each owner's `when`, looked up by owner: scanning every site for every owner
    // was quadratic in the facets (seconds at 1 000).
    let mut whens: HashMap<(usize, Owner), &Site<'_>> = HashMap::new();
    for site in sites.iter().filter(|s| s.is_when) {
        whens.entry((site.facet, site.owner)).or_insert(site);
    }
    let when_of = |facet: usize, owner: Owner| {
        whens
            .get(&(facet, owner))
            .and_then(|s| s.parsed.as_ref().ok().map(|ast| (*s, ast)))
    };
    let mut facets: Vec<usize> = whens.keys().map(|(facet, _)| *facet).collect();
    facets.sort_unstable();
    facets.dedup();
    for index in facets {
        let (Some(facet), Some(out)) = (template.facets.get(index), out.get_mut(index)) else {
            continue;
        };
        let own = when_of(index, Owner::Facet).map(|(site, ast)| (site, cond(ast, false)));
        if let Some((site, c)) = &own {
            if !possible(c, names) {
                out.push(never(
                    site,
                    format!("facet `{}` can never be active", facet.name),
                ));
                continue;
            }
        }
        let owners = (0..facet.config.len())
            .map(|i| {
                (
                    Owner::Block(i),
                    format!("config block `{}`", facet.config[i].name),
                )
            })
            .chain(facet.components.iter().enumerate().map(|(i, c)| {
                let id = crate::template::identity::node_merge_key(c.kind, &c.node)
                    .unwrap_or_else(|| Arc::from("(unnamed)"));
                (Owner::Component(i), format!("{} `{id}`", c.kind.noun()))
            }));
        for (owner, what) in owners {
            let Some((site, ast)) = when_of(index, owner) else {
                continue;
            };
            let mine = cond(ast, false);
            let both = match &own {
                Some((facet_site, _)) => match &facet_site.parsed {
                    Ok(facet_ast) => Cond::And(Box::new(cond(facet_ast, false)), Box::new(mine)),
                    Err(_) => mine,
                },
                None => mine,
            };
            if !possible(&both, names) {
                out.push(never(
                    site,
                    format!("{what} of facet `{}` can never be active", facet.name),
                ));
            }
        }
    }
}

fn never(site: &Site<'_>, message: String) -> Finding {
    Finding::at(
        FindingId::NeverActive,
        site.node.span,
        format!("{message}: its `when` cannot be true under the schema"),
        "never true",
    )
}
