//! Reverse-mode differentiation (PyTensor's `grad`): given a rank-0 float cost and the
//! nodes to differentiate with respect to, [`reverse`] appends the adjoint graph to the
//! graph being built, as PyTensor's `grad` builds a symbolic graph. The adjoints are
//! ordinary IR, so every rewrite, the emitter and the evaluator serve them unchanged.
//!
//! The sweep: the nodes on a path from a `wrt` node to the cost are visited in reverse
//! topological order (a graph's nodes are in topological order as lowering builds them);
//! each visited float node with an adjoint hands it to its op's rule (`rules.rs`, one arm
//! per op and no wildcard, so a new op forces a decision), which returns each operand's
//! contribution, of the operand's own type; contributions are added up (`Add`). Integer
//! and bool values carry no adjoint: index, shape and comparison paths stop the flow.
//!
//! A scan's adjoint is another scan, going backwards over the forward steps (`scan.rs`):
//! the sweep gathers the adjoints of its `ScanOutput` reads and hands them over at the
//! `Scan` node. With `checkpoints = N`, nested scans that store every N-th state and
//! recompute the segments between them (`checkpoints.rs`). A linear-algebra node with
//! several results (`slogdet`, `eigh`, ...) is met the same way: the adjoints of its
//! `Part` reads gathered, then handed to its rule (`linalg.rs`, which holds every rule of
//! the linear algebra).
//!
//! The elementwise family's derivatives live beside its forward rules, in
//! `ir/elemwise.rs` (`ElemOp::partials`); a broadcast operand's contribution is summed
//! back to its shape by `Op::Unbroadcast` (sizes are known only at run time).
//!
//! Labels (what `scanc explain` and run-time errors name a node by) say what each node
//! is, in the user's words (a value's `let` name, else its source text, shortened):
//! `adjoint of h` for the adjoint of a value (the seed, a sum of contributions, a rule's
//! contribution to an operand, a gradient), and `adjoint through tanh(a)` for the other
//! nodes a rule builds to pass the adjoint back through a forward node, so that an error
//! there (a singular matrix in `det`'s rule) names the forward expression.

mod checkpoints;
mod linalg;
mod rules;
mod scan;

use std::collections::HashMap;

use proc_macro2::Span;

use crate::ir::graph::short_label;
use crate::ir::{DType, ElemOp, Graph, Literal, Node, NodeId, Op, PathStep, ReduceOp, Term, Type};
use crate::messages as msg;

/// Why [`reverse`] gave no gradient.
#[derive(Debug)]
pub enum GradError {
    /// The cost does not depend on `wrt[k]` at all (PyTensor's `DisconnectedInputError`).
    Disconnected(usize),
    /// Any other reason (an op without a gradient rule, also in a scan's step), spanned on the
    /// `grad` call by the caller.
    Message(String),
}

/// The gradients of `cost` (a rank-0 float node of `graph`) with respect to each node of
/// `wrt` (float nodes of `graph`), appended to `graph`: one node per `wrt`, of its type.
/// A `wrt` that the cost reaches only through integer or bool values (comparisons,
/// indices) gets zeros; one the cost does not read at all is an error, as in PyTensor.
/// The new nodes carry `span` (the `grad` call's) and labels made from `names`, the
/// user's names of `graph`'s values (see the module's doc).
pub fn reverse(
    graph: &mut Graph,
    cost: NodeId,
    wrt: &[NodeId],
    span: Span,
    names: HashMap<NodeId, String>,
) -> Result<Vec<NodeId>, GradError> {
    let mut b = Builder {
        g: graph,
        span,
        label: String::new(),
        names,
    };
    b.label = b.adjoint_of(cost);
    let seed = b.float(1.0, b.ty(cost).dtype);
    let grads = sweep(&mut b, &[(cost, seed)], wrt, true).map_err(|e| match e {
        SweepError::Disconnected(k) => GradError::Disconnected(k),
        SweepError::Message(m) => GradError::Message(m),
    })?;
    Ok(grads
        .into_iter()
        .zip(wrt)
        .map(|(g, &w)| match g {
            Some(g) => g,
            // Reached only through integer or bool values: a zero gradient.
            None => {
                b.label = b.adjoint_of(w);
                b.zeros_like(w)
            }
        })
        .collect())
}

