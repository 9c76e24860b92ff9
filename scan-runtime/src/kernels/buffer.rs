//! Output buffers: generated code declares one per array value before the loop and reuses
//! it every step, so the only allocations happen when a shape changes.

use std::mem::MaybeUninit;

use ndarray::{Array, ArrayView, ArrayViewMut, Dimension};

use crate::element::Element;
use crate::error::{Error, Result};

/// Gives `buf` the shape `shape`, reallocating (filled with `T::default()`, or a kept
/// buffer with what it held, `pool`) only when its shape differs. Contents are unspecified
/// afterwards: callers overwrite every element.
#[inline]
pub fn ensure_shape<T: Element, D: Dimension>(buf: &mut Array<T, D>, shape: D) {
    if !same_shape(buf.shape(), &shape) {
        *buf = allocate(shape.clone(), None, false)
            .unwrap_or_else(|| Array::from_elem(shape, T::default()));
    }
}

/// Gives `buf` the shape `shape` with every element `value`: a new buffer is written once,
/// with `value` (not with zeros first, then `value`: a pass over the whole buffer fewer,
/// 8 MB of `ones_like` per call of power_large).
pub fn ensure_shape_filled<T: Element, D: Dimension>(buf: &mut Array<T, D>, shape: D, value: T) {
    if same_shape(buf.shape(), &shape) {
        buf.fill(value);
    } else {
        *buf = allocate(shape.clone(), Some(value), false)
            .unwrap_or_else(|| Array::from_elem(shape, value));
    }
}

/// A new buffer of `shape`, aligned ([`ALIGN`]): every element `value` when given, else
/// unspecified (a kept buffer from `pool` holds what its last user left; a fresh one is
/// `T::default()`, zeroed memory from the allocator, which fresh pages already are).
/// `None` when the size overflows, or, with `probe`, when the memory cannot be had (tried
/// with `try_reserve_exact` first, an extra allocation: for sizes from the user, an `Err`
/// rather than an abort).
fn allocate<T: Element, D: Dimension>(
    shape: D,
    value: Option<T>,
    probe: bool,
) -> Option<Array<T, D>> {
    let len = shape.size_checked()?;
    let padded = len.checked_add(pad::<T>(len))?;
    if padded.checked_mul(std::mem::size_of::<T>().max(1))? > isize::MAX as usize {
        return None;
    }
    // A large buffer kept from an earlier call (`pool`) keeps its mapped pages.
    let data = match super::pool::take::<T>(padded) {
        Some(mut data) => {
            if value.is_some() {
                data.clear();
            }
            data.resize(padded, value.unwrap_or_default());
            data
        }
        None => {
            if probe {
                Vec::<T>::new().try_reserve_exact(padded).ok()?;
            }
            vec![value.unwrap_or_default(); padded]
        }
    };
    aligned(shape, data)
}

/// Where a kernel writes its result: a buffer of its own (`&mut Array`, given the result's
/// shape first), or a row of a scan's output (`array_trace::SlotRow`) that the step writes
/// directly.
pub trait Destination<'a, T, D: Dimension>: Sized {
    /// A view of the result's shape to write every element of, or `Err` when the
    /// destination cannot hold that shape (a buffer of the kernel's own: `Err` naming
    /// `what`, the expression, when that shape cannot be allocated).
    fn prepare(self, shape: D, what: &str) -> Result<ArrayViewMut<'a, T, D>>;

    /// As [`Self::prepare`], for a kernel that writes every element of a contiguous output
    /// itself: a destination whose memory is not initialised yet (a trace's new row) hands
    /// over its elements as they are, so that nothing is written twice.
    fn prepare_elems(self, shape: D, what: &str) -> Result<Prepared<'a, T, D>> {
        self.prepare(shape, what).map(Prepared::View)
    }
}

