//! Arrays assembled from others and views of other shapes, numpy's way: `concatenate`
//! and `stack` (and the list `[a, b, c]`), `squeeze`, `broadcast_to`, `diag`, `tril`,
//! `triu`, PyTensor's `identity_like`, stepped slices (`x[a:b:s]`, `x[::-1]`, `flip`),
//! gathers (`take`, `x[idx]`) and scatters (`set_subtensor(x[idx], v)`,
//! `inc_subtensor(x[idx], v)`, and through a boolean mask, `x[mask] = v`).
//! A copy is written into a reused buffer, allocated fallibly (a size that cannot be had
//! is an `Err`, not an abort); lengths that disagree are an `Err` naming the expression
//! and both shapes.

use ndarray::{
    Array, Array2, ArrayView, ArrayView1, ArrayView2, ArrayViewMut, Axis, Dimension, RemoveAxis,
    Slice, Zip,
};

use crate::element::{Cast, Element, Number};
use crate::error::{Error, Result};
use crate::kernels::buffer::try_ensure_shape;

fn invalid(what: &str, detail: String) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail,
    }
}

/// numpy's `concatenate(parts, axis)`: `out` holds the parts one after the other along
/// `axis`. `Err(InvalidArgument)` naming `what` when two parts differ in length on another
/// axis (with both shapes), when there is no part or no such axis, or when the result
/// cannot be allocated.
pub fn concatenate<T: Element, D: Dimension>(
    out: &mut Array<T, D>,
    parts: &[ArrayView<'_, T, D>],
    axis: usize,
    what: &str,
) -> Result<()> {
    let Some(first) = parts.first() else {
        return Err(invalid(what, "nothing to concatenate".to_string()));
    };
    if axis >= first.ndim() {
        return Err(invalid(
            what,
            format!("no axis {axis} in an array of shape {:?}", first.shape()),
        ));
    }
    let mut total: usize = 0;
    for part in parts {
        check_joinable(first.shape(), part.shape(), axis, what)?;
        total = total
            .checked_add(part.len_of(Axis(axis)))
            .ok_or_else(|| invalid(what, "the result has too many elements".to_string()))?;
    }
    let mut dim = first.raw_dim();
    dim[axis] = total;
    try_ensure_shape(what, out, dim)?;
    let mut start = 0;
    for part in parts {
        let n = part.len_of(Axis(axis));
        let dst = out.slice_axis_mut(Axis(axis), Slice::from(start..start + n));
        Zip::from(dst).and(part).for_each(|o, &x| *o = x);
        start += n;
    }
    Ok(())
}

/// `Err` unless arrays of shapes `a` and `b` can be concatenated along `axis`: one rank,
/// every other axis of one length.
fn check_joinable(a: &[usize], b: &[usize], axis: usize, what: &str) -> Result<()> {
    let why = if a.len() != b.len() {
        "their ranks differ".to_string()
    } else {
        match (0..a.len()).find(|&k| k != axis && b[k] != a[k]) {
            None => return Ok(()),
            Some(k) => format!("their lengths on axis {k} differ"),
        }
    };
    Err(invalid(
        what,
        format!("cannot concatenate arrays of shapes {a:?} and {b:?} along axis {axis}: {why}"),
    ))
}

/// `concatenate([first[None], rows])[-1]` with no copy: the last row of `rows` (along
/// axis 0) when it has one, else `first`, a view of either (the last_row rewrite's
/// `Op::LastOr`: an accumulator's final value, or its initial one when no step ran, as
/// a gradient reads it). The same `Err` as the concatenation when `rows`' rows and
/// `first` differ in shape, whether or not `rows` has any.
pub fn last_or<'a, T, D: RemoveAxis>(
    first: ArrayView<'a, T, D::Smaller>,
    rows: ArrayView<'a, T, D>,
    what: &str,
) -> Result<ArrayView<'a, T, D::Smaller>> {
    let head = first.view().insert_axis(Axis(0));
    check_joinable(head.shape(), rows.shape(), 0, what)?;
    match rows.len_of(Axis(0)) {
        0 => Ok(first),
        n => Ok(rows.index_axis_move(Axis(0), n - 1)),
    }
}

/// numpy's `stack(parts, axis)`: the parts, all of one shape, as the rows of a new axis
/// `axis` of `out` (a list `[a, b, c]` is `stack` on axis 0; scalars, as 0-d views, give a
/// vector). `Err(InvalidArgument)` naming `what` when two parts differ in shape (with both
/// shapes), when there is no part or no such axis, or when the result cannot be allocated.
pub fn stack<T: Element, D: Dimension>(
    out: &mut Array<T, D::Larger>,
    parts: &[ArrayView<'_, T, D>],
    axis: usize,
    what: &str,
) -> Result<()> {
    let Some(first) = parts.first() else {
        return Err(invalid(what, "nothing to stack".to_string()));
    };
    if axis > first.ndim() {
        return Err(invalid(
            what,
            format!(
                "no axis {axis} in the stack of arrays of shape {:?}",
                first.shape()
            ),
        ));
    }
    if let Some(part) = parts.iter().find(|p| p.shape() != first.shape()) {
        return Err(invalid(
            what,
            format!(
                "cannot stack arrays of shapes {:?} and {:?}: all must have one shape",
                first.shape(),
                part.shape()
            ),
        ));
    }
    let mut dim = first.raw_dim().insert_axis(Axis(axis));
    dim[axis] = parts.len();
    try_ensure_shape(what, out, dim)?;
    for (k, part) in parts.iter().enumerate() {
        let dst = out.slice_axis_mut(Axis(axis), Slice::from(k..k + 1));
        let src = part.view().insert_axis(Axis(axis));
        Zip::from(dst).and(&src).for_each(|o, &x| *o = x);
    }
    Ok(())
}

/// numpy's `squeeze(x, axis)`: the view without axis `axis`. `Err(InvalidArgument)`
/// naming `what` (with the shape) when that axis' length is not 1.
pub fn squeeze<'a, T, D: RemoveAxis>(
    x: ArrayView<'a, T, D>,
    axis: usize,
    what: &str,
) -> Result<ArrayView<'a, T, D::Smaller>> {
    match x.shape().get(axis) {
        Some(1) => Ok(x.index_axis_move(Axis(axis), 0)),
        Some(&n) => Err(invalid(
            what,
            format!(
                "cannot squeeze axis {axis} of an array of shape {:?}: its length is {n}, not 1",
                x.shape()
            ),
        )),
        None => Err(invalid(
            what,
            format!("no axis {axis} in an array of shape {:?}", x.shape()),
        )),
    }
}

