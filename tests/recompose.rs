//! Incremental recomposition equals a cold one: random templates whose
//! facets' `when`s, config values and component inputs read each other's config
//! blocks (and some components depend on others, which may be missing or in a
//! cycle; some inputs and `dependsOn` lists are empty, for finishing to tidy away), edited at random (a value changed, a `when` flipped, a facet added or
//! removed, a config key renamed), recomposed after each edit by one
//! [`Recomposer`] and by a fresh session; blueprint, warnings or errors (as text),
//! config, messages, exclusions, block log and the provenance of every value and
//! every merge step must be the same, and so must the
//! findings of `bpc check` with a memo kept across the edits and without. A third
//! engine is told which files changed (as watch mode and the language server tell
//! it) and reads only those: it must compose the same too.

use bpc::check::{check, check_incremental, Allow, FindingId, Memo as CheckMemo};
use bpc::compose::face::Composition;
use bpc::files::{render_all, Diagnostic, FileMap};
use bpc::session::{Options, Recomposer, Session};
use bpc::value::Equality;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BLOCKS: usize = 3;
const KEYS: usize = 3;
const COMPONENTS: usize = 4;

#[derive(Clone, Debug)]
enum Val {
    Lit(u8),
    /// `${bB.kK ?? 'none'}`: reads another (or the same) block.
    Ref(usize, usize),
    /// `${provider}`: a context value.
    Context,
    /// `""`: an input that finishing tidies away (and an empty `dependsOn`).
    Empty,
}

#[derive(Clone, Debug)]
enum When {
    None,
    Lit(bool),
    /// `bB.kK == 'vN'`: activation depends on config.
    Reads(usize, usize, u8),
    /// A contradiction: `bpc check` reports it can never be true.
    Never,
}

#[derive(Clone, Debug)]
struct Block {
    name: usize,
    entries: Vec<(usize, Val)>,
    /// `when: bB.kK == 'vN'`: the block counts only then.
    when: Option<(usize, usize, u8)>,
    /// `requires: [{paths: [bB.kK]}]`: unmet where nothing sets that key.
    requires: Option<(usize, usize)>,
}

#[derive(Clone, Debug)]
struct Component {
    name: usize,
    strategy: usize,
    input: Val,
}

#[derive(Clone, Debug)]
struct Facet {
    id: usize,
    /// In `facets/nested/` rather than `facets/`.
    nested: bool,
    when: When,
    blocks: Vec<Block>,
    components: Vec<Component>,
}

#[derive(Clone, Debug)]
enum Edit {
    SetValue(usize, usize, usize, Val),
    FlipWhen(usize, When),
    Add(Facet),
    Remove(usize),
    RenameKey(usize, usize, usize, usize),
    /// Moves the facet's file between `facets/` and `facets/nested/`.
    Move(usize),
}

fn val() -> impl Strategy<Value = Val> {
    prop_oneof![
        3 => (0u8..4).prop_map(Val::Lit),
        2 => (0..BLOCKS, 0..KEYS).prop_map(|(b, k)| Val::Ref(b, k)),
        1 => Just(Val::Context),
        1 => Just(Val::Empty),
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        2 => Just(When::None),
        1 => any::<bool>().prop_map(When::Lit),
        2 => (0..BLOCKS, 0..KEYS, 0u8..4).prop_map(|(b, k, v)| When::Reads(b, k, v)),
        1 => Just(When::Never),
    ]
}

