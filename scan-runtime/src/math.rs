//! Scalar functions called by generated code, one generic name per operation so the code
//! generator writes the same call for every dtype. Semantics follow numpy: integers wrap
//! (never panic, even in debug builds), NaN propagates through `maximum`/`minimum`.
//!
//! Generated code passes operands already cast to the operation's dtype, so every function
//! takes one type parameter.

use crate::element::{Element, Float, Number};

/// `a + b`, wrapping for integers.
#[inline]
pub fn add<T: Number>(a: T, b: T) -> T {
    a.num_add(b)
}

/// `a - b`, wrapping for integers.
#[inline]
pub fn sub<T: Number>(a: T, b: T) -> T {
    a.num_sub(b)
}

/// `a * b`, wrapping for integers.
#[inline]
pub fn mul<T: Number>(a: T, b: T) -> T {
    a.num_mul(b)
}

/// `-a`, wrapping for integers.
#[inline]
pub fn neg<T: Number>(a: T) -> T {
    a.num_neg()
}

/// True division; only floats divide (integers are cast to a float dtype first, as numpy's
/// `/` does).
#[inline]
pub fn div<T: Float>(a: T, b: T) -> T {
    a.div(b)
}

/// numpy's `%`: the result has the sign of the divisor; an integer divisor of 0 gives 0.
#[inline]
pub fn rem<T: Number>(a: T, b: T) -> T {
    a.num_rem(b)
}

/// numpy's `//`: rounds toward negative infinity; an integer divisor of 0 gives 0.
#[inline]
pub fn floor_div<T: Number>(a: T, b: T) -> T {
    a.num_floor_div(b)
}

/// `|a|`, wrapping for integers (`abs(i32::MIN) == i32::MIN`, as numpy).
#[inline]
pub fn abs<T: Number>(a: T) -> T {
    a.num_abs()
}

// exp, log, tanh and sigmoid are the branch-free approximations of `crate::approx` (within
// an ulp of the exact value; docs/SEMANTICS.md), so that loops over them vectorize and give
// the same bits on every instruction set.

/// `e^x`.
#[inline(always)]
pub fn exp<T: Float>(x: T) -> T {
    x.exp()
}

/// Natural logarithm.
#[inline(always)]
pub fn log<T: Float>(x: T) -> T {
    x.ln()
}

/// Hyperbolic tangent.
#[inline(always)]
pub fn tanh<T: Float>(x: T) -> T {
    x.tanh()
}

/// `1 / (1 + exp(-x))`, computed so that nothing overflows: large negative `x` goes
/// through the subnormals to 0, large positive `x` gives 1.
#[inline(always)]
pub fn sigmoid<T: Float>(x: T) -> T {
    x.sigmoid()
}

#[inline]
pub fn sqrt<T: Float>(x: T) -> T {
    x.sqrt()
}

/// `x ** y` for floats.
#[inline]
pub fn pow<T: Float>(x: T, y: T) -> T {
    x.powf(y)
}

/// `x ** n` with an integer exponent. Floats use `powi`; integers wrap, and a negative `n`
/// gives 0 except for a base of 1 or -1.
#[inline]
pub fn powi<T: Number>(x: T, n: i32) -> T {
    x.num_powi(n)
}

/// numpy's `maximum`: NaN in either operand gives NaN; on a tie the second operand, as
/// numpy's x86-64 loops (`maxpd`) give it, so `maximum(-0.0, 0.0)` is `0.0` and
/// `relu(-0.0)` is `0.0` (the same cost as keeping the first).
#[inline]
pub fn maximum<T: Element>(a: T, b: T) -> T {
    match a.partial_cmp(&b) {
        Some(std::cmp::Ordering::Greater) => a,
        Some(_) => b,
        // Unordered: one of them is NaN (the one not equal to itself).
        None => nan_of(a, b),
    }
}

/// numpy's `minimum`: NaN in either operand gives NaN; on a tie the second operand
/// (`minimum(0.0, -0.0)` is `-0.0`), as `maximum`.
#[inline]
pub fn minimum<T: Element>(a: T, b: T) -> T {
    match a.partial_cmp(&b) {
        Some(std::cmp::Ordering::Less) => a,
        Some(_) => b,
        None => nan_of(a, b),
    }
}

#[inline]
#[allow(clippy::eq_op)] // `a != a` is the generic NaN test.
fn nan_of<T: Element>(a: T, b: T) -> T {
    if a != a {
        a
    } else {
        b
    }
}

