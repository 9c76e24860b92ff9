//! The non-elementwise, non-scan operations: dot (and the sum of stacked products of
//! push_out_dot), reductions, fills, arange, indexing (read and write) and transpose.

use ndarray::{
    arr0, Array2, ArrayBase, ArrayD, ArrayView3, Axis, Ix2, Ix3, IxDyn, RawData, Slice, Zip,
};

use super::num::{Float, Number};
use super::value::{
    literal_as, map_array, same_any, same_number, with_array, with_dtype, with_int, Element, Value,
};
use crate::ir::{DType, Literal, LoopCheck, PathStep, ReduceOp};

// ---------------------------------------------------------------------------------------
// Dot

/// Vector/matrix products by rank: (1,1) -> scalar, (1,2) -> v·M, (2,1) -> M·v, (2,2) ->
/// matrix product. Integers wrap.
pub fn dot(a: &Value, b: &Value, label: &str) -> Result<Value, String> {
    match same_number!((a, b), (x, y) => dot_arrays(x, y, label).map(Element::into_value)) {
        Some(r) => r,
        None => Err(format!(
            "IR error: `{label}`: dot of {} and {}",
            a.describe(),
            b.describe()
        )),
    }
}

fn dot_arrays<T: Number>(a: &ArrayD<T>, b: &ArrayD<T>, label: &str) -> Result<ArrayD<T>, String> {
    // Vectors become a 1-row (left) or 1-column (right) matrix; the product's shape then
    // drops the axes that were added. A 3-d left operand (numpy's dot over its last axis,
    // made by the push-out of sequence work) is a stack of matrices: its leading axes
    // are flattened into rows and restored after.
    let (m, k) = match *a.shape() {
        [k] => (1, k),
        [m, k] => (m, k),
        [t, r, k] => (t * r, k),
        _ => return Err(bad_dot_ranks(a.shape(), b.shape(), label)),
    };
    let (k2, n) = match *b.shape() {
        [k2] => (k2, 1),
        [k2, n] => (k2, n),
        _ => return Err(bad_dot_ranks(a.shape(), b.shape(), label)),
    };
    if k != k2 {
        return Err(format!(
            "`{label}`: dot of shapes {:?} and {:?}: inner sizes {k} and {k2} differ",
            a.shape(),
            b.shape()
        ));
    }
    let a2 = a
        .to_shape((m, k))
        .map_err(|e| e.to_string())?
        .into_dimensionality::<Ix2>()
        .map_err(|e| e.to_string())?;
    let b2 = b
        .to_shape((k, n))
        .map_err(|e| e.to_string())?
        .into_dimensionality::<Ix2>()
        .map_err(|e| e.to_string())?;
    let product = Array2::from_shape_fn((m, n), |(i, j)| {
        (0..k).fold(T::zero(), |acc, p| acc.add(a2[[i, p]].mul(b2[[p, j]])))
    });
    let shape: Vec<usize> = match (a.ndim(), b.ndim()) {
        (1, 1) => vec![],
        (1, _) => vec![n],
        (3, 1) => vec![a.shape()[0], a.shape()[1]],
        (3, _) => vec![a.shape()[0], a.shape()[1], n],
        (_, 1) => vec![m],
        _ => vec![m, n],
    };
    product
        .into_shape_with_order(IxDyn(&shape))
        .map_err(|e| e.to_string())
}

/// The stack_dots rewrite's `Σ dot(a_i, b_i)` (`Op::StackedDot`): the one product of the
/// `a_i` side by side by `s` (the `b_i` stacked by rows) when the shapes make it equal to
/// the sum, else the products added left to right with numpy's broadcasting.
pub fn stacked_dot(
    s: &Value,
    a: &[Value],
    b: &[Value],
    products: &[String],
    label: &str,
) -> Result<Value, String> {
    if a.len() != b.len() || a.len() != products.len() || a.is_empty() {
        return Err(format!(
            "IR error: `{label}`: stacked_dot of {} operands",
            a.len()
        ));
    }
    if stacks(s, a, b) {
        let last = a[0].rank().saturating_sub(1);
        let joined = super::assemble::concatenate(a, last, label)?;
        return dot(&joined, s, label);
    }
    let mut sum = dot(&a[0], &b[0], &products[0])?;
    for ((a, b), product) in a.iter().zip(b).zip(products).skip(1) {
        let p = dot(a, b, product)?;
        sum = super::elemwise::eval_elemwise(crate::ir::ElemOp::Add, &[sum, p], label)?;
    }
    Ok(sum)
}

/// Whether `dot(concatenate(a, axis=-1), s)` equals `Σ dot(a_i, b_i)` with no broadcast:
/// every `b_i` a matrix with `s`'s columns, their rows adding up to `s`'s, each `a_i`'s
/// last length that of its `b_i`, the `a_i` of one rank (1 or 2) and one row count.
fn stacks(s: &Value, a: &[Value], b: &[Value]) -> bool {
    let [k, n] = *s.shape() else {
        return false;
    };
    let rows: Option<Vec<usize>> = b
        .iter()
        .map(|b| match *b.shape() {
            [r, c] if c == n => Some(r),
            _ => None,
        })
        .collect();
    let Some(rows) = rows else {
        return false;
    };
    let inner = |x: &Value| x.shape().last().copied();
    let outer = |x: &Value| x.shape().split_last().map(|(_, rest)| rest.to_vec());
    rows.iter().sum::<usize>() == k
        && a.iter().zip(&rows).all(|(x, &r)| inner(x) == Some(r))
        && a.iter()
            .all(|x| matches!(x.rank(), 1 | 2) && outer(x) == outer(&a[0]))
}

