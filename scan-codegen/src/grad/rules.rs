//! One gradient rule per op: given a node `y` and its adjoint `g`, the contribution to the
//! adjoint of each operand the sweep wants (a float operand on a path from a `wrt` node),
//! of that operand's type. The `match` has no wildcard arm: a new op must say here how
//! the gradient passes through it, or that it cannot (a compile error naming it, never a
//! silent zero). Conventions (ties, kinks, repeated indices) are PyTensor's, documented in
//! docs/SEMANTICS.md ("Gradients"). The linear algebra's rules are in `linalg.rs`.

use super::Builder;
use crate::ir::{ElemOp, NodeId, Op, Partial, PathStep, ReduceOp};
use crate::messages as msg;

/// The contributions `(operand position, node)` of node `y` with adjoint `g`, for the
/// operands `want` marks; `Err` with the message when the gradient cannot pass `y`.
pub(super) fn adjoints(
    b: &mut Builder,
    y: NodeId,
    g: NodeId,
    want: &[bool],
) -> Result<Vec<(usize, NodeId)>, String> {
    let node = b.g.node(y).clone();
    let xs = node.inputs.clone();
    let ty = node.ty;
    let x = |k: usize| xs[k];
    let mut out = Vec::new();
    match &node.op {
        // Leaves.
        Op::Input { .. } | Op::Const(_) => {}
        Op::Elemwise(op) => {
            for (k, partial) in op.partials().iter().enumerate() {
                if !want.get(k).copied().unwrap_or(false) {
                    continue;
                }
                match partial {
                    Partial::Flows(term) => {
                        let c = b.term(term, g, y, &xs, ty.dtype);
                        // The result has operand k's shape when every other operand is a
                        // scalar or k itself: nothing was broadcast to sum back.
                        let alone = xs.iter().all(|&o| o == xs[k] || b.ty(o).rank == 0);
                        let c = if alone && b.ty(c).rank == b.ty(x(k)).rank {
                            c
                        } else {
                            b.unbroadcast(c, x(k))
                        };
                        out.push((k, c));
                    }
                    Partial::Stops => {}
                    Partial::Missing(what) => {
                        return Err(msg::grad_missing_derivative(op.name(), what));
                    }
                }
            }
        }
        // A float operand converted to another float dtype: the adjoint converted back.
        Op::Cast => {
            if want[0] {
                let dtype = b.ty(x(0)).dtype;
                out.push((0, b.cast(g, dtype)));
            }
        }
        Op::Dot => out = dot(b, x(0), x(1), g, want),
        Op::MatMul => out = matmul(b, x(0), x(1), g, want),
        Op::Reduce { op, axis } => {
            if want[0] {
                if let Some(c) = reduce(b, *op, *axis, x(0), y, g) {
                    out.push((0, c));
                }
            }
        }
        // The value of `full` is every element of the result.
        Op::Full => {
            if want[0] {
                let s = b.sum_all(g);
                let dtype = b.ty(x(0)).dtype;
                out.push((0, b.cast(s, dtype)));
            }
        }
        // Their values do not depend on their operands' values (shapes, counts).
        Op::FillLike { .. } | Op::Arange | Op::Shape { .. } | Op::Eye | Op::IdentityLike => {}
        Op::Reshape => {
            if want[0] {
                let c = if b.ty(x(0)).rank == 0 {
                    b.sum_all(g)
                } else {
                    let mut inputs = vec![g];
                    inputs.extend(b.shapes(x(0)));
                    let t = b.ty(x(0));
                    b.add(Op::Reshape, inputs, t)
                };
                out.push((0, c));
            }
        }
        // Each part is its slice of the adjoint along the axis.
        Op::Concatenate { axis } => {
            let mut start = b.int(0);
            for (k, &part) in xs.iter().enumerate() {
                let len = b.shape(part, *axis);
                let end = b.elem(ElemOp::Add, vec![start, len]);
                if want[k] {
                    let path = Builder::on_axis(
                        *axis,
                        PathStep::Slice {
                            start: true,
                            end: true,
                        },
                    );
                    out.push((k, b.subtensor(g, path, vec![start, end])));
                }
                start = end;
            }
        }
        Op::Stack { axis } => {
            for (k, &wanted) in want.iter().enumerate() {
                if wanted {
                    let i = b.int(k as i64);
                    let path = Builder::on_axis(*axis, PathStep::Index);
                    out.push((k, b.subtensor(g, path, vec![i])));
                }
            }
        }
        Op::Squeeze { axis } => {
            if want[0] {
                out.push((0, b.new_axis(g, *axis)));
            }
        }
        Op::BroadcastTo => {
            if want[0] {
                out.push((0, b.unbroadcast(g, x(0))));
            }
        }
        // The others give only their shapes.
        Op::BroadcastArrays { index } => {
            if want.get(*index).copied().unwrap_or(false) {
                out.push((*index, b.unbroadcast(g, x(*index))));
            }
        }
        // A vector's diagonal matrix: the adjoint's diagonal.
        Op::Diag if ty.rank == 2 => {
            if want[0] {
                let t = b.ty(x(0));
                out.push((0, b.add(Op::Diag, vec![g, x(1)], t)));
            }
        }
        // A matrix's diagonal k: the adjoint on that diagonal of zeros.
        Op::Diag => {
            if want[0] {
                out.push((0, diagonal(b, x(0), x(1), g)));
            }
        }
        Op::Tri { upper } => {
            if want[0] {
                let t = b.ty(x(0));
                out.push((0, b.add(Op::Tri { upper: *upper }, vec![g, x(1)], t)));
            }
        }
        // A gather: the adjoint added back at the indices (a repeated index adds twice).
        Op::Take { axis } => {
            if want[0] {
                let (src, idx) = (x(0), x(1));
                let zeros = b.zeros_like(src);
                let (g, idx) = if b.ty(idx).rank == 1 {
                    (g, idx)
                } else {
                    // An index array's axes flattened into one, the adjoint's with them.
                    let minus_one = b.int(-1);
                    let it = b.ty(idx);
                    let flat = b.add(Op::Reshape, vec![idx, minus_one], it.with_rank(1));
                    let mut dims: Vec<NodeId> = (0..*axis).map(|k| b.shape(src, k)).collect();
                    dims.push(minus_one);
                    dims.extend((axis + 1..b.ty(src).rank).map(|k| b.shape(src, k)));
                    let mut inputs = vec![g];
                    inputs.extend(dims);
                    let t = b.ty(src);
                    (b.add(Op::Reshape, inputs, t), flat)
                };
                let t = b.ty(src);
                let op = Op::Scatter {
                    axis: *axis,
                    inc: true,
                };
                out.push((0, b.add(op, vec![zeros, g, idx], t)));
            }
        }
        Op::MaskTake => {
            if want[0] {
                let zeros = b.zeros_like(x(0));
                let t = b.ty(x(0));
                out.push((0, b.add(Op::MaskSet { inc: true }, vec![zeros, g, x(1)], t)));
            }
        }
        // `x` with rows set (added to) at the indices: x's adjoint is g, with the rows set
        // zeroed; the value's is g's rows there (PyTensor's: every occurrence of a
        // repeated index, also those a later one overwrote).
        Op::Scatter { axis, inc } => {
            let (dst, value, idx) = (x(0), x(1), x(2));
            if want[0] {
                out.push((
                    0,
                    overwritten(b, g, *inc, |b, g, zero, t| {
                        let op = Op::Scatter {
                            axis: *axis,
                            inc: false,
                        };
                        b.add(op, vec![g, zero, idx], t)
                    }),
                ));
            }
            if want[1] {
                let t = b.ty(dst);
                let rows = b.add(Op::Take { axis: *axis }, vec![g, idx], t);
                out.push((1, b.unbroadcast(rows, value)));
            }
        }
        Op::MaskSet { inc } => {
            let (dst, value, mask) = (x(0), x(1), x(2));
            if want[0] {
                out.push((
                    0,
                    overwritten(b, g, *inc, |b, g, zero, t| {
                        b.add(Op::MaskSet { inc: false }, vec![g, zero, mask], t)
                    }),
                ));
            }
            if want[1] {
                let (t, m) = (b.ty(dst), b.ty(mask));
                let rows = t.with_rank(t.rank - m.rank + 1);
                let taken = b.add(Op::MaskTake, vec![g, mask], rows);
                out.push((1, b.unbroadcast(taken, value)));
            }
        }
        Op::Subtensor { path } => {
            if want[0] {
                if path.iter().any(|s| matches!(s, PathStep::Check(_))) {
                    return Err(msg::grad_no_rule("a loop's check", None));
                }
                let c = if b.ty(x(0)).rank == 0 {
                    b.sum_all(g)
                } else {
                    // inc_subtensor(zeros_like(x)[path], g).
                    let zeros = b.zeros_like(x(0));
                    let mut inputs = vec![zeros, g];
                    inputs.extend(&xs[1..]);
                    let t = b.ty(x(0));
                    let op = Op::SetSubtensor {
                        path: path.clone(),
                        inc: true,
                    };
                    b.add(op, inputs, t)
                };
                out.push((0, c));
            }
        }
        Op::SetSubtensor { path, inc } => {
            let operands = xs[2..].to_vec();
            if path.iter().any(|s| matches!(s, PathStep::Check(_))) {
                return Err(msg::grad_no_rule("a loop's check", None));
            }
            if want[0] {
                out.push((
                    0,
                    overwritten(b, g, *inc, |b, g, zero, t| {
                        let mut inputs = vec![g, zero];
                        inputs.extend(&operands);
                        let op = Op::SetSubtensor {
                            path: path.clone(),
                            inc: false,
                        };
                        b.add(op, inputs, t)
                    }),
                ));
            }
            if want[1] {
                let region = b.subtensor(g, path.clone(), operands.clone());
                out.push((1, b.unbroadcast(region, x(1))));
            }
        }
        Op::Transpose => {
            if want[0] {
                let t = b.ty(x(0));
                out.push((0, b.add(Op::Transpose, vec![g], t)));
            }
        }
        Op::Permute { axes } => {
            if want[0] {
                let mut inverse = vec![0; axes.len()];
                for (k, &a) in axes.iter().enumerate() {
                    if let Some(slot) = inverse.get_mut(a) {
                        *slot = k;
                    }
                }
                let t = b.ty(x(0));
                out.push((0, b.add(Op::Permute { axes: inverse }, vec![g], t)));
            }
        }
        Op::Cumulative { product, axis } => {
            if want[0] {
                out.push((0, cumulative(b, *product, *axis, x(0), y, g)));
            }
        }
        Op::ZeroStepShape => {
            if want[0] {
                out.push((0, g));
            }
        }
        // The linear algebra's rules live in `linalg.rs`.
        Op::Linalg(op) => out = super::linalg::adjoints(b, *op, y, g, want)?,
        // The sweep gathers a factorisation's adjoints by part and hands them to
        // `linalg::parts` at the node itself.
        Op::Part { .. } => {
            if want[0] {
                let name = match &b.g.node(x(0)).op {
                    Op::Linalg(op) => op.name(),
                    _ => "part",
                };
                return Err(msg::grad_no_rule(name, None));
            }
        }
        // A draw is not differentiable in its parameters here (PyTensor's are not either).
        Op::Random(op) => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule(op.name(), Some("a random draw")));
            }
        }
        // The sweep gathers a scan's adjoints by output and hands them to `scan.rs`.
        Op::Scan(_) | Op::ScanOutput { .. } => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("a scan's result", None));
            }
        }
        // Made by rewrites, which run after `grad`: never seen here.
        Op::DotSum { .. } => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("dot_sum", None));
            }
        }
        Op::Fused(_) => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("a fused chain", None));
            }
        }
        Op::DotAdd { .. } => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("dot_add", None));
            }
        }
        Op::LastOr => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("last_or", None));
            }
        }
        Op::StackRows | Op::StackedDot { .. } => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("stacked_dot", None));
            }
        }
        Op::JoinSlices { .. } => {
            if want.iter().any(|&w| w) {
                return Err(msg::grad_no_rule("join_slices", None));
            }
        }
        // The adjoint of a sum back to a shape is the adjoint broadcast out again.
        Op::Unbroadcast => {
            if want[0] {
                let t = b.ty(x(0));
                let mut inputs = vec![g];
                inputs.extend(b.shapes(x(0)));
                out.push((0, b.add(Op::BroadcastTo, inputs, t)));
            }
        }
    }
    Ok(out)
}

