//! `bpc eval`: in a project, an expression sees what a facet of the template sees
//! (value layers over schema defaults, the config blocks of the active facets, files
//! relative to the template root); outside one, `--values` and `--set` only.

use crate::common::*;

/// A template whose config block `nodes` derives from the context values, a facet
/// active only on aws, and a schema with a default.
fn cluster() -> Test {
    Test::new()
        .schema(indoc! {"
            $schema: https://json-schema.org/draft/2020-12/schema
            type: object
            properties:
              provider:
                type: string
                default: local
              cluster:
                type: object
                properties:
                  workers:
                    type: integer
                    default: 2
        "})
        .facet(
            "cluster.yaml",
            indoc! {"
            metadata:
              name: cluster
            config:
              - name: nodes
                workers: ${cluster.workers}
                total: ${nodes.workers + 1}
        "},
        )
        .facet(
            "aws.yaml",
            indoc! {"
            metadata:
              name: aws
            when: provider == 'aws'
            config:
              - name: region
                id: us-east-1
        "},
        )
}

#[test]
fn sees_schema_defaults_and_config_blocks() {
    cluster()
        .args(["eval", "nodes"])
        .stdout(indoc! {"
            workers: 2
            total: 3
        "})
        .run();
}

#[test]
fn sees_the_context_values_layered() {
    cluster()
        .values("prod", "provider: aws\ncluster:\n  workers: 5\n")
        .args(["eval", "--context", "prod", "--set", "cluster.workers=7"])
        .args(["[nodes.total, region.id, context]"])
        .stdout("- 8\n- us-east-1\n- prod\n")
        .run();
}

#[test]
fn sees_no_config_of_an_inactive_facet() {
    cluster()
        .args(["eval", "region ?? 'none'"])
        .stdout("none\n")
        .run();
}

#[test]
fn context_values_win_over_config_as_in_composition() {
    cluster()
        .args(["eval", "nodes.workers", "--set", "nodes.workers=9"])
        .stdout("9\n")
        .run();
    cluster()
        .args(["eval", "nodes.workers", "--set", "nodes.workers=9"])
        .args(["--config-precedence", "facet-wins"])
        .stdout("2\n")
        .run();
}

#[test]
fn project_flag_from_anywhere_and_files_relative_to_the_template_root() {
    cluster()
        .file("_template/configs/size.txt", "large")
        .file(
            "_template/configs/size.jsonnet",
            "{ size: importstr 'size.txt' }",
        )
        .file("elsewhere/.keep", "")
        .current_dir("elsewhere")
        .args(["eval", "--project", ".."])
        .args(["[file('configs/size.txt'), jsonnet('configs/size.jsonnet').size]"])
        .stdout("- large\n- large\n")
        .run();
}

/// Jsonnet imports resolve relative to the importing file, each file evaluated once,
/// and an import leaving the template is refused at its line and column.
#[test]
fn jsonnet_imports_resolve_relative_to_the_importing_file() {
    cluster()
        .file("_template/configs/main.jsonnet", "local lib = import 'lib/sizes.libsonnet';\n{ size: lib.size, again: (import 'lib/sizes.libsonnet').size }")
        .file("_template/configs/lib/sizes.libsonnet", "{ size: importstr 'size.txt' }")
        .file("_template/configs/lib/size.txt", "large")
        .args(["eval", "jsonnet('configs/main.jsonnet')"])
        .stdout("again: large\nsize: large\n")
        .run();
    cluster()
        .file("_template/configs/main.jsonnet", "{\n  secret: importstr '../../outside.txt',\n}")
        .file("outside.txt", "no")
        .args(["eval", "jsonnet('configs/main.jsonnet')"])
        .fails(indoc! {r#"
            error: expression failed: failed to evaluate jsonnet file configs/main.jsonnet: configs/main.jsonnet:2:11: cannot import "../../outside.txt": ../../outside.txt: the path leaves the template root
             --> <expression>:1:1
              |
            1 | jsonnet('configs/main.jsonnet')
              | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ failed to evaluate jsonnet file configs/main.jsonnet: configs/main.jsonnet:2:11: cannot import "../../outside.txt": ../../outside.txt: the path leaves the template root

        "#})
        .run();
}

#[test]
fn template_names_the_template_directory() {
    cluster()
        .file(
            "other/facets/x.yaml",
            format!(
                "{FACET_HEAD}{}",
                indoc! {"
            metadata:
              name: x
            config:
              - name: here
                value: other
        "}
            ),
        )
        .args(["eval", "--template", "other", "here"])
        .stdout("other\n")
        .run();
}

/// Text prints as the string it renders to, as a facet's `${…}` would put it in place
/// (with `--format json`, as a JSON string); text that is one `${…}` of a list or map
/// prints that value as YAML.
#[test]
fn text_interpolates_and_prints_the_string_as_it_is() {
    cluster()
        .args(["eval", "--text", "workers: ${nodes.workers}"])
        .stdout("workers: 2\n")
        .run();
    cluster()
        .args(["eval", "--text", "a: ${nodes.workers}\nb: 'c'\n"])
        .stdout("a: 2\nb: 'c'\n")
        .run();
    cluster()
        .args([
            "eval",
            "--text",
            "workers: ${nodes.workers}",
            "--format",
            "json",
        ])
        .stdout("\"workers: 2\"\n")
        .run();
    cluster()
        .args(["eval", "--text", "${[nodes.workers, 3]}"])
        .stdout("- 2\n- 3\n")
        .run();
}

#[test]
fn template_as_a_switch_still_works_with_a_warning() {
    let warning = "warning: `bpc eval --template` as a switch is deprecated: use `--text` (`--template DIR` names the template, as in every command)\n";
    Test::new()
        .no_windsor_yaml()
        .args(["eval", "--template", "n-${a}", "--set", "a=1"])
        .stdout("n-1\n")
        .stderr(warning)
        .run();
    Test::new()
        .no_windsor_yaml()
        .args(["eval", "n-${a}", "--set", "a=1", "--template"])
        .stdout("n-1\n")
        .stderr(warning)
        .run();
}

#[test]
fn outside_a_project_only_values_and_set() {
    Test::new()
        .no_windsor_yaml()
        .file("v.yaml", "a: {b: 2}\n")
        .args(["eval", "a.b * c", "--values", "v.yaml", "--set", "c=3"])
        .stdout("6\n")
        .run();
}

#[test]
fn a_failing_config_value_is_reported_where_it_is_written() {
    Test::new()
        .facet(
            "broken.yaml",
            indoc! {"
            metadata:
              name: broken
            config:
              - name: x
                y: ${1 + 'a'}
        "},
        )
        .args(["eval", "x.y"])
        .fails(indoc! {"
            error: invalid expression: invalid operation: + (mismatched types int and string)
             --> _template/facets/broken.yaml:7:10
              |
            7 |     y: ${1 + 'a'}
              |          ^^^^^^^ invalid operation: + (mismatched types int and string)
              |
              = note: in config value `x.y` of facet `broken`
              = note: needed by the expression evaluated

        "})
        .run();
}

#[test]
fn a_bad_expression_points_into_it() {
    Test::new()
        .no_windsor_yaml()
        .args(["eval", "a +"])
        .fails(indoc! {"
            error: invalid expression: unexpected token EOF
             --> <expression>:1:4
              |
            1 | a +
              |    ^ unexpected token EOF

        "})
        .run();
}

#[test]
fn no_expression_is_a_usage_error() {
    Test::new()
        .no_windsor_yaml()
        .args(["eval"])
        .stderr("error: give the EXPRESSION to evaluate (see `bpc eval --help`)\n")
        .status(2)
        .run();
}

/// Windsor's config defaults are in scope (docs/semantics.md S4): a context named
/// `local` is a dev context with a docker workstation; any other gets `platform: none`.
#[test]
fn sees_windsors_config_defaults() {
    let project = || Test::new().facet("f.yaml", "metadata:\n  name: f\n");
    project()
        .args(["eval", "[dev, platform, workstation.runtime, dns.domain]"])
        .stdout("- true\n- docker\n- docker\n- test\n")
        .run();
    project()
        .args(["eval", "--context", "prod", "[dev ?? 'unset', platform]"])
        .stdout("- unset\n- none\n")
        .run();
}