/// numpy's `matmul(a, b)` with `b` a stack of matrices `[nb, k, p]` and `a` a vector
/// (promoted to one row, removed after), a matrix (one matrix for every product) or a
/// stack `[na, m, k]` (a batch of 1 broadcasts). Integers wrap.
pub fn matmul(a: &Value, b: &Value, label: &str) -> Result<Value, String> {
    match (a, b) {
        (Value::I32(x), Value::I32(y)) => matmul_arrays(x, y, label).map(Value::I32),
        (Value::I64(x), Value::I64(y)) => matmul_arrays(x, y, label).map(Value::I64),
        (Value::F32(x), Value::F32(y)) => matmul_arrays(x, y, label).map(Value::F32),
        (Value::F64(x), Value::F64(y)) => matmul_arrays(x, y, label).map(Value::F64),
        _ => Err(format!(
            "IR error: `{label}`: matmul of {} and {}",
            a.describe(),
            b.describe()
        )),
    }
}

fn matmul_arrays<T: Number>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    label: &str,
) -> Result<ArrayD<T>, String> {
    let (na, m, k) = match *a.shape() {
        [k] => (1, 1, k),
        [m, k] => (1, m, k),
        [n, m, k] => (n, m, k),
        _ => return Err(bad_dot_ranks(a.shape(), b.shape(), label)),
    };
    let [nb, k2, p] = *b.shape() else {
        return Err(bad_dot_ranks(a.shape(), b.shape(), label));
    };
    if k != k2 {
        return Err(format!(
            "`{label}`: matmul of shapes {:?} and {:?}: inner sizes {k} and {k2} differ",
            a.shape(),
            b.shape()
        ));
    }
    if !(na == nb || na == 1 || nb == 1) {
        return Err(format!(
            "`{label}`: matmul of shapes {:?} and {:?}: batch sizes {na} and {nb} differ",
            a.shape(),
            b.shape()
        ));
    }
    let n = if na == 1 { nb } else { na };
    // a[i, r, q] with the vector or matrix seen as a stack of one.
    let a_at = |i: usize, r: usize, q: usize| match a.ndim() {
        1 => a[[q]],
        2 => a[[r, q]],
        _ => a[[i, r, q]],
    };
    let mut out = Vec::with_capacity(n * m * p);
    for i in 0..n {
        let (ia, ib) = (if na == 1 { 0 } else { i }, if nb == 1 { 0 } else { i });
        for r in 0..m {
            for c in 0..p {
                let mut acc = T::zero();
                for q in 0..k {
                    acc = acc.add(a_at(ia, r, q).mul(b[[ib, q, c]]));
                }
                out.push(acc);
            }
        }
    }
    let shape = if a.ndim() == 1 {
        vec![n, p]
    } else {
        vec![n, m, p]
    };
    ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string())
}

fn bad_dot_ranks(a: &[usize], b: &[usize], label: &str) -> String {
    format!("IR error: `{label}`: dot of shapes {a:?} and {b:?} (ranks must be 1 or 2, or 3 on the left)")
}

/// How `Op::DotSum` names things in errors: the product (the node's label), the
/// accumulator and its step expression.
pub struct DotSumNames<'a> {
    pub product: &'a str,
    pub output: &'a str,
    pub result: &'a str,
}

/// `Op::DotSum`: `init + Σ_t p_t · q_t` as a stack of one row, or of none when the stacks
/// are empty; `transpose` says which stack holds its matrices transposed. Summed step by
/// step, element by element, in plain loops. Integers wrap.
pub fn dot_sum(
    init: &Value,
    p: &Value,
    q: &Value,
    transpose: [bool; 2],
    names: &DotSumNames,
) -> Result<Value, String> {
    let sum = same_number!((init, p, q), (a, x, y) => {
        dot_sum_arrays(a, x, y, transpose, names).map(Element::into_value)
    });
    match sum {
        Some(r) => r,
        None => Err(format!(
            "IR error: `{}`: dot_sum of {}, {} and {}",
            names.product,
            init.describe(),
            p.describe(),
            q.describe()
        )),
    }
}

fn dot_sum_arrays<T: Number>(
    init: &ArrayD<T>,
    p: &ArrayD<T>,
    q: &ArrayD<T>,
    transpose: [bool; 2],
    names: &DotSumNames,
) -> Result<ArrayD<T>, String> {
    let product = names.product;
    let ir_error = |what: &str| format!("IR error: `{product}`: dot_sum of {what}");
    let init = init
        .view()
        .into_dimensionality::<Ix2>()
        .map_err(|_| ir_error("an initial value that is not a matrix"))?;
    fn stack<T>(a: &ArrayD<T>, transposed: bool) -> Option<ArrayView3<'_, T>> {
        let a = a.view().into_dimensionality::<Ix3>().ok()?;
        Some(if transposed {
            a.permuted_axes([0, 2, 1])
        } else {
            a
        })
    }
    let (Some(p), Some(q)) = (stack(p, transpose[0]), stack(q, transpose[1])) else {
        return Err(ir_error("operands that are not stacks of matrices"));
    };
    let ((steps, m, k), (steps_q, k2, n)) = (p.dim(), q.dim());
    if steps != steps_q {
        return Err(ir_error(&format!(
            "stacks of {steps} and {steps_q} matrices"
        )));
    }
    let (rows, cols) = init.dim();
    if steps == 0 {
        // No step: the accumulator's rows are none, of init's shape.
        return Ok(ArrayD::from_shape_fn(IxDyn(&[0, rows, cols]), |_| {
            T::zero()
        }));
    }
    if k != k2 {
        return Err(format!(
            "`{product}`: dot of shapes {:?} and {:?}: inner sizes {k} and {k2} differ",
            [m, k],
            [k2, n]
        ));
    }
    let mut sum = Array2::from_shape_fn((m, n), |_| T::zero());
    for t in 0..steps {
        for i in 0..m {
            for j in 0..n {
                for l in 0..k {
                    sum[[i, j]] = sum[[i, j]].add(p[[t, i, l]].mul(q[[t, l, j]]));
                }
            }
        }
    }
    // `init + sum` broadcast, which must keep init's shape (the loop's step shape check).
    let shape = super::elemwise::broadcast_shape(&[&[rows, cols], &[m, n]]).ok_or_else(|| {
        format!(
            "`{}`: operands of shapes {:?} and {:?} cannot be broadcast together",
            names.result,
            [rows, cols],
            [m, n]
        )
    })?;
    if shape != [rows, cols] {
        return Err(format!(
            "output {} has shape {:?} at the last step but its step result `{}` has shape \
             {shape:?}",
            names.output,
            [rows, cols],
            names.result
        ));
    }
    let (si, sj) = (usize::from(m == rows), usize::from(n == cols));
    Ok(ArrayD::from_shape_fn(IxDyn(&[1, rows, cols]), |ix| {
        init[[ix[1], ix[2]]].add(sum[[ix[1] * si, ix[2] * sj]])
    }))
}

