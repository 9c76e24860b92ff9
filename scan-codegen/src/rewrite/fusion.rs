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
//! A chain that reads the result of another chain (or of one operation) needed elsewhere
//! too takes it in as a second result of the same pass: an LSTM's `c_t`, the step's state,
//! and `h_t = o * tanh(c_t)` come out of one loop over the gate block, `c_t` stored as it
//! is computed. The node then has two results, read through `Part` nodes (result 0 the
//! reader's, 1 the value taken in). The two have one rank; at run time the pass runs when
//! the value taken in has the whole result's shape (it is not broadcast further), else
//! the two are computed one after the other as before (`emit`'s choice).
//!
//! Never fused: scalar (rank-0) operations, which already are plain Rust locals; anything
//! that is not elementwise; chains reading more than twelve arrays (the widest runtime map).

use std::collections::HashMap;

use super::{short, Log};
use crate::ir::{Graph, Node, NodeId, Op, ReduceOp, Type};

/// The widest elementwise map the runtime has (`kernels::map16`, `kernels::pair16`): an
/// LSTM's gate arithmetic over its column slices reads thirteen arrays (four gates' input
/// projections, recurrent products and biases, and `c`).
pub const MAX_ARRAYS: usize = 16;

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
        for id in &cluster {
            absorbed[id.0] = true;
        }
        fused.push(cluster);
    }
    let pairs = pair_up(g, &users, &fused);
    for (k, cluster) in fused.iter().enumerate() {
        let second = match pairs.get(&k) {
            Some(&j) => Some(&fused[j]),
            None if pairs.values().any(|&j| j == k) => continue, // taken in by another
            None if cluster.len() < 2 => continue,
            None => None,
        };
        let root = cluster[0];
        let node = g.node(root).clone();
        let Some(second) = second else {
            let (body, leaves) = body_of(g, cluster, &[]);
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
            continue;
        };
        let (body, leaves) = body_of(g, cluster, second);
        let other = second[0];
        let other_node = g.node(other).clone();
        let f = g.add(Node {
            op: Op::Fused(Box::new(body)),
            inputs: leaves,
            ty: Type::scalar(node.ty.dtype),
            ..node.clone()
        });
        for (index, (old, n)) in [(root, &node), (other, &other_node)]
            .into_iter()
            .enumerate()
        {
            let part = g.add(Node {
                op: Op::Part { index },
                inputs: vec![f],
                ..n.clone()
            });
            g.replace_uses(old, part);
        }
        log.fired(format!(
            "{}: {} elementwise operations in one pass, also giving {}",
            short(&node.label),
            cluster.len() + second.len(),
            short(&other_node.label),
        ));
    }
    g.normalize();
}

/// For clusters (each as `grow` makes it, its root first; roots later in the graph
/// first), which takes in which as its second result: `k -> j` when cluster `k` reads the
/// root of cluster `j`, which is needed elsewhere too, the two of one rank, the union
/// reading at most [`MAX_ARRAYS`] arrays, and the passes still ordered (no pass waits on
/// its own result: through one of its other operands, or through another pass made
/// here). Each cluster is in one pair at most, as the taker or the taken.
fn pair_up(g: &Graph, users: &[Vec<NodeId>], clusters: &[Vec<NodeId>]) -> HashMap<usize, usize> {
    let root_of: HashMap<NodeId, usize> = clusters
        .iter()
        .enumerate()
        .map(|(k, c)| (c[0], k))
        .collect();
    // The pass each node is computed in (its cluster's index), or the node itself (past
    // the clusters' indices).
    let mut pass: Vec<usize> = (0..g.nodes.len()).map(|i| clusters.len() + i).collect();
    for (k, cluster) in clusters.iter().enumerate() {
        for id in cluster {
            pass[id.0] = k;
        }
    }
    let mut paired = vec![false; clusters.len()];
    let mut pairs = HashMap::new();
    for (k, cluster) in clusters.iter().enumerate() {
        if paired[k] || only_extreme_reads(g, users, cluster[0]) {
            continue;
        }
        let rank = g.ty(cluster[0]).rank;
        for l in array_leaves(g, cluster) {
            let Some(&j) = root_of.get(&l) else {
                continue;
            };
            let mut both = cluster.clone();
            both.extend(&clusters[j]);
            if paired[j]
                || j == k
                || g.ty(l).rank != rank
                || array_leaves(g, &both).len() > MAX_ARRAYS
            {
                continue;
            }
            for id in &clusters[j] {
                pass[id.0] = k;
            }
            if ordered(g, &pass) {
                paired[k] = true;
                paired[j] = true;
                pairs.insert(k, j);
                break;
            }
            for id in &clusters[j] {
                pass[id.0] = j;
            }
        }
    }
    pairs
}

