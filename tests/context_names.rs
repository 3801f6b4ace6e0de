//! Context names: letters, digits, `-`, `_` and `.`, so that a name cannot leave
//! `contexts/`. A bad name on the command line is an error, one in `windsor.yaml` a
//! warning; a context defined nowhere composes with a warning (an error under
//! `--strict`).

use crate::common::*;

#[test]
fn context_names() {
    let dir = simple();
    std::fs::create_dir_all(dir.path().join("x")).expect("mkdir");
    std::fs::write(dir.path().join("x/values.yaml"), "secret: 1\n").expect("write");
    for bad in ["../x", "../../x", "a/b", ".hidden", ""] {
        let out = bpc(dir.path(), &["compose", "--context", bad]);
        assert!(!out.success(), "{bad:?}");
        assert_eq!(
            out.stderr,
            format!(
                "error: invalid context name {bad:?}\n\
                 = help: a context name is letters, digits, `-`, `_` and `.`, not starting with \
                 `.` (it names the directory contexts/<name>/)\n\n"
            )
        );
    }
    let out = bpc(dir.path(), &["compose", "--context", "nosuch"]);
    assert!(out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `nosuch` is not defined: there is no contexts/nosuch/ and no `contexts.nosuch` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

    "}
    );
    assert_eq!(
        out.stdout,
        indoc! {"
        kind: Blueprint
        apiVersion: blueprints.windsorcli.dev/v1alpha1
        metadata:
          name: nosuch
          description: Blueprint for the nosuch context
        sources:
        - name: template
          install: true
        terraform:
        - path: net
        configMaps:
          values-common:
            CONTEXT: nosuch
    "}
    );
    let out = bpc(dir.path(), &["compose", "--context", "nosuch", "--strict"]);
    assert!(!out.success());
    assert_eq!(
        out.stderr,
        indoc! {"
        warning: context `nosuch` is not defined: there is no contexts/nosuch/ and no `contexts.nosuch` in windsor.yaml, so it has no values
        = help: check the name; --strict makes this an error

        error: 1 warning(s) with --strict; nothing written
    "}
    );
    std::fs::create_dir_all(dir.path().join("contexts/prod")).expect("mkdir");
    let out = bpc(dir.path(), &["compose", "--context", "prod", "--strict"]);
    assert!(out.success(), "{}", out.stderr);
}

#[test]
fn invalid_context_names_in_windsor_yaml_are_reported() {
    let dir = project(&[
        (
            "windsor.yaml",
            "version: v1alpha1\ncontexts:\n  good: {}\n  \"bad name\": {}\n",
        ),
        ("_template/facets/app.yaml", &components(1, "one")),
    ]);
    let run = bpc(dir.path(), &["compose", "--context", "good"]);
    assert!(run.success(), "{}", run.stderr);
    assert_eq!(
        run.stderr,
        indoc! {r#"
        warning: windsor.yaml: `contexts.bad name` is not a valid context name, so this context is skipped
         --> windsor.yaml:4:3
          |
        4 |   "bad name": {}
          |   ^^^^^^^^^^ not a valid context name
          |
          = help: a context name is letters, digits, `-`, `_` and `.`, not starting with `.` (it names the directory contexts/<name>/)

    "#}
    );
    let strict = bpc(dir.path(), &["compose", "--context", "good", "--strict"]);
    assert_eq!(strict.status, Some(1), "{}", strict.stderr);
    let all = bpc(
        dir.path(),
        &["compose", "--all-contexts", "--strict", "--out", "all"],
    );
    assert_eq!(all.status, Some(1), "{}{}", all.stdout, all.stderr);
}