// ---------------------------------------------------------------------------------------
// Reductions

/// Reduces `x` over every element (`axis: None`, giving a 0-d value) or over one axis.
/// The input is first converted to the node's dtype `dtype` if it differs.
pub fn reduce(
    op: ReduceOp,
    axis: Option<usize>,
    x: &Value,
    dtype: DType,
    label: &str,
) -> Result<Value, String> {
    if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        return arg_reduce(op == ReduceOp::ArgMax, axis, x, label);
    }
    let x = x.cast(dtype);
    if let Some(a) = axis {
        if a >= x.rank() {
            return Err(format!(
                "IR error: `{label}`: axis {a} of a value of shape {:?}",
                x.shape()
            ));
        }
    }
    let reduced_len = match axis {
        None => x.shape().iter().product::<usize>(),
        Some(a) => x.shape()[a],
    };
    if matches!(op, ReduceOp::Max | ReduceOp::Min) && reduced_len == 0 {
        return Err(format!(
            "`{label}`: {} of an empty array (shape {:?}{})",
            op.name(),
            x.shape(),
            axis.map(|a| format!(", axis {a}")).unwrap_or_default()
        ));
    }
    let result = match (&x, op) {
        (Value::F32(a), ReduceOp::Mean) => Some(Value::F32(lanes(a, axis, mean))),
        (Value::F64(a), ReduceOp::Mean) => Some(Value::F64(lanes(a, axis, mean))),
        (Value::F32(a), ReduceOp::Var) => Some(Value::F32(lanes(a, axis, var))),
        (Value::F64(a), ReduceOp::Var) => Some(Value::F64(lanes(a, axis, var))),
        (Value::F32(a), ReduceOp::Std) => Some(Value::F32(lanes(a, axis, |xs| var(xs).sqrt()))),
        (Value::F64(a), ReduceOp::Std) => Some(Value::F64(lanes(a, axis, |xs| var(xs).sqrt()))),
        (Value::F32(a), ReduceOp::LogSumExp) => Some(Value::F32(lanes(a, axis, |xs| {
            logsumexp(xs.into_iter().map(f64::from).collect()) as f32
        }))),
        (Value::F64(a), ReduceOp::LogSumExp) => Some(Value::F64(lanes(a, axis, logsumexp))),
        (Value::F32(a), _) => number_reduce(op, a, axis).map(Value::F32),
        (Value::F64(a), _) => number_reduce(op, a, axis).map(Value::F64),
        (Value::Bool(a), ReduceOp::All) => {
            Some(Value::Bool(lanes(a, axis, |xs| xs.into_iter().all(|x| x))))
        }
        (Value::Bool(a), ReduceOp::Any) => {
            Some(Value::Bool(lanes(a, axis, |xs| xs.into_iter().any(|x| x))))
        }
        (Value::Bool(_), _) => None,
        (int, _) => {
            with_int!(int, a => number_reduce(op, a, axis).map(Element::into_value)).flatten()
        }
    };
    result.ok_or_else(|| format!("IR error: `{label}`: {} of {}", op.name(), x.describe()))
}

fn number_reduce<T: Number>(op: ReduceOp, a: &ArrayD<T>, axis: Option<usize>) -> Option<ArrayD<T>> {
    let f: fn(Vec<T>) -> T = match op {
        ReduceOp::Sum => |xs| xs.into_iter().fold(T::zero(), T::add),
        // Non-empty: checked by the caller.
        ReduceOp::Max => |xs| xs.into_iter().reduce(T::maximum).unwrap_or_else(T::zero),
        ReduceOp::Min => |xs| xs.into_iter().reduce(T::minimum).unwrap_or_else(T::zero),
        ReduceOp::Prod => |xs| xs.into_iter().fold(T::one(), T::mul),
        ReduceOp::Mean
        | ReduceOp::All
        | ReduceOp::Any
        | ReduceOp::ArgMax
        | ReduceOp::ArgMin
        | ReduceOp::Var
        | ReduceOp::Std
        | ReduceOp::LogSumExp => return None,
    };
    Some(lanes(a, axis, f))
}

/// numpy's `argmax` (`max`) or `argmin`: the index of the first extreme of all the
/// elements in row-major order or of each lane along `axis`, the first NaN if any; an
/// error when there is nothing to take it from.
fn arg_reduce(max: bool, axis: Option<usize>, x: &Value, label: &str) -> Result<Value, String> {
    let reduced_len = match axis {
        None => x.shape().iter().product::<usize>(),
        Some(a) => *x.shape().get(a).ok_or_else(|| {
            format!(
                "IR error: `{label}`: axis {a} of a value of shape {:?}",
                x.shape()
            )
        })?,
    };
    if reduced_len == 0 {
        return Err(format!(
            "`{label}`: {} of an empty array (shape {:?})",
            if max { "argmax" } else { "argmin" },
            x.shape()
        ));
    }
    fn first<T: PartialOrd + Copy>(xs: Vec<T>, max: bool) -> i64 {
        #[allow(clippy::eq_op)]
        if let Some(i) = xs.iter().position(|&x| x != x) {
            return i as i64;
        }
        let mut best = 0;
        for (i, &v) in xs.iter().enumerate() {
            let better = if max { v > xs[best] } else { v < xs[best] };
            if better {
                best = i;
            }
        }
        best as i64
    }
    let out = with_array!(x, a => lanes(a, axis, |xs| first(xs, max)));
    Ok(Value::I64(out))
}

