//! The evaluator's own special functions, in f64 (f32 is computed here and rounded once, as
//! the runtime does), written the plain way and independently of scan-runtime's
//! (`scan_runtime::special`): libm's `erf`, `erfc` and `lgamma` where the runtime uses them
//! too; the others in their textbook forms, which are accurate enough to check the
//! runtime's careful ones within the evaluator's tolerance (1e-12 relative, 1e-12
//! absolute; the tests check the runtime's against mpmath's digits).

use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, PI};

pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

pub fn gammaln(x: f64) -> f64 {
    libm::lgamma(x)
}

/// `e^(x^2) erfc(x)` below 25 (the rounding of `x^2` costs at most 6e-14 there); above,
/// Laplace's continued fraction `erfcx(x) = (1/sqrt(pi)) / (x + (1/2) / (x + 1 / (x + (3/2)
/// / (x + ...))))` (DLMF 7.9.2), 60 levels from the bottom up.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() || x < 25.0 {
        return (x * x).exp() * libm::erfc(x);
    }
    let mut tail = x;
    for k in (1..=60).rev() {
        tail = x + f64::from(k) / 2.0 / tail;
    }
    FRAC_2_SQRT_PI / 2.0 / tail
}

/// Bisection on the bit patterns of the non-negative floats (ordered like the values):
/// `erf(x) = |y|`, or `erfc(x) = 1 - |y|` (exact) above 1/2 so the tail keeps its digits.
pub fn erfinv(y: f64) -> f64 {
    let a = y.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 || a == 0.0 {
        return if a == 1.0 {
            f64::INFINITY.copysign(y)
        } else {
            y
        };
    }
    // true when x is below the solution.
    let below = |x: f64| {
        if a <= 0.5 {
            libm::erf(x) < a
        } else {
            libm::erfc(x) > 1.0 - a
        }
    };
    let (mut lo, mut hi) = (0u64, 7.0f64.to_bits());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if below(f64::from_bits(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    f64::from_bits(hi).copysign(y)
}

/// `log(1 - e^x)`: `log(-expm1(x))` above `-ln 2`, `log1p(-exp(x))` below.
pub fn log1mexp(x: f64) -> f64 {
    if x > -LN_2 {
        (-x.exp_m1()).ln()
    } else {
        (-x.exp()).ln_1p()
    }
}

/// Cephes' way: reflection below 0, the recurrence `psi(x) = psi(x + 1) - 1/x` up to 10,
/// then the asymptotic series `ln x - 1/(2x) - sum B_2k / (2k x^2k)`. scipy's values at the
/// poles: -inf at +0, +inf at -0, NaN at the negative integers and -inf.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::INFINITY.copysign(-x);
    }
    if x < 0.0 {
        let n = x.round();
        if n == x {
            return f64::NAN;
        }
        return digamma(1.0 - x) - PI / (PI * (x - n)).tan();
    }
    let mut x = x;
    let mut shift = 0.0;
    while x < 10.0 {
        shift += 1.0 / x;
        x += 1.0;
    }
    // B_2k / (2k), k = 1..8.
    let b = [
        1.0 / 12.0,
        -1.0 / 120.0,
        1.0 / 252.0,
        -1.0 / 240.0,
        1.0 / 132.0,
        -691.0 / 32760.0,
        1.0 / 12.0,
        -3617.0 / 8160.0,
    ];
    let z = 1.0 / (x * x);
    let mut zk = 1.0;
    let mut series = 0.0;
    for c in b {
        zk *= z;
        series += c * zk;
    }
    x.ln() - 0.5 / x - series - shift
}
