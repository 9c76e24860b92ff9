//! Dot products by operand rank: vector·vector, vector·matrix, matrix·vector and
//! matrix·matrix, for any strides (transposed, stepped or reversed views).
//!
//! Every product but vector·vector goes through one entry, [`Number::gemm`] (a vector is a
//! one-row or one-column matrix view, no copy). Integers take the direct loops below. Floats
//! take the backend chosen by cargo features:
//! - `faer` (the default): faer's matmul (sequential), which picks AVX2/AVX-512 kernels at
//!   run time and keeps its packing memory in a buffer per thread, so a product allocates
//!   nothing after the first one on a thread. Products of at least `threads::PAR_MIN_WORK`
//!   multiply-adds with two matrix operands are cut into one part per thread, run by
//!   `rayon::join` (see `crate::threads`). Only a vector·matrix product smaller than
//!   [`VM_MIN_WORK`] stays on the direct loop, which is faster there (measured, see the
//!   constant).
//! - `matrixmultiply`: `sgemm`/`dgemm` for matrix·matrix products of at least
//!   [`GEMM_MIN_WORK`] multiply-adds, the direct loops for the rest (matrixmultiply
//!   allocates its packing buffer on every call and has no fast vector kernels); its
//!   `threading` feature spreads a product over `MATMUL_NUM_THREADS` threads.
//! - neither: the direct loops.

use ndarray::{
    Array, Array1, Array2, Array3, ArrayView, ArrayView1, ArrayView2, ArrayView3, ArrayViewMut,
    ArrayViewMut1, ArrayViewMut2, ArrayViewMut3, Axis, Dimension, Ix1, Ix2, Ix3, Zip,
};

use crate::element::Number;
use crate::error::{Error, Result};
use crate::kernels::buffer::{
    broadcast_shape, ensure_shape, same_dims, try_ensure_shape, Destination,
};
use crate::kernels::copy::copy_elems;
use crate::kernels::tiny::{Into, Tiny};

/// The backend of float matrix products in this build: `"faer"`, `"matrixmultiply"` or
/// `"loops"` (neither feature).
pub const GEMM_BACKEND: &str = if cfg!(feature = "matrixmultiply") {
    "matrixmultiply"
} else if cfg!(feature = "faer") {
    "faer"
} else {
    "loops"
};

/// matrixmultiply backend: matrix products with fewer multiply-adds than this skip
/// matrixmultiply: below it the per-call packing buffer allocation and copies cost more than
/// the faster kernel saves.
pub const GEMM_MIN_WORK: usize = 32 * 32 * 32;

/// faer backend: a vector·matrix product (`1 x k` times `k x n`) with `k * n` below this
/// takes the direct loop. Measured on a 2-core AMD EPYC (Zen 4), f32 and f64, median of
/// single calls: the loop wins below (1x16x64: 0.11-0.18 µs against 0.11-0.35 µs for faer;
/// 1x128x8: 0.42 µs against 0.51-0.54 µs), faer from about there on (1x64x64: 0.33-0.62 µs
/// against 0.69-1.29 µs; 1x128x128: 0.8-1.4 µs against 1.4-9.5 µs). Every other shape,
/// down to 2x2x2, is faster through faer (its small-product kernels need no packing).
pub const VM_MIN_WORK: usize = 64 * 64;

/// `vzeroupper` after a faer product. faer's x86 kernels (private-gemm-x86, generated
/// assembly) return with the upper halves of the AVX registers dirty; SSE code run
/// after that (the runtime and user code, built for the default x86-64 target, libm)
/// then pays a false dependency on every instruction: libm's `tanhf` after a product
/// ran 5x slower (elman's step: 193 ms against 108 ms for the whole loop, AMD EPYC Zen 4).
/// Costs a few cycles per product. Public for code that calls faer itself (the
/// hand-written baselines of scan-bench).
#[inline]
pub fn clear_upper_state() {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx")]
        unsafe fn zero_upper() {
            std::arch::x86_64::_mm256_zeroupper();
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above), all `vzeroupper` needs.
            unsafe { zero_upper() }
        }
    }
}

/// `a · b` for two vectors of the same length.
#[inline]
pub fn dot_vv<T: Number>(a: ArrayView1<'_, T>, b: ArrayView1<'_, T>, what: &str) -> Result<T> {
    if a.len() != b.len() {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    Ok(dot1(a, b))
}

/// `out = a · b` for a vector `a` of length `k` and a `(k, n)` matrix `b`.
#[inline]
pub fn dot_vm<'o, T: Number>(
    out: impl Destination<'o, T, Ix1>,
    a: ArrayView1<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let (k, n) = b.dim();
    if a.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    let out = out.prepare(Ix1(n), what)?;
    T::gemm(out.insert_axis(Axis(0)), a.insert_axis(Axis(0)), b, what)
}

/// `out = a · b` for an `(m, k)` matrix `a` and a vector `b` of length `k`.
#[inline(always)]
pub fn dot_mv<'o, T: Number>(
    out: impl Destination<'o, T, Ix1>,
    a: ArrayView2<'_, T>,
    b: ArrayView1<'_, T>,
    what: &str,
) -> Result<()> {
    let (m, k) = a.dim();
    if b.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    let out = out.prepare(Ix1(m), what)?.insert_axis(Axis(1));
    let b = b.insert_axis(Axis(1));
    gemm_checked(out, a, b, what)
}

/// `out = a · b` for an `(m, k)` matrix `a` and a `(k, n)` matrix `b`.
#[inline(always)]
pub fn dot_mm<'o, T: Number>(
    out: impl Destination<'o, T, Ix2>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    let out = out.prepare(Ix2(m, n), what)?;
    gemm_checked(out, a, b, what)
}

/// `out = c + a · b` (`c - a · b` when `subtract`) for an `(m, k)` matrix `a` and a
/// `(k, n)` matrix `b`: the product accumulated onto `c` (BLAS's gemm with beta = 1), with
/// no buffer for the product and no second pass over it (the gemm rewrite's `Op::DotAdd`).
/// `c` is broadcast as numpy's `c + dot(a, b)` broadcasts; when the sum is larger than the
/// product (`c` of shape `(m, n)` beside a product of one row), the product is made first
/// and added, as the two operations would.
#[inline(always)]
pub fn dot_add_mm<'o, T: Number, Dc: Dimension>(
    out: impl Destination<'o, T, Ix2>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    // The usual case, an addend of the product's shape: straight to the kernels.
    if let Ok(c) = c.view().into_dimensionality::<Ix2>() {
        if c.dim() == (m, n) {
            let out = out.prepare(Ix2(m, n), what)?;
            return gemm_add_to_checked(out, c, a, b, subtract, what);
        }
    }
    dot_add_mm_broadcast(out, c, a, b, subtract, what)
}

/// [`dot_add_mm`] with `c` broadcast, out of line (see [`gemm_general`]).
#[inline(never)]
fn dot_add_mm_broadcast<'o, T: Number, Dc: Dimension>(
    out: impl Destination<'o, T, Ix2>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let (m, n) = (a.nrows(), b.ncols());
    if sum_is_larger(&c, Ix2(m, n), what)? {
        return product_then_add(out, c, (a, b), subtract, what);
    }
    accumulate(out.prepare(Ix2(m, n), what)?, c, a, b, subtract, what)
}

/// `out = a · b`, shapes checked: the tiny kernels if they take it, else the general
/// path out of line.
#[inline(always)]
fn gemm_checked<T: Number>(
    mut out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    if T::try_tiny(&mut out, a, b, Into::Replace) {
        return Ok(());
    }
    gemm_general(out, a, b, what)
}

/// `out = c ± a · b`, `c` of the product's shape, shapes checked: as [`gemm_checked`].
#[inline(always)]
fn gemm_add_to_checked<T: Number>(
    mut out: ArrayViewMut2<'_, T>,
    c: ArrayView2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    if T::try_tiny(&mut out, a, b, Into::AddTo(c, alpha_of::<T>(subtract))) {
        return Ok(());
    }
    gemm_add_to_general(out, c, a, b, subtract, what)
}

/// The product of a dot kernel that the tiny kernels declined (a larger product, or a
/// CPU without AVX2), out of line: inlined at every product of a step, with the
/// backend's entry, it was most of the step's code, and the hot paths of a step of small
/// products spread over more of the instruction cache (a Kalman step's function 55 KB).
#[inline(never)]
fn gemm_general<T: Number>(
    out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    T::gemm(out, a, b, what)
}

/// [`gemm_general`] of a dot-add, its addend of the product's shape.
#[inline(never)]
fn gemm_add_to_general<T: Number>(
    out: ArrayViewMut2<'_, T>,
    c: ArrayView2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    T::gemm_add_to(out, c, a, b, subtract, what)
}

/// The factor of a dot-add's product: -1 for `c - a · b`, else 1.
#[inline(always)]
fn alpha_of<T: Number>(subtract: bool) -> T {
    if subtract {
        T::ONE.num_neg()
    } else {
        T::ONE
    }
}

/// [`dot_add_mm`] with `c` a buffer of its own that nothing reads afterwards (the emitter's
/// addend read by the dot-add alone): when `c` has the product's shape it is taken over,
/// swapped with `out`, and the product accumulated onto it in place (BLAS's beta = 1), so
/// the sum needs no second buffer and `c` no copy (a sum of products before a loop,
/// `dot(u[4..], w_1) + dot(u[..-4], w_2)`, fills one buffer). After the call `c` holds
/// `out`'s previous buffer, ready for the addend's next value. Otherwise (`c` broadcast)
/// exactly [`dot_add_mm`]. The same errors as [`dot_add_mm`].
#[inline]
pub fn dot_add_mm_onto<T: Number>(
    out: &mut Array2<T>,
    c: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    if c.dim() != (m, n) {
        return dot_add_mm(out, c.view(), a, b, subtract, what);
    }
    std::mem::swap(out, c);
    T::gemm_add(out.view_mut(), a, b, subtract, what)
}

/// `out = c ± a · b` for an `(m, k)` matrix `a` and a vector `b` of length `k` (see
/// [`dot_add_mm`]).
#[inline(always)]
pub fn dot_add_mv<'o, T: Number, Dc: Dimension>(
    out: impl Destination<'o, T, Ix1>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView1<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let (m, k) = a.dim();
    if b.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    // The usual case, an addend of the product's shape: straight to the kernels.
    if let Ok(c) = c.view().into_dimensionality::<Ix1>() {
        if c.len() == m {
            let out = out.prepare(Ix1(m), what)?.insert_axis(Axis(1));
            let (b, c) = (b.insert_axis(Axis(1)), c.insert_axis(Axis(1)));
            return gemm_add_to_checked(out, c, a, b, subtract, what);
        }
    }
    dot_add_mv_broadcast(out, c, a, b, subtract, what)
}

/// [`dot_add_mv`] with `c` broadcast, out of line (see [`gemm_general`]).
#[inline(never)]
fn dot_add_mv_broadcast<'o, T: Number, Dc: Dimension>(
    out: impl Destination<'o, T, Ix1>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView1<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let m = a.nrows();
    if sum_is_larger(&c, Ix1(m), what)? {
        return product_then_add(out, c, (a, b), subtract, what);
    }
    // A one-column product: c's one axis (or none) is the rows'.
    let rows = Axis(c.ndim());
    let column = c.insert_axis(rows);
    let o = out.prepare(Ix1(m), what)?.insert_axis(Axis(1));
    accumulate(o, column, a, b.insert_axis(Axis(1)), subtract, what)
}

/// `out = c ± a · b` for a vector `a` of length `k` and a `(k, n)` matrix `b` (see
/// [`dot_add_mm`]).
#[inline]
pub fn dot_add_vm<'o, T: Number, Dc: Dimension>(
    out: impl Destination<'o, T, Ix1>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView1<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let (k, n) = b.dim();
    if a.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    if sum_is_larger(&c, Ix1(n), what)? {
        return product_then_add(out, c, (a, b), subtract, what);
    }
    let o = out.prepare(Ix1(n), what)?.insert_axis(Axis(0));
    accumulate(o, c, a.insert_axis(Axis(0)), b, subtract, what)
}

/// Whether `c ± product`, the product of shape `dim`, is larger than the product (a
/// length-1 axis of the product broadcast to `c`'s length): then the product is made first
/// and added ([`product_then_add`]), as the two operations would. `Err(Broadcast)` when
/// the shapes do not broadcast.
#[inline(always)]
fn sum_is_larger<T, D: Dimension, Dc: Dimension>(
    c: &ArrayView<'_, T, Dc>,
    dim: D,
    what: &str,
) -> Result<bool> {
    if same_dims(c.shape(), dim.slice()) {
        return Ok(false);
    }
    broadcast_is_larger(c.raw_dim(), dim, what)
}

/// [`sum_is_larger`] for shapes that differ, out of line, the shapes by value (see
/// [`dot_error`]).
#[inline(never)]
fn broadcast_is_larger<D: Dimension, Dc: Dimension>(c: Dc, dim: D, what: &str) -> Result<bool> {
    let shape: D = broadcast_shape(what, &[c.slice(), dim.slice()])?;
    Ok(shape != dim)
}

/// The two operands of a product whose result is a matrix or a vector (`Dim`): what a
/// dot-add makes separately ([`product_then_add`]).
trait Operands<T: Number> {
    type Dim: Dimension;
    fn product_into(self, out: &mut Array<T, Self::Dim>, what: &str) -> Result<()>;
}

impl<T: Number> Operands<T> for (ArrayView2<'_, T>, ArrayView2<'_, T>) {
    type Dim = Ix2;
    fn product_into(self, out: &mut Array2<T>, what: &str) -> Result<()> {
        dot_mm(out, self.0, self.1, what)
    }
}

impl<T: Number> Operands<T> for (ArrayView2<'_, T>, ArrayView1<'_, T>) {
    type Dim = Ix1;
    fn product_into(self, out: &mut Array1<T>, what: &str) -> Result<()> {
        dot_mv(out, self.0, self.1, what)
    }
}