fn facet(id: usize) -> impl Strategy<Value = Facet> {
    let reference = (0..BLOCKS, 0..KEYS);
    let block = (
        0..BLOCKS,
        prop::collection::vec((0..KEYS, val()), 1..3),
        prop::option::weighted(0.15, (0..BLOCKS, 0..KEYS, 0u8..4)),
        prop::option::weighted(0.05, reference),
    )
        .prop_map(|(name, entries, when, requires)| Block {
            name,
            entries,
            when,
            requires,
        });
    let component =
        (0..COMPONENTS, 0usize..10, val()).prop_map(|(name, strategy, input)| Component {
            name,
            strategy,
            input,
        });
    (
        when(),
        prop::collection::vec(block, 0..3),
        prop::collection::vec(component, 0..3),
    )
        .prop_map(move |(when, blocks, components)| Facet {
            id,
            nested: false,
            when,
            blocks,
            components,
        })
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>(), any::<usize>(), val())
            .prop_map(|(f, b, e, v)| Edit::SetValue(f, b, e, v)),
        2 => (any::<usize>(), when()).prop_map(|(f, w)| Edit::FlipWhen(f, w)),
        1 => (100usize..200).prop_flat_map(facet).prop_map(Edit::Add),
        1 => any::<usize>().prop_map(Edit::Remove),
        2 => (any::<usize>(), any::<usize>(), any::<usize>(), 0..KEYS)
            .prop_map(|(f, b, e, k)| Edit::RenameKey(f, b, e, k)),
        1 => any::<usize>().prop_map(Edit::Move),
    ]
}

fn text_of(v: &Val) -> String {
    match v {
        Val::Lit(n) => format!("v{n}"),
        Val::Ref(b, k) => format!("${{b{b}.k{k} ?? 'none'}}"),
        Val::Context => "${provider}".to_string(),
        Val::Empty => String::new(),
    }
}

fn yaml(f: &Facet) -> String {
    let mut out = format!(
        "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\nmetadata:\n  name: f{}\n",
        f.id
    );
    match &f.when {
        When::None => {}
        When::Lit(b) => out.push_str(&format!("when: {b}\n")),
        When::Reads(b, k, v) => out.push_str(&format!("when: \"(b{b}.k{k} ?? '') == 'v{v}'\"\n")),
        When::Never => out.push_str("when: \"provider == 'a' && provider == 'b'\"\n"),
    }
    // Some facets silence what `bpc check` finds in them.
    match f.id % 5 {
        1 => out.push_str("# bpc:allow-file unknown-reference\n"),
        2 => out.push_str("# bpc:allow-file never-active unused-config-key\n"),
        _ => {}
    }
    if !f.blocks.is_empty() {
        out.push_str("config:\n");
        for b in &f.blocks {
            out.push_str(&format!("  - name: b{}\n", b.name));
            if let Some((w, k, v)) = b.when {
                out.push_str(&format!("    when: \"(b{w}.k{k} ?? '') == 'v{v}'\"\n"));
            }
            if let Some((r, k)) = b.requires {
                out.push_str(&format!(
                    "    requires:\n      - paths: [b{r}.k{k}]\n        message: set b{r}.k{k}\n"
                ));
            }
            let mut seen = Vec::new();
            for (k, v) in &b.entries {
                if seen.contains(k) {
                    continue;
                }
                seen.push(*k);
                out.push_str(&format!("    k{k}: \"{}\"\n", text_of(v)));
            }
        }
    }
    if !f.components.is_empty() {
        out.push_str("terraform:\n");
        for (j, c) in f.components.iter().enumerate() {
            let strategy = match c.strategy {
                0 => "replace",
                1 => "remove",
                _ => "merge",
            };
            out.push_str(&format!(
                "  - name: tf{n}\n    path: mod/tf{n}\n    strategy: {strategy}\n    inputs:\n      v{j}: \"{}\"\n      from: f{}\n",
                text_of(&c.input),
                f.id,
                n = c.name
            ));
            // Some depend on the next component, which may be missing or close a
            // cycle: validation's verdict changes with the edits.
            if matches!(c.input, Val::Lit(x) if x % 3 == 0) {
                let next = (c.name + 1) % COMPONENTS;
                out.push_str(&format!("    dependsOn: [tf{next}]\n"));
            }
            if matches!(c.input, Val::Empty) {
                out.push_str("    dependsOn: []\n");
            }
        }
    }
    out
}

