//! Scalar arithmetic, one definition per dtype: integers wrap on overflow, floats follow
//! IEEE, `rem` and `maximum`/`minimum` follow numpy.

use super::value::Element;

/// The numeric dtypes (the signed and unsigned integers, f32, f64).
pub trait Number: Element {
    fn zero() -> Self;
    fn one() -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    /// numpy's `%`: the result has the sign of the divisor; integer `x % 0` is 0.
    fn rem(self, other: Self) -> Self;
    /// numpy's `floor_divide`: toward negative infinity; integer `x // 0` is 0, float
    /// `x // 0` is `x / 0`.
    fn floor_div(self, other: Self) -> Self;
    /// NaN if either operand is NaN.
    fn maximum(self, other: Self) -> Self;
    /// NaN if either operand is NaN.
    fn minimum(self, other: Self) -> Self;
    /// `x ** n` for a literal integer exponent.
    fn powi(self, n: i32) -> Self;
    /// numpy's `sign`: -1, 0 or 1; NaN for NaN, +0 for -0.
    fn sign(self) -> Self;
}

/// The float dtypes (f32, f64).
pub trait Float: Number {
    fn div(self, other: Self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
    fn sqrt(self) -> Self;
    fn powf(self, other: Self) -> Self;
    /// `1 / (1 + exp(-x))`.
    fn sigmoid(self) -> Self;
    /// `self / n`, for means.
    fn div_count(self, n: usize) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn ln_1p(self) -> Self;
    fn exp_m1(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn exp2(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// Half-way cases to even, as numpy's `round`.
    fn round(self) -> Self;
    fn trunc(self) -> Self;
    /// `1 / self`.
    fn recip(self) -> Self;
    /// `log(1 + exp(self))`.
    fn softplus(self) -> Self;
    /// `log(sigmoid(self))`.
    fn log_sigmoid(self) -> Self;
    /// `atan2(self, x)`: the angle of the point `(x, self)`.
    fn atan2(self, x: Self) -> Self;
    /// `log(exp(self) + exp(other))`.
    fn logaddexp(self, other: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_inf(self) -> bool;
    fn is_finite(self) -> bool;
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    /// `exp(x^2) erfc(x)`.
    fn erfcx(self) -> Self;
    fn erfinv(self) -> Self;
    /// `log(1 - exp(x))`.
    fn log1mexp(self) -> Self;
    /// `log|Gamma(x)|`.
    fn gammaln(self) -> Self;
    fn digamma(self) -> Self;
}

macro_rules! int_number {
    ($t:ty) => {
        impl Number for $t {
            fn zero() -> $t {
                0
            }
            fn one() -> $t {
                1
            }
            fn add(self, other: $t) -> $t {
                self.wrapping_add(other)
            }
            fn sub(self, other: $t) -> $t {
                self.wrapping_sub(other)
            }
            fn mul(self, other: $t) -> $t {
                self.wrapping_mul(other)
            }
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
            fn abs(self) -> $t {
                self.wrapping_abs()
            }
            fn floor_div(self, other: $t) -> $t {
                if other == 0 {
                    return 0;
                }
                // The truncated quotient, one less when the remainder and the divisor
                // differ in sign (MIN / -1 wraps, as numpy's).
                let q = self.wrapping_div(other);
                let r = self.wrapping_rem(other);
                if r != 0 && ((r < 0) != (other < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            fn rem(self, other: $t) -> $t {
                if other == 0 {
                    return 0;
                }
                // Truncated remainder (sign of the dividend), then moved to the divisor's sign.
                let r = self.wrapping_rem(other);
                if r != 0 && ((r < 0) != (other < 0)) {
                    r + other
                } else {
                    r
                }
            }
            fn maximum(self, other: $t) -> $t {
                self.max(other)
            }
            fn minimum(self, other: $t) -> $t {
                self.min(other)
            }
            fn powi(self, n: i32) -> $t {
                if n >= 0 {
                    self.wrapping_pow(n.unsigned_abs())
                } else if self == 1 {
                    1
                } else if self == -1 {
                    if n % 2 == 0 {
                        1
                    } else {
                        -1
                    }
                } else {
                    0
                }
            }
            fn sign(self) -> $t {
                self.signum()
            }
        }
    };
}

int_number!(i8);
int_number!(i16);
int_number!(i32);
int_number!(i64);

/// The unsigned integers: the same wrapping arithmetic; no value is negative, so `%` and
/// `//` are Rust's (`x % 0` and `x // 0` are 0, as for the signed ones), `abs` is the value
/// and `-x` wraps (numpy's `-np.uint8(1)` is 255).
macro_rules! uint_number {
    ($t:ty) => {
        impl Number for $t {
            fn zero() -> $t {
                0
            }
            fn one() -> $t {
                1
            }
            fn add(self, other: $t) -> $t {
                self.wrapping_add(other)
            }
            fn sub(self, other: $t) -> $t {
                self.wrapping_sub(other)
            }
            fn mul(self, other: $t) -> $t {
                self.wrapping_mul(other)
            }
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
            fn abs(self) -> $t {
                self
            }
            fn floor_div(self, other: $t) -> $t {
                self.checked_div(other).unwrap_or(0)
            }
            fn rem(self, other: $t) -> $t {
                self.checked_rem(other).unwrap_or(0)
            }
            fn maximum(self, other: $t) -> $t {
                self.max(other)
            }
            fn minimum(self, other: $t) -> $t {
                self.min(other)
            }
            fn powi(self, n: i32) -> $t {
                if n >= 0 {
                    self.wrapping_pow(n.unsigned_abs())
                } else if self == 1 {
                    1
                } else {
                    0
                }
            }
            fn sign(self) -> $t {
                <$t>::from(self != 0)
            }
        }
    };
}

uint_number!(u8);
uint_number!(u16);
uint_number!(u32);
uint_number!(u64);

/// The special functions of [`super::special`], in f64 (an f32 rounded once at the end).
macro_rules! special {
    ($t:ty: $($f:ident),*) => {$(
        #[allow(clippy::unnecessary_cast)] // `as f64` is needed for f32 only.
        fn $f(self) -> $t {
            super::special::$f(self as f64) as $t
        }
    )*};
}

macro_rules! float_number {
    ($t:ty) => {
        impl Number for $t {
            fn zero() -> $t {
                0.0
            }
            fn one() -> $t {
                1.0
            }
            fn add(self, other: $t) -> $t {
                self + other
            }
            fn sub(self, other: $t) -> $t {
                self - other
            }
            fn mul(self, other: $t) -> $t {
                self * other
            }
            fn neg(self) -> $t {
                -self
            }
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            fn floor_div(self, other: $t) -> $t {
                // numpy's npy_divmod: (a - fmod(a, b)) / b, one less when the remainder
                // and the divisor differ in sign, then rounded to the integer it is.
                if other == 0.0 {
                    return self / other;
                }
                let m = self % other;
                let mut div = (self - m) / other;
                if m != 0.0 && ((other < 0.0) != (m < 0.0)) {
                    div -= 1.0;
                }
                if div == 0.0 {
                    return (0.0 as $t).copysign(self / other);
                }
                let f = div.floor();
                if div - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            }
            fn rem(self, other: $t) -> $t {
                // numpy: fmod (Rust's `%`), then moved to the divisor's sign; a zero result
                // takes the divisor's sign too.
                let r = self % other;
                if r == 0.0 {
                    (0.0 as $t).copysign(other)
                } else if (r < 0.0) != (other < 0.0) {
                    r + other
                } else {
                    r
                }
            }
            // numpy's: NaN from either side; on a tie (0.0 and -0.0) the second operand,
            // as numpy's x86-64 loops (std's max/min leave the zero's sign unspecified).
            fn maximum(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    <$t>::NAN
                } else if self > other {
                    self
                } else {
                    other
                }
            }
            fn minimum(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    <$t>::NAN
                } else if self < other {
                    self
                } else {
                    other
                }
            }
            fn powi(self, n: i32) -> $t {
                <$t>::powi(self, n)
            }
            fn sign(self) -> $t {
                // Rust's signum gives ±1 for ±0 and keeps NaN.
                if self == 0.0 {
                    0.0
                } else {
                    self.signum()
                }
            }
        }

        impl Float for $t {
            fn div(self, other: $t) -> $t {
                self / other
            }
            fn exp(self) -> $t {
                <$t>::exp(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn tanh(self) -> $t {
                <$t>::tanh(self)
            }
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            fn powf(self, other: $t) -> $t {
                <$t>::powf(self, other)
            }
            fn sigmoid(self) -> $t {
                1.0 / (1.0 + <$t>::exp(-self))
            }
            fn div_count(self, n: usize) -> $t {
                self / (n as $t)
            }
            fn sin(self) -> $t {
                <$t>::sin(self)
            }
            fn cos(self) -> $t {
                <$t>::cos(self)
            }
            fn tan(self) -> $t {
                <$t>::tan(self)
            }
            fn asin(self) -> $t {
                <$t>::asin(self)
            }
            fn acos(self) -> $t {
                <$t>::acos(self)
            }
            fn atan(self) -> $t {
                <$t>::atan(self)
            }
            fn sinh(self) -> $t {
                <$t>::sinh(self)
            }
            fn cosh(self) -> $t {
                <$t>::cosh(self)
            }
            fn asinh(self) -> $t {
                // std's formula squares x: above 2^26, asinh(x) = ln(2|x|) to the last bit.
                let a = <$t>::abs(self);
                if a > 67108864.0 {
                    (<$t>::ln(a) + (std::f64::consts::LN_2 as $t)).copysign(self)
                } else {
                    <$t>::asinh(self)
                }
            }
            fn acosh(self) -> $t {
                // Likewise acosh(x) = ln(2x) above 2^26.
                if self > 67108864.0 {
                    <$t>::ln(self) + (std::f64::consts::LN_2 as $t)
                } else {
                    <$t>::acosh(self)
                }
            }
            fn atanh(self) -> $t {
                <$t>::atanh(self)
            }
            fn ln_1p(self) -> $t {
                <$t>::ln_1p(self)
            }
            fn exp_m1(self) -> $t {
                <$t>::exp_m1(self)
            }
            fn log2(self) -> $t {
                <$t>::log2(self)
            }
            fn log10(self) -> $t {
                <$t>::log10(self)
            }
            fn exp2(self) -> $t {
                <$t>::exp2(self)
            }
            fn floor(self) -> $t {
                <$t>::floor(self)
            }
            fn ceil(self) -> $t {
                <$t>::ceil(self)
            }
            fn round(self) -> $t {
                <$t>::round_ties_even(self)
            }
            fn trunc(self) -> $t {
                <$t>::trunc(self)
            }
            fn recip(self) -> $t {
                <$t>::recip(self)
            }
            fn softplus(self) -> $t {
                // PyTensor's piecewise form: exp(x) where 1 + exp(x) rounds to 1,
                // log1p(exp(x)) in the middle, x + exp(-x) and then x for large x.
                if self < -37.0 {
                    <$t>::exp(self)
                } else if self < 18.0 {
                    <$t>::ln_1p(<$t>::exp(self))
                } else if self < 33.3 {
                    self + <$t>::exp(-self)
                } else {
                    self
                }
            }
            fn log_sigmoid(self) -> $t {
                -(-self).softplus()
            }
            fn atan2(self, x: $t) -> $t {
                <$t>::atan2(self, x)
            }
            fn logaddexp(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    return <$t>::NAN;
                }
                if self == other {
                    // Also the infinities: inf + inf, -inf + -inf.
                    return self + (std::f64::consts::LN_2 as $t);
                }
                let hi = if self > other { self } else { other };
                hi + <$t>::ln_1p(<$t>::exp(-<$t>::abs(self - other)))
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_inf(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            special!($t: erf, erfc, erfcx, erfinv, log1mexp, gammaln, digamma);
        }
    };
}

float_number!(f32);
float_number!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rem_has_the_sign_of_the_divisor() {
        assert_eq!(Number::rem(7i32, 3), 1);
        assert_eq!(Number::rem(-7i32, 3), 2);
        assert_eq!(Number::rem(7i32, -3), -2);
        assert_eq!(Number::rem(-7i64, -3), -1);
        assert_eq!(Number::rem(5i32, 0), 0);
        assert_eq!(Number::rem(i32::MIN, -1), 0);
        assert_eq!(Number::rem(-7.5f64, 2.0), 0.5);
        assert_eq!(Number::rem(7.5f64, -2.0), -0.5);
        assert!(Number::rem(1.0f64, 0.0).is_nan());
        assert!(Number::rem(-4.0f64, 2.0).is_sign_positive());
        assert!(Number::rem(4.0f32, -2.0).is_sign_negative());
    }

    #[test]
    fn integer_powers() {
        assert_eq!(Number::powi(3i32, 3), 27);
        assert_eq!(Number::powi(2i32, 31), i32::MIN);
        assert_eq!(Number::powi(1i64, -3), 1);
        assert_eq!(Number::powi(-1i64, -3), -1);
        assert_eq!(Number::powi(-1i64, -2), 1);
        assert_eq!(Number::powi(5i64, -1), 0);
        assert_eq!(Number::powi(2.0f64, -2), 0.25);
    }

    #[test]
    fn small_and_unsigned_integers_follow_numpy() {
        // numpy 2.4.6 (tools/int_dtypes.py).
        assert_eq!(Number::add(255u8, 1), 0);
        assert_eq!(Number::sub(-128i8, 1), 127);
        assert_eq!(Number::mul(100i8, 3), 44);
        assert_eq!(Number::neg(1u8), 255);
        assert_eq!(Number::abs(200u8), 200);
        assert_eq!(Number::floor_div(-7i8, 2), -4);
        assert_eq!(Number::rem(-7i8, 3), 2);
        assert_eq!(Number::floor_div(-128i8, 2), -64);
        assert_eq!(Number::rem(-128i8, 3), 1);
        assert_eq!(Number::floor_div(200u8, 3), 66);
        assert_eq!(Number::rem(200u8, 3), 2);
        assert_eq!(Number::floor_div(7u16, 0), 0);
        assert_eq!(Number::rem(7u64, 0), 0);
        assert_eq!(Number::powi(2u8, 8), 0);
        assert_eq!(Number::powi(1u32, -2), 1);
        assert_eq!(Number::powi(2u32, -2), 0);
        assert_eq!(Number::sign(0u8), 0);
        assert_eq!(Number::sign(7u64), 1);
        assert_eq!(Number::sign(-7i16), -1);
    }

    #[test]
    fn wrapping_and_nan_propagation() {
        assert_eq!(Number::add(i32::MAX, 1), i32::MIN);
        assert_eq!(Number::abs(i64::MIN), i64::MIN);
        assert_eq!(Number::neg(i32::MIN), i32::MIN);
        assert!(Number::maximum(f64::NAN, 1.0).is_nan());
        assert!(Number::minimum(1.0f32, f32::NAN).is_nan());
        assert_eq!(Number::maximum(-0.5f32, 2.0), 2.0);
        assert!((Float::sigmoid(0.0f64) - 0.5).abs() < 1e-15);
    }
}
