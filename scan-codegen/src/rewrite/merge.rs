//! Merge: two scan nodes of one graph that provably run the same steps become one loop
//! (PyTensor's `scan_merge`): one pass over the sequences, one set of loop overhead, the
//! outputs of both computed side by side in one step. The merged scan takes the earlier
//! scan's place; its sequences, outputs and non-sequences are the earlier scan's followed
//! by the later one's (its step inputs likewise, in `ir::scan`'s order), and the later
//! scan's results are read from it. More than two scans merge one pair at a time, all in
//! one run of the pass.
//!
//! Then, in every scan: a sequence passed twice (the same outer value with the same taps)
//! is read once, and two outputs that hold the same values — the same step node as their
//! result, the same taps, the same initial state (or both none) — are computed once, the
//! second's readers reading the first (the shared output keeps every row either's readers
//! need, see `save_mem`). Identical work of the two merged steps is found by
//! `cse` in the next round, after which their outputs can share.
//!
//! Applies when both scans run the same number of steps, provably: `n_steps` given by the
//! very same outer node (each sequence is still checked against it after merging), or no
//! `n_steps` on either and the same sequences read with the same taps (the steps are the
//! minimum over the same windows); the same direction and the same `unroll` (the user's
//! choice for each loop, kept).
//!
//! Never merged: scans whose step counts differ or may differ (different `n_steps` nodes,
//! different sequences or taps, `n_steps` on one only); different directions or unroll
//! factors; an `until` on either (the loops could stop at different steps); a scan already
//! marked for loop interchange, or one that could be (`loop_interchange::eligible`) when
//! the merged scan could not (element chunks outer is worth far more than one loop's
//! overhead); two scans of which one reads the other's results, directly
//! or through other nodes (one loop cannot feed itself: the graph would have a cycle).

use std::ops::Range;

use super::edit::{remove_output, remove_sequence, scan_outputs};
use super::loop_interchange::eligible;
use super::{output_label, scan_label, short, Log};
use crate::ir::{Graph, Node, NodeId, Op, ScanOp};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    // Each merge leaves one scan fewer, so this ends.
    while let Some((a, b, why)) = find_pair(g) {
        let what = format!(
            "{} and {}: {why}: one loop",
            scan_label(g.node(a)),
            scan_label(g.node(b))
        );
        merge(g, a, b);
        log.fired(what);
        g.normalize();
    }
    for i in 0..g.nodes.len() {
        if matches!(g.nodes[i].op, Op::Scan(_)) {
            read_sequences_once(g, NodeId(i), log);
            share_outputs(g, NodeId(i), log);
        }
    }
    g.normalize();
}

/// The first pair of scans of `g` (in graph order) that may run as one loop.
fn find_pair(g: &Graph) -> Option<(NodeId, NodeId, String)> {
    let scans: Vec<NodeId> = (0..g.nodes.len())
        .filter(|&i| matches!(g.nodes[i].op, Op::Scan(_)))
        .map(NodeId)
        .collect();
    for (x, &a) in scans.iter().enumerate() {
        for &b in &scans[x + 1..] {
            if let Some(why) = mergeable(g, a, b) {
                return Some((a, b, why));
            }
        }
    }
    None
}

