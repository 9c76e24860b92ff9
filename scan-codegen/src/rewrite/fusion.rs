//! Elementwise fusion: a chain of elementwise operations on arrays (and casts) becomes one
//! `Fused` node computed in a single pass over memory, with no temporary array between
//! the operations: an LSTM's gate arithmetic `f * c + i * g` is one loop, not three.
//!
//! An operation joins the node that reads it when it is that node's only use (its value
//! is needed nowhere else, nor returned). Broadcasting composes (numpy aligns trailing
//! axes at every level), so the fused node broadcasts its operands directly to the
//! result's shape and fails exactly when one of the operations would have. Each element
//! is computed by the same operations in the same order: results are bit-identical.
//!
//! Never fused: scalar (rank-0) operations, which already are plain Rust locals; anything
//! that is not elementwise; chains reading more than twelve arrays (the widest runtime map).

use std::collections::HashMap;

use super::{short, Log};
use crate::ir::{Graph, Node, NodeId, Op};

/// The widest elementwise map the runtime has (`kernels::map12`).
pub const MAX_ARRAYS: usize = 12;

pub fn run(g: &mut Graph, log: &mut Log) {
    g.normalize();
    let users = g.consumers();
    let mut absorbed = vec![false; g.nodes.len()];
    let mut fused = Vec::new();
    for root in (0..g.nodes.len()).rev().map(NodeId) {
        if absorbed[root.0] || !elementwise(g, root) {
            continue;
        }
        let cluster = grow(g, root, &users, |cluster, operand| {
            let mut grown = cluster.to_vec();
            grown.push(operand);
            array_leaves(g, &grown).len() <= MAX_ARRAYS
        });
        if cluster.len() < 2 {
            continue;
        }
        for id in &cluster {
            absorbed[id.0] = true;
        }
        fused.push(cluster);
    }
    for cluster in &fused {
        let root = cluster[0];
        let (body, leaves) = body_of(g, cluster);
        let node = g.node(root).clone();
        let f = g.add(Node {
            op: Op::Fused(Box::new(body)),
            inputs: leaves,
            ..node.clone()
        });
        g.replace_uses(root, f);
        log.fired(format!(
            "{}: {} elementwise operations in one pass",
            short(&node.label),
            cluster.len()
        ));
    }
    g.normalize();
}

/// Elementwise work on arrays: an operation or cast of rank >= 1.
pub(super) fn elementwise(g: &Graph, id: NodeId) -> bool {
    let n = g.node(id);
    matches!(n.op, Op::Elemwise(_) | Op::Cast) && n.ty.rank >= 1
}

/// `root` and the elementwise operations under it that only the cluster reads (none of
/// them returned), grown through operands, each admitted by `admit(cluster, operand)`;
/// `root` first.
pub(super) fn grow(
    g: &Graph,
    root: NodeId,
    users: &[Vec<NodeId>],
    admit: impl Fn(&[NodeId], NodeId) -> bool,
) -> Vec<NodeId> {
    let mut cluster = vec![root];
    let mut k = 0;
    while k < cluster.len() {
        let id = cluster[k];
        k += 1;
        for &operand in &g.node(id).inputs {
            let single_use = users[operand.0] == [id] && !g.outputs.contains(&operand);
            if elementwise(g, operand)
                && single_use
                && !cluster.contains(&operand)
                && admit(&cluster, operand)
            {
                cluster.push(operand);
            }
        }
    }
    cluster
}

/// The operands of `cluster` computed outside it, in order of first use.
fn leaves(g: &Graph, cluster: &[NodeId]) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut sorted = cluster.to_vec();
    sorted.sort();
    for id in sorted {
        for &i in &g.node(id).inputs {
            if !cluster.contains(&i) && !out.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}

/// The operands of `cluster` of rank >= 1 computed outside it, in order of first use.
pub(super) fn array_leaves(g: &Graph, cluster: &[NodeId]) -> Vec<NodeId> {
    leaves(g, cluster)
        .into_iter()
        .filter(|&l| g.ty(l).rank >= 1)
        .collect()
}

/// The cluster as a graph of its own (inputs: the leaves), and the leaves.
fn body_of(g: &Graph, cluster: &[NodeId]) -> (Graph, Vec<NodeId>) {
    let leaves = leaves(g, cluster);
    let mut body = Graph::default();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    for &leaf in &leaves {
        let n = g.node(leaf);
        let input = body.add_input(&n.label, n.ty, n.span);
        map.insert(leaf, input);
    }
    let mut sorted = cluster.to_vec();
    sorted.sort(); // topological: the outer graph is normalized
    for id in sorted {
        let n = g.node(id).clone();
        let inputs = n.inputs.iter().map(|i| map[i]).collect();
        let new = body.add(Node { inputs, ..n });
        map.insert(id, new);
    }
    body.outputs = vec![map[&cluster[0]]];
    (body, leaves)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, mat, vec1};
    use super::super::Pass;

    #[test]
    fn lstm_cell_arithmetic_is_one_pass() {
        let src = "pub fn cell(f: ArrayView2<f64>, c: ArrayView2<f64>, i: ArrayView2<f64>, g: ArrayView2<f64>, o: ArrayView2<f64>) -> Result<Array2<f64>> {
            let c_t = sigmoid(f) * c + sigmoid(i) * tanh(g);
            Ok(sigmoid(o) * tanh(c_t))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        assert_eq!(
            fired,
            ["fusion: `sigmoid(o) * tanh(c_t)`: 9 elementwise operations in one pass"]
        );
        assert_eq!(ir.matches("= fused(").count(), 1, "{ir}");
        assert_same_results(
            src,
            "cell",
            &[
                mat(3, 4, 0.1),
                mat(3, 4, 0.2),
                mat(3, 4, 0.3),
                mat(3, 4, 0.4),
                mat(3, 4, 0.5),
            ],
        );
    }

    #[test]
    fn a_value_used_twice_is_computed_once_not_fused_twice() {
        let src = "pub fn f(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let s = exp(a + b);
            Ok((s * 2.0, s - 1.0))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        // exp(a + b) is one fused node; the two uses of it stay separate.
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].contains("`exp(a + b)`: 2 elementwise"),
            "{fired:?}"
        );
        assert_eq!(ir.matches("= fused(").count(), 1, "{ir}");
        assert_same_results(src, "f", &[vec1(&[1.0, 2.0]), vec1(&[0.5, -3.0])]);
    }

    #[test]
    fn broadcast_mismatch_inside_a_chain_is_still_an_error() {
        let src = "pub fn f(a: ArrayView1<f64>, b: ArrayView1<f64>, c: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(tanh((a + b) * c))
        }";
        let (_, fired) = apply(src, Pass::Fusion);
        assert_eq!(fired.len(), 1, "{fired:?}");
        // Shapes 2 and 3 conflict inside; both ways give an error.
        assert_same_results(
            src,
            "f",
            &[vec1(&[1.0, 2.0]), vec1(&[1.0, 2.0, 3.0]), vec1(&[1.0])],
        );
        assert_same_results(
            src,
            "f",
            &[vec1(&[1.0, 2.0]), vec1(&[1.0]), vec1(&[1.0, 5.0])],
        );
    }

    #[test]
    fn scalars_and_non_elementwise_nodes_are_not_fused() {
        let src = "pub fn f(a: ArrayView1<f64>, x: f64) -> Result<f64> {
            let y = exp(x * 2.0) + 1.0;
            Ok(sum(a * y) * y)
        }";
        let (_, fired) = apply(src, Pass::Fusion);
        assert!(fired.is_empty(), "{fired:?}");
    }
}
