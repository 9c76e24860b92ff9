//! Dead outputs: a scan output that nothing reads, neither the outer graph nor (through
//! its taps) another output or the `until` condition, is dropped with its initial state
//! and the step nodes only it needed. A NITSOT output of a map that is never used then
//! costs nothing; a recurrent output is kept as long as any needed value reads its taps.
//!
//! Never dropped: an output read outside (even only through `x[-1]`), an output whose taps
//! feed a needed output or the `until` condition.

use super::edit::{depends_on, remove_non_sequence, remove_output, scan_outputs};
use super::{output_label, scan_label, Log};
use crate::ir::{Graph, NodeId, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let mut i = 0;
    while i < g.nodes.len() {
        if let Op::Scan(op) = &g.nodes[i].op {
            let scan = NodeId(i);
            let read = scan_outputs(g, scan, op.outputs.len());
            let mut needed: Vec<bool> = read.iter().map(|r| !r.is_empty()).collect();
            // Outputs whose taps feed a needed output (or the until condition) are needed.
            loop {
                let mut roots: Vec<NodeId> = (0..op.outputs.len())
                    .filter(|&j| needed[j])
                    .map(|j| op.step.outputs[j])
                    .collect();
                roots.extend(op.step.outputs.get(op.outputs.len()).copied());
                let mut changed = false;
                for (k, need) in needed.iter_mut().enumerate() {
                    if *need {
                        continue;
                    }
                    let first = op.first_output_tap_input(k);
                    let taps: Vec<NodeId> = (first..first + op.outputs[k].taps.len())
                        .map(|p| op.step.inputs[p])
                        .collect();
                    if roots.iter().any(|&r| depends_on(&op.step, r, &taps)) {
                        *need = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            drop_unread_non_sequences(g, scan, log);
            // A scan nothing reads is dead code as a whole: normalize drops it.
            let op_outputs = match &g.nodes[i].op {
                Op::Scan(op) => op.outputs.len(),
                _ => unreachable!(),
            };
            debug_assert_eq!(op_outputs, needed.len());
            if needed.iter().any(|&n| n) {
                let label = scan_label(&g.nodes[i]);
                for j in (0..needed.len()).rev().filter(|&j| !needed[j]) {
                    let what = {
                        let Op::Scan(op) = &g.nodes[i].op else {
                            unreachable!()
                        };
                        output_label(op, j)
                    };
                    remove_output(g, scan, j);
                    log.fired(format!(
                        "{label}: output {j} ({what}) is never read: dropped"
                    ));
                }
            }
        }
        i += 1;
    }
    g.normalize();
}

/// Non-sequences the step never reads are not passed.
fn drop_unread_non_sequences(g: &mut Graph, scan: NodeId, log: &mut Log) {
    let label = scan_label(g.node(scan));
    let node = &mut g.nodes[scan.0];
    let Op::Scan(op) = &mut node.op else {
        unreachable!()
    };
    let users = op.step.consumers();
    let mut k = 0;
    while k < op.non_sequences.len() {
        let input = op.step.inputs[op.first_non_sequence_step_input() + k];
        if users[input.0].is_empty() && !op.step.outputs.contains(&input) {
            let name = op.non_sequences[k].label.clone();
            remove_non_sequence(op, &mut node.inputs, k);
            log.fired(format!(
                "{label}: non-sequence `{name}` is never read: not passed"
            ));
            return drop_unread_non_sequences(g, scan, log);
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results};
    use super::super::Pass;

    #[test]
    fn drops_an_unread_map_output_and_its_work() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let (a, b) = scan(|u_t| (u_t * 2.0, exp(u_t)), sequences = u, outputs_info = [None, None]);
            Ok(a)
        }";
        let (ir, fired) = apply(src, Pass::Dead);
        assert_eq!(
            fired,
            ["dead: scan of `u_t * 2.0`, ..: output 1 (`exp(u_t)`) is never read: dropped"]
        );
        assert!(!ir.contains("exp"), "{ir}");
        assert_same_results(
            src,
            "f",
            &[super::super::test_util::vec1(&[1.0, -2.0, 0.5])],
        );
    }

    #[test]
    fn keeps_a_recurrent_output_that_feeds_a_read_one() {
        // `x` is not returned but `y` reads x's tap: both stay.
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let (x, y) = scan(|u_t, x, y| (x + u_t, x * 2.0), sequences = u, outputs_info = [0.0, 0.0]);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::Dead);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn drops_a_recurrent_output_only_it_reads() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let (x, y) = scan(|u_t, x, y| (x + u_t, y * 2.0 + u_t), sequences = u, outputs_info = [0.0, 1.0]);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Dead);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].contains("output 0"), "{fired:?}");
        assert!(ir.contains("outputs=[1.0 Sitsot taps=[-1]]"), "{ir}");
        assert_same_results(
            src,
            "f",
            &[super::super::test_util::vec1(&[1.0, -2.0, 0.5])],
        );
    }

    #[test]
    fn keeps_an_output_the_until_condition_reads() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let (x, y) = scan(|u_t, x| (x + u_t, u_t * 3.0, until(x > 1.0)), sequences = u, outputs_info = [0.0, None]);
            Ok(y)
        }";
        let (_, fired) = apply(src, Pass::Dead);
        assert!(fired.is_empty(), "{fired:?}");
        assert_same_results(
            src,
            "f",
            &[super::super::test_util::vec1(&[0.5, 0.7, 0.2, 0.9])],
        );
    }
}
