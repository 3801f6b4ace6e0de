//! Every class of composition error, with the rendered message: file:line:col, the
//! source line and a caret, and what was being evaluated. Each test shows the project,
//! then the whole of what `bpc compose` prints. (`.facet` adds the two-line facet head,
//! so line N of a facet body below is line N+2 in the messages.)

use crate::common::*;

const FACET: &str = FACET_HEAD;

/// `bpc compose` must fail with status 1; its stderr.
#[track_caller]
fn error(test: Test) -> String {
    test.compose().status(1).run().stderr
}

#[test]
fn duplicate_facet_names_name_both_files() {
    let test = Test::new()
        .facet(
            "a.yaml",
            indoc! {"
            metadata:
              name: same
        "},
        )
        .facet(
            "b.yaml",
            indoc! {"
            metadata:
              name: same
        "},
        );
    assert_eq!(
        error(test),
        indoc! {"
        error: duplicate facet name `same`
         --> _template/facets/b.yaml:4:9
          |
        4 |   name: same
          |         ^^^^ defined again here
         ::: _template/facets/a.yaml:4:9
          |
        4 |   name: same
          |         ---- first defined here
          |
          = help: facet names must be unique within a template

    "}
    );
}

#[test]
fn missing_kind_is_reported_at_the_file() {
    let test = Test::new().file(
        "_template/facets/x.yaml",
        indoc! {"
            apiVersion: blueprints.windsorcli.dev/v1alpha1
            metadata:
              name: x
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: a facet needs `kind: Facet`
         --> _template/facets/x.yaml:1:1
          |
        1 | apiVersion: blueprints.windsorcli.dev/v1alpha1
          | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ no `kind:` here

    "}
    );
}

#[test]
fn expression_errors_point_inside_the_dollar_brace() {
    let test = Test::new().facet(
        "provider-x.yaml",
        indoc! {r#"
            metadata:
              name: x
            terraform:
              - name: net
                path: net
                inputs:
                  cidr: "prefix-${network.cidr +}"
        "#},
    );
    // Line 9 of the file (the facet head adds two lines); the caret sits inside ${…}.
    assert_eq!(
        error(test),
        indoc! {r#"
        error: invalid expression: unexpected token EOF
         --> _template/facets/provider-x.yaml:9:37
          |
        9 |       cidr: "prefix-${network.cidr +}"
          |                                     ^ unexpected token EOF
          |
          = note: in `inputs` of terraform component `net` of facet `x`

    "#}
    );
}

#[test]
fn non_boolean_when_is_an_error() {
    let test = Test::new()
        .facet(
            "x.yaml",
            indoc! {"
            metadata:
              name: x
            when: provider
        "},
        )
        .args(["--set", "provider=aws"]);
    assert_eq!(
        error(test),
        indoc! {"
        error: `when` must evaluate to a boolean, got string (aws)
         --> _template/facets/x.yaml:5:7
          |
        5 | when: provider
          |       ^^^^^^^^ this condition
          |
          = note: in the `when` of facet `x`
          = help: compare explicitly, e.g. `x == 'value'`, or use `x ?? false`

    "}
    );
}

#[test]
fn config_cycles_print_the_chain() {
    let test = Test::new().facet(
        "config-x.yaml",
        indoc! {"
            metadata:
              name: x
            config:
              - name: a
                x: ${b.y}
              - name: b
                y: ${a.x}
            terraform:
              - name: t
                path: t
                inputs:
                  v: ${a.x}
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: config values depend on each other in a cycle: a.x -> b.y -> a.x
         --> _template/facets/config-x.yaml:7:8
          |
        7 |     x: ${b.y}
          |        ^^^^^^ this value is part of the cycle
          |
          = note: needed in config value `b.y` of facet `x`
          = note: needed in config value `a.x` of facet `x`
          = note: needed in `inputs` of terraform component `t` of facet `x`
          = help: break the cycle, or read the input value with the block's own name

    "}
    );
}

#[test]
fn missing_dependency_says_which_when_left_it_out() {
    let test = Test::new()
        .facet(
            "option-ingress.yaml",
            indoc! {"
            metadata:
              name: ingress
            when: ingress.enabled == true
            kustomize:
              - name: ingress
                path: ingress
        "},
        )
        .facet(
            "addon-store.yaml",
            indoc! {"
            metadata:
              name: store
            kustomize:
              - name: minio
                path: minio
                dependsOn: [ingress]
        "},
        )
        .args(["--set", "ingress.enabled=false"]);
    assert_eq!(
        error(test),
        indoc! {"
        error: kustomization `minio` depends on `ingress`, which is not in the blueprint
         --> _template/facets/addon-store.yaml:8:17
          |
        8 |     dependsOn: [ingress]
          |                 ^^^^^^^ no kustomization named `ingress`
         ::: _template/facets/option-ingress.yaml:5:7
          |
        5 | when: ingress.enabled == true
          |       ----------------------- this left `ingress` out
          |
          = note: `ingress` is defined in facet `ingress`, but facet `ingress` is not active (facets/option-ingress.yaml): `when: ingress.enabled == true`

    "}
    );
}

#[test]
fn missing_dependency_on_an_inactive_flux_system_names_it() {
    // `policy` is a flux system, so dependents need its tiers (`policy-install`, …);
    // the facet that defines it is off.
    let test = Test::new()
        .facet(
            "option-policy.yaml",
            indoc! {"
            metadata:
              name: policy
            when: policy.enabled == true
            flux:
              - name: policy
                install:
                  components: [kyverno]
        "},
        )
        .facet(
            "addon-apps.yaml",
            indoc! {"
            metadata:
              name: apps
            kustomize:
              - name: apps
                path: apps
                dependsOn: [policy]
        "},
        )
        .args(["--set", "policy.enabled=false"]);
    assert_eq!(
        error(test),
        indoc! {"
        error: kustomization `apps` depends on `policy`, which is not in the blueprint
         --> _template/facets/addon-apps.yaml:8:17
          |
        8 |     dependsOn: [policy]
          |                 ^^^^^^ no kustomization named `policy`
         ::: _template/facets/option-policy.yaml:5:7
          |
        5 | when: policy.enabled == true
          |       ---------------------- this left `policy` out
          |
          = note: `policy` is a flux system in facet `policy`, but facet `policy` is not active (facets/option-policy.yaml): `when: policy.enabled == true`

    "}
    );
}

#[test]
fn dependency_cycles_are_printed_whole() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: x
            kustomize:
              - name: a
                dependsOn: [b]
              - name: b
                dependsOn: [c]
              - name: c
                dependsOn: [a]
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: kustomizations depend on each other in a cycle: a -> b -> c -> a
         --> _template/facets/x.yaml:7:16
          |
        7 |     dependsOn: [b]
          |                ^^^ this dependsOn is part of the cycle

    "}
    );
}

/// A project whose values break two rules of its schema.
fn violating() -> Test {
    Test::new()
        .schema(indoc! {"
            $schema: https://json-schema.org/draft/2020-12/schema
            type: object
            properties:
              provider:
                type: string
                enum: [aws, docker]
              cluster:
                type: object
                properties:
                  workers:
                    type: integer
        "})
        .values(
            "local",
            indoc! {"
            provider: gcp
            cluster:
              workers: many
        "},
        )
        .facet(
            "x.yaml",
            indoc! {"
            metadata:
              name: x
        "},
        )
}

/// Under `--strict` the warnings fail the run (docs/semantics.md S4).
#[test]
fn schema_violations_are_all_reported() {
    assert_eq!(
        error(violating().arg("--strict")),
        indoc! {r#"
        warning: invalid value at `provider`: "gcp" is not one of "aws" or "docker"
         --> contexts/local/values.yaml:1:11
          |
        1 | provider: gcp
          |           ^^^ set by contexts/local/values.yaml
          |
          = note: rule `enum` of schema.yaml, at /properties/provider/enum
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

        warning: invalid value at `cluster.workers`: "many" is not of type "integer"
         --> contexts/local/values.yaml:3:12
          |
        3 |   workers: many
          |            ^^^^ set by contexts/local/values.yaml
          |
          = note: rule `type` of schema.yaml, at /properties/cluster/properties/workers/type
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

        error: 2 warning(s) with --strict; nothing written
    "#}
    );
}

/// By default a violation warns, naming the line and the schema path, and composition
/// goes on with the value as written, as in the Windsor CLI.
#[test]
fn schema_violations_warn_and_compose_goes_on() {
    let out = violating().compose().status(0).run();
    assert_eq!(
        out.stderr,
        indoc! {r#"
        warning: invalid value at `provider`: "gcp" is not one of "aws" or "docker"
         --> contexts/local/values.yaml:1:11
          |
        1 | provider: gcp
          |           ^^^ set by contexts/local/values.yaml
          |
          = note: rule `enum` of schema.yaml, at /properties/provider/enum
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

        warning: invalid value at `cluster.workers`: "many" is not of type "integer"
         --> contexts/local/values.yaml:3:12
          |
        3 |   workers: many
          |            ^^^^ set by contexts/local/values.yaml
          |
          = note: rule `type` of schema.yaml, at /properties/cluster/properties/workers/type
          = help: composition goes on with the value as written, as the Windsor CLI does; --strict makes this an error

    "#}
    );
    assert_eq!(
        out.stdout,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: local
          description: Blueprint for the local context
        repository:
          url: http://git.test/git/project
          ref:
            branch: main
          secretName: flux-system
        sources:
        - name: template
          install: true
        configMaps:
          values-common:
            CONTEXT: local
            DOMAIN: test
    "}
    );
}

#[test]
fn unclosed_interpolation_is_an_error() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {r#"
            metadata:
              name: x
            kustomize:
              - name: k
                substitutions:
                  a: "${provider"
        "#},
    );
    assert_eq!(
        error(test),
        indoc! {r#"
        error: invalid expression: unclosed expression: `${` has no matching `}`
         --> _template/facets/x.yaml:8:11
          |
        8 |       a: "${provider"
          |           ^^ unclosed expression: `${` has no matching `}`
          |
          = note: in `substitutions` of kustomization `k` of facet `x`

    "#}
    );
}

#[test]
fn file_functions_cannot_leave_the_template() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: x
            kustomize:
              - name: k
                substitutions:
                  a: ${file('../../../../etc/passwd')}
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: expression failed: failed to read file ../../../../etc/passwd: the path leaves the template root
         --> _template/facets/x.yaml:8:12
          |
        8 |       a: ${file('../../../../etc/passwd')}
          |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ failed to read file ../../../../etc/passwd: the path leaves the template root
          |
          = note: in `substitutions` of kustomization `k` of facet `x`

    "}
    );
}

#[test]
fn activation_that_never_settles_names_the_facets() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: flip
            when: flag == null
            config:
              - name: flag
                value: true
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: facet activation does not settle after 2 rounds: `flip` (facets/x.yaml) keeps switching on and off
         --> _template/facets/x.yaml:5:7
          |
        5 | when: flag == null
          |       ^^^^^^^^^^^^ this condition flips
          |
          = help: a facet's `when` reads config that exists only while the facet is inactive (or the reverse)

    "}
    );
}

/// A key a component does not have is a warning that names the kind of component
/// (and an error under `--strict`), with the key it probably meant.
#[test]
fn unknown_component_keys_name_the_kind_of_component() {
    let test = Test::new().facet(
        "x.yaml",
        indoc! {"
            metadata:
              name: x
            terraform:
              - name: network
                stratgy: merge
            kustomize:
              - name: dns
                dependson: [network]
        "},
    );
    assert_eq!(
        error(test.arg("--strict")),
        indoc! {"
        warning: unknown key `stratgy` in a terraform component
         --> _template/facets/x.yaml:7:5
          |
        7 |     stratgy: merge
          |     ^^^^^^^ not a key bpc knows here
          |
          = help: did you mean `strategy`?

        warning: unknown key `dependson` in a kustomization
          --> _template/facets/x.yaml:10:5
           |
        10 |     dependson: [network]
           |     ^^^^^^^^^ not a key bpc knows here
           |
           = help: did you mean `dependsOn`?

        error: 2 warning(s) with --strict; nothing written
    "}
    );
}

#[test]
fn a_misspelt_strategy_suggests_the_one_meant() {
    let test = Test::new().facet(
        "a.yaml",
        indoc! {"
            metadata:
              name: a
            terraform:
              - name: net
                strategy: mrege
        "},
    );
    assert_eq!(
        error(test),
        indoc! {"
        error: invalid strategy `mrege`
         --> _template/facets/a.yaml:7:15
          |
        7 |     strategy: mrege
          |               ^^^^^ must be `merge`, `replace` or `remove`
          |
          = help: did you mean `merge`?

    "}
    );
}

#[test]
fn blueprint_yaml_is_checked() {
    let head = "kind: Blueprint\napiVersion: blueprints.windsorcli.dev/v1alpha1\n";
    for (body, message) in [
        (
            format!("{head}terraform: 5\n"),
            indoc! {"
            error: `terraform` must be a list, found an integer
             --> _template/blueprint.yaml:3:12
              |
            3 | terraform: 5
              |            ^ expected a list

        "},
        ),
        (
            format!("{head}kustomize: abc\n"),
            indoc! {"
            error: `kustomize` must be a list, found a string
             --> _template/blueprint.yaml:3:12
              |
            3 | kustomize: abc
              |            ^^^ expected a list

        "},
        ),
        (
            format!("{head}metadata: 7\n"),
            indoc! {"
            error: `metadata` must be a map, found an integer
             --> _template/blueprint.yaml:3:11
              |
            3 | metadata: 7
              |           ^ expected a map

        "},
        ),
        (
            "kind: Blueprint\n".to_string(),
            indoc! {"
            error: blueprint.yaml needs `apiVersion: blueprints.windsorcli.dev/v1alpha1`
             --> _template/blueprint.yaml:1:1
              |
            1 | kind: Blueprint
              | ^^^^^^^^^^^^^^^ no `apiVersion:` here

        "},
        ),
        (
            format!("{head}terraform:\n  - 5\n"),
            indoc! {"
            error: a terraform component must be a map, found an integer
             --> _template/blueprint.yaml:4:5
              |
            4 |   - 5
              |     ^ expected a map

        "},
        ),
    ] {
        let dir = project(&[
            ("windsor.yaml", "version: v1alpha1\n"),
            ("_template/blueprint.yaml", &body),
        ]);
        assert_eq!(compose_err(dir.path(), &[]), message, "{body}");
    }
}

#[test]
fn activation_chain_and_flips() {
    // Facet i is active once facet i-1 is; only the last one stays off (its `when`
    // reads a block nobody defines). Rounds re-evaluate only what read a changed block,
    // so this settles quickly; the result must be exactly the fixed point of S5.
    let n = 300;
    let mut files: Vec<(String, String)> =
        vec![("windsor.yaml".into(), "version: v1alpha1\n".into())];
    for i in 0..n {
        let when = match i {
            0 => String::new(),
            i if i == n - 1 => "when: nosuch.on == true\n".to_string(),
            i => format!("when: c{}.on == true\n", i - 1),
        };
        files.push((
            format!("_template/facets/f{i:04}.yaml"),
            format!("{FACET}metadata:\n  name: f{i}\n{when}config:\n  - name: c{i}\n    on: true\nterraform:\n  - path: p{i}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = project(&refs);
    let out = compose_ok(dir.path(), &[]);
    // Every facet but the last is on: components p0 … p{n-2}, and no other.
    let mut paths: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("- path: "))
        .collect();
    paths.sort_unstable();
    let mut want: Vec<String> = (0..n - 1).map(|i| format!("p{i}")).collect();
    want.sort_unstable();
    assert_eq!(paths, want);

    // Two facets that switch each other off never settle; both are named.
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nwhen: b_on.x != true\nconfig:\n  - name: a_on\n    x: true\n"),
        ),
        (
            "_template/facets/b.yaml",
            &format!("{FACET}metadata:\n  name: b\nwhen: a_on.x != true\nconfig:\n  - name: b_on\n    x: true\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: facet activation does not settle after 3 rounds: `a` (facets/a.yaml), `b` (facets/b.yaml) keep switching on and off
         --> _template/facets/a.yaml:5:7
          |
        5 | when: b_on.x != true
          |       ^^^^^^^^^^^^^^ this condition flips
         ::: _template/facets/b.yaml:5:7
          |
        5 | when: a_on.x != true
          |       -------------- this one too
          |
          = help: a facet's `when` reads config that exists only while the facet is inactive (or the reverse)

    "}
    );
}

#[test]
fn unknown_function_is_named_with_a_hint() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/facets/a.yaml",
            &format!("{FACET}metadata:\n  name: a\nterraform:\n  - path: net\n    inputs:\n      x: ${{uper('a')}}\n      y: ${{nosuchthing(1)}}\n"),
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: expression failed: unknown function `uper`
         --> _template/facets/a.yaml:8:12
          |
        8 |       x: ${uper('a')}
          |            ^^^^^^^^^ no function named `uper`
          |
          = note: in `inputs` of terraform component `net` of facet `a`
          = note: (the expression engine says: invalid operation: cannot call nil)
          = help: did you mean `upper`?

    "}
    );
}

#[test]
fn bad_schema_points_at_the_key() {
    let dir = project(&[
        ("windsor.yaml", "version: v1alpha1\n"),
        (
            "_template/schema.yaml",
            "type: object\nproperties:\n  cluster:\n    type: object\n    properties:\n      size:\n        type: 5\n",
        ),
    ]);
    let e = compose_err(dir.path(), &[]);
    assert_eq!(
        e,
        indoc! {"
        error: schema.yaml is not a valid JSON Schema: 5 is not valid under any of the schemas listed in the 'anyOf' keyword
         --> _template/schema.yaml:7:15
          |
        7 |         type: 5
          |               ^ at `/properties/cluster/properties/size/type`

    "}
    );
}
