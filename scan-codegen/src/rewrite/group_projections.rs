//! Grouping of input projections: in a step, a sum (a chain of additions, each read only by
//! the next, in any order and association) with two or more terms `dot(x_i, w_i)` that read
//! one sequence alone (`x_i` a vector computed from one tap of it, `w_i` a loop-invariant
//! matrix) has those terms summed before the loop, over every step at once, into ONE new
//! sequence: `a + b + c + d`, with b and c such terms, becomes `a + (b + c) + d`, the group
//! in the first term's place, read as a row of that sequence. The scan tutorial's TUTORIAL_RNN,
//! `x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback)`, gets
//! `u[4..] @ w_in_1 + u[..-4] @ w_in_2` as one `T x n_x` array before the loop where
//! push_out_seq would make one per product; the gemm rewrite then accumulates the second
//! product onto the first (`Op::DotAdd`, BLAS's beta = 1), and the emitter lets that
//! accumulation take over the first product's buffer (`kernels::dot_add_mm_onto`): one
//! buffer, as a hand-written loop has.
//!
//! Rows are aligned by slicing the sequence: tap `k` at step `s` reads row `s + k + past`
//! (`past = -min(taps, 0)`, also going backwards, where `s` counts from the end), so over
//! the `L - span` steps the sequence allows it reads `seq[k + past .. L - (reach - k)]`
//! (`reach = max(taps, 0)`), each tap's slice as long as the others. The sum is a sequence
//! of those rows read at tap 0: it allows the same steps as the sequence, which the scan
//! keeps (its window and `n_steps` are checked as before). The slices clamp as numpy's
//! do: a sequence shorter than its window gives empty slices, no error, and the loop then
//! reports the short sequence as it did.
//!
//! Runs before push_out_seq, which would move each product out as its own sequence. Like
//! push_out_seq, the moved work runs over every row the sequence allows (also rows a
//! shorter `n_steps` or an early `until` would not reach), and a size error of a product
//! (a weight of the wrong size) is met before the loop, also when it runs no step.
//!
//! Broadcasting: every grouped term is a vector (rank 1), so over the steps each has one
//! more leading axis, of the same length (one slice length): the sum of the stacks
//! broadcasts exactly as each step's sum does (a product of one column beside one of n).
//! numpy's sum of any terms is the same, up to rounding, in any association (the broadcast
//! of a set of shapes does not depend on the order), so regrouping changes which addition
//! reports a mismatch, not whether one is reported. The float sum is reassociated:
//! `eval::rewrites_agree` compares within its tolerance, as for stack_dots.
//!
//! Not grouped: a term reading an output tap, two sequences (their rows would need one
//! length), the loop index (`arange`), a product whose left operand is a matrix (a batch of
//! rows: its stacks are 3-d, which no dot-add accumulates, so a group would cost one more
//! buffer instead of one fewer), a sum also read in the middle of its chain (the chain
//! stops there), integer sums.

use std::collections::{HashMap, HashSet};

use super::edit::{add_sequence, outer_input};
use super::lift::{self, Source};
use super::stack_dots::{collect, continues, is_sum, rebuild, Term};
use super::{each_scan, short, Log};
use crate::ir::{DType, ElemOp, Graph, Literal, Node, NodeId, Op, PathStep, ScanOp, Type};

pub fn run(g: &mut Graph, log: &mut Log) {
    each_scan(g, |g, op, inputs, label| {
        for what in group(g, op, inputs) {
            log.fired(format!("{label}: {what}"));
        }
    });
    g.normalize();
}

/// A sum to regroup: its last addition, the additions continuing it, and its projections
/// by sequence (each group two or more terms, in the sum's order).
struct Sum {
    root: NodeId,
    inner: HashSet<NodeId>,
    groups: Vec<(usize, Vec<NodeId>)>,
}

