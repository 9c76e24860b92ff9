//! Save-mem: an output of which the outer graph reads only the last k steps (`x[-1]`,
//! `x[-k]`, `x[-k..]`, `x[-k..-j]`) keeps only those (`Output::keep`): the loop holds
//! `max(k, depth of its taps)` rows in a ring, or, for one row, the state alone (a local
//! scalar, or two buffers swapped each step). An output nothing reads keeps 0 rows beyond
//! what its taps need. With `until`, the kept rows are the last of the steps taken.
//!
//! Never shrunk: an output returned or passed on whole, read at a non-negative index or
//! with a slice that has a non-negative end (both count from the first step), or read
//! through anything but indexing.
//!
//! The other way round: when every output of a scan is read only in its first m steps
//! (`x[i]` with i < m, `x[..m]`, `x[a..m]` with non-negative bounds), the loop runs at
//! most m steps (`ScanOp::max_steps`), after the usual checks of `n_steps` and the
//! sequences. An error a later step would have raised is then not raised, as in
//! PyTensor, whose save-mem shortens the loop the same way.

use super::edit::scan_outputs;
use super::{output_label, scan_label, Log};
use crate::ir::{Graph, Literal, NodeId, Op, PathStep};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let users = g.consumers();
    let mut decisions = Vec::new();
    for (i, node) in g.nodes.iter().enumerate() {
        let Op::Scan(op) = &node.op else { continue };
        let reads = scan_outputs(g, NodeId(i), op.outputs.len());
        for (j, output) in op.outputs.iter().enumerate() {
            if output.keep.is_some() {
                continue;
            }
            if let Some((k, how)) = last_rows_read(g, &users, &reads[j]) {
                decisions.push((i, j, k, how));
            }
        }
    }
    cap_steps(g, &users, log);
    for (i, j, k, how) in decisions {
        let label = scan_label(&g.nodes[i]);
        let Op::Scan(op) = &mut g.nodes[i].op else {
            unreachable!()
        };
        let text = output_label(op, j);
        op.outputs[j].keep = Some(k);
        let rows = match k {
            0 => "no trace, only what its taps need".to_string(),
            1 => "1 row".to_string(),
            k => format!("{k} rows"),
        };
        let why = if how.is_empty() {
            "it is not read outside the loop".to_string()
        } else {
            let mut how = how;
            how.sort();
            how.dedup();
            format!("only {} read", how.join(", "))
        };
        log.fired(format!("{label}: output {j} ({text}) keeps {rows} ({why})"));
    }
}

/// Caps the steps of each scan whose outputs are all read only in their first rows.
fn cap_steps(g: &mut Graph, users: &[Vec<NodeId>], log: &mut Log) {
    for i in 0..g.nodes.len() {
        let Op::Scan(op) = &g.nodes[i].op else {
            continue;
        };
        if op.max_steps.is_some() {
            continue;
        }
        let reads = scan_outputs(g, NodeId(i), op.outputs.len());
        let mut need = Some(0usize);
        let mut how = Vec::new();
        for &r in reads.iter().flatten() {
            if g.outputs.contains(&r) {
                need = None;
            }
            for &u in &users[r.0] {
                match first_rows_read(g, u, r) {
                    Some(m) => {
                        need = need.map(|n| n.max(m));
                        how.push(format!("`{}`", g.node(u).label));
                    }
                    None => need = None,
                }
            }
        }
        // Nothing read at all is the dead pass's business.
        let (Some(m), false) = (need, how.is_empty()) else {
            continue;
        };
        let label = scan_label(&g.nodes[i]);
        if let Op::Scan(op) = &mut g.nodes[i].op {
            op.max_steps = Some(m);
        }
        how.sort();
        how.dedup();
        log.fired(format!(
            "{label}: only the first {m} steps are read ({}): the loop runs at most {m} steps",
            how.join(", ")
        ));
    }
}

/// How many of the first rows of `output` node `user` reads, if it reads only a prefix
/// (non-negative constant index or slice bounds, with an end).
fn first_rows_read(g: &Graph, user: NodeId, output: NodeId) -> Option<usize> {
    let node = g.node(user);
    let Op::Subtensor { path } = &node.op else {
        return None;
    };
    if node.inputs[0] != output || node.inputs[1..].contains(&output) {
        return None;
    }
    let non_negative = |id: NodeId| match g.node(id).op {
        Op::Const(Literal::Int(v)) if v >= 0 => usize::try_from(v).ok(),
        _ => None,
    };
    match path.first()? {
        PathStep::Index => non_negative(node.inputs[1])?.checked_add(1),
        PathStep::Slice { start, end: true } => {
            if *start {
                non_negative(node.inputs[1])?;
                non_negative(node.inputs[2])
            } else {
                non_negative(node.inputs[1])
            }
        }
        PathStep::Slice { end: false, .. } => None,
        // Made by one-step inlining only, on no scan's results; or another axis first, or
        // a stepped slice (which may start from the end).
        PathStep::NewAxis | PathStep::Check(_) | PathStep::At(_) | PathStep::Stepped { .. } => None,
    }
}

/// How many of the last rows of an output the outer graph reads through its `ScanOutput`
/// nodes `reads` (and how, in the user's words), if it reads only its last rows; `None`
/// when the whole output is needed.
pub fn last_rows_read(
    g: &Graph,
    users: &[Vec<NodeId>],
    reads: &[NodeId],
) -> Option<(usize, Vec<String>)> {
    let mut need = 0usize;
    let mut how = Vec::new();
    for &r in reads {
        if g.outputs.contains(&r) {
            return None;
        }
        for &u in &users[r.0] {
            let (k, text) = rows_read(g, u, r)?;
            need = need.max(k);
            how.push(text);
        }
    }
    Some((need, how))
}

