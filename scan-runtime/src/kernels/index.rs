//! Indexing and slicing on the leading axis with numpy semantics (negative indices count
//! from the end; slices clamp), broadcasting assignment, and the small constructors
//! (`zeros_like`, `arange`, `full`, `eye`) that fill a reused buffer.

use ndarray::{
    Array, Array1, Array2, ArrayView, ArrayView0, ArrayViewMut, Axis, Dimension, IntoDimension,
    Ix1, RemoveAxis, Slice, Zip,
};

use crate::element::{Element, Number};
use crate::error::{Error, Result};
use crate::kernels::buffer::{ensure_shape, ensure_shape_filled, try_ensure_shape};
use crate::kernels::copy::copy_elems;

/// `a[i]` on axis 0, removing it. `Err(IndexOutOfBounds)` naming `what` unless
/// `-len <= i < len`.
pub fn index<'a, T, D: RemoveAxis>(
    a: ArrayView<'a, T, D>,
    i: i64,
    what: &str,
) -> Result<ArrayView<'a, T, D::Smaller>> {
    index_at(a, 0, i, what)
}

/// Mutable `a[i]` on axis 0, for assignment into a row.
pub fn index_mut<'a, T, D: RemoveAxis>(
    a: ArrayViewMut<'a, T, D>,
    i: i64,
    what: &str,
) -> Result<ArrayViewMut<'a, T, D::Smaller>> {
    index_at_mut(a, 0, i, what)
}

/// The value of a 0-d array.
#[inline]
pub fn scalar<T: Copy>(a: ArrayView0<'_, T>) -> T {
    *a.into_scalar()
}

/// `a[start..end]` on axis 0 with numpy clamping: negative bounds count from the end,
/// bounds past either end clamp, and `start >= end` gives zero rows. Never fails; a 0-d
/// `IxDyn` array comes back unchanged.
pub fn slice<'a, T, D: Dimension>(
    a: ArrayView<'a, T, D>,
    start: Option<i64>,
    end: Option<i64>,
) -> ArrayView<'a, T, D> {
    slice_at(a, 0, start, end)
}

/// Mutable [`slice()`].
pub fn slice_mut<'a, T, D: Dimension>(
    a: ArrayViewMut<'a, T, D>,
    start: Option<i64>,
    end: Option<i64>,
) -> ArrayViewMut<'a, T, D> {
    slice_at_mut(a, 0, start, end)
}

/// `a[.., i]`: [`index`] on axis `axis` (a multi-axis index `x[(.., i)]`).
pub fn index_at<'a, T, D: RemoveAxis>(
    a: ArrayView<'a, T, D>,
    axis: usize,
    i: i64,
    what: &str,
) -> Result<ArrayView<'a, T, D::Smaller>> {
    let row = row_index(a.shape().get(axis..).unwrap_or(&[]), i, what)?;
    Ok(a.index_axis_move(Axis(axis), row))
}

/// Mutable [`index_at`].
pub fn index_at_mut<'a, T, D: RemoveAxis>(
    a: ArrayViewMut<'a, T, D>,
    axis: usize,
    i: i64,
    what: &str,
) -> Result<ArrayViewMut<'a, T, D::Smaller>> {
    let row = row_index(a.shape().get(axis..).unwrap_or(&[]), i, what)?;
    Ok(a.index_axis_move(Axis(axis), row))
}

/// `a[.., start..end]`: [`slice()`] on axis `axis` (unchanged when there is no such axis).
pub fn slice_at<'a, T, D: Dimension>(
    a: ArrayView<'a, T, D>,
    axis: usize,
    start: Option<i64>,
    end: Option<i64>,
) -> ArrayView<'a, T, D> {
    match a.shape().get(axis) {
        Some(&len) => a.slice_axis_move(Axis(axis), clamp_range(len, start, end)),
        None => a,
    }
}

