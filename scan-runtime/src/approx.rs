//! `exp`, `log`, `tanh` and `sigmoid` for f32 and f64 as straight-line arithmetic: range
//! reduction, a polynomial or rational approximation, and special values chosen with
//! selects instead of branches, so that LLVM vectorizes a loop over a slice of them (with
//! SSE2 on the default target, with AVX2 inside [`crate::kernels::isa::with_best_isa`]).
//!
//! Written with plain `*`, `+`, `/` and bit operations only: no `mul_add` (a slow libm call
//! without the FMA feature) and no libm calls, and Rust never contracts `a * b + c` into an
//! FMA, so every instruction set computes the same bits (tested in `tests.rs`).
//!
//! - f64: `exp` and `log` are fdlibm's algorithms, made branch-free: `exp` by Cody-Waite
//!   reduction and fdlibm's rational form, `log` by fdlibm's `log(1+f)` series in
//!   `s = f/(2+f)`. `tanh` is Cody and Waite's rational form below ln(3)/2 and
//!   `1 - 2/(e^{2|x|} + 1)` above; `sigmoid` is `1/(1 + e^{-x})` arranged never to overflow.
//!   Both keep `e^{..} + 1` as a sum of two floats and correct the reciprocal (Dekker's
//!   exact product), so they round about once. Every result is within an ulp.
//! - f32: `exp`, `tanh` and `sigmoid` in f32 arithmetic, so that a vector register holds
//!   twice as many lanes as in f64 and the divisions are f32 ones: `exp` by Cody-Waite
//!   reduction and a degree-7 polynomial, within 1 ulp; `tanh` by an odd polynomial below
//!   ln(3)/2 and `1 - 2/(e^{2|x|} + 1)` above, within 1.5 ulp; `sigmoid` as `1/(1 + e)` or
//!   `e/(1 + e)` with `e = e^{-|x|}`, within 2.5 ulp (measured over all 2^32 inputs:
//!   docs/SEMANTICS.md). Twice as fast as the f64 route with AVX-512 (an LSTM's gate map:
//!   47 µs -> 24 µs for 32 x 512). `log` is computed in f64 and rounded once.
//!
//! fdlibm's coefficients (the `EXP_P*` and `LG*` constants) come with this notice:
//! "Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved. Developed at SunPro,
//! a Sun Microsystems, Inc. business. Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice is preserved."
//!
//! Measured errors are in docs/SEMANTICS.md ("Accuracy of exp, log, tanh, sigmoid").

// ---------------------------------------------------------------------------------------
// Helpers: rounding and powers of two without float <-> int conversions, which SSE2 and
// AVX2 lack for 64-bit integers (a loop using them would not vectorize).
// ---------------------------------------------------------------------------------------

/// 1.5 * 2^52: `(x + SHIFT) - SHIFT` rounds `x` (|x| < 2^51) to the nearest integer, ties
/// to even.
const SHIFT: f64 = 6_755_399_441_055_744.0;

/// `x` rounded to the nearest integer (ties to even), for |x| < 2^51.
#[inline(always)]
fn round_int(x: f64) -> f64 {
    (x + SHIFT) - SHIFT
}

/// 2^n for an integer-valued `n` in [-1022, 1023]. `n + SHIFT + 1023` holds `n + 1023` in
/// its low mantissa bits (SHIFT's mantissa is a multiple of 2^12), and shifting those into
/// the exponent field gives the power of two.
#[inline(always)]
fn pow2(n: f64) -> f64 {
    f64::from_bits((n + (SHIFT + 1023.0)).to_bits() << 52)
}

// ---------------------------------------------------------------------------------------
// f64
// ---------------------------------------------------------------------------------------

const LOG2_E: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
/// ln 2 split in two (fdlibm): the high part has 32 significant bits, so `n * LN2_HI` is
/// exact for |n| < 2^21.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// fdlibm's `exp` coefficients: `R(r^2) = r - r^2 (P1 + ... + P5 r^8)` approximates
/// `r (e^r + 1) / (e^r - 1)` to 2^-59 on [-ln2/2, ln2/2].
const EXP_P1: f64 = f64::from_bits(0x3fc5_5555_5555_553e);
const EXP_P2: f64 = f64::from_bits(0xbf66_c16c_16be_bd93);
const EXP_P3: f64 = f64::from_bits(0x3f11_566a_af25_de2c);
const EXP_P4: f64 = f64::from_bits(0xbebb_bd41_c5d2_6bf1);
const EXP_P5: f64 = f64::from_bits(0x3e66_3769_72be_a4d0);