/// How many of the last rows of `output` node `user` reads, if it reads only those.
fn rows_read(g: &Graph, user: NodeId, output: NodeId) -> Option<(usize, String)> {
    let node = g.node(user);
    let Op::Subtensor { path } = &node.op else {
        return None;
    };
    if node.inputs[0] != output || node.inputs[1..].contains(&output) {
        return None;
    }
    let negative = |id: NodeId| match g.node(id).op {
        Op::Const(Literal::Int(v)) if v < 0 => Some(v.unsigned_abs() as usize),
        _ => None,
    };
    let shown = format!("`{}`", node.label);
    match path.first()? {
        PathStep::Index => Some((negative(node.inputs[1])?, shown)),
        PathStep::Slice { start: true, end } => {
            let k = negative(node.inputs[1])?;
            if *end {
                negative(node.inputs[2])?;
            }
            Some((k, shown))
        }
        PathStep::Slice { start: false, .. } => None,
        PathStep::NewAxis | PathStep::Check(_) | PathStep::At(_) | PathStep::Stepped { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1, Value};
    use super::super::Pass;

    const POWER: &str = "pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
        let r = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
        Ok(r[-1])
    }";

    #[test]
    fn only_the_last_row_read_keeps_one_row() {
        let (_, fired) = apply(POWER, Pass::SaveMem);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].ends_with("output 0 (`ones_like(a)`) keeps 1 row (only `r[-1]` read)"),
            "{fired:?}"
        );
        for n in [0i64, 1, 2, 7] {
            assert_same_results(POWER, "power", &[vec1(&[1.5, -0.5, 2.0]), Value::from(n)]);
        }
    }

    #[test]
    fn the_deepest_negative_read_decides() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(f64, Array1<f64>)> {
            let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
            Ok((s[-1], s[-3..]))
        }";
        let (_, fired) = apply(src, Pass::SaveMem);
        assert!(
            fired[0].contains("keeps 3 rows (only `s[-1]`, `s[-3..]` read)"),
            "{fired:?}"
        );
        for n in 0..6 {
            let u: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 1.0).collect();
            assert_same_results(src, "f", &[vec1(&u)]);
        }
    }

    #[test]
    fn whole_or_positive_reads_keep_everything() {
        for read in ["s", "s[0..3]", "s[-3..2]", "s[2]", "s[..-1]"] {
            let ret = if read == "s" || read.contains("..") {
                "Array1<f64>"
            } else {
                "f64"
            };
            let src = format!(
                "pub fn f(u: ArrayView1<f64>) -> Result<{ret}> {{
                    let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
                    Ok({read})
                }}"
            );
            // No row is dropped from the end (a prefix read may cap the steps instead).
            let (_, fired) = apply(&src, Pass::SaveMem);
            assert!(
                fired.iter().all(|f| !f.contains("keeps")),
                "{read}: {fired:?}"
            );
            for n in [0usize, 2, 5] {
                let u: Vec<f64> = (0..n).map(|i| i as f64 - 1.5).collect();
                assert_same_results(&src, "f", &[vec1(&u)]);
            }
        }
    }

    #[test]
    fn reading_only_the_first_steps_caps_the_loop() {
        let src = "pub fn f(u: ArrayView1<f64>, k: usize) -> Result<(f64, Array1<f64>)> {
            let (s, d) = scan(|u_t, s| (s + u_t, s * 2.0), sequences = u, outputs_info = [0.0, None], n_steps = k);
            Ok((s[2], d[1..4]))
        }";
        let (ir, fired) = apply(src, Pass::SaveMem);
        assert!(
            fired.iter().any(|f| f.ends_with("only the first 4 steps are read (`d[1..4]`, `s[2]`): the loop runs at most 4 steps")),
            "{fired:?}"
        );
        assert!(ir.contains("max_steps=4"), "{ir}");
        for (n, k) in [(9usize, 9i64), (9, 2), (9, 3), (3, 5), (9, 0)] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
            assert_same_results(src, "f", &[vec1(&u), Value::from(k)]);
        }
    }

    #[test]
    fn a_read_from_the_end_or_a_whole_output_keeps_every_step() {
        for read in ["(s[2], s)", "(s[2], s[-3..4])", "(s[2], s[..])"] {
            let src = format!(
                "pub fn f(u: ArrayView1<f64>) -> Result<(f64, Array1<f64>)> {{
                    let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
                    Ok({read})
                }}"
            );
            let (ir, _) = apply(&src, Pass::SaveMem);
            assert!(!ir.contains("max_steps"), "{read}: {ir}");
        }
    }

    #[test]
    fn taps_deeper_than_the_reads_still_work() {
        // x[-1] is read, but the output's taps reach back 3 steps.
        let src = "pub fn f(x0: ArrayView1<f64>, n: usize) -> Result<f64> {
            let x = scan(|a, b, c| a + b * 0.5 - c * 0.25, outputs_info = taps(x0, [-3, -2, -1]), n_steps = n);
            Ok(x[-1])
        }";
        let (_, fired) = apply(src, Pass::SaveMem);
        assert!(fired[0].contains("keeps 1 row"), "{fired:?}");
        for n in [0i64, 1, 2, 3, 4, 9] {
            assert_same_results(src, "f", &[vec1(&[1.0, 2.0, 3.0]), Value::from(n)]);
        }
    }
}
