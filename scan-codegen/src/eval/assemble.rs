//! Arrays assembled from others and reshaped views, numpy's way: `concatenate`, `stack`
//! (and lists). Written from numpy's definitions over `ArrayD`, independently of the
//! runtime's kernels.

use ndarray::{ArrayD, ArrayViewD, Axis, Dimension, IxDyn};

use super::value::{map_array, same_number, with_dtype, Element, Value};

/// The arrays inside `parts`, all of dtype `T` (an IR error otherwise).
fn views<'a, T: Element>(
    parts: &'a [Value],
    label: &str,
) -> Result<Vec<ArrayViewD<'a, T>>, String> {
    parts
        .iter()
        .map(|p| {
            p.array::<T>().map(|a| a.view()).ok_or_else(|| {
                format!(
                    "IR error: `{label}`: a part of {} among {}",
                    p.describe(),
                    T::DTYPE
                )
            })
        })
        .collect()
}

/// numpy's `concatenate(parts, axis)`: the lengths on every other axis must agree.
pub fn concatenate(parts: &[Value], axis: usize, label: &str) -> Result<Value, String> {
    let first = parts
        .first()
        .ok_or_else(|| format!("IR error: `{label}`: nothing to concatenate"))?;
    for p in parts {
        let (a, b) = (first.shape(), p.shape());
        if a.len() != b.len() || axis >= a.len() {
            return Err(format!(
                "IR error: `{label}`: concatenate of {a:?} and {b:?}"
            ));
        }
        if (0..a.len()).any(|k| k != axis && a[k] != b[k]) {
            return Err(format!(
                "`{label}`: cannot concatenate arrays of shapes {a:?} and {b:?} along axis {axis}"
            ));
        }
    }
    with_dtype!(first.dtype(), T => {
        let arrays = views::<T>(parts, label)?;
        ndarray::concatenate(Axis(axis), &arrays)
            .map(T::into_value)
            .map_err(|e| format!("IR error: `{label}`: {e}"))
    })
}

/// The stack_dots rewrite's `Op::StackRows`: the matrices joined by rows when their
/// column counts agree, else an empty `0 x 0` matrix (never an error).
pub fn stack_rows(parts: &[Value], label: &str) -> Result<Value, String> {
    let first = parts
        .first()
        .ok_or_else(|| format!("IR error: `{label}`: nothing to stack"))?;
    if parts
        .iter()
        .any(|p| p.rank() != 2 || p.dtype() != first.dtype())
    {
        return Err(format!(
            "IR error: `{label}`: stack_rows of {}",
            first.describe()
        ));
    }
    if parts.iter().all(|p| p.shape()[1] == first.shape()[1]) {
        return concatenate(parts, 0, label);
    }
    with_dtype!(first.dtype(), T => {
        let empty = ArrayD::<T>::from_shape_vec(IxDyn(&[0, 0]), Vec::new());
        empty.map(T::into_value).map_err(|e| format!("IR error: `{label}`: {e}"))
    })
}

/// numpy's `stack(parts, axis)`: every part of one shape, `axis` an axis of the result.
pub fn stack(parts: &[Value], axis: usize, label: &str) -> Result<Value, String> {
    let first = parts
        .first()
        .ok_or_else(|| format!("IR error: `{label}`: nothing to stack"))?;
    if axis > first.rank() {
        return Err(format!("IR error: `{label}`: stack on axis {axis}"));
    }
    if let Some(p) = parts.iter().find(|p| p.shape() != first.shape()) {
        return Err(format!(
            "`{label}`: cannot stack arrays of shapes {:?} and {:?}",
            first.shape(),
            p.shape()
        ));
    }
    with_dtype!(first.dtype(), T => {
        let arrays = views::<T>(parts, label)?;
        ndarray::stack(Axis(axis), &arrays)
            .map(T::into_value)
            .map_err(|e| format!("IR error: `{label}`: {e}"))
    })
}