/// A destination ready to be written ([`Destination::prepare_elems`]).
pub enum Prepared<'a, T, D> {
    View(ArrayViewMut<'a, T, D>),
    Elems(Uninit<'a, T, D>),
}

impl<'a, T: Element, D: Dimension> Prepared<'a, T, D> {
    /// The elements to write, contiguous in standard order (not initialised yet, for a
    /// trace's new row), when the destination has them so; then [`Self::written`] once
    /// every one was written.
    #[inline]
    pub(crate) fn slots(&mut self) -> Option<&mut [MaybeUninit<T>]> {
        match self {
            Prepared::View(v) => v.as_slice_mut().map(as_slots),
            Prepared::Elems(u) => Some(&mut *u.elems),
        }
    }

    /// Every element was written through [`Self::slots`].
    #[inline]
    pub(crate) fn written(self) {
        if let Prepared::Elems(u) = self {
            *u.filled = true;
        }
    }

    /// A view to write, its elements initialised.
    #[inline]
    pub(crate) fn into_view(self) -> Result<ArrayViewMut<'a, T, D>> {
        match self {
            Prepared::View(v) => Ok(v),
            Prepared::Elems(u) => u.into_view(),
        }
    }
}

/// Contiguous elements, not initialised yet, of a result of shape `dim` (standard order),
/// and the flag its owner reads to know they all were written.
pub struct Uninit<'a, T, D> {
    elems: &'a mut [MaybeUninit<T>],
    dim: D,
    filled: &'a mut bool,
}

impl<'a, T: Element, D: Dimension> Uninit<'a, T, D> {
    /// `elems` holds exactly the `dim.size()` elements of the result; `filled` is set once
    /// all are written.
    pub(crate) fn new(elems: &'a mut [MaybeUninit<T>], dim: D, filled: &'a mut bool) -> Self {
        debug_assert_eq!(elems.len(), dim.size());
        Uninit { elems, dim, filled }
    }

    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }

    /// Gives the elements to `write`, which returns whether it wrote every one of them:
    /// `None` if it did, else (nothing or part written) the elements initialised to
    /// `T::default()` as a view, for the kernel's general path.
    pub(crate) fn write_all(
        self,
        write: impl FnOnce(&mut [MaybeUninit<T>]) -> bool,
    ) -> Result<Option<ArrayViewMut<'a, T, D>>> {
        if write(self.elems) {
            *self.filled = true;
            return Ok(None);
        }
        self.into_view().map(Some)
    }

    /// The elements initialised to `T::default()`, as a view to write. Inlined: a view
    /// returned through memory from a call is read back before its stores have landed (a
    /// stall measured in a Kalman step's row written by a product).
    #[inline]
    pub(crate) fn into_view(self) -> Result<ArrayViewMut<'a, T, D>> {
        for e in self.elems.iter_mut() {
            e.write(T::default());
        }
        *self.filled = true;
        // SAFETY: every element was initialised just above, `MaybeUninit<T>` has the
        // layout of `T`, and the slice stays borrowed (`'a`) as the view's memory.
        let elems: &'a mut [T] = unsafe { &mut *(self.elems as *mut [MaybeUninit<T>] as *mut [T]) };
        standard_view_mut(self.dim, elems).ok_or_else(|| Error::InvalidArgument {
            what: "n_steps".to_string(),
            detail: "internal error: a row's elements do not match its shape".to_string(),
        })
    }
}

/// `elems` as a view of shape `dim` in standard order, `None` unless they are as many
/// as the shape has. One comparison: ndarray's `from_shape` checks the layout out of
/// line, a call for each of a trace's rows at every step.
#[inline(always)]
pub(crate) fn standard_view<T, D: Dimension>(dim: D, elems: &[T]) -> Option<ArrayView<'_, T, D>> {
    if dim.size_checked() != Some(elems.len()) {
        return None;
    }
    // SAFETY: a view of `dim` in standard order reads the `dim.size()` elements from the
    // first, all of them in `elems` (checked just above), which it borrows.
    Some(unsafe { ArrayView::from_shape_ptr(dim, elems.as_ptr()) })
}

/// [`standard_view`] of elements to write.
#[inline(always)]
pub(crate) fn standard_view_mut<T, D: Dimension>(
    dim: D,
    elems: &mut [T],
) -> Option<ArrayViewMut<'_, T, D>> {
    if dim.size_checked() != Some(elems.len()) {
        return None;
    }
    // SAFETY: as in `standard_view`; the view borrows `elems` uniquely.
    Some(unsafe { ArrayViewMut::from_shape_ptr(dim, elems.as_mut_ptr()) })
}