/// Groups the projections of `op`'s step; returns what the log says of each group.
fn group(g: &mut Graph, op: &mut ScanOp, scan_inputs: &mut Vec<NodeId>) -> Vec<String> {
    let src = super::push_out_seq::sources(op);
    let tap_of = taps(op);
    let sums = find(&op.step, &src, &tap_of);
    // Outer nodes already made (one slice per tap, invariants copied once).
    let mut copied: HashMap<NodeId, NodeId> = HashMap::new();
    let mut said = Vec::new();
    for sum in sums {
        let mut replaced: HashMap<Term, Option<NodeId>> = HashMap::new();
        for (s, terms) in &sum.groups {
            let lifted: Vec<NodeId> = terms
                .iter()
                .map(|&term| {
                    let inputs: &[NodeId] = scan_inputs;
                    let op: &ScanOp = op;
                    let mut leaf = |g: &mut Graph, id: NodeId| match tap_of.get(&id) {
                        Some(&(s, k)) => Some(aligned_rows(g, op, inputs, s, k)),
                        None => outer_input(op, inputs, id),
                    };
                    lift::copy_whole(g, &op.step, &src, term, &mut leaf, &mut copied)
                })
                .collect();
            let first = op.step.node(terms[0]);
            let (dtype, span) = (first.ty.dtype, first.span);
            let labels: Vec<String> = terms
                .iter()
                .map(|&t| op.step.node(t).label.clone())
                .collect();
            let mut total = lifted[0];
            for (k, &term) in lifted.iter().enumerate().skip(1) {
                total = g.add(Node {
                    op: Op::Elemwise(ElemOp::Add),
                    inputs: vec![total, term],
                    ty: Type::new(dtype, 2),
                    span,
                    label: labels[..=k].join(" + "),
                });
            }
            let label = labels.join(" + ");
            let row = add_sequence(
                op,
                scan_inputs,
                total,
                &[0],
                Type::new(dtype, 1),
                &label,
                span,
            )[0];
            replaced.extend(terms.iter().map(|&t| (Term::Dot(t), None)));
            replaced.insert(Term::Dot(terms[0]), Some(row));
            let quoted: Vec<String> = labels.iter().map(|l| short(l)).collect();
            said.push(format!(
                "{}: summed over all steps before the loop as one sequence (the rows of {} \
                 each tap reads, aligned)",
                quoted.join(" + "),
                short(&op.sequences[*s].label)
            ));
        }
        if let Some(new) = rebuild(&mut op.step, sum.root, &sum.inner, &replaced) {
            op.step.replace_uses(sum.root, new);
        }
    }
    op.step.normalize();
    said
}

/// Which sequence, and which of its taps, each sequence step input is (the loop index
/// left out: it has no rows).
fn taps(op: &ScanOp) -> HashMap<NodeId, (usize, usize)> {
    let mut tap_of = HashMap::new();
    for (s, seq) in op.sequences.iter().enumerate() {
        if seq.arange {
            continue;
        }
        let first = op.first_sequence_tap_input(s);
        for k in 0..seq.taps.len() {
            tap_of.insert(op.step.inputs[first + k], (s, k));
        }
    }
    tap_of
}

/// The sequence whose rows projection `x` reads: `x` a product `dot(v, w)` of a vector
/// computed from one sequence tap (and invariants) by an invariant matrix, a float vector
/// of `dtype`, not a step result.
fn projection(
    step: &Graph,
    src: &[Source],
    tap_of: &HashMap<NodeId, (usize, usize)>,
    x: NodeId,
    dtype: DType,
) -> Option<usize> {
    let node = step.node(x);
    let Source::Row(row) = src[x.0] else {
        return None;
    };
    let fits = matches!(node.op, Op::Dot)
        && !step.outputs.contains(&x)
        && node.ty == Type::new(dtype, 1)
        && step.ty(node.inputs[0]).rank == 1
        && step.ty(node.inputs[1]).rank == 2
        && src[node.inputs[1].0] == Source::Invariant;
    fits.then(|| tap_of.get(&row).map(|&(s, _)| s)).flatten()
}

