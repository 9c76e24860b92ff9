//! Push-out of sequence work: a step node that depends on one tap of one sequence (and on
//! non-sequences and constants) computes, at step t, a function of that sequence's row
//! alone, so it can run for all rows at once before the loop, and the step reads the
//! result as a new sequence with the same taps (PyTensor's `scan_push_out_seq`). The
//! input projection of an RNN, `x_t.dot(w_in)` with x_t of shape [B, I], becomes one
//! [T*B, I] x [I, H] product; elementwise work on a sequence becomes one pass over it.
//!
//! Moved: elementwise operations, casts and dots with the sequence-derived operand on the
//! left and a non-sequence on the right, whose whole-sequence form is the same operation
//! with one more leading axis (for elementwise operations: every sequence-derived operand
//! has the result's rank, so broadcasting against non-sequences still aligns).
//!
//! Scalar rows are moved only for work that costs more than the memory it would cost: a
//! transcendental function (`exp`, `log`, `tanh`, `sigmoid`, `pow`), which runs vectorized
//! over the whole sequence. Cheap scalar work (a cast, an add) costs one instruction in the
//! loop; moved, it would cost a store and a load per step and an array of the sequence's
//! length (the polynomial's `f64(c_t)` became an 8 MB array).
//!
//! Never moved: anything reading an output tap; nodes combining two taps or two sequences
//! (their rows would have to be aligned first); indexing, reductions and transposes of a
//! row (their whole-sequence form is a different operation). The moved work runs over
//! every row of the sequence, also rows a shorter `n_steps` or an early `until` would not
//! reach, and also when the loop runs no step (an error in it, a size mismatch, is then
//! reported too, as for push-out of non-sequences). The emitter may compute a moved
//! product by chunks of steps inside the loop instead (`emit::scan::chunkable_sequences`),
//! its shapes still checked before the loop.

use std::collections::HashMap;

use super::edit::{add_sequence, outer_input};
use super::lift::{self, Source};
use super::{each_scan, Log};
use crate::ir::{Graph, NodeId, Op, ScanOp};

pub fn run(g: &mut Graph, log: &mut Log) {
    each_scan(g, |g, op, inputs, label| {
        for text in arange_as_index(g, op, inputs) {
            log.fired(format!(
                "{label}: sequence `{text}` is read as the loop index: no array is made"
            ));
        }
        for (text, what) in push_out(g, op, inputs) {
            log.fired(format!("{label}: `{text}` {what} before the loop"));
        }
    });
    g.normalize();
}

/// Sequences that are `arange(n)` of the outer graph become the loop index: the scan
/// takes `n` instead of the array (`Sequence::arange`). Returns their labels.
fn arange_as_index(g: &Graph, op: &mut ScanOp, scan_inputs: &mut [NodeId]) -> Vec<String> {
    let mut changed = Vec::new();
    for (i, seq) in op.sequences.iter_mut().enumerate() {
        let outer = g.node(scan_inputs[i]);
        if !seq.arange && matches!(outer.op, Op::Arange) {
            seq.arange = true;
            scan_inputs[i] = outer.inputs[0];
            changed.push(seq.label.clone());
        }
    }
    changed
}

/// Sources of the step's nodes: sequence taps (but not the loop index, cheaper in the
/// loop than any array made of it) are rows, non-sequences invariant.
pub(super) fn sources(op: &ScanOp) -> Vec<Source> {
    let seq_taps = op.first_output_tap_input(0);
    let first_ns = op.first_non_sequence_step_input();
    lift::sources(&op.step, |id| match op.step.node(id).op {
        Op::Input { index, .. } if index < seq_taps && !reads_arange(op, index) => {
            Some(Source::Row(id))
        }
        Op::Input { index, .. } if index >= first_ns => Some(Source::Invariant),
        Op::Input { .. } => Some(Source::Variant),
        _ => None,
    })
}