/// Why scans `a` and `b` of `g` may run as one loop (the steps they share, for the log),
/// or `None` when they must not.
fn mergeable(g: &Graph, a: NodeId, b: NodeId) -> Option<String> {
    let (na, nb) = (g.node(a), g.node(b));
    let (Op::Scan(oa), Op::Scan(ob)) = (&na.op, &nb.op) else {
        return None;
    };
    if a == b
        || oa.has_until
        || ob.has_until
        || oa.interchange
        || ob.interchange
        || oa.go_backwards != ob.go_backwards
        || oa.backwards_flag != ob.backwards_flag
        || oa.unroll != ob.unroll
        || oa.max_steps != ob.max_steps
    {
        return None;
    }
    // A run-time direction: the same flag node, or no merge.
    if let (Some(fa), Some(fb)) = (oa.backwards_flag_input(), ob.backwards_flag_input()) {
        if na.inputs[fa] != nb.inputs[fb] {
            return None;
        }
    }
    let mut why = match (oa.n_steps_input(), ob.n_steps_input()) {
        (Some(ka), Some(kb)) => {
            let n = na.inputs[ka];
            if n != nb.inputs[kb] {
                return None;
            }
            format!("same {} steps", short(&g.node(n).label))
        }
        (None, None) => {
            let wa = windows(&na.inputs, oa);
            if wa.is_empty() || wa != windows(&nb.inputs, ob) {
                return None;
            }
            let mut seen = Vec::new();
            let mut over = Vec::new();
            for s in 0..oa.sequences.len() {
                let w = window(&na.inputs, oa, s);
                if seen.contains(&w) {
                    continue;
                }
                let text = short(&oa.sequences[s].label);
                over.push(match w.2.as_slice() {
                    [0] => text,
                    taps => format!("{text} taps {taps:?}"),
                });
                seen.push(w);
            }
            format!("same steps over {}", over.join(", "))
        }
        _ => return None,
    };
    if reaches(g, &nb.inputs, a) || reaches(g, &na.inputs, b) {
        return None;
    }
    // A loop that could run element chunks outer keeps that: merged with a loop of other
    // ranks or non-elementwise work, it could not, and one loop's overhead saved is worth
    // far less than the cache-resident recurrence.
    let alone = eligible(oa).is_ok() || eligible(ob).is_ok();
    if alone && eligible(&merged_op(oa, ob)).is_err() {
        return None;
    }
    if oa.go_backwards {
        why.push_str(", backwards");
    }
    if let Some(f) = oa.backwards_flag_input() {
        why.push_str(&format!(
            ", backwards when {}",
            short(&g.node(na.inputs[f]).label)
        ));
    }
    Some(why)
}

/// What sequence `s` of a scan reads: its outer node, whether it is the loop index, its
/// taps (sorted: the window is the set).
fn window(inputs: &[NodeId], op: &ScanOp, s: usize) -> (NodeId, bool, Vec<i64>) {
    let mut taps = op.sequences[s].taps.clone();
    taps.sort_unstable();
    (inputs[s], op.sequences[s].arange, taps)
}