fn apply(facets: &mut Vec<Facet>, edit: &Edit) {
    let n = facets.len();
    match edit.clone() {
        Edit::SetValue(f, b, e, v) if n > 0 => {
            let facet = &mut facets[f % n];
            let count = facet.blocks.len().max(1);
            if let Some(block) = facet.blocks.get_mut(b % count) {
                let k = e % block.entries.len();
                block.entries[k].1 = v;
            } else if let Some(c) = facet.components.first_mut() {
                c.input = v;
            }
        }
        Edit::FlipWhen(f, w) if n > 0 => facets[f % n].when = w,
        Edit::Add(mut facet) => {
            while facets.iter().any(|f| f.id == facet.id) {
                facet.id += 100;
            }
            facets.push(facet);
        }
        Edit::Remove(f) if n > 0 => {
            facets.remove(f % n);
        }
        Edit::Move(f) if n > 0 => facets[f % n].nested ^= true,
        Edit::RenameKey(f, b, e, k) if n > 0 => {
            let facet = &mut facets[f % n];
            let count = facet.blocks.len().max(1);
            if let Some(block) = facet.blocks.get_mut(b % count) {
                let at = e % block.entries.len();
                block.entries[at].0 = k;
            }
        }
        _ => {}
    }
}

/// Writes the template's facet files: changed ones only, removed ones deleted, an
/// emptied `facets/nested/` removed. Returns every path created, written or removed
/// (directories too), as a file watcher reports them.
fn write(dir: &Path, facets: &[Facet]) -> Vec<PathBuf> {
    let facet_dir = dir.join("contexts/_template/facets");
    let nested_dir = facet_dir.join("nested");
    let mut touched = Vec::new();
    std::fs::create_dir_all(&facet_dir).expect("mkdir");
    let wanted: Vec<PathBuf> = facets
        .iter()
        .map(|f| {
            let name = format!("f{:03}.yaml", f.id);
            if f.nested {
                nested_dir.join(name)
            } else {
                facet_dir.join(name)
            }
        })
        .collect();
    for d in [&facet_dir, &nested_dir] {
        for entry in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_file() && !wanted.contains(&path) {
                std::fs::remove_file(&path).expect("rm");
                touched.push(path);
            }
        }
    }
    if wanted.iter().any(|p| p.starts_with(&nested_dir)) {
        if !nested_dir.is_dir() {
            std::fs::create_dir(&nested_dir).expect("mkdir");
            touched.push(nested_dir.clone());
        }
    } else if nested_dir.is_dir() {
        std::fs::remove_dir(&nested_dir).expect("rmdir");
        touched.push(nested_dir.clone());
    }
    for (f, path) in facets.iter().zip(&wanted) {
        let text = yaml(f);
        if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(path, text).expect("write");
            touched.push(path.clone());
        }
    }
    touched
}

/// Everything of a composition that must not depend on how it was computed, as text.
fn outcome(result: &Result<Composition, Vec<Diagnostic>>, files: &FileMap) -> String {
    match result {
        Err(errors) => format!("errors:\n{}", render_all(errors, files, false)),
        Ok(c) => {
            let exclusions: Vec<String> = c
                .exclusions
                .iter()
                .map(|e| format!("{:?} {} {} {}", e.kind, e.id, e.facet.index, e.reason))
                .collect();
            let log: Vec<String> = c
                .config_log
                .iter()
                .map(|r| format!("{} {} {} {}", r.name, r.facet, r.position, r.included))
                .collect();
            format!(
                "warnings:\n{}\nmessages: {:?}\nconfig: {:?}\nactive: {:?}\nexclusions: {exclusions:?}\nlog: {log:?}",
                render_all(&c.warnings, files, false),
                c.messages,
                c.config,
                c.activation.active,
            )
        }
    }
}

/// A check's findings as text, in order.
fn findings(report: &bpc::check::Report, files: &FileMap) -> String {
    let diagnostics: Vec<Diagnostic> = report
        .findings
        .iter()
        .map(|f| f.diagnostic.clone())
        .collect();
    format!(
        "{}\nsilenced {}",
        render_all(&diagnostics, files, false),
        report.silenced
    )
}