/// e^x as `(y + yl) * 2^n` with y in [0.7, 1.42], |yl| <= ulp(y) / 2 the rounding error of
/// y, and n an integer (as f64), for |x| < 2^20 (or NaN, which gives a NaN y). fdlibm:
/// x = n ln2 + r, |r| <= ln2/2 (hi - lo, kept apart so the final sum compensates lo's
/// rounding), e^r = 1 + r + r c / (2 - c).
#[inline(always)]
fn exp_parts_f64(x: f64) -> (f64, f64, f64) {
    let n = round_int(x * LOG2_E);
    let hi = x - n * LN2_HI; // exact (Sterbenz)
    let lo = n * LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (EXP_P1 + t * (EXP_P2 + t * (EXP_P3 + t * (EXP_P4 + t * EXP_P5))));
    let v = (lo - (r * c) / (2.0 - c)) - hi;
    let y = 1.0 - v;
    // Exact (Fast2Sum: |v| < 1).
    let yl = (1.0 - y) - v;
    (y, yl, n)
}

/// e^x for f64. Inputs are clamped to [-746, 710], beyond which the result is 0 or +inf
/// anyway; 2^n is applied as two factors so that results near the overflow threshold and
/// subnormal results (x < -708.4) come out right with one rounding.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    // `clamp` keeps NaN.
    let (y, _, n) = exp_parts_f64(x.clamp(-746.0, 710.0));
    let n1 = round_int(n * 0.5);
    let n2 = n - n1;
    // y * 2^n1 is exact (a normal number); the second product rounds once.
    y * pow2(n1) * pow2(n2)
}

/// fdlibm's `log` coefficients: `Lg1 s^2 + ... + Lg7 s^14` approximates
/// `R(s) = log((1+s)/(1-s)) / s - 2` to 2^-58.45 on |s| <= 0.1716.
const LG1: f64 = f64::from_bits(0x3fe5_5555_5555_5593);
const LG2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04);
const LG3: f64 = f64::from_bits(0x3fd2_4924_9422_9359);
const LG4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af);
const LG5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de);
const LG6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f);
const LG7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244);
/// 2^54, to bring subnormal inputs into the normal range.
const TWO54: f64 = 18_014_398_509_481_984.0;
/// 2^52: the f64 whose bits are `0x4330_0000_0000_0000 | e` (e < 2^52) is 2^52 + e, so
/// subtracting 2^52 converts an integer e to f64 exactly.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// Natural logarithm for f64. x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1,
/// s = f / (2 + f), log(1+f) = f - (f^2/2 - s (f^2/2 + R)) (fdlibm's more accurate form);
/// log x = k ln2 + log(1+f) with ln2 split so that k ln2_hi is exact. Special values by
/// selects: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN propagates.
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * TWO54 } else { x };
    let bits = xs.to_bits();
    // The biased exponent (11 bits; the sign bit too for negative x, whose result is
    // replaced below) as f64 without an integer conversion.
    let biased = f64::from_bits((bits >> 52) | 0x4330_0000_0000_0000) - TWO52;
    let mut k = biased - if tiny { 1023.0 + 54.0 } else { 1023.0 };
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let above = m > std::f64::consts::SQRT_2;
    m = if above { m * 0.5 } else { m };
    k = if above { k + 1.0 } else { k };
    let f = m - 1.0; // exact
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    let y = k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f);
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    // Negative inputs and NaN.
    if x >= 0.0 {
        y
    } else {
        f64::NAN
    }
}

/// Cody and Waite's tanh coefficients for 49 to 60 bits: on |x| < ln(3)/2,
/// `tanh x = x + x g P(g) / Q(g)` with g = x^2.
const TANH_P0: f64 = -1.613_411_902_399_622_8e3;
const TANH_P1: f64 = -9.922_592_967_223_608e1;
const TANH_P2: f64 = -9.643_749_277_722_547e-1;
const TANH_Q0: f64 = 4.840_235_707_198_869e3;
const TANH_Q1: f64 = 2.233_772_071_896_231_3e3;
const TANH_Q2: f64 = 1.127_447_438_053_494_9e2;
/// ln(3)/2, where tanh = 1/2: above it `1 - 2/(e^{2x} + 1)` has no cancellation.
const TANH_SPLIT: f64 = 0.549_306_144_334_054_8;

/// `x = hi + lo` with `hi` holding the upper 26 bits of the significand (Veltkamp's
/// split), so products of halves are exact. For |x| < 2^995.
#[inline(always)]
fn split(x: f64) -> (f64, f64) {
    let c = 134_217_729.0 * x; // 2^27 + 1
    let hi = c - (c - x);
    (hi, x - hi)
}

/// `1 / (dh + dl)` as `q + corr`, `q` the rounded `1 / dh` and `corr` its correction, to
/// about 2^-100 relative, for |dl| <= ulp(dh) and dh in [2^-900, 2^900]: the residual
/// `1 - q dh` is computed exactly with Dekker's product (no FMA needed).
#[inline(always)]
fn recip2(dh: f64, dl: f64, q: f64) -> f64 {
    let p = q * dh;
    let (qh, ql) = split(q);
    let (dhh, dhl) = split(dh);
    // p + perr == q * dh exactly.
    let perr = ((qh * dhh - p) + qh * dhl + ql * dhh) + ql * dhl;
    // 1 - p is exact: p is within an ulp of 1.
    let rho = (1.0 - p) - perr;
    q * (rho - q * dl)
}