/// Whether the passes (`pass[node]`, each a set of nodes computed together) can be put
/// in an order where each comes after those it reads: no cycle among them.
fn ordered(g: &Graph, pass: &[usize]) -> bool {
    let count = pass.iter().max().map_or(0, |&m| m + 1);
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut waiting = vec![0usize; count];
    for (i, node) in g.nodes.iter().enumerate() {
        for input in &node.inputs {
            let (from, to) = (pass[input.0], pass[i]);
            if from != to {
                reads[from].push(to);
                waiting[to] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..count).filter(|&p| waiting[p] == 0).collect();
    let mut done = 0;
    while let Some(p) = ready.pop() {
        done += 1;
        for &q in &reads[p] {
            waiting[q] -= 1;
            if waiting[q] == 0 {
                ready.push(q);
            }
        }
    }
    done == count
}

/// Whether the `max` or `min` of all of `id`'s elements is its only reader: emit computes
/// such a chain inside the reduction, storing nothing, and with the value it reads as the
/// map's result in the same pass (`kernels::map2_max`: a step's new row and its largest
/// change); a second result would make it store the chain.
fn only_extreme_reads(g: &Graph, users: &[Vec<NodeId>], id: NodeId) -> bool {
    let extreme = |u: &NodeId| {
        matches!(
            g.node(*u).op,
            Op::Reduce {
                op: ReduceOp::Max | ReduceOp::Min,
                axis: None
            }
        )
    };
    matches!(users[id.0].as_slice(), [u] if extreme(u)) && !g.outputs.contains(&id)
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

/// The cluster, with `second` (another cluster whose root it reads) when given, as a graph
/// of its own (inputs: the leaves), and the leaves. Its outputs: the cluster's root, then
/// `second`'s.
fn body_of(g: &Graph, cluster: &[NodeId], second: &[NodeId]) -> (Graph, Vec<NodeId>) {
    let mut all = cluster.to_vec();
    all.extend(second);
    let leaves = leaves(g, &all);
    let mut body = Graph::default();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    for &leaf in &leaves {
        let n = g.node(leaf);
        let input = body.add_input(&n.label, n.ty, n.span);
        map.insert(leaf, input);
    }
    let mut sorted = all.clone();
    sorted.sort(); // topological: the outer graph is normalized
    for id in sorted {
        let n = g.node(id).clone();
        let inputs = n.inputs.iter().map(|i| map[i]).collect();
        let new = body.add(Node { inputs, ..n });
        map.insert(id, new);
    }
    body.outputs = std::iter::once(cluster[0])
        .chain(second.first().copied())
        .map(|id| map[&id])
        .collect();
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
        let args = [0.1, 0.2, 0.3, 0.4, 0.5].map(|seed| mat(3, 4, seed));
        assert_same_results(src, "cell", &args);
    }

    #[test]
    fn a_value_used_twice_is_computed_once_not_fused_twice() {
        let src = "pub fn f(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let s = exp(a + b);
            Ok((s * 2.0, s - 1.0))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        // exp(a + b) is computed once, in the pass of one of its readers, which gives it
        // as a second result to the other.
        assert_eq!(
            fired,
            ["fusion: `s -1.0`: 3 elementwise operations in one pass, also giving `exp(a + b)`"]
        );
        assert_eq!(ir.matches("= fused(").count(), 1, "{ir}");
        assert_eq!(ir.matches("exp(").count(), 1, "{ir}");
        assert_eq!(ir.matches("= part#").count(), 2, "{ir}");
        assert_same_results(src, "f", &[vec1(&[1.0, 2.0]), vec1(&[0.5, -3.0])]);
    }

    #[test]
    fn an_lstm_cell_state_and_output_come_from_one_pass() {
        let src = "pub fn cell(f: ArrayView2<f64>, c: ArrayView2<f64>, i: ArrayView2<f64>, g: ArrayView2<f64>, o: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let c_t = sigmoid(f) * c + sigmoid(i) * tanh(g);
            Ok((sigmoid(o) * tanh(c_t), c_t))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        assert_eq!(
            fired,
            ["fusion: `sigmoid(o) * tanh(c_t)`: 9 elementwise operations in one pass, also giving `sigmoid(f) * c + sigmoid(i) * tanh(g)`"]
        );
        assert_eq!(ir.matches("= fused(").count(), 1, "{ir}");
        let args = [0.1, 0.2, 0.3, 0.4, 0.5].map(|seed| mat(3, 4, seed));
        assert_same_results(src, "cell", &args);
        // The state broadcast further by the output (a row of `o` per row of `c_t` but
        // more rows): the pass cannot give it whole; the results are still the same.
        assert_same_results(
            src,
            "cell",
            &[
                mat(1, 4, 0.1),
                mat(1, 4, 0.2),
                mat(1, 4, 0.3),
                mat(1, 4, 0.4),
                mat(3, 4, 0.5),
            ],
        );
    }

    #[test]
    fn a_value_a_chain_s_other_operand_is_computed_from_is_not_taken_in() {
        // `t = exp(a)` read by `sin(t * s + a)` where `s = sum(t)`: taking `t` into that
        // pass would make it wait for `s`, computed from its own result.
        let src = "pub fn f(a: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let t = exp(a);
            let s = sum(t);
            Ok((sin(t * s + a), t))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        assert!(!ir.contains("part#"), "{ir}");
        assert_eq!(
            fired,
            ["fusion: `sin(t * s + a)`: 3 elementwise operations in one pass"]
        );
        assert_same_results(src, "f", &[vec1(&[0.5, -1.0, 2.0])]);
        // Read by an elementwise chain instead (`log(t + 1)`, one use), `t` is taken in.
        let src = "pub fn f(a: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let t = exp(a);
            let u = log(t + 1.0);
            Ok((sin(t * u), t))
        }";
        let (ir, _) = apply(src, Pass::Fusion);
        assert_eq!(ir.matches("part#").count(), 2, "{ir}");
        assert_same_results(src, "f", &[vec1(&[0.5, -1.0, 2.0])]);
    }

    #[test]
    fn two_passes_never_wait_on_each_other() {
        // `sin(j1 + j2)` taking in `j1` and `cos(j2 * j1)` taking in `j2` would each read
        // the other's second result: one pair is made, not both.
        let src = "pub fn f(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            let j1 = exp(a);
            let j2 = exp(b);
            Ok((sin(j1 + j2), cos(j2 * j1), j1, j2))
        }";
        let (ir, fired) = apply(src, Pass::Fusion);
        assert_eq!(
            fired.iter().filter(|f| f.contains("also giving")).count(),
            1,
            "{fired:?}"
        );
        assert_eq!(ir.matches("= part#").count(), 2, "{ir}");
        assert_same_results(src, "f", &[vec1(&[0.5, -1.0]), vec1(&[2.0, 0.25])]);
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