/// Where every value and every merge step of a composition came from, as text: the
/// provenance `bpc compose --provenance` writes, and each component's history (what
/// `bpc explain` shows), deleted components included.
fn provenance(
    session: &Result<Session, Vec<Diagnostic>>,
    result: &Result<Composition, Vec<Diagnostic>>,
    files: &FileMap,
) -> String {
    let (Ok(session), Ok(c)) = (session, result) else {
        return String::new();
    };
    let template = &session.template;
    let describe = |o| bpc::emit::provenance::describe(&c.origins.get(o), template, files);
    let mut out = bpc::emit::provenance::yaml(template, c, files).into_string();
    for merged in [&c.terraform, &c.kustomize, &c.flux, &c.kustomizations] {
        for component in merged.components.values().chain(&merged.deleted) {
            out.push_str(&format!("\n{:?} {}:", component.kind, component.id));
            for step in component.history.iter() {
                out.push_str(&format!(" {:?} by {};", step.effect, describe(step.origin)));
            }
        }
    }
    out
}

fn same_blueprint(a: &Composition, b: &Composition) -> bool {
    a.blueprint.equals(&b.blueprint, Equality::IDENTICAL)
}

fn run(initial: Vec<Facet>, edits: Vec<Edit>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::write(
        root.join("contexts/local/values.yaml"),
        "provider: aws\nb1:\n  k2: from-context\n",
    )
    .expect("values");
    let mut options = Options::at(root);
    options.locate.context = Some("local".into());
    options.environment = bpc::compose::model::inputs::Environment::Fixed(Default::default());
    let mut engine = Recomposer::new(options.clone());
    let mut told = Recomposer::new(options.clone());
    told.tell_changes(true);
    let mut checked = CheckMemo::default();
    let mut facets = initial;
    let mut replayed = 0;
    for (step, edit) in std::iter::once(None)
        .chain(edits.iter().map(Some))
        .enumerate()
    {
        if let Some(edit) = edit {
            apply(&mut facets, edit);
        }
        let touched = write(root, &facets);
        // The project's `check.allow` changes now and then too.
        let allow: Vec<Allow> = match step % 3 {
            2 => vec![Allow {
                id: FindingId::UnknownReference,
                file: Some("facets/f000.yaml".into()),
            }],
            _ => Vec::new(),
        };
        told.changed(touched.iter().map(PathBuf::as_path));
        let told_session = told.open();
        let told_result = match &told_session {
            Ok(session) => told.compose(session),
            Err(e) => Err(e.clone()),
        };
        let told_text = outcome(&told_result, told.sources())
            + &provenance(&told_session, &told_result, told.sources());
        let warm_session = engine.open();
        let warm_check = warm_session.as_ref().ok().map(|s| {
            let report = check_incremental(&s.template, &s.engine, &allow, &mut checked);
            findings(&report, engine.sources())
        });
        let warm = match &warm_session {
            Ok(session) => engine.compose(session),
            Err(e) => Err(e.clone()),
        };
        let warm_text =
            outcome(&warm, engine.sources()) + &provenance(&warm_session, &warm, engine.sources());
        replayed += engine.reuse("local").replayed;
        let sources = Arc::new(FileMap::new());
        let cold_session = Session::open(options.clone(), sources.clone());
        let cold_check = cold_session
            .as_ref()
            .ok()
            .map(|s| findings(&check(&s.template, &s.engine, &allow), &sources));
        let cold = match &cold_session {
            Ok(session) => session.compose(),
            Err(e) => Err(e.clone()),
        };
        let cold_text = outcome(&cold, &sources) + &provenance(&cold_session, &cold, &sources);
        prop_assert_eq!(&warm_text, &cold_text, "step {} ({:?})", step, edit);
        prop_assert_eq!(&told_text, &cold_text, "told, step {} ({:?})", step, edit);
        prop_assert_eq!(
            &warm_check,
            &cold_check,
            "check, step {} ({:?})",
            step,
            edit
        );
        if let (Ok(w), Ok(c)) = (&warm, &cold) {
            prop_assert!(
                same_blueprint(w, c),
                "step {step} ({edit:?}): blueprints differ"
            );
        }
        if let (Ok(t), Ok(c)) = (&told_result, &cold) {
            prop_assert!(
                same_blueprint(t, c),
                "told, step {step} ({edit:?}): blueprints differ"
            );
        }
    }
    // Not an assertion on speed: only that the memo was used at all somewhere.
    let _ = replayed;
    Ok(())
}

