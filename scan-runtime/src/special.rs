//! Special functions of the step language, in f64: `erf erfc erfcx erfinv log1mexp gammaln
//! digamma` (numpy/scipy/PyTensor's names). f32 operands are computed by these f64
//! functions and rounded once (`element.rs`), so an f32 result is the correctly rounded
//! one except within a hair of a halfway case.
//!
//! Where the `libm` crate (musl's fdlibm ports) has the function it is used as it is:
//! `erf`, `erfc`, `lgamma` (scipy's `gammaln`: log|Gamma(x)|), and `exp`, `expm1`, `log`,
//! `log1p`, `tan` inside the others, so results are the same bits on every platform. The
//! others are published algorithms, cited at each function. Measured accuracy against
//! mpmath: docs/SEMANTICS.md ("Accuracy of the special functions"), pinned by
//! `special::tests`. No function panics: NaN in gives NaN out, and every other input
//! (infinities, zeros of either sign, subnormals, poles) gives the value documented at the
//! function.

use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, PI};

/// 1/sqrt(pi) (exact: FRAC_2_SQRT_PI halved).
const FRAC_1_SQRT_PI: f64 = FRAC_2_SQRT_PI / 2.0;

/// The error function: libm's (fdlibm's `s_erf.c`, within 1 ulp). `erf(±inf) = ±1`,
/// `erf(-0) = -0`.
#[inline]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// The complementary error function `1 - erf(x)`, without cancellation for large `x`:
/// libm's (fdlibm's, measured within 2.4 ulps, and through the subnormals to 0 from
/// x = 27.3; 2 at -inf).
#[inline]
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// `x * x` as an exact sum `hi + lo` (Dekker's product, "A floating-point technique for
/// extending the available precision", Numer. Math. 18, 1971: Veltkamp's split of `x` in
/// halves of 26 bits, whose products are exact). For |x| < 2^500.
#[inline]
fn square_exact(x: f64) -> (f64, f64) {
    const SPLIT: f64 = 134_217_729.0; // 2^27 + 1
    let c = SPLIT * x;
    let x_hi = c - (c - x);
    let x_lo = x - x_hi;
    let hi = x * x;
    let lo = ((x_hi * x_hi - hi) + 2.0 * x_hi * x_lo) + x_lo * x_lo;
    (hi, lo)
}

/// `e^(x^2)` without the error of rounding `x^2` first (which `exp` would amplify by
/// `x^2`: 700 ulps at x = 26): `x^2 = hi + lo` exactly, `e^hi (1 + lo)`. Overflows to inf
/// where the result does.
#[inline]
fn exp_x2(x: f64) -> f64 {
    let (hi, lo) = square_exact(x);
    let e = libm::exp(hi);
    if e.is_infinite() {
        return e;
    }
    e + e * lo
}

/// Where erfcx switches from `e^(x^2) erfc(x)` to the asymptotic series: erfc(26) =
/// 5.7e-296 is still a normal float (erfc reaches the subnormals at 26.55), and 9 terms
/// of the series are below 2^-60 of the sum from here on.
const ERFCX_SERIES_FROM: f64 = 26.0;

/// The scaled complementary error function `erfcx(x) = e^(x^2) erfc(x)` (scipy's), finite
/// where erfc underflows and e^(x^2) overflows:
/// - `x >= 26`: the asymptotic series (Abramowitz and Stegun 7.1.23)
///   `erfcx(x) = 1/(x sqrt(pi)) (1 - 1/(2x^2) + 1·3/(2x^2)^2 - 1·3·5/(2x^2)^3 + ...)`, 10
///   terms; `1/(x sqrt(pi))` through the subnormals to `erfcx(inf) = 0`;
/// - `0 <= x < 26`: `e^(x^2) erfc(x)` with `x^2` split exactly in two (Dekker), so that
///   only the errors of `exp` and `erfc` remain (measured within 3.4 ulps in all);
/// - `x < 0`: `2 e^(x^2) - erfcx(-x)` (no cancellation: the first term is at least 2 and
///   the second at most 1); overflows to inf below about -26.63, `erfcx(-inf) = inf`.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < -26.7 {
        // 2 e^(x^2) overflows from -26.63 on.
        return f64::INFINITY;
    }
    if x < 0.0 {
        return 2.0 * exp_x2(x) - erfcx(-x);
    }
    if x < ERFCX_SERIES_FROM {
        return exp_x2(x) * libm::erfc(x);
    }
    // t = 1/(2x^2), computed so that it underflows to 0 (never inf * 0) for huge x.
    let t = 0.5 / x / x;
    // 1 - t (1 - 3t (1 - 5t (1 - ...))), Horner from the 10th term in.
    let mut s = 1.0;
    for k in (1..10).rev() {
        s = 1.0 - f64::from(2 * k - 1) * t * s;
    }
    FRAC_1_SQRT_PI / x * s
}

