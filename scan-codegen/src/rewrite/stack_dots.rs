//! Stacking of products: in a step, a sum of products of step values by loop-invariant
//! matrices, `dot(a, B) + dot(c, D)` (more terms, any order or association of the `+`
//! chain, a product inside a gemm's `DotAdd` too), becomes one product
//! `dot(concatenate([a, c], axis=-1), concatenate([B, D], axis=0))`: the matrices stacked
//! by rows once before the loop (`Op::StackRows`, a new non-sequence, so the stack is
//! packed once like any invariant operand) and the left operands put side by side in the
//! step (`Op::StackedDot`). The scan tutorial's TUTORIAL_RNN with output feedback,
//! `x_tm1.dot(w) + .. + y_tm1.dot(w_feedback)`, makes one vector-matrix product per step
//! instead of two and an addition, as a hand-written loop does.
//!
//! Applies to products `dot(x, w)` used only by the sum, with `w` a loop-invariant float
//! matrix (a non-sequence, or computed from non-sequences alone: computed before the
//! loop), `x` a vector or a matrix (the terms of one rank stacked together) that reads an
//! output tap, all of the sum's dtype. A product of sequence rows alone is push_out_seq's,
//! which runs before and takes it out of the loop as one product over every step.
//!
//! numpy's broadcasting makes the sum legal where the stacked product is not (`B` of one
//! column beside `D` of n; `a` of one row beside `c` of m rows), and sizes are known only
//! at run time: `StackRows` never fails (an empty matrix when the column counts differ),
//! and the stacked product compares the shapes at every step (a few integers), computing
//! the products and their sum as before when they do not fit. The one product adds the
//! terms in another order, and the rest of the chain after them: rounding differs
//! (`eval::rewrites_agree` compares within its tolerance). Not done: differences
//! (`dot(a, B) - dot(c, D)`), transposed products (`dot(B, a)`).

use std::collections::{HashMap, HashSet};

use super::edit::{add_non_sequence, depends_on, outer_input};
use super::lift::{self, Source};
use super::{each_scan, short, Log};
use crate::ir::graph::short_label;
use crate::ir::{ElemOp, Graph, Node, NodeId, Op, ScanOp, Type};

pub fn run(g: &mut Graph, log: &mut Log) {
    each_scan(g, |g, op, inputs, label| {
        for what in stack(g, op, inputs) {
            log.fired(format!(
                "{label}: {what}, the matrices stacked once before the loop (the products \
                 added as before when their shapes would broadcast)"
            ));
        }
    });
    g.normalize();
}

/// A term of a sum: an addend read by the sum alone (`Dot`: usually a product, but any
/// node; group_projections reads it so), or the product of a gemm's `DotAdd` in the sum.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Term {
    Dot(NodeId),
    InDotAdd(NodeId),
}

/// A product that can be stacked: `dot(x, w)`, `w` invariant; `label` names it in errors.
struct Product {
    term: Term,
    x: NodeId,
    w: NodeId,
    label: String,
}

/// A sum to rewrite: its last addition, the additions it is made of, and the products
/// stacked together (each group: left operands of one rank, two or more).
struct Sum {
    root: NodeId,
    inner: HashSet<NodeId>,
    groups: Vec<Vec<Product>>,
}