fn template() -> impl Strategy<Value = Vec<Facet>> {
    (2usize..7).prop_flat_map(|n| (0..n).map(facet).collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_cold(initial in template(), edits in prop::collection::vec(edit(), 1..8)) {
        run(initial, edits)?;
    }
}

/// A template large enough for a cold composition to collect, merge and finish on
/// several threads (on a machine with more than one core) composes as the
/// incremental engine does: the same blueprint, errors, block log and provenance of
/// every value and merge step. The engine's first composition collects on threads
/// too, keeping what each facet read; after an edit it collects one facet after
/// another and replays the rest, and after a facet is removed it replays the facets
/// behind it with their origins moved. Both a clean and a failing composition are
/// compared when the random template fails.
#[test]
fn a_template_large_enough_for_threads_composes_as_one_facet_after_another() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let facets: Vec<Facet> = (0..1100)
        .map(|id| {
            let mut facet = facet(id).new_tree(&mut runner).expect("a facet").current();
            // Few `when`s, on facets only: activation settles in a round or two, and
            // no block's `when` reads itself.
            if id % 10 != 0 {
                facet.when = When::None;
            }
            for block in &mut facet.blocks {
                block.when = None;
                block.requires = None;
            }
            facet
        })
        .collect();
    // Then a facet removed: those after it move up, and the replayed ones take their
    // origins along (most of them collected first by a thread from the back).
    let edits = vec![Edit::SetValue(7, 0, 0, Val::Ref(1, 1)), Edit::Remove(3)];
    if let Err(e) = run(facets, edits) {
        panic!("{e}");
    }
}

/// Five facets; facet `id` writes block `b{id % 3}` key `k{id % 3}` and its component
/// reads it back, so facets 1 and 4 both write and read `b1.k1`.
fn five_facets() -> Vec<Facet> {
    (0..5)
        .map(|id| Facet {
            id,
            nested: false,
            when: When::None,
            blocks: vec![Block {
                name: id % BLOCKS,
                entries: vec![(id % KEYS, Val::Lit(1))],
                when: None,
                requires: None,
            }],
            components: vec![Component {
                name: id % COMPONENTS,
                strategy: 5,
                input: Val::Ref(id % BLOCKS, id % KEYS),
            }],
        })
        .collect()
}

/// Composes `facets` in `root` with `engine`, and says how much the memo gave.
fn reuse_after(engine: &mut Recomposer, root: &Path, facets: &[Facet]) -> (usize, usize) {
    write(root, facets);
    let session = engine.open().expect("loads");
    engine.compose(&session).expect("composes");
    let reuse = engine.reuse("local");
    assert!(!reuse.cold, "{reuse:?}");
    (reuse.replayed, reuse.collected)
}

/// The memo is used: after an edit of a facet nothing reads, the other facets are
/// replayed (so the property above exercises the incremental path, not only the
/// cold fallback).
#[test]
fn an_unrelated_edit_replays_the_other_facets() {
    let facets = five_facets();
    let (dir, mut engine) = engine_over(&facets);
    assert_eq!(reuse_after(&mut engine, dir.path(), &facets), (0, 5));
    // Facet 4 changes b1.k1, which only facets 1 and 4 read.
    let mut edited = facets.clone();
    edited[4].blocks[0].entries[0].1 = Val::Lit(3);
    assert_eq!(reuse_after(&mut engine, dir.path(), &edited), (3, 2));
}