/// `where(c, a, b)`.
#[inline]
pub fn select<T: Copy>(c: bool, a: T, b: T) -> T {
    if c {
        a
    } else {
        b
    }
}

// The numpy functions below call std's (the platform libm's) functions, except asinh, acosh
// and atanh (the `libm` crate's fdlibm ports), the special functions erf .. digamma
// (`crate::special`: libm's or published algorithms, in f64) and the composite ones
// (softplus, log_sigmoid, logaddexp), which use the runtime's `exp` above.

macro_rules! float_unary {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name<T: Float>(x: T) -> T {
            x.$method()
        }
    )*};
}

float_unary! {
    sin => sin;
    cos => cos;
    tan => tan;
    /// NaN outside [-1, 1].
    arcsin => asin;
    /// NaN outside [-1, 1].
    arccos => acos;
    arctan => atan;
    sinh => sinh;
    cosh => cosh;
    arcsinh => asinh;
    /// NaN below 1.
    arccosh => acosh;
    /// ±inf at ±1, NaN beyond.
    arctanh => atanh;
    /// `log(1 + x)`, accurate for small `x`.
    log1p => ln_1p;
    /// `exp(x) - 1`, accurate for small `x`.
    expm1 => exp_m1;
    log2 => log2;
    log10 => log10;
    exp2 => exp2;
    floor => floor;
    ceil => ceil;
    /// numpy's `round`: half-way cases go to the even integer (`round(2.5) == 2`); the sign
    /// of a zero result is kept (`round(-0.4) == -0.0`).
    round => round_ties_even;
    trunc => trunc;
    /// The error function (libm's).
    erf => erf;
    /// `1 - erf(x)`, without cancellation for large `x` (libm's).
    erfc => erfc;
    /// `e^(x^2) erfc(x)`, finite where erfc underflows (`crate::special::erfcx`).
    erfcx => erfcx;
    /// The inverse of erf on [-1, 1]: ±inf at ±1, NaN beyond.
    erfinv => erfinv;
    /// `log(1 - e^x)` for `x <= 0` (Maechler's rule); -inf at 0, NaN above.
    log1mexp => log1mexp;
    /// `log|Gamma(x)|` (libm's `lgamma`); +inf at the poles.
    gammaln => gammaln;
    /// `Gamma'(x) / Gamma(x)`; scipy's values at the poles (-inf at +0, inf at -0, NaN at
    /// the negative integers).
    digamma => digamma;
}

/// `x * x`, wrapping for integers.
#[inline(always)]
pub fn square<T: Number>(x: T) -> T {
    x.num_mul(x)
}

/// `1 / x` (computed in a float dtype, as PyTensor's `reciprocal`).
#[inline(always)]
pub fn reciprocal<T: Float>(x: T) -> T {
    T::ONE.div(x)
}

/// numpy's `sign`: -1, 0 or 1 in `x`'s dtype; `sign(-0.0) == 0.0`, `sign(NaN)` is NaN.
#[inline(always)]
pub fn sign<T: Number>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        T::ONE.num_neg()
    } else if x == T::ZERO {
        T::ZERO
    } else {
        // Unordered: NaN.
        x
    }
}

#[inline(always)]
pub fn isnan<T: Float>(x: T) -> bool {
    x.is_nan()
}

/// True for +inf and -inf.
#[inline(always)]
pub fn isinf<T: Float>(x: T) -> bool {
    x.is_infinite()
}

/// False for infinities and NaN.
#[inline(always)]
pub fn isfinite<T: Float>(x: T) -> bool {
    x.is_finite()
}

/// `log(1 + exp(x))` as `max(x, 0) + log1p(exp(-|x|))`: no overflow for large `x`, no
/// cancellation for very negative `x` (where it is `exp(x)`).
#[inline(always)]
pub fn softplus<T: Float>(x: T) -> T {
    let tail = x.num_abs().num_neg().exp().ln_1p();
    maximum(x, T::ZERO).num_add(tail)
}

/// `log(sigmoid(x)) = -softplus(-x)`, as `min(x, 0) - log1p(exp(-|x|))`.
#[inline(always)]
pub fn log_sigmoid<T: Float>(x: T) -> T {
    let tail = x.num_abs().num_neg().exp().ln_1p();
    minimum(x, T::ZERO).num_sub(tail)
}

/// `maximum(x, 0)`: NaN stays NaN, integers stay integers.
#[inline(always)]
pub fn relu<T: Number>(x: T) -> T {
    maximum(x, T::ZERO)
}

