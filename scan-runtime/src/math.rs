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

/// numpy's `maximum`: NaN in either operand gives NaN.
#[inline]
pub fn maximum<T: Element>(a: T, b: T) -> T {
    match a.partial_cmp(&b) {
        Some(std::cmp::Ordering::Less) => b,
        Some(_) => a,
        // Unordered: one of them is NaN (the one not equal to itself).
        None => nan_of(a, b),
    }
}

/// numpy's `minimum`: NaN in either operand gives NaN.
#[inline]
pub fn minimum<T: Element>(a: T, b: T) -> T {
    match a.partial_cmp(&b) {
        Some(std::cmp::Ordering::Greater) => b,
        Some(_) => a,
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
    }

    #[test]
    fn select_picks_by_condition() {
        assert_eq!(select(true, 1, 2), 1);
        assert_eq!(select(false, 1.0, 2.0), 2.0);
    }
}
