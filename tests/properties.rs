//! Property tests: the YAML loader, the expression engine and the merge
//! strategies against laws that must hold for every input, not only the examples.

use bpc::expr::host::NullHost;
use bpc::expr::{Engine, EngineConfig, Map, Value};
use bpc::files::FileMap;
use bpc::value::edit::deep_merge;
use proptest::prelude::*;

/// Plain data as a blueprint holds it: YAML has one integer type and no NaN keys, so
/// integers are i64 and floats are left out of round trips.
fn data() -> impl Strategy<Value = Value> {
    tree(any::<i64>().prop_map(Value::Int).boxed())
}

/// Data without numbers: JSON turns integers into floats (as in Go), and Go's
/// equality of maps and lists is type-exact, so `0` inside a map is not `0.0`.
fn data_without_numbers() -> impl Strategy<Value = Value> {
    tree(Just(Value::Nil).boxed())
}

fn tree(number: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        number,
        ".{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "", "true", "null", "~", "0x1f", "1e3", "- a", "a: b", "#", "'", "\"", "${x}", " ",
            "yes", "on", "1.0", "\n", "a\nb", "\t",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::list),
            prop::collection::vec(("[a-z_.-]{0,6}|.{0,4}", inner), 0..5).prop_map(|pairs| {
                let mut map = Map::default();
                for (k, v) in pairs {
                    map.insert(k.into(), v);
                }
                Value::map(map)
            }),
        ]
    })
}

/// Values have no `==`; their debug text compares them exactly, key order included.
fn show(v: &Value) -> String {
    format!("{v:?}")
}

/// Maps nested `depth` deep over a few shared keys, scalars below: every path has the
/// same kind in every generated value, which is where layering promises to be
/// associative (a scalar between two maps replaces one and is replaced by the other).
fn shaped(depth: u32) -> BoxedStrategy<Value> {
    if depth == 0 {
        return prop_oneof![
            Just(Value::Nil),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(Value::Int),
            "[a-c]{0,2}".prop_map(Value::from),
        ]
        .boxed();
    }
    prop::collection::vec(
        (
            prop::sample::select(vec!["a", "b", "c", "d"]),
            shaped(depth - 1),
        ),
        0..4,
    )
    .prop_map(|pairs| {
        let mut map = Map::default();
        for (k, v) in pairs {
            map.insert(k.into(), v);
        }
        Value::map(map)
    })
    .boxed()
}

fn load(text: &str) -> Result<String, String> {
    let sources = FileMap::default();
    let file = sources.add("p.yaml".to_string(), text.to_string());
    bpc::yaml::parse(text, file)
        .map(|n| show(&n.to_value()))
        .map_err(|e| format!("{e:?}"))
}

