//! Accuracy of the special functions against mpmath (the tables of `reference.rs`, made by
//! tools/special_functions.py), in ulps of the exact value, f64 and f32; and their special
//! values. The bounds asserted here are the measured maxima of docs/SEMANTICS.md ("Accuracy
//! of the special functions"), rounded up.

mod reference;

use super::*;
use crate::element::Float;

/// The spacing of f64 values at `v` (the subnormal spacing below the normals).
fn ulp64(v: f64) -> f64 {
    let e = ((v.to_bits() >> 52) & 0x7ff) as u32;
    if e > 52 {
        f64::from_bits(u64::from(e - 52) << 52)
    } else {
        f64::from_bits(1u64 << (e.max(1) - 1))
    }
}

/// The spacing of f32 values at `v` (an f64 near an f32), as an f64.
fn ulp32(v: f64) -> f64 {
    let e = ((v as f32).to_bits() >> 23) & 0xff;
    let u = if e > 23 {
        f32::from_bits((e - 23) << 23)
    } else {
        f32::from_bits(1u32 << (e.max(1) - 1))
    };
    f64::from(u)
}

/// Error of `got` in ulps of the exact value `hi + lo`; an exact 0 must be met exactly.
fn ulps(got: f64, hi: f64, lo: f64) -> f64 {
    if hi == 0.0 {
        return if got == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (((got - hi) - lo) / ulp64(hi)).abs()
}

/// The largest error of `f` over `table`, in ulps, with the input it was met at; panics
/// (naming the input) above `bound`.
fn max_ulps(name: &str, table: &[(f64, f64, f64)], f: fn(f64) -> f64, bound: f64) -> f64 {
    let mut worst = (0.0, 0.0);
    for &(x, hi, lo) in table {
        let got = f(x);
        let e = ulps(got, hi, lo);
        assert!(
            e <= bound,
            "{name}({x:e}) = {got:e}, exact {hi:e} + {lo:e}: {e:.3} ulps (bound {bound})"
        );
        if e > worst.0 {
            worst = (e, x);
        }
    }
    println!("{name} f64: max {:.3} ulps at {:e}", worst.0, worst.1);
    worst.0
}

/// [`max_ulps`] for the f32 function of the runtime's `Float` trait.
fn max_ulps32(name: &str, table: &[(f64, f64)], f: fn(f32) -> f32, bound: f64) -> f64 {
    let mut worst = (0.0, 0.0);
    for &(x, exact) in table {
        let x32 = x as f32;
        assert_eq!(
            f64::from(x32),
            x,
            "{name}: the table's inputs are f32 values"
        );
        let got = f(x32);
        let e = ((f64::from(got) - exact) / ulp32(exact)).abs();
        assert!(
            e <= bound,
            "{name}({x:e}f32) = {got:e}, exact {exact:e}: {e:.3} ulps (bound {bound})"
        );
        if e > worst.0 {
            worst = (e, x);
        }
    }
    println!("{name} f32: max {:.3} ulps at {:e}", worst.0, worst.1);
    worst.0
}

#[test]
fn ulp_helpers() {
    assert_eq!(ulp64(1.0), f64::EPSILON);
    assert_eq!(ulp64(1.5), f64::EPSILON);
    assert_eq!(ulp64(f64::MIN_POSITIVE), f64::from_bits(1));
    assert_eq!(ulp64(1e-310), f64::from_bits(1));
    assert_eq!(ulp64(-4.0), 4.0 * f64::EPSILON);
    assert_eq!(ulp32(1.0), f64::from(f32::EPSILON));
    assert_eq!(ulp32(1e-40), 2f64.powi(-149));
    assert_eq!(ulps(1.0 + f64::EPSILON, 1.0, 0.0), 1.0);
}

#[test]
fn erf_and_erfc_are_libms() {
    max_ulps("erf", reference::ERF, erf, 1.0);
    max_ulps("erfc", reference::ERFC, erfc, 2.5);
    max_ulps32("erf", reference::ERF_F32, Float::erf, 0.501);
    max_ulps32("erfc", reference::ERFC_F32, Float::erfc, 0.501);
}

#[test]
fn erfcx_is_accurate_from_overflow_to_the_subnormals() {
    max_ulps("erfcx", reference::ERFCX, erfcx, 3.5);
    max_ulps32("erfcx", reference::ERFCX_F32, Float::erfcx, 0.501);
}

#[test]
fn erfinv_is_accurate_up_to_the_last_float_below_one() {
    max_ulps("erfinv", reference::ERFINV, erfinv, 1.5);
    max_ulps32("erfinv", reference::ERFINV_F32, Float::erfinv, 0.501);
}

#[test]
fn log1mexp_is_accurate_on_both_sides_of_minus_ln_2() {
    max_ulps("log1mexp", reference::LOG1MEXP, log1mexp, 2.0);
    max_ulps32("log1mexp", reference::LOG1MEXP_F32, Float::log1mexp, 0.501);
}

#[test]
fn gammaln_is_libms_lgamma() {
    // Relative error for x > 0; for x < 0 libm reflects, log(pi / |x sin(pi x)|) -
    // lgamma(-x), whose terms cancel near the zeros of log|Gamma| (one in each interval
    // between poles down to -2.457): there the error is absolute, a few ulps of the terms.
    let (positive, negative): (Vec<_>, Vec<_>) =
        reference::GAMMALN.iter().partition(|(x, _, _)| *x > 0.0);
    max_ulps("gammaln", &positive, gammaln, 2.5);
    for (x, hi, lo) in negative {
        let err = (gammaln(x) - hi - lo).abs();
        assert!(err <= 4e-16 * hi.abs().max(1.0), "gammaln({x}): {err:e}");
    }
    max_ulps32("gammaln", reference::GAMMALN_F32, Float::gammaln, 0.501);
}

#[test]
fn digamma_is_accurate_including_at_its_positive_zero() {
    // Relative error for x > -1; below, the reflection's terms (psi(1 - x) and pi cot(pi x))
    // cancel near digamma's zeros (one between each two poles) and the error is a few ulps
    // of the larger term: the table's points below -1 are not near a zero.
    let (above, below): (Vec<_>, Vec<_>) =
        reference::DIGAMMA.iter().partition(|(x, _, _)| *x > -1.0);
    max_ulps("digamma", &above, digamma, 2.5);
    max_ulps("digamma below -1", &below, digamma, 6.0);
    max_ulps32("digamma", reference::DIGAMMA_F32, Float::digamma, 0.501);
}

/// NaN in, NaN out; infinities, zeros, poles and the ends of each domain.
#[test]
fn special_values() {
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    let neg_zero = |v: f64| v == 0.0 && v.is_sign_negative();
    let pos_zero = |v: f64| v == 0.0 && v.is_sign_positive();
    for f in [erf, erfc, erfcx, erfinv, log1mexp, gammaln, digamma] {
        assert!(f(nan).is_nan());
        assert!(f(-nan).is_nan());
    }
    // erf, erfc.
    assert_eq!((erf(inf), erf(-inf)), (1.0, -1.0));
    assert!(neg_zero(erf(-0.0)) && pos_zero(erf(0.0)));
    assert_eq!(erf(1e-320), 1e-320 * FRAC_2_SQRT_PI);
    assert_eq!(
        (erfc(inf), erfc(-inf), erfc(0.0), erfc(-0.0)),
        (0.0, 2.0, 1.0, 1.0)
    );
    assert_eq!(erfc(28.0), 0.0);
    // erfc(27) = 5.2e-319: a subnormal, not 0.
    assert!(erfc(27.0) > 5.0e-319 && erfc(27.0) < 5.3e-319);
    // erfcx: 1 at 0, no overflow or underflow where erfc and e^(x^2) do.
    assert_eq!((erfcx(0.0), erfcx(-0.0)), (1.0, 1.0));
    assert_eq!((erfcx(inf), erfcx(-inf), erfcx(-26.7)), (0.0, inf, inf));
    assert_eq!(erfcx(-26.63), inf);
    assert!(erfcx(-26.62).is_finite());
    assert!((erfcx(f64::MAX) * f64::MAX * std::f64::consts::PI.sqrt() - 1.0).abs() < 1e-2);
    assert!(erfcx(f64::MAX) > 0.0);
    assert_eq!(erfcx(1e-320), 1.0);
    // erfinv: ±inf at ±1, NaN beyond, -0 kept, subnormals stay subnormal.
    assert_eq!((erfinv(1.0), erfinv(-1.0)), (inf, -inf));
    assert!(erfinv(1.0 + f64::EPSILON).is_nan() && erfinv(-1.5).is_nan());
    assert!(erfinv(inf).is_nan() && erfinv(-inf).is_nan());
    assert!(neg_zero(erfinv(-0.0)) && pos_zero(erfinv(0.0)));
    let tiny = erfinv(1e-320);
    assert!(tiny > 0.0 && (tiny / (1e-320 / FRAC_2_SQRT_PI) - 1.0).abs() < 1e-3);
    for y in [0.1, 0.5, 0.9, 0.999_999] {
        assert_eq!(erfinv(-y), -erfinv(y));
        assert!((erf(erfinv(y)) - y).abs() <= 2.0 * f64::EPSILON);
    }
    // log1mexp: -inf at 0, NaN above, 0 at -inf, e^x for very negative x.
    assert_eq!((log1mexp(0.0), log1mexp(-0.0)), (-inf, -inf));
    assert!(log1mexp(1e-300).is_nan() && log1mexp(inf).is_nan());
    assert_eq!(log1mexp(-inf), 0.0);
    assert_eq!(log1mexp(-745.2), 0.0);
    assert!(log1mexp(-740.0) < 0.0);
    assert_eq!(log1mexp(-5e-324), (5e-324f64).ln());
    // gammaln: +inf at the poles and the infinities, 0 at 1 and 2, overflow past 2.55e305.
    for x in [0.0, -0.0, -1.0, -2.0, -1e10, inf, -inf] {
        assert_eq!(gammaln(x), inf, "gammaln({x})");
    }
    assert_eq!((gammaln(1.0), gammaln(2.0)), (0.0, 0.0));
    assert_eq!(gammaln(2.6e305), inf);
    assert!((gammaln(5e-324) - 744.440_071_921_381_3).abs() < 1e-12);
    // Near a zero of log|Gamma| on the negative axis the error is absolute:
    // log|Gamma(-2.4570247)| = 5.7927584551003e-8 (mpmath).
    assert!((gammaln(-2.457_024_7) - 5.792_758_455_100_3e-8).abs() < 1e-14);
    // digamma: scipy's poles (-inf at +0, +inf at -0, NaN at the negative integers and
    // -inf), inf at inf.
    assert_eq!((digamma(0.0), digamma(-0.0)), (-inf, inf));
    for x in [-1.0, -2.0, -1e10, -(2f64.powi(52)), -1e300, -inf] {
        assert!(digamma(x).is_nan(), "digamma({x})");
    }
    assert_eq!(digamma(inf), inf);
    assert_eq!(digamma(1e-300), -1.0 / 1e-300);
    assert_eq!(digamma(1e-320), -inf);
    assert!((digamma(-2.5e15 - 0.5) - (2.5e15f64).ln()).abs() < 1e-6);
    // The first negative zero, -0.5040830082644554: absolute error.
    assert!(digamma(-0.504_083_008_264_455_4).abs() < 1e-15);
    // f32: the same special values.
    assert!(Float::erfinv(1.5f32).is_nan());
    assert_eq!(Float::erfinv(1.0f32), f32::INFINITY);
    assert_eq!(Float::erfcx(-10.0f32), f32::INFINITY);
    assert_eq!(Float::erfcx(f32::INFINITY), 0.0);
    assert!(Float::erfcx(3e38f32) > 0.0);
    assert_eq!(Float::log1mexp(0.0f32), f32::NEG_INFINITY);
    assert_eq!(Float::gammaln(-3.0f32), f32::INFINITY);
    assert_eq!(Float::digamma(0.0f32), f32::NEG_INFINITY);
    assert!(Float::digamma(-3.0f32).is_nan());
    assert_eq!(Float::erfc(10.5f32), 0.0);
}