/// Mutable [`slice_at`].
pub fn slice_at_mut<'a, T, D: Dimension>(
    a: ArrayViewMut<'a, T, D>,
    axis: usize,
    start: Option<i64>,
    end: Option<i64>,
) -> ArrayViewMut<'a, T, D> {
    match a.shape().get(axis) {
        Some(&len) => a.slice_axis_move(Axis(axis), clamp_range(len, start, end)),
        None => a,
    }
}

/// `dst[...] = v`, broadcasting `v` to `dst`'s shape (extra leading axes of length 1 in
/// `v` are allowed, as numpy). `Err(Broadcast)` naming `what` when `v` does not fit.
pub fn assign<T: Element, D: Dimension, Dv: Dimension>(
    dst: ArrayViewMut<'_, T, D>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
) -> Result<()> {
    zip_broadcast(dst, v, what, |d, x| *d = x)
}

/// `dst[...] += v` with the broadcasting of [`assign`] (integers wrap). Used for
/// `inc_subtensor`.
pub fn assign_add<T: Number, D: Dimension, Dv: Dimension>(
    dst: ArrayViewMut<'_, T, D>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
) -> Result<()> {
    zip_broadcast(dst, v, what, |d, x| *d = d.num_add(x))
}

/// `out = a.copy()` into a reused buffer (contiguous elements by [`copy_elems`]).
pub fn copy_into<T: Element, D: Dimension>(out: &mut Array<T, D>, a: ArrayView<'_, T, D>) {
    ensure_shape(out, a.raw_dim());
    match (out.as_slice_mut(), a.as_slice()) {
        (Some(o), Some(a)) => copy_elems(o, a),
        _ => Zip::from(out).and(&a).for_each(|o, &x| *o = x),
    }
}

/// `out` takes `like`'s shape, every element `value` (`zeros_like`, `ones_like`, `full_like`).
/// `like`'s element type does not matter.
pub fn fill_like<T: Element, A, D: Dimension>(
    out: &mut Array<T, D>,
    like: ArrayView<'_, A, D>,
    value: T,
) {
    ensure_shape_filled(out, like.raw_dim(), value);
}

/// numpy's `full(shape, value)` (and `zeros`, `ones`): `out` of shape `dims` filled with
/// `value`. `Err(InvalidArgument)` naming `what` for a negative length, a shape of
/// another rank than `out`'s, or more elements than an array can hold.
pub fn full<T: Element, D: Dimension>(
    out: &mut Array<T, D>,
    dims: &[i64],
    value: T,
    what: &str,
) -> Result<()> {
    let bad = |detail: String| Error::InvalidArgument {
        what: what.to_string(),
        detail,
    };
    let mut dim = D::zeros(D::NDIM.unwrap_or(dims.len()));
    if dim.ndim() != dims.len() {
        return Err(bad(format!(
            "a shape of {} axes for an array of rank {}",
            dims.len(),
            dim.ndim()
        )));
    }
    for (k, &n) in dims.iter().enumerate() {
        dim[k] = usize::try_from(n)
            .map_err(|_| bad(format!("negative length {n} in the shape {dims:?}")))?;
    }
    if dim
        .size_checked()
        .is_none_or(|n| n > isize::MAX as usize / core::mem::size_of::<T>().max(1))
    {
        return Err(bad(format!(
            "the shape {dims:?} has more elements than an array can hold"
        )));
    }
    try_ensure_shape(what, out, dim)?;
    out.fill(value);
    Ok(())
}

