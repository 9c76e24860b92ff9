//! Gemm: an addition of a matrix product, `c + dot(a, b)` (either order) or `c - dot(a, b)`,
//! becomes one `DotAdd` node: the product is accumulated onto a copy of `c` by the GEMM
//! itself (BLAS's beta = 1, PyTensor's gemm rewrite), so the product needs no buffer and
//! the addition no pass of its own. A Kalman filter's step is made of these (`F P F^T + Q`,
//! `H P H^T + R`, `y - H x`, `x + K v`, `P - K H P`): on 4 x 4 matrices each separate
//! addition cost as much as the product. When `c` is a matrix in a buffer of its own that
//! nothing else reads (a product before the addition: group_projections' sum of input
//! projections), the emitter accumulates onto that buffer instead of a copy of it
//! (`kernels::dot_add_mm_onto`): a chain of accumulated products fills one buffer.
//!
//! Applies to float products of two matrices, a matrix and a vector or a vector and a
//! matrix, used only by the addition, with `c` of at most the product's rank (the sum has
//! the product's shape, except where a length-1 axis broadcasts at run time, which the
//! kernel handles as the two operations would).
//!
//! Not when the sum's only use is another elementwise operation: fusion then computes the
//! addition inside that pass (an Elman step's `tanh(x_w + dot(h, w) + b)` is one map after
//! the product), which costs less than a copy of `c` before the product. The product's
//! rounding may differ from the product made first and then added (the backend adds in
//! blocks): `eval::rewrites_agree` compares within its tolerance.

use super::{short, Log};
use crate::ir::{ElemOp, Graph, Node, NodeId, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let users = g.consumers();
    let mut found = Vec::new();
    for i in 0..g.nodes.len() {
        let id = NodeId(i);
        if let Some(parts) = candidate(g, id, &users) {
            found.push((id, parts));
        }
    }
    // An addend that is itself a sum rewritten here reads the new node.
    let mut replaced = std::collections::HashMap::new();
    for (id, (c, product, subtract)) in found {
        let c = replaced.get(&c).copied().unwrap_or(c);
        let node = g.node(id).clone();
        let [a, b] = [g.node(product).inputs[0], g.node(product).inputs[1]];
        let fused = g.add(Node {
            op: Op::DotAdd { subtract },
            inputs: vec![c, a, b],
            ..node.clone()
        });
        g.replace_uses(id, fused);
        replaced.insert(id, fused);
        log.fired(format!(
            "{}: the product accumulated onto its addend (no buffer, no pass for the addition)",
            short(&node.label)
        ));
    }
    g.normalize();
}

