//! Dense linear algebra for the step language (`cholesky`, `cho_solve`, `solve`,
//! `solve_triangular`, `inv`, `det`, `slogdet`, `eigh`, `qr` in its three modes, `svd`
//! with and without vectors), on faer's factorisations.
//!
//! `cholesky` factors in its result buffer, and `cho_solve` and `solve_triangular` solve
//! in theirs (the right-hand sides copied in), reading a factor that is contiguous in
//! either order in place: on a 4 x 4 matrix the copies cost as much as the factorisation.
//! The other kernels copy their matrix into a [`Linalg`] workspace (column-major, the
//! layout faer's factorisations prefer), factorise there, and write their result into the
//! caller's buffer. The workspace is declared by generated code before the loop and kept
//! from step to step, so after the first step of a loop whose shapes stay the same nothing
//! is allocated: the copies, the permutations and faer's scratch memory (`MemStack`) all
//! live in vectors that only grow. No factorisation is written here: faer's LU with
//! partial pivoting, Cholesky (LLT), Bunch-Kaufman (LBLT), triangular solves, symmetric
//! eigendecomposition (tridiagonal reduction, then QR iteration or divide and conquer),
//! Householder QR and the SVD do the work, sequentially (`Par::Seq`).
//!
//! Failures follow numpy, scipy and PyTensor: a matrix that is not positive definite
//! (`cholesky`, `solve(.., assume_a = "pos")`) and a singular one (an exactly zero pivot:
//! `solve`, `inv`, `solve_triangular`) are `Err`s naming the expression and, inside a loop,
//! the step; `cholesky(.., on_error = "nan")` gives a matrix of NaN instead, as PyTensor's
//! option does; `det` and `slogdet` of a singular matrix are `0` and `(0, -inf)`.

use std::mem::MaybeUninit;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::{lblt as bunch_kaufman, llt};
use faer::linalg::lu::partial_pivoting;
use faer::linalg::qr::no_pivoting::factor as qr_factor;
use faer::linalg::{evd, householder, svd, triangular_solve};
use faer::{ColMut, MatMut, MatRef, Par};
use ndarray::{
    Array, Array1, Array2, ArrayView, ArrayView2, ArrayViewMut2, Axis, Dimension, Ix1, Ix2,
};

use super::buffer::try_ensure_shape;
use super::copy::copy_elems;
use crate::element::Float;
use crate::error::{Error, Result};

/// The float types the factorisations run in: f32 and f64.
pub trait LinalgFloat: Float + faer::traits::RealField {
    /// The square root of the machine epsilon: components of an eigenvector within this
    /// (relative) of its largest magnitude count as equally large (`eigh`'s signs).
    const SQRT_EPS: Self;
    /// The machine epsilon.
    const EPS: Self;
    /// `n` in this type (a count in a tolerance).
    fn of_count(n: usize) -> Self;
    /// The standard library's logarithm (the platform's libm, correctly rounded or within
    /// an ulp): for a lone scalar, where its latency is a third of `Float::ln`'s
    /// branch-free one, made to vectorize.
    fn std_ln(self) -> Self;
    /// About the square roots of the smallest normal and the largest float: a product of
    /// two numbers between them is finite and normal.
    const SAFE_PRODUCT: (Self, Self);
}
impl LinalgFloat for f32 {
    const SQRT_EPS: f32 = 3.452_669_8e-4;
    const EPS: f32 = f32::EPSILON;
    const SAFE_PRODUCT: (f32, f32) = (1.0842022e-19, 1.8446743e19);
    fn std_ln(self) -> f32 {
        self.ln()
    }
    fn of_count(n: usize) -> f32 {
        n as f32
    }
}
impl LinalgFloat for f64 {
    const SQRT_EPS: f64 = 1.490_116_119_384_765_6e-8;
    const EPS: f64 = f64::EPSILON;
    const SAFE_PRODUCT: (f64, f64) = (1.4916681462400413e-154, 1.3407807929942596e154);
    fn std_ln(self) -> f64 {
        self.ln()
    }
    fn of_count(n: usize) -> f64 {
        n as f64
    }
}

/// The memory of one linear-algebra node, kept across the steps of a loop: a column-major
/// copy of the matrix being factorised, the right-hand sides being solved, the
/// permutations and faer's scratch memory. Each only grows, so equal shapes from step to
/// step allocate nothing after the first.
pub struct Linalg<T> {
    a: Vec<T>,
    x: Vec<T>,
    /// `svd`'s right singular vectors.
    v: Vec<T>,
    sub: Vec<T>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    stack: Scratch,
}

/// faer's scratch memory for one node's factorisations and solves: bytes that only grow,
/// and the Cholesky factorisation's or solve's sizes they were last made large enough
/// for, so that a step repeating them skips faer's computation of the size (with the
/// growth check, 0.8 K of a Kalman step's 53 K profile samples, where the factorisation
/// itself took 3.7 K).
#[derive(Default)]
struct Scratch {
    bytes: Vec<MaybeUninit<u8>>,
    sized_for: Option<(ScratchFor, usize, usize)>,
}

/// What [`Scratch`] was last sized for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScratchFor {
    /// A Cholesky factorisation of order `n`.
    Cholesky,
    /// A solve with a Cholesky factor of order `n` for `k` right-hand sides.
    CholeskySolve,
}

impl Scratch {
    /// Memory for `what` of sizes `n` and `k`, `req` computed only when those differ from
    /// the last call's.
    #[inline]
    fn sized(
        &mut self,
        what: ScratchFor,
        (n, k): (usize, usize),
        req: impl FnOnce() -> StackReq,
    ) -> &mut MemStack {
        if self.sized_for != Some((what, n, k)) {
            grow_to(&mut self.bytes, req());
            self.sized_for = Some((what, n, k));
        }
        MemStack::new(&mut self.bytes)
    }
}

impl<T> Default for Linalg<T> {
    fn default() -> Self {
        Linalg {
            a: Vec::new(),
            x: Vec::new(),
            v: Vec::new(),
            sub: Vec::new(),
            perm: Vec::new(),
            perm_inv: Vec::new(),
            stack: Scratch::default(),
        }
    }
}

