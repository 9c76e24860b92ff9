//! Slice operands: a slice of an elementwise result, `z[(.., a..b)]` of `z = x + y`, is
//! computed from the same slices of its operands, `x[(.., a..b)] + y[(.., a..b)]`, when
//! every use of `z` is such a slice (PyTensor's `local_subtensor_lift`, for any number of
//! slices). An LSTM's gate block `z = x_t.dot(w_x) + h.dot(w_h) + b`, cut into its four
//! gates, is then never stored: fusion takes each gate's sum into the pass of the
//! activations that read it (the state `f * c + i * g` and the output `o * tanh(c_t)`
//! become one pass over thirteen arrays), where the block was a pass of its own, written
//! to memory and read back.
//!
//! The chain of elementwise operations under `z` that only `z` reads (operations of `z`'s
//! rank) moves with it; its array operands are sliced after numpy's broadcasting
//! (`Op::BroadcastArrays`, a view): a bias row `b` is sliced as the sum is, an axis of
//! length 1 that the sum repeats is not sliced, and shapes that do not broadcast give the
//! error the operation gave. Scalars are not sliced. Each element is computed by the same
//! operations in the same order: results are bit-identical. Where two slices overlap, the
//! elements they share are computed once for each.
//!
//! Applies to elementwise operations and casts of rank >= 1, not returned, whose every use
//! is a view of basic slices (`z[a..b]`, `z[(.., a..b)]`: `PathStep::At` and
//! `PathStep::Slice` steps). Not to indexing that removes an axis, strided slices or new
//! axes.

use super::fusion::{array_leaves, elementwise, grow};
use super::{short, Log};
use crate::ir::{Graph, Node, NodeId, Op, PathStep};

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let users = g.consumers();
    let roots: Vec<NodeId> = (0..g.nodes.len())
        .map(NodeId)
        .filter(|&id| sliced_only(g, id, &users))
        .collect();
    // A chain under one root is read only inside it, so no root is in another's chain.
    for root in roots {
        let chain = chain(g, root, &users);
        let leaves = array_leaves(g, &chain);
        if leaves.is_empty() {
            continue;
        }
        let root_node = g.node(root).clone();
        // Each array operand broadcast to the result's shape (numpy's `broadcast_arrays`).
        let broadcast: Vec<NodeId> = (0..leaves.len())
            .map(|index| {
                g.add(Node {
                    op: Op::BroadcastArrays { index },
                    inputs: leaves.clone(),
                    ty: g.ty(leaves[index]).with_rank(root_node.ty.rank),
                    ..root_node.clone()
                })
            })
            .collect();
        let slices = users[root.0].clone();
        for &slice in &slices {
            let s = g.node(slice).clone();
            let mut map: Vec<(NodeId, NodeId)> = Vec::new();
            for (&leaf, &b) in leaves.iter().zip(&broadcast) {
                let mut inputs = s.inputs.clone();
                inputs[0] = b;
                let part = g.add(Node {
                    inputs,
                    ty: g.ty(b),
                    ..s.clone()
                });
                map.push((leaf, part));
            }
            // The chain again on the slices, in topological order (the graph is
            // normalized, so ids are).
            for &id in chain.iter().rev() {
                let n = g.node(id).clone();
                let inputs = n
                    .inputs
                    .iter()
                    .map(|i| map.iter().find(|(from, _)| from == i).map_or(*i, |m| m.1))
                    .collect();
                let copy = g.add(Node {
                    inputs,
                    ty: s.ty.with_dtype(n.ty.dtype),
                    ..n
                });
                map.push((id, copy));
            }
            let new_root = map.last().map_or(slice, |m| m.1);
            g.replace_uses(slice, new_root);
        }
        log.fired(format!(
            "{}: {} slices computed from slices of its operands",
            short(&root_node.label),
            slices.len()
        ));
    }
    g.normalize();
}

/// Whether `id` is elementwise, not returned, and read only through basic slices.
fn sliced_only(g: &Graph, id: NodeId, users: &[Vec<NodeId>]) -> bool {
    let basic = |u: &NodeId| {
        let n = g.node(*u);
        let Op::Subtensor { path } = &n.op else {
            return false;
        };
        n.inputs[0] == id
            && !n.inputs[1..].contains(&id)
            && path
                .iter()
                .all(|p| matches!(p, PathStep::At(_) | PathStep::Slice { .. }))
    };
    elementwise(g, id)
        && !g.outputs.contains(&id)
        && !users[id.0].is_empty()
        && users[id.0].iter().all(basic)
}

