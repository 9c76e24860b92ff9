//! Sum lanes: a scan whose every output is a running total standing in for `sum` (made by
//! running-sum) runs `kernels::lanes::LANES` steps at once (`ScanOp::lanes`): step
//! `t + l` in lane `l`, each total kept as one partial sum per lane, the lanes added in a
//! fixed order after the loop, the steps left over (fewer than a group) run one by one.
//! A total is one dependent add per step (4 cycles a step in the ordinary loop); in lanes
//! the steps are independent and the step's scalar work becomes SIMD work. A `pow` whose
//! exponent is the loop index is carried per lane (`kernels::lanes::LanePowers`). The
//! scan tutorial's polynomial is this loop.
//!
//! It applies when all of these hold (each has a "must not" test below):
//! - every output is a total (`Output::total`): its additions may be reordered because
//!   `sum`'s may; a recurrence the user wrote as `acc + x` is theirs, in their order;
//! - the step's result for each total is `total + addend` where the total's tap is read
//!   by that add alone and no addend depends on any total (each lane's sum is its own);
//! - every value of the step is a scalar computed by `Input`, `Const`, `Elemwise` or
//!   `Cast` (no arrays, nested scans or reductions: those are not one lane's work);
//! - there is no `until` (a group of steps would run past the one that stops).
//!
//! Float totals differ from the step-order sum in the last bits (as any reordering of a
//! sum does); integer totals are the same (wrapping addition is associative).

use super::{scan_label, Log};
use crate::ir::{ElemOp, Graph, NodeId, Op, ScanOp};

pub fn run(g: &mut Graph, log: &mut Log) {
    for node in &mut g.nodes {
        let label = scan_label(node);
        let Op::Scan(op) = &mut node.op else { continue };
        match eligible(op) {
            Ok(()) if !op.lanes => {
                op.lanes = true;
                let n = op.outputs.len();
                let s = if n == 1 { "" } else { "s" };
                log.fired(format!(
                    "{label}: {n} running total{s} of independent steps: steps run in lanes, partial sums added after the loop"
                ));
            }
            // An earlier round's decision that no longer holds (never expected: the other
            // passes only remove or move work).
            Err(why) if op.lanes => {
                op.lanes = false;
                log.fired(format!("{label}: one step at a time again ({why})"));
            }
            _ => {}
        }
    }
}

/// `Ok` when `op` may run its steps in lanes, else why not.
pub fn eligible(op: &ScanOp) -> Result<(), String> {
    let step = &op.step;
    if op.has_until {
        return Err("`until` stops at one step".to_string());
    }
    if op.backwards_flag {
        return Err("the direction is chosen at run time".to_string());
    }
    if op.outputs.is_empty() {
        return Err("no output".to_string());
    }
    if let Some(o) = op.outputs.iter().find(|o| !o.total) {
        return Err(format!("output {} is not a running total", o.label));
    }
    if let Some(node) = step.nodes.iter().find(|n| {
        n.ty.rank != 0
            || !matches!(
                n.op,
                Op::Input { .. } | Op::Const(_) | Op::Elemwise(_) | Op::Cast
            )
    }) {
        return Err(format!("`{}` is not scalar elementwise work", node.label));
    }
    let users = step.consumers();
    let taps: Vec<NodeId> = (0..op.outputs.len())
        .map(|j| step.inputs[op.first_output_tap_input(j)])
        .collect();
    for (j, &tap) in taps.iter().enumerate() {
        let result = step.outputs[j];
        let addend = match (&step.node(result).op, step.node(result).inputs.as_slice()) {
            (Op::Elemwise(ElemOp::Add), &[a, b]) if a == tap => b,
            (Op::Elemwise(ElemOp::Add), &[a, b]) if b == tap => a,
            _ => return Err(format!("output {j} is not `total + addend`")),
        };
        if users[tap.0] != [result] {
            return Err(format!("total {j} is read by more than its add"));
        }
        if taps.iter().any(|&t| depends_on(step, addend, t)) {
            return Err(format!("the addend of output {j} reads a total"));
        }
    }
    Ok(())
}

/// Whether step value `id` is computed from `input`.
fn depends_on(g: &Graph, id: NodeId, input: NodeId) -> bool {
    id == input || g.node(id).inputs.iter().any(|&i| depends_on(g, i, input))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{
        apply_passes, assert_same_results, coefficients, Value, POLYNOMIAL,
    };
    use super::super::Pass;

    /// Sum lanes needs the totals running-sum makes.
    const LANES: [Pass; 2] = [Pass::RunningSum, Pass::SumLanes];

    #[test]
    fn the_polynomial_runs_in_lanes() {
        let (ir, fired) = apply_passes(POLYNOMIAL, &LANES);
        assert!(
            fired
                .iter()
                .any(|f| f.contains("1 running total of independent steps: steps run in lanes")),
            "{fired:?}"
        );
        assert!(ir.contains(" lanes"), "{ir}");
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 33, 40, 1001] {
            let args = [coefficients(n), Value::from(0.9), Value::from(n as i64)];
            assert_same_results(POLYNOMIAL, "polynomial", &args);
        }
    }

    #[test]
    fn two_totals_backwards_with_taps_and_integers() {
        let src = "pub fn f(u: ArrayView1<i64>, v: ArrayView1<f32>) -> Result<(i64, f32)> {
            let (a, b) = scan(|u0, u2, v_t| (u0 * u2, v_t * v_t + 1.0),
                sequences = [taps(u, [0, 2]), v], go_backwards = true);
            Ok((a.sum(), b.sum()))
        }";
        let (_, fired) = apply_passes(src, &LANES);
        assert!(
            fired.iter().any(|f| f.contains("2 running totals")),
            "{fired:?}"
        );
        for n in [0usize, 3, 8, 11, 16, 30, 35] {
            let u = Value::from(ndarray::Array1::from_shape_fn(n + 2, |i| i as i64 * 7 - 40));
            let v = Value::from(ndarray::Array1::from_shape_fn(n, |i| {
                (i as f32 * 0.3).cos()
            }));
            assert_same_results(src, "f", &[u, v]);
        }
    }

    #[test]
    fn not_for_a_recurrence_the_user_wrote_or_other_outputs_or_until_or_arrays() {
        // The user's own accumulator: their order of additions.
        let own = "pub fn f(u: ArrayView1<f64>) -> Result<f64> {
            let acc = scan(|u_t, acc| acc + u_t, sequences = u, outputs_info = 0.0);
            Ok(acc[-1])
        }";
        // A total beside an output read otherwise.
        let both = "pub fn f(u: ArrayView1<f64>) -> Result<(f64, Array1<f64>)> {
            let (a, b) = scan(|u_t| (u_t * 2.0, u_t + 1.0), sequences = u);
            Ok((a.sum(), b))
        }";
        // Array rows.
        let rows = "pub fn f(u: ArrayView2<f64>) -> Result<f64> {
            let r = scan(|u_t| sum(u_t * 2.0), sequences = u);
            Ok(r.sum())
        }";
        for src in [own, both, rows] {
            let (_, fired) = apply_passes(src, &LANES);
            assert!(
                !fired.iter().any(|f| f.starts_with("sum_lanes")),
                "{src}: {fired:?}"
            );
        }
    }
}