/// Right-hand sides: a vector (one column) or a matrix (one column each).
pub trait Rhs: Dimension {
    fn matrix<T>(b: ArrayView<'_, T, Self>) -> ArrayView2<'_, T>;
}

impl Rhs for Ix1 {
    fn matrix<T>(b: ArrayView<'_, T, Ix1>) -> ArrayView2<'_, T> {
        b.insert_axis(Axis(1))
    }
}

impl Rhs for Ix2 {
    fn matrix<T>(b: ArrayView<'_, T, Ix2>) -> ArrayView2<'_, T> {
        b
    }
}

/// How `solve` factorises (scipy's `assume_a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assume {
    /// "gen": LU with partial pivoting.
    General,
    /// "pos": Cholesky.
    Positive,
    /// "sym": Bunch-Kaufman (LBLT).
    Symmetric,
}

/// `Ok(n)` for an `n x n` matrix, else `Err(NotSquare)`.
#[inline]
fn square<T>(a: &ArrayView2<'_, T>, what: &str) -> Result<usize> {
    let (m, n) = a.dim();
    if m == n {
        Ok(n)
    } else {
        Err(not_square(what, m, n))
    }
}

#[cold]
#[inline(never)]
fn not_square(what: &str, m: usize, n: usize) -> Error {
    Error::NotSquare {
        what: what.to_string(),
        shape: vec![m, n],
    }
}

/// `Err(RightHandSide)` unless `b` has `n` rows.
#[inline]
fn check_rhs<T, D: Dimension>(n: usize, b: &ArrayView<'_, T, D>, what: &str) -> Result<()> {
    if b.shape().first() == Some(&n) {
        Ok(())
    } else {
        // `b`'s shape copied (see `dot::dot_error`).
        Err(rhs_error(what, n, b.raw_dim().slice()))
    }
}

#[cold]
#[inline(never)]
fn rhs_error(what: &str, n: usize, rhs: &[usize]) -> Error {
    Error::RightHandSide {
        what: what.to_string(),
        matrix: vec![n, n],
        rhs: rhs.to_vec(),
    }
}

/// `a` (or its transpose) copied into `dst`, column-major.
fn load<T: LinalgFloat>(dst: &mut Vec<T>, a: ArrayView2<'_, T>, transpose: bool) {
    let a = if transpose { a.reversed_axes() } else { a };
    let (m, n) = a.dim();
    dst.clear();
    dst.reserve(m * n);
    for j in 0..n {
        dst.extend(a.column(j).iter().copied());
    }
}

/// Scratch memory of at least `req`, from `scratch` (grown when too small).
fn stack(scratch: &mut Scratch, req: StackReq) -> &mut MemStack {
    grow_to(&mut scratch.bytes, req);
    MemStack::new(&mut scratch.bytes)
}

/// `bytes` grown to hold `req`.
fn grow_to(bytes: &mut Vec<MaybeUninit<u8>>, req: StackReq) {
    let need = req.unaligned_bytes_required();
    if bytes.len() < need {
        bytes.resize(need, MaybeUninit::uninit());
    }
}

fn mat<T>(v: &[T], m: usize, n: usize) -> MatRef<'_, T> {
    MatRef::from_column_major_slice(v, m, n)
}

fn mat_mut<T>(v: &mut [T], m: usize, n: usize) -> MatMut<'_, T> {
    MatMut::from_column_major_slice_mut(v, m, n)
}

/// `a` (or its transpose) as a faer matrix: read in place when its elements are
/// contiguous in row-major or column-major order (every matrix the step makes), else
/// copied into `copy`, column-major. For a 4 x 4 matrix the copy cost as much as the
/// factorisation.
#[inline(always)]
fn view_of<'a, T: LinalgFloat>(
    copy: &'a mut Vec<T>,
    a: ArrayView2<'a, T>,
    transpose: bool,
) -> MatRef<'a, T> {
    let a = if transpose { a.reversed_axes() } else { a };
    let (m, n) = a.dim();
    if let Some(s) = a.to_slice() {
        return MatRef::from_row_major_slice(s, m, n);
    }
    if let Some(s) = a.reversed_axes().to_slice() {
        return MatRef::from_column_major_slice(s, m, n);
    }
    load(copy, a, false);
    mat(copy, m, n)
}

/// `out` set to the right-hand sides `b` (its shape), and seen as the `n x k` faer matrix
/// that a solve overwrites with the solution in place: no copy in and out of the
/// workspace. `None` when `out`'s elements are not in standard order (then the caller
/// solves in the workspace).
#[inline(always)]
fn solve_in_out<'o, T: LinalgFloat, D: Rhs>(
    out: &'o mut Array<T, D>,
    b: ArrayView<'_, T, D>,
    what: &str,
) -> Result<Option<MatMut<'o, T>>> {
    try_ensure_shape(what, out, b.raw_dim())?;
    let (n, k) = D::matrix(b.view()).dim();
    let Some(x) = out.as_slice_mut() else {
        return Ok(None);
    };
    copy_small(x, &b);
    // One column is the same memory either way; faer's triangular solves take the
    // column-major one's direct path (a row-major `n x 1` cost three times as much).
    Ok(Some(if k == 1 {
        MatMut::from_column_major_slice_mut(x, n, k)
    } else {
        MatMut::from_row_major_slice_mut(x, n, k)
    }))
}

/// `x` set to `b`'s elements in standard order (`x` has as many): an element loop for
/// the few elements of a step's small matrix (`copy_from_slice` calls `memmove`, which costs
/// more there), `copy_elems` for more, an indexed loop for a strided matrix (a
/// transposed right-hand side, `cho_solve((l, true), pht.t())`: ndarray's element
/// iterator took 30 ns for the 8 elements of a Kalman step's), ndarray's iterator for
/// anything else.
#[inline(always)]
fn copy_small<T: Copy, D: Dimension>(x: &mut [T], b: &ArrayView<'_, T, D>) {
    match b.as_slice() {
        Some(b) if b.len() <= 16 => {
            for (x, &b) in x.iter_mut().zip(b) {
                *x = b;
            }
        }
        Some(b) => copy_elems(x, b),
        None => match b.view().into_dimensionality::<Ix2>() {
            Ok(b) => copy_strided(x, b),
            Err(_) => x.iter_mut().zip(b.iter()).for_each(|(x, &b)| *x = b),
        },
    }
}

/// [`copy_small`] of a strided matrix, row by row (`x` has as many elements as `b`; a
/// shorter `x` panics).
fn copy_strided<T: Copy>(x: &mut [T], b: ArrayView2<'_, T>) {
    let (m, n) = b.dim();
    for i in 0..m {
        for j in 0..n {
            // SAFETY: `i < m` and `j < n`: an element of `b`.
            x[i * n + j] = unsafe { *b.uget((i, j)) };
        }
    }
}

/// `out` (shaped as `b`) set from the column-major `x` of `n` rows.
fn store<T: LinalgFloat, D: Rhs>(
    out: &mut Array<T, D>,
    shape: D,
    x: &[T],
    n: usize,
    what: &str,
) -> Result<()> {
    try_ensure_shape(what, out, shape)?;
    let mut o: ArrayViewMut2<'_, T> =
        match out.view_mut().into_dimensionality::<Ix2>() {
            Ok(o) => o,
            Err(_) => out.view_mut().into_shape_with_order((n, 1)).map_err(|_| {
                Error::InvalidArgument {
                    what: what.to_string(),
                    detail: "the result is neither a vector nor a matrix".to_string(),
                }
            })?,
        };
    for ((i, j), v) in o.indexed_iter_mut() {
        *v = x[i + j * n];
    }
    Ok(())
}

