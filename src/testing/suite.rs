//! A template's test suite: its test files discovered and loaded, the cases a
//! selection keeps, and the runner that runs them. `bpc test`, `bpc check`'s
//! coverage and the language server's test diagnostics and code lenses all start
//! here.

use super::case::{self, Case, TestFile};
use super::runner::{CaseResult, Runner};
use crate::files::{Diagnostic, FileMap};

/// Which cases of the suite run.
#[derive(Clone, Debug)]
pub struct Select {
    /// Only the case with exactly this name.
    pub name: Option<String>,
    /// Only cases whose name contains this (`*` and `?` are wildcards).
    pub filter: Option<String>,
    /// Most cases selected; more is an error naming the file where it was reached.
    pub most: usize,
}

impl Default for Select {
    fn default() -> Self {
        Select {
            name: None,
            filter: None,
            most: usize::MAX,
        }
    }
}

impl Select {
    /// Whether `case` is selected.
    pub fn keeps(&self, case: &Case) -> bool {
        self.name.as_ref().is_none_or(|n| &case.name == n)
            && (self.filter.as_ref()).is_none_or(|p| matches_filter(&case.name, p))
    }

    /// What a selection that keeps nothing asked for, if it asked for anything.
    pub fn wanted(&self) -> Option<&str> {
        self.name.as_deref().or(self.filter.as_deref())
    }
}

/// `*`/`?` wildcards when present, else a substring test.
pub fn matches_filter(name: &str, pattern: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    fn glob(p: &[char], s: &[char]) -> bool {
        match (p.first(), s.first()) {
            (None, _) => s.is_empty(),
            (Some('*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
            (Some('?'), Some(_)) => glob(&p[1..], &s[1..]),
            (Some(c), Some(d)) if c == d => glob(&p[1..], &s[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    glob(&p, &s)
}

/// One test file as discovery found it.
pub struct Found {
    /// Its path in the template tree (`tests/aws.test.yaml`).
    pub path: String,
    /// The file with its selected cases; `None` when it does not load.
    pub file: Option<TestFile>,
    /// Its warnings, or the errors that kept it from loading.
    pub diagnostics: Vec<Diagnostic>,
}

/// The test files of a template, loaded, with the runner their cases run with.
pub struct Suite<'s> {
    pub runner: Runner<'s>,
    /// In discovery order.
    pub files: Vec<Found>,
}

impl<'s> Suite<'s> {
    /// Discovers the test files of the runner's template (`tests/**/*.test.yaml`) and
    /// loads them, keeping the cases `select` keeps; texts are registered in
    /// `sources`. Fails once more than `select.most` cases are selected.
    pub fn discover(
        runner: Runner<'s>,
        sources: &FileMap,
        select: &Select,
    ) -> Result<Suite<'s>, Vec<Diagnostic>> {
        let tree = &runner.template.tree;
        let mut files = Vec::new();
        let mut count = 0usize;
        for path in case::discover(tree) {
            let found = match case::load(tree, sources, &path) {
                Ok((mut file, warnings)) => {
                    // Counted against the limit as each file is read.
                    file.cases.retain(|c| select.keeps(c));
                    count += file.cases.len();
                    if count > select.most {
                        return Err(vec![too_many(select.most, &path)]);
                    }
                    Found {
                        path,
                        file: Some(file),
                        diagnostics: warnings,
                    }
                }
                Err(errors) => Found {
                    path,
                    file: None,
                    diagnostics: errors,
                },
            };
            files.push(found);
        }
        Ok(Suite { runner, files })
    }

    /// The selected cases of the files that load, in order.
    pub fn cases(&self) -> Vec<&Case> {
        (self.files.iter())
            .filter_map(|f| f.file.as_ref())
            .flat_map(|f| f.cases.iter())
            .collect()
    }

    /// The files that do not load.
    pub fn failed(&self) -> impl Iterator<Item = &Found> {
        self.files.iter().filter(|f| f.file.is_none())
    }

    /// Runs `cases` (of this suite) on `threads` threads.
    pub fn run(&self, cases: &[&Case], threads: usize) -> Vec<CaseResult> {
        self.runner.run_all(cases, threads)
    }
}

fn too_many(most: usize, path: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "more than {most} test cases selected (reached in {path}); at most --max-cases {most} run at once"
    ))
    .with_help("run the suite in parts with --filter, or raise --max-cases N")
}