/// Cody and Waite's rational tanh for |x| = a below [`TANH_SPLIT`], as the numerator and
/// denominator of the correction: tanh a = a + num / den.
#[inline(always)]
fn tanh_small_parts(a: f64) -> (f64, f64) {
    let g = a * a;
    let p = ((TANH_P2 * g + TANH_P1) * g + TANH_P0) * g;
    let q = ((g + TANH_Q2) * g + TANH_Q1) * g + TANH_Q0;
    (a * p, q)
}

/// tanh for f64: `a + a g P(g)/Q(g)` below ln(3)/2 (a = |x|, g = a^2), `1 - 2/D` above with
/// D = e^{2a} + 1 kept as a sum of two floats and 1/D corrected to twice the precision, so
/// both branches round about once. Both are computed and one selected (the division is
/// shared). |x| is clamped to 22 in the exponential, where tanh rounds to 1 (1 - tanh 22 <
/// 2^-62): tanh(+-inf) = +-1 exactly; the sign is copied from x, so tanh(-0) = -0.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let (y, yl, n) = exp_parts_f64(2.0 * a.min(22.0));
    let s = pow2(n);
    // D = e^{2a} + 1 = dh + dl: s y and s yl are exact, s y >= 1 when used (Fast2Sum).
    let sy = s * y;
    let dh = sy + 1.0;
    let dl = ((sy - dh) + 1.0) + s * yl;
    let (num, den) = tanh_small_parts(a);
    // NaN is not above the split: it takes the small branch, whose arithmetic propagates it.
    let above = a >= TANH_SPLIT;
    let quotient = if above { 1.0 / dh } else { num / den };
    // Above: 1 - 2 (q + corr), with 1 - 2q's rounding error recovered (Fast2Sum).
    let t = 2.0 * quotient;
    let u = 1.0 - t;
    let large = u + (((1.0 - u) - t) - 2.0 * recip2(dh, dl, quotient));
    let r = if above { large } else { a + quotient };
    r.copysign(x)
}

/// sigmoid `1 / (1 + e^{-x})` for f64. With e^{-x} = 2^n (y + yl): for n <= 0,
/// `1 / (1 + 2^n (y + yl))`; for n > 0 (x < -ln2/2), `2^-n / (2^-n + y + yl)`, which never
/// overflows and goes through the subnormals to 0 like e^x. The denominator is kept as a
/// sum of two floats and its reciprocal corrected to twice the precision, so the result
/// rounds about once. sigmoid(+large) = 1, sigmoid(-inf) = 0, NaN propagates.
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    // Beyond 40, 1 + e^{-x} rounds to 1; below -746 the result is 0.
    let (y, yl, n) = exp_parts_f64((-x).clamp(-40.0, 746.0));
    let pos = n > 0.0;
    // 2^-n for n > 0 (two factors: n reaches 1077), 2^n for n <= 0 (n >= -58).
    let n1 = round_int(n * 0.5);
    let inv = pow2(-n1) * pow2(n1 - n);
    let sd = pow2(n.min(0.0));
    // D = big + small + tail with |big| >= |small| (Fast2Sum), then its reciprocal.
    let big = if pos { y } else { 1.0 };
    let small = if pos { inv } else { sd * y };
    let tail = if pos { yl } else { sd * yl };
    let dh = big + small;
    let dl = ((big - dh) + small) + tail;
    let q = 1.0 / dh;
    let r = q + recip2(dh, dl, q);
    // Times 2^-n: exact unless the result is subnormal.
    if pos {
        r * inv
    } else {
        r
    }
}

// ---------------------------------------------------------------------------------------
// f32: exp, tanh and sigmoid in f32 arithmetic (16 lanes of AVX-512, 8 of AVX2); log in f64
// ---------------------------------------------------------------------------------------

/// 1.5 * 2^23: `(x + SHIFT32) - SHIFT32` rounds an f32 `x` (|x| < 2^22) to the nearest
/// integer, ties to even.
const SHIFT32: f32 = 12_582_912.0;

/// `x` rounded to the nearest integer (ties to even), for |x| < 2^22.
#[inline(always)]
fn round_int32(x: f32) -> f32 {
    (x + SHIFT32) - SHIFT32
}

/// 2^n for an integer-valued `n` in [-126, 127] (as [`pow2`] does for f64: `n + 127`
/// lands in the low mantissa bits, which the shift moves into the exponent field).
#[inline(always)]
fn pow2_32(n: f32) -> f32 {
    f32::from_bits((n + (SHIFT32 + 127.0)).to_bits() << 23)
}

