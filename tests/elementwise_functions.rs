//! numpy's elementwise functions in the step language (issue 7): trigonometric and
//! hyperbolic functions and their inverses, `log1p expm1 log2 log10 exp2`, `square
//! reciprocal sign floor ceil round trunc`, `isnan isinf isfinite`, `softplus log_sigmoid
//! relu`, `arctan2 logaddexp clip`, the special functions `erf erfc erfcx erfinv log1mexp
//! gammaln digamma` (issues 7 and 8), and the constants `inf nan pi e`. Each test checks
//! values against numpy's semantics (numbers worked out by hand, or std's functions where
//! numpy calls the same libm function), in f64 and f32, with special values (infinities,
//! NaN, -0.0, integers in), and runs the same program through the reference evaluator and
//! the rewrites (`common::second_opinion`).

mod common;

use std::f64::consts::{E, FRAC_PI_2, FRAC_PI_4, LN_2, PI};

use common::{assert_floats, assert_floats32, second_opinion, Value};
use scan_runtime::prelude::*;

mod f {
    scan_tests::program! {
        #[allow(clippy::type_complexity)]
        pub fn trig(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((sin(x), cos(x), tan(x), arctan(x), sinh(x), cosh(x)))
        }

        #[allow(clippy::type_complexity)]
        pub fn inverse(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((arcsin(x), arccos(x), arcsinh(x), arccosh(x), arctanh(x)))
        }

        #[allow(clippy::type_complexity)]
        pub fn logs(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((log1p(x), expm1(x), log2(x), log10(x), exp2(x)))
        }

        /// Rust's spellings, as methods, in f32.
        #[allow(clippy::type_complexity)]
        pub fn methods_f32(
            x: ArrayView1<f32>,
        ) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x.sin(), x.cos(), x.tan(), x.asin(), x.acos(), x.atan(), x.asinh(), x.atanh()))
        }

        #[allow(clippy::type_complexity)]
        pub fn more_f32(
            x: ArrayView1<f32>,
        ) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x.sinh(), x.cosh(), x.acosh(), x.ln_1p(), x.exp_m1(), x.log2(), x.log10(), x.exp2()))
        }

        #[allow(clippy::type_complexity)]
        pub fn rounding(
            x: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((square(x), reciprocal(x), sign(x), floor(x), ceil(x), round(x), trunc(x)))
        }

        #[allow(clippy::type_complexity)]
        pub fn rounding_f32(
            x: ArrayView1<f32>,
        ) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x.square(), x.recip(), x.sign(), x.floor(), x.ceil(), x.round_ties_even(), x.trunc()))
        }

        /// square, sign and relu keep an int an int; the float functions compute in f64.
        #[allow(clippy::type_complexity)]
        pub fn on_ints(
            k: ArrayView1<i32>,
        ) -> Result<(Array1<i32>, Array1<i32>, Array1<i32>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<bool>)> {
            Ok((square(k), sign(k), relu(k), floor(k), round(k), reciprocal(k), sin(k), isnan(k)))
        }

        pub fn tests_f64(x: ArrayView1<f64>) -> Result<(Array1<bool>, Array1<bool>, Array1<bool>)> {
            Ok((isnan(x), isinf(x), isfinite(x)))
        }

        pub fn tests_f32(x: ArrayView1<f32>) -> Result<(Array1<bool>, Array1<bool>, Array1<bool>)> {
            Ok((x.is_nan(), x.is_infinite(), x.is_finite()))
        }

        pub fn activations(x: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((softplus(x), log_sigmoid(x), relu(x)))
        }

        pub fn activations_f32(x: ArrayView1<f32>) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>)> {
            Ok((x.softplus(), x.log_sigmoid(), x.relu()))
        }

        pub fn binary(y: ArrayView1<f64>, x: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((arctan2(y, x), logaddexp(y, x), y.atan2(1.0)))
        }

        pub fn binary_f32(a: ArrayView1<f32>, b: ArrayView1<f32>) -> Result<(Array1<f32>, Array1<f32>)> {
            Ok((a.atan2(b), logaddexp(a, b)))
        }

        pub fn clips(x: ArrayView1<f64>, lo: ArrayView1<f64>, hi: f64) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((clip(x, lo, hi), x.clip(-1.0, 1.0), clip(x, 1.0, 0.0)))
        }

        /// numpy's promotion of the three operands of clip.
        #[allow(clippy::type_complexity)]
        pub fn clip_dtypes(
            k: ArrayView1<i32>,
            x: ArrayView1<f32>,
        ) -> Result<(Array1<i32>, Array1<f32>, Array1<f64>, Array1<f64>)> {
            Ok((clip(k, -2, 3), clip(x, 0.0, 0.5), clip(k, 0.5, 2.5), clip(x, k, 2.0)))
        }

        /// Scalars take the scalar formulas (no map kernel).
        pub fn scalars(x: f64, y: f64) -> Result<(f64, f64, f64, f64, bool, f64)> {
            Ok((sin(x), logaddexp(x, y), clip(x, -1.0, 1.0), round(x), isnan(y), sign(x)))
        }

        /// numpy's constants are untyped floats: `x * pi` stays f32.
        #[allow(clippy::type_complexity)]
        pub fn constants(x: ArrayView1<f32>) -> Result<(Array1<f32>, f64, f64, f64, f64, Array1<f32>)> {
            Ok((x * pi, e, inf, -inf, nan, where_(isnan(x), inf, x * e)))
        }

        /// A parameter or binding named like a constant hides it.
        pub fn shadowed(e: f64, x: f64) -> Result<(f64, f64)> {
            let pi = 3.0;
            Ok((e * 2.0, x * pi))
        }

        /// A running log-sum-exp from -inf: logaddexp in a step, a constant as initial state.
        pub fn running_logsumexp(x: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(scan(|x_t, acc| logaddexp(acc, x_t), sequences = x, outputs_info = -inf))
        }

        /// The special functions on arrays (a map kernel each), f64.
        #[allow(clippy::type_complexity)]
        pub fn special(
            x: ArrayView1<f64>,
            y: ArrayView1<f64>,
            z: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((erf(x), erfc(x), erfcx(x), gammaln(x), digamma(x), erfinv(y), log1mexp(z), psi(x)))
        }

        /// The same in f32, as methods; integers compute in f64.
        #[allow(clippy::type_complexity)]
        pub fn special_f32(
            x: ArrayView1<f32>,
            k: ArrayView1<i32>,
        ) -> Result<(Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f32>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((
                x.erf(), x.erfc(), x.erfcx(), x.gammaln(), x.digamma(), (x / 10.0).erfinv(),
                log1mexp(-abs(x) - 1.0), erf(k), gammaln(k), digamma(k),
            ))
        }

        /// Each special function inside scan steps: a map of scalars with seven outputs,
        /// and Newton's method for normal quantiles, `Phi(z) = erfc(-z / sqrt 2) / 2 = p`,
        /// as a recurrence over a row of probabilities (its log-density through gammaln,
        /// `ln Gamma(1/2) = ln sqrt(pi)`).
        #[allow(clippy::type_complexity)]
        pub fn special_steps(
            x: ArrayView1<f64>,
            p: ArrayView1<f64>,
        ) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array1<f64>, Array2<f64>)> {
            let (a, b, c, d, e, f, g) = map(
                |x_t| (erf(x_t), erfc(x_t), erfcx(x_t), erfinv(x_t / 32.0), log1mexp(-x_t), gammaln(x_t), digamma(x_t)),
                sequences = x,
            );
            let z = scan(
                |z, p| {
                    let log_pdf = -0.5 * z * z - gammaln(0.5) - 0.5 * log(2.0);
                    z - (0.5 * erfc(-z * f64::consts::FRAC_1_SQRT_2) - p) / exp(log_pdf)
                },
                outputs_info = zeros_like(p),
                non_sequences = p,
                n_steps = 50,
            );
            Ok((a, b, c, d, e, f, g, z))
        }

        /// Elementwise steps over rows (a recurrence, a map with a NaN test feeding
        /// where_) and over scalars (a summed map).
        #[allow(clippy::type_complexity)]
        pub fn steps(
            m: ArrayView2<f64>,
            h0: ArrayView1<f64>,
            v: ArrayView1<f64>,
        ) -> Result<(Array2<f64>, Array2<f64>, f64)> {
            let h = scan(|x_t, h| clip(h * 0.5 + sin(x_t), -0.75, 0.75), sequences = m, outputs_info = h0);
            let cleaned = map(|r| where_(isfinite(r), trunc(r * 10.0), -1.0), sequences = m);
            let s = sum(map(|x| softplus(x) + relu(x) + round(x * 4.0), sequences = v));
            Ok((h, cleaned, s))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Relative error at most `rtol`, for values far below 1 (where [`assert_floats`] would
/// accept anything tiny).
fn assert_relative(actual: f64, expected: f64, rtol: f64) {
    assert!(
        (actual - expected).abs() <= rtol * expected.abs(),
        "{actual} vs expected {expected}"
    );
}

fn negative_zero(x: f64) -> bool {
    x == 0.0 && x.is_sign_negative()
}

fn positive_zero(x: f64) -> bool {
    x == 0.0 && x.is_sign_positive()
}

fn map64(x: &Array1<f64>, f: impl Fn(f64) -> f64) -> Vec<f64> {
    x.iter().map(|&v| f(v)).collect()
}

fn map32(x: &Array1<f32>, f: impl Fn(f32) -> f32) -> Vec<f32> {
    x.iter().map(|&v| f(v)).collect()
}

fn values<T: Clone, D: scan_runtime::ndarray::Dimension>(arrays: &[&Array<T, D>]) -> Vec<Value>
where
    Value: From<Array<T, D>>,
{
    arrays.iter().map(|&a| Value::from(a.clone())).collect()
}

/// ln(2 * 1e308) = 308 ln 10 + ln 2: asinh and acosh of 1e308, which formulas squaring x
/// overflow on.
const ASINH_1E308: f64 = 709.889_355_822_726;

// ---------------------------------------------------------------------------------------
// Trigonometric and hyperbolic functions
// ---------------------------------------------------------------------------------------

#[test]
fn trigonometric_and_hyperbolic_f64() {
    let x = array![
        -3.0,
        -0.5,
        -0.0,
        0.0,
        PI / 6.0,
        1.0,
        710.0,
        f64::INFINITY,
        f64::NAN
    ];
    let (s, c, t, at, sh, ch) = f::trig(x.view()).unwrap();
    // numpy calls the C library's functions, as std does.
    assert_floats(&s.to_vec(), &map64(&x, f64::sin), 1e-15);
    assert_floats(&c.to_vec(), &map64(&x, f64::cos), 1e-15);
    assert_floats(&t.to_vec(), &map64(&x, f64::tan), 1e-15);
    assert_floats(&at.to_vec(), &map64(&x, f64::atan), 1e-15);
    assert_floats(&sh.to_vec(), &map64(&x, f64::sinh), 1e-15);
    assert_floats(&ch.to_vec(), &map64(&x, f64::cosh), 1e-15);
    // By hand: sin(pi/6) = 1/2, sin/tan/arctan/sinh keep -0, cos(0) = 1, cosh(0) = 1,
    // sin(inf) is NaN, arctan(inf) = pi/2, sinh(710) = e^710 / 2 still fits in f64.
    assert!((s[4] - 0.5).abs() < 1e-15);
    assert!(negative_zero(s[2]) && negative_zero(t[2]) && negative_zero(at[2]));
    assert!(negative_zero(sh[2]) && positive_zero(s[3]));
    assert_eq!((c[3], ch[2]), (1.0, 1.0));
    assert!(s[7].is_nan() && c[7].is_nan() && t[7].is_nan() && s[8].is_nan());
    assert_eq!(at[7], FRAC_PI_2);
    assert_eq!((sh[7], ch[7]), (f64::INFINITY, f64::INFINITY));
    assert_relative(sh[6], 1.116_997_383_080_855_7e308, 1e-14);
    assert!((at[5] - FRAC_PI_4).abs() < 1e-16);
    second_opinion(
        f::SOURCE,
        "trig",
        vec![Value::from(x)],
        values(&[&s, &c, &t, &at, &sh, &ch]),
    );
}

#[test]
fn inverse_functions_f64() {
    let x = array![-1.0, -0.5, -0.0, 0.5, 1.0, 1.5, 1e308, f64::NAN];
    let (asn, acs, ash, ach, ath) = f::inverse(x.view()).unwrap();
    assert_floats(&asn.to_vec(), &map64(&x, f64::asin), 1e-15);
    assert_floats(&acs.to_vec(), &map64(&x, f64::acos), 1e-15);
    // By hand at the ends of the domains: arcsin(±1) = ±pi/2, arccos(-1) = pi, arcsin and
    // arccos beyond ±1 are NaN.
    assert_eq!(
        (asn[0], asn[4], acs[0], acs[4]),
        (-FRAC_PI_2, FRAC_PI_2, PI, 0.0)
    );
    assert!(asn[5].is_nan() && acs[5].is_nan() && acs[7].is_nan());
    assert!(negative_zero(asn[2]));
    // arcsinh: odd, -0 kept, and ln(2x) for huge x (no overflow to inf).
    assert_floats(&ash.to_vec()[..6], &map64(&x, f64::asinh)[..6], 1e-15);
    assert!(negative_zero(ash[2]));
    assert!((ash[6] - ASINH_1E308).abs() < 1e-12);
    assert!((ash[3] - 0.481_211_825_059_603_45).abs() < 1e-16);
    // arccosh: NaN below 1, 0 at 1.
    assert!(ach[0].is_nan() && ach[2].is_nan() && ach[3].is_nan());
    assert_eq!(ach[4], 0.0);
    assert!((ach[5] - 0.962_423_650_119_206_9).abs() < 1e-15);
    assert!((ach[6] - ASINH_1E308).abs() < 1e-12);
    // arctanh: ±inf at ±1, NaN beyond.
    assert_eq!((ath[0], ath[4]), (f64::NEG_INFINITY, f64::INFINITY));
    assert!(ath[5].is_nan() && ath[6].is_nan() && ath[7].is_nan());
    assert!(negative_zero(ath[2]));
    assert!((ath[3] - 0.549_306_144_334_054_8).abs() < 1e-16);
    assert!((ath[1] + 0.549_306_144_334_054_8).abs() < 1e-16);
    second_opinion(
        f::SOURCE,
        "inverse",
        vec![Value::from(x)],
        values(&[&asn, &acs, &ash, &ach, &ath]),
    );
}

#[test]
fn trigonometric_and_hyperbolic_f32_by_rust_names() {
    let x = array![-0.9f32, -0.5, -0.0, 0.25, 0.5, 0.99, 1.5, f32::NAN];
    let (s, c, t, asn, acs, at, ash, ath) = f::methods_f32(x.view()).unwrap();
    assert_floats32(&s.to_vec(), &map32(&x, f32::sin), 1e-6);
    assert_floats32(&c.to_vec(), &map32(&x, f32::cos), 1e-6);
    assert_floats32(&t.to_vec(), &map32(&x, f32::tan), 1e-6);
    assert_floats32(&asn.to_vec(), &map32(&x, f32::asin), 1e-6);
    assert_floats32(&acs.to_vec(), &map32(&x, f32::acos), 1e-6);
    assert_floats32(&at.to_vec(), &map32(&x, f32::atan), 1e-6);
    assert_floats32(&ash.to_vec(), &map32(&x, f32::asinh), 1e-6);
    assert_floats32(&ath.to_vec(), &map32(&x, f32::atanh), 1e-6);
    // f32 in, f32 out; NaN beyond the domains; arctanh(0.99) = 2.646652...
    assert!(asn[6].is_nan() && acs[6].is_nan() && ath[6].is_nan());
    assert!((f64::from(ath[5]) - 2.646_652_412_362_246).abs() < 1e-6);
    assert!(negative_zero(f64::from(s[2])) && negative_zero(f64::from(ath[2])));
    second_opinion(
        f::SOURCE,
        "methods_f32",
        vec![Value::from(x)],
        values(&[&s, &c, &t, &asn, &acs, &at, &ash, &ath]),
    );

    let x = array![1.0f32, 1.5, 2.0, 10.0, 50.0, 3e38, -0.0, f32::NEG_INFINITY];
    let (sh, ch, ach, l1p, em1, l2, l10, e2) = f::more_f32(x.view()).unwrap();
    assert_floats32(&sh.to_vec(), &map32(&x, f32::sinh), 1e-6);
    assert_floats32(&ch.to_vec(), &map32(&x, f32::cosh), 1e-6);
    // std's f32 acosh overflows at 3e38; numpy's (the C library's) gives ln(6e38).
    let mut acosh_expected = map32(&x, f32::acosh);
    acosh_expected[5] = (3e38f64.ln() + LN_2) as f32;
    assert_floats32(&ach.to_vec(), &acosh_expected, 1e-6);
    assert!((f64::from(ach[5]) - 89.289_993).abs() < 1e-4);
    assert_floats32(&l1p.to_vec(), &map32(&x, f32::ln_1p), 1e-6);
    assert_floats32(&em1.to_vec(), &map32(&x, f32::exp_m1), 1e-6);
    assert_floats32(&l2.to_vec(), &map32(&x, f32::log2), 1e-6);
    assert_floats32(&l10.to_vec(), &map32(&x, f32::log10), 1e-6);
    assert_floats32(&e2.to_vec(), &map32(&x, f32::exp2), 1e-6);
    assert_eq!((l2[2], l10[3], e2[3]), (1.0, 1.0, 1024.0));
    assert_eq!(
        (sh[5], ch[5], e2[5], em1[7]),
        (f32::INFINITY, f32::INFINITY, f32::INFINITY, -1.0)
    );
    assert_eq!(e2[7], 0.0);
    second_opinion(
        f::SOURCE,
        "more_f32",
        vec![Value::from(x)],
        values(&[&sh, &ch, &ach, &l1p, &em1, &l2, &l10, &e2]),
    );
}

// ---------------------------------------------------------------------------------------
// log1p expm1 log2 log10 exp2
// ---------------------------------------------------------------------------------------

#[test]
fn logarithms_and_exponentials_f64() {
    let x = array![
        -1.0,
        -0.5,
        -0.0,
        0.0,
        1e-300,
        0.5,
        3.0,
        1024.0,
        2000.0,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NAN
    ];
    let (l1p, em1, l2, l10, e2) = f::logs(x.view()).unwrap();
    assert_floats(&l1p.to_vec(), &map64(&x, f64::ln_1p), 1e-15);
    assert_floats(&em1.to_vec(), &map64(&x, f64::exp_m1), 1e-15);
    assert_floats(&l2.to_vec(), &map64(&x, f64::log2), 1e-15);
    assert_floats(&l10.to_vec(), &map64(&x, f64::log10), 1e-15);
    assert_floats(&e2.to_vec(), &map64(&x, f64::exp2), 1e-15);
    // By hand: log1p and expm1 are exact for tiny x (where log(1 + x) would give 0) and
    // keep -0; log1p(-1) = -inf; expm1(-inf) = -1; log2(1024) = 10; log10 of a negative
    // is NaN, of ±0 is -inf; exp2 overflows at 1024 and gives 0 at -inf.
    assert_eq!((l1p[4], em1[4]), (1e-300, 1e-300));
    assert!(negative_zero(l1p[2]) && negative_zero(em1[2]));
    assert_eq!((l1p[0], em1[9], l2[7]), (f64::NEG_INFINITY, -1.0, 10.0));
    assert!(l10[1].is_nan() && l2[9].is_nan());
    assert_eq!(
        (l10[2], l10[3], l2[2]),
        (f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY)
    );
    assert_eq!(
        (e2[6], e2[7], e2[9], e2[10]),
        (8.0, f64::INFINITY, 0.0, f64::INFINITY)
    );
    assert!((l10[5] + std::f64::consts::LOG10_2).abs() < 1e-16);
    assert!((em1[5] - 0.648_721_270_700_128_2).abs() < 1e-16);
    second_opinion(
        f::SOURCE,
        "logs",
        vec![Value::from(x)],
        values(&[&l1p, &em1, &l2, &l10, &e2]),
    );
}

// ---------------------------------------------------------------------------------------
// square reciprocal sign floor ceil round trunc
// ---------------------------------------------------------------------------------------

#[test]
fn rounding_and_signs_f64() {
    let x = array![
        -2.5,
        -1.5,
        -0.5,
        -0.4,
        -0.0,
        0.0,
        0.5,
        1.5,
        2.5,
        2.6,
        f64::INFINITY,
        f64::NAN
    ];
    let (sq, rc, sg, fl, ce, ro, tr) = f::rounding(x.view()).unwrap();
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    assert_floats(
        &sq.to_vec(),
        &[
            6.25, 2.25, 0.25, 0.16, 0.0, 0.0, 0.25, 2.25, 6.25, 6.76, inf, nan,
        ],
        1e-15,
    );
    assert_floats(
        &rc.to_vec(),
        &[
            -0.4,
            -1.0 / 1.5,
            -2.0,
            -2.5,
            -inf,
            inf,
            2.0,
            1.0 / 1.5,
            0.4,
            1.0 / 2.6,
            0.0,
            nan,
        ],
        1e-15,
    );
    assert_floats(
        &sg.to_vec(),
        &[
            -1.0, -1.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, nan,
        ],
        0.0,
    );
    assert_floats(
        &fl.to_vec(),
        &[
            -3.0, -2.0, -1.0, -1.0, -0.0, 0.0, 0.0, 1.0, 2.0, 2.0, inf, nan,
        ],
        0.0,
    );
    assert_floats(
        &ce.to_vec(),
        &[
            -2.0, -1.0, -0.0, -0.0, -0.0, 0.0, 1.0, 2.0, 3.0, 3.0, inf, nan,
        ],
        0.0,
    );
    // numpy rounds half-way cases to even.
    assert_floats(
        &ro.to_vec(),
        &[
            -2.0, -2.0, -0.0, -0.0, -0.0, 0.0, 0.0, 2.0, 2.0, 3.0, inf, nan,
        ],
        0.0,
    );
    assert_floats(
        &tr.to_vec(),
        &[
            -2.0, -1.0, -0.0, -0.0, -0.0, 0.0, 0.0, 1.0, 2.0, 2.0, inf, nan,
        ],
        0.0,
    );
    // Signs of zeros: sign(-0) = +0 (numpy); square(-0) = +0; ceil, round and trunc of
    // small negatives and floor(-0) give -0; 1 / -0 = -inf (checked above).
    assert!(positive_zero(sg[4]) && positive_zero(sq[4]));
    assert!(negative_zero(ce[2]) && negative_zero(ro[2]) && negative_zero(ro[3]));
    assert!(negative_zero(tr[3]) && negative_zero(fl[4]));
    assert!(positive_zero(ro[6]));
    second_opinion(
        f::SOURCE,
        "rounding",
        vec![Value::from(x)],
        values(&[&sq, &rc, &sg, &fl, &ce, &ro, &tr]),
    );
}

#[test]
fn rounding_and_signs_f32_by_rust_names() {
    let x = array![
        -2.5f32,
        -0.5,
        -0.0,
        0.5,
        1.5,
        3.5,
        1e20,
        f32::NEG_INFINITY,
        f32::NAN
    ];
    let (sq, rc, sg, fl, ce, ro, tr) = f::rounding_f32(x.view()).unwrap();
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    // square(1e20) overflows f32.
    assert_floats32(
        &sq.to_vec(),
        &[6.25, 0.25, 0.0, 0.25, 2.25, 12.25, inf, inf, nan],
        0.0,
    );
    assert_floats32(
        &rc.to_vec(),
        &[
            -0.4,
            -2.0,
            -inf,
            2.0,
            1.0 / 1.5,
            1.0 / 3.5,
            1e-20,
            -0.0,
            nan,
        ],
        1e-7,
    );
    assert_floats32(
        &sg.to_vec(),
        &[-1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, -1.0, nan],
        0.0,
    );
    assert_floats32(
        &fl.to_vec(),
        &[-3.0, -1.0, -0.0, 0.0, 1.0, 3.0, 1e20, -inf, nan],
        0.0,
    );
    assert_floats32(
        &ce.to_vec(),
        &[-2.0, -0.0, -0.0, 1.0, 2.0, 4.0, 1e20, -inf, nan],
        0.0,
    );
    assert_floats32(
        &ro.to_vec(),
        &[-2.0, -0.0, -0.0, 0.0, 2.0, 4.0, 1e20, -inf, nan],
        0.0,
    );
    assert_floats32(
        &tr.to_vec(),
        &[-2.0, -0.0, -0.0, 0.0, 1.0, 3.0, 1e20, -inf, nan],
        0.0,
    );
    assert!(positive_zero(f64::from(sg[2])) && negative_zero(f64::from(ro[1])));
    assert!(negative_zero(f64::from(rc[7])));
    second_opinion(
        f::SOURCE,
        "rounding_f32",
        vec![Value::from(x)],
        values(&[&sq, &rc, &sg, &fl, &ce, &ro, &tr]),
    );
}

#[test]
fn integers_keep_their_dtype_or_compute_in_f64() {
    let k = array![-3i32, 0, 7, 46341, i32::MIN];
    let (sq, sg, re, fl, ro, rc, s, nan) = f::on_ints(k.view()).unwrap();
    // square wraps as numpy's int32 square: 46341^2 = 2^31 + 4633, i32::MIN^2 = 2^62.
    assert_eq!(sq.to_vec(), vec![9, 0, 49, -2_147_479_015, 0]);
    assert_eq!(sg.to_vec(), vec![-1, 0, 1, 1, -1]);
    assert_eq!(re.to_vec(), vec![0, 0, 7, 46341, 0]);
    // floor and round of an int: the int in f64 (PyTensor's rule).
    let kf: Vec<f64> = k.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(fl.to_vec(), kf);
    assert_eq!(ro.to_vec(), kf);
    assert_floats(
        &rc.to_vec(),
        &[
            -1.0 / 3.0,
            f64::INFINITY,
            1.0 / 7.0,
            1.0 / 46341.0,
            -1.0 / 2_147_483_648.0,
        ],
        1e-15,
    );
    assert_floats(
        &s.to_vec(),
        &kf.iter().map(|v| v.sin()).collect::<Vec<_>>(),
        1e-15,
    );
    assert_eq!(nan.to_vec(), vec![false; 5]);
    second_opinion(
        f::SOURCE,
        "on_ints",
        vec![Value::from(k)],
        vec![
            Value::from(sq),
            Value::from(sg),
            Value::from(re),
            Value::from(fl),
            Value::from(ro),
            Value::from(rc),
            Value::from(s),
            Value::from(nan),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// isnan isinf isfinite
// ---------------------------------------------------------------------------------------

#[test]
fn nan_and_infinity_tests() {
    let x = array![
        0.0,
        -0.0,
        1e308,
        f64::MIN_POSITIVE / 2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN
    ];
    let (n, i, fi) = f::tests_f64(x.view()).unwrap();
    assert_eq!(
        n.to_vec(),
        vec![false, false, false, false, false, false, true, true]
    );
    assert_eq!(
        i.to_vec(),
        vec![false, false, false, false, true, true, false, false]
    );
    assert_eq!(
        fi.to_vec(),
        vec![true, true, true, true, false, false, false, false]
    );
    second_opinion(
        f::SOURCE,
        "tests_f64",
        vec![Value::from(x)],
        vec![Value::from(n), Value::from(i), Value::from(fi)],
    );

    let x = array![f32::MAX, f32::INFINITY, f32::NAN, -1.0];
    let (n, i, fi) = f::tests_f32(x.view()).unwrap();
    assert_eq!(n.to_vec(), vec![false, false, true, false]);
    assert_eq!(i.to_vec(), vec![false, true, false, false]);
    assert_eq!(fi.to_vec(), vec![true, false, false, true]);
    second_opinion(
        f::SOURCE,
        "tests_f32",
        vec![Value::from(x)],
        vec![Value::from(n), Value::from(i), Value::from(fi)],
    );
}

// ---------------------------------------------------------------------------------------
// softplus log_sigmoid relu
// ---------------------------------------------------------------------------------------

/// log(1 + e^x) written the other way round from the runtime's: e^x's log1p below 0,
/// x + log1p(e^-x) above.
fn softplus_ref(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

#[test]
fn softplus_log_sigmoid_relu_are_stable() {
    let x = array![
        -1000.0,
        -40.0,
        -1.0,
        -0.0,
        0.0,
        1.0,
        20.0,
        40.0,
        1000.0,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NAN
    ];
    let (sp, ls, re) = f::activations(x.view()).unwrap();
    assert_floats(&sp.to_vec(), &map64(&x, softplus_ref), 1e-15);
    assert_floats(&ls.to_vec(), &map64(&x, |v| -softplus_ref(-v)), 1e-15);
    assert_floats(
        &re.to_vec(),
        &map64(&x, |v| if v.is_nan() { v } else { v.max(0.0) }),
        0.0,
    );
    // |x| = 1000: no overflow to inf, no cancellation to 0 where the value is not 0.
    assert_eq!((sp[8], sp[0]), (1000.0, 0.0));
    assert_eq!(ls[0], -1000.0);
    assert_eq!(ls[8], 0.0);
    // softplus(-40) = e^-40 and log_sigmoid(40) = -e^-40, to the last digits.
    assert_relative(sp[1], 4.248_354_255_291_589e-18, 1e-14);
    assert_relative(ls[7], -4.248_354_255_291_589e-18, 1e-14);
    assert!((sp[3] - LN_2).abs() < 1e-16 && (ls[4] + LN_2).abs() < 1e-16);
    assert!((sp[5] - 1.313_261_687_518_222_8).abs() < 1e-15);
    assert_eq!(
        (sp[9], sp[10], ls[9], ls[10]),
        (0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0)
    );
    assert!(sp[11].is_nan() && ls[11].is_nan() && re[11].is_nan());
    assert_eq!((re[0], re[5], re[8]), (0.0, 1.0, 1000.0));
    second_opinion(
        f::SOURCE,
        "activations",
        vec![Value::from(x)],
        values(&[&sp, &ls, &re]),
    );

    let x = array![
        -1000.0f32,
        -20.0,
        -0.5,
        0.0,
        0.5,
        20.0,
        1000.0,
        f32::INFINITY,
        f32::NAN
    ];
    let (sp, ls, re) = f::activations_f32(x.view()).unwrap();
    let sp_ref = |v: f32| softplus_ref(f64::from(v)) as f32;
    assert_floats32(&sp.to_vec(), &map32(&x, sp_ref), 1e-6);
    assert_floats32(&ls.to_vec(), &map32(&x, |v| -sp_ref(-v)), 1e-6);
    assert_floats32(
        &re.to_vec(),
        &map32(&x, |v| if v.is_nan() { v } else { v.max(0.0) }),
        0.0,
    );
    assert_eq!((sp[6], sp[0], ls[0], ls[6]), (1000.0, 0.0, -1000.0, 0.0));
    assert_relative(f64::from(sp[1]), 2.061_153_620_314_381e-9, 1e-6);
    second_opinion(
        f::SOURCE,
        "activations_f32",
        vec![Value::from(x)],
        values(&[&sp, &ls, &re]),
    );
}

// ---------------------------------------------------------------------------------------
// arctan2 logaddexp clip
// ---------------------------------------------------------------------------------------

#[test]
fn arctan2_and_logaddexp() {
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    let y = array![1.0, 0.0, -0.0, 0.0, -0.0, 1000.0, -1000.0, 1000.0, -inf, -inf, inf, nan];
    let x = array![-1.0, -1.0, -1.0, 0.0, -0.0, 1000.0, -1000.0, -1000.0, -inf, 1.0, -inf, 1.0];
    let (at, lae, at1) = f::binary(y.view(), x.view()).unwrap();
    // numpy's arctan2(y, x): the angle of (x, y); the sign of a zero y picks ±pi.
    assert_floats(
        &at.to_vec(),
        &[
            3.0 * FRAC_PI_4,
            PI,
            -PI,
            0.0,
            -PI,
            FRAC_PI_4,
            -3.0 * FRAC_PI_4,
            3.0 * FRAC_PI_4,
            -3.0 * FRAC_PI_4,
            -FRAC_PI_2,
            3.0 * FRAC_PI_4,
            nan,
        ],
        1e-16,
    );
    assert!(positive_zero(at[3]));
    assert_floats(&at1.to_vec(), &map64(&y, |v| v.atan2(1.0)), 1e-16);
    // logaddexp at magnitudes of 1e3 (e^1000 overflows) and with -inf operands.
    assert_floats(
        &lae.to_vec(),
        &[
            1.0 + (-2.0f64).exp().ln_1p(),
            0.313_261_687_518_222_8,
            0.313_261_687_518_222_8,
            LN_2,
            LN_2,
            1000.0 + LN_2,
            -1000.0 + LN_2,
            1000.0,
            -inf,
            1.0,
            inf,
            nan,
        ],
        1e-15,
    );
    assert!((lae[0] - 1.126_928_011_042_972_5).abs() < 1e-15);
    assert_eq!(lae[7], 1000.0);
    second_opinion(
        f::SOURCE,
        "binary",
        vec![Value::from(y), Value::from(x)],
        values(&[&at, &lae, &at1]),
    );

    let a = array![1.0f32, 0.0, 100.0, -100.0, f32::NEG_INFINITY, f32::NAN];
    let b = array![1.0f32, -1.0, -100.0, -100.0, 3.0, 0.0];
    let (at, lae) = f::binary_f32(a.view(), b.view()).unwrap();
    let at_ref: Vec<f32> = a.iter().zip(&b).map(|(&p, &q)| p.atan2(q)).collect();
    assert_floats32(&at.to_vec(), &at_ref, 1e-7);
    assert_floats32(
        &lae.to_vec(),
        &[
            1.0 + LN_2 as f32,
            0.313_261_7,
            100.0,
            -100.0 + LN_2 as f32,
            3.0,
            f32::NAN,
        ],
        1e-6,
    );
    second_opinion(
        f::SOURCE,
        "binary_f32",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(at), Value::from(lae)],
    );
}

#[test]
fn clip_is_minimum_of_maximum() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let x = array![-5.0, -0.5, 0.25, 2.0, nan, inf, -inf, 0.75];
    let lo = array![0.0, 0.0, 0.5, nan, 0.0, 0.0, 0.0, 0.0];
    let (c, c11, inverted) = f::clips(x.view(), lo.view(), 1.0).unwrap();
    // A NaN in any operand gives NaN (numpy's maximum and minimum).
    assert_floats(&c.to_vec(), &[0.0, 0.0, 0.5, nan, nan, 1.0, 0.0, 0.75], 0.0);
    assert_floats(
        &c11.to_vec(),
        &[-1.0, -0.5, 0.25, 1.0, nan, 1.0, -1.0, 0.75],
        0.0,
    );
    // lo > hi: every value is hi, as numpy.
    assert_floats(
        &inverted.to_vec(),
        &[0.0, 0.0, 0.0, 0.0, nan, 0.0, 0.0, 0.0],
        0.0,
    );
    second_opinion(
        f::SOURCE,
        "clips",
        vec![Value::from(x), Value::from(lo), Value::from(1.0)],
        values(&[&c, &c11, &inverted]),
    );

    let k = array![-5i32, 0, 2, 7, i32::MIN];
    let x = array![-1.0f32, 0.25, 0.75, f32::NAN, 3.0];
    let (ci, cf, cif, cmixed) = f::clip_dtypes(k.view(), x.view()).unwrap();
    // ints stay i32; f32 with untyped bounds stays f32; float bounds on ints give f64;
    // f32 with i32 gives f64 (numpy's promotion).
    assert_eq!(ci.to_vec(), vec![-2, 0, 2, 3, -2]);
    assert_floats32(&cf.to_vec(), &[0.0, 0.25, 0.5, f32::NAN, 0.5], 0.0);
    assert_eq!(cif.to_vec(), vec![0.5, 0.5, 2.0, 2.5, 0.5]);
    assert_floats(&cmixed.to_vec(), &[-1.0, 0.25, 2.0, nan, 2.0], 0.0);
    second_opinion(
        f::SOURCE,
        "clip_dtypes",
        vec![Value::from(k), Value::from(x)],
        vec![
            Value::from(ci),
            Value::from(cf),
            Value::from(cif),
            Value::from(cmixed),
        ],
    );
}

#[test]
fn scalar_formulas() {
    let nan = f64::NAN;
    let cases = [
        (
            0.5,
            1.0,
            (
                0.5f64.sin(),
                1.0 + (-0.5f64).exp().ln_1p(),
                0.5,
                0.0,
                false,
                1.0,
            ),
        ),
        (-2.5, nan, ((-2.5f64).sin(), nan, -1.0, -2.0, true, -1.0)),
        (
            1000.0,
            1000.0,
            (1000.0f64.sin(), 1000.0 + LN_2, 1.0, 1000.0, false, 1.0),
        ),
        (
            -0.0,
            f64::NEG_INFINITY,
            (-0.0, -0.0, -0.0, -0.0, false, 0.0),
        ),
    ];
    for (x, y, expected) in cases {
        let got = f::scalars(x, y).unwrap();
        assert_floats(
            &[got.0, got.1, got.2, got.3, got.5],
            &[expected.0, expected.1, expected.2, expected.3, expected.5],
            1e-15,
        );
        assert_eq!(got.4, expected.4);
        second_opinion(
            f::SOURCE,
            "scalars",
            vec![Value::from(x), Value::from(y)],
            vec![
                Value::from(got.0),
                Value::from(got.1),
                Value::from(got.2),
                Value::from(got.3),
                Value::from(got.4),
                Value::from(got.5),
            ],
        );
    }
    // -0.0: sin, clip and round keep the sign, sign(-0) = +0; logaddexp(-0, -inf) is
    // -0 + log1p(0) = +0, as numpy's formula gives.
    let got = f::scalars(-0.0, f64::NEG_INFINITY).unwrap();
    assert!(negative_zero(got.0) && negative_zero(got.2) && negative_zero(got.3));
    assert!(positive_zero(got.5) && positive_zero(got.1));
}

// ---------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------

#[test]
fn constants_inf_nan_pi_e() {
    let x = array![1.0f32, -2.0, f32::NAN];
    let (xpi, e, inf, ninf, nan, fixed) = f::constants(x.view()).unwrap();
    // `x * pi` is f32 (the constant adapts, like a literal): pi rounded to f32, times x.
    assert_eq!(xpi[0], std::f32::consts::PI);
    assert_eq!(xpi[1], -2.0 * std::f32::consts::PI);
    assert!(xpi[2].is_nan());
    assert_eq!((e, inf, ninf), (E, f64::INFINITY, f64::NEG_INFINITY));
    assert!(nan.is_nan());
    assert_eq!(fixed[0], std::f32::consts::E);
    assert_eq!(fixed[1], -2.0 * std::f32::consts::E);
    assert_eq!(fixed[2], f32::INFINITY);
    second_opinion(
        f::SOURCE,
        "constants",
        vec![Value::from(x)],
        vec![
            Value::from(xpi),
            Value::from(e),
            Value::from(inf),
            Value::from(ninf),
            Value::from(nan),
            Value::from(fixed),
        ],
    );

    let got = f::shadowed(1.5, 2.0).unwrap();
    assert_eq!(got, (3.0, 6.0));
    second_opinion(
        f::SOURCE,
        "shadowed",
        vec![Value::from(1.5), Value::from(2.0)],
        vec![Value::from(got.0), Value::from(got.1)],
    );
}

// ---------------------------------------------------------------------------------------
// Inside scan steps
// ---------------------------------------------------------------------------------------

#[test]
fn running_logsumexp_from_minus_infinity() {
    let x = array![1000.0, 1000.0, -1000.0, 1001.0, f64::NEG_INFINITY];
    let got = f::running_logsumexp(x.view()).unwrap();
    // log(e^1000) = 1000; log(2 e^1000) = 1000 + ln 2; e^-1000 changes nothing;
    // log(2 e^1000 + e^1001) = 1000 + ln(2 + e); adding e^-inf = 0 changes nothing.
    let last = 1000.0 + (2.0 + E).ln();
    assert_floats(
        &got.to_vec(),
        &[1000.0, 1000.0 + LN_2, 1000.0 + LN_2, last, last],
        1e-15,
    );
    second_opinion(
        f::SOURCE,
        "running_logsumexp",
        vec![Value::from(x.clone())],
        vec![Value::from(got)],
    );
    // No steps: no rows.
    let empty = Array1::<f64>::zeros(0);
    assert_eq!(f::running_logsumexp(empty.view()).unwrap().len(), 0);
}

#[test]
fn functions_in_steps_over_rows_and_scalars() {
    let m = array![
        [0.5, -1.0, 2.0, f64::NAN],
        [3.0, 0.25, -0.75, f64::INFINITY],
        [-2.0, 1.5, 0.0, -0.125]
    ];
    let h0 = array![0.0, -1.0, 1.0, 0.5];
    let v = array![-1000.0, -0.375, 0.0, 0.125, 0.5, 2.0, 1000.0];
    let (h, cleaned, s) = f::steps(m.view(), h0.view(), v.view()).unwrap();

    // Hand-written loops.
    let clip = |x: f64, lo: f64, hi: f64| {
        if x.is_nan() {
            x
        } else {
            x.max(lo).min(hi)
        }
    };
    let mut state = h0.to_vec();
    let mut expected_h = Vec::new();
    for row in m.rows() {
        for (hj, &xj) in state.iter_mut().zip(row) {
            *hj = clip(*hj * 0.5 + xj.sin(), -0.75, 0.75);
        }
        expected_h.extend(state.iter().copied());
    }
    assert_floats(&h.iter().copied().collect::<Vec<_>>(), &expected_h, 1e-15);
    // The NaN column stays NaN; sin(inf) is NaN too.
    assert!(h[[0, 3]].is_nan() && h[[2, 3]].is_nan());
    // -0.5 + sin(-1) and 0.5 + sin(2) are clipped.
    assert_eq!((h[[0, 1]], h[[0, 2]]), (-0.75, 0.75));

    let expected_cleaned: Vec<f64> = m
        .iter()
        .map(|&x| {
            if x.is_finite() {
                (x * 10.0).trunc()
            } else {
                -1.0
            }
        })
        .collect();
    assert_eq!(
        cleaned.iter().copied().collect::<Vec<_>>(),
        expected_cleaned
    );
    assert_eq!(cleaned.row(2).to_vec(), vec![-20.0, 15.0, 0.0, -1.0]);

    // softplus + relu + round(4x): numpy rounds -1.5 to -2 and 0.5 to 0.
    let terms: Vec<f64> = v
        .iter()
        .map(|&x| softplus_ref(x) + x.max(0.0) + (x * 4.0).round_ties_even())
        .collect();
    assert_eq!((x4(-0.375), x4(0.125)), (-2.0, 0.0));
    let expected_s: f64 = terms.iter().sum();
    assert!(
        (s - expected_s).abs() <= 1e-12 * expected_s.abs(),
        "{s} vs {expected_s}"
    );
    second_opinion(
        f::SOURCE,
        "steps",
        vec![Value::from(m), Value::from(h0), Value::from(v)],
        vec![Value::from(h), Value::from(cleaned), Value::from(s)],
    );
}

fn x4(x: f64) -> f64 {
    (x * 4.0).round_ties_even()
}

// ---------------------------------------------------------------------------------------
// Special functions (erf erfc erfcx erfinv log1mexp gammaln digamma)
// ---------------------------------------------------------------------------------------

// Expected values: mpmath at 40 digits, rounded to the dtype (tools/special_functions.py
// has the accuracy tables; these check the programs).

#[test]
fn special_functions_f64() {
    let x = array![
        -2.5,
        -0.5,
        0.5,
        2.0,
        27.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN
    ];
    let y = array![-0.999, -0.5, 0.0, 0.5, 0.999_999, 1.0, -1.0, 1.5];
    let z = array![
        -1e-10,
        -0.5,
        -LN_2,
        -1.0,
        -40.0,
        0.0,
        f64::NEG_INFINITY,
        1.0
    ];
    let (erf, erfc, erfcx, gammaln, digamma, erfinv, log1mexp, psi) =
        f::special(x.view(), y.view(), z.view()).unwrap();
    let finite = |a: &Array1<f64>| a.iter().take(5).copied().collect::<Vec<_>>();
    assert_floats(
        &finite(&erf),
        &[
            -0.999593047982555,
            -0.5204998778130465,
            0.5204998778130465,
            0.9953222650189527,
            1.0,
        ],
        2e-16,
    );
    assert_floats(
        &finite(&erfc)[..4],
        &[
            1.999593047982555,
            1.5204998778130465,
            0.4795001221869535,
            0.004677734981047266,
        ],
        4e-16,
    );
    // erfc(27) = 5.23705e-319, a subnormal.
    assert_relative(erfc[4], 5.23705e-319, 1e-5);
    assert_floats(
        &finite(&erfcx),
        &[
            1035.814842972623,
            1.952360489182557,
            0.6156903441929259,
            0.25539567631050575,
            0.02088160799042094,
        ],
        1e-15,
    );
    assert_floats(
        &finite(&gammaln),
        &[
            -0.056243716497674054,
            1.2655121234846454,
            0.5723649429247001,
            0.0,
            61.261701761002,
        ],
        1e-15,
    );
    assert_floats(
        &finite(&digamma),
        &[
            1.103156640645243,
            0.03648997397857652,
            -1.9635100260214235,
            0.42278433509846713,
            3.2772040513135123,
        ],
        1e-15,
    );
    assert_relative(digamma[1], 0.03648997397857652, 4e-16);
    assert_floats(
        &finite(&erfinv),
        &[
            -2.3267537655135246,
            -0.4769362762044699,
            0.0,
            0.4769362762044699,
            3.458910737275499,
        ],
        4e-16,
    );
    assert_floats(
        &finite(&log1mexp),
        &[
            -23.025850929990458,
            -0.9327521295671886,
            -LN_2,
            -0.4586751453870819,
            -4.248354255291589e-18,
        ],
        4e-16,
    );
    assert_relative(log1mexp[4], -4.248354255291589e-18, 4e-16);
    // Special values: erf(±inf) = ±1, erfc(inf) = 0, erfc(-inf) = 2, erfcx(inf) = 0,
    // erfcx(-inf) = inf, gammaln(±inf) = inf, digamma(inf) = inf, digamma(-inf) NaN;
    // erfinv(±1) = ±inf, NaN beyond; log1mexp(0) = -inf, log1mexp(-inf) = 0, NaN above 0.
    assert_eq!((erf[5], erf[6], erfc[5], erfc[6]), (1.0, -1.0, 0.0, 2.0));
    assert_eq!((erfcx[5], erfcx[6]), (0.0, f64::INFINITY));
    assert_eq!(
        (gammaln[5], gammaln[6], digamma[5]),
        (f64::INFINITY, f64::INFINITY, f64::INFINITY)
    );
    assert!(digamma[6].is_nan());
    assert_eq!((erfinv[5], erfinv[6]), (f64::INFINITY, f64::NEG_INFINITY));
    assert!(erfinv[7].is_nan() && positive_zero(erfinv[2]));
    assert_eq!((log1mexp[5], log1mexp[6]), (f64::NEG_INFINITY, 0.0));
    assert!(log1mexp[7].is_nan());
    for a in [&erf, &erfc, &erfcx, &gammaln, &digamma] {
        assert!(a[7].is_nan());
    }
    // psi is digamma's other name.
    assert_eq!(
        psi.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        digamma.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    second_opinion(
        f::SOURCE,
        "special",
        vec![Value::from(x), Value::from(y), Value::from(z)],
        values(&[
            &erf, &erfc, &erfcx, &gammaln, &digamma, &erfinv, &log1mexp, &psi,
        ]),
    );
}

#[test]
fn special_functions_f32_and_on_integers() {
    let x = array![-2.5f32, 0.5, 1.5, 9.5, 0.0, -0.0, -3.0, f32::NAN];
    let k = array![1, 2, 3, 0, -1];
    let (erf, erfc, erfcx, gammaln, digamma, erfinv, log1mexp, erf_k, gammaln_k, digamma_k) =
        f::special_f32(x.view(), k.view()).unwrap();
    let first4 = |a: &Array1<f32>| a.iter().take(4).copied().collect::<Vec<_>>();
    // Correctly rounded f32 values (computed in f64, rounded once).
    let f32_ulp = f64::from(f32::EPSILON);
    assert_floats32(
        &first4(&erf),
        &[-0.999593, 0.5204999, 0.96610516, 1.0],
        f32_ulp,
    );
    assert_floats32(
        &first4(&erfc)[..3],
        &[1.999593, 0.47950011, 0.03389485],
        f32_ulp,
    );
    // erfc(9.5) = 3.77e-41 is an f32 subnormal.
    assert_eq!(erfc[3], 3.7692e-41);
    assert_floats32(
        &first4(&erfcx),
        &[1035.8148, 0.61569035, 0.32158542, 0.05906468],
        f32_ulp,
    );
    assert_floats32(
        &first4(&gammaln),
        &[-0.056243718, 0.5723649, -0.12078224, 11.689333],
        f32_ulp,
    );
    assert_floats32(
        &first4(&digamma),
        &[1.1031567, -1.96351, 0.036489975, 2.197738],
        f32_ulp,
    );
    assert_floats32(
        &first4(&erfinv),
        &[-0.22531205, 0.044340387, 0.13372692, 1.3859038],
        f32_ulp,
    );
    assert_floats32(
        &first4(&log1mexp),
        &[-0.030662715, -0.25248244, -0.08565048, -2.753683e-05],
        f32_ulp,
    );
    // Poles, as scipy: gammaln is +inf at 0, -0 and -3; digamma is -inf at +0, +inf at -0,
    // NaN at -3.
    assert_eq!(
        (gammaln[4], gammaln[5], gammaln[6]),
        (f32::INFINITY, f32::INFINITY, f32::INFINITY)
    );
    assert_eq!((digamma[4], digamma[5]), (f32::NEG_INFINITY, f32::INFINITY));
    assert!(digamma[6].is_nan() && erf[7].is_nan() && erfinv[7].is_nan());
    assert!(negative_zero(f64::from(erf[5])) && f64::from(erfinv[5]) == 0.0);
    // Integers compute in f64.
    assert_floats(
        &erf_k.to_vec()[..3],
        &[0.8427007929497149, 0.9953222650189527, 0.9999779095030014],
        2e-16,
    );
    assert_floats(
        &gammaln_k.to_vec(),
        &[0.0, 0.0, LN_2, f64::INFINITY, f64::INFINITY],
        2e-16,
    );
    assert_floats(
        &digamma_k.to_vec()[..3],
        &[-0.5772156649015329, 0.42278433509846713, 0.9227843350984671],
        2e-16,
    );
    assert_eq!(digamma_k[3], f64::NEG_INFINITY);
    assert!(digamma_k[4].is_nan());
    second_opinion(
        f::SOURCE,
        "special_f32",
        vec![Value::from(x), Value::from(k)],
        vec![
            Value::from(erf),
            Value::from(erfc),
            Value::from(erfcx),
            Value::from(gammaln),
            Value::from(digamma),
            Value::from(erfinv),
            Value::from(log1mexp),
            Value::from(erf_k),
            Value::from(gammaln_k),
            Value::from(digamma_k),
        ],
    );
}

#[test]
fn special_functions_inside_scan_steps() {
    let x = array![0.25, 1.5, 6.0, 30.0];
    let p = array![0.5, 0.975, 0.999, 1e-6];
    let (erf, erfc, erfcx, erfinv, log1mexp, gammaln, digamma, z) =
        f::special_steps(x.view(), p.view()).unwrap();
    assert_floats(
        &erf.to_vec(),
        &[0.27632639016823696, 0.9661051464753108, 1.0, 1.0],
        2e-16,
    );
    assert_floats(
        &erfc.to_vec(),
        &[
            0.7236736098317631,
            0.033894853524689274,
            2.1519736712498913e-17,
            0.0,
        ],
        4e-16,
    );
    assert_relative(erfc[2], 2.1519736712498913e-17, 4e-16);
    assert_floats(
        &erfcx.to_vec(),
        &[
            0.7703465477309968,
            0.3215854164543175,
            0.09277656780053835,
            0.01879588886141675,
        ],
        4e-16,
    );
    assert_floats(
        &erfinv.to_vec(),
        &[
            0.006923758491549614,
            0.041565812712404934,
            0.1677272200181386,
            1.3171503349861307,
        ],
        4e-16,
    );
    assert_floats(
        &log1mexp.to_vec(),
        &[
            -1.5086915494460322,
            -0.252482458925454,
            -0.002481829368959528,
            -9.357622968840613e-14,
        ],
        4e-16,
    );
    assert_relative(log1mexp[3], -9.357622968840613e-14, 4e-16);
    assert_floats(
        &gammaln.to_vec(),
        &[
            1.2880225246980774,
            -0.12078223763524522,
            4.787491742782046,
            71.25703896716801,
        ],
        4e-16,
    );
    assert_floats(
        &digamma.to_vec(),
        &[
            -4.2274535333762655,
            0.03648997397857652,
            1.7061176684318005,
            3.384438132685525,
        ],
        4e-16,
    );
    // Newton's quantiles after 50 steps: scipy's norm.ppf (sqrt 2 erfinv(2p - 1), mpmath).
    let last = z.row(z.nrows() - 1).to_vec();
    assert_floats(
        &last,
        &[
            0.0,
            1.9599639845400538,
            3.090232306167813,
            -4.753424308822899,
        ],
        1e-14,
    );
    second_opinion(
        f::SOURCE,
        "special_steps",
        vec![Value::from(x), Value::from(p)],
        values(&[&erf, &erfc, &erfcx, &erfinv, &log1mexp, &gammaln, &digamma])
            .into_iter()
            .chain([Value::from(z)])
            .collect(),
    );
}