impl<T: Number> Operands<T> for (ArrayView1<'_, T>, ArrayView2<'_, T>) {
    type Dim = Ix1;
    fn product_into(self, out: &mut Array1<T>, what: &str) -> Result<()> {
        dot_vm(out, self.0, self.1, what)
    }
}

/// `out = c ± a · b` when the sum is larger than the product: the product made into a
/// buffer of its own, then added. Out of line, the operands by value (see [`dot_error`]).
#[inline(never)]
fn product_then_add<'o, T: Number, P: Operands<T>, Dc: Dimension>(
    out: impl Destination<'o, T, P::Dim>,
    c: ArrayView<'_, T, Dc>,
    operands: P,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let mut product = Array::default(P::Dim::default());
    operands.product_into(&mut product, what)?;
    add_or_subtract(out, c, product.view(), subtract, what)
}

/// `out = c ± a · b` with `out` of the product's shape, which `c` broadcasts to.
#[inline(always)]
pub(crate) fn accumulate<T: Number, Dc: Dimension>(
    out: ArrayViewMut2<'_, T>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    // An addend of the product's own shape (the usual case) needs no broadcast view.
    if let Ok(c) = c.view().into_dimensionality::<Ix2>() {
        if c.dim() == out.dim() {
            return T::gemm_add_to(out, c, a, b, subtract, what);
        }
    }
    accumulate_broadcast(out, c, a, b, subtract, what)
}

/// [`accumulate`] with `c` broadcast: out of line, as it takes `c`'s address (see
/// `dot_error`).
#[inline(never)]
fn accumulate_broadcast<T: Number, Dc: Dimension>(
    out: ArrayViewMut2<'_, T>,
    c: ArrayView<'_, T, Dc>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    let Some(c) = c.broadcast(out.raw_dim()) else {
        return Err(Error::Broadcast {
            what: what.to_string(),
            shapes: vec![c.shape().to_vec(), out.shape().to_vec()],
        });
    };
    T::gemm_add_to(out, c, a, b, subtract, what)
}

/// `out = c`, `c` already broadcast to `out`'s shape: the addend of a dot-add, copied before
/// the product is added to it.
#[inline]
pub(crate) fn copy_addend<T: Copy, D: Dimension>(
    out: &mut ArrayViewMut<'_, T, D>,
    c: ArrayView<'_, T, D>,
) {
    match (out.as_slice_mut(), c.as_slice()) {
        // `assign` goes element by element: as much as a small product costs.
        (Some(o), Some(c)) if o.len() == c.len() => copy_elems(o, c),
        _ => out.assign(&c),
    }
}

/// `out = c ± product` elementwise with broadcasting: the sum when it is larger than the
/// product.
fn add_or_subtract<'o, T: Number, D: Dimension, Dc: Dimension, Dp: Dimension>(
    out: impl Destination<'o, T, D>,
    c: ArrayView<'_, T, Dc>,
    product: ArrayView<'_, T, Dp>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    super::elementwise::map2(out, c, product, what, |x: T, y: T| {
        if subtract {
            x.num_sub(y)
        } else {
            x.num_add(y)
        }
    })
}

