//! Default facet ordinals from file names (docs/semantics.md S3). Higher ordinals are processed later and win.

/// The ordinal a facet gets when it sets none, from its file's basename.
///
/// Matching is a case-sensitive prefix test, first match wins. The singular `option-`
/// and `addon-` count like the plural forms because real templates use them (S3).
pub fn default_ordinal(basename: &str) -> i64 {
    let provider_like = basename.starts_with("provider-") || basename.starts_with("platform-");
    if basename.starts_with("config-") {
        100
    } else if provider_like && basename.contains("-base") {
        199
    } else if provider_like {
        200
    } else if basename.starts_with("options-") || basename.starts_with("option-") {
        300
    } else if basename.starts_with("addons-") || basename.starts_with("addon-") {
        400
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::default_ordinal;

    #[test]
    fn prefixes_map_to_the_documented_ordinals() {
        let cases = [
            ("config-talos.yaml", 100),
            ("provider-base.yaml", 199),
            ("platform-base-x.yaml", 199),
            ("provider-aws-baseline.yaml", 199),
            ("provider-database.yaml", 200),
            ("provider-aws.yaml", 200),
            ("platform-gcp.yaml", 200),
            ("option-dev.yaml", 300),
            ("options-dev.yaml", 300),
            ("addon-database.yaml", 400),
            ("addons-x.yaml", 400),
            ("Provider-aws.yaml", 0),
            ("talos.yaml", 0),
            ("", 0),
        ];
        for (name, want) in cases {
            assert_eq!(default_ordinal(name), want, "{name}");
        }
    }
}
