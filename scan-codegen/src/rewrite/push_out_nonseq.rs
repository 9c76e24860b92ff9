//! Push-out of loop-invariant work: a step node that depends only on non-sequences and
//! constants computes the same value at every step, so it runs once, before the loop, in
//! the outer graph, and the step reads it as a new non-sequence (PyTensor's
//! `scan_push_out_non_seq`). `w.dot(v)` or `exp(-rate)` on non-sequences cost one
//! evaluation instead of n_steps.
//!
//! Never moved: anything that reads a sequence tap or an output tap (directly or not);
//! constants, inputs and plain views (nothing to gain); nested scans (left to their own
//! rewrites). A moved computation runs even when the loop runs no step, so an error in it
//! (a size mismatch among non-sequences) is reported then too, as in PyTensor.

use std::collections::HashMap;

use super::edit::{add_non_sequence, outer_input};
use super::lift::{self, Source};
use super::{each_scan, Log};
use crate::ir::{Graph, NodeId, Op, ScanOp};

pub fn run(g: &mut Graph, log: &mut Log) {
    each_scan(g, |g, op, inputs, label| {
        for text in push_out(g, op, inputs) {
            log.fired(format!(
                "{label}: `{text}` depends only on non-sequences: computed once before the loop"
            ));
        }
    });
    g.normalize();
}

/// Whether a node is worth computing outside: not a constant, an input or a view.
fn worth_moving(op: &Op) -> bool {
    !matches!(
        op,
        Op::Input { .. }
            | Op::Const(_)
            | Op::Subtensor { .. }
            | Op::Transpose
            | Op::Permute { .. }
            | Op::Squeeze { .. }
            | Op::BroadcastTo
            | Op::BroadcastArrays { .. }
            | Op::Scan(_)
            | Op::ScanOutput { .. }
    )
}

/// Moves the invariant work of `op`'s step into `g`; returns the labels of what moved.
fn push_out(g: &mut Graph, op: &mut ScanOp, scan_inputs: &mut Vec<NodeId>) -> Vec<String> {
    let step = &op.step;
    let first_ns = op.first_non_sequence_step_input();
    // Invariant: reads only non-sequence inputs and constants (and other invariant nodes).
    let src = lift::sources(step, |id| match step.node(id).op {
        Op::Input { index, .. } if index >= first_ns => Some(Source::Invariant),
        Op::Input { .. } => Some(Source::Variant),
        _ => None,
    });
    let invariant: Vec<bool> = src.iter().map(|s| *s == Source::Invariant).collect();
    // Move the invariant nodes that a variant node or a step result reads.
    let users = step.consumers();
    let mut roots: Vec<NodeId> = Vec::new();
    for (i, node) in step.nodes.iter().enumerate() {
        if !invariant[i] || !worth_moving(&node.op) {
            continue;
        }
        let read_by_variant = users[i].iter().any(|u| !invariant[u.0]);
        if read_by_variant || step.outputs.contains(&NodeId(i)) {
            roots.push(NodeId(i));
        }
    }
    if roots.is_empty() {
        return Vec::new();
    }
    // Copy each root's invariant closure into the outer graph.
    let mut copied: HashMap<NodeId, NodeId> = HashMap::new();
    let mut moved = Vec::new();
    for &root in &roots {
        let inputs: &[NodeId] = scan_inputs;
        let mut leaf = |_: &mut Graph, id: NodeId| outer_input(op, inputs, id);
        lift::copy_whole(g, &op.step, &src, root, &mut leaf, &mut copied);
    }
    for root in roots {
        let outer = copied[&root];
        let node = op.step.node(root).clone();
        let input = add_non_sequence(op, scan_inputs, outer, node.ty, &node.label, node.span);
        op.step.replace_uses(root, input);
        moved.push(node.label);
    }
    op.step.normalize();
    moved
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1, Value};
    use super::super::Pass;

    #[test]
    fn invariant_work_moves_before_the_loop() {
        let src = "pub fn f(u: ArrayView1<f64>, w: ArrayView1<f64>, r: f64) -> Result<Array1<f64>> {
            let y = scan(|u_t, w, r| u_t * w.dot(w) + exp(-r), sequences = u, non_sequences = [w, r]);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::PushOutNonSeq);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert!(
            fired[0].contains("`w.dot(w)` depends only on non-sequences"),
            "{fired:?}"
        );
        assert!(fired[1].contains("`exp(-r)`"), "{fired:?}");
        // The dot and the exp are now in the outer graph (indent 2), not in the step.
        assert!(ir.contains("\n  %") && ir.contains("= dot("), "{ir}");
        let step_lines: Vec<&str> = ir.lines().filter(|l| l.starts_with("    ")).collect();
        assert!(
            step_lines
                .iter()
                .all(|l| !l.contains("= dot(") && !l.contains("= exp(")),
            "{ir}"
        );
        assert_same_results(
            src,
            "f",
            &[
                vec1(&[1.0, -2.0, 0.5]),
                vec1(&[0.5, 0.25]),
                Value::from(0.3),
            ],
        );
    }

    #[test]
    fn work_that_reads_a_tap_stays_in_the_loop() {
        let src =
            "pub fn f(h0: ArrayView1<f64>, w: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
            let h = scan(|h, w| tanh(h.dot(w)), outputs_info = h0, non_sequences = w, n_steps = n);
            Ok(h)
        }";
        let (_, fired) = apply(src, Pass::PushOutNonSeq);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn a_factorisation_with_several_results_moves_with_its_parts() {
        // eigh(a) is one node read by two parts: both parts become non-sequences, the node
        // is computed once before the loop, and nothing of it stays in the step.
        let src = "pub fn f(u: ArrayView2<f64>, a: ArrayView2<f64>) -> Result<Array2<f64>> {
            let y = scan(|u_t, a| { let (w, v) = eigh(a); v.dot(u_t) * w }, sequences = u, non_sequences = a);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::PushOutNonSeq);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert_eq!(ir.matches("= eigh(").count(), 1, "{ir}");
        let step_lines: Vec<&str> = ir.lines().filter(|l| l.starts_with("    ")).collect();
        assert!(
            step_lines
                .iter()
                .all(|l| !l.contains("= eigh(") && !l.contains("= part#")),
            "{ir}"
        );
        let mat = super::super::test_util::mat;
        assert_same_results(src, "f", &[mat(4, 3, 1.0), mat(3, 3, 2.0)]);
    }

    #[test]
    fn a_step_result_that_is_invariant_moves_too() {
        let src = "pub fn f(u: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
            let (y, z) = scan(|u_t, w| (u_t * 2.0, w * 3.0), sequences = u, outputs_info = [None, None], non_sequences = w);
            Ok((y, z))
        }";
        let (_, fired) = apply(src, Pass::PushOutNonSeq);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_same_results(src, "f", &[vec1(&[1.0, -2.0, 0.5]), vec1(&[0.5, 0.25])]);
        // Zero steps: the result is still empty.
        assert_same_results(src, "f", &[vec1(&[]), vec1(&[0.5, 0.25])]);
    }
}