/// Whether step input `index` (a sequence tap) reads a sequence that is the loop index.
fn reads_arange(op: &ScanOp, index: usize) -> bool {
    (0..op.sequences.len())
        .rev()
        .find(|&s| op.first_sequence_tap_input(s) <= index)
        .is_some_and(|s| op.sequences[s].arange)
}

/// Whether the row work ending at `id` calls a transcendental function (worth a pass over
/// the whole sequence even for scalar rows).
fn costly(step: &Graph, src: &[Source], id: NodeId) -> bool {
    let node = step.node(id);
    if !matches!(src[id.0], Source::Row(_)) {
        return false;
    }
    let own = matches!(node.op, Op::Elemwise(op) if op.is_transcendental());
    own || node.inputs.iter().any(|&i| costly(step, src, i))
}

/// Whether the row work ending at `id` is better left in the step: an array computed by
/// elementwise operations alone (no product) from a sequence read at one tap, and read only
/// by elementwise operations of the step (not a step result). Fusion then computes it in
/// the pass that reads it, for the same work and no memory; moved out, it would cost an
/// array of the whole sequence, a pass writing it and the step's reads of it (the
/// backward loop of a gradient reads `1 - h^2` of the stored states this way).
fn fuses_in_step(op: &ScanOp, src: &[Source], users: &[Vec<NodeId>], id: NodeId) -> bool {
    fn has_product(step: &Graph, src: &[Source], id: NodeId) -> bool {
        let node = step.node(id);
        matches!(node.op, Op::Dot)
            || node
                .inputs
                .iter()
                .any(|&i| src[i.0] == src[id.0] && has_product(step, src, i))
    }
    let step = &op.step;
    let Source::Row(input) = src[id.0] else {
        return false;
    };
    let one_tap = (0..op.sequences.len()).any(|s| {
        let first = op.first_sequence_tap_input(s);
        op.sequences[s].taps.len() == 1 && step.inputs.get(first) == Some(&input)
    });
    // A fused chain too: fusion runs after this pass, and a second round sees its nodes.
    let elementwise =
        |n: NodeId| matches!(step.node(n).op, Op::Elemwise(_) | Op::Cast | Op::Fused(_));
    one_tap
        && step.ty(id).rank > 0
        && !has_product(step, src, id)
        && !step.outputs.contains(&id)
        && !users[id.0].is_empty()
        && users[id.0].iter().all(|&u| elementwise(u))
}