/// The inverse error function: `erf(erfinv(y)) = y` for y in [-1, 1]; `erfinv(±1) = ±inf`,
/// NaN beyond, `erfinv(-0) = -0`.
///
/// A first guess by Giles' single-precision approximation (M. Giles, "Approximating the
/// erfinv function", GPU Computing Gems, 2010: within 2e-7 for 1 - |y| > 6e-8, a few
/// percent closer to 1), refined by Halley steps against libm's `erf` for |y| <= 1/2 and
/// against `erfc` on `1 - |y|` (exact) beyond, so the tails keep their precision: the
/// residual is then relative to `1 - |y|`, not to 1. Halley's step for `f(x) = erf(x) - y`
/// (or `erfc(x) - q`), with `f'' = -2x f'`, is `x -= d / (1 + x d)` where `d = f / f'`;
/// it triples the correct digits, and stops once the step is below 1e-8 of `x`.
pub fn erfinv(y: f64) -> f64 {
    let a = y.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    if a == 0.0 {
        return y;
    }
    // 1 - a is exact for a >= 1/2 (Sterbenz); (1 - a)(1 + a) keeps its relative precision.
    let q = 1.0 - a;
    let w = -libm::log(q * (1.0 + a));
    let mut x = a * giles_erfinv_factor(w);
    for _ in 0..12 {
        // f / f' with f' = 2/sqrt(pi) e^(-x^2) (of erf; erfc's is its negative).
        let slope = FRAC_2_SQRT_PI * libm::exp(-x * x);
        let d = if a <= 0.5 {
            (libm::erf(x) - a) / slope
        } else {
            (q - libm::erfc(x)) / slope
        };
        if !d.is_finite() {
            break;
        }
        x -= d / (1.0 + x * d);
        if d.abs() <= 1e-8 * x {
            break;
        }
    }
    x.copysign(y)
}

