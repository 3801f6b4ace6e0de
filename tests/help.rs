//! Every command's `--help` ends with examples to copy.

use crate::common::*;

#[test]
fn every_command_help_shows_examples() {
    let commands: &[(&[&str], &str)] = &[
        (&["check"], "bpc check --project"),
        (&["compose"], "bpc compose --context prod"),
        (&["completions"], "bpc completions bash"),
        (&["diff"], "bpc diff --affected"),
        (&["eval"], "bpc eval --text"),
        (&["explain"], "bpc explain --facet"),
        (&["lsp"], "bpc lsp --stdio"),
        (&["render"], "--out gitops/render --check"),
        (&["show"], "bpc show values --context"),
        (&["show", "values"], "bpc show values --context"),
        (&["test"], "bpc test --filter"),
    ];
    for (command, example) in commands {
        let out = Test::new()
            .args(command.iter().copied())
            .arg("--help")
            .run();
        let examples = out
            .stdout
            .split_once("\nExamples:\n")
            .map(|(_, after)| after)
            .unwrap_or_else(|| panic!("bpc {} --help has no examples", command.join(" ")));
        let count = examples.lines().filter(|l| l.starts_with("  bpc ")).count();
        assert!(
            (2..=4).contains(&count),
            "bpc {} --help: {count} examples",
            command.join(" ")
        );
        assert!(
            examples.contains(example),
            "bpc {} --help lacks `{example}`:\n{examples}",
            command.join(" ")
        );
    }
}