/// numpy's `full(dims, value)`: an error for a negative length.
pub fn full(value: &Value, dims: &[Value], label: &str) -> Result<Value, String> {
    let mut shape = Vec::new();
    for d in dims {
        let n = d
            .scalar_int()
            .ok_or_else(|| format!("IR error: `{label}`: a length of {}", d.describe()))?;
        shape.push(
            usize::try_from(n)
                .map_err(|_| format!("`{label}`: negative length {n} in the shape"))?,
        );
    }
    if value.rank() != 0 {
        return Err(format!("IR error: `{label}`: full of {}", value.describe()));
    }
    Ok(map_array!(value, a => ArrayD::from_elem(IxDyn(&shape), a[IxDyn(&[])])))
}

/// numpy's `reshape(x, dims)` with at most one -1, in row-major order.
pub fn reshape(x: &Value, dims: &[Value], label: &str) -> Result<Value, String> {
    let mut lengths = Vec::new();
    for d in dims {
        lengths.push(
            d.scalar_int()
                .ok_or_else(|| format!("IR error: `{label}`: a length of {}", d.describe()))?,
        );
    }
    let total: usize = x.shape().iter().product();
    let free: Vec<usize> = (0..lengths.len()).filter(|&k| lengths[k] == -1).collect();
    if free.len() > 1 || lengths.iter().any(|&n| n < -1) {
        return Err(format!("`{label}`: invalid shape {lengths:?}"));
    }
    let known: usize = lengths
        .iter()
        .filter(|&&n| n >= 0)
        .map(|&n| n as usize)
        .product();
    let mut shape: Vec<usize> = lengths.iter().map(|&n| n.max(0) as usize).collect();
    if let Some(&k) = free.first() {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(format!(
                "`{label}`: cannot reshape {:?} into {lengths:?}",
                x.shape()
            ));
        }
        shape[k] = total / known;
    } else if known != total {
        return Err(format!(
            "`{label}`: cannot reshape {:?} into {lengths:?}",
            x.shape()
        ));
    }
    Ok(map_array!(x, a => {
        let flat: Vec<_> = a.iter().copied().collect();
        ArrayD::from_shape_vec(IxDyn(&shape), flat).expect("sizes checked above")
    }))
}

/// numpy's `eye(n)` in f64.
pub fn eye(n: &Value, label: &str) -> Result<Value, String> {
    let n = n
        .scalar_int()
        .ok_or_else(|| format!("IR error: `{label}`: eye of {}", n.describe()))?;
    let n = usize::try_from(n).map_err(|_| format!("`{label}`: negative size {n}"))?;
    Ok(Value::F64(ArrayD::from_shape_fn(IxDyn(&[n, n]), |i| {
        f64::from(u8::from(i[0] == i[1]))
    })))
}

/// numpy's `cumsum`/`cumprod` of `x` (in `dtype`): along `axis`, or flattened.
pub fn cumulative(
    x: &Value,
    product: bool,
    axis: Option<usize>,
    dtype: DType,
    label: &str,
) -> Result<Value, String> {
    fn run<T: Number>(a: &ArrayD<T>, product: bool, axis: Option<usize>) -> ArrayD<T> {
        // numpy starts at the first element, not at 0: `cumsum([-0.0])` is `[-0.0]`.
        let step = |acc: Option<T>, x: T| match acc {
            None => x,
            Some(acc) if product => acc.mul(x),
            Some(acc) => acc.add(x),
        };
        match axis {
            None => {
                let mut acc = None;
                let v: Vec<T> = a
                    .iter()
                    .map(|&x| {
                        let v = step(acc, x);
                        acc = Some(v);
                        v
                    })
                    .collect();
                ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("a vector of its length")
            }
            Some(ax) => {
                let mut out = a.clone();
                for mut lane in out.lanes_mut(Axis(ax)) {
                    let mut acc = None;
                    for x in lane.iter_mut() {
                        let v = step(acc, *x);
                        acc = Some(v);
                        *x = v;
                    }
                }
                out
            }
        }
    }
    if axis.is_some_and(|a| a >= x.rank()) {
        return Err(format!("IR error: `{label}`: an axis past the rank"));
    }
    same_number!((&x.cast(dtype)), (a) => Element::into_value(run(a, product, axis)))
        .ok_or_else(|| format!("IR error: `{label}`: a running sum of bools"))
}

/// The mean of the squared deviations from the mean (numpy's `var`, ddof 0); NaN when
/// empty.
fn var<T: Float>(xs: Vec<T>) -> T {
    let n = xs.len();
    let m = mean(xs.clone());
    xs.into_iter()
        .fold(T::zero(), |acc, x| acc.add(x.sub(m).mul(x.sub(m))))
        .div_count(n)
}