/// The adjoint of `diag(m, k)` of a matrix `m` (`[r, c]`) given the diagonal's adjoint
/// `g`: `diag(g, k)`, a square matrix of side `s = len(g) + |k|` whose nonzero elements are
/// all within `m`'s shape, cut to it and written into zeros of m's shape:
/// `set_subtensor(zeros_like(m)[..s, ..s], diag(g, k)[..r, ..c])` (both regions are
/// `[min(s, r), min(s, c)]`).
fn diagonal(b: &mut Builder, m: NodeId, k: NodeId, g: NodeId) -> NodeId {
    let t = b.ty(m);
    let d = b.add(Op::Diag, vec![g, k], t);
    let corner = vec![
        PathStep::Slice {
            start: false,
            end: true,
        },
        PathStep::At(1),
        PathStep::Slice {
            start: false,
            end: true,
        },
        PathStep::At(0),
    ];
    let (r, c) = (b.shape(m, 0), b.shape(m, 1));
    let cut = b.subtensor(d, corner.clone(), vec![r, c]);
    let s = b.shape(d, 0);
    let zeros = b.zeros_like(m);
    let op = Op::SetSubtensor {
        path: corner,
        inc: false,
    };
    b.add(op, vec![zeros, cut, s, s], t)
}

/// The adjoint of the array written into (`set_subtensor` and kin): all of g when
/// incrementing, else g with the written part zeroed (`zero_part(b, g, 0, type)`).
fn overwritten(
    b: &mut Builder,
    g: NodeId,
    inc: bool,
    zero_part: impl FnOnce(&mut Builder, NodeId, NodeId, crate::ir::Type) -> NodeId,
) -> NodeId {
    if inc {
        return g;
    }
    let t = b.ty(g);
    let zero = b.float(0.0, t.dtype);
    zero_part(b, g, zero, t)
}