/// Stacks the products of `op`'s step; returns what the log says of each stacking.
fn stack(g: &mut Graph, op: &mut ScanOp, scan_inputs: &mut Vec<NodeId>) -> Vec<String> {
    let sums = find(&op.step, op);
    let src = invariant_sources(&op.step, op);
    let mut copied = HashMap::new();
    let mut said = Vec::new();
    for sum in sums {
        let mut replaced: HashMap<Term, Option<NodeId>> = HashMap::new();
        for products in sum.groups {
            // The stacked matrix, before the loop (each `w` copied there unless an input).
            let outer: Vec<NodeId> = products
                .iter()
                .map(|p| {
                    let inputs: &[NodeId] = scan_inputs;
                    let mut leaf = |_: &mut Graph, id: NodeId| outer_input(op, inputs, id);
                    lift::copy_whole(g, &op.step, &src, p.w, &mut leaf, &mut copied)
                })
                .collect();
            let texts = |ids: &mut dyn Iterator<Item = NodeId>, sep: &str| {
                let texts: Vec<String> =
                    ids.map(|id| short_label(&op.step.node(id).label)).collect();
                texts.join(sep)
            };
            let stack_label = format!("[{}]", texts(&mut products.iter().map(|p| p.w), "; "));
            let side_by_side = format!("[{}]", texts(&mut products.iter().map(|p| p.x), ", "));
            let first = op.step.node(products[0].x);
            let (x_ty, span) = (first.ty, first.span);
            let matrix = Type::new(x_ty.dtype, 2);
            let stacked = g.add(Node {
                op: Op::StackRows,
                inputs: outer,
                ty: matrix,
                span,
                label: stack_label.clone(),
            });
            let s = add_non_sequence(op, scan_inputs, stacked, matrix, &stack_label, span);
            // The one product, in the first product's place in the sum.
            let labels: Vec<String> = products.iter().map(|p| p.label.clone()).collect();
            let mut inputs = vec![s];
            inputs.extend(products.iter().map(|p| p.x));
            inputs.extend(products.iter().map(|p| p.w));
            let product = op.step.add(Node {
                op: Op::StackedDot {
                    products: labels.clone(),
                },
                inputs,
                ty: x_ty,
                span,
                label: labels.join(" + "),
            });
            replaced.extend(products.iter().map(|p| (p.term, None)));
            replaced.insert(products[0].term, Some(product));
            let quoted: Vec<String> = labels.iter().map(|l| short(l)).collect();
            said.push(format!(
                "{}: one product {side_by_side} · {stack_label}",
                quoted.join(" + ")
            ));
        }
        if let Some(new) = rebuild(&mut op.step, sum.root, &sum.inner, &replaced) {
            op.step.replace_uses(sum.root, new);
        }
    }
    op.step.normalize();
    said
}

/// Which step nodes are loop-invariant (non-sequences, constants and what only they make).
fn invariant_sources(step: &Graph, op: &ScanOp) -> Vec<Source> {
    let first_ns = op.first_non_sequence_step_input();
    lift::sources(step, |id| match step.node(id).op {
        Op::Input { index, .. } if index >= first_ns => Some(Source::Invariant),
        Op::Input { .. } => Some(Source::Variant),
        _ => None,
    })
}