/// numpy's `arctan2(y, x)`: the angle of the point `(x, y)`, in [-pi, pi].
#[inline(always)]
pub fn arctan2<T: Float>(y: T, x: T) -> T {
    y.atan2(x)
}

/// numpy's `logaddexp`: `log(exp(a) + exp(b))` as `max + log1p(exp(-|a - b|))`, so nothing
/// overflows; equal operands (infinities of one sign included) give `a + log(2)`; NaN
/// propagates.
#[inline(always)]
pub fn logaddexp<T: Float>(a: T, b: T) -> T {
    if a == b {
        return a.num_add(T::LN_2);
    }
    let d = a.num_sub(b);
    if d > T::ZERO {
        a.num_add(d.num_neg().exp().ln_1p())
    } else if d <= T::ZERO {
        b.num_add(d.exp().ln_1p())
    } else {
        // NaN operand.
        d
    }
}

/// numpy's `clip`: `minimum(maximum(x, lo), hi)` (so `hi` wins when `lo > hi`; NaN in any
/// operand gives NaN).
#[inline(always)]
pub fn clip<T: Element>(x: T, lo: T, hi: T) -> T {
    minimum(maximum(x, lo), hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_for_ints() {
        assert_eq!(add(i32::MAX, 1), i32::MIN);
        assert_eq!(sub(i64::MIN, 1), i64::MAX);
        assert_eq!(mul(i32::MAX, 2), -2);
        assert_eq!(neg(i32::MIN), i32::MIN);
        assert_eq!(abs(i64::MIN), i64::MIN);
        assert_eq!(abs(-7i32), 7);
        assert_eq!(add(2, 3), 5);
        assert_eq!(sub(2i64, 3), -1);
        assert_eq!(mul(-4i32, 3), -12);
    }

    #[test]
    fn arithmetic_floats() {
        assert_eq!(add(1.5f64, 2.25), 3.75);
        assert_eq!(sub(1.5f32, 2.25), -0.75);
        assert_eq!(mul(1.5f64, -2.0), -3.0);
        assert_eq!(neg(0.5f32), -0.5);
        assert_eq!(abs(-0.5f64), 0.5);
        assert_eq!(div(1.0f64, 4.0), 0.25);
        assert_eq!(div(1.0f32, 0.0), f32::INFINITY);
        assert!(div(0.0f64, 0.0).is_nan());
    }

    #[test]
    fn rem_follows_divisor_sign_ints() {
        // numpy: np.remainder([7, -7, 7, -7], [3, 3, -3, -3]) == [1, 2, -2, -1]
        assert_eq!(rem(7i32, 3), 1);
        assert_eq!(rem(-7i32, 3), 2);
        assert_eq!(rem(7i64, -3), -2);
        assert_eq!(rem(-7i64, -3), -1);
        assert_eq!(rem(6i32, 3), 0);
        assert_eq!(rem(5i32, 0), 0);
        assert_eq!(rem(i32::MIN, -1), 0);
        assert_eq!(rem(i64::MIN, -1), 0);
    }

    #[test]
    fn rem_follows_divisor_sign_floats() {
        assert_eq!(rem(7.5f64, 2.0), 1.5);
        assert_eq!(rem(-7.5f64, 2.0), 0.5);
        assert_eq!(rem(7.5f32, -2.0), -0.5);
        assert_eq!(rem(-7.5f32, -2.0), -1.5);
        // A zero remainder takes the divisor's sign.
        let z = rem(4.0f64, -2.0);
        assert_eq!(z, 0.0);
        assert!(z.is_sign_negative());
        assert!(rem(4.0f64, 2.0).is_sign_positive());
        assert!(rem(1.0f64, 0.0).is_nan());
        assert_eq!(rem(-5.0f64, f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn floor_div_rounds_down() {
        assert_eq!(floor_div(7i32, 2), 3);
        assert_eq!(floor_div(-7i32, 2), -4);
        assert_eq!(floor_div(7i64, -2), -4);
        assert_eq!(floor_div(-7i64, -2), 3);
        assert_eq!(floor_div(6i32, -3), -2);
        assert_eq!(floor_div(5i32, 0), 0);
        assert_eq!(floor_div(i32::MIN, -1), i32::MIN);
        assert_eq!(floor_div(7.0f64, 2.0), 3.0);
        assert_eq!(floor_div(-7.0f64, 2.0), -4.0);
        assert_eq!(floor_div(-7.5f32, -2.0), 3.0);
        assert_eq!(floor_div(1.0f64, 0.0), f64::INFINITY);
        assert_eq!(floor_div(-1.0f64, 0.0), f64::NEG_INFINITY);
        // floor_div * b + rem == a
        for &(a, b) in &[(7.25f64, 2.0), (-7.25, 2.0), (7.25, -0.5), (-3.0, 1.5)] {
            assert_eq!(floor_div(a, b) * b + rem(a, b), a);
        }
        for a in -9i32..=9 {
            for b in [-4i32, -3, -1, 1, 2, 5] {
                assert_eq!(floor_div(a, b) * b + rem(a, b), a, "{a} {b}");
            }
        }
    }

    #[test]
    fn transcendental() {
        assert_eq!(exp(0.0f64), 1.0);
        assert!((exp(1.0f32) - std::f32::consts::E).abs() < 1e-6);
        assert_eq!(log(1.0f64), 0.0);
        assert!((log(std::f64::consts::E) - 1.0).abs() < 1e-15);
        assert_eq!(log(0.0f64), f64::NEG_INFINITY);
        assert!(log(-1.0f32).is_nan());
        assert_eq!(tanh(0.0f64), 0.0);
        assert!((tanh(1.0f64) - 0.7615941559557649).abs() < 1e-15);
        assert_eq!(sqrt(9.0f32), 3.0);
        assert!(sqrt(-1.0f64).is_nan());
        assert_eq!(pow(2.0f64, 10.0), 1024.0);
        assert_eq!(pow(4.0f32, 0.5), 2.0);
    }

    #[test]
    fn sigmoid_is_stable() {
        assert_eq!(sigmoid(0.0f64), 0.5);
        assert!((sigmoid(2.0f64) - 0.8807970779778823).abs() < 1e-15);
        assert!((sigmoid(-2.0f64) - 0.11920292202211755).abs() < 1e-15);
        // Large negative inputs underflow to 0 without going through exp(+large) = inf.
        assert_eq!(sigmoid(-1000.0f64), 0.0);
        assert_eq!(sigmoid(1000.0f64), 1.0);
        assert!(sigmoid(-100.0f32) > 0.0);
        let s = f64::from(sigmoid(-50.0f32));
        assert!((s / 1.928_749_847_963_918e-22 - 1.0).abs() < 1e-5);
        assert!(sigmoid(f64::NAN).is_nan());
    }

    #[test]
    fn powi_ints_and_floats() {
        assert_eq!(powi(3i32, 4), 81);
        assert_eq!(powi(-2i64, 3), -8);
        assert_eq!(powi(5i32, 0), 1);
        assert_eq!(powi(0i32, 0), 1);
        assert_eq!(powi(2i32, 31), i32::MIN); // wraps
        assert_eq!(powi(2i64, 64), 0); // wraps
        assert_eq!(powi(2i32, -1), 0);
        assert_eq!(powi(0i32, -1), 0);
        assert_eq!(powi(1i32, -5), 1);
        assert_eq!(powi(-1i64, -3), -1);
        assert_eq!(powi(-1i64, -4), 1);
        assert_eq!(powi(2.0f64, -2), 0.25);
        assert_eq!(powi(1.5f32, 2), 2.25);
    }

    #[test]
    fn maximum_minimum_propagate_nan() {
        assert_eq!(maximum(1, 2), 2);
        assert_eq!(minimum(1i64, 2), 1);
        assert_eq!(maximum(-1.5f64, -2.0), -1.5);
        assert_eq!(minimum(-1.5f32, -2.0), -2.0);
        assert!(maximum(f64::NAN, 1.0).is_nan());
        assert!(maximum(1.0, f64::NAN).is_nan());
        assert!(minimum(f32::NAN, 1.0).is_nan());
        assert!(minimum(1.0, f32::NAN).is_nan());
        assert!(maximum(true, false));
        assert!(!minimum(true, false));
        // A tie gives the second operand (numpy's on x86-64): relu(-0.0) is 0.0.
        assert_eq!(maximum(-0.0f64, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(maximum(0.0f64, -0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(minimum(0.0f32, -0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(minimum(-0.0f32, 0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(relu(-0.0f64).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn trigonometric_and_hyperbolic() {
        use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        assert_eq!(sin(0.0f64), 0.0);
        assert!(sin(-0.0f64).is_sign_negative());
        assert!((sin(FRAC_PI_2) - 1.0).abs() < 1e-16);
        assert!((cos(PI) + 1.0).abs() < 1e-16);
        assert!((tan(FRAC_PI_4) - 1.0).abs() < 1e-15);
        assert!(sin(f64::INFINITY).is_nan() && cos(f32::NAN).is_nan());
        assert_eq!(arcsin(1.0f64), FRAC_PI_2);
        assert_eq!(arccos(-1.0f64), PI);
        assert!(arcsin(1.5f64).is_nan() && arccos(-1.0001f32).is_nan());
        assert_eq!(arctan(f64::INFINITY), FRAC_PI_2);
        assert_eq!(sinh(0.0f32), 0.0);
        assert_eq!(cosh(0.0f64), 1.0);
        assert_eq!(cosh(f64::NEG_INFINITY), f64::INFINITY);
        // The inverse hyperbolic functions hold up at the ends of the range, where
        // formulas squaring x overflow: asinh(1e308) = ln(2e308) = 709.889...
        assert!((arcsinh(1e308f64) - 709.889_355_822_726).abs() < 1e-12);
        assert!((arcsinh(-1e308f64) + 709.889_355_822_726).abs() < 1e-12);
        assert!((arccosh(1e308f64) - 709.889_355_822_726).abs() < 1e-12);
        assert!((f64::from(arccosh(3e38f32)) - 89.29).abs() < 1e-2);
        assert_eq!(arcsinh(1e-300f64), 1e-300);
        assert_eq!(arccosh(1.0f64), 0.0);
        assert!(arccosh(0.5f64).is_nan());
        assert_eq!(arctanh(1.0f64), f64::INFINITY);
        assert_eq!(arctanh(-1.0f32), f32::NEG_INFINITY);
        assert!(arctanh(1.5f64).is_nan());
        assert!((arctanh(0.5f64) - 0.549_306_144_334_054_8).abs() < 1e-16);
        // atan2(y, x): the quadrant of (x, y); the sign of a zero y picks ±pi.
        assert_eq!(arctan2(1.0f64, -1.0), 3.0 * FRAC_PI_4);
        assert_eq!(arctan2(0.0f64, -1.0), PI);
        assert_eq!(arctan2(-0.0f64, -1.0), -PI);
        assert_eq!(arctan2(-1.0f32, 0.0), -std::f32::consts::FRAC_PI_2);
    }

    #[test]
    fn logarithms_and_exponentials() {
        assert_eq!(log1p(1e-300f64), 1e-300);
        assert_eq!(log1p(-1.0f64), f64::NEG_INFINITY);
        assert!(log1p(-2.0f32).is_nan());
        assert_eq!(expm1(1e-300f64), 1e-300);
        assert_eq!(expm1(f64::NEG_INFINITY), -1.0);
        assert_eq!(log2(1024.0f64), 10.0);
        assert_eq!(log10(1e-3f64), -3.0);
        assert_eq!(log2(0.0f32), f32::NEG_INFINITY);
        assert_eq!(exp2(-2.0f64), 0.25);
        assert_eq!(exp2(10.0f32), 1024.0);
        assert_eq!(exp2(2000.0f64), f64::INFINITY);
    }

    #[test]
    fn rounding() {
        let xs = [-2.5f64, -1.5, -0.5, -0.4, 0.5, 1.5, 2.5, 2.6];
        let r: Vec<f64> = xs.iter().map(|&x| round(x)).collect();
        assert_eq!(r, [-2.0, -2.0, -0.0, -0.0, 0.0, 2.0, 2.0, 3.0]);
        assert!(round(-0.4f64).is_sign_negative());
        assert!(round(-0.5f32).is_sign_negative());
        assert_eq!(round(0.5f32), 0.0);
        assert_eq!(round(3.5f32), 4.0);
        assert_eq!(floor(-1.5f64), -2.0);
        assert_eq!(ceil(-1.5f64), -1.0);
        assert!(ceil(-0.5f64).is_sign_negative());
        assert_eq!(trunc(-1.7f32), -1.0);
        assert_eq!(trunc(1.7f64), 1.0);
        assert_eq!(floor(f64::INFINITY), f64::INFINITY);
        assert!(round(f64::NAN).is_nan());
    }

    #[test]
    fn square_reciprocal_sign() {
        assert_eq!(square(-3i32), 9);
        assert_eq!(square(65536i32), 0); // wraps, as numpy
        assert_eq!(square(-1.5f64), 2.25);
        assert_eq!(reciprocal(4.0f64), 0.25);
        assert_eq!(reciprocal(0.0f32), f32::INFINITY);
        assert_eq!(reciprocal(-0.0f64), f64::NEG_INFINITY);
        assert_eq!(sign(-7i64), -1);
        assert_eq!(sign(0i32), 0);
        assert_eq!(sign(i32::MIN), -1);
        assert_eq!(sign(-2.5f64), -1.0);
        assert_eq!(sign(f32::INFINITY), 1.0);
        let z = sign(-0.0f64);
        assert!(z == 0.0 && z.is_sign_positive());
        assert!(sign(f64::NAN).is_nan());
    }

    #[test]
    fn float_tests() {
        assert!(isnan(f64::NAN) && !isnan(f32::INFINITY) && !isnan(0.0f64));
        assert!(isinf(f64::NEG_INFINITY) && isinf(f32::INFINITY) && !isinf(f64::NAN));
        assert!(isfinite(f64::MAX) && !isfinite(f32::NAN) && !isfinite(f64::INFINITY));
    }

    #[test]
    fn softplus_and_log_sigmoid_are_stable() {
        let ln2 = std::f64::consts::LN_2;
        assert!((softplus(0.0f64) - ln2).abs() < 1e-16);
        assert_eq!(softplus(1000.0f64), 1000.0);
        assert_eq!(softplus(1000.0f32), 1000.0);
        // softplus(-1000) = e^-1000 underflows to 0, but not by cancellation:
        // softplus(-700) = e^-700.
        assert_eq!(softplus(-1000.0f64), 0.0);
        assert!((softplus(-700.0f64) / 9.859_676_543_759_77e-305 - 1.0).abs() < 1e-14);
        assert!((softplus(2.0f64) - 2.126_928_011_042_972_5).abs() < 1e-15);
        assert_eq!(softplus(f64::INFINITY), f64::INFINITY);
        assert_eq!(softplus(f64::NEG_INFINITY), 0.0);
        assert!(softplus(f32::NAN).is_nan());
        assert!((log_sigmoid(0.0f64) + ln2).abs() < 1e-16);
        assert_eq!(log_sigmoid(-1000.0f64), -1000.0);
        assert_eq!(log_sigmoid(1000.0f32), 0.0);
        assert!((log_sigmoid(700.0f64) + 9.859_676_543_759_77e-305).abs() < 1e-318);
        assert_eq!(log_sigmoid(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(log_sigmoid(f64::NAN).is_nan());
    }

    #[test]
    fn logaddexp_is_stable() {
        let ln2 = std::f64::consts::LN_2;
        assert!((logaddexp(1000.0f64, 1000.0) - (1000.0 + ln2)).abs() < 1e-12);
        assert_eq!(logaddexp(1000.0f64, -1000.0), 1000.0);
        assert!(
            (logaddexp(-1000.0f64, -1001.0) - (-1000.0 + 0.313_261_687_518_222_8)).abs() < 1e-12
        );
        assert_eq!(logaddexp(f64::NEG_INFINITY, 3.0), 3.0);
        assert_eq!(logaddexp(3.0f32, f32::NEG_INFINITY), 3.0);
        assert_eq!(
            logaddexp(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(logaddexp(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(logaddexp(f64::INFINITY, f64::NEG_INFINITY), f64::INFINITY);
        assert!(logaddexp(f64::NAN, 1.0).is_nan());
        assert!(logaddexp(1.0f32, f32::NAN).is_nan());
    }

    #[test]
    fn relu_and_clip() {
        assert_eq!(relu(-3i32), 0);
        assert_eq!(relu(3i64), 3);
        assert_eq!(relu(-0.5f64), 0.0);
        assert!(relu(f64::NAN).is_nan());
        assert_eq!(clip(5i32, 0, 3), 3);
        assert_eq!(clip(-5i64, 0, 3), 0);
        assert_eq!(clip(1.5f64, 0.0, 3.0), 1.5);
        // lo > hi: hi wins (minimum is applied last), as numpy.
        assert_eq!(clip(1.0f64, 2.0, 0.0), 0.0);
        assert!(clip(f64::NAN, 0.0, 1.0).is_nan());
        assert!(clip(0.5f32, f32::NAN, 1.0).is_nan());
        assert_eq!(clip(f64::INFINITY, 0.0, 1.0), 1.0);
    }

    #[test]
    fn select_picks_by_condition() {
        assert_eq!(select(true, 1, 2), 1);
        assert_eq!(select(false, 1.0, 2.0), 2.0);
    }
}