/// The Cholesky factor of the `n x n` matrix `a` (its lower triangle read), in place.
/// `Err(order)` of the leading minor that is not positive.
fn llt_in_place<T: LinalgFloat>(
    a: MatMut<'_, T>,
    n: usize,
    scratch: &mut Scratch,
) -> std::result::Result<(), usize> {
    let st = scratch.sized(ScratchFor::Cholesky, (n, 0), || {
        llt::factor::cholesky_in_place_scratch::<T>(n, Par::Seq, Default::default())
    });
    match llt::factor::cholesky_in_place(a, Default::default(), Par::Seq, st, Default::default()) {
        Ok(_) => Ok(()),
        Err(llt::factor::LltError::NonPositivePivot { index }) => Err(index + 1),
    }
}

impl<T: LinalgFloat> Linalg<T> {
    /// LU with partial pivoting of the matrix in `self.a`: the number of row exchanges, and
    /// the first zero pivot if any.
    fn lu(&mut self, n: usize) -> (usize, Option<usize>) {
        self.perm.resize(n, 0);
        self.perm_inv.resize(n, 0);
        let req = partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
            n,
            n,
            Par::Seq,
            Default::default(),
        );
        let st = stack(&mut self.stack, req);
        let (info, _) = partial_pivoting::factor::lu_in_place(
            mat_mut(&mut self.a, n, n),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            st,
            Default::default(),
        );
        let zero = (0..n).find(|&i| self.a[i + i * n] == T::ZERO);
        (info.transposition_count, zero)
    }

    /// Solves with the LU factors in `self.a` for the `k` columns of `self.x`.
    fn lu_solve(&mut self, n: usize, k: usize) {
        let req = partial_pivoting::solve::solve_in_place_scratch::<usize, T>(n, k, Par::Seq);
        let st = stack(&mut self.stack, req);
        let lu = mat(&self.a, n, n);
        // SAFETY-free: the permutation was made by `lu_in_place` on this matrix.
        let perm = faer::perm::PermRef::new_checked(&self.perm, &self.perm_inv, n);
        partial_pivoting::solve::solve_in_place(
            lu,
            lu,
            perm,
            mat_mut(&mut self.x, n, k),
            Par::Seq,
            st,
        );
    }
}

/// `cholesky(a, lower, on_error)`: PyTensor's (scipy's `cholesky`): the factor `L` with
/// `L L^T = a` (lower, reading a's lower triangle) or `U` with `U^T U = a` (upper, reading
/// the upper triangle), the other triangle zero. A matrix that is not positive definite is
/// `Err(NotPositiveDefinite)`, or a matrix of NaN with `nan_on_error`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn cholesky<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    out: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    lower: bool,
    nan_on_error: bool,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let n = square(&a, what)?;
    try_ensure_shape(what, out, Ix2(n, n))?;
    let factored = match out.as_slice_mut() {
        // Factored in place in `out`: as the row-major matrix itself for the lower factor;
        // for the upper one as its column-major transpose, whose lower triangle is a's
        // upper one and whose lower factor, read row-major, is `U`.
        Some(x) => {
            copy_small(x, &a);
            let m = if lower {
                MatMut::from_row_major_slice_mut(x, n, n)
            } else {
                MatMut::from_column_major_slice_mut(x, n, n)
            };
            llt_in_place(m, n, &mut ws.stack)
        }
        None => {
            load(&mut ws.a, a, !lower);
            let f = llt_in_place(mat_mut(&mut ws.a, n, n), n, &mut ws.stack);
            for ((i, j), v) in out.indexed_iter_mut() {
                let (r, c) = if lower { (i, j) } else { (j, i) };
                *v = ws.a[r + c * n];
            }
            f
        }
    };
    if let Err(order) = factored {
        if nan_on_error {
            out.fill(T::NAN);
            return Ok(());
        }
        return Err(Error::NotPositiveDefinite {
            what: what.to_string(),
            step,
            order,
        });
    }
    // The other triangle is zero (faer may leave it as it was or write to it): row by row,
    // the part past the diagonal (lower) or before it (upper).
    for (i, mut row) in out.rows_mut().into_iter().enumerate() {
        let part = if lower { i + 1..n } else { 0..i };
        match row.as_slice_mut() {
            Some(r) => r[part].fill(T::ZERO),
            None => part.for_each(|j| row[j] = T::ZERO),
        }
    }
    Ok(())
}

/// `cho_solve((c, lower), b)`: scipy's: `x` with `a x = b` from the Cholesky factor `c`
/// of `a` (only its `lower` or upper triangle read).
#[inline(always)]
pub fn cho_solve<T: LinalgFloat, D: Rhs>(
    ws: &mut Linalg<T>,
    out: &mut Array<T, D>,
    c: ArrayView2<'_, T>,
    b: ArrayView<'_, T, D>,
    lower: bool,
    what: &str,
) -> Result<()> {
    let n = square(&c, what)?;
    check_rhs(n, &b, what)?;
    let shape = b.raw_dim();
    let k = D::matrix(b.view()).ncols();
    let factor = view_of(&mut ws.a, c, !lower);
    let st = ws.stack.sized(ScratchFor::CholeskySolve, (n, k), || {
        llt::solve::solve_in_place_scratch::<T>(n, k, Par::Seq)
    });
    if let Some(x) = solve_in_out(out, b.view(), what)? {
        llt::solve::solve_in_place(factor, x, Par::Seq, st);
        return Ok(());
    }
    load(&mut ws.x, D::matrix(b), false);
    llt::solve::solve_in_place(factor, mat_mut(&mut ws.x, n, k), Par::Seq, st);
    store(out, shape, &ws.x, n, what)
}