/// `out = a · b` for a stack of matrices `a` of shape `(t, m, k)` and a `(k, n)` matrix
/// `b` (numpy's `dot` over `a`'s last axis): one `(t*m, k) · (k, n)` product when `a` is
/// contiguous, so a whole sequence's input projection is a single large GEMM.
pub fn dot_stack_m<T: Number>(
    out: &mut Array3<T>,
    a: ArrayView3<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((t, m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    try_ensure_shape(what, out, Ix3(t, m, n))?;
    stack_product(out.view_mut(), a, b, what)
}

/// `out[i] = a[i] · b` for a stack `a` `(t, m, k)`, `out` `(t, m, n)` (shapes checked by
/// the caller): one `(t*m, k) · (k, n)` product when the stack's matrices merge into one
/// (contiguous `a` and `out`), else one product per matrix.
fn stack_product<T: Number>(
    mut out: ArrayViewMut3<'_, T>,
    a: ArrayView3<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((t, m, k), n) = (a.dim(), b.ncols());
    if a.is_standard_layout() {
        if let (Ok(a2), Ok(o2)) = (
            a.into_shape_with_order((t * m, k)),
            out.view_mut().into_shape_with_order((t * m, n)),
        ) {
            return T::gemm(o2, a2, b, what);
        }
    }
    for (o, a_t) in out.outer_iter_mut().zip(a.outer_iter()) {
        T::gemm(o, a_t, b, what)?;
    }
    Ok(())
}

/// A sequence's product by a matrix computed inside its loop, a chunk of steps at a time
/// ([`project_chunk`]), holds about this many bytes: the chunk stays in the second-level
/// cache until its steps read it, where the whole sequence's product (an LSTM's 33.5 MB)
/// went to memory and came back. Measured on the hand-written LSTM (2-core Intel Xeon,
/// AVX-512): 8 steps of 32 x 2048 f32 (2 MB) 114.5 ms, the whole projection 135.2 ms.
pub const CHUNK_BYTES: usize = 2 << 20;

/// Steps per chunk for the product of the stack `a` (`(t, m, k)`) by `b` (`(k, n)`): rows
/// of `m * n` elements, as many as fit in [`CHUNK_BYTES`], at least one. With the
/// matrixmultiply backend, which allocates its packing buffer on every product, all of
/// `a`'s steps: one product per call, as before chunks (no allocation per step).
pub fn chunk_steps<T>(a: ArrayView3<'_, T>, b: ArrayView2<'_, T>) -> usize {
    if GEMM_BACKEND == "matrixmultiply" {
        return a.shape()[0].max(1);
    }
    let row = a.shape()[1] * b.shape()[1] * std::mem::size_of::<T>();
    (CHUNK_BYTES / row.max(1)).max(1)
}

/// The shape check of [`dot_stack_m`], made before a loop that computes the product chunk
/// by chunk ([`project_chunk`]), so that a mismatch is reported as it would be for the
/// whole product, also when the loop runs no step.
pub fn check_dot_stack<T>(a: ArrayView3<'_, T>, b: ArrayView2<'_, T>, what: &str) -> Result<()> {
    if a.shape()[2] != b.shape()[0] {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    Ok(())
}

/// Rows `start .. start + chunk` of `a · b` (fewer at the end of `a`) into the first rows of
/// `out`, which keeps `chunk` rows: [`dot_stack_m`] of a chunk of steps, made inside the
/// loop that reads them (shapes checked by [`check_dot_stack`] before it).
pub fn project_chunk<T: Number>(
    out: &mut Array3<T>,
    a: ArrayView3<'_, T>,
    b: ArrayView2<'_, T>,
    start: usize,
    chunk: usize,
    what: &str,
) -> Result<()> {
    let ((t, m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    let end = start.saturating_add(chunk).min(t);
    let rows = end.saturating_sub(start);
    try_ensure_shape(what, out, Ix3(chunk, m, n))?;
    let a = a.slice_axis(Axis(0), ndarray::Slice::from(start.min(end)..end));
    stack_product(
        out.slice_axis_mut(Axis(0), ndarray::Slice::from(0..rows)),
        a,
        b,
        what,
    )
}

/// `out = a · b` for a stack of matrices `a` of shape `(t, m, k)` and a vector `b` of
/// length `k`: every row of every matrix dotted with `b` (one `(t*m, k) · (k, 1)` product
/// when `a` is contiguous).
pub fn dot_stack_v<T: Number>(
    out: &mut Array2<T>,
    a: ArrayView3<'_, T>,
    b: ArrayView1<'_, T>,
    what: &str,
) -> Result<()> {
    let (t, m, k) = a.dim();
    if b.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    try_ensure_shape(what, out, Ix2(t, m))?;
    // Each matrix by b as a one-column matrix.
    let out = out.view_mut().insert_axis(Axis(2));
    stack_product(out, a, b.insert_axis(Axis(1)), what)
}

/// `out = a @ b` (numpy's `matmul`) for stacks of matrices `a` of shape `(na, m, k)` and
/// `b` of shape `(nb, k, p)`: `out[i] = a[i] · b[i]`, `(n, m, p)`, each product through
/// [`Number::gemm`]. The batch sizes are equal or one of them is 1 (that matrix serves
/// every product, numpy's broadcasting); otherwise, or when the inner sizes differ, an
/// `Err(Dot)` naming `what` and both shapes.
pub fn matmul_stacks<T: Number>(
    out: &mut Array3<T>,
    a: ArrayView3<'_, T>,
    b: ArrayView3<'_, T>,
    what: &str,
) -> Result<()> {
    let ((na, m, k), (nb, k2, p)) = (a.dim(), b.dim());
    if k != k2 || !(na == nb || na == 1 || nb == 1) {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    if nb == 1 && na != 1 {
        // One matrix on the right: the stack's product by it (one GEMM when contiguous).
        return dot_stack_m(out, a, b.index_axis_move(Axis(0), 0), what);
    }
    let n = if na == 1 { nb } else { na };
    try_ensure_shape(what, out, Ix3(n, m, p))?;
    for (i, o) in out.outer_iter_mut().enumerate() {
        let a_i = a.index_axis(Axis(0), if na == 1 { 0 } else { i });
        T::gemm(o, a_i, b.index_axis(Axis(0), i), what)?;
    }
    Ok(())
}

/// `out = a @ b` (numpy's `matmul`) for a matrix `a` `(m, k)` and a stack of matrices `b`
/// `(n, k, p)`: the matrix times each of the stack's, `(n, m, p)`. Inner sizes that differ
/// are an `Err(Dot)` naming `what` and both shapes.
pub fn matmul_matrix_stack<T: Number>(
    out: &mut Array3<T>,
    a: ArrayView2<'_, T>,
    b: ArrayView3<'_, T>,
    what: &str,
) -> Result<()> {
    let ((m, k), (n, k2, p)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    try_ensure_shape(what, out, Ix3(n, m, p))?;
    for (o, b_i) in out.outer_iter_mut().zip(b.outer_iter()) {
        T::gemm(o, a, b_i, what)?;
    }
    Ok(())
}

/// `out = a @ b` (numpy's `matmul`) for a vector `a` of length `k` and a stack of matrices
/// `b` `(n, k, p)`: the vector times each matrix, `(n, p)` (numpy promotes the vector to a
/// row and removes that axis). Inner sizes that differ are an `Err(Dot)` naming `what` and
/// both shapes.
pub fn matmul_vector_stack<T: Number>(
    out: &mut Array2<T>,
    a: ArrayView1<'_, T>,
    b: ArrayView3<'_, T>,
    what: &str,
) -> Result<()> {
    let (n, k, p) = b.dim();
    if a.len() != k {
        return Err(dot_error(what, a.raw_dim(), b.raw_dim()));
    }
    try_ensure_shape(what, out, Ix2(n, p))?;
    let row = a.insert_axis(Axis(0));
    for (o, b_i) in out.outer_iter_mut().zip(b.outer_iter()) {
        T::gemm(o.insert_axis(Axis(0)), row, b_i, what)?;
    }
    Ok(())
}

/// How [`dot_sum`] names things in errors, as the loop it replaces named them: the product
/// `p_t · q_t`, the accumulator (its initial state, in backticks) and its step expression.
#[derive(Clone, Copy, Debug)]
pub struct DotSumText<'a> {
    pub product: &'a str,
    pub output: &'a str,
    pub result: &'a str,
}

/// The buffers [`dot_sum`] reuses from one call to the next (allocated on the first call,
/// again only when the shapes change).
#[derive(Debug, Default)]
pub struct DotSumScratch<T> {
    /// The sum, when it is broadcast to the initial value's shape.
    sum: Array2<T>,
    /// A chunk of steps of `p`, of `q`, copied when that stack's steps do not merge.
    packed: [Array3<T>; 2],
}

/// The last row of the accumulation `acc_t = acc_{t-1} + p_t · q_t` from `acc_0 = init`
/// (push_out_dot's `Op::DotSum`): `out = [init + Σ_t p_t · q_t]`, a stack of one row of
/// `init`'s shape, or of no row (`[0, init's shape]`) when the stacks `p` `(T, m, k)` and
/// `q` `(T, k, n)` are empty: what the accumulating scan's output held at its last row.
///
/// The sum is ONE product when the steps merge with the inner axis in both stacks (`p`'s
/// step stride is `k` times its column stride and `q`'s is `k` times its row stride: `p`
/// is then an `(m, T*k)` view, `q` a `(T*k, n)` one, no copy; true of the transposed rows
/// of a contiguous `(T, k, m)` sequence, `x_t.t()`, and of a contiguous trace, also both
/// read backwards); otherwise one product per chunk of steps, the stack that does not
/// merge (a sequence read backwards beside a trace) copied chunk by chunk into a buffer
/// reused from call to call. Integers wrap.
///
/// Errors, as the loop's first step gave them: `Err(Dot)` naming the product and the
/// shapes of `p_t` and `q_t` when the inner sizes differ, `Err(Broadcast)` naming the
/// step expression when the sum and `init` do not broadcast, `Err(StepResultShape)` when
/// they broadcast to a shape other than `init`'s.
pub fn dot_sum<T: Number>(
    out: &mut Array3<T>,
    init: ArrayView2<'_, T>,
    p: ArrayView3<'_, T>,
    q: ArrayView3<'_, T>,
    scratch: &mut DotSumScratch<T>,
    text: DotSumText<'_>,
) -> Result<()> {
    let ((steps, m, k), (steps_q, k2, n)) = (p.dim(), q.dim());
    if steps != steps_q {
        return Err(Error::InvalidArgument {
            what: text.product.to_string(),
            detail: format!(
                "stacks of shapes {:?} and {:?} hold different numbers of steps",
                p.shape(),
                q.shape()
            ),
        });
    }
    let (rows, cols) = init.dim();
    if steps == 0 {
        ensure_shape(out, Ix3(0, rows, cols));
        return Ok(());
    }
    if k != k2 {
        return Err(dot_error(text.product, Ix2(m, k), Ix2(k2, n)));
    }
    let shape: Ix2 = crate::kernels::broadcast_shape(text.result, &[init.shape(), &[m, n]])?;
    crate::kernels::check_step_shape(
        text.output,
        text.result,
        init.shape(),
        &[shape[0], shape[1]],
    )?;
    ensure_shape(out, Ix3(1, rows, cols));
    let mut row = out.index_axis_mut(Axis(0), 0);
    if (m, n) == (rows, cols) {
        sum_of_products(row.view_mut(), p, q, &mut scratch.packed, text.product)?;
        Zip::from(&mut row)
            .and(&init)
            .for_each(|o, &a| *o = a.num_add(*o));
    } else {
        ensure_shape(&mut scratch.sum, Ix2(m, n));
        sum_of_products(
            scratch.sum.view_mut(),
            p,
            q,
            &mut scratch.packed,
            text.product,
        )?;
        // Broadcasts: checked above.
        let sum = scratch
            .sum
            .broadcast((rows, cols))
            .ok_or_else(|| Error::Broadcast {
                what: text.result.to_string(),
                shapes: vec![vec![rows, cols], vec![m, n]],
            })?;
        Zip::from(&mut row)
            .and(&init)
            .and(&sum)
            .for_each(|o, &a, &s| *o = a.num_add(s));
    }
    Ok(())
}

/// The inner length of the product of a chunk of steps that [`sum_of_products`] copies:
/// long enough for a product about as efficient as one over all the steps (a GEMM adds
/// its inner axis in blocks of a few hundred anyway), while the copy stays in cache.
const CHUNK_INNER: usize = 1024;

/// At most this many elements of a stack copied per chunk (4 MB of f32).
const CHUNK_ELEMENTS: usize = 1 << 20;

/// `out = Σ_t p[t] · q[t]` for stacks of at least one matrix, inner sizes checked: one
/// product of the merged views when both merge, else one per chunk of steps, added.
fn sum_of_products<T: Number>(
    mut out: ArrayViewMut2<'_, T>,
    mut p: ArrayView3<'_, T>,
    mut q: ArrayView3<'_, T>,
    packed: &mut [Array3<T>; 2],
    what: &str,
) -> Result<()> {
    let ((steps, m, k), n) = (p.dim(), q.dim().2);
    if k == 0 {
        // No product has a term (and merged, the steps would leave no row to view).
        out.fill(T::ZERO);
        return Ok(());
    }
    // The sum over the steps in the other order is the same sum, so both stacks are read
    // backwards when both run backwards (sequences of a loop going backwards), and when
    // only that makes the right stack merge (the adjoints a backward loop stacked beside
    // a forward trace or sequence): then only the left one is copied, into the row-major
    // order that a large faer product would copy a column-major left operand into anyway
    // (`with_row_major_left`), so one copy replaces the other.
    let both_backwards = |p: &mut ArrayView3<'_, T>, q: &mut ArrayView3<'_, T>| {
        p.invert_axis(Axis(0));
        q.invert_axis(Axis(0));
    };
    if p.stride_of(Axis(0)) < 0 && q.stride_of(Axis(0)) < 0 {
        both_backwards(&mut p, &mut q);
    }
    let mut q_backwards = q;
    q_backwards.invert_axis(Axis(0));
    if merge_steps(q, Axis(1)).is_none() && merge_steps(q_backwards, Axis(1)).is_some() {
        both_backwards(&mut p, &mut q);
    }
    if let (Some(p2), Some(q2)) = (merge_steps(p, Axis(2)), merge_steps(q, Axis(1))) {
        return T::gemm(out, p2, q2, what);
    }
    // The elements of a step copied: of the stacks that do not merge.
    let copied = [
        (merge_steps(p, Axis(2)).is_none(), m * k),
        (merge_steps(q, Axis(1)).is_none(), k * n),
    ]
    .iter()
    .filter(|(copy, _)| *copy)
    .map(|&(_, size)| size)
    .max()
    .unwrap_or(0);
    let chunk = CHUNK_INNER
        .div_ceil(k)
        .min(CHUNK_ELEMENTS / copied.max(1))
        .clamp(1, steps.max(1));
    let [p_buf, q_buf] = packed;
    out.fill(T::ZERO);
    for start in (0..steps).step_by(chunk) {
        let steps = ndarray::Slice::from(start..steps.min(start + chunk));
        let p2 = merged(p.slice_axis(Axis(0), steps), Axis(2), chunk, p_buf, what)?;
        let q2 = merged(q.slice_axis(Axis(0), steps), Axis(1), chunk, q_buf, what)?;
        T::gemm_add(out.view_mut(), p2, q2, false, what)?;
    }
    Ok(())
}

/// A chunk of steps as one matrix with its steps merged into axis `inner` (as
/// [`merge_steps`]): a view when its strides allow, else a copy in `buf` (room for
/// `capacity` steps, so that a shorter last chunk does not reallocate), laid out so that
/// they do and so that the copy follows the chunk's faster axis through memory.
fn merged<'a, T: Number>(
    chunk: ArrayView3<'a, T>,
    inner: Axis,
    capacity: usize,
    buf: &'a mut Array3<T>,
    what: &str,
) -> Result<ArrayView2<'a, T>> {
    if let Some(view) = merge_steps(chunk, inner) {
        return Ok(view);
    }
    let outer = Axis(3 - inner.index());
    let (steps, d_inner, d_outer) = (
        chunk.len_of(Axis(0)),
        chunk.len_of(inner),
        chunk.len_of(outer),
    );
    let room = capacity.max(steps);
    // The axes of `buf` (steps, inner, outer) or (outer, steps, inner), row-major; `axes`
    // puts them back in the chunk's order. A left operand (`inner` 2) is always copied
    // into rows (outer, steps, inner): a row-major matrix, which a faer product reads at
    // its rate (it would copy a column-major one again).
    let outer_faster = inner.index() == 1
        && chunk.stride_of(outer).unsigned_abs() <= chunk.stride_of(inner).unsigned_abs();
    let (shape, axes) = match (outer_faster, inner.index()) {
        (true, _) => (Ix3(room, d_inner, d_outer), [0, 1, 2]),
        (false, 2) => (Ix3(d_outer, room, d_inner), [1, 0, 2]),
        (false, _) => (Ix3(d_outer, room, d_inner), [1, 2, 0]),
    };
    ensure_shape(buf, shape);
    let first = ndarray::Slice::from(0..steps);
    match (inner.index(), buf.as_slice_mut()) {
        // The rows of the left operand: blocked, on two threads when large.
        (2, Some(dst)) => copy_rows(dst, room * d_inner, chunk),
        _ => {
            let mut rows = buf.view_mut().permuted_axes(axes);
            rows.slice_axis_inplace(Axis(0), first);
            // Step by step: each step's matrix then has one layout on both sides
            // (contiguous, in either order), which ndarray copies as one run of memory.
            for (mut to, from) in rows.outer_iter_mut().zip(chunk.outer_iter()) {
                to.assign(&from);
            }
        }
    }
    let rows = buf
        .view()
        .permuted_axes(axes)
        .slice_axis_move(Axis(0), first);
    merge_steps(rows, inner).ok_or_else(|| Error::InvalidArgument {
        what: what.to_string(),
        detail: "a copied chunk of steps does not merge into one matrix".to_string(),
    })
}

/// A stack `(T, a, b)` as one matrix with its steps merged into axis `inner` (1 or 2),
/// steps outer: `(T*a, b)` for `inner = 1`, `(a, T*b)` for `inner = 2`. `None` when the
/// strides do not allow it without a copy.
fn merge_steps<T>(mut stack: ArrayView3<'_, T>, inner: Axis) -> Option<ArrayView2<'_, T>> {
    stack
        .merge_axes(Axis(0), inner)
        .then(|| stack.index_axis_move(Axis(0), 0))
}

/// `Err(Dot)` for operands of shapes `left` and `right`. The shapes come by value: a call
/// out of line that is given `view.shape()` takes the view's address, and that keeps the
/// view in memory in the caller, where it is copied by vector moves that stall on the
/// stores just made (measured in a Kalman step of 4 x 4 products).
#[cold]
#[inline(never)]
fn dot_error<L: Dimension, R: Dimension>(what: &str, left: L, right: R) -> Error {
    Error::Dot {
        what: what.to_string(),
        left: left.slice().to_vec(),
        right: right.slice().to_vec(),
    }
}

/// Checks the shapes a gemm entry gets (it is public through `Number::gemm`): the
/// comparisons inlined, the error made out of line.
#[inline(always)]
fn check_gemm<T>(
    out: &ArrayViewMut2<'_, T>,
    a: &ArrayView2<'_, T>,
    b: &ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 || out.dim() != (m, n) {
        return Err(gemm_error(out.raw_dim(), a.raw_dim(), b.raw_dim(), what));
    }
    Ok(())
}

/// [`check_gemm`]'s error.
#[cold]
#[inline(never)]
fn gemm_error(out: Ix2, a: Ix2, b: Ix2, what: &str) -> Error {
    if a[1] != b[0] {
        return dot_error(what, a, b);
    }
    Error::ShapeMismatch {
        what: format!("output of {what}"),
        expected: vec![a[0], b[1]],
        found: out.slice().to_vec(),
    }
}

/// The direct matrix product: each output row is `a.row(i) · b`, or with one output
/// column, `a · b.column(0)`.
pub(crate) fn gemm_loop<T: Number>(
    out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    loop_into(out, a, b);
    Ok(())
}

/// The direct matrix product accumulated: `out ±= a · b` (`subtract`), each element's
/// sum made first and then added, as `c + dot(a, b)` adds.
pub(crate) fn gemm_loop_add<T: Number>(
    out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    loop_add(out, a, b, subtract);
    Ok(())
}

/// [`gemm_loop_add`] with the shapes already checked.
fn loop_add<T: Number>(
    mut out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
) {
    Zip::from(out.rows_mut())
        .and(a.rows())
        .for_each(|o, a_row| {
            Zip::from(o).and(b.columns()).for_each(|o, col| {
                let p = dot1(a_row, col);
                *o = if subtract { o.num_sub(p) } else { o.num_add(p) };
            })
        });
}

/// The float entry of [`Number::gemm_add`]: shapes checked, empty products settled (an
/// empty sum adds nothing), then the backend.
#[inline(always)]
pub(crate) fn gemm_add_float<T: backend::Float + Tiny>(
    mut out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    let ((m, k), n) = (a.dim(), b.ncols());
    if m == 0 || n == 0 || k == 0 {
        return Ok(());
    }
    let alpha = if subtract { T::ONE.num_neg() } else { T::ONE };
    if T::tiny_product(&mut out, a, b, Into::Add(alpha)) {
        return Ok(());
    }
    backend::gemm_add(out, a, b, subtract);
    Ok(())
}

/// The float entry of [`Number::gemm_add_to`]: a tiny product reads `c` in place; any other
/// copies it into `out` and accumulates the product onto it.
#[inline(always)]
pub(crate) fn gemm_add_to_float<T: backend::Float + Tiny>(
    mut out: ArrayViewMut2<'_, T>,
    c: ArrayView2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    subtract: bool,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    let alpha = if subtract { T::ONE.num_neg() } else { T::ONE };
    if c.dim() == out.dim() && T::tiny_product(&mut out, a, b, Into::AddTo(c, alpha)) {
        return Ok(());
    }
    copy_addend(&mut out, c);
    gemm_add_float(out, a, b, subtract, what)
}

/// [`gemm_loop`] with the shapes already checked.
fn loop_into<T: Number>(mut out: ArrayViewMut2<'_, T>, a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) {
    if b.ncols() == 1 && out.nrows() > 1 {
        mv_into(out.column_mut(0), a, b.column(0));
    } else {
        Zip::from(out.rows_mut())
            .and(a.rows())
            .for_each(|o, a_row| vm_into(o, a_row, b));
    }
}

/// The float entry of [`Number::gemm`]: shapes checked, empty products settled, then the
/// backend.
#[inline(always)]
pub(crate) fn gemm_float<T: backend::Float + Tiny>(
    mut out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    let ((m, k), n) = (a.dim(), b.ncols());
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        // An empty sum: no backend is called with a zero-size operand.
        out.fill(T::ZERO);
        return Ok(());
    }
    if T::tiny_product(&mut out, a, b, Into::Replace) {
        return Ok(());
    }
    backend::gemm(out, a, b);
    Ok(())
}

/// `dst` (`m * k` elements) = `a` (`m x k`) in row-major order: a column-major `a` is read
/// in blocks that keep the cache and the TLB warm, and a large copy (from 256 K elements)
/// is made in two halves of the rows on two threads when two are allowed. The faer
/// backend copies a column-major left operand this way; scan-bench's hand-written loops
/// too.
///
/// # Panics
/// When `dst` does not hold exactly `m * k` elements.
pub fn transpose_into<T: Copy + Send + Sync>(dst: &mut [T], a: ArrayView2<'_, T>) {
    let (m, k) = a.dim();
    assert_eq!(
        dst.len(),
        m * k,
        "transpose_into: {m} x {k} into {} elements",
        dst.len()
    );
    copy_rows(dst, k, a.insert_axis(Axis(0)));
}

/// Rows of a copy split over two threads from this many elements on (1 MB of f32): a
/// smaller copy takes less time than a split costs.
const COPY_SPLIT_MIN_ELEMENTS: usize = 1 << 18;

/// Row `i` of step `s` of `a` (`steps x m x k`) into `dst[i * stride + s * k..][..k]`,
/// `stride >= steps * k`: each step's rows side by side, the steps merged into the rows
/// of one row-major `m x steps * k` matrix ([`copy_rows_here`] step by step). The rows
/// are copied in two halves on two threads when the copy is large (the copies before a
/// weight gradient's product ran on one thread while faer's threads waited).
fn copy_rows<T: Copy + Send + Sync>(dst: &mut [T], stride: usize, a: ArrayView3<'_, T>) {
    let (steps, m, k) = a.dim();
    let mid = (m / 2).next_multiple_of(COPY_ROWS);
    let here = |dst: &mut [T], a: ArrayView3<'_, T>| {
        for (s, step) in a.outer_iter().enumerate() {
            copy_rows_here(&mut dst[s * k..], stride, step);
        }
    };
    if steps * m * k < COPY_SPLIT_MIN_ELEMENTS || mid >= m || crate::threads::num_threads() < 2 {
        return here(dst, a);
    }
    let (first, second) = dst.split_at_mut(mid * stride);
    let (top, bottom) = a.split_at(Axis(1), mid);
    crate::threads::spin::join(|| here(first, top), || here(second, bottom));
}

/// Rows a copy writes at a time ([`copy_rows_here`]).
const COPY_ROWS: usize = 8;
/// Columns of a column-major matrix a copy reads at a time ([`copy_rows_here`]).
const COPY_COLS: usize = 256;

/// Row `i` of `a` (`m x k`) into `dst[i * stride..][..k]`, on this thread. Rows with unit
/// stride are copied as they are; otherwise `a` is read in blocks of `COPY_COLS` columns
/// (their pages stay in the TLB, their lines in the second-level cache), each `COPY_ROWS`
/// rows at a time, column after column, so that `dst` is written as that many sequential
/// runs: more rows of a power-of-two length apart fall in one set of the first-level
/// cache and evict each other. Measured on a 2-core AMD EPYC (Zen 1), 512 x 4096 f32 column-major into
/// row-major: element by element in row order 8 ns an element, tiles of 32 x 32 5.2, rows
/// of 8 over all columns 4.7 (TLB misses), this 1.6 (1.3-1.9 for the other shapes tried;
/// `scan-bench/examples/transpose_probe.rs`).
fn copy_rows_here<T: Copy>(dst: &mut [T], stride: usize, a: ArrayView2<'_, T>) {
    let (m, k) = a.dim();
    if a.strides()[1] == 1 || k == 1 {
        for (i, row) in a.outer_iter().enumerate() {
            let to = &mut dst[i * stride..i * stride + k];
            match row.as_slice() {
                Some(row) => copy_elems(to, row),
                None => to.iter_mut().zip(row).for_each(|(d, &v)| *d = v),
            }
        }
        return;
    }
    for j0 in (0..k).step_by(COPY_COLS) {
        let cols = j0..(j0 + COPY_COLS).min(k);
        for i0 in (0..m).step_by(COPY_ROWS) {
            let rows = i0..(i0 + COPY_ROWS).min(m);
            for j in cols.clone() {
                let column = a.column(j);
                match column.as_slice() {
                    Some(column) => {
                        for (i, &v) in rows.clone().zip(&column[rows.clone()]) {
                            dst[i * stride + j] = v;
                        }
                    }
                    None => {
                        for i in rows.clone() {
                            dst[i * stride + j] = column[i];
                        }
                    }
                }
            }
        }
    }
}

/// faer: everything but small vector·matrix products.
#[cfg(all(feature = "faer", not(feature = "matrixmultiply")))]
mod backend {
    use faer::linalg::matmul::matmul;
    use faer::{Accum, MatMut, MatRef, Par};
    use ndarray::{ArrayView2, ArrayViewMut2, Axis};

    use crate::element::Number;
    use crate::kernels::pool;

    /// The float types faer multiplies.
    pub(crate) trait Float: Number + faer::traits::ComplexField + pool::Scratch {}
    impl Float for f32 {}
    impl Float for f64 {}

    /// Whether `(m, k) · (k, n)` goes through faer rather than the direct loop.
    #[inline]
    pub(super) fn use_faer(m: usize, k: usize, n: usize) -> bool {
        m > 1 || k.saturating_mul(n) >= super::VM_MIN_WORK
    }

    /// The threads for `(m, k) · (k, n)`: more than one only for two matrix operands.
    #[inline]
    pub(super) fn threads(m: usize, k: usize, n: usize) -> usize {
        if m > 1 && n > 1 {
            crate::threads::threads_for(m.saturating_mul(k).saturating_mul(n))
        } else {
            1
        }
    }

    /// Parts are cut at multiples of this many rows or columns (a cache line of f32).
    const SPLIT_ALIGN: usize = 16;

    /// `out = a · b`, shapes checked and every dimension non-zero.
    #[inline]
    pub(super) fn gemm<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        if !use_faer(m, k, n) {
            super::loop_into(out, a, b);
            return;
        }
        with_row_major_left(a, n, |a| parallel(out, a, b, threads(m, k, n), None));
    }

    /// `out ±= a · b`, shapes checked and every dimension non-zero.
    #[inline]
    pub(super) fn gemm_add<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        subtract: bool,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        if !use_faer(m, k, n) {
            super::loop_add(out, a, b, subtract);
            return;
        }
        let alpha = if subtract { T::ONE.num_neg() } else { T::ONE };
        with_row_major_left(a, n, |a| parallel(out, a, b, threads(m, k, n), Some(alpha)));
    }

    /// A product over `threads` threads: by [`split`], or, when its sums are long (`k` at
    /// least twice the output's larger side: a weight gradient, the steps' inputs
    /// transposed times their adjoints), by faer's own parallel product, which shares its
    /// packed blocks between the threads where each part of a split packs its whole shared
    /// operand. Measured on a 2-core AMD EPYC (Zen 1), f32, two threads, split against
    /// faer's (ms): 512 x 4096 x 512 43.2 / 30.3 (one thread: 61.5); 512 x 4096 x 2048
    /// 136.7 / 125.0; elsewhere faer's was 1-3% faster (4096 x 256 x 2048, 1024^3) but
    /// allocates its team's state on every call (9 allocations), which a loop's step
    /// product must not. The same bits either way: both cut the output, never a sum.
    #[inline]
    fn parallel<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        threads: usize,
        add: Option<T>,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        if threads > 1 && k >= m.max(n).saturating_mul(2) {
            faer_gemm(out, a, b, add, Par::rayon(threads));
        } else {
            split(out, a, b, threads, add);
        }
    }

    /// A product copies its left operand into row-major order first
    /// ([`with_row_major_left`]) from this many multiply-adds on...
    const COPY_LEFT_MIN_WORK: usize = 1 << 24;
    /// ... when the right operand has at least this many columns (each copied element is
    /// then read that many times; 128 x 4096 x 128 lost by the copy).
    const COPY_LEFT_MIN_COLS: usize = 256;

    /// `f(a)`, or `f` of a row-major copy of `a` (in this thread's scratch) when `a` is
    /// column-major and the product by `n` columns is large. faer multiplies a
    /// column-major left operand into a row-major output (the weight gradients after a
    /// loop: a trace transposed times the adjoints) far below its rate. Measured on a
    /// 2-core AMD EPYC (Zen 1), f32, one thread, faer alone against copy and faer (GFLOP/s):
    /// 4096 x 512 x 2048 11.0 / 32.7; 4096 x 512 x 512 10.8 / 24.1; 4096 x 256 x 2048 23.3
    /// / 32.7; 512 x 4096 x 2048 28.7 / 33.2; 1024^3 27.0 / 30.2; 512^3 27.6 / 30.1;
    /// 4096 x 64 x 512 25.4 / 29.7; 256 x 4096 x 2048 33.3 / 34.1; 128 x 4096 x 128 31.0 /
    /// 25.7 (`scan-bench/examples/gemm_probe.rs`). The sums are the same products in the
    /// same order, so the results are too.
    #[inline]
    fn with_row_major_left<T: Float, R>(
        a: ArrayView2<'_, T>,
        n: usize,
        f: impl FnOnce(ArrayView2<'_, T>) -> R,
    ) -> R {
        let (m, k) = a.dim();
        let column_major = a.strides()[0] == 1 && a.strides()[1] != 1 && m > 1;
        let work = m.saturating_mul(k).saturating_mul(n);
        if !column_major || work < COPY_LEFT_MIN_WORK || n < COPY_LEFT_MIN_COLS {
            return f(a);
        }
        pool::with_scratch::<T, R>(m * k, |buf| {
            super::transpose_into(buf, a);
            match ArrayView2::from_shape((m, k), &*buf) {
                Ok(copy) => f(copy),
                // Not reached: `buf` holds exactly `m * k` elements.
                Err(_) => f(a),
            }
        })
    }

    /// `out = a · b` over `threads` threads: the larger of the output's two axes cut in two
    /// parts (in the ratio `threads / 2` to the rest, at a multiple of `SPLIT_ALIGN`),
    /// computed by `rayon::join` and each cut again, down to one sequential faer product
    /// per thread on its own part (each thread packs into its own buffer). `rayon::join`
    /// allocates nothing per call (its job lives on the stack) except, from a thread
    /// outside rayon's pool, a block of rayon's queue of injected jobs every 63 calls. A
    /// part narrower than `SPLIT_ALIGN` is not cut.
    ///
    /// (faer's own `Par::rayon(n)` was measured too: no faster at the step shapes, and 9
    /// allocations per call for its team and job flags; [`parallel`] takes it for long
    /// sums only.)
    #[inline]
    pub(super) fn split<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        threads: usize,
        add: Option<T>,
    ) {
        if threads <= 1 {
            faer_gemm(out, a, b, add, Par::Seq);
            return;
        }
        let (m, n) = out.dim();
        let by_rows = m > n;
        let len = if by_rows { m } else { n };
        let first = threads / 2;
        let at = (len as u128 * first as u128 / threads.max(1) as u128) as usize;
        let at = at / SPLIT_ALIGN * SPLIT_ALIGN;
        if at == 0 || at >= len {
            faer_gemm(out, a, b, add, Par::Seq);
            return;
        }
        let rest = threads - first;
        if by_rows {
            let (o1, o2) = out.split_at(Axis(0), at);
            let (a1, a2) = a.split_at(Axis(0), at);
            rayon::join(
                || split(o1, a1, b, first, add),
                || split(o2, a2, b, rest, add),
            );
        } else {
            let (o1, o2) = out.split_at(Axis(1), at);
            let (b1, b2) = b.split_at(Axis(1), at);
            rayon::join(
                || split(o1, a, b1, first, add),
                || split(o2, a, b2, rest, add),
            );
        }
    }

    /// One faer product, `out = a · b` (`add`: `out += add · a · b`), shapes checked, on
    /// this thread (`Par::Seq`) or on rayon's.
    #[inline]
    fn faer_gemm<T: Float>(
        mut out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        add: Option<T>,
        par: Par,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        let (sa, sb, so) = (a.strides(), b.strides(), out.strides());
        let (rsa, csa, rsb, csb, rso, cso) = (sa[0], sa[1], sb[0], sb[1], so[0], so[1]);
        // SAFETY: `a` is m×k, `b` is k×n and `out` is m×n (checked by the caller), so each
        // `from_raw_parts` gets the view's own first element, dimensions and strides: every
        // element faer reaches from the pointer through those strides (negative, zero or
        // stepped) is an element of the view, inside its allocation, and stays borrowed
        // for as long as the faer views live (this function). `out` is a mutable view: its
        // elements do not alias each other (ndarray gives no mutable view with zero or
        // overlapping strides) nor `a` or `b` (a unique borrow beside shared ones).
        // `Accum::Replace` never reads `out`'s previous values; `Accum::Add` reads each
        // element once, through the same view.
        let (a, b, out) = unsafe {
            (
                MatRef::from_raw_parts(a.as_ptr(), m, k, rsa, csa),
                MatRef::from_raw_parts(b.as_ptr(), k, n, rsb, csb),
                MatMut::from_raw_parts_mut(out.as_mut_ptr(), m, n, rso, cso),
            )
        };
        match add {
            None => matmul(out, Accum::Replace, a, b, T::ONE, par),
            Some(alpha) => matmul(out, Accum::Add, a, b, alpha, par),
        }
        super::clear_upper_state();
    }
}