/// numpy's `broadcast_to(x, dims)`: a read-only view of `x` with shape `dims` (`x`'s axes
/// aligned with the last ones, each of its lengths equal to the new one or 1, repeated by a
/// zero stride). `Err(InvalidArgument)` naming `what` (with both shapes) when `x` does not
/// broadcast to `dims`, for a negative length, or a shape of another rank than `E`'s.
pub fn broadcast_to<'a, T, D: Dimension, E: Dimension>(
    x: ArrayView<'a, T, D>,
    dims: &[i64],
    what: &str,
) -> Result<ArrayView<'a, T, E>> {
    let mut dim = E::zeros(E::NDIM.unwrap_or(dims.len()));
    if dim.ndim() != dims.len() {
        return Err(invalid(
            what,
            format!(
                "a shape of {} axes for an array of rank {}",
                dims.len(),
                dim.ndim()
            ),
        ));
    }
    for (k, &n) in dims.iter().enumerate() {
        dim[k] = usize::try_from(n)
            .map_err(|_| invalid(what, format!("negative length {n} in the shape {dims:?}")))?;
    }
    // The shape for the error, without an allocation (`stretch` takes `x`).
    let shape = x.raw_dim();
    stretch(x, dim).ok_or_else(|| {
        invalid(
            what,
            format!(
                "cannot broadcast an array of shape {:?} to the shape {dims:?}",
                shape.slice()
            ),
        )
    })
}

/// numpy's `broadcast_arrays(*arrays)[k]` for `x`, array k of the arrays of `shapes`: `x`
/// as a view of their broadcast shape. `Err(Broadcast)` naming `what` (the elementwise
/// operation they are the operands of) when the shapes do not broadcast, as that operation
/// gives.
pub fn broadcast_arrays<'a, T, D: Dimension, E: Dimension>(
    x: ArrayView<'a, T, D>,
    shapes: &[&[usize]],
    what: &str,
) -> Result<ArrayView<'a, T, E>> {
    let dim: E = super::buffer::broadcast_shape(what, shapes)?;
    let shape = x.raw_dim();
    stretch(x, dim).ok_or_else(|| {
        invalid(
            what,
            format!(
                "internal error: an array of shape {:?} is not one of the arrays of shapes \
                 {shapes:?}",
                shape.slice()
            ),
        )
    })
}

/// `x` repeated along the axes of `dim` it lacks or has of length 1 (a view, zero
/// strides), as long as `x`'s data: `None` when `x` does not broadcast to `dim`.
fn stretch<'a, T, D: Dimension, E: Dimension>(
    x: ArrayView<'a, T, D>,
    dim: E,
) -> Option<ArrayView<'a, T, E>> {
    let view = x.broadcast(dim)?;
    // SAFETY: `view` reads only elements of `x` (its pointer and strides are `x`'s, with
    // zero strides on the repeated axes), which are borrowed immutably for `'a`; the raw
    // view handed back as an `ArrayView<'a>` is read-only, so nothing writes them while it
    // lives. This only lifts the lifetime of `broadcast`'s borrow of the local `x` to that
    // of the data `x` views.
    Some(unsafe { view.raw_view().deref_into_view() })
}

/// numpy's `a[start:stop:step]` on axis `axis` (Python's `slice(start, stop,
/// step).indices(len)`: negative bounds count from the end, bounds past an end clamp, a
/// negative step walks backwards from `start`, which defaults to the last element), a view
/// (unchanged when there is no such axis). `Err(InvalidArgument)` naming `what` for a step
/// of 0.
pub fn slice_step_at<'a, T, D: Dimension>(
    a: ArrayView<'a, T, D>,
    axis: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    what: &str,
) -> Result<ArrayView<'a, T, D>> {
    match a.shape().get(axis) {
        Some(&len) => Ok(a.slice_axis_move(Axis(axis), stepped(len, start, stop, step, what)?)),
        None => Ok(a),
    }
}

/// Mutable [`slice_step_at`], for `set_subtensor`.
pub fn slice_step_at_mut<'a, T, D: Dimension>(
    a: ArrayViewMut<'a, T, D>,
    axis: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    what: &str,
) -> Result<ArrayViewMut<'a, T, D>> {
    match a.shape().get(axis) {
        Some(&len) => Ok(a.slice_axis_move(Axis(axis), stepped(len, start, stop, step, what)?)),
        None => Ok(a),
    }
}

