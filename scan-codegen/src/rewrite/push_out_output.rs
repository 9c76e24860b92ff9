//! Push-out of outputs: a map (NITSOT) output computed at each step from the result of a
//! recurrent output whose every step is kept anyway, and from loop invariants, is
//! computed after the loop on the whole trace instead: `(h_t, h_t.dot(w_out))` keeps `h`
//! and becomes one `[T*B, H] x [H, O]` product after the loop rather than T small ones
//! inside it (PyTensor's `scan_push_out_add`/output push-out). The map output is then no
//! longer computed by the step (the dead pass drops it).
//!
//! Applies when the map output's step value is lifted from one recurrent output's step
//! result (see `lift`) and the outer graph reads that recurrent output whole (save-mem
//! would not shrink it: moving work out must not cost a trace that was not kept). With
//! no step, the result gets the shape a map output has then (`Op::ZeroStepShape`).
//!
//! Never moved: values that read a sequence, a tap, two outputs, or anything else the
//! lifting rules exclude; an output that feeds back (recurrent).

use std::collections::HashMap;

use super::edit::{outer_input, scan_outputs};
use super::lift::{self, Source};
use super::save_mem::last_rows_read;
use super::{output_label, scan_label, Log};
use crate::ir::{Graph, Node, NodeId, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let mut i = 0;
    while i < g.nodes.len() {
        if matches!(g.nodes[i].op, Op::Scan(_)) {
            push_out(g, NodeId(i), log);
        }
        i += 1;
    }
    g.normalize();
}

fn push_out(g: &mut Graph, scan: NodeId, log: &mut Log) {
    let node = g.node(scan).clone();
    let Op::Scan(op) = &node.op else {
        unreachable!()
    };
    let users = g.consumers();
    let reads = scan_outputs(g, scan, op.outputs.len());
    // Recurrent outputs whose whole trace the outer graph reads: their results are rows.
    let whole: Vec<usize> = op
        .recurrent_outputs()
        .map(|(k, _)| k)
        .filter(|&k| op.outputs[k].keep.is_none() && !reads[k].is_empty())
        .filter(|&k| last_rows_read(g, &users, &reads[k]).is_none())
        .collect();
    if whole.is_empty() {
        return;
    }
    let first_ns = op.first_non_sequence_step_input();
    let row_of = |id: NodeId| whole.iter().copied().find(|&k| op.step.outputs[k] == id);
    let src = lift::sources(&op.step, |id| {
        if row_of(id).is_some() {
            return Some(Source::Row(id));
        }
        match op.step.node(id).op {
            Op::Input { index, .. } if index >= first_ns => Some(Source::Invariant),
            Op::Input { .. } => Some(Source::Variant),
            _ => None,
        }
    });
    let label = scan_label(&node);
    let mut copied: HashMap<NodeId, NodeId> = HashMap::new();
    for (j, read) in reads.iter().enumerate() {
        let result = op.step.outputs[j];
        let Source::Row(row) = src[result.0] else {
            continue;
        };
        if op.outputs[j].is_recurrent()
            || read.is_empty()
            || row == result
            || !lift::worth_moving(&op.step.node(result).op)
        {
            continue;
        }
        let k = row_of(row).expect("rows are results of kept outputs");
        // The trace of output k, read by a new ScanOutput node.
        let trace_ty = op.step.ty(row).with_rank(op.step.ty(row).rank + 1);
        let mut leaf = |g: &mut Graph, id: NodeId| -> Option<NodeId> {
            if id == row {
                return Some(g.add(Node {
                    op: Op::ScanOutput { index: k },
                    inputs: vec![scan],
                    ty: trace_ty,
                    span: node.span,
                    label: output_label(op, k).trim_matches('`').to_string(),
                }));
            }
            match op.step.node(id).op {
                Op::Input { index, .. } if index >= first_ns => outer_input(op, &node.inputs, id),
                _ => None,
            }
        };
        let whole_value = lift::copy_whole(g, &op.step, &src, result, &mut leaf, &mut copied);
        let shaped = g.add(Node {
            op: Op::ZeroStepShape,
            inputs: vec![whole_value],
            ty: g.ty(whole_value),
            span: node.span,
            label: op.step.node(result).label.clone(),
        });
        for &r in read {
            g.replace_uses(r, shaped);
        }
        log.fired(format!(
            "{label}: output {j} ({}) is computed after the loop from the steps of {}",
            output_label(op, j),
            output_label(op, k)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, mat, Value};
    use super::super::Pass;

    const RNN: &str = "pub fn rnn(u: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, w_out: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
        let (h, y) = scan(|u_t, h, w, w_out| {
            let h_t = tanh(h.dot(w) + u_t);
            (h_t, h_t.dot(w_out))
        }, sequences = u, outputs_info = [h0, None], non_sequences = [w, w_out]);
        Ok((h, y))
    }";

    #[test]
    fn an_output_projection_moves_after_the_loop() {
        let (ir, fired) = apply(RNN, Pass::PushOutOutput);
        assert_eq!(
            fired,
            ["push_out_output: scan of `tanh(h.dot(w) + u_t)`, ..: output 1 (`h_t.dot(w_out)`) is computed after the loop from the steps of `h0`"]
        );
        assert!(ir.contains("zero_step_shape"), "{ir}");
        for t in [0, 1, 2, 5] {
            assert_same_results(
                RNN,
                "rnn",
                &[
                    mat(t, 3, 0.1),
                    Value::from(ndarray::arr1(&[0.1, -0.2, 0.3])),
                    mat(3, 3, 0.2),
                    mat(3, 2, 0.3),
                ],
            );
        }
    }

    #[test]
    fn not_when_the_trace_would_otherwise_not_be_kept() {
        // Only h[-1] is read: keeping every h to compute y after the loop would cost memory.
        let src = RNN.replace("Ok((h, y))", "Ok((h[-1..], y))");
        let (_, fired) = apply(&src, Pass::PushOutOutput);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn not_when_the_output_reads_a_sequence_or_a_tap() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (s, a, b) = scan(|u_t, s| (s + u_t, (s + u_t) * u_t, s * 2.0), sequences = u, outputs_info = [0.0, None, None]);
            Ok((s, a, b))
        }";
        let (_, fired) = apply(src, Pass::PushOutOutput);
        assert!(fired.is_empty(), "{fired:?}");
    }
}