/// matrixmultiply: matrix·matrix products of at least `GEMM_MIN_WORK` multiply-adds.
#[cfg(feature = "matrixmultiply")]
mod backend {
    use ndarray::{ArrayView2, ArrayViewMut2};

    use crate::element::Number;

    /// The float types matrixmultiply multiplies, with their gemm.
    pub(crate) trait Float: Number {
        /// matrixmultiply's `sgemm`/`dgemm`: `c = alpha a b + beta c`.
        ///
        /// # Safety
        /// As `matrixmultiply::dgemm`: `a` (m×k), `b` (k×n) and `c` (m×n) reachable through
        /// their strides, `c` not aliasing itself nor the others.
        #[allow(clippy::too_many_arguments)]
        unsafe fn mm(
            m: usize,
            k: usize,
            n: usize,
            alpha: Self,
            a: *const Self,
            rsa: isize,
            csa: isize,
            b: *const Self,
            rsb: isize,
            csb: isize,
            beta: Self,
            c: *mut Self,
            rsc: isize,
            csc: isize,
        );
    }

    macro_rules! mm_float {
        ($t:ty, $gemm:path) => {
            impl Float for $t {
                #[allow(clippy::too_many_arguments)]
                unsafe fn mm(
                    m: usize,
                    k: usize,
                    n: usize,
                    alpha: Self,
                    a: *const Self,
                    rsa: isize,
                    csa: isize,
                    b: *const Self,
                    rsb: isize,
                    csb: isize,
                    beta: Self,
                    c: *mut Self,
                    rsc: isize,
                    csc: isize,
                ) {
                    // SAFETY: the caller upholds matrixmultiply's contract (see the trait).
                    unsafe { $gemm(m, k, n, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc) }
                }
            }
        };
    }

    mm_float!(f32, matrixmultiply::sgemm);
    mm_float!(f64, matrixmultiply::dgemm);

    /// Whether `(m, k) · (k, n)` is worth matrixmultiply's packing.
    pub(super) fn use_gemm(m: usize, k: usize, n: usize) -> bool {
        m > 1 && n > 1 && m.saturating_mul(k).saturating_mul(n) >= super::GEMM_MIN_WORK
    }

