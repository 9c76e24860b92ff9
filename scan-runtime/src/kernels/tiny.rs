//! Products of tiny matrices: `out = a · b`, `out += alpha · a · b` or `out = c + alpha ·
//! a · b`, when every dimension is at most [`TINY_MAX`] (a Kalman filter's 4 x 4
//! covariance times its 2 x 4 observation matrix). There a GEMM library's fixed costs are
//! most of the product: faer plans each call, turns a row-major problem into its
//! column-major transpose, and copies an operand its kernel cannot read in place.
//! Measured on a 2-core Intel Xeon (f64, one call in a loop, the call's overhead
//! included): 4 x 4 times 4 x 4 27 ns through faer and 80 ns when `b` is a transposed view
//! (`f.t()`), 21 and 30 ns here; 4 x 4 times a vector 32 and 13 ns; 16 x 16 times 16 x 16
//! 217 and 200 ns.
//!
//! The kernels: a product with one column takes each row of `a` times it along `k`, four
//! rows at a time. Otherwise `b`'s rows are read in place when they are contiguous, else
//! copied into a block on the stack, the last vector of each by a masked load; `R` rows
//! of `a` at a time, each element broadcast and multiplied into the row's `V` vectors of
//! 256 bits by fused multiply-adds (`R x V` independent sums, which the out-of-order core
//! overlaps). Each output element is a sum over `k` (in order, or in lanes for a column),
//! then multiplied by `alpha` and added to the addend in one fused multiply-add; like any
//! GEMM's, it may differ from another backend's in the last bits. AVX2 and FMA are
//! required, detected at run time; without them the product goes to the backend. (LLVM
//! ends the kernels with `vzeroupper`, so no `dot::clear_upper_state` is needed after
//! them, unlike after faer's.)

use ndarray::{ArrayView2, ArrayViewMut2};

/// The largest `m`, `k` and `n` the tiny kernels take.
pub const TINY_MAX: usize = 16;

/// What a tiny product does with its output.
#[derive(Clone, Copy, Debug)]
pub enum Into<'c, T> {
    /// `out = a · b`.
    Replace,
    /// `out += alpha · a · b`.
    Add(T),
    /// `out = c + alpha · a · b`, `c` of `out`'s shape (a dot-add's addend, read in place
    /// rather than copied into `out` first).
    AddTo(ArrayView2<'c, T>, T),
}

/// The float types with a tiny-product kernel.
pub trait Tiny: Copy {
    /// `a · b` into `out` as `into` says, shapes already checked (`out` is `m x n`, `a` `m
    /// x k`, `b` `k x n`, an addend `m x n`). `false`, with `out` untouched, when the
    /// product is not tiny (`m < 2`, a dimension zero or past [`TINY_MAX`]) or the CPU
    /// lacks AVX2 and FMA.
    fn tiny_product(
        out: &mut ArrayViewMut2<'_, Self>,
        a: ArrayView2<'_, Self>,
        b: ArrayView2<'_, Self>,
        into: Into<'_, Self>,
    ) -> bool;
}

/// A matrix's first element and strides, as the kernels read it.
type Raw<T> = (*const T, (isize, isize));

fn raw<T>(v: &ArrayView2<'_, T>) -> Raw<T> {
    (v.as_ptr(), (v.strides()[0], v.strides()[1]))
}

/// Whether an `(m, k) · (k, n)` product is one the kernels take (the CPU aside). One row
/// (a vector times a matrix) stays on the direct loop, which is as fast there.
#[inline]
fn is_tiny(m: usize, k: usize, n: usize) -> bool {
    (2..=TINY_MAX).contains(&m) && (1..=TINY_MAX).contains(&k) && (1..=TINY_MAX).contains(&n)
}