/// The elements `start:stop:step` of an axis of length `len` picks, as ndarray's slice
/// (which takes a range and, for a negative step, walks it from its end).
fn stepped(
    len: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    what: &str,
) -> Result<Slice> {
    if step == 0 {
        return Err(invalid(what, "a slice step cannot be zero".to_string()));
    }
    // CPython's PySlice_AdjustIndices, in i128 (no overflow at any i64 bound or step).
    let n = len as i128;
    let back = step < 0;
    let adjust = |b: Option<i64>, default: i128| match b {
        None => default,
        Some(b) => {
            let b = i128::from(b);
            if b < 0 {
                (b + n).max(if back { -1 } else { 0 })
            } else if b >= n {
                if back {
                    n - 1
                } else {
                    n
                }
            } else {
                b
            }
        }
    };
    let first = adjust(start, if back { n - 1 } else { 0 });
    let end = adjust(stop, if back { -1 } else { n });
    let step = i128::from(step);
    let count = if back && end < first {
        (first - end - 1) / -step + 1
    } else if !back && first < end {
        (end - first - 1) / step + 1
    } else {
        0
    };
    if count == 0 {
        return Ok(Slice::from(0..0));
    }
    // Every index picked is in 0..len, and |step| < len unless one element is picked.
    let last = first + (count - 1) * step;
    let (lo, hi) = (first.min(last), first.max(last) + 1);
    let step = if count == 1 { 1 } else { step };
    Ok(Slice::new(lo as isize, Some(hi as isize), step as isize))
}

/// numpy's `take(x, idx, axis)` (`x[idx]` on axis 0): `out` is `x` with, along `axis`,
/// the rows `idx` names (negative counting from the end), in their order.
/// `Err(IndexOutOfBounds)` naming `what`, the index and the length for an index out of
/// range (nothing written then); `Err(InvalidArgument)` when there is no such axis or the
/// result cannot be allocated.
pub fn take<T: Element, D: RemoveAxis>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    idx: ArrayView1<'_, i64>,
    axis: usize,
    what: &str,
) -> Result<()> {
    let Some(&len) = x.shape().get(axis) else {
        return Err(invalid(
            what,
            format!("no axis {axis} in an array of shape {:?}", x.shape()),
        ));
    };
    // Every index checked before the buffer is touched.
    for &i in &idx {
        resolve(i, len, what)?;
    }
    let mut dim = x.raw_dim();
    dim[axis] = idx.len();
    try_ensure_shape(what, out, dim)?;
    copy_rows(out.view_mut(), x, idx.iter(), axis, what)
}

/// Row `k` of `dst` along `axis` is x's row `idx[k]` (indices checked by the caller).
fn copy_rows<'i, T: Element, D: RemoveAxis>(
    mut dst: ArrayViewMut<'_, T, D>,
    x: ArrayView<'_, T, D>,
    idx: impl Iterator<Item = &'i i64>,
    axis: usize,
    what: &str,
) -> Result<()> {
    let len = x.len_of(Axis(axis));
    for (k, &i) in idx.enumerate() {
        let src = x.index_axis(Axis(axis), resolve(i, len, what)?);
        Zip::from(dst.index_axis_mut(Axis(axis), k))
            .and(&src)
            .for_each(|o, &v| *o = v);
    }
    Ok(())
}

/// numpy's `take(x, idx, axis)` (`x[idx]` on axis 0) with an index array `idx` of any
/// rank: `out` has x's axes before `axis`, then idx's, then x's after `axis`
/// (`idx.shape + x.shape[1..]` on axis 0), element `[.., j.., ..]` being x's row `idx[j..]`
/// along `axis`. The errors of [`take`].
pub fn take_nd<T: Element, D: RemoveAxis, Di: Dimension, Do: Dimension>(
    out: &mut Array<T, Do>,
    x: ArrayView<'_, T, D>,
    idx: ArrayView<'_, i64, Di>,
    axis: usize,
    what: &str,
) -> Result<()> {
    let Some(&len) = x.shape().get(axis) else {
        return Err(invalid(
            what,
            format!("no axis {axis} in an array of shape {:?}", x.shape()),
        ));
    };
    for &i in &idx {
        resolve(i, len, what)?;
    }
    let mut dim = zeros_of_rank::<Do>(x.ndim() + idx.ndim() - 1, what)?;
    let shape = dim.slice_mut();
    shape[..axis].copy_from_slice(&x.shape()[..axis]);
    shape[axis..axis + idx.ndim()].copy_from_slice(idx.shape());
    shape[axis + idx.ndim()..].copy_from_slice(&x.shape()[axis + 1..]);
    try_ensure_shape(what, out, dim)?;
    // The result seen with idx's axes as one: x's shape with idx.len() rows on `axis`.
    let mut rows = x.raw_dim();
    rows[axis] = idx.len();
    let Ok(flat) = out.view_mut().into_shape_with_order(rows) else {
        return Err(invalid(what, "the result is not contiguous".to_string()));
    };
    copy_rows(flat, x, idx.iter(), axis, what)
}

/// numpy's `x[mask]` read: `mask`, a bool array of the shape of `x`'s leading axes,
/// selects elements (rows, for a mask of fewer axes); `out` is them in row-major order,
/// `[count, x's other axes]`, its length known only now. `Err(InvalidArgument)` naming
/// `what` and both shapes when the mask's shape is not that of x's leading axes.
pub fn mask_take<T: Element, D: Dimension, Dm: Dimension, Do: Dimension>(
    out: &mut Array<T, Do>,
    x: ArrayView<'_, T, D>,
    mask: ArrayView<'_, bool, Dm>,
    what: &str,
) -> Result<()> {
    let k = mask.ndim();
    if k > x.ndim() || mask.shape() != &x.shape()[..k] {
        return Err(invalid(
            what,
            format!(
                "a mask of shape {:?} does not fit an array of shape {:?} (it covers the leading axes)",
                mask.shape(),
                x.shape()
            ),
        ));
    }
    let mut dim = zeros_of_rank::<Do>(1 + x.ndim() - k, what)?;
    let shape = dim.slice_mut();
    shape[0] = mask.iter().filter(|&&m| m).count();
    shape[1..].copy_from_slice(&x.shape()[k..]);
    try_ensure_shape(what, out, dim)?;
    let x = x.into_dyn();
    let mut out = out.view_mut().into_dyn();
    let mut row = 0;
    for (at, &m) in mask.into_dyn().indexed_iter() {
        if !m {
            continue;
        }
        let mut src = x.view();
        for j in 0..k {
            src = src.index_axis_move(Axis(0), at[j]);
        }
        let dst = out.index_axis_mut(Axis(0), row);
        Zip::from(dst).and(&src).for_each(|o, &v| *o = v);
        row += 1;
    }
    Ok(())
}