    /// `out = a · b`, shapes checked and every dimension non-zero.
    pub(super) fn gemm<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        if !use_gemm(m, k, n) {
            super::loop_into(out, a, b);
            return;
        }
        product(out, a, b, T::ONE, T::ZERO);
    }

    /// `out ±= a · b`, shapes checked and every dimension non-zero.
    pub(super) fn gemm_add<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        subtract: bool,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        if !use_gemm(m, k, n) {
            super::loop_add(out, a, b, subtract);
            return;
        }
        let alpha = if subtract { T::ONE.num_neg() } else { T::ONE };
        product(out, a, b, alpha, T::ONE);
    }

    /// `out = alpha a · b + beta out` through matrixmultiply.
    fn product<T: Float>(
        mut out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        alpha: T,
        beta: T,
    ) {
        let ((m, k), n) = (a.dim(), b.ncols());
        let (sa, sb, so) = (
            [a.strides()[0], a.strides()[1]],
            [b.strides()[0], b.strides()[1]],
            [out.strides()[0], out.strides()[1]],
        );
        // SAFETY: the shapes were checked by the caller (`a` is m×k, `b` is k×n, `out` is
        // m×n, all dimensions non-zero). Each `as_ptr` is the address of element [0, 0],
        // and ndarray guarantees that every element reached from it through the view's own
        // strides (negative, zero or stepped) lies inside the view's allocation, which is
        // exactly what gemm reads and writes. `out` is a mutable view, so its elements do
        // not alias each other (no zero or overlapping strides) nor `a` or `b` (the borrow
        // checker keeps a unique borrow apart from shared ones). With beta = 0 gemm never
        // reads `out`'s previous values; with beta = 1 it reads each through `out`'s view.
        unsafe {
            T::mm(
                m,
                k,
                n,
                alpha,
                a.as_ptr(),
                sa[0],
                sa[1],
                b.as_ptr(),
                sb[0],
                sb[1],
                beta,
                out.as_mut_ptr(),
                so[0],
                so[1],
            );
        }
    }
}

/// No backend: the direct loops.
#[cfg(not(any(feature = "faer", feature = "matrixmultiply")))]
mod backend {
    use ndarray::{ArrayView2, ArrayViewMut2};

    use crate::element::Number;

    pub(crate) trait Float: Number {}
    impl Float for f32 {}
    impl Float for f64 {}

    /// `out = a · b`, shapes checked.
    pub(super) fn gemm<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
    ) {
        super::loop_into(out, a, b);
    }

    /// `out ±= a · b`, shapes checked.
    pub(super) fn gemm_add<T: Float>(
        out: ArrayViewMut2<'_, T>,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        subtract: bool,
    ) {
        super::loop_add(out, a, b, subtract);
    }
}

/// `out = a · b` (shapes already checked). Picks the loop order that reads `b` along its
/// contiguous axis.
fn vm_into<T: Number>(mut out: ArrayViewMut1<'_, T>, a: ArrayView1<'_, T>, b: ArrayView2<'_, T>) {
    if rows_are_contiguous(&b) {
        // out = Σ_p a[p] · b[p, :]
        out.fill(T::ZERO);
        Zip::from(&a)
            .and(b.rows())
            .for_each(|&x, row| axpy(out.view_mut(), x, row));
    } else {
        // out[j] = a · b[:, j]
        Zip::from(&mut out)
            .and(b.columns())
            .for_each(|o, col| *o = dot1(a, col));
    }
}

/// `out = a · b` (shapes already checked).
fn mv_into<T: Number>(mut out: ArrayViewMut1<'_, T>, a: ArrayView2<'_, T>, b: ArrayView1<'_, T>) {
    if rows_are_contiguous(&a) {
        // out[i] = a[i, :] · b
        Zip::from(&mut out)
            .and(a.rows())
            .for_each(|o, row| *o = dot1(row, b));
    } else {
        // out = Σ_j b[j] · a[:, j]
        out.fill(T::ZERO);
        Zip::from(&b)
            .and(a.columns())
            .for_each(|&x, col| axpy(out.view_mut(), x, col));
    }
}

/// Whether stepping along a row is at least as cache friendly as stepping down a column.
fn rows_are_contiguous<T>(m: &ArrayView2<'_, T>) -> bool {
    let s = m.strides();
    s[1].unsigned_abs() <= s[0].unsigned_abs()
}

/// `a · b` for vectors of equal length (checked by callers).
#[inline]
pub(crate) fn dot1<T: Number>(a: ArrayView1<'_, T>, b: ArrayView1<'_, T>) -> T {
    match (a.as_slice(), b.as_slice()) {
        (Some(x), Some(y)) => dot_slices(x, y),
        _ => Zip::from(&a)
            .and(&b)
            .fold(T::ZERO, |acc, &x, &y| acc.num_add(x.num_mul(y))),
    }
}

/// Dot product of two slices with eight independent accumulators, so the compiler can keep
/// them in vector registers (a single float accumulator forces a serial chain).
#[inline]
fn dot_slices<T: Number>(a: &[T], b: &[T]) -> T {
    if a.len() < 8 {
        // No whole chunk: the same sum in the same order, without the accumulators.
        return a
            .iter()
            .zip(b)
            .fold(T::ZERO, |sum, (&x, &y)| sum.num_add(x.num_mul(y)));
    }
    let mut acc = [T::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, &xi), &yi) in acc.iter_mut().zip(x).zip(y) {
            *s = s.num_add(xi.num_mul(yi));
        }
    }
    let mut sum = (acc[0].num_add(acc[4]).num_add(acc[1].num_add(acc[5])))
        .num_add(acc[2].num_add(acc[6]).num_add(acc[3].num_add(acc[7])));
    for (&x, &y) in ra.iter().zip(rb) {
        sum = sum.num_add(x.num_mul(y));
    }
    sum
}

