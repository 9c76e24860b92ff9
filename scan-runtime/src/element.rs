//! Element types of scan arrays and the operations generic kernels need from them.
//!
//! The dtypes of the scan language: `bool`, the integers `i8 i16 i32 i64 u8 u16 u32 u64`,
//! `f32` and `f64`.
//! Integer arithmetic wraps (like numpy, and so that debug builds never panic on user data);
//! float arithmetic is IEEE.

use ndarray::{ArrayView2, ArrayViewMut2};

use crate::error::Result;

mod sealed {
    pub trait Sealed {}
    impl Sealed for bool {}
    impl Sealed for i8 {}
    impl Sealed for i16 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Any of the scan language's dtypes. Sealed: kernels rely on these exact types.
pub trait Element:
    Copy + Default + PartialEq + PartialOrd + std::fmt::Debug + Send + Sync + 'static + sealed::Sealed
{
    /// The dtype's name in the scan language (and in Rust).
    const NAME: &'static str;
}

/// Integer and float dtypes: everything arithmetic works on.
pub trait Number: Element {
    const ZERO: Self;
    const ONE: Self;

    /// `self + rhs`, wrapping for integers.
    fn num_add(self, rhs: Self) -> Self;
    /// `self - rhs`, wrapping for integers.
    fn num_sub(self, rhs: Self) -> Self;
    /// `self * rhs`, wrapping for integers.
    fn num_mul(self, rhs: Self) -> Self;
    /// `-self`, wrapping for integers.
    fn num_neg(self) -> Self;
    /// `|self|`, wrapping for integers (`abs(i32::MIN) == i32::MIN`, as numpy).
    fn num_abs(self) -> Self;
    /// numpy's `remainder`: the result has the sign of the divisor; an integer divisor of 0
    /// gives 0.
    fn num_rem(self, rhs: Self) -> Self;
    /// numpy's `floor_divide`: rounds toward negative infinity; an integer divisor of 0
    /// gives 0.
    fn num_floor_div(self, rhs: Self) -> Self;
    /// `self` to the integer power `n`. Integers wrap; a negative `n` gives 0 except for a
    /// base of 1 or -1, as exact integer math truncated toward zero would.
    fn num_powi(self, n: i32) -> Self;

    /// The matrix product entry used by every dot kernel but vector·vector: `out = a · b`
    /// with `out` of shape `(m, n)`, `a` `(m, k)`, `b` `(k, n)`, any strides (a vector
    /// operand is a one-row or one-column view). Floats go through the backend chosen by
    /// cargo features, faer by default (see `kernels::dot`); integers use a direct wrapping
    /// loop. Shapes are checked: `Err(Dot)` naming `what` when they disagree, and nothing is
    /// written.
    fn gemm(
        out: ArrayViewMut2<'_, Self>,
        a: ArrayView2<'_, Self>,
        b: ArrayView2<'_, Self>,
        what: &str,
    ) -> Result<()>;

    /// [`Number::gemm`] accumulated: `out += a · b` (`out -= a · b` when `subtract`), BLAS's
    /// gemm with beta = 1 for floats. Rounding may differ from the product made first and
    /// then added (the backend adds the sum in blocks).
    fn gemm_add(
        out: ArrayViewMut2<'_, Self>,
        a: ArrayView2<'_, Self>,
        b: ArrayView2<'_, Self>,
        subtract: bool,
        what: &str,
    ) -> Result<()>;

    /// `a · b` into `out` as `into` says by the tiny-product kernels ([`crate::kernels::tiny`]),
    /// `true` when it was (the product is tiny and the CPU has them), `false` with `out`
    /// untouched otherwise, and always for integers. The dot kernels try it first, with
    /// the shapes checked once, before the general path.
    #[inline(always)]
    fn try_tiny(
        out: &mut ArrayViewMut2<'_, Self>,
        a: ArrayView2<'_, Self>,
        b: ArrayView2<'_, Self>,
        into: crate::kernels::tiny::Into<'_, Self>,
    ) -> bool {
        let _ = (out, a, b, into);
        false
    }