/// A dimension of `n` axes, or `Err(InvalidArgument)` naming `what` when `D` has another
/// fixed number of axes (generated code never asks for one).
fn zeros_of_rank<D: Dimension>(n: usize, what: &str) -> Result<D> {
    match D::NDIM {
        Some(fixed) if fixed != n => Err(invalid(
            what,
            format!("a result of {n} axes in an array of {fixed}"),
        )),
        _ => Ok(D::zeros(n)),
    }
}

/// Index `i` of an axis of length `len` (negative from the end), or
/// `Err(IndexOutOfBounds)` naming `what`.
fn resolve(i: i64, len: usize, what: &str) -> Result<usize> {
    let j = if i < 0 {
        i128::from(i) + len as i128
    } else {
        i128::from(i)
    };
    usize::try_from(j)
        .ok()
        .filter(|&j| j < len)
        .ok_or_else(|| Error::IndexOutOfBounds {
            what: what.to_string(),
            index: i,
            length: len,
        })
}

/// Writes `v` broadcast to `x`'s shape with `idx.len()` rows on `axis` into the rows
/// `idx` names of `out` (a copy of `x`), combining by `f(old, new)`, row k of the value
/// into row `idx[k]`, in order.
fn scatter_with<T: Element, D: RemoveAxis, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    idx: ArrayView1<'_, i64>,
    v: ArrayView<'_, T, Dv>,
    axis: usize,
    what: &str,
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    let Some(&len) = x.shape().get(axis) else {
        return Err(invalid(
            what,
            format!("no axis {axis} in an array of shape {:?}", x.shape()),
        ));
    };
    for &i in &idx {
        resolve(i, len, what)?;
    }
    let mut dim = x.raw_dim();
    dim[axis] = idx.len();
    let fail = || Error::Broadcast {
        what: what.to_string(),
        shapes: vec![dim.slice().to_vec(), v.shape().to_vec()],
    };
    let value = v.broadcast(dim.clone()).ok_or_else(fail)?;
    try_ensure_shape(what, out, x.raw_dim())?;
    Zip::from(&mut *out).and(&x).for_each(|o, &e| *o = e);
    for (k, &i) in idx.iter().enumerate() {
        let dst = out.index_axis_mut(Axis(axis), resolve(i, len, what)?);
        let src = value.index_axis(Axis(axis), k);
        Zip::from(dst).and(&src).for_each(|o, &e| *o = f(*o, e));
    }
    Ok(())
}

/// numpy's `x[.., idx, ..] = v` on `axis` (`set_subtensor(x[idx], v)`): `out` is `x` with
/// row `idx[k]` along `axis` set to row k of `v` broadcast to the selected shape (`x`'s,
/// with `idx.len()` rows on `axis`); a repeated index keeps the last row written.
/// `Err(IndexOutOfBounds)` naming `what` for an index out of range, `Err(Broadcast)` with
/// both shapes when `v` does not broadcast; nothing is written then.
pub fn scatter<T: Element, D: RemoveAxis, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    idx: ArrayView1<'_, i64>,
    v: ArrayView<'_, T, Dv>,
    axis: usize,
    what: &str,
) -> Result<()> {
    scatter_with(out, x, idx, v, axis, what, |_, e| e)
}

/// PyTensor's `inc_subtensor(x[idx], v)` (numpy's `np.add.at(x, idx, v)` on `axis`): as
/// [`scatter`], each row added, once per occurrence of its index (integers wrap).
pub fn scatter_add<T: Number, D: RemoveAxis, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    idx: ArrayView1<'_, i64>,
    v: ArrayView<'_, T, Dv>,
    axis: usize,
    what: &str,
) -> Result<()> {
    scatter_with(out, x, idx, v, axis, what, |o, e| o.num_add(e))
}

/// Writes `v` broadcast to `[count, x's axes after the mask's]` into the elements (rows)
/// of `out` (a copy of `x`) where `mask`, of the shape of `x`'s leading axes, is true, in
/// row-major order, combining by `f(old, new)`.
fn mask_with<T: Element, D: Dimension, Dm: Dimension, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    mask: ArrayView<'_, bool, Dm>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    let k = mask.ndim();
    if k > x.ndim() || mask.shape() != &x.shape()[..k] {
        return Err(invalid(
            what,
            format!(
                "a mask of shape {:?} does not fit an array of shape {:?} (it covers the leading axes)",
                mask.shape(),
                x.shape()
            ),
        ));
    }
    let count = mask.iter().filter(|&&m| m).count();
    // The selected shape, without allocating for up to 4 axes (`IxDyn` keeps them inline).
    let mut lengths = [0usize; 8];
    let rest = &x.shape()[k..];
    if rest.len() >= lengths.len() {
        return Err(invalid(what, format!("an array of {} axes", x.ndim())));
    }
    lengths[0] = count;
    lengths[1..=rest.len()].copy_from_slice(rest);
    let selected = ndarray::IxDyn(&lengths[..=rest.len()]);
    let value = v
        .broadcast(selected.clone())
        .ok_or_else(|| Error::Broadcast {
            what: what.to_string(),
            shapes: vec![selected.slice().to_vec(), v.shape().to_vec()],
        })?;
    try_ensure_shape(what, out, x.raw_dim())?;
    Zip::from(&mut *out).and(&x).for_each(|o, &e| *o = e);
    let mut target = out.view_mut().into_dyn();
    let mut row = 0;
    for (at, &m) in mask.into_dyn().indexed_iter() {
        if !m {
            continue;
        }
        let mut dst = target.view_mut();
        for j in 0..k {
            dst = dst.index_axis_move(Axis(0), at[j]);
        }
        let src = value.index_axis(Axis(0), row);
        Zip::from(dst).and(&src).for_each(|o, &e| *o = f(*o, e));
        row += 1;
    }
    Ok(())
}

