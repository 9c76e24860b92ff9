//! Push-out of a dot: a recurrent output that accumulates a product,
//! `acc_t = acc_{t-1} + dot(a_t, w)`, of which only the last step is read, is
//! `acc_0 + dot(a_0 + a_1 + .., w)`: the loop sums the rows `a_t` (one addition per
//! element) and one product after the loop replaces one per step. The initial value is
//! kept (PyTensor's `scan_pushout_dot1` drops it).
//!
//! Applies when the output has the single tap -1, the outer graph reads only its last row
//! (`acc[-1]`), its step result is `acc + dot(a, w)` (either order) with `a` a vector or
//! matrix that reads no output tap, `w` a matrix non-sequence, the tap read only there and
//! the product used only there. The output then carries the sum of the `a_t` (initial
//! value zeros shaped like `a`, made from `acc_0` and `w` so that no row is read), keeps one
//! row, and the outer graph computes `acc_0 + dot(sum[-1..], w)`: with no step that is no
//! row, and `acc[-1]` is the same error as before.
//!
//! The sum runs in a different order from the loop's, so float results may differ in the
//! last bits (integers wrap and agree exactly): the only pass that reassociates, checked
//! by `eval::rewrites_agree` within the evaluator's tolerance instead of bit for bit.

use super::edit::{depends_on, outer_input, scan_outputs};
use super::save_mem::last_rows_read;
use super::{output_label, scan_label, Log};
use crate::ir::{DType, ElemOp, Graph, Literal, Node, NodeId, Op, Type};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    for i in 0..g.nodes.len() {
        if !matches!(g.nodes[i].op, Op::Scan(_)) {
            continue;
        }
        let mut j = 0;
        while let Op::Scan(op) = &g.nodes[i].op {
            if j >= op.outputs.len() {
                break;
            }
            if let Some(found) = accumulated_product(g, NodeId(i), j) {
                let label = scan_label(&g.nodes[i]);
                let what = push_out(g, NodeId(i), j, found);
                log.fired(format!("{label}: {what}"));
            }
            j += 1;
        }
    }
    g.normalize();
}

/// The step nodes of `acc + dot(a, w)`.
#[derive(Clone, Copy)]
struct Accumulation {
    tap: NodeId,
    sum: NodeId,
    a: NodeId,
    /// The outer node of the non-sequence `w`.
    w_outer: NodeId,
}

/// Whether output `j` of `scan` accumulates a product the pass can move, and its parts.
fn accumulated_product(g: &Graph, scan: NodeId, j: usize) -> Option<Accumulation> {
    let Op::Scan(op) = &g.node(scan).op else {
        return None;
    };
    if op.outputs[j].taps != [-1] || op.outputs[j].keep.is_some() {
        return None;
    }
    let users = g.consumers();
    let reads = scan_outputs(g, scan, op.outputs.len());
    if reads[j].is_empty() || last_rows_read(g, &users, &reads[j])?.0 != 1 {
        return None;
    }
    let step = &op.step;
    let tap = step.inputs[op.first_output_tap_input(j)];
    let sum = step.outputs[j];
    let node = step.node(sum);
    if !matches!(node.op, Op::Elemwise(ElemOp::Add)) {
        return None;
    }
    let product = match node.inputs[..] {
        [x, p] if x == tap && p != tap => p,
        [p, x] if x == tap && p != tap => p,
        _ => return None,
    };
    let step_users = step.consumers();
    let only_here = |id: NodeId| step_users[id.0] == [sum] && !step.outputs[..].contains(&id);
    let counted_in_outputs = step.outputs.iter().filter(|&&o| o == sum).count();
    if !only_here(tap) || !only_here(product) || counted_in_outputs != 1 {
        return None;
    }
    let p = step.node(product);
    if !matches!(p.op, Op::Dot) || p.ty != node.ty || step.ty(tap) != node.ty {
        return None;
    }
    let (a, w) = (p.inputs[0], p.inputs[1]);
    let first_ns = op.first_non_sequence_step_input();
    if !matches!(step.node(w).op, Op::Input { index, .. } if index >= first_ns) {
        return None;
    }
    let w_outer = outer_input(op, &g.node(scan).inputs, w)?;
    let out_taps: Vec<NodeId> = step.inputs[op.first_output_tap_input(0)..first_ns].to_vec();
    let a_rank = step.ty(a).rank;
    let fits = (1..=2).contains(&a_rank)
        && step.ty(w).rank == 2
        && !matches!(node.ty.dtype, DType::Bool)
        && !depends_on(step, a, &out_taps);
    fits.then_some(Accumulation {
        tap,
        sum,
        a,
        w_outer,
    })
}