/// numpy's `squeeze(x, axis)`: that axis must have length 1.
pub fn squeeze(x: &Value, axis: usize, label: &str) -> Result<Value, String> {
    match x.shape().get(axis) {
        Some(1) => Ok(map_array!(x, a => a.index_axis(Axis(axis), 0).to_owned())),
        Some(&n) => Err(format!(
            "`{label}`: cannot squeeze axis {axis} of shape {:?}: its length is {n}, not 1",
            x.shape()
        )),
        None => Err(format!(
            "IR error: `{label}`: squeeze of axis {axis} of {}",
            x.describe()
        )),
    }
}

/// The adjoint of a broadcast (`Op::Unbroadcast`): `g` summed to `like`'s shape, over
/// g's leading axes that like lacks and over the axes where like has length 1. Each
/// element of g is added, in row-major order, into the element it was broadcast from.
pub fn sum_to_shape(g: &Value, like: &Value, label: &str) -> Result<Value, String> {
    let (have, want) = (g.shape().to_vec(), like.shape().to_vec());
    let lead = have.len().checked_sub(want.len());
    let fits = lead.is_some_and(|lead| {
        want.iter()
            .zip(&have[lead..])
            .all(|(&w, &h)| w == h || w == 1)
    });
    let Some(lead) = lead.filter(|_| fits) else {
        return Err(format!(
            "`{label}`: a gradient of shape {have:?} cannot be summed to the shape {want:?}"
        ));
    };
    fn sum<T: super::num::Number>(g: &ArrayD<T>, want: &[usize], lead: usize) -> ArrayD<T> {
        let mut out = ArrayD::from_elem(IxDyn(want), T::zero());
        for (i, &v) in g.indexed_iter() {
            let j: Vec<usize> = (0..want.len())
                .map(|k| if want[k] == 1 { 0 } else { i[lead + k] })
                .collect();
            out[IxDyn(&j)] = out[IxDyn(&j)].add(v);
        }
        out
    }
    same_number!((g), (a) => Element::into_value(sum(a, &want, lead)))
        .ok_or_else(|| format!("IR error: `{label}`: a gradient of {}", g.describe()))
}

/// numpy's `broadcast_arrays(*arrays)[k]` for `x`, array k of `shapes`' arrays: `x` as
/// the arrays' broadcast shape, `Err` as an elementwise operation on them gives when they
/// do not broadcast.
pub fn broadcast_arrays(x: &Value, shapes: &[&[usize]], label: &str) -> Result<Value, String> {
    let shape = super::elemwise::operands_shape(shapes, label)?;
    let dims: Vec<Value> = shape
        .iter()
        .map(|&n| Value::I64(ndarray::arr0(n as i64).into_dyn()))
        .collect();
    broadcast_to(x, &dims, label)
}

/// numpy's `broadcast_to(x, dims)`: x's axes match the last lengths, each equal or 1.
pub fn broadcast_to(x: &Value, dims: &[Value], label: &str) -> Result<Value, String> {
    let mut shape = Vec::new();
    for d in dims {
        let n = d
            .scalar_int()
            .ok_or_else(|| format!("IR error: `{label}`: a length of {}", d.describe()))?;
        shape.push(usize::try_from(n).map_err(|_| format!("`{label}`: negative length {n}"))?);
    }
    let have = x.shape();
    let fits = have.len() <= shape.len()
        && have
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&h, &n)| h == n || h == 1);
    if !fits {
        return Err(format!(
            "`{label}`: cannot broadcast an array of shape {have:?} to the shape {shape:?}"
        ));
    }
    // Element i of the result is element i of x with the leading indices dropped and the
    // repeated axes read at 0.
    let lead = shape.len() - have.len();
    Ok(
        map_array!(x, a => ArrayD::from_shape_fn(IxDyn(&shape), |i| {
            let j: Vec<usize> = (0..have.len())
                .map(|k| if have[k] == 1 { 0 } else { i[lead + k] })
                .collect();
            a[IxDyn(&j)]
        })),
    )
}