/// Every window a scan reads, as a set (sorted, without repeats).
fn windows(inputs: &[NodeId], op: &ScanOp) -> Vec<(NodeId, bool, Vec<i64>)> {
    let mut all: Vec<_> = (0..op.sequences.len())
        .map(|s| window(inputs, op, s))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// Whether any node of `from` is `target` or depends on it (transitively, in `g`).
fn reaches(g: &Graph, from: &[NodeId], target: NodeId) -> bool {
    let mut seen = vec![false; g.nodes.len()];
    let mut stack = from.to_vec();
    while let Some(n) = stack.pop() {
        if n == target {
            return true;
        }
        if !seen[n.0] {
            seen[n.0] = true;
            stack.extend(g.node(n).inputs.iter().copied());
        }
    }
    false
}

/// The outer inputs of a scan by group: sequences, initial states, non-sequences.
fn outer_groups(op: &ScanOp) -> [Range<usize>; 3] {
    let (s, ns) = (op.sequences.len(), op.first_non_sequence_input());
    [0..s, s..ns, ns..ns + op.non_sequences.len()]
}

/// The step inputs of a scan by group: sequence taps, output taps, non-sequences.
fn step_groups(op: &ScanOp) -> [Range<usize>; 3] {
    let (o, ns) = (
        op.first_output_tap_input(0),
        op.first_non_sequence_step_input(),
    );
    [0..o, o..ns, ns..ns + op.non_sequences.len()]
}

/// Replaces scan `a` of `g` by one loop doing the work of `a` and `b` (in that order);
/// `b`'s readers read the merged node. Leaves `b` unread (the caller normalizes).
fn merge(g: &mut Graph, a: NodeId, b: NodeId) {
    let (na, nb) = (g.node(a).clone(), g.node(b).clone());
    let (Op::Scan(oa), Op::Scan(ob)) = (&na.op, &nb.op) else {
        unreachable!("merge of a node that is not a scan")
    };
    let mut inputs = Vec::new();
    for (ra, rb) in outer_groups(oa).into_iter().zip(outer_groups(ob)) {
        inputs.extend_from_slice(&na.inputs[ra]);
        inputs.extend_from_slice(&nb.inputs[rb]);
    }
    inputs.extend(oa.n_steps_input().map(|k| na.inputs[k]));
    inputs.extend(oa.backwards_flag_input().map(|k| na.inputs[k]));
    let op = merged_op(oa, ob);
    debug_assert_eq!(inputs.len(), op.n_outer_inputs());
    let before = oa.outputs.len();
    for reader in scan_outputs(g, b, ob.outputs.len()).concat() {
        let node = &mut g.nodes[reader.0];
        node.inputs[0] = a;
        if let Op::ScanOutput { index } = &mut node.op {
            *index += before;
        }
    }
    g.nodes[a.0] = Node {
        op: Op::Scan(Box::new(op)),
        inputs,
        ..na
    };
}

/// The scan op doing the work of `oa` and `ob` (in that order) in one loop.
fn merged_op(oa: &ScanOp, ob: &ScanOp) -> ScanOp {
    // The step: a's nodes, then b's (their ids shifted), inputs and results regrouped.
    let offset = oa.step.nodes.len();
    let shift = |id: &NodeId| NodeId(id.0 + offset);
    let mut step = Graph::default();
    step.nodes.extend(oa.step.nodes.iter().cloned());
    step.nodes.extend(ob.step.nodes.iter().map(|n| Node {
        inputs: n.inputs.iter().map(shift).collect(),
        ..n.clone()
    }));
    for (ra, rb) in step_groups(oa).into_iter().zip(step_groups(ob)) {
        step.inputs.extend_from_slice(&oa.step.inputs[ra]);
        step.inputs.extend(ob.step.inputs[rb].iter().map(shift));
    }
    for (index, &id) in step.inputs.iter().enumerate() {
        if let Op::Input { index: i, .. } = &mut step.nodes[id.0].op {
            *i = index;
        }
    }
    // Neither has an until condition: one result per output.
    step.outputs = oa.step.outputs.clone();
    step.outputs.extend(ob.step.outputs.iter().map(shift));
    step.normalize();

    let op = ScanOp {
        name: oa.name.clone().or_else(|| ob.name.clone()),
        sequences: [oa.sequences.clone(), ob.sequences.clone()].concat(),
        outputs: [oa.outputs.clone(), ob.outputs.clone()].concat(),
        non_sequences: [oa.non_sequences.clone(), ob.non_sequences.clone()].concat(),
        has_n_steps: oa.has_n_steps,
        go_backwards: oa.go_backwards,
        backwards_flag: oa.backwards_flag,
        has_until: false,
        interchange: false,
        lanes: false,
        unroll: oa.unroll,
        max_steps: oa.max_steps,
        // Read by `grad/` only, which runs before the rewrites.
        truncate_gradient: None,
        checkpoints: None,
        step,
    };
    debug_assert_eq!(
        op.step.inputs.len(),
        op.first_non_sequence_step_input() + op.non_sequences.len()
    );
    op
}

/// A sequence of scan `scan` given the same outer value with the same taps as an earlier
/// one is dropped: its taps read the earlier one's step inputs.
fn read_sequences_once(g: &mut Graph, scan: NodeId, log: &mut Log) {
    let label = scan_label(g.node(scan));
    let Node { op, inputs, .. } = &mut g.nodes[scan.0];
    let Op::Scan(op) = op else { return };
    let mut s = 1;
    while s < op.sequences.len() {
        let key = window(inputs, op, s);
        let Some(e) = (0..s).find(|&e| window(inputs, op, e) == key) else {
            s += 1;
            continue;
        };
        let (first_e, first_s) = (
            op.first_sequence_tap_input(e),
            op.first_sequence_tap_input(s),
        );
        for (k, tap) in op.sequences[s].taps.clone().into_iter().enumerate() {
            let j = op.sequences[e]
                .taps
                .iter()
                .position(|&t| t == tap)
                .expect("the same set of taps");
            let (from, to) = (op.step.inputs[first_s + k], op.step.inputs[first_e + j]);
            op.step.replace_uses(from, to);
        }
        let name = short(&op.sequences[s].label);
        remove_sequence(op, inputs, s);
        log.fired(format!(
            "{label}: sequence {name} is passed twice: read once"
        ));
    }
}

/// Two outputs of scan `scan` with the same step result, the same taps and the same initial
/// state (or none) hold the same values at every step: the second is dropped, its readers
/// (and the step's reads of its taps) read the first.
fn share_outputs(g: &mut Graph, scan: NodeId, log: &mut Log) {
    loop {
        let node = g.node(scan);
        let Op::Scan(op) = &node.op else { return };
        let n = op.outputs.len();
        let init = |j: usize| op.init_input(j).map(|p| node.inputs[p]);
        let same = |j: usize, k: usize| {
            op.step.outputs[j] == op.step.outputs[k]
                && op.outputs[j].taps == op.outputs[k].taps
                && init(j) == init(k)
        };
        let Some((j, k)) = (0..n)
            .flat_map(|j| (j + 1..n).map(move |k| (j, k)))
            .find(|&(j, k)| same(j, k))
        else {
            return;
        };
        let what = format!(
            "{}: outputs {j} ({}) and {k} ({}) hold the same values: computed once",
            scan_label(node),
            output_label(op, j),
            output_label(op, k)
        );
        let readers = scan_outputs(g, scan, n).swap_remove(k);
        let Op::Scan(op) = &mut g.nodes[scan.0].op else {
            unreachable!()
        };
        let (first_j, first_k) = (op.first_output_tap_input(j), op.first_output_tap_input(k));
        for t in 0..op.outputs[k].taps.len() {
            let (from, to) = (op.step.inputs[first_k + t], op.step.inputs[first_j + t]);
            op.step.replace_uses(from, to);
        }
        // Rows the readers of either need (all, if either is read whole).
        op.outputs[j].keep = match (op.outputs[j].keep, op.outputs[k].keep) {
            (Some(x), Some(y)) => Some(x.max(y)),
            _ => None,
        };
        for reader in readers {
            if let Op::ScanOutput { index } = &mut g.nodes[reader.0].op {
                *index = j;
            }
        }
        remove_output(g, scan, k);
        log.fired(what);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1, Value};
    use super::super::{Config, Pass};

    /// How many scan nodes the function's own graph has, in printed IR.
    fn loops(ir: &str) -> usize {
        ir.lines()
            .filter(|l| l.starts_with("  %") && l.contains(" = scan "))
            .count()
    }

    #[test]
    fn two_maps_over_one_sequence_become_one_loop() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let a = scan(|u_t| u_t * 2.0, sequences = u);
            let b = scan(|u_t| u_t + 1.0, sequences = u);
            Ok((a, b))
        }";
        let (ir, fired) = apply(src, Pass::Merge);
        assert_eq!(
            fired,
            [
                "merge: scan of `u_t * 2.0` and scan of `u_t + 1.0`: same steps over `u`: one loop",
                "merge: scan of `u_t * 2.0`, ..: sequence `u` is passed twice: read once",
            ]
        );
        assert_eq!(loops(&ir), 1, "{ir}");
        assert!(ir.contains("sequences=[u taps=[0]] outputs=["), "{ir}");
        assert!(ir.contains("scan_output#1"), "{ir}");
        for n in [0, 1, 2, 7] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 * 0.75 - 2.0).collect();
            assert_same_results(src, "f", &[vec1(&u)]);
        }
    }

    #[test]
    fn two_recurrences_with_one_n_steps_become_one_loop() {
        let src = "pub fn f(x0: ArrayView1<f64>, w: ArrayView2<f64>, y0: f64, b: f64, k: usize) -> Result<(Array2<f64>, Array1<f64>)> {
            let x = scan(|x, w| tanh(x.dot(w)), outputs_info = x0, non_sequences = w, n_steps = k);
            let y = scan(|y, b| y * 0.5 + b, outputs_info = y0, non_sequences = b, n_steps = k);
            Ok((x, y))
        }";
        let (ir, fired) = apply(src, Pass::Merge);
        assert_eq!(
            fired,
            ["merge: scan of `tanh(x.dot(w))` and scan of `y * 0.5 + b`: same `k` steps: one loop"]
        );
        assert_eq!(loops(&ir), 1, "{ir}");
        assert!(
            ir.contains(
                "outputs=[x0 Sitsot taps=[-1], y0 Sitsot taps=[-1]] non_sequences=2 n_steps=true"
            ),
            "{ir}"
        );
        for k in [0i64, 1, 2, 7] {
            assert_same_results(
                src,
                "f",
                &[
                    vec1(&[1.0, -0.5]),
                    Value::from(ndarray::arr2(&[[0.5, -0.25], [0.75, 1.5]])),
                    Value::from(3.0),
                    Value::from(0.25),
                    Value::from(k),
                ],
            );
        }
    }

    /// All three merge within one run of the pass (two merges, one after the other), with
    /// two taps of the sequence, backwards.
    #[test]
    fn three_scans_become_one_loop_in_one_run() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let a = scan(|u_tm1, u_t| u_t - u_tm1, sequences = taps(u, [-1, 0]), go_backwards = true);
            let b = scan(|u_tm1, u_t, s| s + u_t * u_tm1, sequences = taps(u, [-1, 0]), outputs_info = 0.0, go_backwards = true);
            let c = scan(|u_t, u_tm1, p| p * 0.5 + u_t, sequences = taps(u, [0, -1]), outputs_info = 1.0, go_backwards = true);
            Ok((a, b, c))
        }";
        let (ir, fired) = apply(src, Pass::Merge);
        let merges: Vec<&String> = fired.iter().filter(|f| f.ends_with("one loop")).collect();
        assert_eq!(merges.len(), 2, "{fired:?}");
        assert!(
            merges[0].ends_with("same steps over `u` taps [-1, 0], backwards: one loop"),
            "{fired:?}"
        );
        // c's taps are listed in another order: the same window, read once all the same.
        assert_eq!(
            fired.iter().filter(|f| f.contains("passed twice")).count(),
            2,
            "{fired:?}"
        );
        assert_eq!(loops(&ir), 1, "{ir}");
        for n in [0, 1, 2, 3, 8] {
            let u: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).sin()).collect();
            assert_same_results(src, "f", &[vec1(&u)]);
        }
    }

    #[test]
    fn different_n_steps_nodes_do_not_merge() {
        // Even when they hold the same number at run time: not provable here.
        let src = "pub fn f(x0: f64, k: usize, m: usize) -> Result<(Array1<f64>, Array1<f64>)> {
            let x = scan(|x| x * 2.0, outputs_info = x0, n_steps = k);
            let y = scan(|y| y + 1.0, outputs_info = x0, n_steps = m);
            Ok((x, y))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn different_sequences_or_taps_do_not_merge() {
        let bodies = [
            // Different sequences.
            "let a = scan(|u_t| u_t * 2.0, sequences = u);
             let b = scan(|v_t| v_t * 2.0, sequences = v);",
            // The same sequence with different taps (a different window).
            "let a = scan(|u_t| u_t * 2.0, sequences = u);
             let b = scan(|u_tm1, u_t| u_t - u_tm1, sequences = taps(u, [-1, 0]));",
            // One more sequence on one side: the minimum may be over a shorter one.
            "let a = scan(|u_t| u_t * 2.0, sequences = u);
             let b = scan(|u_t, v_t| u_t * v_t, sequences = [u, v]);",
            // n_steps on one side only.
            "let a = scan(|u_t| u_t * 2.0, sequences = u);
             let b = scan(|u_t| u_t * 3.0, sequences = u, n_steps = 2);",
        ];
        for body in bodies {
            let src = format!(
                "pub fn f(u: ArrayView1<f64>, v: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {{
                    {body}
                    Ok((a, b))
                }}"
            );
            let (_, fired) = apply(&src, Pass::Merge);
            assert!(fired.is_empty(), "{body}: {fired:?}");
        }
    }

    #[test]
    fn different_directions_do_not_merge() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let a = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
            let b = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0, go_backwards = true);
            Ok((a, b))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
    }

    /// A direction chosen at run time: the same flag node merges (the merged loop reads
    /// it), another flag or a literal does not.
    #[test]
    fn a_run_time_direction_merges_only_with_the_same_flag() {
        let same = "pub fn f(u: ArrayView1<f64>, back: bool) -> Result<(Array1<f64>, Array1<f64>)> {
            let a = scan(|u_tm1, u_t, s| s + u_t * u_tm1, sequences = taps(u, [-1, 0]), outputs_info = 0.0, go_backwards = back);
            let b = scan(|u_tm1, u_t| u_t - u_tm1, sequences = taps(u, [-1, 0]), go_backwards = back);
            Ok((a, b))
        }";
        let (ir, fired) = apply(same, Pass::Merge);
        assert!(
            fired
                .iter()
                .any(|f| f.ends_with("backwards when `back`: one loop")),
            "{fired:?}"
        );
        assert_eq!(loops(&ir), 1, "{ir}");
        assert!(ir.contains("go_backwards=flag"), "{ir}");
        for back in [false, true] {
            for n in [0, 1, 2, 5] {
                let u: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).sin()).collect();
                assert_same_results(same, "f", &[vec1(&u), Value::from(back)]);
            }
        }
        for other in [
            "go_backwards = fwd",
            "go_backwards = true",
            "go_backwards = false",
            "go_backwards = !back",
        ] {
            let src = format!(
                "pub fn f(u: ArrayView1<f64>, back: bool, fwd: bool) -> Result<(Array1<f64>, Array1<f64>)> {{
                    let a = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0, go_backwards = back);
                    let b = scan(|u_t, s| s * u_t, sequences = u, outputs_info = 1.0, {other});
                    Ok((a, b))
                }}"
            );
            let (_, fired) = apply(&src, Pass::Merge);
            assert!(fired.is_empty(), "{other}: {fired:?}");
        }
    }

    #[test]
    fn different_unroll_factors_do_not_merge() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let a = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0, unroll = 4);
            let b = scan(|u_t, s| s * u_t, sequences = u, outputs_info = 1.0);
            Ok((a, b))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn a_scan_with_until_does_not_merge() {
        for (a, b) in [
            ("(s + u_t, until(s > 2.0))", "s * u_t"),
            ("s + u_t", "(s * u_t, until(s > 2.0))"),
            ("(s + u_t, until(s > 2.0))", "(s * u_t, until(s > 2.0))"),
        ] {
            let src = format!(
                "pub fn f(u: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {{
                    let a = scan(|u_t, s| {a}, sequences = u, outputs_info = 1.0);
                    let b = scan(|u_t, s| {b}, sequences = u, outputs_info = 1.0);
                    Ok((a, b))
                }}"
            );
            let (_, fired) = apply(&src, Pass::Merge);
            assert!(fired.is_empty(), "{a} / {b}: {fired:?}");
        }
    }

    #[test]
    fn a_scan_marked_for_interchange_does_not_merge() {
        let src = "pub fn f(x0: ArrayView1<f64>, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let x = scan(|x| x * 2.0, outputs_info = x0, n_steps = k);
            let y = scan(|y| y + 1.0, outputs_info = x0, n_steps = k);
            Ok((x, y))
        }";
        let (mut functions, _) = crate::compile_with(src, &Config::none()).unwrap();
        let g = &mut functions[0].graph;
        let scans: Vec<super::NodeId> = (0..g.nodes.len())
            .filter(|&i| matches!(g.nodes[i].op, super::Op::Scan(_)))
            .map(super::NodeId)
            .collect();
        assert!(super::mergeable(g, scans[0], scans[1]).is_some());
        if let super::Op::Scan(op) = &mut g.nodes[scans[1].0].op {
            op.interchange = true;
        }
        assert!(super::mergeable(g, scans[0], scans[1]).is_none());
        assert!(super::mergeable(g, scans[1], scans[0]).is_none());
    }

    #[test]
    fn a_merge_that_would_cost_loop_interchange_is_not_made() {
        // x alone runs element chunks outer; beside a scalar recurrence it could not.
        let src = "pub fn f(x0: ArrayView1<f64>, y0: f64, k: usize) -> Result<(Array2<f64>, Array1<f64>)> {
            let x = scan(|x| x * 0.5, outputs_info = x0, n_steps = k);
            let y = scan(|y| y + 1.0, outputs_info = y0, n_steps = k);
            Ok((x, y))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
        // Two elementwise recurrences of one rank: the merged loop is interchanged too.
        let src = "pub fn f(x0: ArrayView1<f64>, y0: ArrayView1<f64>, k: usize) -> Result<(Array2<f64>, Array2<f64>)> {
            let x = scan(|x| x * 0.5, outputs_info = x0, n_steps = k);
            let y = scan(|y| y + 1.0, outputs_info = y0, n_steps = k);
            Ok((x, y))
        }";
        let (functions, fired) = crate::compile_with(src, &Config::all()).unwrap();
        let fired: Vec<String> = fired.iter().map(|f| f.to_string()).collect();
        assert!(fired[0].ends_with("same `k` steps: one loop"), "{fired:?}");
        let ir = crate::ir::print::function(&functions[0]);
        assert_eq!(loops(&ir), 1, "{ir}");
        assert!(ir.contains(" interchange("), "{ir}");
        for k in [0i64, 1, 2, 7] {
            assert_same_results(
                src,
                "f",
                &[vec1(&[1.0, -2.0]), vec1(&[0.5, 4.0]), Value::from(k)],
            );
        }
    }

    /// The scans of `src`'s first function (before rewrites) may not merge, in either order.
    fn assert_never_mergeable(src: &str) {
        let (functions, _) = crate::compile_with(src, &Config::none()).unwrap();
        let g = &functions[0].graph;
        let scans: Vec<super::NodeId> = (0..g.nodes.len())
            .filter(|&i| matches!(g.nodes[i].op, super::Op::Scan(_)))
            .map(super::NodeId)
            .collect();
        assert_eq!(scans.len(), 2);
        assert!(super::mergeable(g, scans[0], scans[1]).is_none());
        assert!(super::mergeable(g, scans[1], scans[0]).is_none());
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
    }

    #[test]
    fn a_scan_reading_the_other_does_not_merge() {
        // Through its initial state (the same n_steps node, so only the reading forbids).
        assert_never_mergeable(
            "pub fn f(x0: f64, k: usize) -> Result<Array1<f64>> {
                let x = scan(|x| x * 2.0, outputs_info = x0, n_steps = k);
                let y = scan(|y| y + 1.0, outputs_info = x[-1], n_steps = k);
                Ok(y)
            }",
        );
        // Through a non-sequence (the same sequence, so only the reading forbids).
        assert_never_mergeable(
            "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
                let a = scan(|u_t| u_t * 2.0, sequences = u);
                let b = scan(|u_t, a| u_t * a.sum(), sequences = u, non_sequences = a);
                Ok(b)
            }",
        );
        // Through its initial state, over the same sequence.
        assert_never_mergeable(
            "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
                let a = scan(|u_t| u_t * 2.0, sequences = u);
                let b = scan(|u_t, s| s + u_t, sequences = u, outputs_info = a[-1]);
                Ok(b)
            }",
        );
    }

    #[test]
    fn a_scan_reading_the_other_through_other_nodes_does_not_merge() {
        assert_never_mergeable(
            "pub fn f(x0: f64, w: f64, k: usize) -> Result<Array1<f64>> {
                let x = scan(|x, w| x * w, outputs_info = x0, non_sequences = w, n_steps = k);
                let c = exp(x.sum() * 0.5) + w;
                let d = c * c;
                let y = scan(|y, d| y + d, outputs_info = w, non_sequences = d, n_steps = k);
                Ok(y)
            }",
        );
    }

    /// PyTensor's merge once got this wrong: a carry passed through unchanged in one scan
    /// (its step result is its own tap) beside a changing carry in the other.
    #[test]
    fn a_carry_passed_through_unchanged_beside_a_changing_one() {
        let src = "pub fn f(u: ArrayView1<f64>, h0: f64) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (keep, acc) = scan(|u_t, keep, acc| (keep, acc + keep * u_t), sequences = u, outputs_info = [h0, h0]);
            let y = scan(|u_t, y| y * u_t, sequences = u, outputs_info = h0);
            Ok((keep, acc, y))
        }";
        let (ir, fired) = apply(src, Pass::Merge);
        assert!(fired[0].ends_with("one loop"), "{fired:?}");
        assert_eq!(loops(&ir), 1, "{ir}");
        for n in [0usize, 1, 2, 7] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 0.75).collect();
            let h0 = 1.25;
            assert_same_results(src, "f", &[vec1(&u), Value::from(h0)]);
            #[cfg(feature = "evaluator")]
            {
                let (functions, _) =
                    crate::compile_with(src, &Config::only(&[Pass::Merge])).unwrap();
                let got =
                    crate::eval::eval_function(&functions[0], vec![vec1(&u), Value::from(h0)])
                        .unwrap();
                let (mut acc, mut y) = (h0, h0);
                let mut expected = (vec![], vec![], vec![]);
                for u_t in &u {
                    acc += h0 * u_t;
                    y *= u_t;
                    expected.0.push(h0);
                    expected.1.push(acc);
                    expected.2.push(y);
                }
                let rows = |v: &Value| {
                    v.array::<f64>()
                        .unwrap()
                        .iter()
                        .copied()
                        .collect::<Vec<_>>()
                };
                assert_eq!(rows(&got[0]), expected.0, "keep, {n} steps");
                assert_eq!(rows(&got[1]), expected.1, "acc, {n} steps");
                assert_eq!(rows(&got[2]), expected.2, "y, {n} steps");
            }
        }
    }

    #[test]
    fn outputs_with_the_same_result_are_computed_once() {
        // After merging, both maps return the (one) row of u, and both recurrences take the
        // same row with the same initial state.
        let src = "pub fn f(u: ArrayView1<f64>, h0: f64, h1: f64) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            let a = scan(|u_t| u_t, sequences = u);
            let (b, c, d) = scan(|u_t, c, d| (u_t, u_t, u_t), sequences = u, outputs_info = [None, h0, h1]);
            let e = scan(|u_t, e| u_t, sequences = u, outputs_info = h0);
            Ok((a, b, c, d, e))
        }";
        let (ir, fired) = apply(src, Pass::Merge);
        let shared: Vec<&String> = fired.iter().filter(|f| f.contains("same values")).collect();
        // a and b (NITSOT), c and e (SITSOT from h0); d starts from h1: kept apart.
        assert_eq!(shared.len(), 2, "{fired:?}");
        assert!(
            shared[0].contains("outputs 0 (`u_t`) and 1 (`u_t`) hold the same values"),
            "{fired:?}"
        );
        assert!(
            shared[1].contains("outputs 1 (`h0`) and 3 (`h0`)"),
            "{fired:?}"
        );
        assert!(
            ir.contains(
                "outputs=[output 0 Nitsot taps=[], h0 Sitsot taps=[-1], h1 Sitsot taps=[-1]]"
            ),
            "{ir}"
        );
        for n in [0, 1, 2, 7] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 - 2.5).collect();
            assert_same_results(src, "f", &[vec1(&u), Value::from(0.5), Value::from(0.5)]);
        }
    }

    #[test]
    fn identical_work_is_shared_after_cse() {
        // Round 1 merges and reads u once; round 2's cse finds the two sums equal, then the
        // outputs share. b[-1] kept one row by save_mem: the shared output keeps all.
        let src = "pub fn f(u: ArrayView2<f64>) -> Result<(Array1<f64>, f64)> {
            let a = scan(|u_t| u_t.sum() * 2.0, sequences = u);
            let b = scan(|u_t| u_t.sum() * 2.0, sequences = u);
            Ok((a, b[-1]))
        }";
        let (functions, fired) =
            crate::compile_with(src, &Config::only(&[Pass::Cse, Pass::Merge, Pass::SaveMem]))
                .unwrap();
        let fired: Vec<String> = fired.iter().map(|f| f.to_string()).collect();
        let kept = fired
            .iter()
            .position(|f| f.contains("output 1 (`u_t.sum() * 2.0`) keeps 1 row"));
        let shared = fired.iter().position(|f| {
            f.contains(
                "outputs 0 (`u_t.sum() * 2.0`) and 1 (`u_t.sum() * 2.0`) hold the same values",
            )
        });
        assert!(kept.is_some() && shared > kept, "{fired:?}");
        let ir = crate::ir::print::function(&functions[0]);
        assert!(ir.contains("outputs=[output 0 Nitsot taps=[]] "), "{ir}");
        for n in [0usize, 1, 2, 7] {
            let u = ndarray::Array2::from_shape_fn((n, 3), |(i, j)| (i * 3 + j) as f64 * 0.25);
            assert_same_results(src, "f", &[Value::from(u)]);
        }
    }

    #[test]
    fn different_initial_states_or_taps_are_not_shared() {
        let src = "pub fn f(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (a, b, c) = scan(|u_t, a, b_tm2, b_tm1| (u_t, u_t, u_t), sequences = u, outputs_info = [x0[-1], taps(x0, [-2, -1]), None]);
            Ok((a, b, c))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
        // The same result and initial state, other taps: c reads b three steps back, which
        // is not a's history.
        let src = "pub fn f(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            let (a, b, c) = scan(|u_t, a_tm2, a_tm1, b_tm3, b_tm1| { let v = u_t + a_tm2; (v, v, b_tm3 * 2.0) }, sequences = u, outputs_info = [taps(x0, [-2, -1]), taps(x0, [-3, -1]), None]);
            Ok((a, b, c))
        }";
        let (_, fired) = apply(src, Pass::Merge);
        assert!(fired.is_empty(), "{fired:?}");
        for n in [0, 1, 2, 7] {
            let u: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
            assert_same_results(src, "f", &[vec1(&u), vec1(&[1.0, 2.0, 3.0, 4.0])]);
        }
    }
}