/// ln 2 split in two (Cody and Waite): the high part has 9 significant bits, so
/// `n * LN2_HI_32` is exact for the |n| <= 151 used here.
const LN2_HI_32: f32 = f32::from_bits(0x3f31_8000);
const LN2_LO_32: f32 = f32::from_bits(0xb95e_8083);

/// `q(r) = (e^r - 1 - r) / r^2` on [-ln2/2, ln2/2]: a least-squares fit on Chebyshev
/// nodes, degree 5, coefficients rounded to f32 (error 4e-9 in q, 5e-10 relative in e^r),
/// highest degree first.
const EXP_Q32: [f32; 6] = [
    1.989_927_6e-4,
    1.393_364_4e-3,
    8.333_298e-3,
    4.166_646_7e-2,
    1.666_666_7e-1,
    0.5,
];

/// `(n, w)` with `e^x = 2^n (1 + w)`, n an integer (as f32) and |w| <= 0.42, for
/// |x| < 2^15 (or NaN): x = n ln2 + r (exact: `x - n LN2_HI_32` loses nothing), w = e^r - 1
/// = r + r^2 q(r).
#[inline(always)]
fn exp_parts_f32(x: f32) -> (f32, f32) {
    let n = round_int32(x * std::f32::consts::LOG2_E);
    let r = (x - n * LN2_HI_32) - n * LN2_LO_32;
    let mut q = EXP_Q32[0];
    for c in &EXP_Q32[1..] {
        q = q * r + *c;
    }
    (n, r + (r * r) * q)
}

/// e^x for f32, within 1 ulp. Inputs are clamped to [-104, 89], beyond which the result
/// is 0 or +inf anyway; 2^n is applied as two factors, so results near the overflow
/// threshold and subnormal ones (x < -87.3) are rounded once.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // `clamp` keeps NaN.
    let (n, w) = exp_parts_f32(x.clamp(-104.0, 89.0));
    let n1 = round_int32(n * 0.5);
    let n2 = n - n1;
    // (1 + w) * 2^n1 is exact (a normal number); the second product rounds once.
    (1.0 + w) * pow2_32(n1) * pow2_32(n2)
}

/// e^x for f32 and x in [0, 20] (tanh's `e^{2|x|}`): there 2^n is a normal number and the
/// product cannot overflow, so one factor gives [`exp_f32`]'s bits with seven operations
/// fewer and no clamp (tanh about 15% faster; docs/BENCHMARKS.md, twenty-seventh session).
#[inline(always)]
fn exp_small_f32(x: f32) -> f32 {
    let (n, w) = exp_parts_f32(x);
    (1.0 + w) * pow2_32(n)
}

/// Natural logarithm for f32: every f32 (subnormals too) is a normal f64, whose logarithm
/// rounds to f32 once.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    log_f64(f64::from(x)) as f32
}

/// `p(g) = (tanh(a) / a - 1) / g`, g = a^2, on [0, 0.55^2]: a least-squares fit on
/// Chebyshev nodes, degree 4 (error 6e-9 relative in tanh), highest degree first.
const TANH_P32: [f32; 5] = [
    -6.615_754_7e-3,
    2.131_274_5e-2,
    -5.391_006_5e-2,
    1.333_311_8e-1,
    -3.333_333e-1,
];

/// tanh for f32, within 1.5 ulp: `a + a g p(g)` below ln(3)/2 (where tanh < 0.5; no
/// cancellation, and exact for tiny |x|), `1 - 2 / (e^{2a} + 1)` above (the result is over
/// 0.5, so the subtraction cannot cancel), both computed and one selected so the loop
/// stays branch-free. |x| is clamped to 10, beyond which tanh rounds to 1 in f32 (from
/// 9.1 on); the sign is copied from x.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs().min(10.0);
    let g = a * a;
    let mut p = TANH_P32[0];
    for c in &TANH_P32[1..] {
        p = p * g + *c;
    }
    let small = a + a * (g * p);
    let large = 1.0 - 2.0 / (exp_small_f32(a + a) + 1.0);
    let y = if a < 0.549_306_1 { small } else { large };
    // NaN: min(NaN, 10) is 10, so the NaN is put back.
    let y = if x.is_nan() { f32::NAN } else { y };
    y.copysign(x)
}

/// sigmoid for f32, within 2.5 ulp: `1 / (1 + e)` for x >= 0 and `e / (1 + e)` for x < 0
/// with `e = e^{-|x|}` <= 1 (nothing overflows; subnormal results come from e's).
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    let e = exp_f32(-x.abs());
    let num = if x < 0.0 { e } else { 1.0 };
    num / (1.0 + e)
}

#[cfg(test)]
mod tests;