/// Why [`sweep`] gave no gradient.
enum SweepError {
    Disconnected(usize),
    Message(String),
}

impl SweepError {
    /// The message of the error of a sweep that is not `strict` (never `Disconnected`).
    fn message(self) -> String {
        match self {
            SweepError::Message(m) => m,
            SweepError::Disconnected(k) => format!("the cost does not depend on value {k}"),
        }
    }
}

impl From<String> for SweepError {
    fn from(m: String) -> Self {
        SweepError::Message(m)
    }
}

/// The reverse sweep over `b`'s graph: the adjoints of the `wrt` nodes given the adjoints
/// `seeds` (node, its adjoint) of some of its values; `None` for a `wrt` reached only
/// through integer or bool values, or (unless `strict`) not at all; with `strict`, a
/// `wrt` no seed depends on at all is `Disconnected`.
fn sweep(
    b: &mut Builder,
    seeds: &[(NodeId, NodeId)],
    wrt: &[NodeId],
    strict: bool,
) -> Result<Vec<Option<NodeId>>, SweepError> {
    let n = b.g.nodes.len();
    // Nodes whose value depends on a `wrt` node ...
    let mut depends = vec![false; n];
    for &w in wrt {
        depends[w.0] = true;
    }
    for i in 0..n {
        if b.g.nodes[i].inputs.iter().any(|j| depends[j.0]) {
            depends[i] = true;
        }
    }
    // ... and that a seeded value depends on: the nodes the sweep visits.
    let mut needed = vec![false; n];
    for &(s, _) in seeds {
        needed[s.0] = true;
    }
    for i in (0..n).rev() {
        if needed[i] {
            for j in &b.g.nodes[i].inputs {
                needed[j.0] = true;
            }
        }
    }
    let relevant: Vec<bool> = (0..n).map(|i| depends[i] && needed[i]).collect();
    if strict {
        if let Some(k) = wrt.iter().position(|w| !relevant[w.0]) {
            return Err(SweepError::Disconnected(k));
        }
    }
    // A float value carries an adjoint; so does a node with several results (a scan, a
    // factorisation), read through `ScanOutput`/`Part`.
    let carries = |b: &Builder, id: NodeId| {
        let node = b.g.node(id);
        relevant[id.0]
            && (node.ty.dtype.is_float() || matches!(node.op, Op::Scan(_)) || node.op.has_parts())
    };
    let mut adjoint: Vec<Option<NodeId>> = vec![None; n];
    // The adjoints of the results of a node with several (a scan, read through
    // `ScanOutput`; a factorisation, through `Part`), by result, gathered from its reads
    // until the sweep reaches the node itself.
    let mut gathered: HashMap<usize, Vec<Option<NodeId>>> = HashMap::new();
    for &(s, g) in seeds {
        b.label = b.adjoint_of(s);
        accumulate(b, &mut adjoint[s.0], g);
    }
    for i in (0..n).rev() {
        let id = NodeId(i);
        if !carries(b, id) {
            continue;
        }
        let op = b.g.node(id).op.clone();
        let inputs = b.g.node(id).inputs.clone();
        if let Op::ScanOutput { index } | Op::Part { index } = op {
            if let Some(gy) = adjoint[i] {
                let whole = inputs[0];
                let n_results = match &b.g.node(whole).op {
                    Op::Scan(s) => s.outputs.len(),
                    Op::Linalg(l) => l.parts().map_or(0, <[usize]>::len),
                    _ => 0,
                };
                let mut slots = gathered
                    .remove(&whole.0)
                    .unwrap_or_else(|| vec![None; n_results]);
                if let Some(slot) = slots.get_mut(index) {
                    b.label = b.adjoint_of(id);
                    accumulate(b, slot, gy);
                }
                gathered.insert(whole.0, slots);
            }
            continue;
        }
        let want: Vec<bool> = inputs.iter().map(|&j| carries(b, j)).collect();
        if !want.iter().any(|&w| w) {
            continue;
        }
        let built = b.g.nodes.len();
        b.label = b.through(id);
        let contributions = if let Op::Scan(_) = op {
            let Some(gs) = gathered.remove(&i) else {
                continue;
            };
            scan::adjoints(b, id, &gs, &want)?
        } else if let (Op::Linalg(l), true) = (&op, op.has_parts()) {
            let Some(gs) = gathered.remove(&i) else {
                continue;
            };
            linalg::parts(b, *l, id, &gs, &want)?
        } else {
            let Some(gy) = adjoint[i] else { continue };
            rules::adjoints(b, id, gy, &want)?
        };
        for (k, c) in contributions {
            let j = inputs[k];
            if !want[k] {
                continue;
            }
            if b.ty(c) != b.ty(j) {
                // A rule's bug, reported rather than emitted as ill-typed code.
                let what = format!("{:?}", b.g.node(id).op);
                return Err(msg::grad_internal(&what, b.ty(c), b.ty(j)).into());
            }
            b.label = b.adjoint_of(j);
            // A contribution the rule built is (a part of) the operand's adjoint.
            if c.0 >= built {
                b.g.nodes[c.0].label = b.label.clone();
            }
            accumulate(b, &mut adjoint[j.0], c);
        }
    }
    Ok(wrt.iter().map(|&w| adjoint[w.0]).collect())
}