macro_rules! tiny_impl {
    ($t:ty, $int:ty, $lanes:literal, $kernel:ident, $mv:ident, $run:ident, $mask:ident, $zero:ident,
     $load:ident, $set1:ident, $fma:ident, $store:ident, $maskload:ident) => {
        /// The mask of a vector's first `count` lanes (-1: read by a masked load; 0: not).
        ///
        /// # Safety
        /// The CPU has AVX2.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn $mask(count: usize) -> std::arch::x86_64::__m256i {
            let mut bits = [0 as $int; $lanes];
            for (j, bit) in bits.iter_mut().enumerate() {
                *bit = if j < count { -1 } else { 0 };
            }
            // SAFETY: `bits` holds one vector of 256 bits.
            unsafe { std::arch::x86_64::_mm256_loadu_si256(bits.as_ptr().cast()) }
        }

        /// `out = a · b` (or `out += alpha · a · b`) for a column `b`: each row of `a`
        /// times `b` along `k`, four rows at a time, `k`'s last part by a masked load.
        ///
        /// # Safety
        /// The CPU has AVX2 and FMA. `a` points at element `[0, 0]` of an `m x k` matrix
        /// whose rows (`rsa` apart) are contiguous, `b` at `k` contiguous elements, `out`
        /// at the first of `m` elements `so` apart that nothing else writes during the
        /// call, and with `alpha`, `c` at the first of `m` readable elements `sc` apart
        /// (`out`'s own, or memory `out` does not overlap); `m >= 1`.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $mv(
            out: *mut $t,
            so: isize,
            a: *const $t,
            rsa: isize,
            b: *const $t,
            (m, k): (usize, usize),
            alpha: Option<$t>,
            (c, sc): (*const $t, isize),
        ) {
            use std::arch::x86_64::*;
            const R: usize = 4;
            // The last part's lanes: `k % lanes` of them.
            let rest = k % $lanes;
            // SAFETY: the caller's CPU has AVX2.
            let mask = unsafe { $mask(rest) };
            let whole = k / $lanes;
            let mut i = 0;
            while i < m {
                let mut rows = [0isize; R];
                for (r, row) in rows.iter_mut().enumerate() {
                    *row = (i + r).min(m - 1) as isize * rsa;
                }
                let mut sums = [$zero(); R];
                for v in 0..whole {
                    // SAFETY: elements `v * lanes .. (v + 1) * lanes <= k` of `b` and of
                    // each row.
                    let x = unsafe { $load(b.add(v * $lanes)) };
                    for r in 0..R {
                        let y = unsafe { $load(a.offset(rows[r]).add(v * $lanes)) };
                        sums[r] = $fma(y, x, sums[r]);
                    }
                }
                if rest > 0 {
                    let at = whole * $lanes;
                    // SAFETY: the mask reads only elements `at .. k` (masked lanes are not
                    // accessed, so they cannot fault).
                    let x = unsafe { $maskload(b.add(at), mask) };
                    for r in 0..R {
                        let y = unsafe { $maskload(a.offset(rows[r]).add(at), mask) };
                        sums[r] = $fma(y, x, sums[r]);
                    }
                }
                for (r, &sum) in sums.iter().enumerate().take(m - i) {
                    let mut lanes = [0.0 as $t; $lanes];
                    // SAFETY: `lanes` holds one vector.
                    unsafe { $store(lanes.as_mut_ptr(), sum) };
                    let x = lanes.iter().fold(0.0 as $t, |s, &l| s + l);
                    let at = (i + r) as isize;
                    // SAFETY: element `i + r < m` of `out` and of `c`.
                    unsafe {
                        *out.offset(at * so) = match alpha {
                            None => x,
                            Some(alpha) => alpha.mul_add(x, *c.offset(at * sc)),
                        };
                    }
                }
                i += R;
            }
        }

        /// `R` rows of `a` at a time times `b` (its rows `V` vectors wide), into `out`
        /// (`out = c + alpha · a · b` with `alpha`).
        ///
        /// # Safety
        /// The CPU has AVX2 and FMA. `a` points at element `[0, 0]` of an `m x k` matrix
        /// with strides `(rsa, csa)`, `out` at that of an `m x n` one with strides
        /// `(rso, cso)` that nothing else writes during the call, with `alpha` `c` at
        /// that of a readable `m x n` one with strides `(rsc, csc)` (`out` itself, or
        /// memory `out` does not overlap), and `b` at the first of `k` rows `rsb` apart,
        /// each with `n` readable elements (its last vector is read with a mask); `m >=
        /// 1` and `(V - 1) * lanes < n <= V * lanes`.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $kernel<const V: usize, const R: usize>(
            out: *mut $t,
            (rso, cso): (isize, isize),
            a: *const $t,
            (rsa, csa): (isize, isize),
            b: *const $t,
            rsb: isize,
            (m, k, n): (usize, usize, usize),
            alpha: Option<$t>,
            (c, (rsc, csc)): Raw<$t>,
        ) {
            use std::arch::x86_64::*;
            // The last vector's lanes: `n - (V - 1) * lanes` of them.
            // SAFETY: the caller's CPU has AVX2.
            let mask = unsafe { $mask(n - (V - 1) * $lanes) };
            let mut i = 0;
            while i < m {
                // Rows past `m` repeat the last one: computed, not stored.
                let mut rows = [0isize; R];
                for (r, row) in rows.iter_mut().enumerate() {
                    *row = (i + r).min(m - 1) as isize * rsa;
                }
                let mut acc = [[$zero(); V]; R];
                for p in 0..k {
                    // SAFETY: row `p < k` of `b` has `n` readable elements.
                    let brow = unsafe { b.offset(p as isize * rsb) };
                    let mut bv = [$zero(); V];
                    for (v, x) in bv.iter_mut().enumerate() {
                        // SAFETY: as above: the vectors before the last are whole (`(v +
                        // 1) * lanes <= (V - 1) * lanes < n`); the last reads only its
                        // lanes below `n` (masked lanes are not accessed).
                        *x = unsafe {
                            if v + 1 < V {
                                $load(brow.add(v * $lanes))
                            } else {
                                $maskload(brow.add(v * $lanes), mask)
                            }
                        };
                    }
                    let at = p as isize * csa;
                    for r in 0..R {
                        // SAFETY: `rows[r]` is a row `< m` and `p < k`: an element of `a`.
                        let x = $set1(unsafe { *a.offset(rows[r] + at) });
                        for v in 0..V {
                            acc[r][v] = $fma(x, bv[v], acc[r][v]);
                        }
                    }
                }
                for (r, sums) in acc.iter().enumerate().take(m - i) {
                    let at = (i + r) as isize;
                    // SAFETY: row `i + r < m` of `out` (which the caller lets this call
                    // write) and of `c`.
                    let (row, add) = unsafe { (out.offset(at * rso), c.offset(at * rsc)) };
                    let whole = if cso == 1 && (alpha.is_none() || csc == 1) {
                        n / $lanes
                    } else {
                        0
                    };
                    for (v, &s) in sums.iter().enumerate().take(whole) {
                        // SAFETY: columns `v * lanes .. (v + 1) * lanes <= n`, contiguous.
                        unsafe {
                            let s = match alpha {
                                None => s,
                                Some(alpha) => $fma($set1(alpha), s, $load(add.add(v * $lanes))),
                            };
                            $store(row.add(v * $lanes), s);
                        }
                    }
                    let mut values = [0.0 as $t; 4 * $lanes];
                    for (v, &s) in sums.iter().enumerate().skip(whole) {
                        // SAFETY: `values` holds 4 vectors and `V <= 4`.
                        unsafe { $store(values.as_mut_ptr().add(v * $lanes), s) };
                    }
                    for (j, &x) in values[..n].iter().enumerate().skip(whole * $lanes) {
                        let j = j as isize;
                        // SAFETY: column `j < n` of the row, in `out` and in `c`.
                        unsafe {
                            *row.offset(j * cso) = match alpha {
                                None => x,
                                Some(alpha) => alpha.mul_add(x, *add.offset(j * csc)),
                            };
                        }
                    }
                }
                i += R;
            }
        }

        /// The product after `tiny_product`'s checks, out of line. Inlined at every
        /// product of a step (its stack block, copy loops and four kernel calls), it made
        /// a Kalman filter's generated function 53 KB of code (42 KB now), where the
        /// step's hot code (26 KB) does not stay in a Zen 3 core's op cache; the arguments
        /// are plain values. Measured on an AMD EPYC Zen 3 (`scan-bench kalman --threads
        /// 1`, four alternations): scan 5.53-6.09 ms -> 5.49-5.54, the hand-written loop
        /// unchanged.
        ///
        /// # Safety
        /// The CPU has AVX2 and FMA; `a` (`m x k`), `b` (`k x n`), `out` and `c` (`m x
        /// n`) are views' first elements and strides with `2 <= m`, `1 <= k, n` and all
        /// three at most [`TINY_MAX`]; `out` is written through nothing else during the
        /// call and `c` (read when `alpha` is given) is `out` itself or memory `out` does
        /// not overlap.
        #[cfg(target_arch = "x86_64")]
        #[inline(never)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $run(
            o: *mut $t,
            so: (isize, isize),
            (pa, (rsa, csa)): Raw<$t>,
            (pb, (sb0, sb1)): Raw<$t>,
            (m, k, n): (usize, usize, usize),
            alpha: Option<$t>,
            c: Raw<$t>,
        ) {
            if n == 1 && csa == 1 && (sb0 == 1 || k == 1) {
                // SAFETY: the caller's CPU has AVX2 and FMA; `a`'s rows and `b`'s column
                // are contiguous (checked just above); `out` is `m x 1` and `c` as the
                // caller says.
                unsafe { $mv(o, so.0, pa, rsa, pb, (m, k), alpha, (c.0, c.1 .0)) };
                return;
            }
            const WIDTH: usize = 4 * $lanes;
            let vectors = n.div_ceil($lanes);
            // `b`'s rows in place when contiguous, else copied into a block on the stack
            // (not zeroed: the kernel reads only the first `n` of each row, and zeroing
            // two kilobytes a call would cost more than a 4 x 4 product).
            let mut block = std::mem::MaybeUninit::<[[$t; WIDTH]; TINY_MAX]>::uninit();
            let (rows, rsb) = if sb1 == 1 || n == 1 {
                (pb, sb0)
            } else {
                let dst = block.as_mut_ptr().cast::<$t>();
                // SAFETY: `p < k <= TINY_MAX` and `j < n <= WIDTH`: inside `block` and
                // an element `(p, j)` of `b`. The loop order reads `b` along its
                // contiguous axis.
                unsafe {
                    if sb0 == 1 {
                        for j in 0..n {
                            let col = pb.offset(j as isize * sb1);
                            for p in 0..k {
                                dst.add(p * WIDTH + j).write(*col.add(p));
                            }
                        }
                    } else {
                        for p in 0..k {
                            let row = pb.offset(p as isize * sb0);
                            for j in 0..n {
                                dst.add(p * WIDTH + j).write(*row.offset(j as isize * sb1));
                            }
                        }
                    }
                }
                (dst.cast_const(), WIDTH as isize)
            };
            let (sa, dims) = ((rsa, csa), (m, k, n));
            // SAFETY: the caller's CPU has AVX2 and FMA. `a`, `out`, `c` and the rows are
            // as the kernel requires: the views' first elements and strides, `out` and `c`
            // as the caller says; the rows are `b`'s own when its columns are contiguous
            // (or it has one), else the block's, written above for every `p < k` and `j <
            // n`; `vectors` covers `n` (at most four vectors: `n <= TINY_MAX`).
            unsafe {
                match vectors {
                    1 => $kernel::<1, 4>(o, so, pa, sa, rows, rsb, dims, alpha, c),
                    2 => $kernel::<2, 4>(o, so, pa, sa, rows, rsb, dims, alpha, c),
                    3 => $kernel::<3, 3>(o, so, pa, sa, rows, rsb, dims, alpha, c),
                    _ => $kernel::<4, 2>(o, so, pa, sa, rows, rsb, dims, alpha, c),
                }
            }
        }

        impl Tiny for $t {
            #[inline(always)]
            fn tiny_product(
                out: &mut ArrayViewMut2<'_, $t>,
                a: ArrayView2<'_, $t>,
                b: ArrayView2<'_, $t>,
                into: Into<'_, $t>,
            ) -> bool {
                let ((m, k), n) = (a.dim(), b.ncols());
                let addend_fits = match into {
                    Into::AddTo(c, _) => c.dim() == (m, n),
                    _ => true,
                };
                // The shapes are checked again: the kernels' memory safety rests on them.
                if !is_tiny(m, k, n)
                    || b.nrows() != k
                    || out.dim() != (m, n)
                    || !addend_fits
                    || !super::isa::has_avx2_fma()
                {
                    return false;
                }
                #[cfg(target_arch = "x86_64")]
                {
                    let so = (out.strides()[0], out.strides()[1]);
                    let o = out.as_mut_ptr();
                    // The addend: `out` itself for `Add`.
                    let (alpha, c) = match into {
                        Into::Replace => (None, (o.cast_const(), so)),
                        Into::Add(alpha) => (Some(alpha), (o.cast_const(), so)),
                        Into::AddTo(c, alpha) => (Some(alpha), raw(&c)),
                    };
                    let (pa, sa) = raw(&a);
                    let (pb, sb) = raw(&b);
                    // SAFETY: AVX2 and FMA were detected above; the shapes were checked
                    // above (`out` is `m x n`, `a` `m x k`, `b` `k x n`, `c` of `out`'s
                    // shape) and are all at most TINY_MAX; `out` is borrowed uniquely, `c`
                    // (with `alpha`) is `out` or a shared view of its shape, which cannot
                    // overlap a unique borrow; each pointer is its view's first element.
                    unsafe { $run(o, so, (pa, sa), (pb, sb), (m, k, n), alpha, c) };
                    true
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    let _ = (out, into);
                    false
                }
            }
        }
    };
}