/// numpy's `diag(x, k)`: a vector's square matrix or a matrix's diagonal k, by x's rank.
pub fn diag(x: &Value, k: &Value, label: &str) -> Result<Value, String> {
    let k = k
        .scalar_int()
        .ok_or_else(|| format!("IR error: `{label}`: an offset of {}", k.describe()))?;
    // Element (i, j) lies on diagonal j - i.
    match *x.shape() {
        [n] => {
            let side = usize::try_from(k.unsigned_abs())
                .ok()
                .and_then(|a| n.checked_add(a))
                .filter(|&s| s.checked_mul(s).is_some_and(|c| c < (1 << 40)))
                .ok_or_else(|| format!("`{label}`: a diagonal at offset {k} is too large"))?;
            Ok(
                map_array!(x, a => ArrayD::from_shape_fn(IxDyn(&[side, side]), |at| {
                    let (i, j) = (at[0] as i64, at[1] as i64);
                    // On diagonal k, element i of v sits in row i (k >= 0) or column i (k < 0).
                    let along = if k >= 0 { i } else { j };
                    if j - i == k && (along as usize) < n {
                        a[IxDyn(&[along as usize])]
                    } else {
                        Default::default()
                    }
                })),
            )
        }
        [rows, cols] => {
            let cells: Vec<(usize, usize)> = (0..rows)
                .flat_map(|i| (0..cols).map(move |j| (i, j)))
                .filter(|&(i, j)| j as i64 - i as i64 == k)
                .collect();
            Ok(
                map_array!(x, a => ArrayD::from_shape_fn(IxDyn(&[cells.len()]), |at| {
                    let (i, j) = cells[at[0]];
                    a[IxDyn(&[i, j])]
                })),
            )
        }
        _ => Err(format!("IR error: `{label}`: diag of {}", x.describe())),
    }
}

/// numpy's `tril(x, k)` (`upper`: `triu`) on the last two axes.
pub fn tri(x: &Value, k: &Value, upper: bool, label: &str) -> Result<Value, String> {
    let k = k
        .scalar_int()
        .ok_or_else(|| format!("IR error: `{label}`: an offset of {}", k.describe()))?;
    let n = x.rank();
    if n < 2 {
        return Err(format!(
            "IR error: `{label}`: tril/triu of {}",
            x.describe()
        ));
    }
    Ok(map_array!(x, a => {
        let mut out = a.clone();
        for (at, o) in out.indexed_iter_mut() {
            let d = at[n - 1] as i64 - at[n - 2] as i64;
            if (upper && d < k) || (!upper && d > k) {
                *o = Default::default();
            }
        }
        out
    }))
}

/// PyTensor's `identity_like(x)`: ones on the diagonal of a matrix of x's shape and dtype.
pub fn identity_like(x: &Value, label: &str) -> Result<Value, String> {
    if x.rank() != 2 {
        return Err(format!(
            "IR error: `{label}`: identity_like of {}",
            x.describe()
        ));
    }
    let shape = x.shape().to_vec();
    Ok(
        with_dtype!(x.dtype(), T => T::into_value(ArrayD::from_shape_fn(IxDyn(&shape), |at| {
            T::from_bool(at[0] == at[1])
        }))),
    )
}