/// `solve(a, b, assume_a, lower)`: scipy's: `x` with `a x = b`. `General`: LU with partial
/// pivoting (an exactly zero pivot: `Err(Singular)`); `Positive`: Cholesky of the `lower`
/// (or upper) triangle (`Err(NotPositiveDefinite)`); `Symmetric`: Bunch-Kaufman of that
/// triangle (a zero pivot block: `Err(Singular)`).
#[allow(clippy::too_many_arguments)]
pub fn solve<T: LinalgFloat, D: Rhs>(
    ws: &mut Linalg<T>,
    out: &mut Array<T, D>,
    a: ArrayView2<'_, T>,
    b: ArrayView<'_, T, D>,
    assume: Assume,
    lower: bool,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let n = square(&a, what)?;
    check_rhs(n, &b, what)?;
    let shape = b.raw_dim();
    let b = D::matrix(b);
    let k = b.ncols();
    let singular = |pivot| Error::Singular {
        what: what.to_string(),
        step,
        pivot,
    };
    match assume {
        Assume::General => {
            load(&mut ws.a, a, false);
            if let (_, Some(pivot)) = ws.lu(n) {
                return Err(singular(pivot));
            }
            load(&mut ws.x, b, false);
            ws.lu_solve(n, k);
        }
        Assume::Positive => {
            load(&mut ws.a, a, !lower);
            llt_in_place(mat_mut(&mut ws.a, n, n), n, &mut ws.stack).map_err(|order| {
                Error::NotPositiveDefinite {
                    what: what.to_string(),
                    step,
                    order,
                }
            })?;
            load(&mut ws.x, b, false);
            let req = llt::solve::solve_in_place_scratch::<T>(n, k, Par::Seq);
            let st = stack(&mut ws.stack, req);
            llt::solve::solve_in_place(mat(&ws.a, n, n), mat_mut(&mut ws.x, n, k), Par::Seq, st);
        }
        Assume::Symmetric => {
            load(&mut ws.a, a, !lower);
            ws.sub.clear();
            ws.sub.resize(n, T::ZERO);
            ws.perm.resize(n, 0);
            ws.perm_inv.resize(n, 0);
            let req = bunch_kaufman::factor::cholesky_in_place_scratch::<usize, T>(
                n,
                Par::Seq,
                Default::default(),
            );
            let st = stack(&mut ws.stack, req);
            bunch_kaufman::factor::cholesky_in_place(
                mat_mut(&mut ws.a, n, n),
                ColMut::from_slice_mut(&mut ws.sub).as_diagonal_mut(),
                &mut ws.perm,
                &mut ws.perm_inv,
                Par::Seq,
                st,
                Default::default(),
            );
            // A 1x1 block of zero, or a 2x2 block [[d0, s], [s, d1]] whose determinant
            // is zero (LAPACK's sytrf reports the same).
            let mut i = 0;
            while i < n {
                let d0 = ws.a[i + i * n];
                if ws.sub[i] == T::ZERO {
                    if d0 == T::ZERO {
                        return Err(singular(i));
                    }
                    i += 1;
                } else {
                    let d1 = ws.a[(i + 1) + (i + 1) * n];
                    let s = ws.sub[i];
                    if d0.num_mul(d1).num_sub(s.num_mul(s)) == T::ZERO {
                        return Err(singular(i));
                    }
                    i += 2;
                }
            }
            load(&mut ws.x, b, false);
            let req = bunch_kaufman::solve::solve_in_place_scratch::<usize, T>(n, k, Par::Seq);
            let st = stack(&mut ws.stack, req);
            let lb = mat(&ws.a, n, n);
            let sub = faer::ColRef::from_slice(&ws.sub).as_diagonal();
            let perm = faer::perm::PermRef::new_checked(&ws.perm, &ws.perm_inv, n);
            bunch_kaufman::solve::solve_in_place(
                lb,
                lb.diagonal(),
                sub,
                perm,
                mat_mut(&mut ws.x, n, k),
                Par::Seq,
                st,
            );
        }
    }
    store(out, shape, &ws.x, n, what)
}

/// `solve_triangular(a, b, lower, trans, unit_diagonal)`: scipy's: `x` with `a x = b`
/// (`a^T x = b` with `trans`), reading only a's `lower` (or upper) triangle, its diagonal
/// taken as ones with `unit_diagonal`. A zero on the diagonal: `Err(Singular)` (LAPACK's
/// trtrs, which scipy raises).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn solve_triangular<T: LinalgFloat, D: Rhs>(
    ws: &mut Linalg<T>,
    out: &mut Array<T, D>,
    a: ArrayView2<'_, T>,
    b: ArrayView<'_, T, D>,
    lower: bool,
    trans: bool,
    unit_diagonal: bool,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let n = square(&a, what)?;
    check_rhs(n, &b, what)?;
    if !unit_diagonal {
        if let Some(pivot) = (0..n).find(|&i| a[[i, i]] == T::ZERO) {
            return Err(Error::Singular {
                what: what.to_string(),
                step,
                pivot,
            });
        }
    }
    let shape = b.raw_dim();
    let k = D::matrix(b.view()).ncols();
    let t = view_of(&mut ws.a, a, trans);
    let solve = |x: MatMut<'_, T>| match (lower != trans, unit_diagonal) {
        (true, false) => triangular_solve::solve_lower_triangular_in_place(t, x, Par::Seq),
        (true, true) => triangular_solve::solve_unit_lower_triangular_in_place(t, x, Par::Seq),
        (false, false) => triangular_solve::solve_upper_triangular_in_place(t, x, Par::Seq),
        (false, true) => triangular_solve::solve_unit_upper_triangular_in_place(t, x, Par::Seq),
    };
    if let Some(x) = solve_in_out(out, b.view(), what)? {
        solve(x);
        return Ok(());
    }
    load(&mut ws.x, D::matrix(b), false);
    solve(mat_mut(&mut ws.x, n, k));
    store(out, shape, &ws.x, n, what)
}

/// `inv(a)`: numpy's: by LU with partial pivoting; an exactly zero pivot is
/// `Err(Singular)`.
pub fn inv<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    out: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let n = square(&a, what)?;
    load(&mut ws.a, a, false);
    if let (_, Some(pivot)) = ws.lu(n) {
        return Err(Error::Singular {
            what: what.to_string(),
            step,
            pivot,
        });
    }
    ws.x.clear();
    ws.x.resize(n * n, T::ZERO);
    for i in 0..n {
        ws.x[i + i * n] = T::ONE;
    }
    ws.lu_solve(n, n);
    store(out, ndarray::Ix2(n, n), &ws.x, n, what)
}

/// `slogdet(a)`: numpy's `(sign, log|det|)` from LU with partial pivoting: `(0, -inf)`
/// for a singular matrix, `(1, 0)` for an empty one.
pub fn slogdet<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    a: ArrayView2<'_, T>,
    what: &str,
) -> Result<(T, T)> {
    let n = square(&a, what)?;
    load(&mut ws.a, a, false);
    let (swaps, zero) = ws.lu(n);
    if zero.is_some() {
        return Ok((T::ZERO, Float::div(T::ZERO.num_sub(T::ONE), T::ZERO)));
    }
    let mut sign = if swaps.is_multiple_of(2) {
        T::ONE
    } else {
        T::ONE.num_neg()
    };
    let mut log = T::ZERO;
    for i in 0..n {
        let u = ws.a[i + i * n];
        if u < T::ZERO {
            sign = sign.num_neg();
        }
        log = log.num_add(u.num_abs().ln());
    }
    Ok((sign, log))
}

/// `slogdet(a)` read off `l`, the Cholesky factor of `a` that the step computed (the
/// reuse_cholesky rewrite): `(1, 2 sum(log(diag(l))))` when `a` is symmetric to rounding
/// ([`symmetric_to_rounding`]), else [`slogdet`]'s LU, as the factor is of the symmetric
/// matrix made from one of `a`'s triangles, which is `a` only then.
#[inline(always)]
pub fn slogdet_factored<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    a: ArrayView2<'_, T>,
    l: ArrayView2<'_, T>,
    what: &str,
) -> Result<(T, T)> {
    let n = square(&a, what)?;
    if l.dim() != (n, n) || !symmetric_to_rounding(&a) {
        return slogdet(ws, a, what);
    }
    let log = log_of_product((0..n).map(|i| l[[i, i]]));
    Ok((T::ONE, log.num_add(log)))
}