/// `y += alpha · x` for vectors of equal length.
#[inline]
fn axpy<T: Number>(mut y: ArrayViewMut1<'_, T>, alpha: T, x: ArrayView1<'_, T>) {
    if let (Some(ys), Some(xs)) = (y.as_slice_mut(), x.as_slice()) {
        for (yi, &xi) in ys.iter_mut().zip(xs) {
            *yi = yi.num_add(alpha.num_mul(xi));
        }
    } else {
        Zip::from(y)
            .and(x)
            .for_each(|yi, &xi| *yi = yi.num_add(alpha.num_mul(xi)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array, Array1, ArrayView2};

    #[test]
    fn transpose_into_copies_any_layout_in_row_major_order() {
        let a = Array2::from_shape_fn((37, 70), |(i, j)| (i * 100 + j) as f64);
        let column_major = a.t().as_standard_layout().into_owned();
        let stepped = Array2::from_shape_fn((74, 140), |(i, j)| ((i / 2) * 100 + j / 2) as f64);
        for view in [a.view(), column_major.t(), stepped.slice(s![..;2, ..;2])] {
            let mut dst = vec![0.0; view.len()];
            transpose_into(&mut dst, view);
            assert_eq!(dst, a.iter().copied().collect::<Vec<_>>());
        }
    }

    /// A copy of at least COPY_SPLIT_MIN_ELEMENTS is split over two threads by rows (an
    /// odd count, so that the halves differ); every element lands where one thread puts
    /// it, and nothing outside the rows' `k` columns is written.
    #[test]
    fn large_copies_are_split_over_two_threads_and_write_only_their_rows() {
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (m, k, stride) = (301, 1000, 1003);
        assert!(m * k >= COPY_SPLIT_MIN_ELEMENTS);
        let a = Array2::from_shape_fn((m, k), |(i, j)| (i * 1000 + j) as f32);
        let column_major = a.t().as_standard_layout().into_owned();
        for threads in [1, 2] {
            crate::threads::set_num_threads(threads);
            for view in [a.view(), column_major.t()] {
                let mut dst = vec![-1.0f32; (m - 1) * stride + k];
                copy_rows(&mut dst, stride, view.insert_axis(Axis(0)));
                for (e, &v) in dst.iter().enumerate() {
                    let (i, j) = (e / stride, e % stride);
                    let want = if j < k { (i * 1000 + j) as f32 } else { -1.0 };
                    assert_eq!(v, want, "threads {threads}, element {e}");
                }
                let mut flat = vec![0.0f32; m * k];
                transpose_into(&mut flat, view);
                assert_eq!(flat.as_slice(), a.as_slice().unwrap());
            }
        }
        crate::threads::set_num_threads(0);
    }

    /// A large product of a column-major left operand goes through a row-major copy of it
    /// (the faer backend's `with_row_major_left`): the same values as the row-major
    /// operand, bit for bit, replacing and adding. Multiples of 1/64 below 1: every sum
    /// here is exact in f32.
    #[test]
    fn a_column_major_left_operand_gives_the_row_major_ones_product() {
        let (m, k, n) = (64, 1024, 256);
        let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 3) % 97) as f32 / 64.0 - 0.75);
        let b = Array2::from_shape_fn((k, n), |(i, j)| {
            ((i * 5 + j * 11) % 89) as f32 / 64.0 - 0.6875
        });
        let column_major = a.t().as_standard_layout().into_owned();
        let left = column_major.t();
        assert_eq!(left.strides(), &[1, m as isize]);
        let want = naive_mm(a.view(), b.view());
        for _ in 0..2 {
            let mut out = Array2::<f32>::zeros((0, 0));
            dot_mm(&mut out, left, b.view(), "a · b").unwrap();
            assert_eq!(out, want);
            let mut sum = want.clone();
            <f32 as Number>::gemm_add(sum.view_mut(), left, b.view(), true, "c - a · b").unwrap();
            assert!(sum.iter().all(|&x| x == 0.0));
        }
    }

    fn naive_mm<T: Number>(a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) -> Array2<T> {
        let (m, k) = a.dim();
        let n = b.ncols();
        let mut c = Array2::from_elem((m, n), T::ZERO);
        for i in 0..m {
            for j in 0..n {
                let mut s = T::ZERO;
                for p in 0..k {
                    s = s.num_add(a[[i, p]].num_mul(b[[p, j]]));
                }
                c[[i, j]] = s;
            }
        }
        c
    }

    /// Small integers (exact in every dtype), deterministic.
    fn matrix<T: Number>(rows: usize, cols: usize, seed: i64) -> Array2<T>
    where
        i32: crate::element::Cast<T>,
    {
        use crate::element::Cast;
        Array::from_shape_fn((rows, cols), |(i, j)| {
            let v = (i as i64 * 7 + j as i64 * 3 + seed).rem_euclid(11) - 5;
            (v as i32).cast()
        })
    }

    /// Checks `(m, k) · (k, n)` against the naive loop with the operands stored contiguous,
    /// transposed, stepped, reversed and broadcast (zero strides), and with column-major,
    /// stepped and reversed outputs.
    fn check_mm_layouts<T: Number>(m: usize, k: usize, n: usize)
    where
        i32: crate::element::Cast<T>,
    {
        let a = matrix::<T>(m, k, 1);
        let b = matrix::<T>(k, n, 2);
        let expected = naive_mm(a.view(), b.view());
        let mut out = Array2::from_elem((0, 0), T::ZERO);

        dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
        assert_eq!(out, expected, "contiguous {m}x{k}x{n}");

        // Transposed storage: build aᵀ contiguously and view it with `.t()`.
        let at = a.t().to_owned();
        let bt = b.t().to_owned();
        dot_mm(&mut out, at.t(), bt.t(), "a @ b").unwrap();
        assert_eq!(out, expected, "transposed {m}x{k}x{n}");

        // Stepped rows: a's rows live at even indices of a taller matrix.
        let mut tall = Array2::from_elem((2 * m, k), T::ONE);
        tall.slice_mut(s![..;2, ..]).assign(&a);
        let mut wide = Array2::from_elem((k, 2 * n), T::ONE);
        wide.slice_mut(s![.., ..;2]).assign(&b);
        dot_mm(
            &mut out,
            tall.slice(s![..;2, ..]),
            wide.slice(s![.., ..;2]),
            "a @ b",
        )
        .unwrap();
        assert_eq!(out, expected, "stepped {m}x{k}x{n}");

        // Reversed: store rows backwards, view with a negative stride.
        let ar = a.slice(s![..;-1, ..]).to_owned();
        let br = b.slice(s![.., ..;-1]).to_owned();
        dot_mm(
            &mut out,
            ar.slice(s![..;-1, ..]),
            br.slice(s![.., ..;-1]),
            "a @ b",
        )
        .unwrap();
        assert_eq!(out, expected, "reversed {m}x{k}x{n}");

        // Writing into a buffer with non-standard (column-major) strides.
        let mut fortran = Array2::from_elem((m, n).f(), T::ONE);
        T::gemm(fortran.view_mut(), a.view(), b.view(), "a @ b").unwrap();
        assert_eq!(fortran, expected, "fortran out {m}x{k}x{n}");

        // Transposed operands into a column-major output.
        T::gemm(fortran.view_mut(), at.t(), bt.t(), "a @ b").unwrap();
        assert_eq!(fortran, expected, "transposed into fortran {m}x{k}x{n}");

        // A stepped, reversed output: every other column of a wider buffer, rows backwards.
        let mut big = Array2::from_elem((m, 2 * n), T::ONE);
        T::gemm(
            big.slice_mut(s![..;-1, ..;2]),
            a.slice(s![..;-1, ..]),
            b.view(),
            "a @ b",
        )
        .unwrap();
        assert_eq!(big.slice(s![.., ..;2]), expected, "stepped out {m}x{k}x{n}");
        assert!(big.slice(s![.., 1..;2]).iter().all(|&x| x == T::ONE));

        // Broadcast operands: one row of `a` repeated m times, one column of `b` n times
        // (zero strides), against the naive product of the materialized matrices.
        if m > 0 && n > 0 {
            let a_row = a.slice(s![0..1, ..]);
            let b_col = b.slice(s![.., 0..1]);
            let (a_b, b_b) = (
                a_row.broadcast((m, k)).unwrap(),
                b_col.broadcast((k, n)).unwrap(),
            );
            let expected_b = naive_mm(a_b.to_owned().view(), b_b.to_owned().view());
            dot_mm(&mut out, a_b, b_b, "a @ b").unwrap();
            assert_eq!(out, expected_b, "broadcast {m}x{k}x{n}");
        }
    }

    use ndarray::ShapeBuilder;

    fn check_all_sizes<T: Number>()
    where
        i32: crate::element::Cast<T>,
    {
        for &(m, k, n) in &[
            (1, 1, 1),
            (2, 2, 2),
            (2, 3, 4),
            (5, 1, 7),
            (3, 9, 1),
            (1, 9, 3),
            (17, 13, 11),
            // faer: a rank-1 update (k = 1), matrix·vector (n = 1), vector·matrix on either
            // side of VM_MIN_WORK.
            (48, 1, 40),
            (33, 70, 1),
            (1, 16, 8),
            (1, 70, 65),
            // Above GEMM_MIN_WORK (matrixmultiply) and faer's small-product kernels' size.
            (40, 33, 35),
            (64, 64, 64),
            (70, 300, 9),
        ] {
            check_mm_layouts::<T>(m, k, n);
        }
    }

    #[test]
    fn dot_mm_f32() {
        check_all_sizes::<f32>();
    }

    #[test]
    fn dot_mm_f64() {
        check_all_sizes::<f64>();
    }

    #[test]
    fn dot_mm_i32() {
        check_all_sizes::<i32>();
    }

    #[test]
    fn dot_mm_i64() {
        check_all_sizes::<i64>();
    }

    /// The largest shapes: faer's packed kernels, split over threads when the setting
    /// allows (products of at least PAR_MIN_WORK), in the layouts that matter for them.
    fn check_large<T: Number>()
    where
        i32: crate::element::Cast<T>,
    {
        for &(m, k, n) in &[(128, 512, 257), (130, 97, 333), (1, 600, 700)] {
            let a = matrix::<T>(m, k, 3);
            let b = matrix::<T>(k, n, 4);
            let expected = naive_mm(a.view(), b.view());
            let mut out = Array2::from_elem((0, 0), T::ZERO);
            dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
            assert_eq!(out, expected, "contiguous {m}x{k}x{n}");
            let (at, bt) = (a.t().to_owned(), b.t().to_owned());
            let mut fortran = Array2::from_elem((m, n).f(), T::ONE);
            T::gemm(fortran.view_mut(), at.t(), bt.t(), "a @ b").unwrap();
            assert_eq!(fortran, expected, "transposed {m}x{k}x{n}");
            let ar = a.slice(s![..;-1, ..]).to_owned();
            dot_mm(&mut out, ar.slice(s![..;-1, ..]), b.view(), "a @ b").unwrap();
            assert_eq!(out, expected, "reversed {m}x{k}x{n}");
        }
    }

    #[test]
    fn dot_mm_large_f32() {
        check_large::<f32>();
    }

    #[test]
    fn dot_mm_large_f64() {
        check_large::<f64>();
    }

    #[test]
    fn dot_mm_large_i64() {
        check_large::<i64>();
    }

    #[cfg(all(feature = "faer", not(feature = "matrixmultiply")))]
    #[test]
    fn faer_backend_rules() {
        // The direct loop only for small vector·matrix products.
        assert!(!backend::use_faer(1, 16, 8));
        assert!(!backend::use_faer(1, 1, VM_MIN_WORK - 1));
        assert!(backend::use_faer(1, 1, VM_MIN_WORK));
        assert!(backend::use_faer(1, 512, 512));
        assert!(backend::use_faer(2, 1, 1));
        assert!(backend::use_faer(9, 9, 1));
        // Threads only for two matrix operands and enough work; one thread for the rest.
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let big = crate::threads::PAR_MIN_WORK;
        assert_eq!(backend::threads(1, big, big), 1);
        assert_eq!(backend::threads(big, big, 1), 1);
        assert_eq!(backend::threads(32, 512, 512), 1);
        assert_eq!(
            backend::threads(big / 4, 2, 2),
            crate::threads::num_threads()
        );
    }

    /// The split over threads, run directly at several thread counts (uneven and deeper
    /// than the machine's cores; parts cut by rows or by columns, or not at all when too
    /// narrow), against the naive product.
    #[cfg(all(feature = "faer", not(feature = "matrixmultiply")))]
    #[test]
    fn faer_split_over_threads() {
        fn check<T: backend::Float>()
        where
            i32: crate::element::Cast<T>,
        {
            for &(m, k, n) in &[(37, 50, 300), (300, 20, 33), (20, 30, 20), (1, 5, 100)] {
                let a = matrix::<T>(m, k, 5);
                let b = matrix::<T>(k, n, 6);
                let expected = naive_mm(a.view(), b.view());
                for threads in [1, 2, 3, 5, 64] {
                    let mut out = Array2::from_elem((m, n), T::ONE);
                    backend::split(out.view_mut(), a.view(), b.view(), threads, None);
                    assert_eq!(out, expected, "{m}x{k}x{n}, {threads} threads");
                    // Transposed operands into a column-major output.
                    let (at, bt) = (a.t().to_owned(), b.t().to_owned());
                    let mut fortran = Array2::from_elem((m, n).f(), T::ONE);
                    backend::split(fortran.view_mut(), at.t(), bt.t(), threads, None);
                    assert_eq!(fortran, expected, "{m}x{k}x{n}, {threads} threads, .t()");
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }

    #[cfg(feature = "matrixmultiply")]
    #[test]
    fn matrixmultiply_backend_rules() {
        assert!(backend::use_gemm(40, 33, 35));
        assert!(!backend::use_gemm(1, 1000, 1000));
        assert!(!backend::use_gemm(1000, 1000, 1));
        assert!(!backend::use_gemm(10, 10, 10));
    }

    #[test]
    fn dot_mm_replaces_the_output() {
        // A product where every element is known: ones(m, k) · ones(k, n) = k.
        let a = Array2::<f64>::ones((50, 70));
        let b = Array2::<f64>::ones((70, 60));
        let mut out = Array2::<f64>::from_elem((50, 60), f64::NAN); // beta = 0 ignores NaN
        dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
        assert!(out.iter().all(|&x| x == 70.0));
        // The same through every path: vector·matrix, matrix·vector, small products.
        let mut v = Array1::<f32>::from_elem(60, f32::NAN);
        let ones = Array1::<f32>::ones(70);
        dot_vm(&mut v, ones.view(), Array2::ones((70, 60)).view(), "x @ w").unwrap();
        assert!(v.iter().all(|&x| x == 70.0));
        dot_mv(&mut v, Array2::ones((60, 70)).view(), ones.view(), "w @ x").unwrap();
        assert!(v.iter().all(|&x| x == 70.0));
        let mut small = Array2::<f32>::from_elem((3, 2), f32::NAN);
        dot_mm(
            &mut small,
            Array2::ones((3, 4)).view(),
            Array2::ones((4, 2)).view(),
            "a @ b",
        )
        .unwrap();
        assert!(small.iter().all(|&x| x == 4.0));
    }

    #[test]
    fn dot_mm_zero_sizes() {
        for &(m, k, n) in &[(0, 3, 4), (3, 0, 4), (3, 4, 0), (0, 0, 0), (40, 0, 40)] {
            let a = Array2::<f64>::ones((m, k));
            let b = Array2::<f64>::ones((k, n));
            let mut out = Array2::<f64>::from_elem((1, 1), f64::NAN);
            dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
            assert_eq!(out.shape(), &[m, n]);
            assert!(out.iter().all(|&x| x == 0.0));
            let ai = Array2::<i64>::ones((m, k));
            let bi = Array2::<i64>::ones((k, n));
            let mut oi = Array2::<i64>::from_elem((1, 1), 9);
            dot_mm(&mut oi, ai.view(), bi.view(), "a @ b").unwrap();
            assert_eq!(oi, Array2::<i64>::zeros((m, n)));
            let mut of = Array2::<f32>::from_elem((1, 1), 9.0);
            let af = Array2::<f32>::ones((m, k));
            let bf = Array2::<f32>::ones((k, n));
            dot_mm(&mut of, af.view(), bf.view(), "a @ b").unwrap();
            assert_eq!(of, Array2::<f32>::zeros((m, n)));
        }
    }

    #[test]
    fn dot_mm_error() {
        let a = Array2::<f32>::zeros((2, 3));
        let b = Array2::<f32>::zeros((4, 5));
        let mut out = Array2::<f32>::zeros((0, 0));
        let e = dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap_err();
        assert_eq!(
            e,
            Error::Dot {
                what: "a @ b".into(),
                left: vec![2, 3],
                right: vec![4, 5]
            }
        );
        assert_eq!(
            e.to_string(),
            "cannot compute the dot product `a @ b` of shapes [2, 3] and [4, 5]: \
             inner sizes 3 and 4 differ"
        );
        assert_eq!(out.shape(), &[0, 0]);
    }

    /// `c ± a · b` as the two operations give it (exact: small integers).
    fn sum_then<T: Number>(c: &Array2<T>, product: &Array2<T>, subtract: bool) -> Array2<T> {
        let mut want = c.clone();
        want.zip_mut_with(product, |x, &p| {
            *x = if subtract { x.num_sub(p) } else { x.num_add(p) }
        });
        want
    }

    /// The accumulating kernels against the product made first and then added: every rank
    /// pair, both signs, `c` full, a row, a column and a scalar, sizes on the direct loop
    /// and on the backend (with its split over threads).
    fn check_dot_add<T: Number>()
    where
        i32: crate::element::Cast<T>,
    {
        for &(m, k, n) in &[
            (3, 4, 5),
            (1, 5, 7),
            (6, 5, 1),
            (40, 60, 50),
            (1, 100, 100),
            (300, 40, 70),
        ] {
            let a = matrix::<T>(m, k, 2);
            let b = matrix::<T>(k, n, 3);
            let c = matrix::<T>(m, n, 4);
            let product = naive_mm(a.view(), b.view());
            for subtract in [false, true] {
                let what = format!("{m}x{k}x{n}, subtract {subtract}");
                let mut out = Array2::default((0, 0));
                dot_add_mm(
                    &mut out,
                    c.view(),
                    a.view(),
                    b.view(),
                    subtract,
                    "c + a @ b",
                )
                .unwrap();
                assert_eq!(out, sum_then(&c, &product, subtract), "{what}");
                // c as a row and as a scalar, broadcast.
                let row = c.row(0).to_owned();
                let rows = Array2::from_shape_fn((m, n), |(_, j)| row[j]);
                dot_add_mm(
                    &mut out,
                    row.view(),
                    a.view(),
                    b.view(),
                    subtract,
                    "c + a @ b",
                )
                .unwrap();
                assert_eq!(out, sum_then(&rows, &product, subtract), "{what}, row");
                let one = ndarray::arr0(c[[0, 0]]);
                let ones = Array2::from_elem((m, n), c[[0, 0]]);
                dot_add_mm(
                    &mut out,
                    one.view(),
                    a.view(),
                    b.view(),
                    subtract,
                    "c + a @ b",
                )
                .unwrap();
                assert_eq!(out, sum_then(&ones, &product, subtract), "{what}, scalar");
                // Matrix · vector and vector · matrix.
                let mut v = Array1::default(0);
                dot_add_mv(
                    &mut v,
                    c.column(0),
                    a.view(),
                    b.column(0),
                    subtract,
                    "c + a @ b",
                )
                .unwrap();
                let want = sum_then(
                    &c.slice(s![.., 0..1]).to_owned(),
                    &product.slice(s![.., 0..1]).to_owned(),
                    subtract,
                );
                assert_eq!(v, want.column(0), "{what}, mv");
                dot_add_vm(&mut v, c.row(0), a.row(0), b.view(), subtract, "c + a @ b").unwrap();
                let want = sum_then(
                    &c.slice(s![0..1, ..]).to_owned(),
                    &product.slice(s![0..1, ..]).to_owned(),
                    subtract,
                );
                assert_eq!(v, want.row(0), "{what}, vm");
                // A scalar addend of a matrix · vector product.
                dot_add_mv(
                    &mut v,
                    one.view(),
                    a.view(),
                    b.column(0),
                    subtract,
                    "c + a @ b",
                )
                .unwrap();
                let want = sum_then(
                    &ones.slice(s![.., 0..1]).to_owned(),
                    &product.slice(s![.., 0..1]).to_owned(),
                    subtract,
                );
                assert_eq!(v, want.column(0), "{what}, mv scalar");
            }
        }
    }

    #[test]
    fn dot_add_f32() {
        check_dot_add::<f32>();
    }

    #[test]
    fn dot_add_f64() {
        check_dot_add::<f64>();
    }

    #[test]
    fn dot_add_i64() {
        check_dot_add::<i64>();
    }

    #[test]
    fn dot_add_with_two_threads() {
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let before = crate::threads::num_threads();
        crate::threads::set_num_threads(2);
        check_dot_add::<f64>();
        crate::threads::set_num_threads(before);
    }

    /// A sum larger than the product (`c` of 3 rows beside a product of one): the product
    /// is made, then added with broadcasting, as numpy's `c + dot(a, b)`.
    #[test]
    fn dot_add_larger_than_the_product_broadcasts_the_product() {
        let a = matrix::<f64>(1, 4, 1);
        let b = matrix::<f64>(4, 5, 2);
        let c = matrix::<f64>(3, 5, 3);
        let product = naive_mm(a.view(), b.view());
        let mut out = Array2::default((0, 0));
        dot_add_mm(&mut out, c.view(), a.view(), b.view(), true, "c - a @ b").unwrap();
        let want = Array2::from_shape_fn((3, 5), |(i, j)| c[[i, j]] - product[[0, j]]);
        assert_eq!(out, want);
    }

    /// An addend of the product's shape is taken over (its buffer swapped into `out`, the
    /// product accumulated there, `c` left with `out`'s old buffer); a broadcast one is
    /// added as `dot_add_mm` adds it, `c` untouched; zero rows and a wrong inner size as
    /// `dot_add_mm`.
    #[test]
    fn dot_add_onto_takes_over_an_addend_of_the_products_shape() {
        let a = matrix::<f64>(6, 4, 1);
        let b = matrix::<f64>(4, 5, 2);
        let c = matrix::<f64>(6, 5, 3);
        let product = naive_mm(a.view(), b.view());
        let mut out = Array2::<f64>::zeros((6, 5));
        let mut addend = c.clone();
        let at = addend.as_ptr();
        dot_add_mm_onto(
            &mut out,
            &mut addend,
            a.view(),
            b.view(),
            false,
            "c + a @ b",
        )
        .unwrap();
        assert_eq!(out.as_ptr(), at, "the addend's buffer");
        assert_eq!(addend.dim(), (6, 5), "out's old buffer");
        for ((i, j), &v) in out.indexed_iter() {
            let want = c[[i, j]] + product[[i, j]];
            assert!((v - want).abs() <= 1e-14, "[{i}, {j}]: {v} vs {want}");
        }
        // One row of c, broadcast over the product's six.
        let row = c.slice(ndarray::s![..1, ..]).to_owned();
        let mut addend = row.clone();
        dot_add_mm_onto(&mut out, &mut addend, a.view(), b.view(), true, "c - a @ b").unwrap();
        assert_eq!(addend, row);
        let mut want = Array2::<f64>::zeros((0, 0));
        dot_add_mm(&mut want, row.view(), a.view(), b.view(), true, "c - a @ b").unwrap();
        assert_eq!(out, want);
        // No row: an empty sum.
        let mut addend = Array2::<f64>::zeros((0, 5));
        let empty = Array2::<f64>::zeros((0, 4));
        dot_add_mm_onto(
            &mut out,
            &mut addend,
            empty.view(),
            b.view(),
            false,
            "c + a @ b",
        )
        .unwrap();
        assert_eq!(out.dim(), (0, 5));
        let e = dot_add_mm_onto(
            &mut out,
            &mut addend,
            c.view(),
            b.view(),
            false,
            "c + a @ b",
        )
        .unwrap_err();
        assert_eq!(
            e,
            Error::Dot {
                what: "c + a @ b".into(),
                left: vec![6, 5],
                right: vec![4, 5]
            }
        );
    }

    #[test]
    fn dot_add_errors_name_the_expression() {
        let a = Array2::<f64>::zeros((2, 3));
        let b = Array2::<f64>::zeros((4, 5));
        let c = Array2::<f64>::zeros((2, 5));
        let mut out = Array2::<f64>::zeros((0, 0));
        let e = dot_add_mm(&mut out, c.view(), a.view(), b.view(), false, "c + a @ b").unwrap_err();
        assert_eq!(
            e,
            Error::Dot {
                what: "c + a @ b".into(),
                left: vec![2, 3],
                right: vec![4, 5]
            }
        );
        let b = Array2::<f64>::zeros((3, 5));
        let c = Array2::<f64>::zeros((3, 5));
        let e = dot_add_mm(&mut out, c.view(), a.view(), b.view(), false, "c + a @ b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [3, 5] and [2, 5] together in `c + a @ b`"
        );
        let mut v = Array1::<f64>::zeros(0);
        let e = dot_add_mv(&mut v, c.row(0), a.view(), c.row(0), true, "c - a @ b").unwrap_err();
        assert!(matches!(e, Error::Dot { .. }), "{e}");
        let e = dot_add_vm(&mut v, c.row(0), c.row(0), a.view(), true, "c - a @ b").unwrap_err();
        assert!(matches!(e, Error::Dot { .. }), "{e}");
    }

    #[test]
    fn gemm_entry_checks_output_shape() {
        let a = Array2::<f64>::ones((2, 3));
        let b = Array2::<f64>::ones((3, 4));
        let mut out = Array2::<f64>::zeros((2, 5));
        let e = f64::gemm(out.view_mut(), a.view(), b.view(), "a @ b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`output of a @ b` has shape [2, 5] but shape [2, 4] was expected"
        );
        let mut oi = Array2::<i32>::zeros((2, 4));
        let bi = Array2::<i32>::ones((4, 4));
        let ai = Array2::<i32>::ones((2, 3));
        assert!(matches!(
            i32::gemm(oi.view_mut(), ai.view(), bi.view(), "a @ b"),
            Err(Error::Dot { .. })
        ));
    }

    fn naive_vec<T: Number>(a: &[T], b: &[T]) -> T {
        a.iter()
            .zip(b)
            .fold(T::ZERO, |s, (&x, &y)| s.num_add(x.num_mul(y)))
    }

    fn check_vectors<T: Number>()
    where
        i32: crate::element::Cast<T>,
    {
        for &(k, n) in &[(0, 3), (3, 0), (1, 1), (5, 3), (19, 23), (64, 200)] {
            let w = matrix::<T>(k, n, 3);
            let x = matrix::<T>(1, k, 4).row(0).to_owned();
            let xv: Vec<T> = x.to_vec();
            let expected_vm: Vec<T> = (0..n)
                .map(|j| naive_vec(&xv, &w.column(j).to_vec()))
                .collect();
            let wt = w.t().to_owned(); // (n, k)
            let mut out = Array1::from_elem(0, T::ZERO);

            // vector · matrix in four layouts of the matrix.
            dot_vm(&mut out, x.view(), w.view(), "x @ w").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "vm contiguous {k}x{n}");
            dot_vm(&mut out, x.view(), wt.t(), "x @ w").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "vm transposed {k}x{n}");
            let mut tall = Array2::from_elem((2 * k, n), T::ONE);
            tall.slice_mut(s![..;2, ..]).assign(&w);
            dot_vm(&mut out, x.view(), tall.slice(s![..;2, ..]), "x @ w").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "vm stepped {k}x{n}");
            let wr = w.slice(s![..;-1, ..]).to_owned();
            let xr = x.slice(s![..;-1]).to_owned();
            dot_vm(
                &mut out,
                xr.slice(s![..;-1]),
                wr.slice(s![..;-1, ..]),
                "x @ w",
            )
            .unwrap();
            assert_eq!(out.to_vec(), expected_vm, "vm reversed {k}x{n}");

            // matrix · vector: wᵀ (n, k) · x.
            dot_mv(&mut out, wt.view(), x.view(), "w @ x").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "mv contiguous {k}x{n}");
            dot_mv(&mut out, w.t(), x.view(), "w @ x").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "mv transposed {k}x{n}");
            let mut wide = Array2::from_elem((2 * n, k), T::ONE);
            wide.slice_mut(s![..;2, ..]).assign(&wt);
            dot_mv(&mut out, wide.slice(s![..;2, ..]), x.view(), "w @ x").unwrap();
            assert_eq!(out.to_vec(), expected_vm, "mv stepped {k}x{n}");
            let wtr = wt.slice(s![..;-1, ..]).to_owned();
            dot_mv(
                &mut out,
                wtr.slice(s![..;-1, ..]),
                xr.slice(s![..;-1]),
                "w @ x",
            )
            .unwrap();
            assert_eq!(out.to_vec(), expected_vm, "mv reversed {k}x{n}");

            // vector · vector, contiguous, stepped and reversed.
            let y = matrix::<T>(1, k, 5).row(0).to_owned();
            let expected_vv = naive_vec(&xv, &y.to_vec());
            assert_eq!(dot_vv(x.view(), y.view(), "x @ y").unwrap(), expected_vv);
            let mut y2 = Array1::from_elem(2 * k, T::ONE);
            y2.slice_mut(s![..;2]).assign(&y);
            assert_eq!(
                dot_vv(xr.slice(s![..;-1]), y2.slice(s![..;2]), "x @ y").unwrap(),
                expected_vv
            );
        }
    }

    #[test]
    fn vectors_f32() {
        check_vectors::<f32>();
    }

    #[test]
    fn vectors_f64() {
        check_vectors::<f64>();
    }

    #[test]
    fn vectors_i32() {
        check_vectors::<i32>();
    }

    #[test]
    fn vectors_i64() {
        check_vectors::<i64>();
    }

    #[test]
    fn vector_values_by_hand() {
        let x = array![1.0f64, 2.0, 3.0];
        let w = array![[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
        assert_eq!(dot_vv(x.view(), x.view(), "x @ x").unwrap(), 14.0);
        let mut out = Array1::zeros(0);
        dot_vm(&mut out, x.view(), w.view(), "x @ w").unwrap();
        assert_eq!(out, array![4.0, 5.0]);
        dot_mv(&mut out, w.t(), x.view(), "w.T @ x").unwrap();
        assert_eq!(out, array![4.0, 5.0]);
        // Integer products wrap instead of panicking.
        let big = array![i32::MAX, 2];
        assert_eq!(
            dot_vv(big.view(), big.view(), "b @ b").unwrap(),
            i32::MAX.wrapping_mul(i32::MAX).wrapping_add(4)
        );
    }

    /// Vectors shorter than one chunk of accumulators are summed in order, from the first
    /// product: the same bits as the loop (and as the chunked sum would give them).
    #[test]
    fn short_vector_dots_sum_in_order() {
        for len in 0..8 {
            let a: Vec<f64> = (0..len).map(|i| 0.1 + i as f64 / 3.0).collect();
            let b: Vec<f64> = (0..len).map(|i| 1.7 - i as f64 * 0.7).collect();
            let want = a.iter().zip(&b).fold(0.0, |s, (x, y)| s + x * y);
            let got = dot_vv(ArrayView1::from(&a), ArrayView1::from(&b), "a @ b").unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "length {len}");
            let ai: Vec<i64> = (0..len).map(|i| i as i64 - 3).collect();
            let got = dot_vv(ArrayView1::from(&ai), ArrayView1::from(&ai), "a @ a").unwrap();
            assert_eq!(got, ai.iter().map(|x| x * x).sum::<i64>());
        }
    }

    #[test]
    fn vector_errors() {
        let x = Array1::<f64>::zeros(3);
        let y = Array1::<f64>::zeros(4);
        let w = Array2::<f64>::zeros((4, 5));
        let mut out = Array1::<f64>::zeros(0);
        assert_eq!(
            dot_vv(x.view(), y.view(), "x @ y").unwrap_err(),
            Error::Dot {
                what: "x @ y".into(),
                left: vec![3],
                right: vec![4]
            }
        );
        let e = dot_vm(&mut out, x.view(), w.view(), "x @ w").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot compute the dot product `x @ w` of shapes [3] and [4, 5]: \
             inner sizes 3 and 4 differ"
        );
        let e = dot_mv(&mut out, w.view(), x.view(), "w @ x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot compute the dot product `w @ x` of shapes [4, 5] and [3]: \
             inner sizes 5 and 3 differ"
        );
    }

    #[test]
    fn float_results_match_naive_within_rounding() {
        // Non-integer values, where summation order matters: compare with a tolerance.
        let a = Array::from_shape_fn((37, 41), |(i, j)| ((i * 41 + j) as f64 * 0.37).sin());
        let b = Array::from_shape_fn((41, 43), |(i, j)| ((i * 43 + j) as f64 * 0.11).cos());
        let expected = naive_mm(a.view(), b.view());
        let mut out = Array2::zeros((0, 0));
        dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
        let err = (&out - &expected)
            .mapv(f64::abs)
            .fold(0.0f64, |m, &x| m.max(x));
        assert!(err < 1e-12, "max error {err}");
        let a32 = a.mapv(|x| x as f32);
        let b32 = b.mapv(|x| x as f32);
        let mut out32 = Array2::zeros((0, 0));
        dot_mm(&mut out32, a32.view(), b32.view(), "a @ b").unwrap();
        let err32 = out32
            .iter()
            .zip(expected.iter())
            .fold(0.0f64, |m, (&x, &y)| m.max((f64::from(x) - y).abs()));
        assert!(err32 < 1e-4, "max error {err32}");
    }
}

