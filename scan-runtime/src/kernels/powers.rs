//! `x ** e` for a scalar `pow` inside a loop, where the exponent usually grows by one from
//! one step to the next and the base stays the same (`c_t * x ** t` over `arange`, the
//! scan tutorial's polynomial): the next power is the previous one times the base, one
//! multiply instead of a libm `pow` (about 40 times slower).
//!
//! The powers are carried in f64 and anchored by an exact `powf` every [`ANCHOR_EVERY`]
//! steps, so a result is at most about `ANCHOR_EVERY` roundings (1.4e-14 relative) from
//! the f64 `pow`; an f32 result is that value rounded to f32 (within one f32 rounding of
//! f32 `powf`). Anything else (another base, an exponent that does not grow by exactly
//! one, a non-finite or zero base, a carried value that is not a normal float) takes
//! `powf` and restarts the chain, so special values are exactly `powf`'s.

use crate::element::{Cast, Float};

/// A chain of carried multiplies is re-anchored with `powf` after this many.
pub const ANCHOR_EVERY: u32 = 64;

/// The state of one `pow` node of a loop: the last base, exponent and power.
#[derive(Clone, Copy, Debug)]
pub struct Powers {
    base: f64,
    exponent: f64,
    power: f64,
    /// Multiplies since the last `powf`; `ANCHOR_EVERY` also when there is no chain.
    carried: u32,
}

impl Default for Powers {
    fn default() -> Self {
        Powers {
            base: f64::NAN,
            exponent: f64::NAN,
            power: f64::NAN,
            carried: ANCHOR_EVERY,
        }
    }
}

impl Powers {
    /// `base ** exponent`.
    #[inline]
    pub fn pow<T>(&mut self, base: T, exponent: T) -> T
    where
        T: Float + Cast<f64>,
        f64: Cast<T>,
    {
        let (b, e): (f64, f64) = (base.cast(), exponent.cast());
        let chained = self.carried < ANCHOR_EVERY
            && b.to_bits() == self.base.to_bits()
            && e == self.exponent + 1.0
            && b.is_normal()
            && self.power.is_normal();
        if chained {
            self.power *= b;
            self.carried += 1;
        } else {
            self.power = if core::mem::size_of::<T>() == 4 {
                // The f32 `powf`, exactly: a chain then starts from it.
                Cast::<f64>::cast(base.powf(exponent))
            } else {
                b.powf(e)
            };
            self.carried = 0;
        }
        self.base = b;
        self.exponent = e;
        if !self.power.is_normal() || e.abs() >= 9_007_199_254_740_992.0 {
            // Zero, subnormal, infinite or NaN powers, or exponents past 2^53 (where + 1
            // is not exact): no chain from here.
            self.carried = ANCHOR_EVERY;
        }
        Cast::<T>::cast(self.power)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn a_growing_exponent_follows_powf() {
        let mut p = Powers::default();
        let x = 0.999_999f64;
        let mut worst = 0.0f64;
        for t in 0..1_000_000 {
            let got = p.pow(x, t as f64);
            worst = worst.max(relative(got, x.powf(t as f64)));
        }
        assert!(worst < 2e-14, "worst relative error {worst:e}");
    }

    #[test]
    fn f32_is_within_one_rounding_of_powf() {
        let mut p = Powers::default();
        for &x in &[0.999_999f32, 1.5, -0.75, 2.0] {
            for t in 0..300 {
                let got = p.pow(x, t as f32);
                let want = x.powf(t as f32);
                if want.is_finite() && want.abs() > f32::MIN_POSITIVE {
                    let ulp = f32::EPSILON * want.abs();
                    assert!((got - want).abs() <= ulp, "{x}^{t}: {got} vs {want}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "{x}^{t}");
                }
            }
        }
    }

    #[test]
    fn special_values_are_powf_exactly() {
        let bases = [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            2.0,
            -3.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-310,
        ];
        for &b in &bases {
            let mut p = Powers::default();
            for e in -3..8 {
                let e = e as f64;
                let got = p.pow(b, e);
                let want = b.powf(e);
                if want.is_nan() {
                    assert!(got.is_nan(), "{b}^{e}: {got}");
                } else if want.is_finite() && want != 0.0 && want.is_normal() {
                    assert!(relative(got, want) < 1e-15, "{b}^{e}: {got} vs {want}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "{b}^{e}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn other_patterns_take_powf() {
        let mut p = Powers::default();
        // Exponents that jump, go down, or are fractional steps; bases that change.
        for (b, e) in [
            (2.0f64, 3.0),
            (2.0, 10.0),
            (2.0, 9.0),
            (2.0, 9.5),
            (3.0, 10.5),
            (2.0, 11.5),
        ] {
            assert_eq!(p.pow(b, e), b.powf(e));
        }
        // A fractional exponent growing by one chains (x^(e+1) = x^e x).
        let mut p = Powers::default();
        for k in 0..10 {
            let e = 0.5 + k as f64;
            assert!(relative(p.pow(1.7f64, e), 1.7f64.powf(e)) < 1e-15);
        }
    }
}