/// numpy's `reshape(x, dims)`: `x`'s elements in row-major order, copied into `out` of
/// shape `dims`, one of which may be -1 (the length that makes the sizes agree).
/// `Err(InvalidArgument)` naming `what` when the sizes cannot agree (with both shapes), for
/// another negative length or more than one -1.
pub fn reshape<T: Element, D: Dimension, Dx: Dimension>(
    out: &mut Array<T, D>,
    x: ArrayView<'_, T, Dx>,
    dims: &[i64],
    what: &str,
) -> Result<()> {
    let bad = |detail: String| Error::InvalidArgument {
        what: what.to_string(),
        detail,
    };
    let mut dim = D::zeros(D::NDIM.unwrap_or(dims.len()));
    if dim.ndim() != dims.len() {
        return Err(bad(format!(
            "a shape of {} axes for an array of rank {}",
            dims.len(),
            dim.ndim()
        )));
    }
    let mut free = None;
    let mut known: usize = 1;
    for (k, &n) in dims.iter().enumerate() {
        match n {
            -1 if free.is_none() => free = Some(k),
            -1 => return Err(bad(format!("more than one -1 in the shape {dims:?}"))),
            n => {
                let n = usize::try_from(n)
                    .map_err(|_| bad(format!("negative length {n} in the shape {dims:?}")))?;
                dim[k] = n;
                known = known
                    .checked_mul(n)
                    .ok_or_else(|| bad(format!("the shape {dims:?} is too large")))?;
            }
        }
    }
    let total = x.len();
    let mismatch = || {
        bad(format!(
            "cannot reshape an array of shape {:?} ({total} elements) into {dims:?}",
            x.shape()
        ))
    };
    if let Some(k) = free {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(mismatch());
        }
        dim[k] = total / known;
    } else if known != total {
        return Err(mismatch());
    }
    try_ensure_shape(what, out, dim)?;
    for (o, &v) in out.iter_mut().zip(x.iter()) {
        *o = v;
    }
    Ok(())
}

/// numpy's `eye(n)`: the `n x n` identity. `Err(InvalidArgument)` naming `what` for a
/// negative `n` or one too large.
pub fn eye<T: Number>(out: &mut Array2<T>, n: i64, what: &str) -> Result<()> {
    full(out, &[n, n], T::ZERO, what)?;
    out.diag_mut().fill(T::ONE);
    Ok(())
}

/// `out = [0, 1, ..., n - 1]`; empty when `n <= 0`. `Err(InvalidArgument)` when `n` is more
/// elements than an array can hold.
pub fn arange(out: &mut Array1<i64>, n: i64, what: &str) -> Result<()> {
    let len = arange_len(n)?;
    try_ensure_shape(what, out, Ix1(len))?;
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as i64;
    }
    Ok(())
}

/// The length of `arange(n)`: `max(n, 0)`, or an error when that many i64 could not be
/// held in an array (also for a sequence `arange(n)` read as the loop index, which is
/// never materialized, so that both forms accept the same `n`).
pub fn arange_len(n: i64) -> Result<usize> {
    let len = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
    // ndarray (and Vec) cap an allocation at isize::MAX bytes.
    if len > isize::MAX as usize / std::mem::size_of::<i64>() {
        return Err(Error::InvalidArgument {
            what: "arange".to_string(),
            detail: format!("n = {n} is too many elements for an array"),
        });
    }
    Ok(len)
}

/// Resolves a numpy index on the leading axis of an array of shape `shape`.
fn row_index(shape: &[usize], i: i64, what: &str) -> Result<usize> {
    let Some(&len) = shape.first() else {
        return Err(Error::InvalidArgument {
            what: what.to_string(),
            detail: "a 0-d array has no axis to index".to_string(),
        });
    };
    let signed_len = i64::try_from(len).unwrap_or(i64::MAX);
    // `i + signed_len` cannot overflow: i < 0 <= signed_len.
    let j = if i < 0 { i + signed_len } else { i };
    if (0..signed_len).contains(&j) {
        Ok(j as usize)
    } else {
        Err(Error::IndexOutOfBounds {
            what: what.to_string(),
            index: i,
            length: len,
        })
    }
}

/// numpy's slice bound clamping for an axis of length `len`.
pub(crate) fn clamp_range(len: usize, start: Option<i64>, end: Option<i64>) -> Slice {
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |x: i64| if x < 0 { (x + n).max(0) } else { x.min(n) };
    let s = start.map_or(0, clamp);
    let e = end.map_or(n, clamp).max(s);
    // Both bounds are in 0..=len, so the casts are exact.
    Slice::from(s as usize..e as usize)
}

