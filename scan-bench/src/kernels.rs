//! Building blocks of the hand-written baselines: matrix products through faer (which picks
//! AVX2/AVX-512 kernels at run time and parallelizes by its global setting), and tanh,
//! sigmoid and exp written as straight-line arithmetic (no branches, no libm calls) so that
//! LLVM vectorizes a loop over a slice: with AVX-512 or AVX2 inside `with_best_isa` (the
//! runtime's run-time choice, which the loops calling them use), else with SSE2.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef};
pub use scan_runtime::kernels::isa::with_best_isa;
use scan_runtime::ndarray::{Array1, ArrayView2};

/// The float types the baselines multiply.
pub trait Float: faer::traits::ComplexField + Copy {
    const ONE: Self;
}

impl Float for f32 {
    const ONE: f32 = 1.0;
}

impl Float for f64 {
    const ONE: f64 = 1.0;
}

/// `dst (m x n) = lhs (m x k) · rhs (k x n)`, or `+=` with `accumulate`; all row-major and
/// contiguous. Uses faer's global parallelism (set from `--threads`).
pub fn gemm<T: Float>(
    dst: &mut [T],
    lhs: &[T],
    rhs: &[T],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    let dst = MatMut::from_row_major_slice_mut(&mut dst[..m * n], m, n);
    let lhs = MatRef::from_row_major_slice(&lhs[..m * k], m, k);
    let rhs = MatRef::from_row_major_slice(&rhs[..k * n], k, n);
    let accum = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    matmul(dst, accum, lhs, rhs, T::ONE, faer::get_global_parallelism());
    // faer's kernels leave the upper AVX state dirty; SSE code after them (libm, the
    // SSE2-built loops) would pay for it on every instruction. The runtime does the same.
    scan_runtime::kernels::dot::clear_upper_state();
}

thread_local! {
    /// [`scratch`]'s buffers, kept from one call to the next on this thread.
    static SCRATCH: std::cell::RefCell<Vec<Array1<f32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `dst (m x n) = a^T · b` for row-major `a` (`rows x m`) and `b` (`rows x n`), `dst`
/// row-major (a weight gradient: the inputs of every step transposed times their
/// adjoints). `a` is copied transposed first, into a [`scratch`] buffer: faer multiplies
/// a column-major left operand into a row-major output far below its rate (512 x 4096 x
/// 2048: 28.7 GFLOP/s, 33.2 with the copy; 4096 x 512 x 2048: 11.0 and 32.7; measured
/// on a 2-core AMD EPYC (Zen 1), see scan-runtime's `kernels::dot`, which does the same).
pub fn gemm_tn(dst: &mut [f32], a: &[f32], b: &[f32], rows: usize, m: usize, n: usize) {
    let mut at = scratch(m * rows);
    let at_slice = at.as_slice_mut().expect("contiguous");
    let a = ArrayView2::from_shape((rows, m), &a[..rows * m]).expect("rows x m");
    scan_runtime::kernels::dot::transpose_into(at_slice, a.t());
    gemm(dst, at_slice, b, m, rows, n, false);
    keep(at);
}

/// A buffer of `len` f32 for a hand-written loop's own intermediate values (not its
/// results), on a cache line (`inputs::aligned_zeros`), the memory of one given back by
/// [`keep`] on an earlier call when one has that length: its pages are mapped already,
/// where fresh memory faults every page in again (a performance engineer's loop called
/// again and again keeps its workspace, as the generated code keeps its large buffers in
/// `scan_runtime::kernels::pool`). Its contents are whatever the last user left: the
/// caller writes every element before reading it.
pub fn scratch(len: usize) -> Array1<f32> {
    SCRATCH
        .with(|kept| {
            let mut kept = kept.borrow_mut();
            let at = kept.iter().position(|v| v.len() == len)?;
            Some(kept.swap_remove(at))
        })
        .unwrap_or_else(|| crate::inputs::aligned_zeros(len))
}

/// Gives a [`scratch`] buffer back for the next call (at most 8 are kept).
pub fn keep(v: Array1<f32>) {
    SCRATCH.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() >= 8 {
            kept.remove(0);
        }
        kept.push(v);
    });
}

