//! Running sum: a map (NITSOT) output of scalars that the outer graph reads only through
//! its total, `sum(components)`, becomes a recurrent output carrying that total,
//! `total_t = total_{t-1} + c_t` from 0, of which only the last value is kept: the loop
//! keeps a scalar in a register instead of a trace of every step, and no pass over the
//! trace follows (the scan tutorial's polynomial: a million terms, no array).
//!
//! Applies when every read of the output is `sum` over all its elements (or along axis 0,
//! the same for a vector), and the output's values are numbers. The outer graph then sums
//! the at most one row kept: the total, or 0 when no step ran, as the sum of no rows.
//!
//! The loop adds in step order, where `sum` of an array may add in another order (runtime
//! and evaluator use ndarray's unrolled sum): float totals may differ in the last bits,
//! integers agree exactly, so `eval::rewrites_agree` compares within its tolerance.

use super::edit::scan_outputs;
use super::{output_label, scan_label, Log};
use crate::ir::{DType, ElemOp, Graph, Literal, NodeId, Op, ReduceOp};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    for i in 0..g.nodes.len() {
        let Op::Scan(op) = &g.nodes[i].op else {
            continue;
        };
        let reads = scan_outputs(g, NodeId(i), op.outputs.len());
        let users = g.consumers();
        let totals: Vec<usize> = (0..op.outputs.len())
            .filter(|&j| {
                let row = op.step.ty(op.step.outputs[j]);
                !op.outputs[j].is_recurrent()
                    && row.rank == 0
                    && row.dtype != DType::Bool
                    && !reads[j].is_empty()
                    && reads[j].iter().all(|&r| {
                        !g.outputs.contains(&r)
                            && !users[r.0].is_empty()
                            && users[r.0].iter().all(|&u| is_total(g, u))
                    })
            })
            .collect();
        for j in totals {
            let label = scan_label(&g.nodes[i]);
            let text = carry_total(g, NodeId(i), j);
            log.fired(format!(
                "{label}: output {j} ({text}) is only summed: a running total, no trace"
            ));
        }
    }
    g.normalize();
}

/// Whether outer node `u` sums all of a vector.
fn is_total(g: &Graph, u: NodeId) -> bool {
    matches!(
        g.node(u).op,
        Op::Reduce {
            op: ReduceOp::Sum,
            axis: None | Some(0)
        }
    )
}

/// Turns map output `j` of `scan` into a running total from 0; returns its label.
fn carry_total(g: &mut Graph, scan: NodeId, j: usize) -> String {
    let Op::Scan(op) = &g.node(scan).op else {
        unreachable!()
    };
    let text = output_label(op, j);
    let value = op.step.outputs[j];
    let ty = op.step.ty(value);
    let span = op.step.node(value).span;
    let zero = Literal::zero(ty.dtype);
    // Initial states follow the sequences, in output order.
    let init_pos = op.sequences.len() + op.outputs[..j].iter().filter(|o| o.is_recurrent()).count();
    let tap_pos = op.first_output_tap_input(j);
    let init = g.add_const(zero, ty.dtype, span, "0");

    let node = &mut g.nodes[scan.0];
    node.inputs.insert(init_pos, init);
    let Op::Scan(op) = &mut node.op else {
        unreachable!()
    };
    op.outputs[j].taps = vec![-1];
    op.outputs[j].keep = Some(1);
    op.outputs[j].total = true;
    op.outputs[j].label = format!("0 (the running total of {text})");
    let tap = super::edit::insert_step_input(&mut op.step, tap_pos, "total", ty, span);
    let label = format!("total + {}", op.step.node(value).label);
    let sum = op.step.add(crate::ir::Node {
        op: Op::Elemwise(ElemOp::Add),
        inputs: vec![tap, value],
        ty,
        span,
        label,
    });
    op.step.outputs[j] = sum;
    op.step.normalize();
    text
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, coefficients, Value, POLYNOMIAL};
    use super::super::Pass;

    #[test]
    fn a_summed_map_output_becomes_a_running_total() {
        let (ir, fired) = apply(POLYNOMIAL, Pass::RunningSum);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("is only summed: a running total, no trace"),
            "{fired:?}"
        );
        assert!(ir.contains("Sitsot taps=[-1] keep=1"), "{ir}");
        for n in [0, 1, 2, 5, 40] {
            let args = [coefficients(n), Value::from(0.9), Value::from(n as i64)];
            assert_same_results(POLYNOMIAL, "polynomial", &args);
        }
    }

    #[test]
    fn integers_and_a_sum_along_axis_zero() {
        let src = "pub fn f(u: ArrayView1<i64>) -> Result<i64> {
            let squares = scan(|u_t| u_t * u_t, sequences = u);
            Ok(sum(squares, 0))
        }";
        let (_, fired) = apply(src, Pass::RunningSum);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let u = Value::from(ndarray::Array1::from(vec![3i64, -4, i64::MAX, 7]));
        assert_same_results(src, "f", &[u]);
    }

    #[test]
    fn not_when_the_trace_is_read_otherwise_or_rows_are_arrays() {
        let both = POLYNOMIAL
            .replace("Result<f64>", "Result<(f64, Array1<f64>)>")
            .replace("Ok(components.sum())", "Ok((components.sum(), components))");
        let last = POLYNOMIAL.replace(
            "Ok(components.sum())",
            "Ok(components.sum() + components[-1])",
        );
        let mean = POLYNOMIAL.replace("components.sum()", "components.mean()");
        let rows = "pub fn f(u: ArrayView2<f64>) -> Result<f64> {
            let r = scan(|u_t| u_t * 2.0, sequences = u);
            Ok(r.sum())
        }";
        for src in [both.as_str(), last.as_str(), mean.as_str(), rows] {
            let (_, fired) = apply(src, Pass::RunningSum);
            assert!(fired.is_empty(), "{src}: {fired:?}");
        }
    }
}