/// numpy's `take(x, idx, axis)`: `out[.., k, ..] = x[.., idx[k], ..]`, negative indices
/// from the end, one out of range an error naming it and the length.
pub fn take(x: &Value, idx: &Value, axis: usize, label: &str) -> Result<Value, String> {
    let Value::I64(idx) = idx else {
        return Err(format!(
            "IR error: `{label}`: indices of {}",
            idx.describe()
        ));
    };
    if idx.ndim() == 0 || axis >= x.rank() {
        return Err(format!(
            "IR error: `{label}`: take of {} on axis {axis}",
            x.describe()
        ));
    }
    let len = x.shape()[axis];
    let mut rows = Vec::new();
    for &i in idx.iter() {
        let j = if i < 0 {
            i128::from(i) + len as i128
        } else {
            i128::from(i)
        };
        if j < 0 || j >= len as i128 {
            return Err(format!(
                "`{label}`: index {i} is out of bounds for an axis of length {len}"
            ));
        }
        rows.push(j as usize);
    }
    // x's axes before `axis`, idx's, x's after; `rows` is idx in row-major order.
    let r = idx.ndim();
    let mut shape = x.shape()[..axis].to_vec();
    shape.extend_from_slice(idx.shape());
    shape.extend_from_slice(&x.shape()[axis + 1..]);
    let flat_at = |at: &[usize]| {
        at[axis..axis + r]
            .iter()
            .zip(idx.shape())
            .fold(0, |acc, (&i, &n)| acc * n + i)
    };
    Ok(
        map_array!(x, a => ArrayD::from_shape_fn(IxDyn(&shape), |at| {
            let at = at.slice();
            let mut source = at[..axis].to_vec();
            source.push(rows[flat_at(at)]);
            source.extend_from_slice(&at[axis + r..]);
            a[IxDyn(&source)]
        })),
    )
}

/// numpy's `x[mask]`: the elements (rows, for a mask of fewer axes) of `x` where `mask`,
/// of the shape of x's leading axes, is true, in row-major order: `[count, x's other
/// axes]`.
pub fn mask_take(x: &Value, mask: &Value, label: &str) -> Result<Value, String> {
    let Value::Bool(mask) = mask else {
        return Err(format!(
            "IR error: `{label}`: a mask of {}",
            mask.describe()
        ));
    };
    let k = mask.ndim();
    if k == 0 || k > x.rank() {
        return Err(format!(
            "IR error: `{label}`: mask read of {}",
            x.describe()
        ));
    }
    if mask.shape() != &x.shape()[..k] {
        return Err(format!(
            "`{label}`: a mask of shape {:?} does not fit an array of shape {:?}",
            mask.shape(),
            x.shape()
        ));
    }
    let picked: Vec<Vec<usize>> = mask
        .indexed_iter()
        .filter(|(_, &m)| m)
        .map(|(at, _)| at.slice().to_vec())
        .collect();
    let mut shape = vec![picked.len()];
    shape.extend_from_slice(&x.shape()[k..]);
    Ok(
        map_array!(x, a => ArrayD::from_shape_fn(IxDyn(&shape), |at| {
            let at = at.slice();
            let mut source = picked[at[0]].clone();
            source.extend_from_slice(&at[1..]);
            a[IxDyn(&source)]
        })),
    )
}