// ---------------------------------------------------------------------------------------
// f32
// ---------------------------------------------------------------------------------------

/// exp(x) for f32, about 1 ulp: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2),
/// e^r by its Taylor series to r^7 (truncation < 6e-9 relative), 2^n put into the exponent
/// bits. n is rounded with the 1.5 * 2^23 trick instead of `floor` (which SSE2 lacks), so
/// the whole function is a few multiplies and adds. Inputs are clamped to [-87, 88]: the
/// result stays a normal float.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const SHIFTER: f32 = 12_582_912.0; // 1.5 * 2^23
    let x = x.clamp(-87.0, 88.0);
    let big = x * std::f32::consts::LOG2_E + SHIFTER;
    let n = big.to_bits() as i32 - SHIFTER.to_bits() as i32;
    let nf = big - SHIFTER;
    // Cephes' split of ln 2: the high part has 9 significant bits, so nf * LN2_HI is exact.
    const LN2_HI: f32 = f32::from_bits(0x3f31_8000); // 0.693359375
    const LN2_LO: f32 = f32::from_bits(0xb95e_8083); // -2.12194440e-4
    let r = x - nf * LN2_HI - nf * LN2_LO;
    let p = 1.0 / 5040.0;
    let p = p * r + 1.0 / 720.0;
    let p = p * r + 1.0 / 120.0;
    let p = p * r + 1.0 / 24.0;
    let p = p * r + 1.0 / 6.0;
    let p = p * r + 0.5;
    let p = p * r + 1.0;
    let p = p * r + 1.0;
    p * f32::from_bits(((n + 127) as u32) << 23)
}

/// tanh(x) for f32, within about 1.5e-7 relative (`tests::tanh_f32_is_accurate`): Cody and
/// Waite's rational form `f + f g P(g)/Q(g)` below ln(3)/2, `1 - 2/(e^{2f} + 1)` above (no
/// cancellation there since the result is > 0.5), both computed and one selected so the
/// loop stays branch-free; sign restored at the end.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let f = x.abs().min(9.1); // tanh(9.1) rounds to 1 in f32
    let g = f * f;
    let small = f + f * (g * (-3.831_010_7e-3 * g - 0.823_772_8) / (g + 2.471_319_6));
    let large = 1.0 - 2.0 / (exp_f32(f + f) + 1.0);
    let r = if f < 0.549_306_1 { small } else { large };
    r.copysign(x)
}

/// sigmoid(x) = 1 / (1 + e^{-x}) for f32; relative error a few ulp wherever the result is
/// a normal float.
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    1.0 / (1.0 + exp_f32(-x))
}

// ---------------------------------------------------------------------------------------
// f64
// ---------------------------------------------------------------------------------------

/// exp(x) for f64, a few ulp: the same scheme as [`exp_f32`] with the Taylor series to r^13
/// (truncation < 2e-17 relative) and the 1.5 * 2^52 rounding trick; inputs clamped to
/// [-708, 709].
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    const SHIFTER: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    let x = x.clamp(-708.0, 709.0);
    let big = x * std::f64::consts::LOG2_E + SHIFTER;
    let n = big.to_bits() as i64 - SHIFTER.to_bits() as i64;
    let nf = big - SHIFTER;
    // fdlibm's split of ln 2: the high part has 32 significant bits, so nf * LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let r = x - nf * LN2_HI - nf * LN2_LO;
    let mut p = 1.0 / 6_227_020_800.0; // 1/13!
    for d in [
        479_001_600.0, // 12!
        39_916_800.0,
        3_628_800.0,
        362_880.0,
        40_320.0,
        5_040.0,
        720.0,
        120.0,
        24.0,
        6.0,
        2.0,
        1.0,
        1.0,
    ] {
        p = p * r + 1.0 / d;
    }
    p * f64::from_bits(((n + 1023) as u64) << 52)
}

