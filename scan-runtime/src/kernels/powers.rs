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

/// The state of one `pow` node of a loop: the chain's base, the exponent it continues
/// with, and that power, computed after the previous call.
#[derive(Clone, Copy, Debug)]
pub struct Powers {
    /// Bits of the chain's base.
    base_bits: u64,
    /// The exponent a chained call has.
    next_exponent: f64,
    /// `base ** next_exponent`, carried.
    power: f64,
    /// Chained calls left before the next `powf`; 0 when there is no chain.
    left: u32,
}

impl Default for Powers {
    fn default() -> Self {
        Powers {
            base_bits: f64::NAN.to_bits(),
            next_exponent: f64::NAN,
            power: f64::NAN,
            left: 0,
        }
    }
}

impl Powers {
    /// `base ** exponent`. The common path (same base, exponent one more than last time)
    /// is two compares, one multiply and one check of the product, all on values the
    /// loop keeps in registers: the state is never passed by reference to a call.
    #[inline]
    pub fn pow<T>(&mut self, base: T, exponent: T) -> T
    where
        T: Float + Cast<f64>,
        f64: Cast<T>,
    {
        let (b, e): (f64, f64) = (base.cast(), exponent.cast());
        let p = if self.left > 0 && b.to_bits() == self.base_bits && e == self.next_exponent {
            self.left -= 1;
            self.power
        } else {
            let (p, left) = anchor(base, exponent);
            self.base_bits = b.to_bits();
            self.left = left;
            p
        };
        self.next_exponent = e + 1.0;
        self.power = p * b;
        if !self.power.is_normal() {
            // Zero, subnormal, infinite or NaN: no chain from here.
            self.left = 0;
        }
        Cast::<T>::cast(p)
    }
}

/// `base ** exponent` by `powf` (the f32 one for f32, exactly: a chain then starts from
/// it), and how many chained calls may follow it: none for a base or power that is not a
/// normal float, or an exponent near 2^53 (where + 1 is not exact).
#[cold]
#[inline(never)]
fn anchor<T>(base: T, exponent: T) -> (f64, u32)
where
    T: Float + Cast<f64>,
{
    let (b, e): (f64, f64) = (base.cast(), exponent.cast());
    let p = if core::mem::size_of::<T>() == 4 {
        Cast::<f64>::cast(base.powf(exponent))
    } else {
        b.powf(e)
    };
    let chains = b.is_normal() && p.is_normal() && e.abs() < 9_007_199_254_740_992.0 - 1024.0;
    (p, if chains { ANCHOR_EVERY } else { 0 })
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