/// A facet edited elsewhere than in its config block leaves the block's value as it
/// was: the facets reading the block are replayed, only the edited one is collected.
#[test]
fn an_edit_that_leaves_a_block_value_as_it_was_replays_its_readers() {
    let facets = five_facets();
    let (dir, mut engine) = engine_over(&facets);
    assert_eq!(reuse_after(&mut engine, dir.path(), &facets), (0, 5));
    // Facet 4 writes b1, which facet 1 reads; its component changes, b1 does not.
    let mut edited = facets.clone();
    edited[4].components[0].input = Val::Lit(2);
    assert_eq!(reuse_after(&mut engine, dir.path(), &edited), (4, 1));
}

/// Facet `id`, whose one component's input reads key `key` of block b0.
fn reader_of_b0(id: usize, key: usize) -> Facet {
    Facet {
        id,
        nested: false,
        when: When::None,
        blocks: Vec::new(),
        components: vec![Component {
            name: id,
            strategy: 5,
            input: Val::Ref(0, key),
        }],
    }
}

/// Facet 0, which defines block b0 with keys `0..keys`, each set to 1.
fn writer_of_b0(keys: usize) -> Facet {
    Facet {
        id: 0,
        nested: false,
        when: When::None,
        blocks: vec![Block {
            name: 0,
            entries: (0..keys).map(|k| (k, Val::Lit(1))).collect(),
            when: None,
            requires: None,
        }],
        components: Vec::new(),
    }
}

/// A facet reading one key of a block is collected again when that key changes, not
/// when another key of the same block does.
#[test]
fn a_changed_key_collects_again_the_facets_reading_that_key() {
    let facets = vec![writer_of_b0(2), reader_of_b0(1, 0), reader_of_b0(2, 1)];
    let (dir, mut engine) = engine_over(&facets);
    assert_eq!(reuse_after(&mut engine, dir.path(), &facets), (0, 3));
    // b0.k1 changes: facet 2 reads it, facet 1 reads b0.k0 only.
    let mut edited = facets.clone();
    edited[0].blocks[0].entries[1].1 = Val::Lit(2);
    assert_eq!(reuse_after(&mut engine, dir.path(), &edited), (1, 2));
}

/// Two facets holding the same expression text (one shared string once parsed) each
/// read the block it names: when the block changes, both are collected again.
#[test]
fn facets_with_the_same_expression_text_are_each_collected_again() {
    let facets = vec![writer_of_b0(1), reader_of_b0(1, 0), reader_of_b0(2, 0)];
    let (dir, mut engine) = engine_over(&facets);
    assert_eq!(reuse_after(&mut engine, dir.path(), &facets), (0, 3));
    let mut edited = facets.clone();
    edited[0].blocks[0].entries[0].1 = Val::Lit(2);
    assert_eq!(reuse_after(&mut engine, dir.path(), &edited), (0, 3));
}

/// A project of `facets` in a new directory, and an engine composing its context.
fn engine_over(facets: &[Facet]) -> (tempfile::TempDir, Recomposer) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::write(root.join("contexts/local/values.yaml"), "provider: aws\n").expect("values");
    write(root, facets);
    let mut options = Options::at(root);
    options.locate.context = Some("local".into());
    (dir, Recomposer::new(options))
}