/// tanh(x) for f64 within a few ulp: Cody and Waite's rational form for |x| < ln(3)/2,
/// `1 - 2/(e^{2|x|} + 1)` above, branch-free as in [`tanh_f32`].
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let f = x.abs().min(19.1); // tanh(19.1) rounds to 1 in f64
    let g = f * f;
    let p =
        ((-0.964_374_927_772_254_7 * g - 99.225_929_672_236_08) * g - 1_613.411_902_399_622_8) * g;
    let q =
        ((g + 112.744_743_805_349_49) * g + 2_233.772_071_896_231_3) * g + 4_840.235_707_198_869;
    let small = f + f * (p / q);
    let large = 1.0 - 2.0 / (exp_f64(f + f) + 1.0);
    let r = if f < 0.549_306_144_334_054_8 {
        small
    } else {
        large
    };
    r.copysign(x)
}

/// `xs[i] = tanh(xs[i])`, vectorized with the best instruction set of the CPU (chosen at
/// run time, as the runtime's maps do).
pub fn tanh_in_place_f64(xs: &mut [f64]) {
    with_best_isa(
        #[inline(always)]
        || {
            for x in xs {
                *x = tanh_f64(*x);
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest relative error of `f` against the f64 reference over a dense grid of
    /// [-lim, lim] and a few tiny values and branch edges.
    fn worst(f: impl Fn(f64) -> f64, reference: impl Fn(f64) -> f64, lim: f64) -> f64 {
        let n = 400_000;
        let grid = (0..=n).map(|i| -lim + 2.0 * lim * i as f64 / n as f64);
        let extra = [1e-30, 1e-8, 3e-4, 0.549, 0.5494, 30.0, 100.0, 1000.0];
        grid.chain(extra.iter().copied())
            .chain(extra.iter().map(|v| -v))
            .filter(|x| x.abs() <= lim)
            .map(|x| {
                let r = reference(x);
                ((f(x) - r) / r.abs().max(f64::MIN_POSITIVE)).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn tanh_f32_is_accurate() {
        let e = worst(
            |x| tanh_f32(x as f32) as f64,
            |x| (x as f32 as f64).tanh(),
            12.0,
        );
        assert!(e < 2e-7, "tanh_f32 relative error {e}");
    }

    #[test]
    fn sigmoid_and_exp_f32_are_accurate() {
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        let e = worst(
            |x| sigmoid_f32(x as f32) as f64,
            |x| sig(x as f32 as f64),
            80.0,
        );
        assert!(e < 3e-7, "sigmoid_f32 relative error {e}");
        let e = worst(
            |x| exp_f32(x as f32) as f64,
            |x| (x as f32 as f64).exp(),
            80.0,
        );
        assert!(e < 3e-7, "exp_f32 relative error {e}");
    }

    #[test]
    fn tanh_and_exp_f64_are_accurate() {
        let e = worst(tanh_f64, f64::tanh, 25.0);
        assert!(e < 1e-15, "tanh_f64 relative error {e}");
        let e = worst(exp_f64, f64::exp, 700.0);
        assert!(e < 1e-15, "exp_f64 relative error {e}");
    }

    #[test]
    fn gemm_matches_a_triple_loop() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f64> = (0..m * k).map(|i| i as f64 * 0.5 - 3.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| 1.0 - i as f64 * 0.25).collect();
        let mut c = vec![1.0; m * n];
        gemm(&mut c, &a, &b, m, k, n, true);
        for i in 0..m {
            for j in 0..n {
                let want: f64 = 1.0 + (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum::<f64>();
                assert!((c[i * n + j] - want).abs() < 1e-12);
            }
        }
    }
}