#[cfg(test)]
mod stack_tests {
    use ndarray::{Array2, Array3};

    /// Each matrix of the stack times `b`, by the plain per-matrix product.
    fn per_matrix(a: &Array3<f64>, b: &Array2<f64>) -> Array3<f64> {
        let (t, m, _) = a.dim();
        let mut out = Array3::zeros((t, m, b.ncols()));
        for i in 0..t {
            out.index_axis_mut(ndarray::Axis(0), i)
                .assign(&a.index_axis(ndarray::Axis(0), i).dot(b));
        }
        out
    }

    #[test]
    fn a_stack_times_a_matrix_equals_each_product() {
        for (t, m, k, n) in [(0, 3, 4, 5), (1, 1, 1, 1), (7, 32, 48, 40), (3, 2, 5, 4)] {
            let a =
                Array3::from_shape_fn((t, m, k), |(i, j, l)| ((i * 7 + j * 3 + l) as f64).sin());
            let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 5 + j) as f64 * 0.3).cos());
            let expected = per_matrix(&a, &b);
            let mut out = Array3::zeros((0, 0, 0));
            super::dot_stack_m(&mut out, a.view(), b.view(), "x").unwrap();
            assert!(
                (&out - &expected).iter().all(|d| d.abs() < 1e-12),
                "{t} {m} {k} {n}"
            );
            // A non-contiguous stack (every other matrix, reversed) goes matrix by matrix.
            let strided = a.slice(ndarray::s![..;-2, .., ..]);
            let expected = per_matrix(&strided.to_owned(), &b);
            super::dot_stack_m(&mut out, strided, b.view(), "x").unwrap();
            assert!((&out - &expected).iter().all(|d| d.abs() < 1e-12));
            let v = b.column(0).to_owned();
            let mut out_v = Array2::zeros((0, 0));
            super::dot_stack_v(&mut out_v, a.view(), v.view(), "x").unwrap();
            let expected_v = expected_first_column(&per_matrix(&a, &b));
            assert!((&out_v - &expected_v).iter().all(|d| d.abs() < 1e-12));
        }
        let a = Array3::<f64>::zeros((2, 3, 4));
        let b = Array2::<f64>::zeros((5, 6));
        let mut out = Array3::zeros((0, 0, 0));
        let e = super::dot_stack_m(&mut out, a.view(), b.view(), "x_t.dot(w)").unwrap_err();
        assert!(e.to_string().contains("x_t.dot(w)"), "{e}");
    }

    fn expected_first_column(full: &Array3<f64>) -> Array2<f64> {
        full.index_axis(ndarray::Axis(2), 0).to_owned()
    }
}

#[cfg(test)]
mod dot_sum_tests {
    use ndarray::{s, Array2, Array3, ArrayView2, ArrayView3, Axis};

    use super::{dot_sum, merge_steps, DotSumScratch, DotSumText, COPY_SPLIT_MIN_ELEMENTS};
    use crate::element::Number;
    use crate::error::Error;

