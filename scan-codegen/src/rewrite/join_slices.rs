//! Increments of zeros written into their slices: a chain of `inc_subtensor`s that starts
//! from `zeros_like(x)` and adds each value at a slice of one axis, the slices meeting end
//! to end (`..n`, `n..2 * n`, `2 * n..3 * n`, `3 * n..`: each bound the same expression as
//! its neighbour's), becomes one `Op::JoinSlices`. A gradient makes such chains for a value
//! read through slices (grad/mod.rs `accumulate`): an LSTM's backward step builds the
//! adjoint of its gate pre-activations `[B, 4H]` from the four gates' adjoints, and as
//! increments it zero-fills the block and then reads and writes it once per gate. Joined,
//! each gate's adjoint is written straight into its columns, as a hand-written BPTT does
//! (the map kernel computing it writes there: `emit/graph.rs`, `kernels::JoinSlices`).
//!
//! Bounds are known only at run time, and numpy's `inc_subtensor` clamps them and
//! broadcasts the value to the slice: `n` may make a slice empty, the axis may be longer
//! than the slices reach, a value may have one column. So the run time decides: when the
//! clamped slices tile the axis (disjoint, covering it) and each value has exactly its
//! slice's shape, each value is written into its slice, with no zero-fill; otherwise the
//! zeros are made and the values added in the chain's order, as before, with the same
//! errors. The static test (bounds that meet) only says where joining can pay; the run-time
//! test makes it correct. Written into its slice a float value is `0 + v`, what adding it
//! to zeros gives (-0.0 becomes 0.0): the results are bit-identical.
//!
//! Applies to a chain of at least two increments (each link read only by the next, as its
//! base), of `zeros_like` (a fill with +0, of a number dtype), each at a path of one slice
//! (`x[a..b]`, `x[(.., a..b)]`) on the same axis, each value of the chain's dtype and rank,
//! the slices ordered so that each end is the next one's start (the same node, or the same
//! scalar expression of shapes, constants and elementwise operations). Not on overlapping
//! or repeated slices, slices of different axes, a fill with another value, a chain read
//! in the middle by another node (that value is needed as it is), indexing or strided
//! slices.

use std::collections::HashMap;

use super::Log;
use crate::ir::graph::short_label;
use crate::ir::{Graph, Literal, Node, NodeId, Op, PathStep};

pub fn run(g: &mut Graph, log: &mut Log) {
    let users = g.consumers();
    let chains: Vec<Chain> = (0..g.nodes.len())
        .filter_map(|i| find(g, &users, NodeId(i)))
        .collect();
    if chains.is_empty() {
        return;
    }
    // A chain may read another's result (as a value, or the array its zeros are like):
    // it reads that one's join.
    let mut joined = HashMap::new();
    for chain in chains {
        log.fired(join(g, &chain, &mut joined));
    }
    g.normalize();
}

/// One link of a chain: `inc_subtensor(base, value, x[.., start..end])`.
struct Link {
    id: NodeId,
    value: NodeId,
    start: Option<NodeId>,
    end: Option<NodeId>,
}

/// A chain to join: the array whose shape the zeros take, the axis and the links in the
/// chain's order.
struct Chain {
    like: NodeId,
    axis: usize,
    links: Vec<Link>,
}

/// The chain that starts at `id` (an increment of zeros), if it can be joined.
fn find(g: &Graph, users: &[Vec<NodeId>], id: NodeId) -> Option<Chain> {
    let node = g.node(id);
    let zeros = g.node(*node.inputs.first()?);
    let is_zero = match zeros.op {
        Op::FillLike {
            value: Literal::Float(v),
        } => v.to_bits() == 0,
        Op::FillLike {
            value: Literal::Int(v),
        } => v == 0,
        _ => false,
    };
    if !is_zero || !node.ty.dtype.is_number() {
        return None;
    }
    let (axis, first) = link(g, id)?;
    let mut links = vec![first];
    let mut last = id;
    // Each link read only by the next, as its base.
    while let [next] = users[last.0][..] {
        if g.outputs.contains(&last) || g.node(next).inputs.first() != Some(&last) {
            break;
        }
        match link(g, next) {
            Some((a, l)) if a == axis => links.push(l),
            _ => break,
        }
        last = next;
    }
    // The chain's order is kept (the additions' order when they fall back); the slices
    // must meet end to end in some order.
    if !end_to_end(g, &links) {
        return None;
    }
    let typed = links.iter().all(|l| g.ty(l.value) == node.ty);
    (links.len() >= 2 && typed).then_some(Chain {
        like: zeros.inputs[0],
        axis,
        links,
    })
}

