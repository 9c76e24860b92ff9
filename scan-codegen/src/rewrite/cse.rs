//! Duplicates: two nodes with the same operation, the same inputs and the same type are
//! computed once (common subexpressions: `(a + b, until(a + b > l))` adds once); two
//! non-sequences of a scan given the same outer value are passed once.
//!
//! Never merged: scan nodes (two loops are the merge pass's business) and graph inputs.

use std::collections::HashMap;

use super::edit::remove_non_sequence;
use super::{scan_label, Log};
use crate::ir::{Graph, NodeId, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    merge_non_sequences(g, log);
    let mut seen: HashMap<String, NodeId> = HashMap::new();
    let mut merged = 0;
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        if matches!(node.op, Op::Input { .. } | Op::Scan(_)) {
            continue;
        }
        // The operation (with its constant, path or index), inputs and type identify the
        // value; `{:?}` of a float literal is exact (and tells -0.0 from 0.0).
        let key = format!("{:?} {:?} {:?}", node.op, node.inputs, node.ty);
        let is_const = matches!(node.op, Op::Const(_));
        match seen.get(&key) {
            Some(&first) => {
                g.replace_uses(NodeId(i), first);
                if !is_const {
                    merged += 1;
                }
            }
            None => {
                seen.insert(key, NodeId(i));
            }
        }
    }
    if merged > 0 {
        log.fired(format!(
            "{merged} repeated computation{} done once",
            if merged == 1 { "" } else { "s" }
        ));
    }
    g.normalize();
}

fn merge_non_sequences(g: &mut Graph, log: &mut Log) {
    for i in 0..g.nodes.len() {
        if !matches!(g.nodes[i].op, Op::Scan(_)) {
            continue;
        }
        let label = scan_label(&g.nodes[i]);
        let node = &mut g.nodes[i];
        let Op::Scan(op) = &mut node.op else {
            unreachable!()
        };
        let mut k = 1;
        while k < op.non_sequences.len() {
            let first = op.first_non_sequence_input();
            let outer = node.inputs[first + k];
            let Some(same) = (0..k).find(|&e| node.inputs[first + e] == outer) else {
                k += 1;
                continue;
            };
            let step_first = op.first_non_sequence_step_input();
            let (keep, drop) = (
                op.step.inputs[step_first + same],
                op.step.inputs[step_first + k],
            );
            op.step.replace_uses(drop, keep);
            let name = op.non_sequences[k].label.clone();
            remove_non_sequence(op, &mut node.inputs, k);
            log.fired(format!(
                "{label}: non-sequence `{name}` is passed twice: passed once"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1};
    use super::super::Pass;

    #[test]
    fn a_sum_used_twice_is_computed_once() {
        let src = "pub fn f(a0: f64, b: ArrayView1<f64>, l: f64) -> Result<Array1<f64>> {
            let y = scan(|b_t, a, l| (a + b_t, until(a + b_t > l)), sequences = b, outputs_info = a0, non_sequences = l);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Cse);
        assert_eq!(fired, ["cse: 1 repeated computation done once"]);
        assert_eq!(ir.matches(" = add(").count(), 1, "{ir}");
        assert_same_results(
            src,
            "f",
            &[
                super::super::test_util::Value::from(0.0),
                vec1(&[1.0, 2.0, 3.0, 4.0]),
                super::super::test_util::Value::from(4.5),
            ],
        );
    }

    #[test]
    fn a_factorisation_called_twice_is_computed_once() {
        // Two qr(m) nodes with the same input merge, then their parts of one index; the
        // part nobody reads (q) is dropped while the node lives for r.
        let src = "pub fn f(ms: ArrayView3<f64>) -> Result<Array1<f64>> {
            let y = scan(|m| { let (_, r) = qr(m); let (_, r2) = qr(m); r.sum() + r2.sum() }, sequences = ms);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Cse);
        assert!(!fired.is_empty(), "{fired:?}");
        assert_eq!(ir.matches("= qr(").count(), 1, "{ir}");
        assert_eq!(ir.matches("= part#1(").count(), 1, "{ir}");
        assert!(!ir.contains("part#0"), "{ir}");
        assert_same_results(
            src,
            "f",
            &[super::super::test_util::Value::from(
                ndarray::Array3::from_shape_fn((3, 4, 2), |(t, i, j)| {
                    ((t * 8 + i * 2 + j) as f64 * 0.37).sin()
                }),
            )],
        );
    }

    #[test]
    fn different_operands_are_not_merged() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let y = scan(|u_t| (u_t + 1.0) * (u_t + 2.0), sequences = u);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::Cse);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn a_non_sequence_given_twice_is_passed_once() {
        let src = "pub fn f(u: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<Array1<f64>> {
            let y = scan(|u_t, a, b| u_t + a.sum() * b.sum(), sequences = u, non_sequences = [w, w]);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Cse);
        assert!(
            fired.iter().any(|f| f.contains("passed twice")),
            "{fired:?}"
        );
        assert!(ir.contains("non_sequences=1"), "{ir}");
        assert_same_results(src, "f", &[vec1(&[1.0, 2.0]), vec1(&[0.5, 0.25])]);
    }
}