/// `sum(log(xs))` for non-negative `xs`, by one logarithm of their running product where
/// it stays well inside the float range (a logarithm costs as much as a 2 x 2 product; a
/// Cholesky factor's diagonal has as many as the matrix has rows), the product's log taken
/// and restarted where one more factor would leave that range. A zero gives -inf and a NaN
/// NaN, as the sum would.
#[inline(always)]
fn log_of_product<T: LinalgFloat>(xs: impl Iterator<Item = T>) -> T {
    // sqrt of the smallest normal and of the largest float: any product of two factors
    // inside stays finite and normal.
    let (low, high) = T::SAFE_PRODUCT;
    let (mut sum, mut product) = (T::ZERO, T::ONE);
    for x in xs {
        let next = product.num_mul(x);
        if next > low && next < high {
            product = next;
        } else {
            sum = sum.num_add(product.std_ln());
            product = x;
        }
    }
    sum.num_add(product.std_ln())
}

/// `det(a)` read off the Cholesky factor `l` of `a`: `prod(diag(l))^2` (see
/// [`slogdet_factored`]), else [`det`]'s LU.
pub fn det_factored<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    a: ArrayView2<'_, T>,
    l: ArrayView2<'_, T>,
    what: &str,
) -> Result<T> {
    let n = square(&a, what)?;
    if l.dim() != (n, n) || !symmetric_to_rounding(&a) {
        return det(ws, a, what);
    }
    Ok(l.diag()
        .iter()
        .fold(T::ONE, |p, &d| p.num_mul(d.num_mul(d))))
}

/// Whether the square `a` is symmetric up to rounding: each pair `a[i, j]`, `a[j, i]`
/// within `4 n eps max|a|`, the size of an LU's own rounding of the determinant (a
/// covariance made by products, `H P H^T + R`, is symmetric only to rounding).
#[inline(always)]
pub fn symmetric_to_rounding<T: LinalgFloat>(a: &ArrayView2<'_, T>) -> bool {
    let n = a.nrows();
    if a.ncols() != n {
        return false;
    }
    // One pass over the pairs: the largest magnitude and the largest difference (a NaN
    // difference fails the comparison at the end). Indexed: ndarray's row and column
    // iterators cost more than the comparisons for a step's small matrix.
    let (mut most, mut worst) = (T::ZERO, T::ZERO);
    for i in 0..n {
        let d = a[[i, i]].num_abs();
        most = if d > most { d } else { most };
        for j in 0..i {
            let (x, y) = (a[[i, j]].num_abs(), a[[j, i]].num_abs());
            most = if x > most { x } else { most };
            most = if y > most { y } else { most };
            let gap = a[[i, j]].num_sub(a[[j, i]]).num_abs();
            if gap > worst || not_finite(gap) {
                worst = gap;
            }
        }
    }
    let tolerance = T::of_count(4 * n).num_mul(T::EPS).num_mul(most);
    worst <= tolerance
}

/// `Err(NoConvergence)`: faer's iteration (of an eigendecomposition or an SVD) stopped
/// before converging (LAPACK's `info > 0`, numpy's "did not converge").
fn no_convergence(what: &str, step: Option<usize>) -> Error {
    Error::NoConvergence {
        what: what.to_string(),
        step,
    }
}

/// A NaN or an infinity (`x - x` is NaN only for those).
fn not_finite<T: LinalgFloat>(x: T) -> bool {
    x.num_sub(x) != T::ZERO
}

/// `eigh(a, UPLO)`: numpy's: the eigenvalues `w` ascending and the eigenvectors, the
/// columns of `v` (`a v = v diag(w)`, `v` orthogonal), of the symmetric matrix read from
/// a's lower triangle (`lower`, numpy's default `UPLO = "L"`) or its upper one. An
/// eigenvector is unique up to its sign (for a simple eigenvalue); here the component of
/// largest magnitude is positive (of components equal in magnitude within `sqrt(eps)`
/// relative, the first), where LAPACK's sign is whatever its iteration gave. A NaN or an
/// infinity in the triangle read gives NaNs (LAPACK's results there are NaNs or garbage).
#[allow(clippy::too_many_arguments)]
pub fn eigh<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    w: &mut Array1<T>,
    v: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    lower: bool,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let n = square(&a, what)?;
    try_ensure_shape(what, w, ndarray::Ix1(n))?;
    try_ensure_shape(what, v, ndarray::Ix2(n, n))?;
    if n == 0 {
        return Ok(());
    }
    // faer reads the lower triangle: the upper one is a^T's lower one.
    load(&mut ws.a, a, !lower);
    if (0..n).any(|j| ws.a[j * n + j..(j + 1) * n].iter().any(|&x| not_finite(x))) {
        w.fill(T::NAN);
        v.fill(T::NAN);
        return Ok(());
    }
    ws.sub.clear();
    ws.sub.resize(n, T::ZERO);
    ws.x.clear();
    ws.x.resize(n * n, T::ZERO);
    let req = evd::self_adjoint_evd_scratch::<T>(
        n,
        evd::ComputeEigenvectors::Yes,
        Par::Seq,
        Default::default(),
    );
    let st = stack(&mut ws.stack, req);
    evd::self_adjoint_evd(
        mat(&ws.a, n, n),
        ColMut::from_slice_mut(&mut ws.sub).as_diagonal_mut(),
        Some(mat_mut(&mut ws.x, n, n)),
        Par::Seq,
        st,
        Default::default(),
    )
    .map_err(|_| no_convergence(what, step))?;
    for (o, &x) in w.iter_mut().zip(&ws.sub) {
        *o = x;
    }
    for j in 0..n {
        let col = &ws.x[j * n..(j + 1) * n];
        let flip = flip_sign(col);
        for (i, &x) in col.iter().enumerate() {
            v[[i, j]] = if flip { x.num_neg() } else { x };
        }
    }
    Ok(())
}

/// Whether a vector's sign must change so that its component of largest magnitude (the
/// first of those within `sqrt(eps)` of it, relative) is positive: `eigh`'s and `svd`'s
/// sign rule, which makes a vector unique where LAPACK's sign is its iteration's.
fn flip_sign<T: LinalgFloat>(col: &[T]) -> bool {
    let largest = col.iter().fold(T::ZERO, |m, &x| {
        let x = x.num_abs();
        if x > m {
            x
        } else {
            m
        }
    });
    let bar = largest.num_sub(largest.num_mul(T::SQRT_EPS));
    col.iter()
        .find(|x| x.num_abs() >= bar)
        .is_some_and(|&x| x < T::ZERO)
}