/// scipy's `logsumexp` of f64 values: `m + ln(Σ e^(x - m))` with `m` the largest, -inf
/// when empty or all -inf, `m` itself when infinite or NaN.
fn logsumexp(xs: Vec<f64>) -> f64 {
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// The mean; NaN when empty.
fn mean<T: Float>(xs: Vec<T>) -> T {
    let n = xs.len();
    xs.into_iter().fold(T::zero(), T::add).div_count(n)
}

/// `f` of all the elements (a 0-d result) or of every lane along `axis`.
fn lanes<T: Element, R>(a: &ArrayD<T>, axis: Option<usize>, f: impl Fn(Vec<T>) -> R) -> ArrayD<R> {
    match axis {
        None => arr0(f(a.iter().copied().collect())).into_dyn(),
        Some(axis) => Zip::from(a.lanes(Axis(axis))).map_collect(|lane| f(lane.to_vec())),
    }
}

// ---------------------------------------------------------------------------------------
// Constructors

/// An array of `like`'s shape filled with `value` converted to `dtype`.
pub fn fill_like(like: &Value, value: Literal, dtype: DType) -> Value {
    with_dtype!(dtype, T => Value::full::<T>(like.shape(), literal_as::<T>(value)))
}

/// `0..n` as an i64 vector (empty when n <= 0).
pub fn arange(n: &Value, label: &str) -> Result<Value, String> {
    let n = n
        .scalar_int()
        .ok_or_else(|| format!("IR error: `{label}`: arange of {}", n.describe()))?;
    Ok(Value::I64(ArrayD::from_shape_fn(
        IxDyn(&[n.max(0) as usize]),
        |i| i[0] as i64,
    )))
}

/// `x`, or with no row an array whose every axis is 0 (a map output of zero steps).
pub fn zero_step_shape(x: &Value) -> Value {
    if x.shape().first() == Some(&0) {
        map_array!(x, a => ArrayD::from_shape_vec(IxDyn(&vec![0; a.ndim()]), vec![]).expect("an empty shape"))
    } else {
        x.clone()
    }
}

/// numpy's `transpose(x, axes)` (the caller checked the rank).
pub fn permute(x: &Value, axes: &[usize]) -> Value {
    map_array!(x, a => a.view().permuted_axes(IxDyn(axes)).to_owned())
}

/// Reversed axes.
pub fn transpose(x: &Value) -> Value {
    map_array!(x, a => a.clone().reversed_axes())
}

// ---------------------------------------------------------------------------------------
// Indexing

/// A path step with its operands applied to a known axis length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolved {
    /// On axis `.0`: take this row and drop the axis.
    Index(usize, usize),
    /// On axis `.0`: keep rows `start..end` (start <= end).
    Range(usize, usize, usize),
    /// Add an axis of length 1 at `.0`.
    NewAxis(usize),
    /// On axis `.0`: the rows an ndarray slice picks (a stepped slice, `x[a:b:s]`).
    Stepped(usize, Slice),
}

/// The indices Python's `slice(start, stop, step)` picks from an axis of length `len`
/// (`slice.indices`, then `range`), written from Python's definition: bounds default to
/// the ends the step walks from and to, negative ones count from the end, and they clamp
/// to `-1..=len`.
fn python_slice(len: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let n = len as i128;
    let step = i128::from(step);
    let clamp = |b: i128, lo: i128, hi: i128| b.max(lo).min(hi);
    let resolve = |b: Option<i64>, default: i128| -> i128 {
        match b {
            None => default,
            Some(b) if b < 0 => i128::from(b) + n,
            Some(b) => i128::from(b),
        }
    };
    let (mut i, end) = if step > 0 {
        (
            clamp(resolve(start, 0), 0, n),
            clamp(resolve(stop, n), 0, n),
        )
    } else {
        (
            clamp(resolve(start, n - 1), -1, n - 1),
            match stop {
                None => -1,
                Some(_) => clamp(resolve(stop, -1), -1, n - 1),
            },
        )
    };
    let mut picked = Vec::new();
    while (step > 0 && i < end) || (step < 0 && i > end) {
        picked.push(i as usize);
        i += step;
    }
    picked
}

/// Turns the path and its operands into concrete steps for an array of shape `shape`.
/// Each step applies to the leading axis of the previous step's result; a check step
/// (`PathStep::Check`) is made here, on the shapes, and leaves nothing to apply.
fn resolve_path(
    shape: &[usize],
    path: &[PathStep],
    operands: &[Value],
    label: &str,
) -> Result<Vec<Resolved>, String> {
    let needed: usize = path.iter().map(|s| s.operands()).sum();
    if needed != operands.len() {
        return Err(format!(
            "IR error: `{label}`: the path takes {needed} operands, got {}",
            operands.len()
        ));
    }
    let mut operands = operands.iter();
    let mut shape = shape.to_vec();
    let mut steps = Vec::new();
    // The axis the steps act on (`PathStep::At`).
    let mut at = 0usize;
    for step in path {
        let leading = shape.get(at).copied().ok_or_else(|| {
            format!("IR error: `{label}`: indexing a scalar (the path is longer than the rank)")
        });
        let mut next_operand = || -> Result<i64, String> {
            let v = operands.next().ok_or("IR error: missing path operand")?;
            v.scalar_int().ok_or_else(|| {
                format!(
                    "IR error: `{label}`: an index must be a scalar integer, got {}",
                    v.describe()
                )
            })
        };
        match step {
            PathStep::Index => {
                let len = leading?;
                let ilen = len as i64;
                let i = next_operand()?;
                let actual = if i < 0 { i + ilen } else { i };
                if actual < 0 || actual >= ilen {
                    return Err(format!(
                        "`{label}`: index {i} is out of bounds for an axis of length {len}"
                    ));
                }
                steps.push(Resolved::Index(at, actual as usize));
                shape.remove(at);
            }
            PathStep::Slice { start, end } => {
                let len = leading?;
                let ilen = len as i64;
                // numpy: negative bounds count from the end; out-of-range bounds clamp.
                let clamp = |b: i64| -> usize {
                    let b = if b < 0 { b + ilen } else { b };
                    b.clamp(0, ilen) as usize
                };
                let s = if *start { clamp(next_operand()?) } else { 0 };
                let e = if *end { clamp(next_operand()?) } else { len };
                let e = e.max(s);
                steps.push(Resolved::Range(at, s, e));
                shape[at] = e - s;
            }
            PathStep::Stepped { start, end } => {
                let len = leading?;
                let s = if *start { Some(next_operand()?) } else { None };
                let e = if *end { Some(next_operand()?) } else { None };
                let step = next_operand()?;
                if step == 0 {
                    return Err(format!("`{label}`: a slice step cannot be zero"));
                }
                let picked = python_slice(len, s, e, step);
                let slice = match (picked.first(), picked.last()) {
                    (Some(&a), Some(&b)) if picked.len() > 1 => Slice::new(
                        a.min(b) as isize,
                        Some(a.max(b) as isize + 1),
                        step as isize,
                    ),
                    (Some(&a), _) => Slice::from(a..a + 1),
                    _ => Slice::from(0..0),
                };
                steps.push(Resolved::Stepped(at, slice));
                shape[at] = picked.len();
            }
            PathStep::NewAxis => {
                if at > shape.len() {
                    return Err(format!("IR error: `{label}`: a new axis past the rank"));
                }
                steps.push(Resolved::NewAxis(at));
                shape.insert(at, 1);
            }
            PathStep::At(axis) => at = *axis,
            PathStep::Check(check) => {
                let n = check.operands();
                let read: Vec<&Value> = operands.by_ref().take(n).collect();
                if read.len() != n {
                    return Err("IR error: missing path operand".to_string());
                }
                loop_check(check, &shape, &read, label)?;
            }
        }
    }
    Ok(steps)
}