    /// A dot-add's sum: `out = c + a · b` (`c - a · b` when `subtract`), `c` of `out`'s
    /// shape (broadcast already). By default `c` is copied into `out` and the product
    /// accumulated onto it ([`Number::gemm_add`]); floats read `c` in place in a tiny
    /// product (`kernels::tiny`).
    fn gemm_add_to(
        mut out: ArrayViewMut2<'_, Self>,
        c: ArrayView2<'_, Self>,
        a: ArrayView2<'_, Self>,
        b: ArrayView2<'_, Self>,
        subtract: bool,
        what: &str,
    ) -> Result<()> {
        crate::kernels::dot::copy_addend(&mut out, c);
        Self::gemm_add(out, a, b, subtract, what)
    }
}

/// `f32` and `f64`: what the transcendental functions and `mean` need.
///
/// `exp`, `ln`, `tanh` and `sigmoid` are the runtime's branch-free approximations
/// ([`crate::approx`]: within an ulp, the same bits on every instruction set, and loops over
/// them vectorize), not libm's.
pub trait Float: Number {
    const NAN: Self;
    const HALF: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
    /// `1 / (1 + e^{-self})`, without overflow for any input.
    fn sigmoid(self) -> Self;
    fn sqrt(self) -> Self;
    fn powf(self, n: Self) -> Self;
    fn floor(self) -> Self;
    fn copysign(self, sign: Self) -> Self;
    fn is_nan(self) -> bool;
    fn div(self, rhs: Self) -> Self;
    /// C's `fmod` (Rust's `%`): the remainder with the dividend's sign.
    fn fmod(self, rhs: Self) -> Self;
    /// The nearest value to `n`, for dividing by a count.
    fn from_usize(n: usize) -> Self;

