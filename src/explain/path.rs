//! Paths users give to `bpc explain`: `terraform.cluster.inputs.cluster_name`,
//! `kustomize[ingress].components`, `talos.version`, `cluster.workers.count`.

/// Splits a path into segments; `[…]` holds a segment verbatim (for ids with dots).
pub fn parse(path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                } else if out.is_empty() {
                    return Err(format!("`{path}` starts with `.`"));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                let mut inner = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    inner.push(d);
                }
                if !closed {
                    return Err(format!("`{path}` has an unclosed `[`"));
                }
                out.push(inner.trim_matches(|c| c == '"' || c == '\'').to_string());
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    if out.is_empty() {
        return Err("the path is empty".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn dots_and_brackets() {
        assert_eq!(
            parse("terraform.cluster.inputs.x").unwrap(),
            ["terraform", "cluster", "inputs", "x"]
        );
        assert_eq!(
            parse("kustomize[ingress].components").unwrap(),
            ["kustomize", "ingress", "components"]
        );
        assert_eq!(
            parse("terraform['a.b'].inputs").unwrap(),
            ["terraform", "a.b", "inputs"]
        );
        assert!(parse("a[b").is_err());
        assert!(parse("").is_err());
    }
}