tiny_impl!(
    f64,
    i64,
    4,
    kernel_f64,
    mv_f64,
    run_f64,
    mask_f64,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_set1_pd,
    _mm256_fmadd_pd,
    _mm256_storeu_pd,
    _mm256_maskload_pd
);
tiny_impl!(
    f32,
    i32,
    8,
    kernel_f32,
    mv_f32,
    run_f32,
    mask_f32,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_fmadd_ps,
    _mm256_storeu_ps,
    _mm256_maskload_ps
);

#[cfg(test)]
mod tests {
    use ndarray::{s, Array2, ArrayView2};

    use super::*;

    /// The product by definition, in f64.
    fn naive(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Array2<f64> {
        Array2::from_shape_fn((a.nrows(), b.ncols()), |(i, j)| {
            (0..a.ncols()).map(|p| a[[i, p]] * b[[p, j]]).sum()
        })
    }

    fn matrix(rows: usize, cols: usize, seed: usize) -> Array2<f64> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * 7 + j * 13 + seed * 29) % 17) as f64 / 4.0 - 2.0
        })
    }

    /// Every size up to past `TINY_MAX`, each operand row-major, transposed, strided or
    /// reversed, and the output row-major or a transposed view, for `T` in both forms: the
    /// result equals the naive product (exactly: these values' products and sums are exact
    /// in f32 and f64), or the call declines, leaving `out` as it was, for shapes that are
    /// not tiny.
    fn check<T: Tiny + Copy + Default + PartialEq + std::fmt::Debug + 'static>(to: fn(f64) -> T) {
        let cast = |x: &Array2<f64>| x.mapv(to);
        for m in 1..=TINY_MAX + 1 {
            for k in [1, 2, 3, 4, 5, 8, 9, 16, 17] {
                for n in [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17] {
                    let a = matrix(m, k, 1);
                    let b = matrix(k, n, 2);
                    let expected = naive(a.view(), b.view());
                    let a_t = cast(&a.t().to_owned());
                    let b_t = cast(&b.t().to_owned());
                    let a_wide = cast(&Array2::from_shape_fn((m, 2 * k), |(i, j)| {
                        if j % 2 == 0 {
                            a[[i, j / 2]]
                        } else {
                            99.0
                        }
                    }));
                    let b_rev = cast(&b.slice(s![..;-1, ..;-1]).to_owned());
                    let (a_c, b_c) = (cast(&a), cast(&b));
                    let lefts = [a_c.view(), a_t.t(), a_wide.slice(s![.., ..;2])];
                    let rights = [b_c.view(), b_t.t(), b_rev.slice(s![..;-1, ..;-1])];
                    let tiny = is_tiny(m, k, n) && crate::kernels::isa::has_avx2_fma();
                    // The addend of `AddTo`: its own matrix, in standard order and
                    // transposed.
                    let addend = cast(&matrix(m, n, 4));
                    let addend_t = addend.t().to_owned();
                    let start = cast(&matrix(m, n, 3));
                    for (li, left) in lefts.iter().enumerate() {
                        for (ri, right) in rights.iter().enumerate() {
                            for (form, into) in [
                                (0, Into::Replace),
                                (1, Into::Add(to(1.0))),
                                (2, Into::Add(to(-1.0))),
                                (3, Into::AddTo(addend.view(), to(1.0))),
                                (4, Into::AddTo(addend_t.t(), to(-1.0))),
                            ] {
                                let want = match form {
                                    0 => expected.clone(),
                                    1 => matrix(m, n, 3) + &expected,
                                    2 => matrix(m, n, 3) - &expected,
                                    3 => matrix(m, n, 4) + &expected,
                                    _ => matrix(m, n, 4) - &expected,
                                };
                                let mut out = start.clone();
                                let mut out_t = start.t().to_owned();
                                let taken =
                                    T::tiny_product(&mut out.view_mut(), *left, *right, into);
                                let taken_t = T::tiny_product(
                                    &mut out_t.view_mut().reversed_axes(),
                                    *left,
                                    *right,
                                    into,
                                );
                                let case = format!("{m}x{k}x{n} left {li} right {ri} form {form}");
                                assert_eq!(taken, tiny, "{case}");
                                assert_eq!(taken_t, tiny, "{case}");
                                let want = if tiny { cast(&want) } else { start.clone() };
                                assert_eq!(out, want, "{case}");
                                assert_eq!(out_t.t(), want, "{case} (output transposed)");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Shapes that disagree are declined, not read past: the kernels' memory safety rests
    /// on the checks in `tiny_product`, a safe function.
    #[test]
    fn mismatched_shapes_are_declined() {
        let (a, b) = (matrix(4, 4, 1), matrix(4, 4, 2));
        let mut small = Array2::<f64>::zeros((3, 4));
        assert!(!f64::tiny_product(
            &mut small.view_mut(),
            a.view(),
            b.view(),
            Into::Replace
        ));
        let mut out = Array2::<f64>::zeros((4, 4));
        let c = matrix(4, 3, 3);
        assert!(!f64::tiny_product(
            &mut out.view_mut(),
            a.view(),
            b.view(),
            Into::AddTo(c.view(), 1.0)
        ));
        let b3 = matrix(3, 4, 2);
        assert!(!f64::tiny_product(
            &mut out.view_mut(),
            a.view(),
            b3.view(),
            Into::Replace
        ));
        assert_eq!(out, Array2::<f64>::zeros((4, 4)));
    }

    #[test]
    fn tiny_products_f64() {
        check::<f64>(|x| x);
    }

    #[test]
    fn tiny_products_f32() {
        check::<f32>(|x| x as f32);
    }
}