/// Node `id` as a link, with its axis: an increment at a path of one slice.
fn link(g: &Graph, id: NodeId) -> Option<(usize, Link)> {
    let node = g.node(id);
    let Op::SetSubtensor { path, inc: true } = &node.op else {
        return None;
    };
    let mut axis = 0;
    let mut slice = None;
    for step in path {
        match *step {
            PathStep::At(a) => {
                if slice.is_none() {
                    axis = a;
                }
            }
            PathStep::Slice { start, end } if slice.is_none() => slice = Some((start, end)),
            _ => return None,
        }
    }
    let (start, end) = slice?;
    if axis >= node.ty.rank || node.inputs.len() != 2 + usize::from(start) + usize::from(end) {
        return None;
    }
    let mut bounds = node.inputs[2..].iter().copied();
    let start = start.then(|| bounds.next()).flatten();
    let end = end.then(|| bounds.next()).flatten();
    let value = node.inputs[1];
    Some((
        axis,
        Link {
            id,
            value,
            start,
            end,
        },
    ))
}

/// Whether the links have one order, and only one, in which each slice's end is the next
/// one's start.
fn end_to_end(g: &Graph, links: &[Link]) -> bool {
    let meets = |a: &Link, b: &Link| match (a.end, b.start) {
        (Some(e), Some(s)) => same_value(g, e, s, 8),
        _ => false,
    };
    let n = links.len();
    // Whether link k starts where link j ends.
    let follows = |k: usize, j: usize| j != k && meets(&links[j], &links[k]);
    let mut heads = (0..n).filter(|&k| !(0..n).any(|j| follows(k, j)));
    let (Some(head), None) = (heads.next(), heads.next()) else {
        return false;
    };
    let mut used = vec![false; n];
    used[head] = true;
    let (mut last, mut count) = (head, 1);
    loop {
        let mut next = (0..n).filter(|&k| !used[k] && follows(k, last));
        match (next.next(), next.next()) {
            (Some(k), None) => {
                used[k] = true;
                (last, count) = (k, count + 1);
            }
            (None, _) => return count == n,
            // Two slices start where this one ends: they overlap.
            _ => return false,
        }
    }
}

/// Whether scalars `a` and `b` are provably the same value: the same node, or the same
/// operation (a constant, an axis length, an elementwise operation, a cast) of the same
/// values, within `depth` levels.
fn same_value(g: &Graph, a: NodeId, b: NodeId, depth: usize) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (g.node(a), g.node(b));
    if depth == 0 || x.ty != y.ty || x.inputs.len() != y.inputs.len() {
        return false;
    }
    let same_op = match (&x.op, &y.op) {
        (Op::Const(Literal::Int(p)), Op::Const(Literal::Int(q))) => p == q,
        (Op::Const(Literal::Bool(p)), Op::Const(Literal::Bool(q))) => p == q,
        (Op::Shape { axis: p }, Op::Shape { axis: q }) => p == q,
        (Op::Elemwise(p), Op::Elemwise(q)) => p == q,
        (Op::Cast, Op::Cast) => true,
        _ => false,
    };
    same_op
        && x.inputs
            .iter()
            .zip(&y.inputs)
            .all(|(&p, &q)| same_value(g, p, q, depth - 1))
}