fn eval(source: &str, scope: &Map) -> Result<String, String> {
    let engine = Engine::new(EngineConfig::default());
    engine
        .eval(source, scope, &NullHost::default())
        .map(|v| show(&v))
        .map_err(|e| e.message)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Emitted YAML loads back as the same value.
    #[test]
    fn yaml_emit_then_load_is_identity(v in data()) {
        let mut top = Map::default();
        top.insert("v".into(), v);
        let top = Value::map(top);
        let text = bpc::emit::to_yaml(&top);
        prop_assert_eq!(load(&text), Ok(show(&top)), "{}", text);
    }

    /// Any text gives a value or an error; the loader never panics.
    #[test]
    fn yaml_loader_is_total(text in "(.|\n|[-:{}\\[\\]&*!|>'\"#]){0,200}") {
        let _ = load(&text);
    }

    /// Same for the expression compiler and evaluator.
    #[test]
    fn expressions_are_total(text in "([a-z0-9 .+*/%<>=!?:,()\\[\\]{}'\"#|&-]|\\.\\.){0,80}") {
        let _ = eval(&text, &Map::default());
        let engine = Engine::new(EngineConfig::default());
        let _ = engine.render_template(&format!("x ${{{text}}} y"), &Map::default(), &NullHost::default());
    }

    /// Integer arithmetic and comparison agree with Rust's on values that do not overflow.
    #[test]
    fn integer_laws(a in -1_000_000i64..1_000_000, b in -1_000_000i64..1_000_000) {
        let mut scope = Map::default();
        scope.insert("a".into(), Value::Int(a));
        scope.insert("b".into(), Value::Int(b));
        prop_assert_eq!(eval("a + b", &scope), Ok(show(&Value::Int(a + b))));
        prop_assert_eq!(eval("a * b", &scope), Ok(show(&Value::Int(a * b))));
        prop_assert_eq!(eval("a - b == -(b - a)", &scope), Ok(show(&Value::Bool(true))));
        prop_assert_eq!(eval("(a < b) == !(a >= b)", &scope), Ok(show(&Value::Bool(true))));
        prop_assert_eq!(eval("max(a, b) >= min(a, b)", &scope), Ok(show(&Value::Bool(true))));
    }

    /// A value passed through toJSON and fromJSON comes back equal.
    #[test]
    fn json_round_trip_in_expressions(v in data_without_numbers()) {
        let mut scope = Map::default();
        scope.insert("v".into(), v);
        prop_assert_eq!(eval("fromJSON(toJSON(v)) == v", &scope), Ok(show(&Value::Bool(true))));
    }

    /// The layer merge (S4: maps deep-merge, anything else replaces) is associative on
    /// values of one shape, so folding layers in any grouping gives the same scope.
    #[test]
    fn deep_merge_is_associative(a in shaped(3), b in shaped(3), c in shaped(3)) {
        let merged = |x: &Value, y: &Value| {
            let mut out = x.clone();
            deep_merge(&mut out, y);
            out
        };
        prop_assert_eq!(
            show(&merged(&merged(&a, &b), &c)),
            show(&merged(&a, &merged(&b, &c)))
        );
    }

    /// Merging a value into itself changes nothing; a non-map overlay always wins.
    #[test]
    fn deep_merge_is_idempotent_and_overlays_win(a in data(), b in data()) {
        let merged = |x: &Value, y: &Value| {
            let mut out = x.clone();
            deep_merge(&mut out, y);
            out
        };
        prop_assert_eq!(show(&merged(&a, &a)), show(&a));
        // The overlay always wins where it is not a map.
        if !matches!(b, Value::Map(_)) {
            prop_assert_eq!(show(&merged(&a, &b)), show(&b));
        }
    }
}

/// Composes two facets that both contribute terraform component `net`: the first
/// merges `first` as inputs, the second uses `strategy` with `second`.
fn compose_pair(first: &Map, strategy: &str, second: &Map) -> Result<Option<Value>, String> {
    let facet = |name: &str, ordinal: i64, strategy: &str, inputs: &Map| {
        let mut fields = Map::default();
        fields.insert("path".into(), Value::from("net"));
        fields.insert("strategy".into(), Value::from(strategy));
        if !inputs.is_empty() {
            fields.insert("inputs".into(), Value::map(inputs.clone()));
        }
        let mut doc = Map::default();
        doc.insert("kind".into(), Value::from("Facet"));
        doc.insert(
            "apiVersion".into(),
            Value::from("blueprints.windsorcli.dev/v1alpha1"),
        );
        let mut meta = Map::default();
        meta.insert("name".into(), Value::from(name));
        doc.insert("metadata".into(), Value::map(meta));
        doc.insert("ordinal".into(), Value::Int(ordinal));
        doc.insert("terraform".into(), Value::list(vec![Value::map(fields)]));
        bpc::emit::to_yaml(&Value::map(doc)).into_bytes()
    };
    let files = vec![
        ("facets/a.yaml".to_string(), facet("a", 1, "merge", first)),
        ("facets/b.yaml".to_string(), facet("b", 2, strategy, second)),
    ];
    let tree = bpc::files::FileTree::from_files(files, "t").map_err(|e| e.to_string())?;
    let sources = std::sync::Arc::new(FileMap::default());
    let template =
        bpc::template::load(std::sync::Arc::new(tree), sources).map_err(|d| format!("{d:?}"))?;
    let engine = Engine::new(EngineConfig::default());
    let inputs = bpc::compose::face::Inputs {
        template: &template,
        schema: None,
        engine: &engine,
        layers: Vec::new(),
        apply_schema_defaults: false,
        config_defaults: false,
        builtins: Default::default(),
        environment: bpc::compose::model::inputs::Environment::Fixed(Default::default()),
        terraform: bpc::expr::host::TerraformOutputs::Deferred,
        limits: Default::default(),
        work: Default::default(),
        overlay: None,
        context_patches: None,
        cycles: Default::default(),
        precedence: Default::default(),
        for_explain: Default::default(),
    };
    let composition = inputs.compose().map_err(|d| format!("{d:?}"))?;
    let terraform = composition
        .blueprint
        .as_map()
        .and_then(|m| m.get("terraform"))
        .and_then(Value::as_list)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    Ok(terraform.first().map(|c| {
        c.as_map()
            .and_then(|m| m.get("inputs"))
            .cloned()
            .unwrap_or_else(|| Value::map(Map::default()))
    }))
}