/// `(c, product, subtract)` when node `id` is `c ± product` that the rewrite turns into a
/// `DotAdd`.
fn candidate(g: &Graph, id: NodeId, users: &[Vec<NodeId>]) -> Option<(NodeId, NodeId, bool)> {
    let node = g.node(id);
    let Op::Elemwise(op @ (ElemOp::Add | ElemOp::Sub)) = node.op else {
        return None;
    };
    if !node.ty.dtype.is_float() || node.ty.rank == 0 {
        return None;
    }
    let [x, y] = node.inputs[..] else {
        return None;
    };
    let is_product = |p: NodeId| {
        let n = g.node(p);
        matches!(n.op, Op::Dot)
            && n.ty == node.ty
            && matches!(
                (g.ty(n.inputs[0]).rank, g.ty(n.inputs[1]).rank),
                (2, 2) | (2, 1) | (1, 2)
            )
            && users[p.0] == [id]
            && !g.outputs.contains(&p)
    };
    let (c, product) = if is_product(y) {
        (x, y)
    } else if op == ElemOp::Add && is_product(x) {
        (y, x)
    } else {
        return None;
    };
    if c == product || g.ty(c).dtype != node.ty.dtype || g.ty(c).rank > node.ty.rank {
        return None;
    }
    // Fusion computes an addition inside the elementwise pass that reads it.
    let fused_later = !g.outputs.contains(&id)
        && matches!(&users[id.0][..], [u] if matches!(g.node(*u).op, Op::Elemwise(_) | Op::Cast) && g.ty(*u).rank >= 1);
    if fused_later {
        return None;
    }
    Some((c, product, op == ElemOp::Sub))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Pass;

    const KALMAN: &str = r#"
        fn step(x: ArrayView1<f64>, p: ArrayView2<f64>, f: ArrayView2<f64>, q: ArrayView2<f64>,
                y: ArrayView1<f64>, h: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>, Array1<f64>)> {
            let p_pred = dot(dot(f, p), f.t()) + q;
            let v = y - dot(h, x);
            let w = dot(x, f) + 1.0;
            Ok((p_pred, v, w))
        }
    "#;

    #[test]
    fn fires_on_sums_and_differences_of_products() {
        let (ir, fired) = apply(KALMAN, Pass::Gemm);
        assert_eq!(fired.len(), 3, "{fired:?}");
        assert_eq!(ir.matches("dot_add").count(), 2, "{ir}");
        assert_eq!(ir.matches("dot_sub").count(), 1, "{ir}");
        // Only the inner product of `dot(dot(f, p), f.t())` keeps a buffer.
        assert_eq!(ir.matches("= dot(").count(), 1, "{ir}");
        assert_same_results(
            KALMAN,
            "step",
            &[
                vec1(&[0.5, -1.0, 2.0]),
                mat(3, 3, 0.1),
                mat(3, 3, 0.7),
                mat(3, 3, 1.3),
                vec1(&[1.0, 2.0]),
                mat(2, 3, 2.1),
            ],
        );
    }

    #[test]
    fn leaves_an_addition_that_fusion_takes() {
        // `+ b` then tanh: fusion's one pass reads the product; a product used twice keeps
        // its buffer; a difference with the product on the left is not a gemm.
        let src = r#"
            fn f(h: ArrayView2<f64>, w: ArrayView2<f64>, b: ArrayView1<f64>, c: ArrayView2<f64>)
                -> Result<(Array2<f64>, Array2<f64>, Array2<f64>)> {
                let t = tanh(dot(h, w) + b);
                let d = dot(h, w) * 2.0;
                let e = d + dot(c, w);
                let g = dot(c, h) - c;
                Ok((t, e, g + d))
            }
        "#;
        let (_, fired) = apply(src, Pass::Gemm);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].contains("d + dot(c, w)"), "{fired:?}");
        assert_same_results(
            src,
            "f",
            &[
                mat(3, 3, 0.1),
                mat(3, 3, 0.7),
                vec1(&[1.0, 2.0, 3.0]),
                mat(3, 3, 1.9),
            ],
        );
    }

    #[test]
    fn a_sum_whose_addend_is_a_rewritten_sum_fires_once_each() {
        // P = F P F^T + Q, then P - K H P: the second's addend is the first's result.
        let src = r#"
            fn f(p: ArrayView2<f64>, f: ArrayView2<f64>, q: ArrayView2<f64>, k: ArrayView2<f64>) -> Result<Array2<f64>> {
                let p_pred = dot(dot(f, p), f.t()) + q;
                Ok(p_pred - dot(k, p_pred))
            }
        "#;
        let (ir, fired) = apply(src, Pass::Gemm);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert!(!ir.contains("= add") && !ir.contains("= sub"), "{ir}");
        assert_same_results(
            src,
            "f",
            &[
                mat(3, 3, 0.1),
                mat(3, 3, 0.7),
                mat(3, 3, 1.3),
                mat(3, 3, 1.9),
            ],
        );
    }

    #[test]
    fn leaves_integer_products_and_scalars() {
        let src = r#"
            fn f(a: ArrayView2<i64>, b: ArrayView2<i64>, u: ArrayView1<f64>) -> Result<(Array2<i64>, f64)> {
                Ok((a + dot(a, b), 1.0 + dot(u, u)))
            }
        "#;
        assert!(apply(src, Pass::Gemm).1.is_empty());
    }
}