/// Replaces the chain by one `JoinSlices` node (recorded in `joined` for the chains after
/// it, in place of the chain's last link); returns what the log says.
fn join(g: &mut Graph, chain: &Chain, joined: &mut HashMap<NodeId, NodeId>) -> String {
    let links = &chain.links;
    let last = g.node(links[links.len() - 1].id).clone();
    let mut inputs = vec![chain.like];
    inputs.extend(links.iter().map(|l| l.value));
    inputs.extend(links.iter().flat_map(|l| l.start.into_iter().chain(l.end)));
    for input in &mut inputs {
        *input = joined.get(input).copied().unwrap_or(*input);
    }
    let slices = links
        .iter()
        .map(|l| (l.start.is_some(), l.end.is_some()))
        .collect();
    let labels = links.iter().map(|l| g.node(l.id).label.clone()).collect();
    let node = g.add(Node {
        op: Op::JoinSlices {
            axis: chain.axis,
            slices,
            labels,
        },
        inputs,
        ..last.clone()
    });
    g.replace_uses(links[links.len() - 1].id, node);
    joined.insert(links[links.len() - 1].id, node);
    let values: Vec<String> = links
        .iter()
        .map(|l| format!("`{}`", short_label(&g.node(l.value).label)))
        .collect();
    format!(
        "`{}`: zeros incremented at {} slices of axis {} that meet end to end, by {}: each \
         written into its slice, with no zero-fill, when they tile the axis at run time \
         (added to zeros as before otherwise)",
        short_label(&last.label),
        links.len(),
        chain.axis,
        values.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Pass;

    /// The backward step of a batched LSTM (scan-bench's lstm_grad), its gates four column
    /// blocks of one pre-activation.
    const LSTM: &str = r#"
        pub fn lstm(x: ArrayView3<f64>, h0: ArrayView2<f64>, c0: ArrayView2<f64>, w_x: ArrayView2<f64>,
                    w_h: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(Array2<f64>, Array2<f64>, Array1<f64>)> {
            let (h, c) = scan(
                |x_t, h_tm1, c_tm1, w_x, w_h, b| {
                    let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                    let n = h_tm1.shape[1];
                    let i = sigmoid(z[(.., ..n)]);
                    let f = sigmoid(z[(.., n..2 * n)]);
                    let g = tanh(z[(.., 2 * n..3 * n)]);
                    let o = sigmoid(z[(.., 3 * n..)]);
                    let c_t = f * c_tm1 + i * g;
                    (o * tanh(c_t), c_t)
                },
                sequences = x,
                outputs_info = [h0, c0],
                non_sequences = [w_x, w_h, b],
            );
            let (g_w_x, g_w_h, g_b) = grad(sum(h), [w_x, w_h, b]);
            Ok((g_w_x, g_w_h, g_b))
        }
    "#;

    /// The LSTM's arguments: 3 steps, a batch of 2, 3 inputs, `hidden` units, and a bias
    /// of `bias` elements (4 * hidden, or 1: broadcast, the gates still 4 blocks).
    fn lstm_args(hidden: usize, gates: usize) -> Vec<Value> {
        let x = ndarray::Array3::from_shape_fn((3, 2, 3), |(t, i, j)| {
            ((t * 7 + i * 3 + j) as f64 * 0.41).sin()
        });
        vec![
            Value::from(x),
            mat(2, hidden, 0.1),
            mat(2, hidden, 0.2),
            mat(3, gates, 0.3),
            mat(hidden, gates, 0.4),
            vec1(&vec![0.05; gates]),
        ]
    }

    #[test]
    fn fires_on_the_gates_of_an_lstm_gradient() {
        let (ir, fired) = apply_passes(LSTM, &[Pass::JoinSlices]);
        let joined: Vec<&String> = fired
            .iter()
            .filter(|f| f.starts_with("join_slices"))
            .collect();
        assert_eq!(joined.len(), 1, "{fired:?}");
        assert!(
            joined[0].contains("at 4 slices of axis 1 that meet end to end"),
            "{fired:?}"
        );
        // The chain is gone from the backward step: one join of the four adjoints, no
        // zeros of the block, no increment.
        let step: Vec<&str> = ir.lines().filter(|l| l.starts_with("    ")).collect();
        let join: Vec<&&str> = step
            .iter()
            .filter(|l| l.contains("= join_slices(axis=1)("))
            .collect();
        assert_eq!(join.len(), 1, "{ir}");
        assert!(!ir.contains("inc_subtensor"), "{ir}");
        // like, four values, then the bounds `n`, `n, 2n`, `2n, 3n`, `3n` of the chain's
        // order (the last gate first): 1 + 4 + 6 inputs.
        let inputs = join[0].split('(').nth(2).unwrap();
        assert_eq!(inputs.matches('%').count(), 11, "{ir}");
        // Its values agree with the program without rewrites, bit for bit, with the
        // hidden size the gates tile (4 x 2) and with a bias of one element (the blocks
        // still tile; nothing broadcasts into a slice).
        assert_same_results(LSTM, "lstm", &lstm_args(2, 8));
    }

    #[test]
    fn fires_with_every_pass() {
        let (_, fired) = apply_passes(LSTM, &super::super::ORDER);
        assert!(
            fired.iter().any(|f| f.starts_with("join_slices")),
            "{fired:?}"
        );
        assert_same_results(LSTM, "lstm", &lstm_args(3, 12));
    }

    #[test]
    fn fires_on_slices_that_stop_short_of_the_end() {
        // `..n` and `n..2 * n` of an axis of 3n (or more): they meet, so the pass fires;
        // at run time they do not cover the axis and the increments are made as before.
        let src = r#"
            pub fn f(z: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
                let k = n as i64;
                let cost = sum(sin(z[(.., ..k)])) + sum(cos(z[(.., k..2 * k)]));
                Ok(grad(cost, z))
            }
        "#;
        let (_, fired) = apply(src, Pass::JoinSlices);
        assert_eq!(fired.len(), 1, "{fired:?}");
        for (cols, n) in [(6, 2i64), (4, 2), (5, 3), (4, 0)] {
            assert_same_results(src, "f", &[mat(2, cols, 0.5), Value::from(n)]);
        }
    }

    #[test]
    fn fires_on_constant_slices_of_a_vector() {
        // Adjoints of `z[0..2]`, `z[2..4]`, `z[4..]` (a chain of three, in the gradient's
        // order); an axis of 6 and of 7 (`z[4..]` takes the rest: tiles), of 4 (`z[4..]`
        // is empty: tiles). Not when a slice is read twice (two increments of one slice).
        let twice = r#"
            pub fn f(z: ArrayView1<f64>) -> Result<Array1<f64>> {
                let cost = sum(sin(z[0..2])) + sum(z[2..4] * z[2..4]) + sum(exp(z[4..]));
                Ok(grad(cost, z))
            }
        "#;
        let (_, fired) = apply(twice, Pass::JoinSlices);
        assert!(fired.is_empty(), "{fired:?}");
        let src = r#"
            pub fn f(z: ArrayView1<f64>) -> Result<Array1<f64>> {
                let cost = sum(sin(z[0..2])) + sum(cos(z[2..4])) + sum(exp(z[4..]));
                Ok(grad(cost, z))
            }
        "#;
        let (ir, fired) = apply(src, Pass::JoinSlices);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(ir.contains("join_slices(axis=0)"), "{ir}");
        for n in [6, 7, 4] {
            let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
            assert_same_results(src, "f", &[vec1(&z)]);
        }
    }

    #[test]
    fn a_chain_reading_another_reads_its_join() {
        // The second chain's zeros are like the first's result, and its values slices of
        // it: both joined, no increment left (the first's would be kept alive otherwise).
        let src = r#"
            pub fn f(m: ArrayView2<f64>, a: ArrayView2<f64>, n: usize) -> Result<Array2<f64>> {
                let k = n as i64;
                let z = zeros_like(m);
                let a1 = inc_subtensor(z[(.., ..k)], a);
                let j1 = inc_subtensor(a1[(.., k..)], a * 2.0);
                let z2 = zeros_like(j1);
                let b1 = inc_subtensor(z2[..k], j1[..k] * 3.0);
                Ok(inc_subtensor(b1[k..], sin(j1[k..])))
            }
        "#;
        let (ir, fired) = apply(src, Pass::JoinSlices);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert!(!ir.contains("inc_subtensor"), "{ir}");
        assert_eq!(ir.matches("= join_slices(").count(), 2, "{ir}");
        for (rows, cols, n) in [(2, 2, 1i64), (3, 4, 2), (3, 4, 1), (2, 3, 5)] {
            let args = [mat(rows, cols, 0.1), mat(rows, 1, 0.2), Value::from(n)];
            assert_same_results(src, "f", &args);
        }
    }

    #[test]
    fn leaves_chains_it_cannot_join() {
        // a: slices that overlap (`..k` and `k - 1..`); b: of different axes; c: ones, not
        // zeros; d: the chain's first increment also read by another node; e: a slice
        // alone; f: slices that do not meet (`..k`, `k + 1..`); g: an index, not a slice;
        // h: the same slice twice.
        let src = r#"
            pub fn f(m: ArrayView2<f64>, a: ArrayView2<f64>, n: usize)
                -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>,
                           Array2<f64>, Array2<f64>, Array2<f64>)> {
                let z = zeros_like(m);
                let k = n as i64;
                let a1 = inc_subtensor(z[(.., ..k)], a);
                let oa = inc_subtensor(a1[(.., k - 1..)], a);
                let b1 = inc_subtensor(z[(.., ..k)], a);
                let ob = inc_subtensor(b1[k..], a);
                let c = ones_like(m);
                let c1 = inc_subtensor(c[(.., ..k)], a);
                let oc = inc_subtensor(c1[(.., k..)], a);
                let d1 = inc_subtensor(z[(.., ..k)], a);
                let od = inc_subtensor(d1[(.., k..)], a);
                let oe = inc_subtensor(z[(.., ..k)], a);
                let f1 = inc_subtensor(z[(.., ..k)], a);
                let of = inc_subtensor(f1[(.., k + 1..)], a);
                let g1 = inc_subtensor(z[(.., 0)], a[0]);
                let og = inc_subtensor(g1[(.., 1..)], a);
                let h1 = inc_subtensor(z[(.., k..)], a);
                let oh = inc_subtensor(h1[(.., k..)], a);
                Ok((oa, ob, oc, d1 * 2.0, od, oe, of, og, oh))
            }
        "#;
        let (ir, fired) = apply(src, Pass::JoinSlices);
        assert!(fired.is_empty(), "{fired:?}\n{ir}");
        // The same chains that do meet, for contrast: each fires.
        let src = r#"
            pub fn f(m: ArrayView2<f64>, a: ArrayView2<f64>, n: usize) -> Result<(Array2<f64>, Array2<f64>)> {
                let z = zeros_like(m);
                let k = n as i64;
                let a1 = inc_subtensor(z[(.., ..k)], a);
                let b1 = inc_subtensor(z[..k], a);
                Ok((inc_subtensor(a1[(.., k..)], a), inc_subtensor(b1[k..], a)))
            }
        "#;
        let (ir, fired) = apply(src, Pass::JoinSlices);
        assert_eq!(fired.len(), 2, "{fired:?}\n{ir}");
        assert!(
            ir.contains("join_slices(axis=1)") && ir.contains("join_slices(axis=0)"),
            "{ir}"
        );
        for (rows, cols, n) in [(2, 2, 1i64), (2, 4, 2), (3, 3, 1)] {
            let args = [mat(rows, cols, 0.1), mat(2, 1, 0.2), Value::from(n)];
            assert_same_results(src, "f", &args);
        }
    }
}