/// `slot` plus the contribution `c` (`c` itself when the slot is empty). A contribution
/// that is `inc_subtensor(zeros, g, path)` (the adjoint of an indexing: an LSTM's four
/// gate slices of one product) is added by incrementing the other term at `path` instead:
/// `a + inc_subtensor(zeros, g, path) = inc_subtensor(a, g, path)`, so the slices of one
/// value make a chain into one array (which the emitter increments in place) rather than
/// one array of zeros each and a sum of them.
fn accumulate(b: &mut Builder, slot: &mut Option<NodeId>, c: NodeId) {
    *slot = Some(match *slot {
        None => c,
        Some(a) => match (into_zeros(b, c), into_zeros(b, a)) {
            (Some(path), _) => increment(b, a, c, path),
            (None, Some(path)) => increment(b, c, a, path),
            (None, None) => b.elem(ElemOp::Add, vec![a, c]),
        },
    });
}

/// The path of `c` when it is `inc_subtensor(zeros, g, path..)`.
fn into_zeros(b: &Builder, c: NodeId) -> Option<Vec<PathStep>> {
    let node = b.g.node(c);
    let Op::SetSubtensor { path, inc: true } = &node.op else {
        return None;
    };
    let zeros = b.g.node(*node.inputs.first()?);
    let is_zeros = matches!(zeros.op, Op::FillLike { value } if value == Literal::Float(0.0));
    is_zeros.then(|| path.clone())
}

/// `a` incremented at `path` by the value `c = inc_subtensor(zeros, g, path..)` adds.
fn increment(b: &mut Builder, a: NodeId, c: NodeId, path: Vec<PathStep>) -> NodeId {
    let mut inputs = b.g.node(c).inputs.clone();
    inputs[0] = a;
    let t = b.ty(a);
    b.add(Op::SetSubtensor { path, inc: true }, inputs, t)
}

/// Appends typed nodes to the graph being differentiated.
pub(crate) struct Builder<'g> {
    g: &'g mut Graph,
    span: Span,
    /// The label of the nodes added (set by the sweep as it goes, see the module's doc).
    label: String,
    /// The user's names of the graph's values (`let` bindings of the `grad` call's frame).
    names: HashMap<NodeId, String>,
}

