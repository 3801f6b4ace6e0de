//! Line-based unified diffs of two texts, for any command that compares what it made
//! with what is on disk (`bpc test --snapshot`, `bpc render --check`).

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Same,
    Del,
    Add,
}

/// The largest table of the longest common subsequence (cells): past it, the lines
/// that differ are shown as all removed, then all added, rather than spend memory
/// on the square of a file's length.
const MAX_TABLE: usize = 16 * 1024 * 1024;

/// The edit of `a` into `b`, line by line.
fn middle_ops(a: &[&str], b: &[&str]) -> Vec<(Op, usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if (n + 1).saturating_mul(m + 1) > MAX_TABLE {
        let removed = (0..n).map(|i| (Op::Del, i, 0));
        return removed.chain((0..m).map(|j| (Op::Add, n, j))).collect();
    }
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((Op::Same, i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Deletions first on ties: the conventional `-old` / `+new` order.
            ops.push((Op::Del, i, j));
            i += 1;
        } else {
            ops.push((Op::Add, i, j));
            j += 1;
        }
    }
    ops
}

pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    // Lines the two share at the start and at the end are kept as they are; the
    // longest common subsequence is computed for what lies between.
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..n - suffix], &b[prefix..m - suffix]);
    let mut ops: Vec<(Op, usize, usize)> = (0..prefix).map(|k| (Op::Same, k, k)).collect();
    ops.extend(
        middle_ops(a_mid, b_mid)
            .into_iter()
            .map(|(op, i, j)| (op, i + prefix, j + prefix)),
    );
    ops.extend((0..suffix).map(|k| (Op::Same, n - suffix + k, m - suffix + k)));
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let context = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, (op, _, _))| *op != Op::Same)
        .map(|(k, _)| k)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(context);
        let mut end = (changed[k] + context + 1).min(ops.len());
        while k + 1 < changed.len() && changed[k + 1] <= end + context {
            k += 1;
            end = (changed[k] + context + 1).min(ops.len());
        }
        let (a_start, b_start) = (ops[start].1, ops[start].2);
        let a_len = ops[start..end].iter().filter(|o| o.0 != Op::Add).count();
        let b_len = ops[start..end].iter().filter(|o| o.0 != Op::Del).count();
        out.push_str(&format!(
            "@@ -{},{a_len} +{},{b_len} @@\n",
            // An empty side starts at the line before, as `diff -u` and `patch` have it.
            if a_len == 0 { a_start } else { a_start + 1 },
            if b_len == 0 { b_start } else { b_start + 1 }
        ));
        for (op, ai, bj) in &ops[start..end] {
            match op {
                Op::Same => out.push_str(&format!(" {}\n", a[*ai])),
                Op::Del => out.push_str(&format!("-{}\n", a[*ai])),
                Op::Add => out.push_str(&format!("+{}\n", b[*bj])),
            }
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_marks_changed_lines() {
        let d = unified_diff("a\nb\nc\n", "a\nB\nc\n", "old", "new");
        assert!(d.contains("-b\n+B\n"), "{d}");
        assert!(d.starts_with("--- old\n+++ new\n@@ -1,3 +1,3 @@\n"), "{d}");
        assert_eq!(unified_diff("x\n", "x\n", "o", "n"), "--- o\n+++ n\n");
    }

    #[test]
    fn long_files_that_differ_throughout_cost_no_square_table() {
        let old: String = (0..5000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5000).map(|i| format!("new {i}\n")).collect();
        let framed = |body: &str| format!("head\n{body}tail\n");
        let d = unified_diff(&framed(&old), &framed(&new), "o", "n");
        assert!(
            d.starts_with("--- o\n+++ n\n@@ -1,5002 +1,5002 @@\n head\n-old 0\n"),
            "{}",
            &d[..80]
        );
        assert!(d.contains("-old 4999\n+new 0\n"));
        assert!(d.ends_with("+new 4999\n tail\n"));
    }
}