/// numpy's `x[.., idx, ..] = value` on `axis` (`inc`: `np.add.at(x, idx, value)`, every
/// occurrence of an index adding): value broadcast to x's shape with `idx.len()` rows on
/// `axis`, written row by row in the order of `idx`.
pub fn scatter(
    x: &Value,
    value: &Value,
    idx: &Value,
    axis: usize,
    inc: bool,
    label: &str,
) -> Result<Value, String> {
    let Value::I64(idx) = idx else {
        return Err(format!(
            "IR error: `{label}`: indices of {}",
            idx.describe()
        ));
    };
    if idx.ndim() != 1 || axis >= x.rank() || value.dtype() != x.dtype() {
        return Err(format!(
            "IR error: `{label}`: scatter of {} into {} on axis {axis}",
            value.describe(),
            x.describe()
        ));
    }
    let len = x.shape()[axis];
    let mut rows = Vec::new();
    for &i in idx.iter() {
        let j = if i < 0 {
            i128::from(i) + len as i128
        } else {
            i128::from(i)
        };
        if j < 0 || j >= len as i128 {
            return Err(format!(
                "`{label}`: index {i} is out of bounds for an axis of length {len}"
            ));
        }
        rows.push(j as usize);
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = rows.len();
    fn write<T: Element + Copy>(
        x: &ArrayD<T>,
        value: &ArrayD<T>,
        rows: &[usize],
        shape: &[usize],
        axis: usize,
        combine: impl Fn(T, T) -> T,
        label: &str,
    ) -> Result<ArrayD<T>, String> {
        let v = value.broadcast(IxDyn(shape)).ok_or_else(|| {
            format!(
                "`{label}`: cannot broadcast a value of shape {:?} to the selected shape {shape:?}",
                value.shape()
            )
        })?;
        let mut out = x.clone();
        for (at, &e) in v.indexed_iter() {
            let mut to = at.clone();
            to[axis] = rows[at[axis]];
            out[&to] = combine(out[&to], e);
        }
        Ok(out)
    }
    use super::num::Number;
    let keep = |_: bool, v: bool| v;
    // A number is written, or added (`inc`).
    macro_rules! numeric {
        ($a:expr, $v:expr) => {
            write(
                $a,
                $v,
                &rows,
                &shape,
                axis,
                |o, e| if inc { o.add(e) } else { e },
                label,
            )
            .map(Element::into_value)
        };
    }
    match (x, value) {
        (Value::Bool(a), Value::Bool(v)) if !inc => {
            write(a, v, &rows, &shape, axis, keep, label).map(Value::Bool)
        }
        _ => same_number!((x, value), (a, v) => numeric!(a, v)).unwrap_or_else(|| {
            Err(format!(
                "IR error: `{label}`: inc_subtensor of {}",
                x.describe()
            ))
        }),
    }
}

/// numpy's `x[mask] = value` (`inc`: `x[mask] += value`): the mask has the shape of x's
/// leading axes; value broadcast to `[count of true, x's other axes]`, its rows written in
/// the mask's row-major order.
pub fn mask_set(
    x: &Value,
    value: &Value,
    mask: &Value,
    inc: bool,
    label: &str,
) -> Result<Value, String> {
    let Value::Bool(mask) = mask else {
        return Err(format!(
            "IR error: `{label}`: a mask of {}",
            mask.describe()
        ));
    };
    let k = mask.ndim();
    if k > x.rank() || value.dtype() != x.dtype() {
        return Err(format!("IR error: `{label}`: mask set of {}", x.describe()));
    }
    if mask.shape() != &x.shape()[..k] {
        return Err(format!(
            "`{label}`: a mask of shape {:?} does not fit an array of shape {:?}",
            mask.shape(),
            x.shape()
        ));
    }
    // The positions the mask selects, in row-major order.
    let picked: Vec<Vec<usize>> = mask
        .indexed_iter()
        .filter(|(_, &m)| m)
        .map(|(at, _)| at.slice().to_vec())
        .collect();
    let mut shape = vec![picked.len()];
    shape.extend_from_slice(&x.shape()[k..]);
    fn write<T: Element>(
        x: &ArrayD<T>,
        value: &ArrayD<T>,
        picked: &[Vec<usize>],
        shape: &[usize],
        combine: impl Fn(T, T) -> T,
        label: &str,
    ) -> Result<ArrayD<T>, String> {
        let v = value.broadcast(IxDyn(shape)).ok_or_else(|| {
            format!(
                "`{label}`: cannot broadcast a value of shape {:?} to the selected shape {shape:?}",
                value.shape()
            )
        })?;
        let mut out = x.clone();
        for (at, &e) in v.indexed_iter() {
            let mut to = picked[at[0]].clone();
            to.extend_from_slice(&at.slice()[1..]);
            let to = IxDyn(&to);
            out[&to] = combine(out[&to], e);
        }
        Ok(out)
    }
    use super::num::Number;
    match (x, value) {
        (Value::Bool(a), Value::Bool(v)) if !inc => {
            write(a, v, &picked, &shape, |_, e| e, label).map(Value::Bool)
        }
        _ => same_number!((x, value), (a, v) => {
            write(a, v, &picked, &shape, |o, e| if inc { o.add(e) } else { e }, label)
                .map(Element::into_value)
        })
        .unwrap_or_else(|| Err(format!("IR error: `{label}`: inc of {}", x.describe()))),
    }
}