impl<T: LinalgFloat> Linalg<T> {
    /// Householder QR of the `m x n` matrix in `self.a`, in place (faer's layout: `r` on
    /// and above the diagonal, the reflectors below, their block factors in `self.sub`);
    /// then `self.x` (`m x cols`) set to `Q`'s columns `first..first + cols`: the
    /// reflectors applied to those columns of `I`. Householder QR has no failure (a NaN
    /// gives NaNs).
    fn householder_q(&mut self, m: usize, n: usize, first: usize, cols: usize) {
        let k = m.min(n);
        let bs = qr_factor::recommended_block_size::<T>(m, n);
        self.sub.clear();
        self.sub.resize(bs * k, T::ZERO);
        self.x.clear();
        self.x.resize(m * cols, T::ZERO);
        for j in 0..cols {
            self.x[(first + j) + j * m] = T::ONE;
        }
        let req = StackReq::any_of(&[
            qr_factor::qr_in_place_scratch::<T>(m, n, bs, Par::Seq, Default::default()),
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m, bs, cols,
            ),
        ]);
        let st = stack(&mut self.stack, req);
        qr_factor::qr_in_place(
            mat_mut(&mut self.a, m, n),
            mat_mut(&mut self.sub, bs, k),
            Par::Seq,
            st,
            Default::default(),
        );
        if cols == 0 {
            return;
        }
        let st = stack(&mut self.stack, req);
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            mat(&self.a, m, n).subcols(0, k),
            mat(&self.sub, bs, k),
            faer::Conj::No,
            mat_mut(&mut self.x, m, cols),
            Par::Seq,
            st,
        );
    }

    /// `q` (when asked for) and `r` of `a`: `m x k` and `k x n` with `k = min(m, n)`
    /// (mode "reduced"), or `k = m` (mode "complete": `r`'s rows past `min(m, n)` zero).
    fn qr_into(
        &mut self,
        q: Option<&mut Array2<T>>,
        r: &mut Array2<T>,
        a: ArrayView2<'_, T>,
        complete: bool,
        what: &str,
    ) -> Result<()> {
        let (m, n) = a.dim();
        let k = if complete { m } else { m.min(n) };
        try_ensure_shape(what, r, ndarray::Ix2(k, n))?;
        let mut q = q;
        if let Some(q) = q.as_deref_mut() {
            try_ensure_shape(what, q, ndarray::Ix2(m, k))?;
        }
        if m.min(n) == 0 {
            // No reflection: q is the identity's first k columns, r is empty or zeros.
            r.fill(T::ZERO);
            if let Some(q) = q {
                for ((i, j), o) in q.indexed_iter_mut() {
                    *o = if i == j { T::ONE } else { T::ZERO };
                }
            }
            return Ok(());
        }
        load(&mut self.a, a, false);
        let cols = if q.is_some() { k } else { 0 };
        self.householder_q(m, n, 0, cols);
        if let Some(q) = q {
            for ((i, j), o) in q.indexed_iter_mut() {
                *o = self.x[i + j * m];
            }
        }
        for ((i, j), o) in r.indexed_iter_mut() {
            *o = if i <= j { self.a[i + j * m] } else { T::ZERO };
        }
        Ok(())
    }
}

/// `qr(a)`: numpy's, mode "reduced": `q` (`m x k`, orthonormal columns) and `r` (`k x n`,
/// upper triangular) with `a = q r`, `k = min(m, n)`, by Householder reflections with
/// LAPACK's signs (each reflection maps its column to `-sign(a_jj) |column|`, so `r`'s
/// diagonal is numpy's, not made positive).
pub fn qr<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    q: &mut Array2<T>,
    r: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    ws.qr_into(Some(q), r, a, false, what)
}

/// `qr(a, mode = "complete")`: numpy's: `q` `m x m` orthogonal and `r` `m x n` (rows past
/// `min(m, n)` zero), the same reflections as [`qr`]'s, so `q`'s first `k` columns and
/// `r`'s first `k` rows are the reduced mode's.
pub fn qr_complete<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    q: &mut Array2<T>,
    r: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    ws.qr_into(Some(q), r, a, true, what)
}

/// `qr(a, mode = "r")`: numpy's: `r` alone, `k x n` (the reduced mode's), `Q` not formed.
pub fn qr_r<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    r: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    ws.qr_into(None, r, a, false, what)
}

/// `svd(a, compute_uv = false)` (`svdvals(a)`): numpy's and scipy's singular values,
/// `min(m, n)` of them, descending; NaNs for a matrix with a NaN or an infinity (numpy
/// raises "SVD did not converge").
pub fn svdvals<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    out: &mut Array1<T>,
    a: ArrayView2<'_, T>,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let (m, n) = a.dim();
    let k = m.min(n);
    try_ensure_shape(what, out, ndarray::Ix1(k))?;
    if k == 0 {
        return Ok(());
    }
    load(&mut ws.a, a, false);
    if ws.a.iter().any(|&x| not_finite(x)) {
        out.fill(T::NAN);
        return Ok(());
    }
    ws.sub.clear();
    ws.sub.resize(k, T::ZERO);
    let req = svd::svd_scratch::<T>(
        m,
        n,
        svd::ComputeSvdVectors::No,
        svd::ComputeSvdVectors::No,
        Par::Seq,
        Default::default(),
    );
    let st = stack(&mut ws.stack, req);
    svd::svd(
        mat(&ws.a, m, n),
        ColMut::from_slice_mut(&mut ws.sub).as_diagonal_mut(),
        None,
        None,
        Par::Seq,
        st,
        Default::default(),
    )
    .map_err(|_| no_convergence(what, step))?;
    for (o, &x) in out.iter_mut().zip(&ws.sub) {
        *o = x;
    }
    Ok(())
}

