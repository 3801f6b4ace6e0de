//! Component bodies lent to the one composition of a template loaded for it.
//!
//! A component's body (the map under `terraform:` or `kustomize:`) is read once, when
//! its facet is collected: collection turns it into the contribution's fields, and no
//! later stage looks at it again. At 10 000 facets the bodies are most of the YAML
//! trees. A template loaded for a run that composes once (`bpc compose`, `bpc render`)
//! therefore moves its active facets' bodies out of the facets into [`Bodies`] when it
//! is loaded, and collection takes each facet's bodies and drops them once the facet
//! is collected, on the thread that collected it: that thread's next allocations reuse
//! the memory, and the peak is lower by most of what the bodies held.
//!
//! A facet whose bodies were taken can still be collected again (collection does it
//! when work done on another thread has to be redone in order, see
//! `compose::collect::parallel`): the bodies are then read again from the facet's
//! file, which must still be the text that was parsed.

use super::facet::Facet;
use super::parse_facet;
use crate::files::{Diagnostic, FileMap};
use crate::yaml::{Interner, Node};
use std::sync::{Arc, Mutex, PoisonError};

/// The bodies moved out of each facet of a template, by facet index.
#[derive(Debug)]
pub struct Bodies {
    slots: Vec<Mutex<Slot>>,
}

#[derive(Debug)]
enum Slot {
    /// The facet kept its bodies (a hollow facet keeps only their identities).
    Kept,
    Lent(Box<[Node]>),
    /// Taken by a composition: read the file again to have them.
    Taken,
}

/// A facet's component bodies, in the order of its `components`.
pub enum FacetBodies<'t> {
    /// In the facet's entries, where they were parsed.
    InFacet(&'t Facet),
    /// Moved out of the facet, now owned by the collection.
    Owned(Box<[Node]>),
}

impl FacetBodies<'_> {
    /// The body of component `k` of the facet.
    pub fn get(&self, k: usize) -> Option<&Node> {
        match self {
            FacetBodies::InFacet(facet) => facet.components.get(k).map(|entry| &entry.node),
            FacetBodies::Owned(nodes) => nodes.get(k),
        }
    }
}

impl Bodies {
    /// Moves the bodies out of every facet that has them and that only this template
    /// holds; each entry keeps a null node with the body's span.
    pub(crate) fn lend(facets: &mut [Arc<Facet>]) -> Bodies {
        let slots = facets
            .iter_mut()
            .map(|facet| match Arc::get_mut(facet) {
                Some(facet) if !facet.hollow && !facet.components.is_empty() => {
                    let nodes = facet
                        .components
                        .iter_mut()
                        .map(|entry| {
                            let span = entry.node.span;
                            std::mem::replace(&mut entry.node, Node::placeholder(span))
                        })
                        .collect();
                    Mutex::new(Slot::Lent(nodes))
                }
                _ => Mutex::new(Slot::Kept),
            })
            .collect();
        Bodies { slots }
    }

    /// The bodies of facet `index` for collecting it: taken if they were lent, read
    /// again from its file if a composition took them before.
    pub fn take<'t>(
        &self,
        index: usize,
        facet: &'t Facet,
        files: &FileMap,
    ) -> Result<FacetBodies<'t>, Diagnostic> {
        let Some(slot) = self.slots.get(index) else {
            return Ok(FacetBodies::InFacet(facet));
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *slot, Slot::Taken) {
            Slot::Kept => {
                *slot = Slot::Kept;
                Ok(FacetBodies::InFacet(facet))
            }
            Slot::Lent(nodes) => Ok(FacetBodies::Owned(nodes)),
            Slot::Taken => read_again(facet, files).map(FacetBodies::Owned),
        }
    }
}

