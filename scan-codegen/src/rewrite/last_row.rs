//! Last row: `concatenate([first[None], rows])[-1]` becomes `Op::LastOr(first, rows)`, a
//! view of `rows`' last row, or of `first` when `rows` has none: no copy of either. grad
//! reads an accumulator's final value so (`grad::scan::last_or`: the sum of a weight's
//! adjoint over the steps, or its initial zeros when no step ran), and the concatenation
//! copied both, twice the weight's size, before the one row was read.
//!
//! Exact: the same values (the same elements, read in place) and the same errors (rows
//! whose shape is not `first`'s stop the program as the concatenation did, with or without
//! rows). The concatenation stays while anything else reads it.

use super::{short, Log};
use crate::ir::{Graph, Literal, NodeId, Op, PathStep};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let mut found = Vec::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if let Some((first, rows)) = last_of_concatenation(g, &node.op, &node.inputs) {
            found.push((i, first, rows));
        }
    }
    for (i, first, rows) in found {
        let node = &mut g.nodes[i];
        node.op = Op::LastOr;
        node.inputs = vec![first, rows];
        log.fired(format!(
            "{}: the last row of a concatenation read in place",
            short(&node.label)
        ));
    }
    g.normalize();
}

/// `(first, rows)` when a node of `op` on `inputs` is `concatenate([first[None], rows])[-1]`
/// (axis 0, the index the constant -1).
fn last_of_concatenation(g: &Graph, op: &Op, inputs: &[NodeId]) -> Option<(NodeId, NodeId)> {
    let Op::Subtensor { path } = op else {
        return None;
    };
    let (&[PathStep::Index], &[joined, index]) = (&path[..], inputs) else {
        return None;
    };
    if !matches!(g.node(index).op, Op::Const(Literal::Int(-1))) {
        return None;
    }
    let concat = g.node(joined);
    let (Op::Concatenate { axis: 0 }, &[head, rows]) = (&concat.op, &concat.inputs[..]) else {
        return None;
    };
    let head = g.node(head);
    match (&head.op, &head.inputs[..]) {
        (Op::Subtensor { path }, &[first]) if path[..] == [PathStep::NewAxis] => {
            Some((first, rows))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Pass;

    /// The gradient of an accumulation through a weight: grad reads the weight's adjoint as
    /// the last row of its sums (or its zeros when no step ran).
    const GRAD: &str = "pub fn f(x: ArrayView2<f64>, w: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
        let h = scan(|x_t, h, w| tanh(x_t + h.dot(w)), sequences = x, outputs_info = h0, non_sequences = w);
        let g = grad(sum(h), w);
        Ok(g)
    }";

    #[test]
    fn a_gradients_final_value_is_read_in_place() {
        let (before, _) = apply_passes(GRAD, &[Pass::Dead]);
        assert_eq!(before.matches("concatenate").count(), 2, "{before}");
        let (ir, fired) = apply_passes(GRAD, &[Pass::Dead, Pass::LastRow]);
        assert_eq!(
            fired.iter().filter(|f| f.starts_with("last_row")).count(),
            1,
            "{fired:?}"
        );
        // The history of h that the backward loop reads (`h[t-1]`) stays a concatenation.
        assert!(
            ir.contains("last_or(") && ir.matches("concatenate").count() == 1,
            "{ir}"
        );
        for steps in [3, 1, 0] {
            assert_same_results(
                GRAD,
                "f",
                &[
                    mat(steps, 4, 0.1),
                    mat(4, 4, 0.7),
                    vec1(&[0.1, -0.2, 0.3, 0.4]),
                ],
            );
        }
    }

    /// Written by hand, with rows whose shape is not the first value's: the concatenation's
    /// error, with and without rows; and left alone where the concatenation is read too, or
    /// indexed elsewhere than at -1.
    #[test]
    fn a_users_concatenation_keeps_its_errors_and_other_reads() {
        let src = "pub fn f(a: ArrayView1<f64>, r: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(concatenate([expand_dims(a, 0), r], 0)[-1])
        }";
        let (ir, fired) = apply(src, Pass::LastRow);
        assert_eq!(fired.len(), 1, "{fired:?}\n{ir}");
        let v = vec1(&[1.0, 2.0, 3.0]);
        for rows in [2, 0] {
            assert_same_results(src, "f", &[v.clone(), mat(rows, 3, 0.2)]);
            assert_same_results(src, "f", &[v.clone(), mat(rows, 2, 0.2)]);
        }
        for other in [
            "let c = concatenate([expand_dims(a, 0), r], 0); Ok(c[-1] + c[0])",
            "Ok(concatenate([expand_dims(a, 0), r], 0)[-2])",
            "Ok(concatenate([r, expand_dims(a, 0)], 0)[-1])",
        ] {
            let src = format!(
                "pub fn f(a: ArrayView1<f64>, r: ArrayView2<f64>) -> Result<Array1<f64>> {{ {other} }}"
            );
            let (ir, fired) = apply(&src, Pass::LastRow);
            let expect = usize::from(other.starts_with("let"));
            assert_eq!(fired.len(), expect, "{other}: {fired:?}\n{ir}");
            assert_same_results(&src, "f", &[v.clone(), mat(2, 3, 0.2)]);
        }
    }
}