/// Broadcasts `v` to `dst`'s shape and applies `f` to each pair, or reports the shapes.
pub(crate) fn zip_broadcast<T: Element, D: Dimension, Dv: Dimension>(
    dst: ArrayViewMut<'_, T, D>,
    v: ArrayView<'_, T, Dv>,
    what: &str,
    f: impl Fn(&mut T, T),
) -> Result<()> {
    if v.ndim() <= dst.ndim() {
        if let Some(bv) = v.broadcast(dst.raw_dim()) {
            Zip::from(dst).and(bv).for_each(|d, &x| f(d, x));
            return Ok(());
        }
    } else {
        // numpy drops leading length-1 axes of the value (`a[0] = b[None]`). Rare, so the
        // dynamic-rank detour is acceptable.
        let extra = v.ndim() - dst.ndim();
        if v.shape()[..extra].iter().all(|&n| n == 1) {
            let mut vd = v.view().into_dyn();
            for _ in 0..extra {
                vd = vd.index_axis_move(Axis(0), 0);
            }
            if let Some(bv) = vd.broadcast(dst.raw_dim().into_dimension()) {
                Zip::from(dst).and(bv).for_each(|d, &x| f(d, x));
                return Ok(());
            }
        }
    }
    Err(Error::Broadcast {
        what: what.to_string(),
        shapes: vec![dst.shape().to_vec(), v.shape().to_vec()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, aview0, s, Array0, Array2, Array3, ArrayD, IxDyn};

    #[test]
    fn reshape_copies_in_row_major_order_and_checks_the_sizes() {
        let m = ndarray::array![[1, 2, 3], [4, 5, 6]];
        let mut out = ndarray::Array2::<i32>::zeros((0, 0));
        reshape(&mut out, m.view(), &[3, -1], "r").unwrap();
        assert_eq!(out, ndarray::array![[1, 2], [3, 4], [5, 6]]);
        reshape(&mut out, m.t(), &[-1, 2], "r").unwrap();
        assert_eq!(
            out,
            ndarray::array![[1, 4], [2, 5], [3, 6]],
            "a view's logical order"
        );
        let mut v = Array1::<i32>::zeros(0);
        reshape(&mut v, m.view(), &[-1], "r").unwrap();
        assert_eq!(v, ndarray::array![1, 2, 3, 4, 5, 6]);
        let e = reshape(&mut out, m.view(), &[4, -1], "reshape(m, (4, -1))").unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot reshape an array of shape [2, 3] (6 elements) into [4, -1]"),
            "{e}"
        );
        assert!(reshape(&mut out, m.view(), &[-1, -1], "r").is_err());
        assert!(reshape(&mut out, m.view(), &[2, 2], "r").is_err());
        assert!(reshape(&mut out, m.view(), &[-2, 3], "r").is_err());
    }

    #[test]
    fn full_and_eye_make_their_shapes_or_say_why_not() {
        let mut m = Array2::<f64>::zeros((0, 0));
        full(&mut m, &[2, 3], 1.5, "full").unwrap();
        assert_eq!(m, Array2::from_elem((2, 3), 1.5));
        let e = full(&mut m, &[2, -1], 0.0, "zeros((2, -1))").unwrap_err();
        assert!(e.to_string().contains("negative length -1"), "{e}");
        assert!(full(&mut m, &[2], 0.0, "x").is_err(), "rank");
        assert!(full(&mut m, &[i64::MAX, 4], 0.0, "x").is_err(), "too large");
        let mut i = Array2::<i64>::zeros((0, 0));
        eye(&mut i, 3, "eye").unwrap();
        assert_eq!(i, ndarray::array![[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
        eye(&mut i, 0, "eye").unwrap();
        assert_eq!(i.shape(), &[0, 0]);
    }

    #[test]
    fn index_positive_and_negative() {
        let a = array![[1, 2], [3, 4], [5, 6]];
        assert_eq!(index(a.view(), 0, "a").unwrap(), array![1, 2]);
        assert_eq!(index(a.view(), 2, "a").unwrap(), array![5, 6]);
        assert_eq!(index(a.view(), -1, "a").unwrap(), array![5, 6]);
        assert_eq!(index(a.view(), -3, "a").unwrap(), array![1, 2]);
        let row = index(a.view(), 1, "a").unwrap();
        assert_eq!(scalar(index(row, -1, "a[1]").unwrap()), 4);
        // Index on a reversed view follows the view's logical order.
        assert_eq!(index(a.slice(s![..;-1, ..]), 0, "a").unwrap(), array![5, 6]);
    }

    #[test]
    fn index_errors() {
        let a = array![1.0, 2.0, 3.0];
        for i in [3, -4, i64::MAX, i64::MIN] {
            let e = index(a.view(), i, "xs").unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfBounds {
                    what: "xs".into(),
                    index: i,
                    length: 3
                }
            );
        }
        assert_eq!(
            index(a.view(), 3, "xs").unwrap_err().to_string(),
            "index 3 is out of bounds for `xs` with length 3"
        );
        let empty = Array2::<f64>::zeros((0, 2));
        assert!(index(empty.view(), 0, "e").is_err());
        assert!(index(empty.view(), -1, "e").is_err());
        let zero_d = ArrayD::<f64>::zeros(IxDyn(&[]));
        let e = index(zero_d.view(), 0, "z").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `z`: a 0-d array has no axis to index"
        );
    }

    #[test]
    fn index_mut_writes_row() {
        let mut a = Array2::<i64>::zeros((3, 2));
        let row = index_mut(a.view_mut(), -1, "a").unwrap();
        assign(row, array![7, 8].view(), "a[-1] = v").unwrap();
        assert_eq!(a, array![[0, 0], [0, 0], [7, 8]]);
        assert!(matches!(
            index_mut(a.view_mut(), 3, "a"),
            Err(Error::IndexOutOfBounds {
                index: 3,
                length: 3,
                ..
            })
        ));
    }

    #[test]
    fn scalar_reads_0d() {
        let x = 2.5f32;
        assert_eq!(scalar(aview0(&x)), 2.5);
        let a = Array0::from_elem((), true);
        assert!(scalar(a.view()));
    }

    #[test]
    fn slice_numpy_clamping() {
        let a = array![0, 1, 2, 3, 4];
        let cases: &[(Option<i64>, Option<i64>, &[i32])] = &[
            (None, None, &[0, 1, 2, 3, 4]),
            (Some(1), Some(3), &[1, 2]),
            (Some(-2), None, &[3, 4]),
            (None, Some(-1), &[0, 1, 2, 3]),
            (Some(-10), Some(2), &[0, 1]),
            (Some(3), Some(100), &[3, 4]),
            (Some(4), Some(2), &[]),
            (Some(7), None, &[]),
            (None, Some(-9), &[]),
            (Some(i64::MIN), Some(i64::MAX), &[0, 1, 2, 3, 4]),
        ];
        for &(start, end, want) in cases {
            assert_eq!(
                slice(a.view(), start, end).to_vec(),
                want.to_vec(),
                "{start:?}..{end:?}"
            );
        }
        let m = array![[1, 2], [3, 4], [5, 6]];
        assert_eq!(slice(m.view(), Some(-2), None), array![[3, 4], [5, 6]]);
        let zero_d = ArrayD::<f64>::zeros(IxDyn(&[]));
        assert_eq!(slice(zero_d.view(), Some(1), None).shape(), &[] as &[usize]);
    }

    #[test]
    fn slice_mut_then_assign() {
        let mut a = Array1::<f64>::zeros(5);
        assign(
            slice_mut(a.view_mut(), Some(1), Some(-1)),
            aview0(&9.0),
            "a[1:-1] = 9",
        )
        .unwrap();
        assert_eq!(a, array![0.0, 9.0, 9.0, 9.0, 0.0]);
        let v = slice_mut(a.view_mut(), Some(8), None);
        assert_eq!(v.len(), 0);
    }

    #[test]
    fn assign_broadcasts() {
        let mut a = Array2::<i32>::zeros((2, 3));
        assign(a.view_mut(), array![1, 2, 3].view(), "a[:] = v").unwrap();
        assert_eq!(a, array![[1, 2, 3], [1, 2, 3]]);
        assign(a.view_mut(), array![[7], [8]].view(), "a[:] = v").unwrap();
        assert_eq!(a, array![[7, 7, 7], [8, 8, 8]]);
        // Extra leading length-1 axes in the value.
        let v3 = Array3::from_shape_fn((1, 2, 3), |(_, i, j)| (i * 3 + j) as i32);
        assign(a.view_mut(), v3.view(), "a[:] = v").unwrap();
        assert_eq!(a, array![[0, 1, 2], [3, 4, 5]]);
        // Into a strided destination.
        assign(a.slice_mut(s![.., ..;2]), aview0(&-1), "a[:, ::2] = -1").unwrap();
        assert_eq!(a, array![[-1, 1, -1], [-1, 4, -1]]);
    }

    #[test]
    fn assign_errors() {
        let mut a = Array2::<f64>::zeros((2, 3));
        let e = assign(a.view_mut(), array![1.0, 2.0].view(), "a[0] = v").unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "a[0] = v".into(),
                shapes: vec![vec![2, 3], vec![2]]
            }
        );
        let v3 = Array3::<f64>::zeros((2, 2, 3));
        assert!(assign(a.view_mut(), v3.view(), "a = v").is_err());
        let v3b = Array3::<f64>::zeros((1, 2, 4));
        assert!(assign(a.view_mut(), v3b.view(), "a = v").is_err());
        assert!(assign_add(a.view_mut(), array![1.0, 2.0].view(), "a += v").is_err());
        assert_eq!(a, Array2::zeros((2, 3)));
    }

    #[test]
    fn assign_add_accumulates() {
        let mut a = array![[1, 2], [3, 4]];
        assign_add(a.view_mut(), array![10, 20].view(), "a += v").unwrap();
        assert_eq!(a, array![[11, 22], [13, 24]]);
        let mut w = array![i32::MAX];
        assign_add(w.view_mut(), aview0(&1), "w += 1").unwrap();
        assert_eq!(w[0], i32::MIN);
    }

    #[test]
    fn copy_into_reuses_buffer() {
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let mut out = Array2::<f64>::zeros((2, 2));
        let ptr = out.as_ptr();
        copy_into(&mut out, a.t());
        assert_eq!(out, array![[1.0, 3.0], [2.0, 4.0]]);
        assert_eq!(out.as_ptr(), ptr);
        let mut small = Array2::<f64>::zeros((0, 0));
        copy_into(&mut small, a.slice(s![..;-1, ..]));
        assert_eq!(small, array![[3.0, 4.0], [1.0, 2.0]]);
    }

    #[test]
    fn fill_like_shapes() {
        let like = Array2::<i32>::zeros((2, 3));
        let mut out = Array2::<f64>::zeros((0, 0));
        fill_like(&mut out, like.view(), 1.0);
        assert_eq!(out, Array2::from_elem((2, 3), 1.0));
        let mut b = Array1::<bool>::from_elem(1, true);
        fill_like(&mut b, array![1.0, 2.0, 3.0].view(), false);
        assert_eq!(b, array![false, false, false]);
    }

    #[test]
    fn arange_values() {
        let mut out = Array1::<i64>::zeros(0);
        arange(&mut out, 4, "arange(n)").unwrap();
        assert_eq!(out, array![0, 1, 2, 3]);
        arange(&mut out, 0, "arange(n)").unwrap();
        assert_eq!(out.len(), 0);
        arange(&mut out, -3, "arange(n)").unwrap();
        assert_eq!(out.len(), 0);
        let e = arange(&mut out, i64::MAX, "arange(n)").unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }));
        assert_eq!(
            e.to_string(),
            format!(
                "invalid `arange`: n = {} is too many elements for an array",
                i64::MAX
            )
        );
    }
}