/// Moves the sequence work of `op`'s step into `g`; returns (label, what) of each move.
fn push_out(
    g: &mut Graph,
    op: &mut ScanOp,
    scan_inputs: &mut Vec<NodeId>,
) -> Vec<(String, String)> {
    let src = sources(op);
    let users = op.step.consumers();
    let roots: Vec<NodeId> = (0..op.step.nodes.len())
        .filter(|&i| matches!(src[i], Source::Row(_)) && lift::worth_moving(&op.step.nodes[i].op))
        .filter(|&i| op.step.nodes[i].ty.rank > 0 || costly(&op.step, &src, NodeId(i)))
        .filter(|&i| {
            users[i].iter().any(|u| src[u.0] != src[i]) || op.step.outputs.contains(&NodeId(i))
        })
        .map(NodeId)
        .filter(|&i| !fuses_in_step(op, &src, &users, i))
        .collect();
    if roots.is_empty() {
        return Vec::new();
    }
    // Which sequence, and which of its taps, each sequence step input is.
    let mut tap_of: HashMap<NodeId, (usize, usize)> = HashMap::new();
    for (s, seq) in op.sequences.iter().enumerate() {
        let first = op.first_sequence_tap_input(s);
        for k in 0..seq.taps.len() {
            tap_of.insert(op.step.inputs[first + k], (s, k));
        }
    }
    let mut copied: HashMap<NodeId, NodeId> = HashMap::new();
    let mut moved = Vec::new();
    for root in roots {
        let Source::Row(input) = src[root.0] else {
            unreachable!()
        };
        let (s, k) = tap_of[&input];
        let outer = {
            let inputs: &[NodeId] = scan_inputs;
            let mut leaf = |_: &mut Graph, id: NodeId| outer_input(op, inputs, id);
            lift::copy_whole(g, &op.step, &src, root, &mut leaf, &mut copied)
        };
        let node = op.step.node(root).clone();
        let taps = op.sequences[s].taps.clone();
        let new_inputs = add_sequence(
            op,
            scan_inputs,
            outer,
            &taps,
            node.ty,
            &node.label,
            node.span,
        );
        op.step.replace_uses(root, new_inputs[k]);
        let what = match &node.op {
            Op::Dot => {
                let a = g.ty(g.node(outer).inputs[0]);
                let b = g.ty(g.node(outer).inputs[1]);
                format!(
                    "becomes one product of a rank-{} by a rank-{} array over all steps,",
                    a.rank, b.rank
                )
            }
            _ => "is computed for all steps in one pass".to_string(),
        };
        moved.push((node.label, what));
    }
    op.step.normalize();
    moved
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, apply_passes, assert_same_results, mat, vec1, Value};
    use super::super::Pass;

    fn cube(t: usize, b: usize, k: usize) -> Value {
        Value::from(ndarray::Array3::from_shape_fn((t, b, k), |(i, j, l)| {
            ((i * 31 + j * 7 + l) as f64 * 0.13).cos()
        }))
    }

    const ELMAN: &str = "pub fn elman(x: ArrayView3<f64>, h0: ArrayView2<f64>, w_in: ArrayView2<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array3<f64>> {
        let h = scan(|x_t, h, w_in, w, b| tanh(x_t.dot(w_in) + h.dot(w) + b), sequences = x, outputs_info = h0, non_sequences = [w_in, w, b]);
        Ok(h)
    }";

    #[test]
    fn the_input_projection_becomes_one_product() {
        let (ir, fired) = apply(ELMAN, Pass::PushOutSeq);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("`x_t.dot(w_in)` becomes one product of a rank-3 by a rank-2 array over all steps, before the loop"),
            "{fired:?}"
        );
        assert!(
            ir.contains("= dot(%0, %2) : 3-d array of f64") || ir.contains("dot(%0, %2)"),
            "{ir}"
        );
        for t in [0, 1, 2, 5] {
            assert_same_results(
                ELMAN,
                "elman",
                &[
                    cube(t, 3, 4),
                    mat(3, 5, 0.1),
                    mat(4, 5, 0.2),
                    mat(5, 5, 0.3),
                    vec1(&[0.1, -0.2, 0.3, 0.0, 0.5]),
                ],
            );
        }
    }

    #[test]
    fn elementwise_work_on_a_tap_moves_with_its_window_cheap_scalar_work_stays() {
        // Two taps of u, scalar rows: the exponential moves as its own sequence with u's
        // window; the product by 2 costs less in the loop than an array of it would.
        let src = "pub fn f(u: ArrayView1<f64>, a: f64) -> Result<Array1<f64>> {
            let y = scan(|u_tm2, u_t, y, a| y * 0.5 + exp(u_t * a) - u_tm2 * 2.0, sequences = taps(u, [-2, 0]), outputs_info = 0.0, non_sequences = a, go_backwards = true);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::PushOutSeq);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("`exp(u_t * a)` is computed for all steps"),
            "{fired:?}"
        );
        // Vector rows read only by elementwise work of the step: they stay, and fusion
        // computes them in the step's one pass (moved, they would cost an array of the
        // sequence and a pass writing it, for the same arithmetic).
        let rows = "pub fn f(u: ArrayView2<f64>, y0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let y = scan(|u_t, y| y * 0.5 - u_t * 2.0, sequences = u, outputs_info = y0);
            Ok(y)
        }";
        let (_, fired) = apply(rows, Pass::PushOutSeq);
        assert!(fired.is_empty(), "{fired:?}");
        // A step result has no pass to join: it moves (a map output of the sequence).
        let result = "pub fn f(u: ArrayView2<f64>, y0: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let (y, z) = scan(|u_t, y| (y * 0.5, u_t * 2.0), sequences = u, outputs_info = [y0, None]);
            Ok((y, z))
        }";
        let (_, fired) = apply(result, Pass::PushOutSeq);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("`u_t * 2.0` is computed for all steps"),
            "{fired:?}"
        );
        for t in [0usize, 1, 4] {
            assert_same_results(rows, "f", &[mat(t, 3, 0.5), vec1(&[0.1, -0.2, 0.3])]);
            assert_same_results(result, "f", &[mat(t, 3, 0.5), vec1(&[0.1, -0.2, 0.3])]);
        }
        for n in [0usize, 1, 2, 3, 4, 9] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 1.0).collect();
            assert_same_results(src, "f", &[vec1(&u), Value::from(0.7)]);
        }
    }

    /// A row read by two fused chains of the step (a gradient's `tanh(c_t)` read back
    /// from c's trace) stays after fusion too: the passes run in rounds, and the second
    /// round's push-out sees `Fused` readers.
    #[test]
    fn a_row_read_by_fused_chains_stays() {
        let src = "pub fn f(u: ArrayView2<f64>, y0: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let (y, z) = scan(|u_t, y, z| { let e = tanh(u_t); (y * e + 1.0, z - e * 3.0) }, sequences = u, outputs_info = [y0, y0]);
            Ok((y, z))
        }";
        let (ir, fired) = apply_passes(src, &[Pass::Fusion, Pass::PushOutSeq]);
        assert!(fired.iter().any(|f| f.starts_with("fusion")), "{fired:?}");
        assert!(
            !fired.iter().any(|f| f.starts_with("push_out_seq")),
            "{fired:?}"
        );
        assert!(ir.contains("fused"), "{ir}");
        for t in [0usize, 1, 4] {
            assert_same_results(src, "f", &[mat(t, 3, 0.5), vec1(&[0.1, -0.2, 0.3])]);
        }
    }

    #[test]
    fn an_arange_sequence_becomes_the_loop_index() {
        let src = "pub fn f(n: i64, c: ArrayView1<f64>, x: f64) -> Result<(Array1<i64>, f64)> {
            let s = scan(|i, acc| acc + i, sequences = arange(n), outputs_info = 0i64);
            let p = scan(|c_t, k, x| c_t * pow(x, k), sequences = [c, arange(10)], non_sequences = x, go_backwards = true);
            Ok((s, p.sum()))
        }";
        let (ir, fired) = apply(src, Pass::PushOutSeq);
        assert!(
            fired
                .iter()
                .any(|f| f.contains("sequence `arange(n)` is read as the loop index")),
            "{fired:?}"
        );
        assert!(
            fired.iter().any(|f| f.contains("sequence `arange(10)`")),
            "{fired:?}"
        );
        assert!(!ir.contains("= arange("), "{ir}");
        assert!(ir.contains("arange(n) (loop index) taps=[0]"), "{ir}");
        for n in [-3i64, 0, 1, 2, 7] {
            let c: Vec<f64> = (0..n.max(0) + 3).map(|i| i as f64 * 0.5 - 1.0).collect();
            assert_same_results(src, "f", &[Value::from(n), vec1(&c), Value::from(0.9)]);
        }
    }

    #[test]
    fn work_reading_an_output_or_two_rows_stays() {
        let src = "pub fn f(u: ArrayView1<f64>, v: ArrayView1<f64>) -> Result<Array1<f64>> {
            let y = scan(|u_t, v_t, y| y * u_t + u_t * v_t, sequences = [u, v], outputs_info = 0.0);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::PushOutSeq);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn a_row_broadcast_against_a_bigger_non_sequence_stays() {
        // u_t is a scalar, w a vector: over the whole sequence the axes would not align.
        let src = "pub fn f(u: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<Array2<f64>> {
            let y = scan(|u_t, w| u_t * w, sequences = u, non_sequences = w);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::PushOutSeq);
        assert!(fired.is_empty(), "{fired:?}");
        assert_same_results(src, "f", &[vec1(&[1.0, 2.0]), vec1(&[0.5, 0.25, 3.0])]);
    }
}