/// numpy's `dot` by ranks (the pairs lowering makes a `Dot`: 1-1, 1-2, 2-1, 2-2, 3-1, 3-2).
fn dot(b: &mut Builder, a: NodeId, w: NodeId, g: NodeId, want: &[bool]) -> Vec<(usize, NodeId)> {
    let (ta, tw) = (b.ty(a), b.ty(w));
    let mut out = Vec::new();
    let dot = |b: &mut Builder, p: NodeId, q: NodeId| {
        let rank = match (b.ty(p).rank, b.ty(q).rank) {
            (1, 1) => 0,
            (1, 2) | (2, 1) => 1,
            (2, 2) | (3, 1) => 2,
            _ => 3,
        };
        let t = b.ty(p).with_rank(rank);
        b.add(Op::Dot, vec![p, q], t)
    };
    let transpose = |b: &mut Builder, m: NodeId| {
        let t = b.ty(m);
        b.add(Op::Transpose, vec![m], t)
    };
    match (ta.rank, tw.rank) {
        (1, 1) => {
            if want[0] {
                out.push((0, b.mul(g, w)));
            }
            if want[1] {
                out.push((1, b.mul(g, a)));
            }
        }
        // a[k] . w[k, n] = y[n]
        (1, 2) => {
            if want[0] {
                out.push((0, dot(b, w, g)));
            }
            if want[1] {
                let col = b.new_axis(a, 1);
                out.push((1, b.mul(col, g)));
            }
        }
        // a[m, k] . w[k] = y[m]
        (2, 1) => {
            if want[0] {
                let col = b.new_axis(g, 1);
                out.push((0, b.mul(col, w)));
            }
            if want[1] {
                out.push((1, dot(b, g, a)));
            }
        }
        (2, 2) => {
            if want[0] {
                let wt = transpose(b, w);
                out.push((0, dot(b, g, wt)));
            }
            if want[1] {
                let at = transpose(b, a);
                out.push((1, dot(b, at, g)));
            }
        }
        // a[n, m, k] . w[k] = y[n, m]
        (3, 1) => {
            let col = b.new_axis(g, 2);
            if want[0] {
                out.push((0, b.mul(col, w)));
            }
            if want[1] {
                let terms = b.mul(col, a);
                let rows = b.reduce(ReduceOp::Sum, terms, Some(0));
                out.push((1, b.reduce(ReduceOp::Sum, rows, Some(0))));
            }
        }
        // a[n, m, k] . w[k, p] = y[n, m, p]
        _ => {
            if want[0] {
                let wt = transpose(b, w);
                out.push((0, dot(b, g, wt)));
            }
            if want[1] {
                let at = permute_last(b, a);
                let t = b.ty(at);
                let each = b.add(Op::MatMul, vec![at, g], t);
                out.push((1, b.reduce(ReduceOp::Sum, each, Some(0))));
            }
        }
    }
    out
}