/// `root` and the elementwise operations of its rank under it that only the chain reads,
/// in decreasing id order (`root` first).
fn chain(g: &Graph, root: NodeId, users: &[Vec<NodeId>]) -> Vec<NodeId> {
    let rank = g.ty(root).rank;
    let mut chain = grow(g, root, users, |_, operand| g.ty(operand).rank == rank);
    chain.sort_by(|a, b| b.cmp(a));
    chain
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, apply_passes, assert_same_results, mat, vec1};
    use super::super::Pass;

    /// An LSTM step's gate block cut into its four gates.
    const GATES: &str = "pub fn cell(x: ArrayView2<f64>, d: ArrayView2<f64>, b: ArrayView1<f64>, c: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
        let z = x + d + b;
        let n = c.shape[1];
        let i = sigmoid(z[(.., ..n)]);
        let f = sigmoid(z[(.., n..2 * n)]);
        let g = tanh(z[(.., 2 * n..3 * n)]);
        let o = sigmoid(z[(.., 3 * n..)]);
        let c_t = f * c + i * g;
        Ok((o * tanh(c_t), c_t))
    }";

    fn gate_args(rows: usize, n: usize, bias: usize) -> Vec<crate::eval::Value> {
        let b: Vec<f64> = (0..bias).map(|j| (j as f64 * 0.3).cos()).collect();
        vec![
            mat(rows, 4 * n, 0.1),
            mat(rows, 4 * n, 0.2),
            vec1(&b),
            mat(rows, n, 0.3),
        ]
    }

    #[test]
    fn an_lstm_gate_block_is_never_stored() {
        let (ir, fired) = apply(GATES, Pass::SliceOperands);
        assert_eq!(
            fired,
            ["slice_operands: `x + d + b`: 4 slices computed from slices of its operands"]
        );
        // Three operands broadcast, each sliced four times; no add of whole blocks is left.
        assert_eq!(ir.matches("broadcast_arrays[").count(), 3, "{ir}");
        assert_eq!(ir.matches("= add(").count(), 8 + 1, "{ir}");
        // With fusion: one pass over the thirteen arrays (twelve slices and `c`) gives the
        // cell state and the output.
        let (ir, _) = apply_passes(GATES, &[Pass::SliceOperands, Pass::Fusion]);
        assert_eq!(ir.matches("= fused(").count(), 1, "{ir}");
        assert_eq!(ir.matches("= part#").count(), 2, "{ir}");
        let pass = ir
            .lines()
            .find(|l| l.contains("= fused("))
            .unwrap_or_default();
        assert_eq!(pass.matches('%').count(), 1 + 13, "{pass}");
        for (rows, n, bias) in [(3, 4, 16), (2, 5, 20), (3, 4, 1), (1, 3, 12)] {
            assert_same_results(GATES, "cell", &gate_args(rows, n, bias));
        }
    }

    #[test]
    fn shapes_that_do_not_broadcast_fail_as_before() {
        // A bias of 3 against 16 columns: an error with and without the rewrite (the
        // slices alone, 4 columns each, would not have seen it).
        assert_same_results(GATES, "cell", &gate_args(3, 4, 3));
    }

    #[test]
    fn leaves_other_uses_strided_slices_and_indexing() {
        for src in [
            // z read whole besides its slices.
            "pub fn f(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
                let z = x + y;
                Ok((z[(.., ..2)] * 2.0, z))
            }",
            // A strided slice, and an index removing an axis.
            "pub fn f(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
                let z = x + y;
                let w = x * y;
                Ok((z[(.., slice(None, None, 2))] * 2.0, w[0] * 2.0))
            }",
            // Not elementwise.
            "pub fn f(x: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<Array2<f64>> {
                let z = dot(x, y);
                Ok(z[(.., ..2)] * 2.0)
            }",
        ] {
            let (_, fired) = apply(src, Pass::SliceOperands);
            assert!(fired.is_empty(), "{fired:?}\n{src}");
        }
    }

    #[test]
    fn a_lower_rank_operation_is_sliced_as_an_operand() {
        // `t` is a row (rank 1) under a matrix sum: it stays whole, computed once, and is
        // broadcast and sliced like `b` would be; `s` has its own cast.
        let src = "pub fn f(x: ArrayView2<f64>, b: ArrayView1<f64>, k: f64) -> Result<(Array2<f64>, Array2<f32>)> {
            let t = exp(b) * k;
            let z = x * 2.0 + t;
            let s = (x - t) as f32;
            Ok((z[(.., 1..3)], s[(1.., ..2)] * 2.0))
        }";
        let (ir, fired) = apply(src, Pass::SliceOperands);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert_eq!(ir.matches("= exp(").count(), 1, "{ir}");
        assert_same_results(
            src,
            "f",
            &[mat(3, 4, 0.5), vec1(&[0.1, 0.2, 0.3, 0.4]), 1.5f64.into()],
        );
    }
}