    // The functions below are std's (the platform's libm), except asinh, acosh and atanh,
    // which are the `libm` crate's (std's formulas overflow for large arguments).
    const LN_2: Self;
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
    /// `ln(1 + self)`, exact for small `self`.
    fn ln_1p(self) -> Self;
    /// `e^self - 1`, exact for small `self`.
    fn exp_m1(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn exp2(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    /// Rounds half-way cases to the even integer (numpy's `round`, `rint`).
    fn round_ties_even(self) -> Self;
    /// `atan(self / x)` in the quadrant of `(x, self)`.
    fn atan2(self, x: Self) -> Self;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;

    // The special functions of [`crate::special`], computed in f64 (an f32 is rounded
    // once at the end).
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    /// `e^(x^2) erfc(x)`.
    fn erfcx(self) -> Self;
    fn erfinv(self) -> Self;
    /// `log(1 - e^x)`.
    fn log1mexp(self) -> Self;
    /// `log|Gamma(x)|`.
    fn gammaln(self) -> Self;
    fn digamma(self) -> Self;
}

/// Conversion between dtypes with numpy's `astype` meaning: numbers convert with `as`
/// (float to int truncates toward zero and saturates, NaN gives 0), `bool` becomes 0 or 1,
/// and a number becomes `bool` when it is not 0 (NaN is true).
pub trait Cast<U> {
    fn cast(self) -> U;
}

impl Element for bool {
    const NAME: &'static str = "bool";
}

/// `Element` and `Number` for an integer type: wrapping arithmetic and the direct product
/// loops, shared by the signed and the unsigned ones; `$rest` holds the methods that
/// differ (`abs`, `%`, `//`, negative powers).
macro_rules! int_number {
    ($t:ty, $($rest:tt)*) => {
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
        }

        impl Number for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;

            #[inline]
            fn num_add(self, rhs: Self) -> Self {
                self.wrapping_add(rhs)
            }
            #[inline]
            fn num_sub(self, rhs: Self) -> Self {
                self.wrapping_sub(rhs)
            }
            #[inline]
            fn num_mul(self, rhs: Self) -> Self {
                self.wrapping_mul(rhs)
            }
            #[inline]
            fn num_neg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn gemm(
                out: ArrayViewMut2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                what: &str,
            ) -> Result<()> {
                crate::kernels::dot::gemm_loop(out, a, b, what)
            }
            #[inline(always)]
            fn gemm_add(
                out: ArrayViewMut2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                subtract: bool,
                what: &str,
            ) -> Result<()> {
                crate::kernels::dot::gemm_loop_add(out, a, b, subtract, what)
            }
            $($rest)*
        }
    };
}

/// The signed integers: numpy's floor division and remainder (the remainder takes the
/// divisor's sign; a divisor of 0 gives 0).
macro_rules! int_impls {
    ($($t:ty),*) => {$(
        int_number!($t,
            #[inline]
            fn num_abs(self) -> Self {
                self.wrapping_abs()
            }
            #[inline]
            fn num_rem(self, rhs: Self) -> Self {
                if rhs == 0 {
                    return 0;
                }
                // wrapping_rem: MIN % -1 is 0 instead of an overflow panic.
                let r = self.wrapping_rem(rhs);
                if r != 0 && ((r < 0) != (rhs < 0)) {
                    r + rhs
                } else {
                    r
                }
            }
            #[inline]
            fn num_floor_div(self, rhs: Self) -> Self {
                if rhs == 0 {
                    return 0;
                }
                // wrapping_div: MIN / -1 wraps to MIN, as numpy does.
                let q = self.wrapping_div(rhs);
                if self.wrapping_rem(rhs) != 0 && ((self < 0) != (rhs < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            #[inline]
            fn num_powi(self, n: i32) -> Self {
                if n >= 0 {
                    self.wrapping_pow(n.unsigned_abs())
                } else {
                    match self {
                        1 => 1,
                        -1 => if n % 2 == 0 { 1 } else { -1 },
                        _ => 0,
                    }
                }
            }
        );
    )*};
}

int_impls!(i8, i16, i32, i64);

/// The unsigned integers: `%` and `//` are Rust's (no value is negative; a divisor of 0
/// gives 0, as for the signed ones), `abs` is the value, `-x` wraps (numpy's
/// `-np.uint8(1)` is 255), and a negative power is 0 except of 1.
macro_rules! uint_impls {
    ($($t:ty),*) => {$(
        int_number!($t,
            #[inline]
            fn num_abs(self) -> Self {
                self
            }
            #[inline]
            fn num_rem(self, rhs: Self) -> Self {
                self.checked_rem(rhs).unwrap_or(0)
            }
            #[inline]
            fn num_floor_div(self, rhs: Self) -> Self {
                self.checked_div(rhs).unwrap_or(0)
            }
            #[inline]
            fn num_powi(self, n: i32) -> Self {
                if n >= 0 {
                    self.wrapping_pow(n.unsigned_abs())
                } else if self == 1 {
                    1
                } else {
                    0
                }
            }
        );
    )*};
}

uint_impls!(u8, u16, u32, u64);

/// Methods of `Float` that call std's method of the same name.
macro_rules! std_float_methods {
    ($t:ident: $($f:ident),*) => {$(
        #[inline(always)]
        fn $f(self) -> Self {
            $t::$f(self)
        }
    )*};
}

macro_rules! float_impls {
    ($($t:ident => $exp:ident, $ln:ident, $tanh:ident, $sigmoid:ident,
        $asinh:ident, $acosh:ident, $atanh:ident);*) => {$(
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
        }

        impl Number for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;

            #[inline]
            fn num_add(self, rhs: Self) -> Self {
                self + rhs
            }
            #[inline]
            fn num_sub(self, rhs: Self) -> Self {
                self - rhs
            }
            #[inline]
            fn num_mul(self, rhs: Self) -> Self {
                self * rhs
            }
            #[inline]
            fn num_neg(self) -> Self {
                -self
            }
            #[inline]
            fn num_abs(self) -> Self {
                self.abs()
            }
            #[inline]
            fn num_rem(self, rhs: Self) -> Self {
                float_divmod(self, rhs).1
            }
            #[inline]
            fn num_floor_div(self, rhs: Self) -> Self {
                float_divmod(self, rhs).0
            }
            #[inline]
            fn num_powi(self, n: i32) -> Self {
                self.powi(n)
            }
            #[inline(always)]
            fn gemm(
                out: ArrayViewMut2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                what: &str,
            ) -> Result<()> {
                crate::kernels::dot::gemm_float(out, a, b, what)
            }
            #[inline(always)]
            fn gemm_add(
                out: ArrayViewMut2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                subtract: bool,
                what: &str,
            ) -> Result<()> {
                crate::kernels::dot::gemm_add_float(out, a, b, subtract, what)
            }
            #[inline(always)]
            fn try_tiny(
                out: &mut ArrayViewMut2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                into: crate::kernels::tiny::Into<'_, Self>,
            ) -> bool {
                <Self as crate::kernels::tiny::Tiny>::tiny_product(out, a, b, into)
            }
            #[inline(always)]
            fn gemm_add_to(
                out: ArrayViewMut2<'_, Self>,
                c: ArrayView2<'_, Self>,
                a: ArrayView2<'_, Self>,
                b: ArrayView2<'_, Self>,
                subtract: bool,
                what: &str,
            ) -> Result<()> {
                crate::kernels::dot::gemm_add_to_float(out, c, a, b, subtract, what)
            }
        }

        impl Float for $t {
            const NAN: Self = $t::NAN;
            const HALF: Self = 0.5;
            #[inline(always)]
            fn exp(self) -> Self {
                crate::approx::$exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                crate::approx::$ln(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                crate::approx::$tanh(self)
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                crate::approx::$sigmoid(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline]
            fn powf(self, n: Self) -> Self {
                $t::powf(self, n)
            }
            #[inline]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline]
            fn copysign(self, sign: Self) -> Self {
                $t::copysign(self, sign)
            }
            #[inline]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline]
            fn div(self, rhs: Self) -> Self {
                self / rhs
            }
            #[inline]
            fn fmod(self, rhs: Self) -> Self {
                self % rhs
            }
            #[inline]
            fn from_usize(n: usize) -> Self {
                n as $t
            }
            const LN_2: Self = std::$t::consts::LN_2;
            std_float_methods!($t: sin, cos, tan, asin, acos, atan, sinh, cosh, ln_1p, exp_m1,
                log2, log10, exp2, ceil, trunc, round_ties_even);
            #[inline(always)]
            fn asinh(self) -> Self {
                libm::$asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                libm::$acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                libm::$atanh(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                $t::atan2(self, x)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            special_methods!($t: erf, erfc, erfcx, erfinv, log1mexp, gammaln, digamma);
        }
    )*};
}

/// Methods of `Float` that call the f64 function of the same name in `crate::special`
/// (for f32: on the operand converted exactly, the result rounded once).
macro_rules! special_methods {
    ($t:ident: $($f:ident),*) => {$(
        #[inline]
        #[allow(clippy::unnecessary_cast)] // `as f64` is needed for f32 only.
        fn $f(self) -> Self {
            crate::special::$f(self as f64) as $t
        }
    )*};
}

float_impls!(
    f32 => exp_f32, log_f32, tanh_f32, sigmoid_f32, asinhf, acoshf, atanhf;
    f64 => exp_f64, log_f64, tanh_f64, sigmoid_f64, asinh, acosh, atanh
);

/// numpy's `npy_divmod`: floor division and the remainder with the divisor's sign, so that
/// `a == div * b + rem` as closely as floats allow.
#[inline]
fn float_divmod<T: Float>(a: T, b: T) -> (T, T) {
    let zero = T::ZERO;
    let mut m = a.fmod(b);
    if b == zero {
        // numpy: a / 0 is ±inf or NaN, and the remainder is fmod's NaN.
        return (a.div(b), m);
    }
    let mut div = a.num_sub(m).div(b);
    if m != zero {
        if (b < zero) != (m < zero) {
            m = m.num_add(b);
            div = div.num_sub(T::ONE);
        }
    } else {
        m = zero.copysign(b);
    }
    let floordiv = if div != zero {
        let mut f = div.floor();
        if div.num_sub(f) > T::HALF {
            f = f.num_add(T::ONE);
        }
        f
    } else {
        zero.copysign(a.div(b))
    };
    (floordiv, m)
}

// Casts between every ordered pair of dtypes.

macro_rules! cast_as {
    ($from:ty => $($to:ty),*) => {$(
        impl Cast<$to> for $from {
            #[inline]
            fn cast(self) -> $to {
                self as $to
            }
        }
    )*};
}

cast_as!(i8 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(i16 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(i32 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(i64 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(u8 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(u16 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(u32 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(u64 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(f32 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
cast_as!(f64 => i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! cast_bool {
    ($($t:ty => $zero:expr, $one:expr);*) => {$(
        impl Cast<$t> for bool {
            #[inline]
            fn cast(self) -> $t {
                if self { $one } else { $zero }
            }
        }
        impl Cast<bool> for $t {
            #[inline]
            fn cast(self) -> bool {
                // NaN != 0, so NaN is true, as in numpy.
                self != $zero
            }
        }
    )*};
}

cast_bool!(i8 => 0, 1; i16 => 0, 1; i32 => 0, 1; i64 => 0, 1; u8 => 0, 1; u16 => 0, 1;
    u32 => 0, 1; u64 => 0, 1; f32 => 0.0, 1.0; f64 => 0.0, 1.0);

impl Cast<bool> for bool {
    #[inline]
    fn cast(self) -> bool {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_constants() {
        assert_eq!(
            [bool::NAME, i32::NAME, i64::NAME, f32::NAME, f64::NAME],
            ["bool", "i32", "i64", "f32", "f64"]
        );
        assert_eq!((i32::ZERO, i32::ONE), (0, 1));
        assert_eq!((i64::ZERO, i64::ONE), (0, 1));
        assert_eq!((f32::ZERO, f32::ONE), (0.0, 1.0));
        assert_eq!((f64::ZERO, f64::ONE), (0.0, 1.0));
        assert!(<f64 as Float>::NAN.is_nan());
        assert_eq!(<f32 as Float>::HALF, 0.5);
        assert_eq!(<f64 as Float>::from_usize(3), 3.0);
        assert_eq!(Float::fmod(-7.5f64, 2.0), -1.5);
        assert_eq!(Float::div(1.0f32, 4.0), 0.25);
        assert_eq!(Float::copysign(0.0f64, -1.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(Float::floor(-0.5f32), -1.0);
        assert_eq!(Float::powf(2.0f64, 0.5), 2.0f64.sqrt());
    }

    /// Casts from one dtype to all five, collected for comparison.
    fn all_casts<T>(x: T) -> (bool, i32, i64, f32, f64)
    where
        T: Cast<bool> + Cast<i32> + Cast<i64> + Cast<f32> + Cast<f64> + Copy,
    {
        (x.cast(), x.cast(), x.cast(), x.cast(), x.cast())
    }

    #[test]
    fn casts_between_every_pair() {
        assert_eq!(all_casts(true), (true, 1, 1, 1.0, 1.0));
        assert_eq!(all_casts(false), (false, 0, 0, 0.0, 0.0));
        assert_eq!(all_casts(-3i32), (true, -3, -3, -3.0, -3.0));
        assert_eq!(all_casts(0i32), (false, 0, 0, 0.0, 0.0));
        assert_eq!(all_casts(0i64), (false, 0, 0, 0.0, 0.0));
        // i64 -> i32 wraps, as numpy's astype.
        assert_eq!(
            all_casts(1i64 << 33 | 5),
            (true, 5, (1i64 << 33) | 5, 8589934597.0, 8589934597.0)
        );
        // Floats truncate toward zero.
        assert_eq!(all_casts(-2.75f32), (true, -2, -2, -2.75, -2.75));
        assert_eq!(all_casts(2.75f64), (true, 2, 2, 2.75, 2.75));
        assert_eq!(all_casts(0.0f64), (false, 0, 0, 0.0, 0.0));
        assert!(!all_casts(-0.0f32).0);
        // NaN is true and becomes 0 as an integer (Rust's saturating `as`).
        let (b, i, l, f, d) = all_casts(f64::NAN);
        assert!(b && i == 0 && l == 0 && f.is_nan() && d.is_nan());
        let (_, i, l, _, _) = all_casts(f32::INFINITY);
        assert_eq!((i, l), (i32::MAX, i64::MAX));
    }

    #[test]
    fn number_ops_by_dtype() {
        assert_eq!(7i32.num_add(-9), -2);
        assert_eq!(7i64.num_sub(9), -2);
        assert_eq!(1.5f32.num_mul(2.0), 3.0);
        assert_eq!(2.5f64.num_neg(), -2.5);
        assert_eq!((-4i64).num_abs(), 4);
        assert_eq!((-7i32).num_rem(2), 1);
        assert_eq!((-7i64).num_floor_div(2), -4);
        assert_eq!(3i32.num_powi(3), 27);
        assert_eq!(2.0f32.num_powi(-1), 0.5);
    }

    #[test]
    fn small_and_unsigned_integers_wrap_like_numpy() {
        // numpy: np.uint8(255) + np.uint8(1) == 0, np.int8(-128) - np.int8(1) == 127.
        assert_eq!(255u8.num_add(1), 0);
        assert_eq!((-128i8).num_sub(1), 127);
        assert_eq!(0u16.num_sub(1), u16::MAX);
        assert_eq!(1u8.num_neg(), 255);
        assert_eq!(200u8.num_abs(), 200);
        assert_eq!((-128i8).num_abs(), -128);
        // Floor division and remainder of a negative i8 by a positive one (numpy's -7 // 2
        // == -4, -7 % 2 == 1); unsigned ones are Rust's; a divisor of 0 gives 0.
        assert_eq!((-7i8).num_floor_div(2), -4);
        assert_eq!((-7i8).num_rem(2), 1);
        assert_eq!((-128i8).num_floor_div(-1), -128);
        assert_eq!(7u8.num_floor_div(2), 3);
        assert_eq!(7u32.num_rem(4), 3);
        assert_eq!(7u64.num_floor_div(0), 0);
        assert_eq!(7u16.num_rem(0), 0);
        assert_eq!(2u8.num_powi(8), 0);
        assert_eq!(1u32.num_powi(-3), 1);
        assert_eq!(3u32.num_powi(-1), 0);
        assert_eq!(crate::math::sign(0u8), 0);
        assert_eq!(crate::math::sign(9u64), 1);
    }

    #[test]
    fn casts_of_the_small_and_unsigned_integers_are_rust_as() {
        let to_u8: u8 = (-1i64).cast();
        assert_eq!(to_u8, 255);
        let to_i8: i8 = 200u8.cast();
        assert_eq!(to_i8, -56);
        // Float to integer truncates toward zero and saturates; NaN gives 0.
        let sat: (u8, u8, u8, i8) = (
            300.0f64.cast(),
            (-5.0f32).cast(),
            f64::NAN.cast(),
            (-200.7f64).cast(),
        );
        assert_eq!(sat, (255, 0, 0, -128));
        let big: f32 = u64::MAX.cast();
        assert_eq!(big, 18446744073709551616.0f32);
        let b: bool = 0u16.cast();
        assert!(!b);
        let one: u64 = true.cast();
        assert_eq!(one, 1);
    }
}
