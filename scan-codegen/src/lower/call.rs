//! Named functions and methods of the step language (`a.f(b)` is `f(a, b)`). The
//! elementwise family comes from `ir::elemwise`; the others are listed here, each with its
//! type rule.

use super::expr::Path;
use super::{Lowerer, Value};
use crate::ast::{Expr, ExprKind, IndexItem, Lit};
use crate::ir::{DType, ElemOp, Literal, NodeId, Op, PathStep, ReduceOp, Type};

/// What `set_subtensor` writes into.
enum Target {
    /// A view of the value through a path.
    Path(Value, Path),
    /// numpy's `x[idx] = v` on `axis`: rows of x at the indices of `idx` (an integer
    /// vector).
    Scatter { x: Value, idx: Value, axis: usize },
    /// numpy's `x[mask] = v`: the elements (or rows) of x where a boolean array covering
    /// its leading axes is true.
    Mask { x: Value, mask: Value },
}

/// The most axes a value may have (ndarray's largest static dimension, `Ix6`).
pub(super) const MAX_RANK: usize = 6;

/// Every callable name, for the "unknown function" message.
const OTHER_FUNCTIONS: &[&str] = &[
    "grad",
    "powi",
    "dot",
    "matmul",
    "tensordot",
    "sum",
    "max",
    "min",
    "mean",
    "prod",
    "all",
    "any",
    "argmax",
    "argmin",
    "var",
    "std",
    "logsumexp",
    "softmax",
    "log_softmax",
    "expand_dims",
    "outer",
    "cumsum",
    "cumprod",
    "zeros",
    "ones",
    "full",
    "eye",
    "reshape",
    "concatenate",
    "stack",
    "squeeze",
    "broadcast_to",
    "diag",
    "tril",
    "triu",
    "identity_like",
    "flip",
    "slice",
    "take",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "set_subtensor",
    "inc_subtensor",
    "transpose",
    "t",
    "shape",
    "len",
    "nrows",
    "ncols",
];