/// The sums of the step with projections of one sequence to group.
fn find(step: &Graph, src: &[Source], tap_of: &HashMap<NodeId, (usize, usize)>) -> Vec<Sum> {
    let users = step.consumers();
    let mut sums = Vec::new();
    for i in 0..step.nodes.len() {
        let root = NodeId(i);
        if !is_sum(step, root) || users[i].iter().any(|&u| continues(step, &users, root, u)) {
            continue;
        }
        let dtype = step.ty(root).dtype;
        let mut terms = Vec::new();
        let mut inner = HashSet::new();
        collect(step, &users, root, &mut terms, &mut inner);
        let mut groups: Vec<(usize, Vec<NodeId>)> = Vec::new();
        for term in terms {
            let Term::Dot(x) = term else {
                continue;
            };
            let Some(s) = projection(step, src, tap_of, x, dtype) else {
                continue;
            };
            match groups.iter_mut().find(|(t, _)| *t == s) {
                Some((_, xs)) => xs.push(x),
                None => groups.push((s, vec![x])),
            }
        }
        groups.retain(|(_, xs)| xs.len() >= 2);
        if !groups.is_empty() {
            sums.push(Sum {
                root,
                inner,
                groups,
            });
        }
    }
    sums
}

/// The rows of sequence `s` that its tap `k` (by position) reads over every step the
/// sequence allows, a view: `seq[k + past .. len - (reach - k)]`, clamped as numpy's
/// slices (empty when the sequence is shorter than its window).
fn aligned_rows(g: &mut Graph, op: &ScanOp, scan_inputs: &[NodeId], s: usize, k: usize) -> NodeId {
    let seq = &op.sequences[s];
    let whole = scan_inputs[s];
    let tap = seq.taps[k];
    let start = tap + seq.past();
    let from_end = seq.span() - seq.past() - tap;
    if start == 0 && from_end == 0 {
        return whole;
    }
    let span = seq.span;
    let mut inputs = vec![whole];
    let mut bound = |v: i64| {
        let c = g.add_const(
            Literal::Int(i128::from(v)),
            DType::I64,
            span,
            &v.to_string(),
        );
        inputs.push(c);
    };
    if start > 0 {
        bound(start);
    }
    if from_end > 0 {
        bound(-from_end);
    }
    let text = |v: i64, shown: bool| if shown { v.to_string() } else { String::new() };
    let label = format!(
        "{}[{}..{}]",
        seq.label,
        text(start, start > 0),
        text(-from_end, from_end > 0)
    );
    let ty = g.ty(whole);
    g.add(Node {
        op: Op::Subtensor {
            path: vec![PathStep::Slice {
                start: start > 0,
                end: from_end > 0,
            }],
        },
        inputs,
        ty,
        span,
        label,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Pass;

    /// The TUTORIAL_RNN's arguments for `steps` steps: n_u = 3, n_x = 4, n_y = 2; `in_2_columns` is
    /// w_in_2's (n_x, or 1: its product then broadcasts over the others).
    #[cfg(feature = "evaluator")]
    fn rnn_args(steps: usize, in_2_columns: usize) -> Vec<Value> {
        vec![
            mat(steps + 4, 3, 0.1),
            mat(3, 4, 0.2),
            vec1(&[0.3, -0.4]),
            mat(4, 4, 0.5),
            mat(3, 4, 0.6),
            mat(3, in_2_columns, 0.7),
            mat(2, 4, 0.8),
            mat(4, 2, 0.9),
        ]
    }

    #[test]
    fn groups_the_tutorial_rnns_input_projections() {
        let (ir, fired) = apply(TUTORIAL_RNN, Pass::GroupProjections);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains(
                "`u_t.dot(w_in_1)` + `u_tm4.dot(w_in_2)`: summed over all steps before the \
                 loop as one sequence (the rows of `u` each tap reads, aligned)"
            ),
            "{fired:?}"
        );
        // Before the loop: u's rows for tap 0 (`u[4..]`) and for tap -4 (`u[..-4]`), one
        // product of each, their sum; a new sequence of it read at tap 0.
        let outer = outer_lines(&ir);
        assert!(
            outer
                .iter()
                .any(|l| l.contains("= subtensor[Slice { start: true, end: false }](%0, ")),
            "{ir}"
        );
        assert!(
            outer
                .iter()
                .any(|l| l.contains("= subtensor[Slice { start: false, end: true }](%0, ")),
            "{ir}"
        );
        assert_eq!(
            outer.iter().filter(|l| l.contains("= dot(")).count(),
            2,
            "{ir}"
        );
        assert_eq!(
            outer.iter().filter(|l| l.contains("= add(")).count(),
            1,
            "{ir}"
        );
        assert!(
            ir.contains("sequences=[u taps=[-4, 0], u_t.dot(w_in_1) + u_tm4.dot(w_in_2) taps=[0]]"),
            "{ir}"
        );
        // In the step: the two recurrent products and y's; the sum reads the new row.
        let step = step_lines(&ir);
        assert_eq!(
            step.iter().filter(|l| l.contains("= dot(")).count(),
            3,
            "{ir}"
        );
        assert!(
            step.iter()
                .any(|l| l.contains("input#2 u_t.dot(w_in_1) + u_tm4.dot(w_in_2)")),
            "{ir}"
        );
        #[cfg(feature = "evaluator")]
        for steps in [0, 1, 2, 7] {
            assert_same_results(TUTORIAL_RNN, "rnn", &rnn_args(steps, 4));
        }
    }

    #[test]
    fn with_the_other_passes_one_stack_and_one_stacked_product() {
        let (ir, fired) = apply_passes(
            TUTORIAL_RNN,
            &[
                Pass::GroupProjections,
                Pass::PushOutSeq,
                Pass::StackDots,
                Pass::Dead,
                Pass::Gemm,
            ],
        );
        // push_out_seq finds nothing left to move.
        assert!(
            !fired.iter().any(|f| f.starts_with("push_out_seq")),
            "{fired:?}"
        );
        // Before the loop: one product, the other accumulated onto it (gemm), the stacked
        // recurrent matrices. In the step: the stacked product and y's product only.
        let outer = outer_lines(&ir);
        assert_eq!(
            outer.iter().filter(|l| l.contains("= dot(")).count(),
            1,
            "{ir}"
        );
        assert_eq!(
            outer.iter().filter(|l| l.contains("= dot_add(")).count(),
            1,
            "{ir}"
        );
        assert!(outer.iter().any(|l| l.contains("= stack_rows(")), "{ir}");
        let step = step_lines(&ir);
        assert_eq!(
            step.iter().filter(|l| l.contains("= stacked_dot(")).count(),
            1,
            "{ir}"
        );
        assert_eq!(
            step.iter().filter(|l| l.contains("= dot(")).count(),
            1,
            "{ir}"
        );
    }

    #[test]
    fn terms_that_broadcast_are_grouped_and_broadcast_alike() {
        // w_in_2 of one column: u_tm4.dot(w_in_2) has one element, broadcast over the
        // others' four at every step, and its stack of one column over theirs.
        let (_, fired) = apply(TUTORIAL_RNN, Pass::GroupProjections);
        assert_eq!(fired.len(), 1, "{fired:?}");
        #[cfg(feature = "evaluator")]
        for steps in [0, 1, 5] {
            assert_same_results(TUTORIAL_RNN, "rnn", &rnn_args(steps, 1));
        }
    }

    #[test]
    fn aligns_taps_after_the_step_going_backwards_with_n_steps() {
        // Taps -2, 1 and 3 of a sequence read backwards for n steps: the rows of each tap
        // are `u[..-5]`, `u[3..-2]` (both bounds) and `u[5..]`; the group is three terms,
        // one the product of an elementwise function of the row.
        let src = r#"
            pub fn f(u: ArrayView2<f64>, h0: ArrayView1<f64>, w: ArrayView2<f64>, a: ArrayView2<f64>,
                     b: ArrayView2<f64>, c: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
                let h = scan(
                    |u_tm2, u_tp1, u_tp3, h, w, a, b, c| {
                        tanh(u_tp1.dot(a) + h.dot(w) + (u_tm2 * 0.5).dot(b) + u_tp3.dot(c))
                    },
                    sequences = [taps(u, [-2, 1, 3])],
                    outputs_info = h0,
                    non_sequences = [w, a, b, c],
                    n_steps = n,
                    go_backwards = true,
                );
                Ok(h)
            }
        "#;
        let (ir, fired) = apply(src, Pass::GroupProjections);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("`u_tp1.dot(a)` + `(u_tm2 * 0.5).dot(b)` + `u_tp3.dot(c)`"),
            "{fired:?}"
        );
        assert!(
            outer_lines(&ir)
                .iter()
                .any(|l| l.contains("= subtensor[Slice { start: true, end: true }](%0, ")),
            "{ir}"
        );
        #[cfg(feature = "evaluator")]
        for rows in [0usize, 4, 5, 6, 9] {
            let args = vec![
                mat(rows, 3, 0.1),
                vec1(&[0.2, -0.1]),
                mat(2, 2, 0.3),
                mat(3, 2, 0.4),
                mat(3, 2, 0.5),
                mat(3, 2, 0.6),
                Value::from(rows.saturating_sub(5) as i64),
            ];
            assert_same_results(src, "f", &args);
        }
    }

    #[test]
    fn a_sum_returned_as_it_is_is_the_new_row() {
        // The whole step result is the group: the step reads it and writes it (a map).
        let src = r#"
            pub fn f(u: ArrayView2<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
                let y = scan(|u_tm1, u_t, a, b| u_t.dot(a) + u_tm1.dot(b), sequences = [taps(u, [-1, 0])],
                             non_sequences = [a, b]);
                Ok(y)
            }
        "#;
        let (_, fired) = apply(src, Pass::GroupProjections);
        assert_eq!(fired.len(), 1, "{fired:?}");
        #[cfg(feature = "evaluator")]
        for rows in [0usize, 1, 2, 6] {
            assert_same_results(
                src,
                "f",
                &[mat(rows, 3, 0.1), mat(3, 2, 0.2), mat(3, 2, 0.3)],
            );
        }
    }

    #[test]
    fn leaves_sums_it_must_not_regroup() {
        // h: one projection beside a term reading the state (`(u_tm1 + h).dot(b)`);
        // m: a batch (matrix rows; the second term, a product by a vector, has a lower rank
        // and broadcasts across the wrong axis over the steps); s: the partial sum `p` is
        // also a step result, so the chain stops at it and each part has one projection;
        // v: two sequences; i: integers.
        let src = r#"
            pub fn f(u: ArrayView2<f64>, z: ArrayView2<f64>, m_seq: ArrayView3<f64>, iu: ArrayView2<i64>,
                     h0: ArrayView1<f64>, m0: ArrayView2<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>,
                     bv: ArrayView1<f64>, ia: ArrayView2<i64>, ib: ArrayView2<i64>)
                -> Result<(Array2<f64>, Array3<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<i64>)> {
                let (h, m, s, p, v, i) = scan(
                    |u_tm1, u_t, z_t, m_tm1, m_t, iu_tm1, iu_t, h, m, a, b, bv, ia, ib| {
                        let p = h.dot(a) + u_t.dot(a);
                        (
                            tanh(u_t.dot(a) + (u_tm1 + h).dot(b)),
                            tanh(m_t.dot(a) + m_tm1.dot(bv) + m),
                            p + u_tm1.dot(b),
                            p,
                            u_t.dot(a) + z_t.dot(b),
                            iu_t.dot(ia) + iu_tm1.dot(ib),
                        )
                    },
                    sequences = [taps(u, [-1, 0]), z, taps(m_seq, [-1, 0]), taps(iu, [-1, 0])],
                    outputs_info = [h0, m0, None, None, None, None],
                    non_sequences = [a, b, bv, ia, ib],
                );
                Ok((h, m, s, p, v, i))
            }
        "#;
        let (_, fired) = apply(src, Pass::GroupProjections);
        assert!(fired.is_empty(), "{fired:?}");
    }
}