/// Initialised elements seen as slots to write: the kernels write their results through
/// `MaybeUninit` whether the memory was initialised or not. Only ever written with
/// initialised values (never `MaybeUninit::uninit()`), hence crate-private.
#[inline(always)]
pub(crate) fn as_slots<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`; the slots are initialised and the
    // crate's kernels only store initialised values in them, so they stay valid `T`s.
    unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// A destination's elements for a kernel that writes them all in one contiguous pass:
/// `fast(elems, shape)` is tried first (it returns whether it wrote every element); `None`
/// when it did, else the view for the kernel's general paths.
#[inline(always)]
pub(crate) fn prepare_fast_first<'a, T: Element, D: Dimension>(
    out: impl Destination<'a, T, D>,
    shape: D,
    what: &str,
    fast: impl FnOnce(&mut [MaybeUninit<T>], &[usize]) -> bool,
) -> Result<Option<ArrayViewMut<'a, T, D>>> {
    match out.prepare_elems(shape, what)? {
        Prepared::View(mut view) => {
            let dim = view.raw_dim();
            if let Some(elems) = view.as_slice_mut() {
                if fast(as_slots(elems), dim.slice()) {
                    return Ok(None);
                }
            }
            Ok(Some(view))
        }
        Prepared::Elems(elems) => {
            let dim = elems.dim.clone();
            elems.write_all(|e| fast(e, dim.slice()))
        }
    }
}

/// A view's destination error, out of line, the shapes by value (see `dot::dot_error`).
#[cold]
#[inline(never)]
fn view_shape_error<D: Dimension>(result: D, view: D) -> Error {
    Error::InvalidArgument {
        what: "destination".to_string(),
        detail: format!(
            "a result of shape {:?} cannot be written into a view of shape {:?}",
            result.slice(),
            view.slice()
        ),
    }
}

/// A view already prepared (a kernel's general path after its fast one declined).
impl<'a, T, D: Dimension> Destination<'a, T, D> for ArrayViewMut<'a, T, D> {
    #[inline]
    fn prepare(self, shape: D, _what: &str) -> Result<ArrayViewMut<'a, T, D>> {
        if same_shape(self.shape(), &shape) {
            Ok(self)
        } else {
            Err(view_shape_error(shape, self.raw_dim()))
        }
    }
}

impl<'a, T: Element, D: Dimension> Destination<'a, T, D> for &'a mut Array<T, D> {
    #[inline(always)]
    fn prepare(self, shape: D, what: &str) -> Result<ArrayViewMut<'a, T, D>> {
        try_ensure_shape(what, self, shape)?;
        Ok(self.view_mut())
    }
}

/// A view that a kernel writes in place, checking the result's shape as a trace's row does
/// (`Err(StepResultShape)`): the tests' destination of any strides (generated code writes
/// a trace's rows through `array_trace::SlotRow`).
#[cfg(test)]
pub struct Row<'a, 'w, T, D> {
    view: ArrayViewMut<'a, T, D>,
    output: &'w str,
    result: &'w str,
}

#[cfg(test)]
impl<'a, 'w, T, D> Row<'a, 'w, T, D> {
    /// `view` is the row; `output` and `result` name them in a shape error.
    #[inline]
    pub fn new(view: ArrayViewMut<'a, T, D>, output: &'w str, result: &'w str) -> Self {
        Row {
            view,
            output,
            result,
        }
    }
}

#[cfg(test)]
impl<'a, T, D: Dimension> Destination<'a, T, D> for Row<'a, '_, T, D> {
    #[inline]
    fn prepare(self, shape: D, _what: &str) -> Result<ArrayViewMut<'a, T, D>> {
        // The row's shape copied: the view itself stays out of the error's call (see
        // `dot::dot_error`).
        let have = self.view.raw_dim();
        super::steps::check_step_shape(self.output, self.result, have.slice(), shape.slice())?;
        Ok(self.view)
    }
}

#[cfg(test)]
mod row_tests {
    use super::Row;
    use crate::error::Error;
    use crate::kernels::{dot_mm, map2};
    use ndarray::{array, Array2, Axis};

    #[test]
    fn kernels_write_a_row_in_place_or_report_its_shape() {
        let mut trace = Array2::<f64>::zeros((3, 2));
        let (a, b) = (array![1.0, 2.0], array![10.0, 20.0]);
        let row = Row::new(trace.index_axis_mut(Axis(0), 1), "`h`", "a + b");
        map2(row, a.view(), b.view(), "a + b", |x, y| x + y).unwrap();
        assert_eq!(trace, array![[0.0, 0.0], [11.0, 22.0], [0.0, 0.0]]);

        let long = array![1.0, 2.0, 3.0];
        let row = Row::new(trace.index_axis_mut(Axis(0), 2), "`h`", "long + 1");
        let e = map2(row, long.view(), long.view(), "long + 1", |x, y| x + y).unwrap_err();
        assert_eq!(
            e,
            Error::StepResultShape {
                output: "`h`".into(),
                result: "long + 1".into(),
                expected: vec![2],
                found: vec![3],
            }
        );
        assert_eq!(trace.row(2).to_vec(), vec![0.0, 0.0], "nothing written");
    }

    #[test]
    fn a_product_writes_a_matrix_row_of_a_stack() {
        let mut stack = ndarray::Array3::<f64>::zeros((2, 2, 2));
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let row = Row::new(stack.index_axis_mut(Axis(0), 1), "0", "a.dot(a)");
        dot_mm(row, a.view(), a.view(), "a.dot(a)").unwrap();
        assert_eq!(stack.index_axis(Axis(0), 1), a.dot(&a));
        assert_eq!(stack.index_axis(Axis(0), 0), Array2::<f64>::zeros((2, 2)));
    }
}

#[cfg(test)]
mod try_tests {
    use super::*;
    use ndarray::{Array1, Ix1};

    #[test]
    fn try_ensure_shape_allocates_or_reports() {
        let mut b: Array1<f64> = Array1::default(0);
        try_ensure_shape("n_steps", &mut b, Ix1(4)).unwrap();
        assert_eq!(b.shape(), &[4]);
        let e = try_ensure_shape("n_steps", &mut b, Ix1(usize::MAX / 2)).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { ref what, .. } if what == "n_steps"),
            "{e}"
        );
        assert_eq!(b.shape(), &[4], "the buffer is unchanged after a failure");
    }
}

/// Like [`ensure_shape`], for buffers whose size comes from the user (a scan's output
/// rows, `n_steps` of them): `Err(InvalidArgument)` naming `what` when the buffer cannot be
/// allocated, where `ensure_shape` would panic or abort the process.
#[inline(always)]
pub fn try_ensure_shape<T: Element, D: Dimension>(
    what: &str,
    buf: &mut Array<T, D>,
    shape: D,
) -> Result<()> {
    // The buffer of a step's value has its shape from the second step on: a comparison
    // inlined into the kernel, the allocation out of line.
    if same_shape(buf.shape(), &shape) {
        return Ok(());
    }
    reshape_buffer(what, buf, shape)
}

/// [`try_ensure_shape`]'s allocation.
#[cold]
#[inline(never)]
fn reshape_buffer<T: Element, D: Dimension>(
    what: &str,
    buf: &mut Array<T, D>,
    shape: D,
) -> Result<()> {
    let too_big = || Error::InvalidArgument {
        what: what.to_string(),
        detail: format!("a buffer of shape {:?} cannot be allocated", shape.slice()),
    };
    *buf = allocate(shape.clone(), None, true).ok_or_else(too_big)?;
    Ok(())
}

/// Bytes a buffer's first element is aligned to: a cache line, so that a vector load of
/// 64 bytes (AVX-512) never straddles two. Where the allocator puts a buffer otherwise
/// depends on everything allocated before it, and a step's products and maps over
/// misaligned rows took up to 17% longer (seed_taps, docs/BENCHMARKS.md).
pub const ALIGN: usize = 64;

/// Buffers smaller than this are not padded: they fit in a few cache lines whatever their
/// start (and a reduction's scalar state stays a few bytes).
const ALIGN_MIN_BYTES: usize = 4 * ALIGN;

/// Elements of `T` in [`ALIGN`] bytes: the padding that lets a buffer start on a cache
/// line wherever the allocator put it.
pub(crate) fn align_elems<T>() -> usize {
    ALIGN / std::mem::size_of::<T>().max(1)
}

/// Elements allocated beyond a buffer's own `len`, to start it on an [`ALIGN`] boundary.
fn pad<T>(len: usize) -> usize {
    if len.saturating_mul(std::mem::size_of::<T>()) < ALIGN_MIN_BYTES {
        0
    } else {
        align_elems::<T>()
    }
}

/// `data` (`shape`'s size plus [`pad`] elements) as an array of `shape` starting at its
/// first element aligned to [`ALIGN`] bytes (as far as the padding allows); `None` if the
/// sizes disagree.
fn aligned<T, D: Dimension>(shape: D, data: Vec<T>) -> Option<Array<T, D>> {
    let len = shape.size();
    let skip = data
        .as_ptr()
        .align_offset(ALIGN)
        .min(data.len().checked_sub(len)?);
    ndarray::Array1::from_vec(data)
        .slice_move(ndarray::s![skip..skip + len])
        .into_shape_with_order(shape)
        .ok()
}

/// Compares without building a second shape value (`raw_dim()` of an `IxDyn` of rank > 4
/// would allocate).
#[inline(always)]
fn same_shape<D: Dimension>(have: &[usize], want: &D) -> bool {
    same_dims(have, want.slice())
}

/// Whether two shapes are equal, compared inline: `==` on slices calls `memcmp`, which
/// costs more than the comparison of two or three lengths in a step of small matrices.
#[inline(always)]
pub(crate) fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// numpy broadcasting of `shapes` (trailing axes aligned; an axis of length 1 stretches to
/// the other operands' length). The result has `D`'s rank (`D::NDIM`, or the largest input
/// rank for `IxDyn`); missing leading axes count as length 1. `Err(Broadcast)` naming
/// `what` when lengths conflict, an input has more axes than `D`, or the result's element
/// count would overflow. Allocates nothing on success for a static `D`.
pub fn broadcast_shape<D: Dimension>(what: &str, shapes: &[&[usize]]) -> Result<D> {
    let rank = D::NDIM.unwrap_or_else(|| shapes.iter().map(|s| s.len()).max().unwrap_or(0));
    let mut out = D::zeros(rank);
    for i in 0..rank {
        out[i] = 1;
    }
    for shape in shapes {
        if shape.len() > rank {
            return Err(broadcast_error(what, shapes));
        }
        let offset = rank - shape.len();
        for (i, &n) in shape.iter().enumerate() {
            let have = &mut out[offset + i];
            if *have == 1 {
                *have = n;
            } else if n != 1 && n != *have {
                return Err(broadcast_error(what, shapes));
            }
        }
    }
    // ndarray's own limit on an array's element count.
    match out.size_checked() {
        Some(size) if size <= isize::MAX as usize => Ok(out),
        _ => Err(broadcast_error(what, shapes)),
    }
}

fn broadcast_error(what: &str, shapes: &[&[usize]]) -> Error {
    Error::Broadcast {
        what: what.to_string(),
        shapes: shapes.iter().map(|s| s.to_vec()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ArrayD, Ix0, Ix1, Ix2, Ix3, IxDyn};

    #[test]
    fn filled_buffers_hold_the_value_everywhere() {
        // A kept buffer (pool) still holds its last user's elements: all are overwritten.
        let n = (super::super::pool::KEEP_MIN_BYTES / 8) + 100;
        super::super::pool::recycle(ndarray::Array1::from_elem(n, 7.0f64));
        let mut a = ndarray::Array1::<f64>::zeros(0);
        ensure_shape_filled(&mut a, Ix1(n - 10), 1.5);
        assert_eq!(super::super::pool::kept(), 0, "the kept buffer was taken");
        assert_eq!(a.len(), n - 10);
        assert!(a.iter().all(|&x| x == 1.5));
        // A fresh one, and one of the same shape (filled in place).
        let mut b = Array2::<f32>::zeros((0, 0));
        ensure_shape_filled(&mut b, Ix2(40, 3), -2.0);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert!(b.iter().all(|&x| x == -2.0));
        let ptr = b.as_ptr();
        ensure_shape_filled(&mut b, Ix2(40, 3), 3.0);
        assert_eq!(b.as_ptr(), ptr, "same shape: no new buffer");
        assert!(b.iter().all(|&x| x == 3.0));
    }

    #[test]
    fn new_buffers_start_on_a_cache_line() {
        // From 4 cache lines (32 f64) on; smaller buffers are not padded.
        for n in [11usize, 17, 128, 1000] {
            let mut a = Array2::<f64>::zeros((0, 0));
            try_ensure_shape("a", &mut a, Ix2(n, 3)).unwrap();
            assert_eq!(a.as_ptr() as usize % ALIGN, 0, "n = {n}");
            assert_eq!(a.dim(), (n, 3));
            assert!(a.iter().all(|&x| x == 0.0));
            let mut b = ndarray::Array1::<f32>::zeros(0);
            ensure_shape(&mut b, Ix1(n * 6));
            assert_eq!(b.as_ptr() as usize % ALIGN, 0, "n = {n}");
            assert!(b.as_slice().is_some_and(|s| s.len() == n * 6));
        }
        // Taken from the pool (its memory, a larger element count): aligned too.
        super::super::pool::release();
        let big = 1 << 21; // 16 MB of f64
        super::super::pool::recycle(ndarray::Array1::<f64>::from_elem(big + 100, 1.0));
        let mut c = ndarray::Array1::<f64>::zeros(0);
        try_ensure_shape("c", &mut c, Ix1(big)).unwrap();
        assert_eq!(c.as_ptr() as usize % ALIGN, 0);
        assert_eq!(c.len(), big);
        assert_eq!(super::super::pool::kept(), 0, "the kept buffer was used");
    }

    #[test]
    fn ensure_shape_keeps_matching_buffer() {
        let mut buf = Array2::<f64>::from_elem((2, 3), 7.0);
        let ptr = buf.as_ptr();
        ensure_shape(&mut buf, Ix2(2, 3));
        assert_eq!(buf.as_ptr(), ptr);
        assert_eq!(buf[[1, 2]], 7.0); // untouched
    }

    #[test]
    fn ensure_shape_reallocates_on_change() {
        let mut buf = Array2::<i32>::from_elem((2, 3), 7);
        ensure_shape(&mut buf, Ix2(3, 2));
        assert_eq!(buf.shape(), &[3, 2]);
        assert!(buf.iter().all(|&x| x == 0));
        let mut d = ArrayD::<bool>::from_elem(IxDyn(&[1, 1, 1, 1, 1]), true);
        ensure_shape(&mut d, IxDyn(&[1, 1, 1, 1, 2]));
        assert_eq!(d.shape(), &[1, 1, 1, 1, 2]);
        assert!(d.iter().all(|&x| !x));
        let mut d2 = ArrayD::<bool>::from_elem(IxDyn(&[2]), true);
        ensure_shape(&mut d2, IxDyn(&[2, 1]));
        assert_eq!(d2.shape(), &[2, 1]);
    }

    #[test]
    fn broadcast_shape_numpy_rules() {
        let d: Ix2 = broadcast_shape("a + b", &[&[2, 3], &[3]]).unwrap();
        assert_eq!(d, Ix2(2, 3));
        let d: Ix2 = broadcast_shape("a + b", &[&[2, 1], &[1, 4]]).unwrap();
        assert_eq!(d, Ix2(2, 4));
        let d: Ix2 = broadcast_shape("a + b", &[&[], &[5, 1]]).unwrap();
        assert_eq!(d, Ix2(5, 1));
        let d: Ix1 = broadcast_shape("a + b", &[&[1], &[0]]).unwrap();
        assert_eq!(d, Ix1(0));
        let d: Ix0 = broadcast_shape("a + b", &[&[], &[]]).unwrap();
        assert_eq!(d, Ix0());
        // A larger static rank pads with leading ones.
        let d: Ix3 = broadcast_shape("a", &[&[4]]).unwrap();
        assert_eq!(d, Ix3(1, 1, 4));
        let d: IxDyn = broadcast_shape("a * b * c", &[&[3, 1, 2], &[4, 1], &[]]).unwrap();
        assert_eq!(d, IxDyn(&[3, 4, 2]));
    }

    #[test]
    fn broadcast_shape_errors() {
        let e = broadcast_shape::<Ix2>("a + b", &[&[2, 3], &[4]]).unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "a + b".into(),
                shapes: vec![vec![2, 3], vec![4]]
            }
        );
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [2, 3] and [4] together in `a + b`"
        );
        // Too many axes for the result rank.
        assert!(broadcast_shape::<Ix1>("x", &[&[1, 3]]).is_err());
        // Element count overflow.
        let big = usize::MAX / 2;
        assert!(broadcast_shape::<Ix2>("x", &[&[big, 1], &[1, big]]).is_err());
    }
}

/// Rows a trace of an `until` loop starts with (beyond its initial rows): the loop may
/// stop long before its bound, so the trace grows as steps are taken instead.
pub const UNTIL_FIRST_ROWS: usize = 16;