/// `svd(a, full_matrices)`: numpy's `svd` with its vectors: `u`, the singular values `s`
/// descending and `vh` with `a = u diag(s) vh`, `k = min(m, n)`; `u` `m x k` and `vh`
/// `k x n`, or with `full_matrices` `m x m` and `n x n`. A singular vector is unique up to
/// its sign (for a simple singular value): each column of `u` has its component of
/// largest magnitude positive (`eigh`'s rule) and the row of `vh` follows it; the columns
/// of `u` (rows of `vh`) past `k` are an orthonormal basis of the rest of the space, the
/// last columns of the complete Householder `Q` of the first `k`, signed the same way
/// (numpy's are LAPACK's, another basis of the same space). NaNs for a matrix with a NaN
/// or an infinity (numpy raises "SVD did not converge").
#[allow(clippy::too_many_arguments)]
pub fn svd<T: LinalgFloat>(
    ws: &mut Linalg<T>,
    u: &mut Array2<T>,
    s: &mut Array1<T>,
    vh: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    full_matrices: bool,
    what: &str,
    step: Option<usize>,
) -> Result<()> {
    let (m, n) = a.dim();
    let k = m.min(n);
    let (u_cols, vh_rows) = if full_matrices { (m, n) } else { (k, k) };
    try_ensure_shape(what, u, ndarray::Ix2(m, u_cols))?;
    try_ensure_shape(what, s, ndarray::Ix1(k))?;
    try_ensure_shape(what, vh, ndarray::Ix2(vh_rows, n))?;
    if k == 0 {
        // No singular value: the full matrices are identities (numpy's), else empty.
        for mut x in [u.view_mut(), vh.view_mut()] {
            for ((i, j), o) in x.indexed_iter_mut() {
                *o = if i == j { T::ONE } else { T::ZERO };
            }
        }
        return Ok(());
    }
    load(&mut ws.a, a, false);
    if ws.a.iter().any(|&x| not_finite(x)) {
        u.fill(T::NAN);
        s.fill(T::NAN);
        vh.fill(T::NAN);
        return Ok(());
    }
    ws.sub.clear();
    ws.sub.resize(k, T::ZERO);
    ws.x.clear();
    ws.x.resize(m * k, T::ZERO);
    ws.v.clear();
    ws.v.resize(n * k, T::ZERO);
    let thin = svd::ComputeSvdVectors::Thin;
    let req = svd::svd_scratch::<T>(m, n, thin, thin, Par::Seq, Default::default());
    let st = stack(&mut ws.stack, req);
    svd::svd(
        mat(&ws.a, m, n),
        ColMut::from_slice_mut(&mut ws.sub).as_diagonal_mut(),
        Some(mat_mut(&mut ws.x, m, k)),
        Some(mat_mut(&mut ws.v, n, k)),
        Par::Seq,
        st,
        Default::default(),
    )
    .map_err(|_| no_convergence(what, step))?;
    for (o, &x) in s.iter_mut().zip(&ws.sub) {
        *o = x;
    }
    for j in 0..k {
        let col = &ws.x[j * m..(j + 1) * m];
        let sign = if flip_sign(col) {
            T::ONE.num_neg()
        } else {
            T::ONE
        };
        for (i, &x) in col.iter().enumerate() {
            u[[i, j]] = x.num_mul(sign);
        }
        for (i, &x) in ws.v[j * n..(j + 1) * n].iter().enumerate() {
            vh[[j, i]] = x.num_mul(sign);
        }
    }
    if full_matrices {
        ws.complement(u.view_mut(), k);
        ws.complement(vh.view_mut().reversed_axes(), k);
    }
    Ok(())
}

impl<T: LinalgFloat> Linalg<T> {
    /// The columns of `basis` past its first `k` (which are orthonormal) set to an
    /// orthonormal basis of the space those do not span: the last columns of the complete
    /// `Q` of their Householder QR, each signed by `eigh`'s rule.
    fn complement(&mut self, mut basis: ArrayViewMut2<'_, T>, k: usize) {
        let (m, total) = basis.dim();
        if total <= k {
            return;
        }
        load(&mut self.a, basis.slice(ndarray::s![.., ..k]), false);
        self.householder_q(m, k, k, total - k);
        for j in 0..total - k {
            let col = &self.x[j * m..(j + 1) * m];
            let sign = if flip_sign(col) {
                T::ONE.num_neg()
            } else {
                T::ONE
            };
            for (i, &x) in col.iter().enumerate() {
                basis[[i, k + j]] = x.num_mul(sign);
            }
        }
    }
}