/// Giles' single-precision erfinv polynomials (the paper's Table 1): erfinv(y) is
/// `y * p(w)` with `w = -ln(1 - y^2)`, a polynomial in `w - 2.5` below `w = 5` and in
/// `sqrt(w) - 3` above.
fn giles_erfinv_factor(w: f64) -> f64 {
    if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-8;
        for c in [
            3.432_739_39e-7,
            -3.523_387_7e-6,
            -4.391_506_54e-6,
            2.185_808_7e-4,
            -1.253_725_03e-3,
            -4.177_681_64e-3,
            2.466_407_27e-1,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -2.002_142_57e-4;
        for c in [
            1.009_505_58e-4,
            1.349_343_22e-3,
            -3.673_428_44e-3,
            5.739_507_73e-3,
            -7.622_461_3e-3,
            9.438_870_47e-3,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p
    }
}

/// `log(1 - e^x)` for `x <= 0`, by Maechler's rule (M. Maechler, "Accurately Computing
/// log(1 - exp(-|a|))", the R package Rmpfr's vignette, 2012): `log(-expm1(x))` for
/// `x > -ln 2`, `log1p(-exp(x))` below, each accurate where the other cancels.
/// `log1mexp(0) = -inf`, `log1mexp(-inf) = -0`, NaN for `x > 0` (PyTensor's `log1mexp`).
pub fn log1mexp(x: f64) -> f64 {
    if x > -LN_2 {
        // x > 0: -expm1(x) < 0, whose log is NaN; x = 0: log(0) = -inf.
        libm::log(-libm::expm1(x))
    } else if x <= -LN_2 {
        libm::log1p(-libm::exp(x))
    } else {
        x // NaN
    }
}

/// `log|Gamma(x)|` (scipy's `gammaln`): libm's `lgamma` (fdlibm's `e_lgamma_r.c`).
/// `+inf` at the poles (0, -0 and the negative integers) and at ±inf; overflows to inf
/// above 2.55e305.
#[inline]
pub fn gammaln(x: f64) -> f64 {
    libm::lgamma(x)
}

/// The positive zero of digamma, 1.46163214496836234126..., as `X0_HI + X0_LO`.
const DIGAMMA_ROOT_HI: f64 = 1.461_632_144_968_362_2;
const DIGAMMA_ROOT_LO: f64 = 9.549_995_429_965_697e-17;

/// digamma on [1, 2] is `(x - x0) G(2x - 3)`, x0 the zero above, G this polynomial in
/// `t = 2x - 3` in [-1, 1] (highest degree first): a Chebyshev fit of `digamma(x) / (x -
/// x0)` computed with mpmath at 50 digits (tools/special_functions.py), within 5e-19
/// relative. Factoring out the zero keeps the relative precision where digamma crosses 0,
/// which a recurrence from larger x cannot.
const DIGAMMA_CORE: [f64; 24] = [
    -9.720_300_404_202_244e-12,
    2.916_093_601_085_364e-11,
    -2.916_117_962_602_381_5e-11,
    8.748_420_037_436_287e-11,
    -4.155_506_411_555_196_5e-10,
    1.246_669_023_186_402_9e-9,
    -3.509_235_492_410_718e-9,
    1.052_813_385_187_811_4e-8,
    -3.180_729_847_730_172_6e-8,
    9.543_261_570_760_428e-8,
    -2.862_121_682_557_764_7e-7,
    8.589_062_683_365_892e-7,
    -2.578_133_701_610_713e-6,
    7.741_234_441_368_395e-6,
    -2.325_823_275_895_313e-5,
    6.995_018_826_550_44e-5,
    -2.107_484_128_459_012_6e-4,
    6.368_880_303_847_901e-4,
    -1.935_066_664_739_283_2e-3,
    5.936_795_278_301_875e-3,
    -1.855_061_538_173_970_2e-2,
    6.013_562_106_019_684e-2,
    -2.118_137_106_407_302_4e-1,
    9.510_558_760_318_328e-1,
];

/// The first negative zero of digamma, -0.50408300826445540925..., as `R_HI + R_LO`.
const DIGAMMA_NEG_ROOT_HI: f64 = -0.504_083_008_264_455_4;
const DIGAMMA_NEG_ROOT_LO: f64 = -8.154_282_062_438_13e-18;

/// digamma on (-1, 0) is `(x - r) H(2x + 1) / (x (x + 1))`, r the zero above, H this
/// polynomial in `t = 2x + 1` (highest degree first): a Chebyshev fit of `x (x + 1)
/// digamma(x) / (x - r)`, which is analytic on [-1, 0] (the poles multiplied out), by
/// mpmath at 50 digits (tools/special_functions.py), within 2e-19 relative. scipy treats
/// this zero apart too (a Taylor series about it), as the reflection formula cancels there.
const DIGAMMA_NEG_CORE: [f64; 25] = [
    6.518077301146342e-12,
    -1.9554273515031065e-11,
    1.7925045517786108e-11,
    -5.3775917334141414e-11,
    2.7336111153532555e-10,
    -8.201035935617406e-10,
    2.282183499642177e-09,
    -6.847057043794818e-09,
    2.0725120172392156e-08,
    -6.218808547884527e-08,
    1.8650477161006275e-07,
    -5.59835469593917e-07,
    1.6811817495448648e-06,
    -5.051729942168211e-06,
    1.519676653548586e-05,
    -4.580322863468737e-05,
    0.00013851169223194802,
    -0.0004213345574475981,
    0.0012953382406016762,
    -0.00406279189623604,
    0.013264131789028317,
    -0.047384342588936576,
    0.2194094598567706,
    0.06825307597814348,
    -2.2342579058827563,
];

/// `B_2k / (2k)` for k = 10 down to 1 (Bernoulli numbers), the coefficients of digamma's
/// asymptotic series in `1/x^2`.
const DIGAMMA_ASYMPTOTIC: [f64; 10] = [
    -174_611.0 / 330.0 / 20.0,
    43_867.0 / 798.0 / 18.0,
    -3_617.0 / 510.0 / 16.0,
    7.0 / 6.0 / 14.0,
    -691.0 / 2730.0 / 12.0,
    5.0 / 66.0 / 10.0,
    -1.0 / 30.0 / 8.0,
    1.0 / 42.0 / 6.0,
    -1.0 / 30.0 / 4.0,
    1.0 / 6.0 / 2.0,
];

/// The digamma function `psi(x) = Gamma'(x) / Gamma(x)` (scipy's `digamma`/`psi`), the
/// usual way (as Cephes' `psi.c`, which scipy wraps):
/// - `x >= 10`: the asymptotic series `ln x - 1/(2x) - sum B_2k / (2k x^2k)` (DLMF 5.11.2),
///   10 terms;
/// - `1 <= x <= 2`: the fitted core above, exact to the last bits around the zero;
/// - `2 < x < 10`: down to [1, 2] by `psi(x) = psi(x - 1) + 1/(x - 1)` (DLMF 5.5.2),
///   `0 < x < 1`: up by `psi(x) = psi(x + 1) - 1/x`;
/// - `-1 < x < 0`: the second fitted core above, exact to the last bits around the first
///   negative zero;
/// - `x < -1`: the reflection `psi(x) = psi(1 - x) - pi / tan(pi x)` (DLMF 5.5.4), with
///   `tan(pi x)` taken of `x` minus its nearest integer (exact), so that it stays
///   accurate next to the poles. Near the other zeros of digamma on the negative axis (one
///   in each interval between poles) the two terms cancel and the error is absolute, about
///   1e-16 times their size.
///
/// Poles as scipy: `psi(+0) = -inf`, `psi(-0) = +inf`, NaN at the negative integers and at
/// -inf; `psi(inf) = inf`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::INFINITY.copysign(-x);
    }
    if x < 0.0 && x > -1.0 {
        let t = 2.0 * x + 1.0;
        let mut h = 0.0;
        for c in DIGAMMA_NEG_CORE {
            h = c + h * t;
        }
        let d = (x - DIGAMMA_NEG_ROOT_HI) - DIGAMMA_NEG_ROOT_LO;
        return d * h / (x * (x + 1.0));
    }
    let mut x = x;
    let mut y = 0.0;
    if x < 0.0 {
        // Every float beyond 2^52 is an integer, and -inf is a pole too.
        let nearest = x.round_ties_even();
        if nearest == x {
            return f64::NAN;
        }
        y = -PI / libm::tan(PI * (x - nearest));
        x = 1.0 - x;
    }
    if x >= 10.0 {
        let z = 1.0 / (x * x);
        let mut p = 0.0;
        for c in DIGAMMA_ASYMPTOTIC {
            p = c + p * z;
        }
        return y + ((libm::log(x) - 0.5 / x) - p * z);
    }
    if x < 1.0 {
        y -= 1.0 / x;
        x += 1.0;
    } else {
        // x - 1, x - 2, ... are exact here.
        let mut sum = 0.0;
        while x > 2.0 {
            x -= 1.0;
            sum += 1.0 / x;
        }
        y += sum;
    }
    let t = 2.0 * x - 3.0;
    let mut g = 0.0;
    for c in DIGAMMA_CORE {
        g = c + g * t;
    }
    let h = (x - DIGAMMA_ROOT_HI) - DIGAMMA_ROOT_LO;
    y + h * g
}

#[cfg(test)]
mod tests;