/// A stack of matrices with each matrix transposed (a view).
fn permute_last(b: &mut Builder, m: NodeId) -> NodeId {
    let t = b.ty(m);
    b.add(
        Op::Permute {
            axes: vec![0, 2, 1],
        },
        vec![m],
        t,
    )
}

/// numpy's `matmul` with a stack on the right: `a` a vector, a matrix or a stack.
fn matmul(b: &mut Builder, a: NodeId, s: NodeId, g: NodeId, want: &[bool]) -> Vec<(usize, NodeId)> {
    let mut out = Vec::new();
    let matmul = |b: &mut Builder, p: NodeId, q: NodeId| {
        let t = b.ty(q).with_rank(3);
        b.add(Op::MatMul, vec![p, q], t)
    };
    match b.ty(a).rank {
        // a[k], s[n, k, p] -> y[n, p]
        1 => {
            let g3 = b.new_axis(g, 1);
            if want[0] {
                let terms = b.mul(s, g3);
                let per = b.reduce(ReduceOp::Sum, terms, Some(2));
                out.push((0, b.reduce(ReduceOp::Sum, per, Some(0))));
            }
            if want[1] {
                let row = b.new_axis(a, 0);
                let col = b.new_axis(row, 2);
                out.push((1, b.mul(col, g3)));
            }
        }
        // a[m, k], s[n, k, p] -> y[n, m, p]
        2 => {
            if want[0] {
                let st = permute_last(b, s);
                let each = matmul(b, g, st);
                out.push((0, b.reduce(ReduceOp::Sum, each, Some(0))));
            }
            if want[1] {
                let t = b.ty(a);
                let at = b.add(Op::Transpose, vec![a], t);
                out.push((1, matmul(b, at, g)));
            }
        }
        // Stacks, a batch of 1 on either side broadcast.
        _ => {
            if want[0] {
                let st = permute_last(b, s);
                let each = matmul(b, g, st);
                out.push((0, b.unbroadcast(each, a)));
            }
            if want[1] {
                let at = permute_last(b, a);
                let each = matmul(b, at, g);
                out.push((1, b.unbroadcast(each, s)));
            }
        }
    }
    out
}