/// The checks of a scan loop that one-step inlining keeps (`LoopCheck`), on a value of
/// shape `shape`; the messages are the scan evaluator's (`eval::scan`).
fn loop_check(
    check: &LoopCheck,
    shape: &[usize],
    operands: &[&Value],
    label: &str,
) -> Result<(), String> {
    let rows = || {
        shape
            .first()
            .copied()
            .ok_or_else(|| format!("IR error: `{label}`: a check of rows on a scalar"))
    };
    // `(past, span)` of a sequence's taps, as `Sequence::past`/`span`.
    let window = |taps: &[i64]| -> (usize, usize) {
        let past = -taps.iter().copied().min().unwrap_or(0).min(0);
        let future = taps.iter().copied().max().unwrap_or(0).max(0);
        (
            usize::try_from(past).unwrap_or(usize::MAX),
            usize::try_from(past.saturating_add(future)).unwrap_or(usize::MAX),
        )
    };
    match check {
        LoopCheck::Window { sequence, taps } => {
            let (len, (_, span)) = (rows()?, window(taps));
            if len < span {
                return Err(format!(
                    "sequence `{sequence}` has {len} rows but its taps {taps:?} need at least \
                     {span}"
                ));
            }
        }
        LoopCheck::Steps {
            sequence,
            taps,
            n_steps,
        } => {
            let (len, (_, span)) = (rows()?, window(taps));
            let needed = n_steps.saturating_add(span);
            if len < needed {
                return Err(format!(
                    "sequence `{sequence}` has {len} rows but n_steps = {n_steps} with taps \
                     {taps:?} needs {needed} rows"
                ));
            }
        }
        LoopCheck::InitialRows { output, taps } => {
            let rows = rows()?;
            let depth = taps.iter().map(|t| t.unsigned_abs()).max().unwrap_or(0);
            if (rows as u64) < depth {
                return Err(format!(
                    "the initial state of output `{output}` has {rows} rows but its taps \
                     {taps:?} need {depth}"
                ));
            }
        }
        LoopCheck::StepShape {
            output,
            result,
            rows,
        } => {
            let init = operands
                .first()
                .ok_or("IR error: a step shape check without its initial state")?
                .shape();
            let expected = if *rows {
                init.get(1..).ok_or_else(|| {
                    format!("IR error: `{label}`: the initial state of {output} has no rows")
                })?
            } else {
                init
            };
            if expected != shape {
                return Err(format!(
                    "output {output} has shape {shape:?} at step 0 (`{result}`) but its \
                     initial state gives rows of shape {expected:?}"
                ));
            }
        }
        LoopCheck::After(_) => {}
    }
    Ok(())
}

/// Applies resolved steps to a view (read-only or mutable).
fn apply_path<S: RawData>(
    mut view: ArrayBase<S, IxDyn>,
    steps: &[Resolved],
) -> ArrayBase<S, IxDyn> {
    for step in steps {
        match *step {
            Resolved::Index(ax, i) => view = view.index_axis_move(Axis(ax), i),
            Resolved::Range(ax, s, e) => view.slice_axis_inplace(Axis(ax), Slice::from(s..e)),
            Resolved::NewAxis(ax) => view = view.insert_axis(Axis(ax)),
            Resolved::Stepped(ax, slice) => view.slice_axis_inplace(Axis(ax), slice),
        }
    }
    view
}

/// `x[path]`, the operands giving the indices and bounds.
pub fn subtensor(
    x: &Value,
    path: &[PathStep],
    operands: &[Value],
    label: &str,
) -> Result<Value, String> {
    let steps = resolve_path(x.shape(), path, operands, label)?;
    if steps.iter().any(|s| matches!(s, Resolved::NewAxis(_))) {
        // A copy in the standard layout (a new axis of length 1 gets the stride a fresh
        // array of that shape has, as a scan's stacked rows do), so values compare by
        // `{:?}` like the loop's.
        return Ok(map_array!(x, a => {
            let v = apply_path(a.view(), &steps);
            ArrayD::from_shape_fn(v.raw_dim(), |i| v[i])
        }));
    }
    Ok(map_array!(x, a => apply_path(a.view(), &steps).to_owned()))
}