impl Lowerer<'_> {
    /// `arg`'s value when it is a scalar, else `message` (given the type found) as an error
    /// on it.
    fn scalar_value(&mut self, arg: &Expr, message: fn(Type) -> String) -> Option<Value> {
        let v = self.value(arg)?;
        let t = self.ty(v);
        if t.rank != 0 {
            self.diag.error(arg.span, message(t));
            return None;
        }
        Some(v)
    }

    pub(super) fn call(&mut self, name: &syn::Ident, args: &[Expr], e: &Expr) -> Option<Value> {
        let n = name.to_string();
        if let Some(k) = args
            .iter()
            .find(|a| matches!(a.kind, ExprKind::Keyword(..)))
        {
            self.diag
                .error(k.span, crate::messages::no_keyword_arguments(&n));
            return None;
        }
        let arity = |lo: usize, hi: usize| -> Result<(), String> {
            if args.len() < lo || args.len() > hi {
                let expected = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} or {hi}")
                };
                Err(crate::messages::arity(&n, &expected, args.len()))
            } else {
                Ok(())
            }
        };
        let check = |this: &mut Self, r: Result<(), String>| -> Option<()> {
            r.map_err(|m| this.diag.error(e.span, m)).ok()
        };
        if let Some(op) = ElemOp::by_name(&n) {
            check(self, arity(op.arity(), op.arity()))?;
            let values: Vec<Option<Value>> = args.iter().map(|a| self.value(a)).collect();
            return self.elemwise(op, values.into_iter().collect::<Option<Vec<_>>>()?, e);
        }
        match n.as_str() {
            "powi" => {
                check(self, arity(2, 2))?;
                let x = self.value(&args[0])?;
                let exponent = match &args[1].kind {
                    ExprKind::Lit(Lit::Int(v, _)) => i32::try_from(*v).ok(),
                    ExprKind::Unary("-", inner) => match &inner.kind {
                        ExprKind::Lit(Lit::Int(v, _)) => i32::try_from(-*v).ok(),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(k) = exponent else {
                    self.diag
                        .error(args[1].span, crate::messages::powi_exponent());
                    return None;
                };
                // numpy raises for an integer to a negative power ("Integers to negative
                // integer powers are not allowed"); the exponent is known here.
                let dtype = self.ty(x).dtype;
                if k < 0 && dtype.is_int() {
                    self.diag.error(
                        args[1].span,
                        crate::messages::powi_negative_of_integers(dtype.rust_name(), k),
                    );
                    return None;
                }
                self.elemwise(ElemOp::Powi(k), vec![x], e)
            }
            "dot" => {
                check(self, arity(2, 2))?;
                let a = self.value(&args[0]);
                let b = self.value(&args[1]);
                self.dot(a?, b?, e)
            }
            "matmul" => {
                check(self, arity(2, 2))?;
                let a = self.value(&args[0]);
                let b = self.value(&args[1]);
                self.matmul(a?, b?, e)
            }
            "tensordot" => {
                if args.len() == 2 {
                    self.diag
                        .error(e.span, crate::messages::tensordot_axes(None));
                    return None;
                }
                check(self, arity(3, 3))?;
                let a = self.value(&args[0]);
                let b = self.value(&args[1]);
                self.tensordot(a?, b?, &args[2], e)
            }
            "sum" | "max" | "min" | "mean" | "prod" | "all" | "any" | "argmax" | "argmin"
            | "var" | "std" | "logsumexp" => {
                check(self, arity(1, 2))?;
                let op = match n.as_str() {
                    "sum" => ReduceOp::Sum,
                    "max" => ReduceOp::Max,
                    "min" => ReduceOp::Min,
                    "prod" => ReduceOp::Prod,
                    "all" => ReduceOp::All,
                    "any" => ReduceOp::Any,
                    "argmax" => ReduceOp::ArgMax,
                    "argmin" => ReduceOp::ArgMin,
                    "var" => ReduceOp::Var,
                    "std" => ReduceOp::Std,
                    "logsumexp" => ReduceOp::LogSumExp,
                    _ => ReduceOp::Mean,
                };
                let x = self.value(&args[0])?;
                self.reduce(op, x, args.get(1), e)
            }
            "softmax" | "log_softmax" => {
                // scipy's forms, the largest element taken out first: with m = max(x, axis)
                // and d = x - m (the reduced axis kept, length 1), softmax is
                // exp(d) / sum(exp(d), axis) and log_softmax d - log(sum(exp(d), axis)):
                // no overflow at any magnitude, each element within a few ulp.
                check(self, arity(1, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let x = Value {
                    id: self.cast(x, t.dtype.to_float(), e),
                    weak: x.weak,
                };
                let axis = match args.get(1) {
                    Some(a) => Some(self.axis(a, t)?),
                    None => None,
                };
                let m = self.reduce(ReduceOp::Max, x, args.get(1), e)?;
                let m = self.keep_axis(m, axis, t.rank, e);
                let d = self.elemwise(ElemOp::Sub, vec![x, m], e)?;
                let exp = self.elemwise(ElemOp::Exp, vec![d], e)?;
                let total = self.reduce(ReduceOp::Sum, exp, args.get(1), e)?;
                let total = self.keep_axis(total, axis, t.rank, e);
                if n == "softmax" {
                    self.elemwise(ElemOp::Div, vec![exp, total], e)
                } else {
                    let log = self.elemwise(ElemOp::Log, vec![total], e)?;
                    self.elemwise(ElemOp::Sub, vec![d, log], e)
                }
            }
            "zeros" | "ones" | "full" => {
                // numpy's: `zeros((n, m))` and `ones` in f64, `full(shape, v)` in v's
                // dtype (an untyped integer literal: i64, float: f64); a shape is a tuple
                // of integers or one integer.
                let (lo, hi) = if n == "full" { (2, 2) } else { (1, 1) };
                check(self, arity(lo, hi))?;
                let value = if n == "full" {
                    self.scalar_value(&args[1], crate::messages::full_value)?
                } else {
                    let lit = Literal::Float(f64::from(u8::from(n == "ones")));
                    let id = self.graph().add_const(lit, DType::F64, e.span, &e.label);
                    Value { id, weak: false }
                };
                let mut inputs = vec![value.id];
                inputs.extend(self.shape_operands(&args[0])?);
                let (dtype, rank) = (self.ty(value).dtype, inputs.len() - 1);
                let id = self.add(Op::Full, inputs, Type::new(dtype, rank), e);
                Some(Value { id, weak: false })
            }
            "reshape" => {
                // numpy's `reshape(x, shape)`: a tuple of integer scalars (or one), one of
                // them may be -1; the elements in row-major order.
                check(self, arity(2, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let mut inputs = vec![x.id];
                inputs.extend(self.shape_operands(&args[1])?);
                let rank = inputs.len() - 1;
                let id = self.add(Op::Reshape, inputs, Type::new(t.dtype, rank), e);
                Some(Value { id, weak: x.weak })
            }
            "concatenate" | "stack" => {
                // numpy's `concatenate([a, b, ..], axis)` and `stack([a, b, ..], axis)`
                // (axis 0 by default); a tuple of arrays is accepted as numpy does.
                check(self, arity(1, 2))?;
                let items = match &args[0].kind {
                    ExprKind::List(items) | ExprKind::Tuple(items) => items,
                    _ => {
                        self.diag
                            .error(args[0].span, crate::messages::join_not_a_list(&n));
                        return None;
                    }
                };
                self.join(items, n == "stack", args.get(1), e)
            }
            "squeeze" => {
                // numpy's `squeeze(x, axis)` (or a tuple of axes): each axis, of length 1,
                // removed; a view. Without an axis numpy removes every axis of length 1,
                // which lengths known only at run time would decide: ranks are static.
                let x = if args.len() == 1 {
                    let x = self.value(&args[0])?;
                    if self.ty(x).rank == 0 {
                        return Some(x);
                    }
                    self.diag
                        .error(e.span, crate::messages::squeeze_without_axis());
                    return None;
                } else {
                    check(self, arity(2, 2))?;
                    self.value(&args[0])?
                };
                let t = self.ty(x);
                let mut axes = self.distinct_axes(&args[1], t)?;
                // The highest first, so that the others keep their numbers.
                axes.sort_unstable_by(|a, b| b.cmp(a));
                let mut v = x;
                for axis in axes {
                    let ty = self.ty(v);
                    let id = self.add(
                        Op::Squeeze { axis },
                        vec![v.id],
                        ty.with_rank(ty.rank - 1),
                        e,
                    );
                    v = Value { id, weak: x.weak };
                }
                Some(v)
            }
            "broadcast_to" => {
                // numpy's `broadcast_to(x, shape)`: a read-only view of x repeated along
                // new leading axes and along its axes of length 1.
                check(self, arity(2, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let dims = self.shape_operands(&args[1])?;
                if dims.len() < t.rank {
                    self.diag.error(
                        args[1].span,
                        crate::messages::broadcast_to_drops_axes(&args[0].label, t, dims.len()),
                    );
                    return None;
                }
                if dims.len() > MAX_RANK {
                    self.diag.error(
                        args[1].span,
                        crate::messages::shape_rank_limit(dims.len(), MAX_RANK),
                    );
                    return None;
                }
                if dims.is_empty() {
                    return Some(x);
                }
                let mut inputs = vec![x.id];
                let rank = dims.len();
                inputs.extend(dims);
                // An array, typed as numpy's `broadcast_to(2.0, shape)` is (f64).
                let id = self.add(Op::BroadcastTo, inputs, t.with_rank(rank), e);
                Some(Value { id, weak: false })
            }
            "diag" | "tril" | "triu" => {
                // numpy's `diag(x, k)` (a vector to a square matrix, a matrix to its
                // diagonal) and `tril(x, k)` / `triu(x, k)` on the last two axes; k is 0 by
                // default, any integer scalar.
                check(self, arity(1, 2))?;
                let x = self.value(&args[0]);
                let k = match args.get(1) {
                    Some(a) => self.index_operand(a, "the diagonal offset `k`"),
                    None => Some(
                        self.graph()
                            .add_const(Literal::Int(0), DType::I64, e.span, "0"),
                    ),
                };
                let (x, k) = (x?, k?);
                let t = self.ty(x);
                let (op, rank) = match n.as_str() {
                    "diag" if t.rank == 1 => (Op::Diag, 2),
                    "diag" if t.rank == 2 => (Op::Diag, 1),
                    "diag" => {
                        self.diag.error(args[0].span, crate::messages::diag_rank(t));
                        return None;
                    }
                    _ if t.rank < 2 => {
                        self.diag
                            .error(args[0].span, crate::messages::tri_rank(&n, t));
                        return None;
                    }
                    _ => (Op::Tri { upper: n == "triu" }, t.rank),
                };
                let id = self.add(op, vec![x.id, k], t.with_rank(rank), e);
                Some(Value { id, weak: x.weak })
            }
            "identity_like" => {
                // PyTensor's `identity_like(x)`: `eye(x.shape[0], x.shape[1])` in x's dtype.
                check(self, arity(1, 1))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                if t.rank != 2 {
                    self.diag
                        .error(args[0].span, crate::messages::identity_like_rank(t));
                    return None;
                }
                let id = self.add(Op::IdentityLike, vec![x.id], t, e);
                Some(Value { id, weak: false })
            }
            "flip" => {
                // numpy's `flip(x, axis)` (or a tuple of axes; every axis without one):
                // `x[::-1]` on each, a view.
                check(self, arity(1, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let axes: Vec<usize> = match args.get(1) {
                    None => (0..t.rank).collect(),
                    Some(a) => self.distinct_axes(a, t)?,
                };
                if axes.is_empty() {
                    return Some(x);
                }
                let mut inputs = vec![x.id];
                let mut path = Vec::new();
                for &axis in &axes {
                    if axis > 0 || !path.is_empty() {
                        path.push(PathStep::At(axis));
                    }
                    path.push(PathStep::Stepped {
                        start: false,
                        end: false,
                    });
                    inputs.push(
                        self.graph()
                            .add_const(Literal::Int(-1), DType::I64, e.span, "-1"),
                    );
                }
                if axes.iter().any(|&a| a > 0) {
                    path.push(PathStep::At(0));
                }
                let id = self.add(Op::Subtensor { path }, inputs, t, e);
                Some(Value { id, weak: x.weak })
            }
            "take" => {
                // numpy's `take(x, idx, axis)`: rows of x along `axis` at the indices (an
                // integer vector, or a scalar: x indexed on that axis); without an axis, of
                // x flattened.
                check(self, arity(2, 3))?;
                let x = self.value(&args[0]);
                let idx = self.value(&args[1]);
                let (x, idx) = (x?, idx?);
                let t = self.ty(x);
                let (x, axis) = match args.get(2) {
                    Some(a) => (x, self.axis(a, t)?),
                    None if t.rank == 1 => (x, 0),
                    None => {
                        let all =
                            self.graph()
                                .add_const(Literal::Int(-1), DType::I64, e.span, "-1");
                        let id = self.add(Op::Reshape, vec![x.id, all], t.with_rank(1), e);
                        (Value { id, weak: x.weak }, 0)
                    }
                };
                if !self.is_index_array(idx, &args[1], false)? {
                    let i = self.scalar_index(idx, &args[1], "the index given to `take`")?;
                    let path = if axis > 0 {
                        vec![PathStep::At(axis), PathStep::Index, PathStep::At(0)]
                    } else {
                        vec![PathStep::Index]
                    };
                    let ty = self.ty(x);
                    let id = self.add(
                        Op::Subtensor { path },
                        vec![x.id, i],
                        ty.with_rank(ty.rank - 1),
                        e,
                    );
                    return Some(Value { id, weak: x.weak });
                }
                self.gather(x, idx, axis, e)
            }
            "slice" => {
                self.diag
                    .error(name.span(), crate::messages::slice_as_function());
                None
            }
            "eye" => {
                check(self, arity(1, 1))?;
                let n_id = self.index_operand(&args[0], "the size given to `eye`")?;
                let id = self.add(Op::Eye, vec![n_id], Type::new(DType::F64, 2), e);
                Some(Value { id, weak: false })
            }
            "cumsum" | "cumprod" => {
                // numpy's: flattened without an axis; small integers and bools in i64.
                check(self, arity(1, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let dtype = t.dtype.accumulator();
                let axis = match args.get(1) {
                    Some(a) => Some(self.axis(a, t)?),
                    None => None,
                };
                let input = self.cast(x, dtype, e);
                let rank = if axis.is_some() { t.rank } else { 1 };
                let id = self.add(
                    Op::Cumulative {
                        product: n == "cumprod",
                        axis,
                    },
                    vec![input],
                    Type::new(dtype, rank),
                    e,
                );
                Some(Value { id, weak: false })
            }
            "expand_dims" => {
                // numpy's `expand_dims(x, axis)`: a new axis of length 1 at `axis` (of the
                // result: -1 is after the last), a view.
                check(self, arity(2, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let axis = self.axis(&args[1], t.with_rank(t.rank + 1))?;
                Some(self.new_axis(x, axis, e))
            }
            "outer" => {
                // numpy's `outer(a, b)` of two vectors: `a[:, None] * b`.
                check(self, arity(2, 2))?;
                let a = self.value(&args[0])?;
                let b = self.value(&args[1])?;
                let (ta, tb) = (self.ty(a), self.ty(b));
                if ta.rank != 1 || tb.rank != 1 {
                    let (at, t) = if ta.rank != 1 {
                        (&args[0], ta)
                    } else {
                        (&args[1], tb)
                    };
                    self.diag.error(at.span, crate::messages::outer_rank(t));
                    return None;
                }
                let column = self.new_axis(a, 1, e);
                self.elemwise(ElemOp::Mul, vec![column, b], e)
            }
            "zeros_like" | "ones_like" => {
                check(self, arity(1, 1))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let value = super::expr::convert(Literal::Int((n == "ones_like").into()), t.dtype);
                if t.rank == 0 {
                    let id = self.graph().add_const(value, t.dtype, e.span, &e.label);
                    return Some(Value { id, weak: false });
                }
                Some(Value {
                    id: self.add(Op::FillLike { value }, vec![x.id], t, e),
                    weak: false,
                })
            }
            "full_like" => {
                // numpy's `full_like(x, value)`: x's shape and dtype, every element `value`
                // converted to that dtype. A literal value is a fill known when compiling
                // (as `ones_like`), a computed scalar is `full(x.shape, value)`.
                check(self, arity(2, 2))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let v = self.scalar_value(&args[1], crate::messages::full_like_value)?;
                if let Op::Const(lit) = self.graph().node(v.id).op {
                    let value = super::expr::convert(lit, t.dtype);
                    let id = if t.rank == 0 {
                        self.graph().add_const(value, t.dtype, e.span, &e.label)
                    } else {
                        self.add(Op::FillLike { value }, vec![x.id], t, e)
                    };
                    return Some(Value { id, weak: false });
                }
                let value = self.cast(v, t.dtype, e);
                if t.rank == 0 {
                    return Some(Value {
                        id: value,
                        weak: false,
                    });
                }
                let mut inputs = vec![value];
                for axis in 0..t.rank {
                    let len = Type::new(DType::I64, 0);
                    inputs.push(self.add(Op::Shape { axis }, vec![x.id], len, e));
                }
                Some(Value {
                    id: self.add(Op::Full, inputs, t, e),
                    weak: false,
                })
            }
            "arange" => {
                check(self, arity(1, 1))?;
                let count = self.index_operand(&args[0], "the length given to `arange`")?;
                let id = self.add(Op::Arange, vec![count], Type::new(DType::I64, 1), e);
                Some(Value { id, weak: false })
            }
            "set_subtensor" | "inc_subtensor" => {
                check(self, arity(2, 2))?;
                self.set_subtensor(&args[0], &args[1], n == "inc_subtensor", e)
            }
            "shape" | "len" | "nrows" | "ncols" => {
                // `shape(x, i)` (`x.shape[i]`), `x.len()` (axis 0), `x.nrows()`,
                // `x.ncols()`: an axis' length as i64, numpy's int.
                let (lo, hi) = if n == "shape" { (2, 2) } else { (1, 1) };
                check(self, arity(lo, hi))?;
                let x = self.value(&args[0])?;
                let rank = self.ty(x).rank as i64;
                let axis = match n.as_str() {
                    "shape" => match &args[1].kind {
                        ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(*v).ok(),
                        ExprKind::Unary("-", inner) => match &inner.kind {
                            ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(-*v).ok(),
                            _ => None,
                        },
                        _ => None,
                    },
                    "ncols" => Some(1),
                    _ => Some(0),
                };
                let Some(axis) = axis else {
                    self.diag
                        .error(args[1].span, crate::messages::shape_axis_literal());
                    return None;
                };
                let normalized = if axis < 0 { axis + rank } else { axis };
                if !(0..rank).contains(&normalized) || (n == "ncols" && rank != 2) {
                    let at = args.get(1).map_or(e.span, |a| a.span);
                    self.diag.error(
                        at,
                        crate::messages::shape_no_axis(&args[0].label, rank as usize, axis),
                    );
                    return None;
                }
                let id = self.add(
                    Op::Shape {
                        axis: normalized as usize,
                    },
                    vec![x.id],
                    Type::new(DType::I64, 0),
                    e,
                );
                Some(Value { id, weak: false })
            }
            "transpose" if args.len() == 2 => {
                // numpy's `transpose(x, axes)`: a permutation of x's axes, literal
                // integers (negative from the end), a view.
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                let items: Vec<&Expr> = match &args[1].kind {
                    ExprKind::Tuple(items) => items.iter().collect(),
                    _ => vec![&args[1]],
                };
                let mut axes = Vec::new();
                for item in items {
                    axes.push(self.axis(item, t)?);
                }
                let mut sorted = axes.clone();
                sorted.sort_unstable();
                if sorted != (0..t.rank).collect::<Vec<_>>() {
                    self.diag
                        .error(args[1].span, crate::messages::transpose_axes(t));
                    return None;
                }
                if axes.iter().enumerate().all(|(k, &a)| k == a) {
                    return Some(x);
                }
                Some(Value {
                    id: self.add(Op::Permute { axes }, vec![x.id], t, e),
                    weak: x.weak,
                })
            }
            "transpose" | "t" => {
                check(self, arity(1, 1))?;
                let x = self.value(&args[0])?;
                let t = self.ty(x);
                if t.rank < 2 {
                    return Some(x);
                }
                Some(Value {
                    id: self.add(Op::Transpose, vec![x.id], t, e),
                    weak: false,
                })
            }
            _ => {
                let mut all: Vec<&str> = ElemOp::NAMED.iter().map(|(n, _)| *n).collect();
                all.extend(OTHER_FUNCTIONS);
                all.extend(super::linalg::FUNCTIONS);
                all.extend(super::random::RANDOM_FUNCTIONS);
                let own: Vec<String> = self.functions.iter().map(|f| f.name.to_string()).collect();
                let candidates = all.iter().copied().chain(own.iter().map(String::as_str));
                let close = crate::diag::closest(&n, candidates);
                // `x.f(..)` was written as a method (its text does not start with `f(`).
                let method = !e.label.starts_with(&format!("{n}("));
                self.diag.error(
                    name.span(),
                    crate::messages::unknown_function(&n, method, close),
                );
                None
            }
        }
    }

    /// numpy's `dot(a, b)`: vectors and matrices, a stack of matrices (rank 3) by a vector
    /// or a matrix (over its last axis), and a vector or a matrix by a stack (`a`'s last
    /// axis with the stack's second to last: a vector gives `[n, p]` as `matmul` does, a
    /// matrix `[m, n, p]`, `matmul`'s `[n, m, p]` with its first two axes swapped).
    fn dot(&mut self, a: Value, b: Value, e: &Expr) -> Option<Value> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        let rank = match (ta.rank, tb.rank) {
            (1, 1) => 0,
            (1, 2) | (2, 1) => 1,
            (2, 2) | (1, 3) => 2,
            (3, 1) => 2,
            (3, 2) | (2, 3) => 3,
            _ => {
                self.diag.error(e.span, crate::messages::dot_ranks(ta, tb));
                return None;
            }
        };
        let dtype = self.promote(&[a, b]);
        if !dtype.is_number() {
            self.diag
                .error(e.span, crate::messages::numbers_not_bool("dot"));
            return None;
        }
        let inputs = vec![self.cast(a, dtype, e), self.cast(b, dtype, e)];
        if tb.rank == 3 {
            let id = self.add(Op::MatMul, inputs, Type::new(dtype, rank), e);
            if ta.rank == 2 {
                let t = Type::new(dtype, 3);
                let id = self.add(
                    Op::Permute {
                        axes: vec![1, 0, 2],
                    },
                    vec![id],
                    t,
                    e,
                );
                return Some(Value { id, weak: false });
            }
            return Some(Value { id, weak: false });
        }
        Some(Value {
            id: self.add(Op::Dot, inputs, Type::new(dtype, rank), e),
            weak: false,
        })
    }

    /// numpy's `matmul(a, b)` (`a @ b`) of ranks 1 to 3: the matrix product of the last two
    /// axes, leading (batch) axes broadcast; a vector is promoted to a row (left) or a
    /// column (right) and that axis removed. Where it equals `dot` (no stack on the right)
    /// it is `Dot`, else `MatMul`.
    fn matmul(&mut self, a: Value, b: Value, e: &Expr) -> Option<Value> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        if !(1..=3).contains(&ta.rank) || !(1..=3).contains(&tb.rank) {
            self.diag
                .error(e.span, crate::messages::matmul_ranks(ta, tb));
            return None;
        }
        let dtype = self.promote(&[a, b]);
        if !dtype.is_number() {
            self.diag.error(e.span, crate::messages::matmul_of_bools());
            return None;
        }
        let (op, rank) = match (ta.rank, tb.rank) {
            (1, 1) => (Op::Dot, 0),
            (1, 2) | (2, 1) => (Op::Dot, 1),
            (2, 2) | (3, 1) => (Op::Dot, 2),
            (3, 2) => (Op::Dot, 3),
            (1, 3) => (Op::MatMul, 2),
            _ => (Op::MatMul, 3),
        };
        let inputs = vec![self.cast(a, dtype, e), self.cast(b, dtype, e)];
        let id = self.add(op, inputs, Type::new(dtype, rank), e);
        Some(Value { id, weak: false })
    }

    /// numpy's `tensordot(a, b, axes)` contracting one axis of each: `axes` is `1` (a's
    /// last with b's first) or `([i], [j])` / `(i, j)` (a's axis i with b's axis j). The
    /// contracted axes are moved (views) to a's end and b's front, then it is `dot`, whose
    /// ranks it takes: a of rank 1 to 3, b (after the move) a vector or a matrix. Shapes in
    /// its errors are those of the moved views.
    fn tensordot(&mut self, a: Value, b: Value, axes: &Expr, e: &Expr) -> Option<Value> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        let literal = |x: &Expr| -> Option<i64> {
            let x = match &x.kind {
                ExprKind::List(items) if items.len() == 1 => &items[0],
                _ => x,
            };
            match &x.kind {
                ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(*v).ok(),
                ExprKind::Unary("-", inner) => match &inner.kind {
                    ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(-*v).ok(),
                    _ => None,
                },
                _ => None,
            }
        };
        let pair = match &axes.kind {
            ExprKind::Lit(Lit::Int(1, _)) => Some((None, None)),
            ExprKind::Tuple(items) | ExprKind::List(items) if items.len() == 2 => {
                match (literal(&items[0]), literal(&items[1])) {
                    (Some(i), Some(j)) => Some((Some((i, &items[0])), Some((j, &items[1])))),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((i, j)) = pair else {
            self.diag.error(
                axes.span,
                crate::messages::tensordot_axes(Some(&axes.label)),
            );
            return None;
        };
        if ta.rank == 0 || tb.rank == 0 || ta.rank > 3 || tb.rank > 2 {
            self.diag
                .error(e.span, crate::messages::tensordot_ranks(ta, tb));
            return None;
        }
        // An axis given as a literal, checked against the rank (negative from the end).
        let axis_of = |this: &mut Self, given: Option<(i64, &Expr)>, t: Type, last: bool| {
            let Some((v, x)) = given else {
                return Some(if last { t.rank - 1 } else { 0 });
            };
            let rank = t.rank as i64;
            let k = if v < 0 { v + rank } else { v };
            if k < 0 || k >= rank {
                this.diag
                    .error(x.span, crate::messages::axis_out_of_range(v, t));
                return None;
            }
            Some(k as usize)
        };
        let (i, j) = (axis_of(self, i, ta, true)?, axis_of(self, j, tb, false)?);
        // a's axis i last, b's axis j first: views.
        let moved = |this: &mut Self, x: Value, axes: Vec<usize>| {
            if axes.iter().enumerate().all(|(k, &a)| k == a) {
                return x;
            }
            let t = this.ty(x);
            let id = this.add(Op::Permute { axes }, vec![x.id], t, e);
            Value { id, weak: x.weak }
        };
        let a_axes: Vec<usize> = (0..ta.rank).filter(|&k| k != i).chain([i]).collect();
        let b_axes: Vec<usize> = [j]
            .into_iter()
            .chain((0..tb.rank).filter(|&k| k != j))
            .collect();
        let a = moved(self, a, a_axes);
        let b = moved(self, b, b_axes);
        self.dot(a, b, e)
    }

    fn reduce(&mut self, op: ReduceOp, x: Value, axis: Option<&Expr>, e: &Expr) -> Option<Value> {
        let t = self.ty(x);
        let dtype = match op {
            ReduceOp::Mean | ReduceOp::Var | ReduceOp::Std | ReduceOp::LogSumExp => {
                t.dtype.to_float()
            }
            // numpy accumulates small integers (and bools) in its platform integers.
            ReduceOp::Sum | ReduceOp::Prod => t.dtype.accumulator(),
            // Of truth values: a number is true when it is not zero (NaN too).
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            ReduceOp::ArgMax | ReduceOp::ArgMin => DType::I64,
            _ if t.dtype == DType::Bool => {
                self.diag
                    .error(e.span, crate::messages::numbers_not_bool(op.name()));
                return None;
            }
            _ => t.dtype,
        };
        let axis = match axis {
            None => None,
            Some(a) => Some(self.axis(a, t)?),
        };
        if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
            // An index into the value as it is (bools compared as 0 and 1).
            let input = if t.dtype == DType::Bool {
                self.cast(x, DType::I32, e)
            } else {
                x.id
            };
            let rank = match axis {
                Some(_) => t.rank.saturating_sub(1),
                None => 0,
            };
            let id = self.add(
                Op::Reduce { op, axis },
                vec![input],
                Type::new(DType::I64, rank),
                e,
            );
            return Some(Value { id, weak: false });
        }
        let input = self.cast(x, dtype, e);
        if t.rank == 0 {
            return Some(Value {
                id: input,
                weak: x.weak,
            });
        }
        let rank = if axis.is_some() { t.rank - 1 } else { 0 };
        let id = self.add(
            Op::Reduce { op, axis },
            vec![input],
            Type::new(dtype, rank),
            e,
        );
        Some(Value { id, weak: false })
    }

    /// numpy's `stack(items, axis)` (`stack`, and a list `[a, b, c]` on axis 0) or
    /// `concatenate(items, axis)`: the items promoted to one dtype (untyped literals
    /// adapting), of one rank (a compile error on the first item of another rank); their
    /// lengths are checked at run time.
    pub(super) fn join(
        &mut self,
        items: &[Expr],
        stack: bool,
        axis: Option<&Expr>,
        e: &Expr,
    ) -> Option<Value> {
        let name = match (stack, &e.kind) {
            (true, ExprKind::List(_)) => "a list",
            (true, _) => "`stack`",
            (false, _) => "`concatenate`",
        };
        if items.is_empty() {
            self.diag.error(e.span, crate::messages::join_empty(name));
            return None;
        }
        let values: Vec<Option<Value>> = items.iter().map(|x| self.value(x)).collect();
        let values: Vec<Value> = values.into_iter().collect::<Option<_>>()?;
        let first = self.ty(values[0]);
        for (v, item) in values.iter().zip(items) {
            let t = self.ty(*v);
            if !stack && t.rank == 0 {
                self.diag
                    .error(item.span, crate::messages::concatenate_scalar(&item.label));
                return None;
            }
            if t.rank != first.rank {
                self.diag.error(
                    item.span,
                    crate::messages::join_ranks(name, &items[0].label, first, &item.label, t),
                );
                return None;
            }
        }
        let rank = first.rank + usize::from(stack);
        if rank > MAX_RANK {
            self.diag.error(
                e.span,
                crate::messages::join_rank_limit(name, first.rank, rank, MAX_RANK),
            );
            return None;
        }
        let axis = match axis {
            Some(a) => self.axis(a, first.with_rank(rank))?,
            None => 0,
        };
        // Untyped literals adapt to the typed items; the array made is typed, as numpy's
        // arrays are (`x_f32 * [1.0, 2.0]` is f64, as `x * np.array([1.0, 2.0])`).
        let dtype = self.promote(&values);
        let inputs: Vec<NodeId> = values
            .iter()
            .zip(items)
            .map(|(v, item)| self.cast(*v, dtype, item))
            .collect();
        let op = if stack {
            Op::Stack { axis }
        } else {
            Op::Concatenate { axis }
        };
        let id = self.add(op, inputs, Type::new(dtype, rank), e);
        Some(Value { id, weak: false })
    }

    /// `r`, a reduction along `axis` of a value of rank `rank`, with that axis back as an
    /// axis of length 1 (numpy's `keepdims`), so that it broadcasts against the value.
    fn keep_axis(&mut self, r: Value, axis: Option<usize>, rank: usize, e: &Expr) -> Value {
        match axis.filter(|_| rank > 1) {
            Some(axis) => self.new_axis(r, axis, e),
            None => r,
        }
    }

    /// A view of `x` with a new axis of length 1 at `axis` (`x[(.., None)]` for 1).
    fn new_axis(&mut self, x: Value, axis: usize, e: &Expr) -> Value {
        let mut path = vec![PathStep::NewAxis];
        if axis > 0 {
            path = vec![PathStep::At(axis), PathStep::NewAxis, PathStep::At(0)];
        }
        let t = self.ty(x);
        let id = self.add(
            Op::Subtensor { path },
            vec![x.id],
            t.with_rank(t.rank + 1),
            e,
        );
        Value { id, weak: x.weak }
    }

    /// The lengths of a shape (a tuple of integer scalars, or one), as i64 operands.
    pub(super) fn shape_operands(&mut self, shape: &Expr) -> Option<Vec<NodeId>> {
        let dims: Vec<&Expr> = match &shape.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![shape],
        };
        dims.into_iter()
            .map(|d| self.index_operand(d, "a length of the shape"))
            .collect()
    }

    /// A literal axis of a value of type `t`, negative counting from the end.
    /// An axis or a tuple of axes of a value of type `t`, each given once (a repeated one
    /// is a compile error on it).
    fn distinct_axes(&mut self, a: &Expr, t: Type) -> Option<Vec<usize>> {
        let items: Vec<&Expr> = match &a.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![a],
        };
        let mut axes = Vec::new();
        for item in items {
            let axis = self.axis(item, t)?;
            if axes.contains(&axis) {
                self.diag
                    .error(item.span, crate::messages::axis_twice(axis));
                return None;
            }
            axes.push(axis);
        }
        Some(axes)
    }

    fn axis(&mut self, a: &Expr, t: Type) -> Option<usize> {
        let v = match &a.kind {
            ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(*v).ok(),
            ExprKind::Unary("-", inner) => match &inner.kind {
                ExprKind::Lit(Lit::Int(v, _)) => i64::try_from(-*v).ok(),
                _ => None,
            },
            _ => None,
        };
        let Some(v) = v else {
            self.diag
                .error(a.span, crate::messages::axis_literal(&a.label));
            return None;
        };
        let rank = t.rank as i64;
        let normalized = if v < 0 { v + rank } else { v };
        if normalized < 0 || normalized >= rank {
            self.diag
                .error(a.span, crate::messages::axis_out_of_range(v, t));
            return None;
        }
        Some(normalized as usize)
    }

    /// The target of `set_subtensor`: a path into a value, or (numpy's `x[idx] = v`,
    /// `x[:, idx] = v`) an index array on one axis of a value that is not itself indexed,
    /// every other item `..`.
    fn scatter_target(&mut self, target: &Expr) -> Option<Target> {
        let plain = |b: &Expr| {
            !matches!(
                b.kind,
                ExprKind::Index(..) | ExprKind::Slice(..) | ExprKind::MultiIndex(..)
            )
        };
        let (base, idx, axis) = match &target.kind {
            ExprKind::Index(base, idx) if plain(base) => (base, &**idx, 0),
            ExprKind::MultiIndex(base, items) if plain(base) => {
                let mut found = None;
                for (k, item) in items.iter().enumerate() {
                    match item {
                        IndexItem::Full => {}
                        IndexItem::Index(i) if found.is_none() => found = Some((&**i, k)),
                        _ => return self.path_target(target),
                    }
                }
                match found {
                    Some((i, k)) => (base, i, k),
                    None => return self.path_target(target),
                }
            }
            _ => return self.path_target(target),
        };
        let x = self.value(base);
        let v = self.value(idx);
        let (x, v) = (x?, v?);
        let (xt, vt) = (self.ty(x), self.ty(v));
        if vt.dtype == DType::Bool
            && vt.rank > 0
            && axis == 0
            && !matches!(target.kind, ExprKind::MultiIndex(..))
        {
            // numpy's `x[mask] = v`: the mask covers x's leading axes.
            if vt.rank > xt.rank {
                self.diag
                    .error(idx.span, crate::messages::mask_rank(vt, &base.label, xt));
                return None;
            }
            return Some(Target::Mask { x, mask: v });
        }
        if self.is_index_array(v, idx, false)? {
            if vt.rank > 1 {
                self.diag
                    .error(idx.span, crate::messages::scatter_index_rank(vt));
                return None;
            }
            if axis >= self.ty(x).rank {
                let t = self.ty(x);
                self.diag
                    .error(target.span, crate::messages::too_many_indices(t));
                return None;
            }
            return Some(Target::Scatter { x, idx: v, axis });
        }
        // A scalar index: the path `x[i]` or `x[(.., i)]`.
        let i = self.scalar_index(v, idx, "an index")?;
        let path = if axis > 0 {
            vec![
                (PathStep::At(axis), vec![]),
                (PathStep::Index, vec![i]),
                (PathStep::At(0), vec![]),
            ]
        } else {
            vec![(PathStep::Index, vec![i])]
        };
        Some(Target::Path(x, path))
    }

    fn path_target(&mut self, target: &Expr) -> Option<Target> {
        let (base, path) = self.path(target, true)?;
        Some(Target::Path(base, path))
    }

    fn set_subtensor(&mut self, target: &Expr, value: &Expr, inc: bool, e: &Expr) -> Option<Value> {
        if !matches!(
            target.kind,
            ExprKind::Index(..) | ExprKind::Slice(..) | ExprKind::MultiIndex(..)
        ) {
            self.diag
                .error(target.span, crate::messages::set_subtensor_target());
            return None;
        }
        let (base, path, scatter, mask) = match self.scatter_target(target)? {
            Target::Path(base, path) => (base, path, None, None),
            Target::Scatter { x, idx, axis } => (x, Vec::new(), Some((idx, axis)), None),
            Target::Mask { x, mask } => (x, Vec::new(), None, Some(mask)),
        };
        let base_t = self.ty(base);
        if inc && base_t.dtype == DType::Bool {
            self.diag
                .error(target.span, crate::messages::inc_subtensor_bool());
            return None;
        }
        let region = match mask {
            // The selected elements (or rows): one axis for them, then x's other axes.
            Some(m) => base_t.with_rank(1 + base_t.rank - self.ty(m).rank),
            None => self.subtensor_type(base, &path, target)?,
        };
        let v = self.value(value)?;
        let vt = self.ty(v);
        if vt.rank > region.rank {
            self.diag.error(
                value.span,
                crate::messages::set_subtensor_value_rank(vt, region),
            );
            return None;
        }
        if !(v.weak || vt.dtype.casts_safely_to(base_t.dtype)) {
            self.diag.error(
                value.span,
                crate::messages::set_subtensor_value_dtype(vt.dtype, base_t.dtype),
            );
            return None;
        }
        let v = self.cast(v, base_t.dtype, value);
        if let Some(m) = mask {
            let id = self.add(Op::MaskSet { inc }, vec![base.id, v, m.id], base_t, e);
            return Some(Value { id, weak: false });
        }
        if let Some((idx, axis)) = scatter {
            let idx = self.cast(idx, DType::I64, target);
            let id = self.add(Op::Scatter { axis, inc }, vec![base.id, v, idx], base_t, e);
            return Some(Value { id, weak: false });
        }
        let mut inputs: Vec<NodeId> = vec![base.id, v];
        inputs.extend(path.iter().flat_map(|(_, ops)| ops.iter().copied()));
        let steps = path.iter().map(|(s, _)| s.clone()).collect();
        Some(Value {
            id: self.add(Op::SetSubtensor { path: steps, inc }, inputs, base_t, e),
            weak: false,
        })
    }
}