/// `value` with every map's keys sorted: how the blueprint writes inputs, as Go writes
/// a map (S10).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Map(m) => {
            let mut out: Vec<(std::sync::Arc<str>, Value)> =
                m.iter().map(|(k, v)| (k.clone(), sorted(v))).collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Value::map(out.into_iter().collect())
        }
        Value::List(items) => Value::list(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Inputs with non-empty string leaves (empty overlays have their own rule, S9).
fn inputs() -> BoxedStrategy<Map> {
    prop::collection::vec(
        (
            prop::sample::select(vec!["a", "b", "c"]),
            prop_oneof![
                "[a-z]{1,3}".prop_map(Value::from),
                prop::collection::vec((prop::sample::select(vec!["x", "y"]), "[a-z]{1,3}"), 1..3)
                    .prop_map(|pairs| {
                        let mut m = Map::default();
                        for (k, v) in pairs {
                            m.insert(k.into(), Value::from(v));
                        }
                        Value::map(m)
                    }),
            ],
        ),
        0..4,
    )
    .prop_map(|pairs| {
        let mut m = Map::default();
        for (k, v) in pairs {
            m.insert(k.into(), v);
        }
        m
    })
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// S9 merge strategies: `replace` keeps only the later inputs, `merge` deep-merges
    /// them (the later wins), and `remove` with only the identity deletes the component.
    /// Inputs are written with sorted keys (S10).
    #[test]
    fn component_strategies(first in inputs(), second in inputs()) {
        let replaced = compose_pair(&first, "replace", &second).map_err(TestCaseError::fail)?;
        prop_assert_eq!(show(&replaced.expect("component")), show(&sorted(&Value::map(second.clone()))));

        let merged = compose_pair(&first, "merge", &second).map_err(TestCaseError::fail)?;
        let mut expected = Value::map(first.clone());
        deep_merge(&mut expected, &Value::map(second.clone()));
        prop_assert_eq!(show(&merged.expect("component")), show(&sorted(&expected)));

        let removed = compose_pair(&first, "remove", &Map::default()).map_err(TestCaseError::fail)?;
        prop_assert!(removed.is_none());
    }
}

/// One facet of a generated template: where its file sorts, its `when` (indices into
/// [`WHENS`]), its config block (`b<k>` on or off, written in block or flow style), and
/// its component: named or known by its path, maybe depending on another facet's.
#[derive(Clone, Debug)]
struct GenFacet {
    file: String,
    when: Option<(usize, usize, usize)>,
    block: Option<(usize, bool, bool)>,
    named: bool,
    depends_on: Option<usize>,
}

/// `when`s over context values `v<j>` and config blocks `b<k>` (a block may also be
/// set as a context value).
const WHENS: [&str; 6] = [
    "b{k}.on == true",
    "v{j} == 'a'",
    "v{j} == 'a' && b{k}.on == true",
    "b{k}.on == true || v{j} == 'b'",
    "(b{k}.on ?? false) == false",
    "v{j} != 'a' && (b{k} ?? {}).on == nil",
];

fn gen_facet() -> impl Strategy<Value = GenFacet> {
    (
        "[a-z]{3}",
        prop::option::of((0..WHENS.len(), 0..3usize, 0..3usize)),
        prop::option::of((0..3usize, any::<bool>(), any::<bool>())),
        any::<bool>(),
        prop::option::weighted(0.3, 0..10usize),
    )
        .prop_map(|(file, when, block, named, depends_on)| GenFacet {
            file,
            when,
            block,
            named,
            depends_on,
        })
}

/// The blueprint (or the errors) of the project in `dir`; composed `once`
/// ([`bpc::session::OneShot`]), its load may leave facets hollow.
fn compose_generated(dir: &std::path::Path, once: bool) -> String {
    let options = bpc::session::Options::at(dir);
    let sources = std::sync::Arc::new(FileMap::new());
    let composed = match once {
        true => bpc::session::OneShot::open(options, sources.clone())
            .and_then(|session| session.compose()),
        false => bpc::session::Session::open(options, sources.clone())
            .and_then(|session| session.compose()),
    };
    let composed = composed.map(|c| bpc::emit::to_yaml(&c.blueprint));
    match composed {
        Ok(text) => text,
        // As the command line shows them: places, notes and help included.
        Err(errors) => bpc::files::render::render_all(&errors, &sources, false),
    }
}

/// A project of `facets` over 256 facets that never apply, whose context sets `values`.
fn write_generated(dir: &std::path::Path, facets: &[GenFacet], values: &str) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("windsor.yaml", "version: v1alpha1\n");
    write("contexts/local/values.yaml", values);
    let head = "kind: Facet\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
    for k in 0..256 {
        write(
            &format!("_template/facets/filler-{k:03}.yaml"),
            &format!(
                "{head}metadata:\n  name: filler-{k}\nwhen: v0 == 'never'\nterraform:\n  - name: filler-{k}\n    path: filler/{k}\n"
            ),
        );
    }
    for (i, f) in facets.iter().enumerate() {
        let mut text = format!("{head}metadata:\n  name: g{i}\n");
        if let Some((w, j, k)) = f.when {
            let when = WHENS[w]
                .replace("{j}", &j.to_string())
                .replace("{k}", &k.to_string());
            text.push_str(&format!("when: \"{when}\"\n"));
        }
        if let Some((k, on, flow)) = f.block {
            if flow {
                text.push_str(&format!("config: [{{name: b{k}, value: {{on: {on}}}}}]\n"));
            } else {
                text.push_str(&format!(
                    "config:\n  - name: b{k}\n    value:\n      on: {on}\n"
                ));
            }
        }
        let id = |i: usize| match facets.get(i) {
            Some(f) if !f.named => format!("c/{i}"),
            _ => format!("c{i}"),
        };
        text.push_str("terraform:\n  - ");
        if f.named {
            text.push_str(&format!("name: c{i}\n    "));
        }
        text.push_str(&format!("path: c/{i}\n    inputs:\n      i: {i}\n"));
        if let Some(j) = f.depends_on.filter(|&j| j != i) {
            text.push_str(&format!("    dependsOn: [{}]\n", id(j)));
        }
        write(&format!("_template/facets/{}-{i}.yaml", f.file), &text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Leaving certainly inactive facets hollow at load changes nothing a
    /// composition gives, whatever reads which config block in which file order.
    #[test]
    fn hollow_facets_compose_as_whole_ones(
        facets in prop::collection::vec(gen_facet(), 1..10),
        values in prop::sample::select(vec![
            "v0: a\nv1: b\nv2: a\n",
            "v0: b\nv1: a\n",
            "v1: a\nb0:\n  on: true\n",
            "v0: a\nv2: b\nb2:\n  on: false\n",
        ]),
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        write_generated(dir.path(), &facets, values);
        let whole = compose_generated(dir.path(), false);
        let hollow = compose_generated(dir.path(), true);
        prop_assert_eq!(hollow, whole);
    }
}
