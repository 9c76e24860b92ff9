//! Dot products by operand rank: vector·vector, vector·matrix, matrix·vector and
//! matrix·matrix, for any strides (transposed, stepped or reversed views).
//!
//! Matrix products of floats large enough to pay for packing go through matrixmultiply's
//! `sgemm`/`dgemm` with the views' real strides (its `threading` feature spreads them over
//! cores). Everything else (integers, small products, and products with a vector operand,
//! which are memory bound so packing cannot help) uses the direct loops below, which
//! allocate nothing: matrixmultiply allocates a packing buffer on every call.

use ndarray::{
    Array1, Array2, Array3, ArrayView1, ArrayView2, ArrayView3, ArrayViewMut1, ArrayViewMut2, Ix1,
    Ix2, Ix3, Zip,
};

use crate::element::Number;
use crate::error::{Error, Result};
use crate::kernels::buffer::ensure_shape;

/// Matrix products with fewer multiply-adds than this skip matrixmultiply: below it the
/// per-call packing buffer allocation and copies cost more than the faster kernel saves.
pub const GEMM_MIN_WORK: usize = 32 * 32 * 32;

/// `a · b` for two vectors of the same length.
pub fn dot_vv<T: Number>(a: ArrayView1<'_, T>, b: ArrayView1<'_, T>, what: &str) -> Result<T> {
    if a.len() != b.len() {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    Ok(dot1(a, b))
}

/// `out = a · b` for a vector `a` of length `k` and a `(k, n)` matrix `b`.
pub fn dot_vm<T: Number>(
    out: &mut Array1<T>,
    a: ArrayView1<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let (k, n) = b.dim();
    if a.len() != k {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    ensure_shape(out, Ix1(n));
    vm_into(out.view_mut(), a, b);
    Ok(())
}

/// `out = a · b` for an `(m, k)` matrix `a` and a vector `b` of length `k`.
pub fn dot_mv<T: Number>(
    out: &mut Array1<T>,
    a: ArrayView2<'_, T>,
    b: ArrayView1<'_, T>,
    what: &str,
) -> Result<()> {
    let (m, k) = a.dim();
    if b.len() != k {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    ensure_shape(out, Ix1(m));
    mv_into(out.view_mut(), a, b);
    Ok(())
}

/// `out = a · b` for an `(m, k)` matrix `a` and a `(k, n)` matrix `b`.
pub fn dot_mm<T: Number>(
    out: &mut Array2<T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    ensure_shape(out, Ix2(m, n));
    T::gemm(out.view_mut(), a, b, what)
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
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    ensure_shape(out, Ix3(t, m, n));
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

/// `out = a · b` for a stack of matrices `a` of shape `(t, m, k)` and a vector `b` of
/// length `k`: every row of every matrix dotted with `b`.
pub fn dot_stack_v<T: Number>(
    out: &mut Array2<T>,
    a: ArrayView3<'_, T>,
    b: ArrayView1<'_, T>,
    what: &str,
) -> Result<()> {
    let (t, m, k) = a.dim();
    if b.len() != k {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    ensure_shape(out, Ix2(t, m));
    for (o, a_t) in out.outer_iter_mut().zip(a.outer_iter()) {
        mv_into(o, a_t, b);
    }
    Ok(())
}

fn dot_error(what: &str, left: &[usize], right: &[usize]) -> Error {
    Error::Dot {
        what: what.to_string(),
        left: left.to_vec(),
        right: right.to_vec(),
    }
}

/// Checks the shapes a gemm entry gets (it is public through `Number::gemm`).
fn check_gemm<T>(
    out: &ArrayViewMut2<'_, T>,
    a: &ArrayView2<'_, T>,
    b: &ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    if k != k2 {
        return Err(dot_error(what, a.shape(), b.shape()));
    }
    if out.dim() != (m, n) {
        return Err(Error::ShapeMismatch {
            what: format!("output of {what}"),
            expected: vec![m, n],
            found: out.shape().to_vec(),
        });
    }
    Ok(())
}

/// The direct matrix product: each output row is `a.row(i) · b`.
pub(crate) fn gemm_loop<T: Number>(
    mut out: ArrayViewMut2<'_, T>,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    what: &str,
) -> Result<()> {
    check_gemm(&out, &a, &b, what)?;
    Zip::from(out.rows_mut())
        .and(a.rows())
        .for_each(|o, a_row| vm_into(o, a_row, b));
    Ok(())
}

/// Whether `(m, k) · (k, n)` is worth matrixmultiply's packing.
fn use_gemm(m: usize, k: usize, n: usize) -> bool {
    m > 1 && n > 1 && m.saturating_mul(k).saturating_mul(n) >= GEMM_MIN_WORK
}

macro_rules! float_gemm {
    ($name:ident, $t:ty, $gemm:path) => {
        /// Float matrix product through matrixmultiply for large products.
        pub(crate) fn $name(
            mut out: ArrayViewMut2<'_, $t>,
            a: ArrayView2<'_, $t>,
            b: ArrayView2<'_, $t>,
            what: &str,
        ) -> Result<()> {
            check_gemm(&out, &a, &b, what)?;
            let ((m, k), n) = (a.dim(), b.ncols());
            if m == 0 || n == 0 {
                return Ok(());
            }
            if k == 0 {
                // An empty sum: gemm is not called with a zero-size operand.
                out.fill(0.0);
                return Ok(());
            }
            if !use_gemm(m, k, n) {
                return gemm_loop(out, a, b, what);
            }
            let (rsa, csa) = (a.strides()[0], a.strides()[1]);
            let (rsb, csb) = (b.strides()[0], b.strides()[1]);
            let (rsc, csc) = (out.strides()[0], out.strides()[1]);
            // SAFETY: the shapes were checked above (`a` is m×k, `b` is k×n, `out` is m×n,
            // all dimensions non-zero). Each `as_ptr` is the address of element [0, 0], and
            // ndarray guarantees that every element reached from it through the view's own
            // strides (negative, zero or stepped) lies inside the view's allocation, which
            // is exactly what gemm reads and writes. `out` is a mutable view, so its
            // elements do not alias each other (no zero or overlapping strides) nor `a` or
            // `b` (the borrow checker keeps a unique borrow apart from shared ones). With
            // beta = 0 gemm never reads `out`'s previous values.
            unsafe {
                $gemm(
                    m,
                    k,
                    n,
                    1.0,
                    a.as_ptr(),
                    rsa,
                    csa,
                    b.as_ptr(),
                    rsb,
                    csb,
                    0.0,
                    out.as_mut_ptr(),
                    rsc,
                    csc,
                );
            }
            Ok(())
        }
    };
}

float_gemm!(gemm_f32, f32, matrixmultiply::sgemm);
float_gemm!(gemm_f64, f64, matrixmultiply::dgemm);

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
    use ndarray::{array, s, Array, ArrayView2};

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
    /// transposed, stepped and reversed, and with a column-major output.
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
    }

    use ndarray::ShapeBuilder;

    fn check_all_sizes<T: Number>()
    where
        i32: crate::element::Cast<T>,
    {
        for &(m, k, n) in &[
            (1, 1, 1),
            (2, 3, 4),
            (5, 1, 7),
            (3, 9, 1),
            (1, 9, 3),
            (17, 13, 11),
            // Above GEMM_MIN_WORK: matrixmultiply for floats.
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

    #[test]
    fn dot_mm_gemm_path_is_used_and_correct() {
        assert!(use_gemm(40, 33, 35));
        assert!(!use_gemm(1, 1000, 1000));
        assert!(!use_gemm(10, 10, 10));
        // A product where every element is known: ones(m, k) · ones(k, n) = k.
        let a = Array2::<f64>::ones((50, 70));
        let b = Array2::<f64>::ones((70, 60));
        let mut out = Array2::<f64>::from_elem((50, 60), f64::NAN); // beta = 0 ignores NaN
        dot_mm(&mut out, a.view(), b.view(), "a @ b").unwrap();
        assert!(out.iter().all(|&x| x == 70.0));
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