impl Builder<'_> {
    /// A builder of the step graph `g` of a scan being built, with this one's span and
    /// label and no user names (those name this builder's nodes, not `g`'s).
    fn within<'h>(&self, g: &'h mut Graph) -> Builder<'h> {
        Builder {
            g,
            span: self.span,
            label: self.label.clone(),
            names: HashMap::new(),
        }
    }

    /// How labels name the forward value `x`: the user's name for it, else its input's
    /// name or source text (a scan's trace: as [`Builder::output_name`]), shortened.
    fn name(&self, x: NodeId) -> String {
        if let Some(name) = self.names.get(&x) {
            return name.clone();
        }
        let node = self.g.node(x);
        match (&node.op, node.inputs.first()) {
            (Op::ScanOutput { index }, Some(&scan)) => self.output_name(scan, *index),
            _ => short_label(&node.label),
        }
    }

    /// How labels name output `o` of the scan node `scan`: the user's name of its trace
    /// (`h` of `let (h, c) = scan(..)`), else the output's label (its initial state's).
    fn output_name(&self, scan: NodeId, o: usize) -> String {
        let is_trace = |id: NodeId| {
            let node = self.g.node(id);
            matches!(node.op, Op::ScanOutput { index } if index == o)
                && node.inputs.first() == Some(&scan)
        };
        let named = self
            .names
            .iter()
            .filter(|(&id, _)| is_trace(id))
            .map(|(_, n)| n)
            .min();
        match (named, &self.g.node(scan).op) {
            (Some(name), _) => name.clone(),
            (None, Op::Scan(op)) => op
                .outputs
                .get(o)
                .map_or_else(String::new, |out| short_label(&out.label)),
            (None, _) => short_label(&self.g.node(scan).label),
        }
    }

    /// The label of the adjoint of the forward value `x`.
    fn adjoint_of(&self, x: NodeId) -> String {
        format!("adjoint of {}", self.name(x))
    }

    /// The label of the nodes a rule builds to pass the adjoint of `y` back to its
    /// operands: y's own text (the expression an error there must point at), not its name.
    fn through(&self, y: NodeId) -> String {
        let node = self.g.node(y);
        let text = match &node.op {
            // A scan node's label is its kind: named after its first result's text.
            Op::Scan(op) => match (&op.name, op.step.outputs.first()) {
                (Some(name), _) => short_label(name),
                (None, Some(&r)) => format!("scan of {}", short_label(&op.step.node(r).label)),
                (None, None) => short_label(&node.label),
            },
            _ => short_label(&node.label),
        };
        format!("adjoint through {text}")
    }

    fn ty(&self, id: NodeId) -> Type {
        self.g.ty(id)
    }

    fn add(&mut self, op: Op, inputs: Vec<NodeId>, ty: Type) -> NodeId {
        self.g.add(Node {
            op,
            inputs,
            ty,
            span: self.span,
            label: self.label.clone(),
        })
    }

    fn float(&mut self, v: f64, dtype: DType) -> NodeId {
        let label = self.label.clone();
        self.g
            .add_const(Literal::Float(v), dtype, self.span, &label)
    }

    fn int(&mut self, v: i64) -> NodeId {
        let label = self.label.clone();
        self.g
            .add_const(Literal::Int(i128::from(v)), DType::I64, self.span, &label)
    }

    /// An elementwise node, typed by the operation's rule (operands already of its operand
    /// dtype; the condition of `Where` bool), its rank the largest operand's.
    fn elem(&mut self, op: ElemOp, inputs: Vec<NodeId>) -> NodeId {
        let operand = match op {
            ElemOp::Where => self.ty(inputs[2]).dtype,
            _ => self.ty(inputs[0]).dtype,
        };
        let rank = inputs.iter().map(|&i| self.ty(i).rank).max().unwrap_or(0);
        let ty = Type::new(op.result_dtype(operand), rank);
        self.add(Op::Elemwise(op), inputs, ty)
    }

    fn mul(&mut self, a: NodeId, b: NodeId) -> NodeId {
        self.elem(ElemOp::Mul, vec![a, b])
    }

    fn cast(&mut self, x: NodeId, dtype: DType) -> NodeId {
        let t = self.ty(x);
        if t.dtype == dtype {
            return x;
        }
        self.add(Op::Cast, vec![x], t.with_dtype(dtype))
    }

    /// A term of a gradient rule (`ir::Term`) built from the adjoint `g`, the result `y`
    /// and the operands `xs`; constants in `dtype`.
    fn term(&mut self, t: &Term, g: NodeId, y: NodeId, xs: &[NodeId], dtype: DType) -> NodeId {
        match t {
            Term::G => g,
            Term::Y => y,
            Term::X(k) => xs[*k],
            Term::C(v) => self.float(*v, dtype),
            Term::Op(op, args) => {
                let args = args.iter().map(|a| self.term(a, g, y, xs, dtype)).collect();
                self.elem(*op, args)
            }
        }
    }

    /// zeros of x's type: a constant for a scalar, else `zeros_like(x)` (zeros of x's
    /// shape for a trace of a scan with `checkpoints`, whose shape is known without it).
    fn zeros_like(&mut self, x: NodeId) -> NodeId {
        let t = self.ty(x);
        if t.rank == 0 {
            return self.float(0.0, t.dtype);
        }
        if checkpoints::is_checkpointed_trace(self, x) {
            let mut inputs = vec![self.float(0.0, t.dtype)];
            inputs.extend(self.shapes(x));
            return self.add(Op::Full, inputs, t);
        }
        self.add(
            Op::FillLike {
                value: Literal::Float(0.0),
            },
            vec![x],
            t,
        )
    }

    /// The length of x's axis `axis`, an i64 scalar: read off x's operands where x is a
    /// product or an elementwise result, so that an adjoint needing only x's shape does not
    /// keep x (a recomputed product in a backward step) alive.
    fn shape(&mut self, x: NodeId, axis: usize) -> NodeId {
        let node = self.g.node(x).clone();
        match (&node.op, &node.inputs[..]) {
            (Op::ScanOutput { index }, &[scan]) => {
                // A trace of a scan with `checkpoints`: not kept for its shape.
                if let Some(length) = checkpoints::trace_shape(self, scan, *index, axis) {
                    return length;
                }
            }
            (Op::Dot, &[a, b]) => match (self.ty(a).rank, self.ty(b).rank, axis) {
                (2, 2, 0) | (2, 1, 0) => return self.shape(a, 0),
                (2, 2, 1) | (1, 2, 0) => return self.shape(b, 1),
                _ => {}
            },
            (Op::Elemwise(_) | Op::Cast, inputs) => {
                // numpy's broadcast of the operands' lengths on this axis (trailing axes
                // aligned): a length of 1 gives way to the other.
                let rank = node.ty.rank;
                let mut length: Option<NodeId> = None;
                for &i in inputs {
                    let r = self.ty(i).rank;
                    if r == 0 || r + axis < rank {
                        continue;
                    }
                    let l = self.shape(i, axis + r - rank);
                    length = Some(match length {
                        None => l,
                        Some(m) => {
                            let one = self.int(1);
                            let is_one = self.elem(ElemOp::Eq, vec![m, one]);
                            self.elem(ElemOp::Where, vec![is_one, l, m])
                        }
                    });
                }
                if let Some(l) = length {
                    return l;
                }
            }
            _ => {}
        }
        self.add(Op::Shape { axis }, vec![x], Type::scalar(DType::I64))
    }

    fn shapes(&mut self, x: NodeId) -> Vec<NodeId> {
        (0..self.ty(x).rank).map(|k| self.shape(x, k)).collect()
    }

    /// Every element of x summed (x itself for a scalar).
    fn sum_all(&mut self, x: NodeId) -> NodeId {
        self.reduce(ReduceOp::Sum, x, None)
    }

    fn reduce(&mut self, op: ReduceOp, x: NodeId, axis: Option<usize>) -> NodeId {
        let t = self.ty(x);
        if t.rank == 0 {
            return x;
        }
        let rank = if axis.is_some() { t.rank - 1 } else { 0 };
        self.add(Op::Reduce { op, axis }, vec![x], t.with_rank(rank))
    }

    /// `g` (a contribution of the broadcast result's shape) summed to `like`'s shape.
    fn unbroadcast(&mut self, g: NodeId, like: NodeId) -> NodeId {
        let t = self.ty(like);
        if t.rank == 0 {
            return self.sum_all(g);
        }
        // Only like's shape is read: a computed value is replaced by a view of its shape
        // (zeros broadcast), so that its computation is not kept for it.
        let computed = matches!(self.g.node(like).op, Op::Dot | Op::Elemwise(_) | Op::Cast);
        let like = if computed || checkpoints::is_checkpointed_trace(self, like) {
            let mut inputs = vec![self.float(0.0, t.dtype)];
            inputs.extend(self.shapes(like));
            self.add(Op::BroadcastTo, inputs, t)
        } else {
            like
        };
        self.add(Op::Unbroadcast, vec![g, like], t)
    }

    /// A view of `x` through `path` (its operands `operands`).
    fn subtensor(&mut self, x: NodeId, path: Vec<PathStep>, operands: Vec<NodeId>) -> NodeId {
        let t = self.ty(x);
        let change: isize = path.iter().map(PathStep::rank_change).sum();
        let rank = t.rank.saturating_add_signed(change);
        let mut inputs = vec![x];
        inputs.extend(operands);
        self.add(Op::Subtensor { path }, inputs, t.with_rank(rank))
    }

    /// `path` acting on axis `axis` (then back to axis 0).
    fn on_axis(axis: usize, step: PathStep) -> Vec<PathStep> {
        if axis == 0 {
            vec![step]
        } else {
            vec![PathStep::At(axis), step, PathStep::At(0)]
        }
    }

    /// x with a new axis of length 1 at `axis`.
    fn new_axis(&mut self, x: NodeId, axis: usize) -> NodeId {
        self.subtensor(x, Self::on_axis(axis, PathStep::NewAxis), vec![])
    }

    /// x reversed along `axis` (`x[::-1]` there).
    fn flip(&mut self, x: NodeId, axis: usize) -> NodeId {
        let step = self.int(-1);
        let path = Self::on_axis(
            axis,
            PathStep::Stepped {
                start: false,
                end: false,
            },
        );
        self.subtensor(x, path, vec![step])
    }

    /// `v`, a reduction of x along `axis` (every axis for `None`), broadcast back to x's
    /// shape (a view).
    fn expand(&mut self, v: NodeId, x: NodeId, axis: Option<usize>) -> NodeId {
        let t = self.ty(x);
        // A scalar broadcasts as it is; a reduced axis comes back with length 1.
        let v = match axis {
            Some(a) if self.ty(v).rank > 0 => self.new_axis(v, a),
            _ => v,
        };
        let mut inputs = vec![v];
        inputs.extend(self.shapes(x));
        self.add(Op::BroadcastTo, inputs, t.with_dtype(self.ty(v).dtype))
    }

    /// How many elements a reduction of x along `axis` (every axis for `None`) reads, as
    /// a float scalar of `dtype`.
    fn count(&mut self, x: NodeId, axis: Option<usize>, dtype: DType) -> NodeId {
        let n = match axis {
            Some(a) => self.shape(x, a),
            None => {
                let mut n = self.int(1);
                for k in 0..self.ty(x).rank {
                    let s = self.shape(x, k);
                    n = self.elem(ElemOp::Mul, vec![n, s]);
                }
                n
            }
        };
        self.cast(n, dtype)
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Graph, Op};

    /// The graph of the function of `source`, before the rewrites.
    fn graph(source: &str) -> Graph {
        let functions = crate::compile_to_ir(source).unwrap_or_else(|e| panic!("{e}"));
        functions.into_iter().next().expect("one function").graph
    }

    /// The labels of `g`'s nodes after its first `sum` (the cost), a run of one label
    /// given once.
    fn gradient_labels(g: &Graph) -> Vec<&str> {
        let cost = g
            .nodes
            .iter()
            .position(|n| matches!(n.op, Op::Reduce { .. }))
            .expect("a sum");
        let mut labels: Vec<&str> = g.nodes[cost + 1..]
            .iter()
            .map(|n| n.label.as_str())
            .collect();
        labels.dedup();
        labels
    }

    #[test]
    fn labels_name_each_adjoint_and_the_rule_that_made_it() {
        let g = graph(
            "fn f(x: ArrayView1<f64>, w: ArrayView1<f64>) -> Result<Array1<f64>> {
                let h = tanh(x * w);
                Ok(grad(sum(h), w))
            }",
        );
        // The seed, sum's rule (shapes) and its contribution to h, tanh's rule
        // (1 - h²) and its contribution, the product's rule and the gradient.
        assert_eq!(
            gradient_labels(&g),
            [
                "adjoint of sum(h)",
                "adjoint through sum(h)",
                "adjoint of h",
                "adjoint through tanh(x * w)",
                "adjoint of x * w",
                "adjoint through x * w",
                "adjoint of w",
            ]
        );
        assert_eq!(g.node(g.outputs[0]).label, "adjoint of w");
    }

    /// An LSTM's backward step reads the activations the forward step kept (the four
    /// gates) instead of computing them again, and with them the gate block and its two
    /// products, which it needed only for those activations and their shape; tanh(c_t) it
    /// computes again from c_t's trace (kept, it would cost a trace for the same work).
    #[test]
    fn a_backward_scan_reads_the_kept_activations_and_recomputes_no_gate() {
        // scan-bench's lstm_grad, as `scanc explain` shows it.
        let g = graph(include_str!("../../tests/explain/lstm_grad.scan"));
        let scans: Vec<&crate::ir::ScanOp> = g
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                Op::Scan(op) => Some(&**op),
                _ => None,
            })
            .collect();
        let [forward, back] = scans[..] else {
            panic!("a forward and a backward scan: {} scans", scans.len());
        };
        let kept: Vec<&str> = forward.outputs[2..]
            .iter()
            .map(|o| o.label.as_str())
            .collect();
        assert_eq!(
            kept,
            [
                "sigmoid(z[(.., 3 * n..)])",
                "tanh(z[(.., 2 * n..3 * n)])",
                "sigmoid(z[(.., n..2 * n)])",
                "sigmoid(z[(..,..n)])",
            ]
        );
        let live = back.step.live();
        let recomputed: Vec<&str> = back
            .step
            .nodes
            .iter()
            .enumerate()
            .filter(|&(i, n)| {
                live[i]
                    && match n.op {
                        Op::Elemwise(op) => op.is_transcendental(),
                        Op::Dot => !n.label.starts_with("adjoint"),
                        _ => false,
                    }
            })
            .map(|(_, n)| n.label.as_str())
            .collect();
        assert_eq!(recomputed, ["tanh(c_t)"], "computed again");
        let tanh_c = back
            .step
            .nodes
            .iter()
            .enumerate()
            .find(|&(i, n)| live[i] && n.label == "tanh(c_t)")
            .map(|(_, n)| n);
        let read = tanh_c.map(|n| &back.step.node(n.inputs[0]).label);
        assert_eq!(read.map(String::as_str), Some("c[t]"), "from c's trace");
    }

    #[test]
    fn a_backward_scan_names_the_outputs_by_their_traces_names() {
        let g = graph(
            "fn f(x: ArrayView1<f64>, w: f64) -> Result<f64> {
                let h = scan(|x_t, h_tm1, w| h_tm1 * w + x_t, sequences = x, outputs_info = 0.0, non_sequences = w);
                Ok(grad(sum(h), w))
            }",
        );
        let scans: Vec<_> = g
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                Op::Scan(op) => Some((n.label.as_str(), op)),
                _ => None,
            })
            .collect();
        let [_, (label, back)] = scans[..] else {
            panic!("a forward and a backward scan: {} scans", scans.len());
        };
        assert_eq!(label, "adjoint through scan of h_tm1 * w + x_t");
        let sequences: Vec<&str> = back.sequences.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(sequences, ["adjoint of h", "x[t+0]", "h[t-1]", "h[t]"]);
        let outputs: Vec<&str> = back.outputs.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(outputs, ["adjoint of h[t-1]", "adjoint of w"]);
        // The step: the seed, the product's contributions to h[t-1] and w, w's sum.
        let step: Vec<&str> = back
            .step
            .nodes
            .iter()
            .filter(|n| !matches!(n.op, Op::Input { .. }))
            .map(|n| n.label.as_str())
            .collect();
        assert_eq!(
            step,
            [
                "adjoint of h[t]",
                "adjoint of h[t-1]",
                "adjoint of w",
                "adjoint of w"
            ]
        );
        assert_eq!(g.node(g.outputs[0]).label, "adjoint of w");
    }
}