/// `facet`'s bodies parsed again from its file, if that is still the text parsed.
fn read_again(facet: &Facet, files: &FileMap) -> Result<Box<[Node]>, Diagnostic> {
    let changed = || {
        Diagnostic::error(format!(
            "{} changed on disk while bpc ran: its components cannot be read again",
            facet.path
        ))
        .with_primary(facet.name_span, "in this facet")
        .with_help("run bpc again")
    };
    let source = files.get(facet.file).filter(|f| f.readable());
    let text = source.as_ref().map(|f| f.text()).ok_or_else(changed)?;
    let node = crate::yaml::parse_interned(text, facet.file, &mut Interner::default())
        .map_err(|_| changed())?
        .0;
    let mut found = Vec::new();
    let again = parse_facet::Reader {
        diagnostics: &mut found,
    }
    .facet(node, &facet.path, facet.file)
    .filter(|again| again.components.len() == facet.components.len())
    .ok_or_else(changed)?;
    Ok(again
        .components
        .into_iter()
        .map(|entry| entry.node)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Node;

    const FACET: &str = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n\
        metadata:\n  name: net\nterraform:\n  - name: vpc\n    inputs:\n      cidr: 10.0.0.0/16\n\
        kustomize:\n  - name: dns\n    path: dns\n";

    /// Facet `net` parsed from `dir/facets/net.yaml` into a map that lets go of
    /// its text once parsed, as a run that composes once does.
    fn parsed(dir: &std::path::Path) -> (FileMap, Arc<Facet>) {
        let disk = dir.join("net.yaml");
        std::fs::write(&disk, FACET).expect("write");
        let files = FileMap::letting_go_of_texts();
        let held = files.holding(&Arc::from(FACET), Some(disk));
        let file = files.add_held("facets/net.yaml", held);
        let (node, _) =
            crate::yaml::parse_interned(FACET, file, &mut Interner::default()).expect("yaml");
        let mut found = Vec::new();
        let facet = parse_facet::Reader {
            diagnostics: &mut found,
        }
        .facet(node, "facets/net.yaml", file)
        .expect("facet");
        (files, Arc::new(facet))
    }

    fn names(bodies: &FacetBodies<'_>) -> Vec<String> {
        (0..2)
            .map(|k| {
                let body = bodies.get(k).expect("body");
                body.get("name")
                    .and_then(Node::as_str)
                    .unwrap_or("-")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_lent_body_leaves_its_span_in_the_facet_and_is_taken_once_then_read_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (files, facet) = parsed(dir.path());
        let spans: Vec<_> = facet.components.iter().map(|e| e.node.span).collect();
        let mut facets = vec![facet];
        let bodies = Bodies::lend(&mut facets);
        let facet = &facets[0];
        for (entry, span) in facet.components.iter().zip(&spans) {
            assert!(entry.node.is_null());
            assert_eq!(entry.node.span, *span);
        }
        let first = bodies.take(0, facet, &files).expect("lent");
        assert!(matches!(first, FacetBodies::Owned(_)));
        assert_eq!(names(&first), ["vpc", "dns"]);
        let again = bodies.take(0, facet, &files).expect("read again");
        assert_eq!(names(&again), ["vpc", "dns"]);
        for k in 0..2 {
            assert_eq!(first.get(k), again.get(k), "component {k}");
        }
    }

    #[test]
    fn a_facet_shared_elsewhere_keeps_its_bodies() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (files, facet) = parsed(dir.path());
        let mut facets = vec![Arc::clone(&facet)];
        let bodies = Bodies::lend(&mut facets);
        let kept = bodies.take(0, &facets[0], &files).expect("kept");
        assert!(matches!(kept, FacetBodies::InFacet(_)));
        assert_eq!(names(&kept), ["vpc", "dns"]);
    }

    #[test]
    fn bodies_taken_cannot_be_read_again_from_a_file_changed_since() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (files, facet) = parsed(dir.path());
        let mut facets = vec![facet];
        let bodies = Bodies::lend(&mut facets);
        drop(bodies.take(0, &facets[0], &files).expect("lent"));
        std::fs::write(dir.path().join("net.yaml"), FACET.replace("vpc", "vpX")).expect("write");
        let Err(d) = bodies.take(0, &facets[0], &files) else {
            panic!("a changed file was read as the one parsed");
        };
        let text = crate::files::render::render(&d, &files, false);
        assert!(
            text.contains("facets/net.yaml changed on disk while bpc ran"),
            "{text}"
        );
    }
}