/// The adjoint of a float reduction of `x` (result `y`, adjoint `g`); `None` for the
/// reductions with no float result (no adjoint reaches them).
fn reduce(
    b: &mut Builder,
    op: ReduceOp,
    axis: Option<usize>,
    x: NodeId,
    y: NodeId,
    g: NodeId,
) -> Option<NodeId> {
    let dtype = b.ty(x).dtype;
    let gb = b.expand(g, x, axis);
    Some(match op {
        ReduceOp::Sum => gb,
        ReduceOp::Mean => {
            let n = b.count(x, axis, dtype);
            b.elem(ElemOp::Div, vec![gb, n])
        }
        // PyTensor's Max: every element equal to the extreme gets the whole adjoint.
        ReduceOp::Max | ReduceOp::Min => {
            let yb = b.expand(y, x, axis);
            let at = b.elem(ElemOp::Eq, vec![x, yb]);
            let zero = b.float(0.0, dtype);
            b.elem(ElemOp::Where, vec![at, gb, zero])
        }
        // softmax(x) along the axis.
        ReduceOp::LogSumExp => {
            let yb = b.expand(y, x, axis);
            let d = b.elem(ElemOp::Sub, vec![x, yb]);
            let e = b.elem(ElemOp::Exp, vec![d]);
            b.mul(gb, e)
        }
        // var = mean((x - m)^2): 2 (x - m) / n; std = sqrt(var): (x - m) / (n std).
        ReduceOp::Var | ReduceOp::Std => {
            let m = b.reduce(ReduceOp::Mean, x, axis);
            let mb = b.expand(m, x, axis);
            let d = b.elem(ElemOp::Sub, vec![x, mb]);
            let n = b.count(x, axis, dtype);
            let scale = if op == ReduceOp::Var {
                let two = b.float(2.0, dtype);
                b.elem(ElemOp::Div, vec![two, n])
            } else {
                let yb = b.expand(y, x, axis);
                let ny = b.mul(n, yb);
                let one = b.float(1.0, dtype);
                b.elem(ElemOp::Div, vec![one, ny])
            };
            let dd = b.mul(d, scale);
            b.mul(gb, dd)
        }
        // PyTensor's Prod: y / x without a zero; with one zero, the product of the others
        // at the zero (0 elsewhere); with more, 0.
        ReduceOp::Prod => {
            let zero = b.float(0.0, dtype);
            let one = b.float(1.0, dtype);
            let is0 = b.elem(ElemOp::Eq, vec![x, zero]);
            let nonzero = b.elem(ElemOp::Where, vec![is0, one, x]);
            let others = b.reduce(ReduceOp::Prod, nonzero, axis);
            let others = b.expand(others, x, axis);
            let zeros = b.cast(is0, dtype);
            let count = b.reduce(ReduceOp::Sum, zeros, axis);
            let count = b.expand(count, x, axis);
            let yb = b.expand(y, x, axis);
            let plain = b.elem(ElemOp::Div, vec![yb, x]);
            let none = b.elem(ElemOp::Eq, vec![count, zero]);
            let single = b.elem(ElemOp::Eq, vec![count, one]);
            let here = b.elem(ElemOp::And, vec![single, is0]);
            let at_zero = b.elem(ElemOp::Where, vec![here, others, zero]);
            let d = b.elem(ElemOp::Where, vec![none, plain, at_zero]);
            b.mul(gb, d)
        }
        ReduceOp::All | ReduceOp::Any | ReduceOp::ArgMax | ReduceOp::ArgMin => return None,
    })
}

/// cumsum: the adjoint's reversed running sums; cumprod: PyTensor's
/// `cumsum((g y)[::-1])[::-1] / x` (not defined where x is 0).
fn cumulative(
    b: &mut Builder,
    product: bool,
    axis: Option<usize>,
    x: NodeId,
    y: NodeId,
    g: NodeId,
) -> NodeId {
    let tx = b.ty(x);
    let seed = if product { b.mul(g, y) } else { g };
    let along = axis.unwrap_or(0);
    let flipped = b.flip(seed, along);
    let t = b.ty(flipped);
    let sums = b.add(
        Op::Cumulative {
            product: false,
            axis: Some(along),
        },
        vec![flipped],
        t,
    );
    let mut c = b.flip(sums, along);
    if axis.is_none() {
        // Of every element flattened: back to x's shape.
        c = if tx.rank == 0 {
            b.sum_all(c)
        } else if tx.rank == 1 {
            c
        } else {
            let mut inputs = vec![c];
            inputs.extend(b.shapes(x));
            b.add(Op::Reshape, inputs, tx)
        };
    }
    if product {
        c = b.elem(ElemOp::Div, vec![c, x]);
    }
    c
}