/// Rewrites output `j` to sum the `a_t` and the outer graph to apply the product once.
/// Returns the log line.
fn push_out(g: &mut Graph, scan: NodeId, j: usize, found: Accumulation) -> String {
    let Accumulation {
        tap,
        sum,
        a,
        w_outer,
    } = found;
    let scan_node = g.node(scan).clone();
    let Op::Scan(op) = &scan_node.op else {
        unreachable!()
    };
    let init_pos = op
        .init_input(j)
        .expect("a recurrent output has an initial state");
    let init = scan_node.inputs[init_pos];
    let acc_ty = g.ty(init);
    let a_ty = op.step.ty(a);
    let text = output_label(op, j);
    let a_text = op.step.node(a).label.clone();
    let span = scan_node.span;
    let node = |op: Op, inputs: Vec<NodeId>, ty: Type, label: &str| Node {
        op,
        inputs,
        ty,
        span,
        label: label.to_string(),
    };

    // Zeros shaped like `a`: [K] from w [K, N] · acc_0 [N], [M, K] from acc_0 [M, N] · w'.
    let shaped = if a_ty.rank == 1 {
        g.add(node(Op::Dot, vec![w_outer, init], a_ty, &a_text))
    } else {
        let wt = g.add(node(Op::Transpose, vec![w_outer], g.ty(w_outer), &a_text));
        g.add(node(Op::Dot, vec![init, wt], a_ty, &a_text))
    };
    let zero = match a_ty.dtype {
        DType::F32 | DType::F64 => Literal::Float(0.0),
        _ => Literal::Int(0),
    };
    let sum_init = g.add(node(
        Op::FillLike { value: zero },
        vec![shaped],
        a_ty,
        &a_text,
    ));

    // After the loop: acc_0 + dot(sums, w), over the at most one row kept.
    let old_reads = scan_outputs(g, scan, op.outputs.len())[j].clone();
    let stacked = acc_ty.with_rank(acc_ty.rank + 1);
    let sums = g.add(node(
        Op::ScanOutput { index: j },
        vec![scan],
        a_ty.with_rank(a_ty.rank + 1),
        &a_text,
    ));
    let product = g.add(node(Op::Dot, vec![sums, w_outer], stacked, &text));
    let total = g.add(node(
        Op::Elemwise(ElemOp::Add),
        vec![init, product],
        stacked,
        &text,
    ));
    for r in old_reads {
        g.replace_uses(r, total);
    }

    // The loop: the output now carries sum_t a_t.
    let scan_node = &mut g.nodes[scan.0];
    scan_node.inputs[init_pos] = sum_init;
    let Op::Scan(op) = &mut scan_node.op else {
        unreachable!()
    };
    op.outputs[j].keep = Some(1);
    op.outputs[j].label = format!("zeros for the sum of `{a_text}`");
    let step = &mut op.step;
    step.nodes[tap.0].ty = a_ty;
    let add = &mut step.nodes[sum.0];
    add.ty = a_ty;
    for input in &mut add.inputs {
        if *input != tap {
            *input = a;
        }
    }
    step.normalize();
    format!(
        "output {j} ({text}) sums `{a_text}` over the steps; one product after the loop \
         (only its last step is read)"
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, mat, vec1, Value};
    use super::super::Pass;

    const READOUT: &str = "pub fn readout(x: ArrayView2<f64>, w: ArrayView2<f64>, acc0: ArrayView1<f64>) -> Result<Array1<f64>> {
        let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
        Ok(acc[-1])
    }";

    #[test]
    fn an_accumulated_product_becomes_one_product_after_the_loop() {
        let (ir, fired) = apply(READOUT, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "output 0 (`acc0`) sums `x_t` over the steps; one product after the loop"
            ),
            "{fired:?}"
        );
        // No product is left in the step.
        let step_lines = ir.lines().filter(|l| l.starts_with("    "));
        assert!(step_lines.clone().count() > 0, "{ir}");
        assert!(step_lines.clone().all(|l| !l.contains("dot(")), "{ir}");
        assert!(ir.contains("add(%2, %8)"), "acc0 + the product: {ir}");
        for t in [0, 1, 2, 7] {
            assert_same_results(
                READOUT,
                "readout",
                &[
                    mat(t, 3, 0.1),
                    mat(3, 4, 0.2),
                    vec1(&[1.0, -2.0, 0.5, 0.25]),
                ],
            );
        }
    }

    #[test]
    fn a_matrix_accumulator_and_the_product_first() {
        let src = "pub fn f(x: ArrayView3<f64>, w: ArrayView2<f64>, acc0: ArrayView2<f64>) -> Result<Array2<f64>> {
            let acc = scan(|x_t, acc, w| x_t.dot(w) + acc, sequences = x, outputs_info = acc0, non_sequences = w);
            Ok(acc[-1])
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let cube = |t: usize| {
            Value::from(ndarray::Array3::from_shape_fn((t, 2, 3), |(a, b, c)| {
                (a as f64 - b as f64 * 0.5 + c as f64 * 0.25).cos()
            }))
        };
        for t in [0, 1, 2, 5] {
            assert_same_results(src, "f", &[cube(t), mat(3, 4, 0.3), mat(2, 4, 0.4)]);
        }
    }

    #[test]
    fn not_when_more_than_the_last_step_is_read_or_the_sum_feeds_back() {
        let whole = READOUT
            .replace("Result<Array1<f64>>", "Result<Array2<f64>>")
            .replace("Ok(acc[-1])", "Ok(acc)");
        let two_rows = READOUT
            .replace("Result<Array1<f64>>", "Result<Array2<f64>>")
            .replace("Ok(acc[-1])", "Ok(acc[-2..])");
        // The product reads the accumulator: not a sum of independent terms.
        let feedback = READOUT.replace("acc + x_t.dot(w)", "acc + acc.dot(w)");
        // The tap is read elsewhere in the step.
        let scaled = READOUT.replace("acc + x_t.dot(w)", "acc * 0.5 + x_t.dot(w)");
        // A sequence on the right: the product is not of a non-sequence.
        let seq_right = "pub fn f(x: ArrayView1<f64>, w: ArrayView3<f64>, acc0: ArrayView1<f64>) -> Result<Array1<f64>> {
            let acc = scan(|w_t, acc, x| acc + x.dot(w_t), sequences = w, outputs_info = acc0, non_sequences = x);
            Ok(acc[-1])
        }";
        for src in [
            &whole,
            &two_rows,
            &feedback,
            &scaled,
            &seq_right.to_string(),
        ] {
            let (_, fired) = apply(src, Pass::PushOutDot);
            assert!(fired.is_empty(), "{src}: {fired:?}");
        }
    }

    #[test]
    fn integer_accumulators_agree_exactly() {
        let src = "pub fn f(x: ArrayView2<i64>, w: ArrayView2<i64>, acc0: ArrayView1<i64>) -> Result<Array1<i64>> {
            let acc = scan(|x_t, acc, w| acc + x_t.dot(w), sequences = x, outputs_info = acc0, non_sequences = w);
            Ok(acc[-1])
        }";
        let (_, fired) = apply(src, Pass::PushOutDot);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let ints = |r: usize, c: usize| {
            Value::from(ndarray::Array2::from_shape_fn((r, c), |(i, j)| {
                (i as i64 * 7 - j as i64 * 3) * 1_000_000_007
            }))
        };
        let acc0 = Value::from(ndarray::Array1::from(vec![i64::MAX, -5, 3]));
        assert_same_results(src, "f", &[ints(6, 2), ints(2, 3), acc0]);
    }
}