/// A config block whose value no edit reached keeps it, but its requirements are
/// checked again: a requirement the edit of another facet left unmet fails the
/// composition, and a block its `when` leaves out still requires nothing (that one
/// only guards against a needless error: an error sends the memo cold).
#[test]
fn requirements_of_an_unchanged_block_are_checked_again() {
    let block = |name, key, value, when, requires| Block {
        name,
        entries: vec![(key, Val::Lit(value))],
        when,
        requires,
    };
    let facet = |id, blocks| Facet {
        id,
        nested: false,
        when: When::None,
        blocks,
        components: vec![Component {
            name: id,
            strategy: 5,
            input: Val::Lit(1),
        }],
    };
    // b0 requires b1.k0, which facet 1 sets until its key is renamed.
    let unmet = vec![
        facet(0, vec![block(0, 0, 1, None, Some((1, 0)))]),
        facet(1, vec![block(1, 0, 2, None, None)]),
    ];
    run(unmet, vec![Edit::RenameKey(1, 0, 0, 1)]).expect("the same as a cold composition");
    // b0 would require the unset b1.k0, but its `when` (b2.k0 == 'v3') is false.
    let excluded = vec![
        facet(0, vec![block(0, 0, 1, Some((2, 0, 3)), Some((1, 0)))]),
        facet(1, vec![block(1, 1, 2, None, None)]),
    ];
    run(excluded, vec![Edit::SetValue(1, 0, 0, Val::Lit(3))])
        .expect("the same as a cold composition");
}

/// Activation is remembered only while no `when` reads a config block: a facet
/// whose `when` reads a block another facet's edit changes, a `when` edited to read
/// a block, and a block name that appears under a `when` that read it as a context
/// value all switch facets as a cold composition does.
#[test]
fn whens_that_read_config_blocks_activate_as_cold() {
    let writer = |id, key, value| Facet {
        id,
        nested: false,
        when: When::None,
        blocks: vec![Block {
            name: 0,
            entries: vec![(key, Val::Lit(value))],
            when: None,
            requires: None,
        }],
        components: vec![Component {
            name: id,
            strategy: 5,
            input: Val::Lit(1),
        }],
    };
    let reader = |id, when| Facet {
        id,
        nested: false,
        when,
        blocks: Vec::new(),
        components: vec![Component {
            name: id,
            strategy: 5,
            input: Val::Lit(2),
        }],
    };
    // Facet 1 applies once facet 0 sets b0.k0 to v2.
    let edited = vec![writer(0, 0, 1), reader(1, When::Reads(0, 0, 2))];
    run(edited, vec![Edit::SetValue(0, 0, 0, Val::Lit(2))]).expect("as cold");
    // Facet 1's `when` is edited to read b0.k0, which facet 0 sets to v1.
    let flipped = vec![writer(0, 0, 1), reader(1, When::Lit(true))];
    run(flipped, vec![Edit::FlipWhen(1, When::Reads(0, 0, 1))]).expect("as cold");
    // b0 is no block name until facet 3 is added.
    let added = vec![reader(1, When::Reads(0, 0, 2)), reader(2, When::None)];
    let mut new = writer(3, 0, 2);
    new.id = 103;
    run(added, vec![Edit::Add(new)]).expect("as cold");
}

/// Early cutoff: a facet that reads one key of a block another facet's edit changed
/// is replayed while that key reads the same, and collected again once it does not;
/// a block whose value stays while a `when` of it flips keeps no stale log.
#[test]
fn what_a_facet_or_a_block_saw_decides_whether_it_is_replayed() {
    let block = |name, entries: Vec<(usize, u8)>, when| Block {
        name,
        entries: entries.into_iter().map(|(k, v)| (k, Val::Lit(v))).collect(),
        when,
        requires: None,
    };
    let facet = |id, blocks, input| Facet {
        id,
        nested: false,
        when: When::None,
        blocks,
        components: vec![Component {
            name: id,
            strategy: 5,
            input,
        }],
    };
    // Facet 1 reads b0.k0; facet 0 edits b0.k1, then b0.k0.
    let keys = vec![
        facet(0, vec![block(0, vec![(0, 1), (1, 1)], None)], Val::Lit(1)),
        facet(1, Vec::new(), Val::Ref(0, 0)),
    ];
    let edits = vec![
        Edit::SetValue(0, 0, 1, Val::Lit(2)),
        Edit::SetValue(0, 0, 0, Val::Lit(3)),
    ];
    run(keys, edits).expect("as cold");
    // b1 is {k0: v2} whether or not facet 1's block counts (b0.k0 == 'v1').
    let log = vec![
        facet(0, vec![block(0, vec![(0, 1)], None)], Val::Lit(1)),
        facet(
            1,
            vec![block(1, vec![(0, 2)], Some((0, 0, 1)))],
            Val::Lit(1),
        ),
        facet(2, vec![block(1, vec![(0, 2)], None)], Val::Ref(1, 0)),
    ];
    run(log, vec![Edit::SetValue(0, 0, 0, Val::Lit(3))]).expect("as cold");
}

