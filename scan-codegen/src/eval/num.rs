//! Scalar arithmetic, one definition per dtype: integers wrap on overflow, floats follow
//! IEEE, `rem` and `maximum`/`minimum` follow numpy.

use super::value::Element;

/// The numeric dtypes (i32, i64, f32, f64).
pub trait Number: Element {
    fn zero() -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    /// numpy's `%`: the result has the sign of the divisor; integer `x % 0` is 0.
    fn rem(self, other: Self) -> Self;
    /// NaN if either operand is NaN.
    fn maximum(self, other: Self) -> Self;
    /// NaN if either operand is NaN.
    fn minimum(self, other: Self) -> Self;
    /// `x ** n` for a literal integer exponent.
    fn powi(self, n: i32) -> Self;
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
}

macro_rules! int_number {
    ($t:ty) => {
        impl Number for $t {
            fn zero() -> $t {
                0
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
        }
    };
}

int_number!(i32);
int_number!(i64);

macro_rules! float_number {
    ($t:ty) => {
        impl Number for $t {
            fn zero() -> $t {
                0.0
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
            fn maximum(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    <$t>::NAN
                } else {
                    self.max(other)
                }
            }
            fn minimum(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    <$t>::NAN
                } else {
                    self.min(other)
                }
            }
            fn powi(self, n: i32) -> $t {
                <$t>::powi(self, n)
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