/// numpy's `x[mask] = v` (`set_subtensor(x[mask], v)`): `out` is `x` with the elements (or
/// rows, for a mask of fewer axes) where `mask` is true set, in row-major order, to those
/// of `v` broadcast to `[count, x's other axes]` (a scalar sets them all).
/// `Err(InvalidArgument)` naming `what` when the mask's shape is not that of `x`'s leading
/// axes, `Err(Broadcast)` with both shapes when `v` does not broadcast; nothing written.
pub fn mask_set<T: Element, D: Dimension, Dm: Dimension, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    mask: ArrayView<'_, bool, Dm>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
) -> Result<()> {
    mask_with(out, x, mask, v, what, |_, e| e)
}

/// numpy's `x[mask] += v` (`inc_subtensor(x[mask], v)`), as [`mask_set`], adding.
pub fn mask_add<T: Number, D: Dimension, Dm: Dimension, Dv: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    mask: ArrayView<'_, bool, Dm>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
) -> Result<()> {
    mask_with(out, x, mask, v, what, |o, e| o.num_add(e))
}

/// `|k|` as a length, saturating (an offset past any axis).
fn offset(k: i64) -> usize {
    usize::try_from(k.unsigned_abs()).unwrap_or(usize::MAX)
}

/// numpy's `diag(m, k)` of a matrix: its diagonal `k` (above the main one for k > 0,
/// below for k < 0), a view; empty when k is past the matrix.
pub fn diagonal<T>(m: ArrayView2<'_, T>, k: i64) -> ArrayView1<'_, T> {
    let (rows, cols) = m.dim();
    if k >= 0 {
        m.slice_axis_move(Axis(1), Slice::from(offset(k).min(cols)..))
            .into_diag()
    } else {
        m.slice_axis_move(Axis(0), Slice::from(offset(k).min(rows)..))
            .into_diag()
    }
}

/// numpy's `diag(v, k)` of a vector: the square matrix of side `len + |k|` with `v` on its
/// diagonal `k`, zeros (false) elsewhere. `Err(InvalidArgument)` naming `what` when that
/// matrix cannot be allocated.
pub fn diag<T: Element>(
    out: &mut Array2<T>,
    v: ArrayView1<'_, T>,
    k: i64,
    what: &str,
) -> Result<()> {
    let side = v.len().checked_add(offset(k)).ok_or_else(|| {
        invalid(
            what,
            format!(
                "a diagonal of {} elements at offset {k} is too large",
                v.len()
            ),
        )
    })?;
    try_ensure_shape(what, out, ndarray::Ix2(side, side))?;
    out.fill(T::default());
    // Diagonal k of a square matrix of side `len + |k|` has `len` elements.
    let shifted = if k >= 0 {
        out.slice_axis_mut(Axis(1), Slice::from(offset(k)..))
    } else {
        out.slice_axis_mut(Axis(0), Slice::from(offset(k)..))
    };
    Zip::from(shifted.into_diag())
        .and(&v)
        .for_each(|o, &x| *o = x);
    Ok(())
}

/// numpy's `tril(x, k)` (`upper`: `triu(x, k)`): `x` with the elements of its last two
/// axes above (below) diagonal k set to 0 (false): `x[.., i, j]` is kept when `j - i <= k`
/// (`j - i >= k`). `Err(InvalidArgument)` naming `what` for an array of rank below 2 or
/// one that cannot be allocated.
pub fn triangle<T: Element, D: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, D>,
    k: i64,
    upper: bool,
    what: &str,
) -> Result<()> {
    let n = x.ndim();
    if n < 2 {
        return Err(invalid(
            what,
            format!("an array of shape {:?} has no last two axes", x.shape()),
        ));
    }
    try_ensure_shape(what, out, x.raw_dim())?;
    // Both in logical (row-major) order.
    for ((at, o), &v) in out.view_mut().into_dyn().indexed_iter_mut().zip(x.iter()) {
        // Lengths fit in i64 (an array holds at most isize::MAX bytes).
        let (i, j) = (at[n - 2] as i64, at[n - 1] as i64);
        let keep = if upper { j - i >= k } else { j - i <= k };
        *o = if keep { v } else { T::default() };
    }
    Ok(())
}