/// Told which files changed, the engine reads those only: a file changed without
/// telling keeps its last text until an unknown change makes it read everything.
/// (So the property above drives the told path, not a full reload.)
#[test]
fn a_told_engine_reads_only_the_files_it_is_told_changed() {
    let facet = |id: usize, value: u8| Facet {
        id,
        nested: false,
        when: When::None,
        blocks: Vec::new(),
        components: vec![Component {
            name: id,
            strategy: 5,
            input: Val::Lit(value),
        }],
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::write(root.join("contexts/local/values.yaml"), "provider: aws\n").expect("values");
    write(root, &[facet(0, 1), facet(1, 1)]);
    let mut options = Options::at(root);
    options.locate.context = Some("local".into());
    let mut engine = Recomposer::new(options);
    engine.tell_changes(true);
    let inputs = |engine: &mut Recomposer| -> String {
        let session = engine.open().expect("loads");
        let composed = engine.compose(&session).expect("composes");
        let json = bpc::value::json::compact(&composed.blueprint);
        let mut found: Vec<String> = ["\"v0\":\"v1\"", "\"v0\":\"v2\""]
            .iter()
            .map(|v| json.matches(v).count().to_string())
            .collect();
        found.insert(0, String::new());
        found.join(" ")
    };
    assert_eq!(inputs(&mut engine), " 2 0");
    // Both files change; the engine is told of f001 only.
    let touched = write(root, &[facet(0, 2), facet(1, 2)]);
    assert_eq!(touched.len(), 2);
    engine.changed([touched[1].as_path()]);
    assert_eq!(inputs(&mut engine), " 1 1");
    engine.unknown_changes();
    assert_eq!(inputs(&mut engine), " 0 2");
}

/// A facet file reached through a symlink changes under another name than the one
/// listed: a told engine then lists and reads the template every time, so the change
/// of the link's target is seen though only the target's path was told.
#[cfg(unix)]
#[test]
fn a_told_engine_reads_a_symlinked_facet_whose_target_changed() {
    let facet = |value: u8| Facet {
        id: 7,
        nested: false,
        when: When::None,
        blocks: Vec::new(),
        components: vec![Component {
            name: 1,
            strategy: 5,
            input: Val::Lit(value),
        }],
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("contexts/local")).expect("mkdir");
    std::fs::write(root.join("contexts/local/values.yaml"), "provider: aws\n").expect("values");
    write(&root, &[]);
    let shared = root.join("contexts/_template/shared");
    std::fs::create_dir_all(&shared).expect("mkdir");
    let target = shared.join("f007.yaml");
    std::fs::write(&target, yaml(&facet(1))).expect("write");
    std::os::unix::fs::symlink(
        "../shared/f007.yaml",
        root.join("contexts/_template/facets/f007.yaml"),
    )
    .expect("symlink");
    let mut options = Options::at(&root);
    options.locate.context = Some("local".into());
    let mut engine = Recomposer::new(options);
    engine.tell_changes(true);
    let input = |engine: &mut Recomposer| -> String {
        let session = engine.open().expect("loads");
        let composed = engine.compose(&session).expect("composes");
        let json = bpc::value::json::compact(&composed.blueprint);
        ["v1", "v2"]
            .into_iter()
            .find(|v| json.contains(&format!("\"v0\":\"{v}\"")))
            .unwrap_or("none")
            .to_string()
    };
    assert_eq!(input(&mut engine), "v1");
    std::fs::write(&target, yaml(&facet(2))).expect("write");
    engine.changed([target.as_path()]);
    assert_eq!(input(&mut engine), "v2");
}