/// `det(a)`: numpy's: the product of the LU factorisation's pivots, signed by its row
/// exchanges (0 for a singular matrix, 1 for an empty one).
pub fn det<T: LinalgFloat>(ws: &mut Linalg<T>, a: ArrayView2<'_, T>, what: &str) -> Result<T> {
    let n = square(&a, what)?;
    load(&mut ws.a, a, false);
    let (swaps, _) = ws.lu(n);
    let mut d = if swaps.is_multiple_of(2) {
        T::ONE
    } else {
        T::ONE.num_neg()
    };
    for i in 0..n {
        d = d.num_mul(ws.a[i + i * n]);
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array1};

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?} vs {b:?}");
        }
    }

    /// One logarithm of a running product equals the sum of the logarithms to rounding,
    /// across the whole range (factors that would overflow or underflow the product),
    /// and gives -inf for a zero and NaN for a NaN, as the sum does.
    #[test]
    fn log_of_a_product_is_the_sum_of_logs() {
        let cases: [&[f64]; 5] = [
            &[1.5, 0.25, 3.0, 7.0],
            &[1e200, 1e200, 1e-300, 2.0, 1e-300, 1e150],
            &[f64::MAX, f64::MAX, f64::MIN_POSITIVE, 5e-324, 1.0],
            &[0.5; 40],
            &[2.0, 1e-310, 3.0],
        ];
        for xs in cases {
            let sum: f64 = xs.iter().map(|x| x.ln()).sum();
            let got = log_of_product(xs.iter().copied());
            let scale: f64 = xs.iter().map(|x| x.ln().abs()).sum();
            assert!(
                (got - sum).abs() <= 8.0 * f64::EPSILON * scale,
                "{xs:?}: {got} vs {sum}"
            );
        }
        let f32s = [1e30f32, 1e30, 1e-35, 4.0];
        let sum: f32 = f32s.iter().map(|x| x.ln()).sum();
        assert!((log_of_product(f32s.iter().copied()) - sum).abs() <= 1e-4);
        assert_eq!(
            log_of_product([2.0, 0.0, 3.0].into_iter()),
            f64::NEG_INFINITY
        );
        assert!(log_of_product([2.0, f64::NAN, 3.0].into_iter()).is_nan());
    }

    /// The determinant read off a Cholesky factor: the LU's value to rounding for a
    /// symmetric matrix (also one symmetric only to rounding, as products make it), the
    /// LU's exactly for one that is not (its factor is another matrix's).
    #[test]
    fn determinants_from_a_factor_when_symmetric_to_rounding() {
        let s = array![[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]];
        let mut ws = Linalg::default();
        let mut l = Array2::zeros((0, 0));
        cholesky(&mut ws, &mut l, s.view(), true, false, "cholesky(s)", None).unwrap();
        let (sign, log) = slogdet(&mut ws, s.view(), "slogdet(s)").unwrap();
        let d = det(&mut ws, s.view(), "det(s)").unwrap();
        // By hand: 4 (3 * 2 - 1/16) - (2 - 1/8) + 0.5 (1/4 - 3/2) = 21.25.
        close(&[d], &[21.25], 1e-14);
        let (fs, fl) = slogdet_factored(&mut ws, s.view(), l.view(), "slogdet(s)").unwrap();
        close(&[fs, fl], &[sign, log], 1e-14);
        let fd = det_factored(&mut ws, s.view(), l.view(), "det(s)").unwrap();
        close(&[fd], &[d], 1e-14);
        // Off by one rounding in a pair: still read off the factor.
        let mut t = s.clone();
        t[[0, 1]] += 2.0 * f64::EPSILON;
        assert!(symmetric_to_rounding(&t.view()));
        assert_eq!(
            slogdet_factored(&mut ws, t.view(), l.view(), "slogdet(t)").unwrap(),
            (fs, fl)
        );
        // Not symmetric: the factor (of the lower triangle) is not t's; the LU's answer.
        t[[0, 1]] = 2.0;
        assert!(!symmetric_to_rounding(&t.view()));
        assert_eq!(
            slogdet_factored(&mut ws, t.view(), l.view(), "slogdet(t)").unwrap(),
            slogdet(&mut ws, t.view(), "slogdet(t)").unwrap()
        );
        assert_eq!(
            det_factored(&mut ws, t.view(), l.view(), "det(t)").unwrap(),
            det(&mut ws, t.view(), "det(t)").unwrap()
        );
        // A factor of another size (never made by the rewrite) is not read either; a
        // matrix that is not square is the LU's error.
        let small = array![[2.0]];
        assert_eq!(
            det_factored(&mut ws, s.view(), small.view(), "det(s)").unwrap(),
            d
        );
        let wide = Array2::<f64>::zeros((2, 3));
        assert!(slogdet_factored(&mut ws, wide.view(), l.view(), "slogdet(w)").is_err());
        // f32: the tolerance is f32's.
        let s32 = s.mapv(|x| x as f32);
        let mut l32 = Array2::zeros((0, 0));
        let mut ws32 = Linalg::default();
        cholesky(&mut ws32, &mut l32, s32.view(), true, false, "c", None).unwrap();
        let (_, log32) = slogdet_factored(&mut ws32, s32.view(), l32.view(), "s").unwrap();
        assert!((f64::from(log32) - log).abs() < 1e-6);
    }

    #[test]
    fn cholesky_solve_inv_det_of_a_small_matrix() {
        // numpy: np.linalg.cholesky(a), np.linalg.solve(a, b), np.linalg.det(a)
        let a = array![[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]];
        let mut ws = Linalg::default();
        let mut l = Array2::zeros((0, 0));
        cholesky(&mut ws, &mut l, a.view(), true, false, "c", None).unwrap();
        let back = l.dot(&l.t());
        close(back.as_slice().unwrap(), a.as_slice().unwrap(), 1e-14);
        assert_eq!(l[[0, 1]], 0.0);
        let mut u = Array2::zeros((0, 0));
        cholesky(&mut ws, &mut u, a.view(), false, false, "c", None).unwrap();
        close(
            u.as_slice().unwrap(),
            l.t().as_standard_layout().as_slice().unwrap(),
            1e-15,
        );
        let b = array![1.0, 2.0, 3.0];
        let mut x = Array1::zeros(0);
        solve(
            &mut ws,
            &mut x,
            a.view(),
            b.view(),
            Assume::General,
            false,
            "s",
            None,
        )
        .unwrap();
        close(a.dot(&x).as_slice().unwrap(), b.as_slice().unwrap(), 1e-14);
        for assume in [Assume::Positive, Assume::Symmetric] {
            let mut y = Array1::zeros(0);
            solve(
                &mut ws,
                &mut y,
                a.view(),
                b.view(),
                assume,
                false,
                "s",
                None,
            )
            .unwrap();
            close(y.as_slice().unwrap(), x.as_slice().unwrap(), 1e-14);
        }
        let mut y = Array1::zeros(0);
        cho_solve(&mut ws, &mut y, l.view(), b.view(), true, "s").unwrap();
        close(y.as_slice().unwrap(), x.as_slice().unwrap(), 1e-14);
        let mut ai = Array2::zeros((0, 0));
        inv(&mut ws, &mut ai, a.view(), "i", None).unwrap();
        let eye = a.dot(&ai);
        close(
            eye.as_slice().unwrap(),
            Array2::<f64>::eye(3).as_slice().unwrap(),
            1e-14,
        );
        // det = 4*(15-1) - 2*(6-0.4) + 0.4*(2-2) = 44.8
        let d = det(&mut ws, a.view(), "d").unwrap();
        close(&[d], &[44.8], 1e-14);
        let (s, l) = slogdet(&mut ws, a.view(), "d").unwrap();
        close(&[s, l], &[1.0, 44.8f64.ln()], 1e-14);
    }

    /// One workspace through factorisations and solves of several orders, back and forth
    /// (its scratch memory sized once per order and kept), the right-hand sides a
    /// transposed view (copied by index): each solution against the product it inverts.
    #[test]
    fn a_workspace_reused_across_orders_with_transposed_right_hand_sides() {
        let mut ws = Linalg::default();
        let mut l = Array2::zeros((0, 0));
        let mut x = Array2::zeros((0, 0));
        for n in [3usize, 2, 4, 2, 3, 1] {
            let m =
                Array2::from_shape_fn((n, n), |(i, j)| ((i * 7 + j * 3) % 5) as f64 * 0.3 - 0.5);
            let a = m.dot(&m.t()) + Array2::<f64>::eye(n) * n as f64;
            cholesky(&mut ws, &mut l, a.view(), true, false, "c", None).unwrap();
            close(
                l.dot(&l.t()).as_slice().unwrap(),
                a.as_slice().unwrap(),
                1e-13,
            );
            let bt = Array2::from_shape_fn((n + 1, n), |(i, j)| i as f64 - 0.5 * j as f64);
            cho_solve(&mut ws, &mut x, l.view(), bt.t(), true, "s").unwrap();
            assert_eq!(x.dim(), (n, n + 1));
            let back = a.dot(&x);
            close(
                back.as_slice().unwrap(),
                bt.t().as_standard_layout().as_slice().unwrap(),
                1e-12,
            );
        }
    }

    #[test]
    fn failures_name_the_expression_and_the_step() {
        let mut ws = Linalg::default();
        let mut out = Array2::zeros((0, 0));
        let not_pd = array![[1.0, 2.0], [2.0, 1.0]];
        let e = cholesky(
            &mut ws,
            &mut out,
            not_pd.view(),
            true,
            false,
            "cholesky(p)",
            Some(3),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`cholesky(p)` at step 3: the matrix is not positive definite (its leading minor of order 2 is not positive)"
        );
        cholesky(&mut ws, &mut out, not_pd.view(), true, true, "c", None).unwrap();
        assert!(out.iter().all(|v| v.is_nan()));
        let singular = array![[1.0, 2.0], [2.0, 4.0]];
        let b = array![1.0, 1.0];
        let mut x = Array1::zeros(0);
        let e = solve(
            &mut ws,
            &mut x,
            singular.view(),
            b.view(),
            Assume::General,
            false,
            "s",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`s`: the matrix is singular (its factorisation has a zero pivot at index 1)"
        );
        assert_eq!(det(&mut ws, singular.view(), "d").unwrap(), 0.0);
        let (s, l) = slogdet(&mut ws, singular.view(), "d").unwrap();
        assert_eq!((s, l), (0.0, f64::NEG_INFINITY));
        let wide = Array2::<f64>::zeros((2, 3));
        let e = det(&mut ws, wide.view(), "det(a)").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`det(a)` needs a square matrix, got shape [2, 3]"
        );
        let e = solve(
            &mut ws,
            &mut x,
            not_pd.view(),
            array![1.0].view(),
            Assume::General,
            false,
            "s",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot solve `s`: the matrix has shape [2, 2] but the right-hand side has shape [1] (it needs 2 rows)"
        );
    }
}