/// A copy of `x` whose `x[path]` is set to (or, with `inc`, incremented by) `value`
/// broadcast to its shape.
pub fn set_subtensor(
    x: &Value,
    value: &Value,
    path: &[PathStep],
    inc: bool,
    operands: &[Value],
    label: &str,
) -> Result<Value, String> {
    let steps = resolve_path(x.shape(), path, operands, label)?;
    fn write<T: Element>(
        x: &ArrayD<T>,
        value: &ArrayD<T>,
        steps: &[Resolved],
        combine: impl Fn(T, T) -> T,
        label: &str,
    ) -> Result<ArrayD<T>, String> {
        let mut out = x.clone();
        let mut target = apply_path(out.view_mut(), steps);
        let stretched = value.broadcast(target.raw_dim()).ok_or_else(|| {
            format!(
                "`{label}`: a value of shape {:?} cannot be broadcast to the selected shape {:?}",
                value.shape(),
                target.shape()
            )
        })?;
        Zip::from(&mut target)
            .and(&stretched)
            .for_each(|t, &v| *t = combine(*t, v));
        Ok(out)
    }
    fn set<T>(_old: T, new: T) -> T {
        new
    }
    let written = if inc {
        same_number!((x, value), (a, v) => {
            write(a, v, &steps, Number::add, label).map(Element::into_value)
        })
    } else {
        same_any!((x, value), (a, v) => write(a, v, &steps, set, label).map(Element::into_value))
    };
    let result = match written {
        Some(r) => r,
        _ => Err(format!(
            "IR error: `{label}`: {} of {} into {}",
            if inc {
                "inc_subtensor"
            } else {
                "set_subtensor"
            },
            value.describe(),
            x.describe()
        )),
    };
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn dot_by_ranks() {
        let v = Value::from(array![1.0f64, 2.0]);
        let w = Value::from(array![3.0f64, 4.0]);
        let m = Value::from(array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(dot(&v, &w, "d").unwrap(), Value::from(11.0f64));
        assert_eq!(
            dot(&v, &m, "d").unwrap(),
            Value::from(array![9.0f64, 12.0, 15.0])
        );
        let u = Value::from(array![1.0f64, 0.0, -1.0]);
        assert_eq!(
            dot(&m, &u, "d").unwrap(),
            Value::from(array![-2.0f64, -2.0])
        );
        let mt = transpose(&m);
        assert_eq!(mt.shape(), &[3, 2]);
        assert_eq!(
            dot(&m, &mt, "d").unwrap(),
            Value::from(array![[14.0f64, 32.0], [32.0, 77.0]])
        );
        let e = Value::from(ArrayD::<f64>::zeros(IxDyn(&[0])));
        assert_eq!(dot(&e, &e, "d").unwrap(), Value::from(0.0f64));
        assert_eq!(
            dot(
                &Value::from(array![i32::MAX, 1]),
                &Value::from(array![2i32, 2]),
                "d"
            )
            .unwrap(),
            Value::from(0i32)
        );
    }

    #[test]
    fn dot_mismatch_names_label_and_shapes() {
        let m = Value::from(array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let v = Value::from(array![1.0f32, 2.0]);
        let err = dot(&m, &v, "m.dot(v)").unwrap_err();
        assert!(err.contains("`m.dot(v)`"), "{err}");
        assert!(err.contains("[2, 3]") && err.contains("[2]"), "{err}");
        assert!(dot(&v, &v.cast(DType::F64), "x").is_err());
    }

    #[test]
    fn reductions() {
        let m = Value::from(array![[1i32, 5, 3], [4, 2, 6]]);
        let r = |op, axis| reduce(op, axis, &m, DType::I32, "r").unwrap();
        assert_eq!(r(ReduceOp::Sum, None), Value::from(21i32));
        assert_eq!(r(ReduceOp::Sum, Some(0)), Value::from(array![5i32, 7, 9]));
        assert_eq!(r(ReduceOp::Max, Some(1)), Value::from(array![5i32, 6]));
        assert_eq!(r(ReduceOp::Min, None), Value::from(1i32));
        assert_eq!(
            reduce(ReduceOp::Mean, Some(1), &m, DType::F64, "r").unwrap(),
            Value::from(array![3.0f64, 4.0])
        );
        let empty = Value::from(ArrayD::<f32>::zeros(IxDyn(&[0, 2])));
        assert_eq!(
            reduce(ReduceOp::Sum, Some(0), &empty, DType::F32, "r").unwrap(),
            Value::from(array![0.0f32, 0.0])
        );
        let mean = reduce(ReduceOp::Mean, None, &empty, DType::F32, "r").unwrap();
        assert!(mean.scalar_int().is_none());
        assert!(mean.array::<f32>().unwrap().iter().all(|x| x.is_nan()));
        let err = reduce(ReduceOp::Max, Some(0), &empty, DType::F32, "xs.max()").unwrap_err();
        assert!(err.contains("`xs.max()`"), "{err}");
        // An empty result is fine: the reduced axis has 2 elements.
        assert_eq!(
            reduce(ReduceOp::Max, Some(1), &empty, DType::F32, "r")
                .unwrap()
                .shape(),
            &[0]
        );
        let nan = Value::from(array![1.0f64, f64::NAN, 3.0]);
        let max = reduce(ReduceOp::Max, None, &nan, DType::F64, "r").unwrap();
        assert!(max.array::<f64>().unwrap().iter().all(|x| x.is_nan()));
    }

    #[test]
    fn fills_and_arange() {
        let like = Value::from(array![[1.0f64, 2.0]]);
        assert_eq!(
            fill_like(&like, Literal::Int(1), DType::I32),
            Value::from(array![[1i32, 1]])
        );
        assert_eq!(
            arange(&Value::from(3i64), "a").unwrap(),
            Value::from(array![0i64, 1, 2])
        );
        assert_eq!(arange(&Value::from(-2i64), "a").unwrap().shape(), &[0]);
    }

    fn idx(i: i64) -> Value {
        Value::from(i)
    }

    #[test]
    fn indexing_and_slicing() {
        let m = Value::from(array![[0i32, 1, 2], [3, 4, 5], [6, 7, 8]]);
        let row = |i| subtensor(&m, &[PathStep::Index], &[idx(i)], "m[i]");
        assert_eq!(row(-1).unwrap(), Value::from(array![6i32, 7, 8]));
        assert_eq!(row(1).unwrap(), Value::from(array![3i32, 4, 5]));
        let err = row(3).unwrap_err();
        assert!(
            err.contains("`m[i]`") && err.contains("3") && err.contains("length 3"),
            "{err}"
        );
        assert!(row(-4).is_err());
        // x[i][j]: row then element.
        assert_eq!(
            subtensor(
                &m,
                &[PathStep::Index, PathStep::Index],
                &[idx(2), idx(-3)],
                "e"
            )
            .unwrap(),
            Value::from(6i32)
        );
        // x[1..3][0] is row 1.
        let both = PathStep::Slice {
            start: true,
            end: true,
        };
        assert_eq!(
            subtensor(
                &m,
                &[both.clone(), PathStep::Index],
                &[idx(1), idx(3), idx(0)],
                "s"
            )
            .unwrap(),
            Value::from(array![3i32, 4, 5])
        );
        // Clamping, negative bounds, empty slices.
        let from = PathStep::Slice {
            start: true,
            end: false,
        };
        let to = PathStep::Slice {
            start: false,
            end: true,
        };
        assert_eq!(
            subtensor(&m, &[from], &[idx(-2)], "s").unwrap(),
            Value::from(array![[3i32, 4, 5], [6, 7, 8]])
        );
        assert_eq!(
            subtensor(&m, std::slice::from_ref(&to), &[idx(10)], "s").unwrap(),
            m
        );
        assert_eq!(
            subtensor(&m, &[to], &[idx(-10)], "s").unwrap().shape(),
            &[0, 3]
        );
        assert_eq!(
            subtensor(&m, &[both], &[idx(2), idx(1)], "s")
                .unwrap()
                .shape(),
            &[0, 3]
        );
        assert_eq!(
            subtensor(
                &m,
                &[PathStep::Slice {
                    start: false,
                    end: false
                }],
                &[],
                "s"
            )
            .unwrap(),
            m
        );
        // Operands may be i32 too.
        assert_eq!(
            subtensor(&m, &[PathStep::Index], &[Value::from(0i32)], "s").unwrap(),
            Value::from(array![0i32, 1, 2])
        );
    }

    #[test]
    fn set_and_inc_subtensor() {
        let m = Value::from(array![[0.0f64, 1.0], [2.0, 3.0]]);
        let set = set_subtensor(
            &m,
            &Value::from(9.0f64),
            &[PathStep::Index],
            false,
            &[idx(-1)],
            "s",
        );
        assert_eq!(set.unwrap(), Value::from(array![[0.0f64, 1.0], [9.0, 9.0]]));
        let inc = set_subtensor(
            &m,
            &Value::from(array![10.0f64, 20.0]),
            &[PathStep::Slice {
                start: false,
                end: false,
            }],
            true,
            &[],
            "s",
        );
        assert_eq!(
            inc.unwrap(),
            Value::from(array![[10.0f64, 21.0], [12.0, 23.0]])
        );
        let one = set_subtensor(
            &m,
            &Value::from(5.0f64),
            &[PathStep::Index, PathStep::Index],
            false,
            &[idx(0), idx(1)],
            "s",
        );
        assert_eq!(one.unwrap(), Value::from(array![[0.0f64, 5.0], [2.0, 3.0]]));
        let err = set_subtensor(
            &m,
            &Value::from(array![1.0f64, 2.0, 3.0]),
            &[PathStep::Index],
            false,
            &[idx(0)],
            "x[0] = v",
        )
        .unwrap_err();
        assert!(
            err.contains("`x[0] = v`") && err.contains("[3]") && err.contains("[2]"),
            "{err}"
        );
        let wrapped = set_subtensor(
            &Value::from(array![i64::MAX]),
            &Value::from(1i64),
            &[PathStep::Index],
            true,
            &[idx(0)],
            "s",
        );
        assert_eq!(wrapped.unwrap(), Value::from(array![i64::MIN]));
    }

    #[test]
    fn a_new_axis_and_the_checks_of_an_inlined_loop() {
        let m = Value::from(array![[0i32, 1], [2, 3], [4, 5]]);
        let s = Value::from(7.5f64);
        let row = subtensor(&m, &[PathStep::NewAxis, PathStep::Index], &[idx(0)], "r");
        assert_eq!(row.unwrap(), m);
        assert_eq!(
            subtensor(&s, &[PathStep::NewAxis], &[], "s").unwrap(),
            Value::from(array![7.5f64])
        );
        let check = |c: LoopCheck| PathStep::Check(Box::new(c));
        let window = |taps: Vec<i64>| {
            check(LoopCheck::Window {
                sequence: "u".into(),
                taps,
            })
        };
        let steps = |taps: Vec<i64>| {
            check(LoopCheck::Steps {
                sequence: "u".into(),
                taps,
                n_steps: 1,
            })
        };
        // 3 rows: a window of 3 fits, one step beyond it does not.
        assert_eq!(subtensor(&m, &[window(vec![-2, 0])], &[], "u").unwrap(), m);
        assert_eq!(subtensor(&m, &[steps(vec![-2, 0])], &[], "u").unwrap(), m);
        assert!(subtensor(&m, &[window(vec![-3, 0])], &[], "u").is_ok());
        let e = subtensor(&m, &[steps(vec![-3, 0])], &[], "u").unwrap_err();
        assert!(e.contains("needs 4 rows"), "{e}");
        assert!(subtensor(&m, &[window(vec![0, 4])], &[], "u").is_err());
        let rows = |taps: Vec<i64>| {
            check(LoopCheck::InitialRows {
                output: "x0".into(),
                taps,
            })
        };
        assert!(subtensor(&m, &[rows(vec![-3, -1])], &[], "x0").is_ok());
        assert!(subtensor(&m, &[rows(vec![-4])], &[], "x0").is_err());
        // A step result against its initial state (with rows: against one row).
        let shape = |rows| {
            check(LoopCheck::StepShape {
                output: "`x0`".into(),
                result: "x + 1".into(),
                rows,
            })
        };
        let v = Value::from(array![1i32, 2]);
        assert_eq!(
            subtensor(&v, &[shape(true)], std::slice::from_ref(&m), "r").unwrap(),
            v
        );
        assert!(subtensor(&v, &[shape(false)], std::slice::from_ref(&m), "r").is_err());
        assert!(subtensor(&m, &[shape(false)], std::slice::from_ref(&m), "r").is_ok());
        // `After` reads its operands and checks nothing; operands are counted.
        let after = check(LoopCheck::After(2));
        assert_eq!(
            subtensor(
                &s,
                std::slice::from_ref(&after),
                &[m.clone(), v.clone()],
                "a"
            )
            .unwrap(),
            s
        );
        assert!(subtensor(&s, &[after], &[m], "a")
            .unwrap_err()
            .starts_with("IR error"));
    }
}