/// The sums of the step (chains of additions, each read only by the next) with products
/// to stack.
fn find(step: &Graph, op: &ScanOp) -> Vec<Sum> {
    let users = step.consumers();
    let src = invariant_sources(step, op);
    let taps = &step.inputs[op.first_output_tap_input(0)..op.first_non_sequence_step_input()];
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
        let stackable = |t: &Term| -> Option<Product> {
            let (x, w, label, ty) = match *t {
                Term::Dot(p) => {
                    let n = step.node(p);
                    if !matches!(n.op, Op::Dot) || step.outputs.contains(&p) {
                        return None;
                    }
                    (n.inputs[0], n.inputs[1], n.label.clone(), n.ty)
                }
                Term::InDotAdd(d) => {
                    let n = step.node(d);
                    let (x, w) = (n.inputs[1], n.inputs[2]);
                    let text = format!("dot({}, {})", step.node(x).label, step.node(w).label);
                    (x, w, text, Type::new(dtype, step.ty(x).rank))
                }
            };
            let (tx, tw) = (step.ty(x), step.ty(w));
            let fits = src[w.0] == Source::Invariant
                && tw == Type::new(dtype, 2)
                && matches!(tx.rank, 1 | 2)
                && tx.dtype == dtype
                && ty == tx
                && depends_on(step, x, taps);
            fits.then_some(Product {
                term: *t,
                x,
                w,
                label,
            })
        };
        let (vectors, matrices): (Vec<Product>, Vec<Product>) = terms
            .iter()
            .filter_map(stackable)
            .partition(|p| step.ty(p.x).rank == 1);
        let groups: Vec<Vec<Product>> = [vectors, matrices]
            .into_iter()
            .filter(|g| g.len() >= 2)
            .collect();
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

/// Whether node `id` is an addition of floats, or a gemm's `c + dot(a, b)`.
pub(super) fn is_sum(g: &Graph, id: NodeId) -> bool {
    let node = g.node(id);
    node.ty.dtype.is_float()
        && match node.op {
            Op::Elemwise(ElemOp::Add) => node.inputs.len() == 2,
            Op::DotAdd { subtract } => !subtract,
            _ => false,
        }
}

/// Whether sum `id` continues the sum `user`: read only there, as an addend.
pub(super) fn continues(g: &Graph, users: &[Vec<NodeId>], id: NodeId, user: NodeId) -> bool {
    is_sum(g, id)
        && is_sum(g, user)
        && users[id.0] == [user]
        && !g.outputs.contains(&id)
        && g.ty(id).dtype == g.ty(user).dtype
        && match g.node(user).op {
            Op::DotAdd { .. } => g.node(user).inputs[0] == id,
            _ => true,
        }
}

/// The products of sum `id`, left to right (addends read by the sum alone that are not
/// sums continuing it, and the products of its `DotAdd`s), and the sums continuing it.
pub(super) fn collect(
    g: &Graph,
    users: &[Vec<NodeId>],
    id: NodeId,
    terms: &mut Vec<Term>,
    inner: &mut HashSet<NodeId>,
) {
    let node = g.node(id);
    let addends = match node.op {
        Op::DotAdd { .. } => &node.inputs[..1],
        _ => &node.inputs[..],
    };
    for &x in addends {
        if continues(g, users, x, id) {
            inner.insert(x);
            collect(g, users, x, terms, inner);
        } else if users[x.0] == [id] {
            terms.push(Term::Dot(x));
        }
    }
    if matches!(node.op, Op::DotAdd { .. }) {
        terms.push(Term::InDotAdd(id));
    }
}

/// Sum `id` rebuilt with each product of `replaced` replaced (`Some`) or left out
/// (`None`), its association otherwise kept (`inner`: the sums continuing it); `None`
/// when nothing is left. Unchanged parts keep their nodes.
pub(super) fn rebuild(
    g: &mut Graph,
    id: NodeId,
    inner: &HashSet<NodeId>,
    replaced: &HashMap<Term, Option<NodeId>>,
) -> Option<NodeId> {
    let node = g.node(id).clone();
    let operand = |g: &mut Graph, x: NodeId| match replaced.get(&Term::Dot(x)) {
        Some(&r) => r,
        None if inner.contains(&x) => rebuild(g, x, inner, replaced),
        None => Some(x),
    };
    let add = |g: &mut Graph, x: NodeId, y: NodeId| {
        let rank = g.ty(x).rank.max(g.ty(y).rank);
        g.add(Node {
            op: Op::Elemwise(ElemOp::Add),
            inputs: vec![x, y],
            ty: Type::new(node.ty.dtype, rank),
            ..node.clone()
        })
    };
    match (&node.op, &node.inputs[..]) {
        (Op::DotAdd { .. }, &[c, a, b]) => {
            let c2 = operand(g, c);
            match (c2, replaced.get(&Term::InDotAdd(id)).copied()) {
                (Some(c2), None) if c2 == c => Some(id),
                (Some(c2), None) => Some(g.add(Node {
                    inputs: vec![c2, a, b],
                    ..node.clone()
                })),
                // The addend is gone, the product stays: the product alone.
                (None, None) => {
                    let rank = (g.ty(a).rank + g.ty(b).rank).saturating_sub(2);
                    Some(g.add(Node {
                        op: Op::Dot,
                        inputs: vec![a, b],
                        ty: Type::new(node.ty.dtype, rank),
                        ..node.clone()
                    }))
                }
                (c2, Some(None)) => c2,
                (Some(c2), Some(Some(p))) => Some(add(g, c2, p)),
                (None, Some(Some(p))) => Some(p),
            }
        }
        (_, &[x, y]) => match (operand(g, x), operand(g, y)) {
            (Some(x2), Some(y2)) if (x2, y2) == (x, y) => Some(id),
            (Some(x2), Some(y2)) => Some(add(g, x2, y2)),
            (one, None) | (None, one) => one,
        },
        _ => Some(id),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{for_each_graph, Log, Pass};

    /// The TUTORIAL_RNN's arguments: 6 steps, n_u = 3, n_x = 4, n_y = 2; `feedback_columns` is
    /// w_feedback's (n_x, or 1: its product then broadcasts over x's).
    fn rnn_args(feedback_columns: usize) -> Vec<Value> {
        vec![
            mat(10, 3, 0.1),
            mat(3, 4, 0.2),
            vec1(&[0.3, -0.4]),
            mat(4, 4, 0.5),
            mat(3, 4, 0.6),
            mat(3, 4, 0.7),
            mat(2, feedback_columns, 0.8),
            mat(4, 2, 0.9),
        ]
    }

    #[test]
    fn fires_on_the_tutorial_rnn_after_the_push_outs() {
        let (ir, fired) = apply_passes(TUTORIAL_RNN, &[Pass::PushOutSeq, Pass::StackDots]);
        let stacked: Vec<&String> = fired
            .iter()
            .filter(|f| f.starts_with("stack_dots"))
            .collect();
        assert_eq!(stacked.len(), 1, "{fired:?}");
        assert!(
            stacked[0].contains("`x_tm1.dot(w)` + `y_tm1.dot(w_feedback)`: one product [x_tm1, y_tm1] · [w; w_feedback]"),
            "{fired:?}"
        );
        // The stack before the loop, one product of the two states in the step; the other
        // product is y's.
        assert!(
            ir.contains("\n  %10 = stack_rows(%3, %6) : matrix of f64"),
            "{ir}"
        );
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
        assert_same_results(TUTORIAL_RNN, "rnn", &rnn_args(4));
    }

    #[test]
    fn leaves_the_sequence_products_to_push_out_seq() {
        // Alone, the pass sees the products of u's rows too: it stacks only the states'.
        let (ir, fired) = apply(TUTORIAL_RNN, Pass::StackDots);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("[x_tm1, y_tm1] · [w; w_feedback]"),
            "{fired:?}"
        );
        let step = step_lines(&ir);
        assert_eq!(
            step.iter().filter(|l| l.contains("= dot(")).count(),
            3,
            "{ir}"
        );
    }

    #[test]
    fn products_whose_sum_broadcasts_are_added_as_before() {
        // w_feedback of one column: y_tm1.dot(w_feedback) has one element, broadcast over
        // x's four. The pass fires (sizes are run-time); the step's guard adds the products
        // (stacked, the product would fail: the evaluator's `Err` would differ).
        let (_, fired) = apply(TUTORIAL_RNN, Pass::StackDots);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_same_results(TUTORIAL_RNN, "rnn", &rnn_args(1));
        assert_agrees(
            TUTORIAL_RNN,
            &rewritten(TUTORIAL_RNN, &[Pass::StackDots]),
            rnn_args(1),
        );
    }

    #[test]
    fn a_sum_of_three_products_in_any_association_is_one_product() {
        let src = r#"
            pub fn f(x0: ArrayView2<f64>, y0: ArrayView1<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>,
                     c: ArrayView2<f64>, d: ArrayView1<f64>, n: usize) -> Result<(Array2<f64>, Array2<f64>)> {
                let (x, y) = scan(
                    |x_tm2, x_tm1, y_tm1, a, b, c, d| {
                        let s = x_tm1.dot(b) + (d + (y_tm1.dot(c) + x_tm2.dot(a)));
                        (tanh(s), sin(y_tm1) * 0.5)
                    },
                    outputs_info = [taps(x0, [-2, -1]), y0],
                    non_sequences = [a, b, c, d],
                    n_steps = n,
                );
                Ok((x, y))
            }
        "#;
        let (ir, fired) = apply(src, Pass::StackDots);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("one product [x_tm1, y_tm1, x_tm2] · [b; c; a]"),
            "{fired:?}"
        );
        let step = step_lines(&ir);
        assert!(step.iter().all(|l| !l.contains("= dot(")), "{ir}");
        let args = vec![
            mat(2, 3, 0.1),
            vec1(&[0.2, -0.3]),
            mat(3, 3, 0.4),
            mat(3, 3, 0.5),
            mat(2, 3, 0.6),
            vec1(&[0.1, 0.2, 0.3]),
            Value::from(7i64),
        ];
        assert_same_results(src, "f", &args);
    }

    #[test]
    fn stacks_the_product_of_a_gemm_dot_add() {
        // After gemm: `x_tm1.dot(w) + y_tm1.dot(v)` is `dot_add(dot(x_tm1, w), y_tm1, v)`
        // (a later round sees it so).
        let src = r#"
            pub fn f(x0: ArrayView1<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>, v: ArrayView2<f64>,
                     n: usize) -> Result<(Array2<f64>, Array2<f64>)> {
                let (x, y) = scan(
                    |x_tm1, y_tm1, w, v| (x_tm1.dot(w) + y_tm1.dot(v), cos(y_tm1)),
                    outputs_info = [x0, y0],
                    non_sequences = [w, v],
                    n_steps = n,
                );
                Ok((x, y))
            }
        "#;
        let (ir, _) = apply(src, Pass::Gemm);
        assert!(ir.contains("= dot_add("), "{ir}");
        let f = rewritten(src, &[Pass::Gemm, Pass::StackDots]);
        let ir = crate::ir::print::function(&f);
        assert!(
            ir.contains("= stacked_dot(") && !ir.contains("dot_add"),
            "{ir}"
        );
        for feedback_columns in [3, 1] {
            let args = vec![
                vec1(&[0.1, -0.2, 0.3]),
                vec1(&[0.5, 0.25]),
                mat(3, 3, 0.4),
                mat(2, feedback_columns, 0.5),
                Value::from(5i64),
            ];
            assert_agrees(src, &f, args);
        }
    }

    #[test]
    fn stacks_matrices_of_one_row_count_and_adds_others() {
        // A batch of states; `h[..1]` has one row, which numpy broadcasts over the batch:
        // stacked (one row count) only at a batch of 1.
        let src = r#"
            pub fn f(h0: ArrayView2<f64>, g0: ArrayView2<f64>, w: ArrayView2<f64>, v: ArrayView2<f64>,
                     n: usize) -> Result<(Array3<f64>, Array3<f64>)> {
                let (h, g) = scan(
                    |h, g, w, v| (tanh(h.dot(w) + g.dot(v)), tanh(g.dot(w) + h[..1].dot(v))),
                    outputs_info = [h0, g0],
                    non_sequences = [w, v],
                    n_steps = n,
                );
                Ok((h, g))
            }
        "#;
        let (_, fired) = apply(src, Pass::StackDots);
        assert_eq!(fired.len(), 2, "{fired:?}");
        for batch in [3, 1] {
            let args = vec![
                mat(batch, 2, 0.1),
                mat(batch, 2, 0.2),
                mat(2, 2, 0.3),
                mat(2, 2, 0.4),
                Value::from(4i64),
            ];
            assert_same_results(src, "f", &args);
        }
    }

    #[test]
    fn leaves_sums_it_cannot_stack() {
        // x: a matrix that changes from step to step; i: integers; a: a vector product
        // beside a matrix product (the sum broadcasts whatever the sizes); b: f64 beside
        // f32 (a cast between); c: products of sequence rows; d: a product also returned,
        // and a difference.
        let src = r#"
            pub fn f(x0: ArrayView1<f64>, m0: ArrayView2<f64>, z0: ArrayView1<f32>, i0: ArrayView1<i64>,
                     u: ArrayView2<f64>, w: ArrayView2<f64>, v: ArrayView2<f64>, w32: ArrayView2<f32>,
                     wi: ArrayView2<i64>, vi: ArrayView2<i64>)
                -> Result<(Array2<f64>, Array3<f64>, Array2<f32>, Array2<i64>, Array3<f64>, Array2<f64>,
                           Array2<f64>, Array2<f64>, Array2<f64>)> {
                let (x, m, z, i, a, b, c, p, d) = scan(
                    |u_t, x, m, z, i, w, v, w32, wi, vi| {
                        let p = x.dot(w);
                        (
                            tanh(x.dot(w * x[0]) + x.dot(v)),
                            m,
                            z.dot(w32),
                            i.dot(wi) + i.dot(vi),
                            x.dot(w) + m.dot(v),
                            x.dot(w) + z.dot(w32),
                            u_t.dot(w) + u_t.dot(v),
                            p,
                            p + x.dot(v) - x.dot(w),
                        )
                    },
                    sequences = u,
                    outputs_info = [x0, m0, z0, i0, None, None, None, None, None],
                    non_sequences = [w, v, w32, wi, vi],
                );
                Ok((x, m, z, i, a, b, c, p, d))
            }
        "#;
        let (_, fired) = apply(src, Pass::StackDots);
        assert!(fired.is_empty(), "{fired:?}");
    }

    /// `f` (`src`'s first function rewritten) evaluates `args` as `src` does without
    /// rewrites, within rounding.
    fn assert_agrees(src: &str, f: &crate::ir::Function, args: Vec<Value>) {
        let reference = crate::compile_to_ir(src).unwrap_or_else(|e| panic!("{e}"));
        let want = crate::eval::eval_function(&reference[0], args.clone()).unwrap();
        let got = crate::eval::eval_function(f, args).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            crate::eval::assert_close(g, w).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// `src`'s first function after `passes` run once each, in the order given (not
    /// [`super::super::ORDER`]'s).
    fn rewritten(src: &str, passes: &[Pass]) -> crate::ir::Function {
        let mut functions = crate::compile_to_ir(src).unwrap_or_else(|e| panic!("{e}"));
        let mut f = functions.remove(0);
        for &pass in passes {
            let mut log = Log {
                pass,
                fired: Vec::new(),
            };
            for_each_graph(&mut f.graph, &mut |g| pass.run(g, &mut log));
        }
        f
    }
}