/// PyTensor's `identity_like(x)`: `out` of `like`'s shape, ones (true) on the diagonal,
/// zeros (false) elsewhere. `Err(InvalidArgument)` naming `what` when it cannot be
/// allocated.
pub fn identity_like<T: Element, U>(
    out: &mut Array2<T>,
    like: ArrayView2<'_, U>,
    what: &str,
) -> Result<()>
where
    bool: Cast<T>,
{
    try_ensure_shape(what, out, like.raw_dim())?;
    out.fill(T::default());
    out.diag_mut().fill(true.cast());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, aview0, Array1, Array2, Array3, Ix2};

    #[test]
    fn broadcast_arrays_stretches_each_to_the_common_shape_or_names_the_operation() {
        let (a, row, col) = (
            array![[1, 2, 3], [4, 5, 6]],
            array![7, 8, 9],
            array![[1], [2]],
        );
        let shapes = [a.shape(), row.shape(), col.shape()];
        let r: ArrayView<'_, i32, Ix2> =
            broadcast_arrays(row.view(), &shapes, "a + r + c").unwrap();
        assert_eq!(r, array![[7, 8, 9], [7, 8, 9]]);
        let c: ArrayView<'_, i32, Ix2> =
            broadcast_arrays(col.view(), &shapes, "a + r + c").unwrap();
        assert_eq!(c, array![[1, 1, 1], [2, 2, 2]]);
        let same: ArrayView<'_, i32, Ix2> =
            broadcast_arrays(a.view(), &shapes, "a + r + c").unwrap();
        assert_eq!(same, a);
        let bad = array![1, 2];
        let e = broadcast_arrays::<_, _, Ix2>(a.view(), &[a.shape(), bad.shape()], "a + bad")
            .unwrap_err();
        assert_eq!(
            e,
            crate::error::Error::Broadcast {
                what: "a + bad".into(),
                shapes: vec![vec![2, 3], vec![2]],
            }
        );
    }

    #[test]
    fn concatenate_joins_along_an_axis_or_names_both_shapes() {
        let a = array![[1, 2], [3, 4]];
        let b = array![[5, 6]];
        let mut out = Array2::<i32>::zeros((0, 0));
        concatenate(&mut out, &[a.view(), b.view()], 0, "c").unwrap();
        assert_eq!(out, array![[1, 2], [3, 4], [5, 6]]);
        concatenate(&mut out, &[a.view(), a.t()], 1, "c").unwrap();
        assert_eq!(out, array![[1, 2, 1, 3], [3, 4, 2, 4]]);
        let e =
            concatenate(&mut out, &[a.view(), b.view()], 1, "concatenate([a, b], 1)").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `concatenate([a, b], 1)`: cannot concatenate arrays of shapes [2, 2] and [1, 2] \
             along axis 1: their lengths on axis 0 differ"
        );
        let empty = Array2::<i32>::zeros((0, 2));
        concatenate(&mut out, &[empty.view(), b.view()], 0, "c").unwrap();
        assert_eq!(out, b);
        assert!(concatenate::<i32, _>(&mut out, &[], 0, "c").is_err());
        assert!(concatenate(&mut out, &[a.view()], 2, "c").is_err());
    }

    #[test]
    fn last_or_is_the_last_row_or_the_first_value_a_view_of_either() {
        let first = array![[0.5, 1.5], [2.5, 3.5]];
        let rows = Array3::from_shape_fn((3, 2, 2), |(t, i, j)| (t * 4 + i * 2 + j) as f64);
        // As the concatenation would give: the last of the rows.
        let mut both = Array3::<f64>::zeros((0, 0, 0));
        let head = first.view().insert_axis(Axis(0));
        concatenate(&mut both, &[head, rows.view()], 0, "c").unwrap();
        let last = last_or(first.view(), rows.view(), "c").unwrap();
        assert_eq!(last, both.index_axis(Axis(0), 3));
        assert_eq!(last, array![[8.0, 9.0], [10.0, 11.0]]);
        assert_eq!(
            last.as_ptr(),
            rows.index_axis(Axis(0), 2).as_ptr(),
            "a view"
        );
        // No row: the first value itself.
        let none = Array3::<f64>::zeros((0, 2, 2));
        let got = last_or(first.view(), none.view(), "c").unwrap();
        assert_eq!(got, first);
        assert_eq!(got.as_ptr(), first.as_ptr(), "a view");
        // Rows of another shape: the concatenation's error, with or without rows.
        for n in [0, 2] {
            let other = Array3::<f64>::zeros((n, 2, 3));
            let e = last_or(first.view(), other.view(), "acc[-1]").unwrap_err();
            let mut out = Array3::<f64>::zeros((0, 0, 0));
            let want = concatenate(&mut out, &[head, other.view()], 0, "acc[-1]").unwrap_err();
            assert_eq!(e, want);
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid `acc[-1]`: cannot concatenate arrays of shapes [1, 2, 2] and \
                     [{n}, 2, 3] along axis 0: their lengths on axis 2 differ"
                )
            );
        }
    }

    #[test]
    fn squeeze_and_broadcast_to_are_views_or_name_the_shapes() {
        let x = Array3::from_shape_fn((2, 1, 3), |(i, _, k)| (i * 3 + k) as i64);
        let s = squeeze(x.view(), 1, "s").unwrap();
        assert_eq!(s, array![[0, 1, 2], [3, 4, 5]]);
        assert_eq!(s.as_ptr(), x.as_ptr(), "a view");
        let e = squeeze(x.view(), 2, "squeeze(x, 2)").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `squeeze(x, 2)`: cannot squeeze axis 2 of an array of shape [2, 1, 3]: \
             its length is 3, not 1"
        );
        assert!(squeeze(x.view(), 3, "s").is_err());

        let v = array![1.0, 2.0, 3.0];
        let b: ArrayView<'_, f64, ndarray::Ix2> = broadcast_to(v.view(), &[2, 3], "b").unwrap();
        assert_eq!(b, array![[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
        let t: ArrayView<'_, i64, ndarray::Ix3> = broadcast_to(x.view(), &[2, 4, 3], "b").unwrap();
        assert_eq!(t.shape(), &[2, 4, 3]);
        assert_eq!(t[[1, 3, 2]], 5);
        let zero: ArrayView<'_, f64, ndarray::Ix2> = broadcast_to(v.view(), &[0, 3], "b").unwrap();
        assert_eq!(zero.shape(), &[0, 3]);
        let e = broadcast_to::<_, _, ndarray::Ix2>(v.view(), &[2, 4], "broadcast_to(v, (2, 4))")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `broadcast_to(v, (2, 4))`: cannot broadcast an array of shape [3] to the \
             shape [2, 4]"
        );
        assert!(broadcast_to::<_, _, ndarray::Ix2>(v.view(), &[-1, 3], "b").is_err());
        assert!(broadcast_to::<_, _, ndarray::Ix2>(x.view(), &[2, 3], "b").is_err());
    }

    #[test]
    fn diag_triangles_and_identity_follow_numpy() {
        let m = array![[1, 2, 3], [4, 5, 6]];
        assert_eq!(diagonal(m.view(), 0), array![1, 5]);
        assert_eq!(diagonal(m.view(), 1), array![2, 6]);
        assert_eq!(diagonal(m.view(), 2), array![3]);
        assert_eq!(diagonal(m.view(), 3).len(), 0);
        assert_eq!(diagonal(m.view(), i64::MAX).len(), 0);
        assert_eq!(diagonal(m.view(), -1), array![4]);
        assert_eq!(diagonal(m.view(), i64::MIN).len(), 0);
        let mut out = Array2::<f64>::zeros((0, 0));
        diag(&mut out, array![1.0, 2.0].view(), 0, "d").unwrap();
        assert_eq!(out, array![[1.0, 0.0], [0.0, 2.0]]);
        diag(&mut out, array![1.0, 2.0].view(), 1, "d").unwrap();
        assert_eq!(
            out,
            array![[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
        );
        diag(&mut out, array![1.0, 2.0].view(), -1, "d").unwrap();
        assert_eq!(
            out,
            array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
        );
        let e = diag(&mut out, array![1.0].view(), i64::MAX, "diag(v, k)").unwrap_err();
        assert!(e.to_string().starts_with("invalid `diag(v, k)`"), "{e}");

        let mut t = Array2::<i32>::zeros((0, 0));
        triangle(&mut t, m.view(), 0, false, "t").unwrap();
        assert_eq!(t, array![[1, 0, 0], [4, 5, 0]]);
        triangle(&mut t, m.view(), -1, false, "t").unwrap();
        assert_eq!(t, array![[0, 0, 0], [4, 0, 0]]);
        triangle(&mut t, m.view(), 1, true, "t").unwrap();
        assert_eq!(t, array![[0, 2, 3], [0, 0, 6]]);
        triangle(&mut t, m.view(), i64::MIN, true, "t").unwrap();
        assert_eq!(t, m);
        let mut b = Array2::<bool>::from_elem((0, 0), false);
        identity_like(&mut b, m.view(), "i").unwrap();
        assert_eq!(b, array![[true, false, false], [false, true, false]]);
    }

    #[test]
    fn stepped_slices_follow_python() {
        let v = array![0, 1, 2, 3, 4, 5, 6];
        let take = |start, stop, step| {
            slice_step_at(v.view(), 0, start, stop, step, "s")
                .unwrap()
                .to_vec()
        };
        assert_eq!(take(None, None, -1), vec![6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(take(None, None, 2), vec![0, 2, 4, 6]);
        assert_eq!(take(Some(1), Some(6), 2), vec![1, 3, 5]);
        assert_eq!(take(Some(5), Some(1), -2), vec![5, 3]);
        assert_eq!(take(Some(-2), None, -3), vec![5, 2]);
        assert_eq!(take(None, Some(-8), -1), vec![6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(take(Some(100), Some(-100), -4), vec![6, 2]);
        assert_eq!(take(Some(2), Some(5), -1), Vec::<i32>::new());
        assert_eq!(take(Some(3), None, i64::MAX), vec![3]);
        assert_eq!(take(None, None, i64::MIN), vec![6]);
        assert_eq!(take(Some(i64::MIN), Some(i64::MAX), 3), vec![0, 3, 6]);
        let e = slice_step_at(v.view(), 0, None, None, 0, "x[slice(None, None, k)]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `x[slice(None, None, k)]`: a slice step cannot be zero"
        );
        let empty = Array1::<i32>::zeros(0);
        assert_eq!(
            slice_step_at(empty.view(), 0, None, None, -1, "s")
                .unwrap()
                .len(),
            0
        );
        let mut m = array![[1, 2, 3], [4, 5, 6]];
        slice_step_at_mut(m.view_mut(), 1, None, None, -2, "s")
            .unwrap()
            .fill(0);
        assert_eq!(m, array![[0, 2, 0], [0, 5, 0]]);
    }

    #[test]
    fn take_gathers_rows_or_names_the_index() {
        let m = array![[1, 2], [3, 4], [5, 6]];
        let mut out = Array2::<i32>::zeros((0, 0));
        take(&mut out, m.view(), array![2, -3, 2].view(), 0, "m[idx]").unwrap();
        assert_eq!(out, array![[5, 6], [1, 2], [5, 6]]);
        take(&mut out, m.view(), array![1, -1].view(), 1, "t").unwrap();
        assert_eq!(out, array![[2, 2], [4, 4], [6, 6]]);
        take(&mut out, m.view(), Array1::<i64>::zeros(0).view(), 0, "t").unwrap();
        assert_eq!(out.shape(), &[0, 2]);
        let e = take(&mut out, m.view(), array![0, 3].view(), 0, "m[idx]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "index 3 is out of bounds for `m[idx]` with length 3"
        );
        assert_eq!(out.shape(), &[0, 2], "nothing written");
        assert!(take(&mut out, m.view(), array![-4].view(), 0, "t").is_err());
        assert!(take(&mut out, m.view(), array![i64::MIN].view(), 0, "t").is_err());
        assert!(take(&mut out, m.view(), array![0].view(), 2, "t").is_err());
    }

    #[test]
    fn scatters_set_or_add_rows() {
        let m = array![[1, 2], [3, 4], [5, 6]];
        let mut out = Array2::<i32>::zeros((0, 0));
        scatter(
            &mut out,
            m.view(),
            array![2, 0].view(),
            array![[7, 8], [9, 10]].view(),
            0,
            "s",
        )
        .unwrap();
        assert_eq!(out, array![[9, 10], [3, 4], [7, 8]]);
        scatter(
            &mut out,
            m.view(),
            array![-1, -1].view(),
            ndarray::aview0(&0),
            1,
            "s",
        )
        .unwrap();
        assert_eq!(out, array![[1, 0], [3, 0], [5, 0]]);
        scatter_add(
            &mut out,
            m.view(),
            array![0, 0, 2].view(),
            array![10, 20].view(),
            0,
            "s",
        )
        .unwrap();
        assert_eq!(
            out,
            array![[21, 42], [3, 4], [15, 26]],
            "np.add.at: twice into row 0"
        );
        let e = scatter(
            &mut out,
            m.view(),
            array![3].view(),
            array![1, 1].view(),
            0,
            "x[idx]",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "index 3 is out of bounds for `x[idx]` with length 3"
        );
        let e = scatter(
            &mut out,
            m.view(),
            array![0].view(),
            array![1, 1, 1].view(),
            0,
            "x[idx]",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [1, 2] and [3] together in `x[idx]`"
        );
    }

    #[test]
    fn sizes_that_cannot_be_allocated_are_errors_not_aborts() {
        // Broadcast views of 2^60 elements own one: every kernel that copies one must fail
        // to allocate and say so (each result is more than isize::MAX bytes, refused
        // before the allocator is asked).
        let one = 1.0f64;
        let big: ArrayView<'_, f64, ndarray::Ix2> =
            broadcast_to(aview0(&one), &[1 << 40, 1 << 20], "b").unwrap();
        let says = |e: Error| {
            let m = e.to_string();
            assert!(
                m.contains("cannot be allocated") || m.contains("too large"),
                "{m}"
            );
        };
        let mut m = Array2::<f64>::zeros((0, 0));
        says(concatenate(&mut m, &[big, big], 0, "c").unwrap_err());
        let mut t = Array3::<f64>::zeros((0, 0, 0));
        says(stack(&mut t, &[big, big], 0, "s").unwrap_err());
        says(triangle(&mut m, big, 0, false, "t").unwrap_err());
        let tall: ArrayView<'_, f64, ndarray::Ix2> =
            broadcast_to(aview0(&one), &[1 << 60, 1], "b").unwrap();
        says(take(&mut m, tall, Array1::<i64>::zeros(8).view(), 1, "t").unwrap_err());
        says(scatter(&mut m, big, array![0i64].view(), aview0(&one), 0, "s").unwrap_err());
        let long: ArrayView1<'_, f64> = broadcast_to(aview0(&one), &[1 << 40], "b").unwrap();
        says(diag(&mut m, long, 0, "d").unwrap_err());
        says(identity_like(&mut m, big, "i").unwrap_err());
        assert_eq!(m.shape(), &[0, 0], "the buffer is unchanged");
    }

    #[test]
    fn masks_select_elements_or_rows() {
        let x = array![[1.0, -2.0], [3.0, -4.0]];
        let mut out = Array2::<f64>::zeros((0, 0));
        let neg = x.mapv(|e| e < 0.0);
        mask_set(&mut out, x.view(), neg.view(), aview0(&0.0), "m").unwrap();
        assert_eq!(out, array![[1.0, 0.0], [3.0, 0.0]]);
        mask_add(
            &mut out,
            x.view(),
            neg.view(),
            array![10.0, 20.0].view(),
            "m",
        )
        .unwrap();
        assert_eq!(out, array![[1.0, 8.0], [3.0, 16.0]]);
        let rows = array![false, true];
        mask_set(
            &mut out,
            x.view(),
            rows.view(),
            array![7.0, 8.0].view(),
            "m",
        )
        .unwrap();
        assert_eq!(out, array![[1.0, -2.0], [7.0, 8.0]]);
        let e = mask_set(
            &mut out,
            x.view(),
            array![true].view(),
            aview0(&0.0),
            "x[mask]",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `x[mask]`: a mask of shape [1] does not fit an array of shape [2, 2] (it \
             covers the leading axes)"
        );
        let e = mask_set(
            &mut out,
            x.view(),
            neg.view(),
            array![1.0, 2.0, 3.0].view(),
            "x[mask]",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [2] and [3] together in `x[mask]`"
        );
    }

    #[test]
    fn stack_adds_an_axis_or_names_both_shapes() {
        let (x, y) = (1.5, -2.0);
        let mut v = Array1::<f64>::zeros(0);
        stack(&mut v, &[aview0(&x), aview0(&y), aview0(&x)], 0, "s").unwrap();
        assert_eq!(v, array![1.5, -2.0, 1.5]);
        let a = array![1, 2, 3];
        let b = array![4, 5, 6];
        let mut m = Array2::<i32>::zeros((0, 0));
        stack(&mut m, &[a.view(), b.view()], 0, "s").unwrap();
        assert_eq!(m, array![[1, 2, 3], [4, 5, 6]]);
        stack(&mut m, &[a.view(), b.view()], 1, "s").unwrap();
        assert_eq!(m, array![[1, 4], [2, 5], [3, 6]]);
        let c = array![[1, 2], [3, 4]];
        let mut t = Array3::<i32>::zeros((0, 0, 0));
        stack(&mut t, &[c.view(), c.t()], 2, "s").unwrap();
        assert_eq!(t, array![[[1, 1], [2, 3]], [[3, 2], [4, 4]]]);
        let e = stack(&mut m, &[a.view(), b.slice(ndarray::s![..2])], 0, "[a, b]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `[a, b]`: cannot stack arrays of shapes [3] and [2]: all must have one shape"
        );
        assert!(stack(&mut m, &[a.view()], 2, "s").is_err());
    }
}