    const TEXT: DotSumText<'static> = DotSumText {
        product: "x_t.t().dot(d_t)",
        output: "`g0`",
        result: "g + x_t.t().dot(d_t)",
    };

    /// `init + Σ_t p[t] · q[t]`, element by element in step order (the loop's order).
    fn by_hand<T: Number>(
        init: ArrayView2<'_, T>,
        p: ArrayView3<'_, T>,
        q: ArrayView3<'_, T>,
    ) -> Array2<T> {
        let ((steps, m, k), n) = (p.dim(), q.dim().2);
        let mut acc = init.to_owned();
        for t in 0..steps {
            for i in 0..m {
                for j in 0..n {
                    let mut s = T::ZERO;
                    for l in 0..k {
                        s = s.num_add(p[[t, i, l]].num_mul(q[[t, l, j]]));
                    }
                    acc[[i, j]] = acc[[i, j]].num_add(s);
                }
            }
        }
        acc
    }

    fn floats(shape: (usize, usize, usize), seed: f64) -> Array3<f64> {
        Array3::from_shape_fn(shape, |(a, b, c)| {
            ((a * 7 + b * 3 + c) as f64 * 0.37 + seed).sin()
        })
    }

    /// Large integers, so that products wrap.
    fn ints(shape: (usize, usize, usize), seed: i64) -> Array3<i64> {
        Array3::from_shape_fn(shape, |(a, b, c)| {
            ((a as i64 * 7 + b as i64 * 3 + c as i64 + seed) % 11 - 5) * 3_000_000_019
        })
    }

    fn close(got: &Array2<f64>, want: &Array2<f64>) {
        assert_eq!(got.shape(), want.shape());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{got} vs {want}");
        }
    }

    #[test]
    fn transposed_rows_of_a_contiguous_stack_merge_into_one_product() {
        // x [T, B, I] contiguous, p_t = x_t.t() [I, B]; d [T, B, H] contiguous.
        let (t, b, i, h) = (5, 3, 4, 2);
        let x = floats((t, b, i), 0.1);
        let d = floats((t, b, h), 0.2);
        let p = x.view().permuted_axes([0, 2, 1]);
        // The merged views: no copy, [I, T*B] and [T*B, H].
        let p2 = merge_steps(p, Axis(2)).expect("x_t.t() merges");
        assert_eq!(p2.shape(), &[i, t * b]);
        assert_eq!(p2.as_ptr(), x.as_ptr());
        assert_eq!(p2[[1, 2 * b + 1]], x[[2, 1, 1]]);
        let q2 = merge_steps(d.view(), Axis(1)).expect("a contiguous trace merges");
        assert_eq!(q2.shape(), &[t * b, h]);
        assert_eq!(q2.as_ptr(), d.as_ptr());

        let init = Array2::from_shape_fn((i, h), |(r, c)| (r * h + c) as f64 - 3.0);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(&mut out, init.view(), p, d.view(), &mut scratch, TEXT).unwrap();
        assert_eq!(out.shape(), &[1, i, h]);
        close(
            &out.index_axis(Axis(0), 0).to_owned(),
            &by_hand(init.view(), p, d.view()),
        );
        // One product: nothing was copied.
        assert_eq!(scratch.packed[0].len() + scratch.packed[1].len(), 0);

        // Integers: exact, wrapping.
        let xi = ints((t, b, i), 1);
        let di = ints((t, b, h), 2);
        let pi = xi.view().permuted_axes([0, 2, 1]);
        let init_i = Array2::from_elem((i, h), i64::MAX);
        let mut out_i = Array3::zeros((0, 0, 0));
        let mut scratch_i = DotSumScratch::default();
        dot_sum(
            &mut out_i,
            init_i.view(),
            pi,
            di.view(),
            &mut scratch_i,
            TEXT,
        )
        .unwrap();
        assert_eq!(
            out_i.index_axis(Axis(0), 0),
            by_hand(init_i.view(), pi, di.view())
        );
        assert_eq!(scratch_i.packed[0].len() + scratch_i.packed[1].len(), 0);
    }

    #[test]
    fn stacks_that_do_not_merge_are_copied_by_chunks_of_steps() {
        let (t, m, k, n) = (4, 3, 5, 2);
        // Every other step of a longer stack: the step stride is twice the merged one.
        let long = floats((2 * t, m, k), 0.3);
        let p = long.slice(s![..;2, .., ..]);
        assert!(merge_steps(p, Axis(2)).is_none());
        // Reversed steps do not merge either.
        let q_long = floats((2 * t, k, n), 0.4);
        let q = q_long.slice(s![..;-2, .., ..]);
        assert!(merge_steps(q, Axis(1)).is_none());
        let init = Array2::from_elem((m, n), 0.5);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(&mut out, init.view(), p, q, &mut scratch, TEXT).unwrap();
        close(
            &out.index_axis(Axis(0), 0).to_owned(),
            &by_hand(init.view(), p, q),
        );
        // Each stack copied, all its steps in one chunk: p into rows (laid out [m, t, k]),
        // q along its faster axis, its rows (its steps put back in order).
        assert_eq!(scratch.packed[0].shape(), &[m, t, k]);
        assert_eq!(scratch.packed[1].shape(), &[t, k, n]);
        // A second call reuses every buffer.
        let ptrs = |out: &Array3<f64>, s: &DotSumScratch<f64>| {
            (out.as_ptr(), s.packed[0].as_ptr(), s.packed[1].as_ptr())
        };
        let before = ptrs(&out, &scratch);
        dot_sum(&mut out, init.view(), p, q, &mut scratch, TEXT).unwrap();
        assert_eq!(ptrs(&out, &scratch), before);
        close(
            &out.index_axis(Axis(0), 0).to_owned(),
            &by_hand(init.view(), p, q),
        );

        let long_i = ints((2 * t, m, k), 3);
        let pi = long_i.slice(s![..;2, .., ..]);
        let qi_long = ints((2 * t, k, n), 4);
        let qi = qi_long.slice(s![..;-2, .., ..]);
        let init_i = Array2::from_elem((m, n), i64::MIN + 1);
        let mut out_i = Array3::zeros((0, 0, 0));
        let mut scratch_i = DotSumScratch::default();
        dot_sum(&mut out_i, init_i.view(), pi, qi, &mut scratch_i, TEXT).unwrap();
        assert_eq!(out_i.index_axis(Axis(0), 0), by_hand(init_i.view(), pi, qi));
    }

    #[test]
    fn an_empty_inner_axis_sums_no_product() {
        // A batch of no rows: x_t.t() [I, 0] · d_t [0, H] is zeros.
        let p = Array3::<f64>::zeros((3, 4, 0));
        let q = Array3::<f64>::zeros((3, 0, 2));
        let init = Array2::from_elem((4, 2), 1.5);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap();
        assert_eq!(out.index_axis(Axis(0), 0), init);
    }

    #[test]
    fn two_stacks_read_backwards_are_one_product_forwards() {
        // Two sequences of a loop going backwards, both in its step order: no copy.
        let (t, b, i, h) = (5, 3, 4, 2);
        let x = floats((t, b, i), 0.7);
        let d = floats((t, b, h), 0.8);
        let p = x.slice(s![..;-1, .., ..]).permuted_axes([0, 2, 1]);
        let q = d.slice(s![..;-1, .., ..]);
        let init = Array2::from_elem((i, h), 0.25);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(&mut out, init.view(), p, q, &mut scratch, TEXT).unwrap();
        close(
            &out.index_axis(Axis(0), 0).to_owned(),
            &by_hand(init.view(), p, q),
        );
        assert_eq!(scratch.packed[0].len() + scratch.packed[1].len(), 0);
    }

    #[test]
    fn a_reversed_stack_beside_a_trace_is_copied_a_chunk_at_a_time() {
        // p_t = x_t.t() of a sequence read backwards [m, k] = [512, 256]: four steps make
        // an inner length of 1024, so five steps take two products; q, a trace, is read
        // in place.
        let (t, k, m, n) = (5, 256, 512, 3);
        let x = floats((t, k, m), 0.9);
        let p = x.slice(s![..;-1, .., ..]).permuted_axes([0, 2, 1]);
        let q = floats((t, k, n), 1.0);
        let init = Array2::from_elem((m, n), -1.0);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(&mut out, init.view(), p, q.view(), &mut scratch, TEXT).unwrap();
        let want = by_hand(init.view(), p, q.view());
        let got = out.index_axis(Axis(0), 0);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-10 * (1.0 + w.abs()), "{g} vs {w}");
        }
        // Room for four steps: the last chunk, of one, was copied into the same memory,
        // in rows (a row-major [m, 4 * k] matrix).
        assert_eq!(scratch.packed[0].shape(), &[m, 4, k]);
        assert_eq!(scratch.packed[1].len(), 0);
    }

    #[test]
    fn adjoints_stacked_backwards_beside_a_trace_are_read_in_place() {
        // A gradient's Σ_t h_t.t() · d_t: h a forward trace [t, b, m], d the adjoints a
        // backward loop stacked, read backwards. Both are turned, so that d merges (no
        // copy) and h's steps are copied into rows, on one thread and on two (the copy is
        // then split: it holds at least COPY_SPLIT_MIN_ELEMENTS).
        let _guard = crate::threads::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (t, b, m, n) = (40, 32, 256, 3);
        assert!(t * b * m >= COPY_SPLIT_MIN_ELEMENTS);
        let h = floats((t, b, m), 0.2);
        let d = floats((t, b, n), 0.3);
        let p = h.view().permuted_axes([0, 2, 1]);
        let q = d.slice(s![..;-1, .., ..]);
        let init = Array2::from_elem((m, n), 0.125);
        let want = by_hand(init.view(), p, q);
        for threads in [1, 2] {
            crate::threads::set_num_threads(threads);
            let mut out = Array3::zeros((0, 0, 0));
            let mut scratch = DotSumScratch::default();
            dot_sum(&mut out, init.view(), p, q, &mut scratch, TEXT).unwrap();
            let got = out.index_axis(Axis(0), 0);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-10 * (1.0 + w.abs()), "{g} vs {w}");
            }
            // Chunks of 1024 / 32 = 32 steps of p, in rows; d read where it is.
            assert_eq!(scratch.packed[0].shape(), &[m, 32, b]);
            assert_eq!(scratch.packed[1].len(), 0);
        }
        crate::threads::set_num_threads(0);
    }

    #[test]
    fn the_sum_broadcasts_to_the_initial_value() {
        // q_t has one column: each step's product [m, 1] is added to every column.
        let p = floats((3, 2, 4), 0.5);
        let q = floats((3, 4, 1), 0.6);
        let init = Array2::from_shape_fn((2, 3), |(r, c)| (r + c) as f64);
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap();
        let column = by_hand(Array2::zeros((2, 1)).view(), p.view(), q.view());
        let want = Array2::from_shape_fn((2, 3), |(r, c)| init[[r, c]] + column[[r, 0]]);
        close(&out.index_axis(Axis(0), 0).to_owned(), &want);
    }

    #[test]
    fn no_step_gives_no_row_of_the_initial_value_s_shape() {
        // A map output of no step has every axis 0; the sum is then of nothing, and the
        // accumulator of no step has no row: acc[-1] is an index error, as in the loop.
        let init = Array2::<f64>::ones((3, 2));
        let empty = Array3::<f64>::zeros((0, 0, 0));
        let mut out = Array3::from_elem((1, 1, 1), 9.0);
        let mut scratch = DotSumScratch::default();
        dot_sum(
            &mut out,
            init.view(),
            empty.view(),
            empty.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap();
        assert_eq!(out.shape(), &[0, 3, 2]);
    }

    #[test]
    fn mismatched_shapes_are_errors_naming_the_expression() {
        let mut out = Array3::zeros((0, 0, 0));
        let mut scratch = DotSumScratch::default();
        // Inner sizes: the product's `Err(Dot)` with the shapes of one step's operands.
        let (p, q) = (
            Array3::<f64>::zeros((2, 3, 4)),
            Array3::<f64>::zeros((2, 5, 6)),
        );
        let init = Array2::<f64>::zeros((3, 6));
        let e = dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap_err();
        assert_eq!(
            e,
            Error::Dot {
                what: "x_t.t().dot(d_t)".into(),
                left: vec![3, 4],
                right: vec![5, 6]
            }
        );
        assert_eq!(
            e.to_string(),
            "cannot compute the dot product `x_t.t().dot(d_t)` of shapes [3, 4] and [5, 6]: \
             inner sizes 4 and 5 differ"
        );
        // The sum against the initial value: not broadcastable, then broadcast to a shape
        // other than the accumulator's.
        let q = Array3::<f64>::zeros((2, 4, 6));
        let init = Array2::<f64>::zeros((2, 6));
        let e = dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "g + x_t.t().dot(d_t)".into(),
                shapes: vec![vec![2, 6], vec![3, 6]]
            }
        );
        let init = Array2::<f64>::zeros((1, 6));
        let e = dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap_err();
        assert_eq!(
            e,
            Error::StepResultShape {
                output: "`g0`".into(),
                result: "g + x_t.t().dot(d_t)".into(),
                expected: vec![1, 6],
                found: vec![3, 6]
            }
        );
        // Stacks of different lengths (not made by the compiler, still no panic).
        let q = Array3::<f64>::zeros((3, 4, 6));
        let init = Array2::<f64>::zeros((3, 6));
        let e = dot_sum(
            &mut out,
            init.view(),
            p.view(),
            q.view(),
            &mut scratch,
            TEXT,
        )
        .unwrap_err();
        assert!(e.to_string().contains("x_t.t().dot(d_t)"), "{e}");
        assert!(e.to_string().contains("[2, 3, 4] and [3, 4, 6]"), "{e}");
        // Integers too.
        let (pi, qi) = (
            Array3::<i64>::zeros((1, 2, 2)),
            Array3::<i64>::zeros((1, 3, 2)),
        );
        let mut out_i = Array3::zeros((0, 0, 0));
        let e = dot_sum(
            &mut out_i,
            Array2::<i64>::zeros((2, 2)).view(),
            pi.view(),
            qi.view(),
            &mut DotSumScratch::default(),
            TEXT,
        );
        assert!(matches!(e, Err(Error::Dot { .. })), "{e:?}");
    }
}
