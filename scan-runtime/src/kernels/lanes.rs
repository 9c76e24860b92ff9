//! Helpers of the lane loop (`emit/lanes.rs`): a scan whose only outputs are running totals
//! standing in for `sum` runs [`LANES`] steps at once, each step's work in its own lane,
//! each total kept as [`LANES`] partial sums combined at the end by [`total`]. The lanes are
//! plain arrays; LLVM turns their element loops into SIMD code (under `with_best_isa`).
//!
//! [`LanePowers`] is [`super::Powers`] for a `pow` in such a loop: lane `l` carries
//! `base ** (e + l)` and steps it by `base ** LANES`, one multiply per lane.

use crate::element::{Cast, Float, Number};
use crate::math;

/// Steps a lane loop runs at once: 16 f64 are four AVX2 registers (two AVX-512 ones), so
/// a total's additions form four independent chains per group; with 8 lanes (two chains)
/// the polynomial waited on the adds' latency and ran 10% slower (Intel Xeon, AVX2).
pub const LANES: usize = 16;

/// The lanes' partial sums added in one fixed order, lane 0 to the last, so a run gives the
/// same bits every time. (A tree that pairs lanes makes LLVM lay the lanes out in
/// registers to suit it: 128-bit registers and shuffles in the loop, 1.5x slower.)
#[inline(always)]
pub fn total<T: Number>(acc: [T; LANES]) -> T {
    let [first, rest @ ..] = acc;
    rest.into_iter().fold(first, math::add)
}

/// `[f(0), f(1), ..]`: the lanes built by a plain loop into an array, which LLVM always
/// inlines and unrolls (`core::array::from_fn` is not always inlined into the
/// `with_best_isa` function, and then runs as SSE2 code: seen in a hand-written loop,
/// 2.7x slower).
#[inline(always)]
pub(crate) fn lanes_from<R: Copy + Default, const N: usize>(f: impl Fn(usize) -> R) -> [R; N] {
    let mut out = [R::default(); N];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(l);
    }
    out
}

/// `[f(a[l])]`, lane by lane (an array built whole, so its lanes stay in registers).
#[inline(always)]
pub fn map1<A: Copy, R: Copy + Default>(a: [A; LANES], f: impl Fn(A) -> R) -> [R; LANES] {
    lanes_from(|l| f(a[l]))
}

/// `[f(a[l], b[l])]`, lane by lane (see [`map1`]).
#[inline(always)]
pub fn map2<A: Copy, B: Copy, R: Copy + Default>(
    a: [A; LANES],
    b: [B; LANES],
    f: impl Fn(A, B) -> R,
) -> [R; LANES] {
    lanes_from(|l| f(a[l], b[l]))
}

/// `[f(a[l], b[l], c[l])]`, lane by lane (see [`map1`]).
#[inline(always)]
pub fn map3<A: Copy, B: Copy, C: Copy, R: Copy + Default>(
    a: [A; LANES],
    b: [B; LANES],
    c: [C; LANES],
    f: impl Fn(A, B, C) -> R,
) -> [R; LANES] {
    lanes_from(|l| f(a[l], b[l], c[l]))
}

/// The loop indices of a group as i64: `first + l`, or `first - l` when `backwards`.
#[inline(always)]
pub fn indices(first: usize, backwards: bool) -> [i64; LANES] {
    let first = first as i64;
    lanes_from(|l| {
        let l = l as i64;
        if backwards {
            first - l
        } else {
            first + l
        }
    })
}

/// `[x; LANES]` read from `s[start + l]` (`s[start - l]` when `backwards`): one bounds
/// check for the group (the loop checked the sequence's length before), then a vector load.
#[inline(always)]
pub fn load<T: Copy + Default>(s: &[T], start: usize, backwards: bool) -> [T; LANES] {
    if backwards {
        let group = &s[start + 1 - LANES..start + 1];
        lanes_from(|l| group[LANES - 1 - l])
    } else {
        let group = &s[start..start + LANES];
        lanes_from(|l| group[l])
    }
}

/// Chained multiplies a lane's power takes before it is anchored again with `powf`.
pub const LANE_ANCHOR_EVERY: u32 = 64;
// `normal_steps` checks s^128 for the chain and its margin of two.
const _: () = assert!(LANE_ANCHOR_EVERY + 2 <= 128);

/// The state of one `pow` node of a lane loop (see [`LanePowers::pow`]).
#[derive(Clone, Copy, Debug)]
pub struct LanePowers {
    /// Bits of the chain's base (as f64).
    base_bits: u64,
    /// `base ** k` for k = 0..=LANES, by `powf`: lane `l` starts from lane 0 times
    /// `base ** l`, and every lane steps by `base ** LANES`.
    base_powers: [f64; LANES + 1],
    /// `|base ** LANES| ** 128`, and the smallest and largest `|base ** l|` over the lanes:
    /// with them an anchor knows in two multiplies that a whole chain stays normal.
    reach: f64,
    lane_min: f64,
    lane_max: f64,
    /// The exponents a chained call has, lane by lane.
    next_exponents: [f64; LANES],
    /// The powers of the next call, carried.
    powers: [f64; LANES],
    /// Chained calls left before the next anchor; 0 when there is no chain.
    left: u32,
}

impl Default for LanePowers {
    fn default() -> Self {
        LanePowers {
            base_bits: f64::NAN.to_bits(),
            base_powers: [f64::NAN; LANES + 1],
            reach: f64::NAN,
            lane_min: f64::NAN,
            lane_max: f64::NAN,
            next_exponents: [f64::NAN; LANES],
            powers: [f64::NAN; LANES],
            left: 0,
        }
    }
}

impl LanePowers {
    /// `base[l] ** exponent[l]` for each lane. The common path (every lane the same base
    /// as before, each exponent `LANES` more than last time) is compares and one multiply
    /// per lane on values kept in registers. Otherwise the lanes are anchored: lane 0 by
    /// `powf` (f32's for f32) and lane `l` as lane 0 times `base ** l` when the exponents
    /// are consecutive (e, e + 1, ..) and the base a normal float; each lane by `powf`
    /// (no chain) when not.
    ///
    /// Accuracy: an anchored lane is within about 3 f64 roundings of `pow`, and each
    /// chained call adds at most 2 (the multiply and `base ** LANES`'s own): at most about
    /// 2 * [`LANE_ANCHOR_EVERY`] + 3 roundings (3e-14 relative) in all; an f32 result is
    /// that value rounded to f32. Special values (zero, infinite, NaN or subnormal bases or
    /// powers) never chain, so they are `powf`'s exactly.
    #[inline(always)]
    pub fn pow<T>(&mut self, base: [T; LANES], exponent: [T; LANES]) -> [T; LANES]
    where
        T: Float + Cast<f64>,
        f64: Cast<T>,
    {
        let b: [f64; LANES] = lanes_from(|l| base[l].cast());
        let e: [f64; LANES] = lanes_from(|l| exponent[l].cast());
        let chained = (0..LANES)
            .all(|l| (b[l].to_bits() == self.base_bits) & (e[l] == self.next_exponents[l]));
        let p = if self.left > 0 && chained {
            self.left -= 1;
            self.powers
        } else {
            let p;
            (*self, p) = anchor(*self, base, exponent);
            p
        };
        self.next_exponents = map1(e, |e| e + LANES as f64);
        self.carry(p)
    }

    /// Anchors the lanes at the exponents `first + l` (as T) of a loop index read forwards,
    /// with one base: the [`Chain`] that gives this group's powers and carries them over
    /// the groups that follow, as many as [`Chain::groups`] says (at least 1: this group's
    /// powers, by `powf` when they cannot chain). The emitter runs that many groups with
    /// no check and no call in between: the base is loop-invariant and the index grows by
    /// `LANES` a group.
    #[inline(always)]
    pub fn anchor_index<T>(&mut self, base: T, first: i64) -> Chain
    where
        T: Float + Cast<f64>,
        i64: Cast<T>,
    {
        match self.anchor_first(base, first) {
            // The lanes are built here, in the loop's function (`chain_lanes`), from a
            // value passed in a register. Built by the anchor and returned in memory,
            // they were stored 8 bytes at a time and loaded 32 at a time, and the loads
            // waited: the polynomial took 0.1318 ms, now 0.1303 (AMD EPYC Zen 3, six
            // alternations).
            Some((p0, groups)) => Chain {
                powers: chain_lanes(self, p0),
                step: self.base_powers[LANES],
                groups,
            },
            None => Self::unchained(base, first),
        }
    }

    /// Lane 0's power and the groups of the chain anchored at the exponents `first + l`
    /// (see [`LanePowers::anchor_index`]), `None` when they cannot chain.
    #[inline(never)]
    fn anchor_first<T>(&mut self, base: T, first: i64) -> Option<(f64, usize)>
    where
        T: Float + Cast<f64>,
        i64: Cast<T>,
    {
        let p0 = anchor_consecutive(self, base, Cast::<T>::cast(first))?;
        // At most LANE_ANCHOR_EVERY groups (this one and left - 1 more), even: the emitted
        // loop over the run is unrolled by two and an odd run ends in a group outside the
        // vectorized body every anchor.
        Some((p0, (self.left as usize + 1).min(LANE_ANCHOR_EVERY as usize)))
    }

    /// One group's powers, each by `powf`, when they cannot chain.
    #[cold]
    #[inline(never)]
    fn unchained<T>(base: T, first: i64) -> Chain
    where
        T: Float + Cast<f64>,
        i64: Cast<T>,
    {
        let e = |l: usize| Cast::<T>::cast(first.wrapping_add(l as i64));
        Chain {
            powers: lanes_from(|l| powf(base, e(l))),
            step: f64::NAN,
            groups: 1,
        }
    }

    /// Carries the powers `p` one call on (times `base ** LANES`). No check here: the
    /// anchor allowed only as many chained calls as keep every power a normal float.
    #[inline(always)]
    fn carry<T: Copy + Default>(&mut self, p: [f64; LANES]) -> [T; LANES]
    where
        f64: Cast<T>,
    {
        let step = self.base_powers[LANES];
        self.powers = map1(p, |p| p * step);
        map1(p, Cast::<T>::cast)
    }
}

/// Powers carried over a run of groups (see [`LanePowers::anchor_index`]): a plain value
/// the loop keeps in registers.
#[derive(Clone, Copy, Debug)]
pub struct Chain {
    powers: [f64; LANES],
    step: f64,
    groups: usize,
}

impl Chain {
    /// How many groups, this one included, the chain serves.
    #[inline(always)]
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Lane `l`'s power in this group; the next group's carried (a multiply). Called once
    /// per lane and group, in the loop over the lanes, so that the powers are updated
    /// where the lanes' other work is and vectorize with it.
    #[inline(always)]
    pub fn take<T>(&mut self, l: usize) -> T
    where
        f64: Cast<T>,
    {
        let p = self.powers[l];
        self.powers[l] = p * self.step;
        Cast::<T>::cast(p)
    }
}

/// The lanes anchored afresh (see [`LanePowers::pow`]): the new state and the powers.
/// Takes and returns the state by value, so the hot path never passes it by reference.
#[cold]
#[inline(never)]
fn anchor<T>(
    mut state: LanePowers,
    base: [T; LANES],
    exponent: [T; LANES],
) -> (LanePowers, [f64; LANES])
where
    T: Float + Cast<f64>,
{
    let p = anchor_in_place(&mut state, base, exponent);
    (state, p)
}

/// [`anchor`], on the state where it is (no copies of it).
#[cold]
#[inline(never)]
fn anchor_in_place<T>(
    state: &mut LanePowers,
    base: [T; LANES],
    exponent: [T; LANES],
) -> [f64; LANES]
where
    T: Float + Cast<f64>,
{
    let (b0, e0): (f64, f64) = (base[0].cast(), exponent[0].cast());
    let consecutive = (0..LANES).all(|l| {
        Cast::<f64>::cast(base[l]).to_bits() == b0.to_bits()
            && Cast::<f64>::cast(exponent[l]) == e0 + l as f64
    });
    if consecutive {
        if let Some(p0) = anchor_consecutive(state, base[0], exponent[0]) {
            return chain_lanes(state, p0);
        }
    }
    // No chain: every lane by `powf`, so special values are its own.
    state.left = 0;
    lanes_from(|l| powf(base[l], exponent[l]))
}

/// The chain of `base ** (first + l)` when it can be carried: lane 0's power by `powf`
/// (the others are it times `base ** l`, [`chain_lanes`]), and `state.left` set to the
/// chained calls that keep every power normal. `None` (state untouched but its cached
/// powers) when the base or a power is not a normal float or the exponents would stop
/// being exact integers.
fn anchor_consecutive<T>(state: &mut LanePowers, base: T, first: T) -> Option<f64>
where
    T: Float + Cast<f64>,
{
    let (b, e): (f64, f64) = (base.cast(), first.cast());
    let p0 = powf(base, first);
    // Exponents stay exact integers (2^24 in f32, 2^53 in f64) until the next anchor.
    let exact = if core::mem::size_of::<T>() == 4 {
        16_777_216.0
    } else {
        9_007_199_254_740_992.0
    };
    let exponent_reach = (LANES as u32 * (LANE_ANCHOR_EVERY + 2)) as f64;
    if !(b.is_normal() && p0.is_normal() && e.abs() < exact - exponent_reach) {
        return None;
    }
    if state.base_bits != b.to_bits() {
        state.base_bits = b.to_bits();
        state.base_powers = lanes_from(|k| b.powf(k as f64));
        let lanes = state.base_powers[..LANES].iter().map(|p| p.abs());
        state.lane_min = lanes.clone().fold(f64::INFINITY, f64::min);
        state.lane_max = lanes.fold(0.0, f64::max);
        state.reach = reach(state.base_powers[LANES]);
    }
    // The common case, in two multiplies: every lane and all its chained multiplies (with
    // the margin) stay normal, with room for roundings. A base of magnitude below 1 only
    // shrinks the powers (lane 0's, normal, is the largest) and one above only grows them.
    let (a, s) = (p0.abs(), state.base_powers[LANES].abs());
    let whole_chain = if s <= 1.0 {
        a * state.lane_min * state.reach >= 2.0 * f64::MIN_POSITIVE
    } else {
        a * state.lane_max * state.reach <= 0.5 * f64::MAX
    };
    if whole_chain {
        state.left = LANE_ANCHOR_EVERY;
        return Some(p0);
    }
    let p = chain_lanes(state, p0);
    if !p.iter().all(|p| p.is_normal()) {
        return None;
    }
    state.left = normal_steps(&p, state.base_powers[LANES]);
    Some(p0)
}

/// The lanes of a chain anchored at lane 0's power `p0`: `p0 * base ** l`.
#[inline(always)]
fn chain_lanes(state: &LanePowers, p0: f64) -> [f64; LANES] {
    lanes_from(|l| p0 * state.base_powers[l])
}

/// `|step| ** 128`, by squarings: more than the chained multiplies and their margin
/// (`LANE_ANCHOR_EVERY + 2`).
fn reach(step: f64) -> f64 {
    let s = step.abs();
    let mut reach = s * s;
    for _ in 0..6 {
        reach *= reach;
    }
    reach
}

/// `base ** exponent` in f64: f32's `powf` for f32 (exactly its result), f64's for f64.
fn powf<T>(base: T, exponent: T) -> f64
where
    T: Float + Cast<f64>,
{
    if core::mem::size_of::<T>() == 4 {
        Cast::<f64>::cast(base.powf(exponent))
    } else {
        Cast::<f64>::cast(base).powf(exponent.cast())
    }
}

/// How many times the (normal) powers `p` may be multiplied by `step` with every product
/// still a normal float, less a margin of two for the rounding of the estimate; at most
/// [`LANE_ANCHOR_EVERY`]. 0 for a step of zero, infinity or NaN.
#[cold]
fn normal_steps(p: &[f64; LANES], step: f64) -> u32 {
    let s = step.abs();
    let lo = p.iter().fold(f64::INFINITY, |m, p| m.min(p.abs()));
    let hi = p.iter().fold(0.0f64, |m, p| m.max(p.abs()));
    // First without logarithms: all the chained multiplies (and the margin) keep the
    // powers normal, with room for their roundings.
    let reach = reach(step);
    let all = if s <= 1.0 {
        lo * reach >= 2.0 * f64::MIN_POSITIVE
    } else {
        hi * reach <= 0.5 * f64::MAX
    };
    if all {
        return LANE_ANCHOR_EVERY;
    }
    let k = if s == 1.0 {
        f64::INFINITY
    } else if s < 1.0 {
        (lo / f64::MIN_POSITIVE).log2() / -s.log2()
    } else {
        (f64::MAX / hi).log2() / s.log2()
    };
    // A NaN (a step of NaN) becomes 0.
    ((k.floor() - 2.0).max(0.0) as u32).min(LANE_ANCHOR_EVERY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// Exponents t, t + 1, .. of the lane group starting at step `t`.
    fn group(t: usize) -> [f64; LANES] {
        lanes_from(|l| (t + l) as f64)
    }

    #[test]
    fn growing_exponents_follow_powf() {
        for &x in &[0.999_999f64, 1.000_001, 0.5, -0.97, 1.1] {
            let mut p = LanePowers::default();
            let mut worst = 0.0f64;
            for t in (0..200_000).step_by(LANES) {
                let got = p.pow([x; LANES], group(t));
                for (l, g) in got.iter().enumerate() {
                    let want = x.powf((t + l) as f64);
                    if want.is_normal() {
                        worst = worst.max(relative(*g, want));
                    } else {
                        assert_eq!(g.to_bits(), want.to_bits(), "{x}^{}", t + l);
                    }
                }
            }
            assert!(worst < 3e-14, "{x}: worst relative error {worst:e}");
        }
    }

    #[test]
    fn f32_is_within_one_rounding_of_powf() {
        for &x in &[0.999_999f32, 1.5, -0.75, 2.0] {
            let mut p = LanePowers::default();
            for t in (0..400).step_by(LANES) {
                let e: [f32; LANES] = lanes_from(|l| (t + l) as f32);
                let got = p.pow([x; LANES], e);
                for l in 0..LANES {
                    let want = x.powf(e[l]);
                    if want.is_finite() && want.abs() > f32::MIN_POSITIVE {
                        let ulp = f32::EPSILON * want.abs();
                        assert!(
                            (got[l] - want).abs() <= ulp,
                            "{x}^{}: {} vs {want}",
                            e[l],
                            got[l]
                        );
                    } else {
                        assert_eq!(got[l].to_bits(), want.to_bits(), "{x}^{}", e[l]);
                    }
                }
            }
        }
    }

    #[test]
    fn special_values_are_powf_exactly() {
        for &b in &[
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            -3.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-310,
        ] {
            let mut p = LanePowers::default();
            for t in [0usize, 8, 16, 24, 32] {
                let e: [f64; LANES] = lanes_from(|l| t as f64 + l as f64 - 3.0);
                let got = p.pow([b; LANES], e);
                for l in 0..LANES {
                    let want = b.powf(e[l]);
                    if want.is_nan() {
                        assert!(got[l].is_nan(), "{b}^{}: {}", e[l], got[l]);
                    } else if want.is_normal() {
                        assert!(
                            relative(got[l], want) < 1e-15,
                            "{b}^{}: {} vs {want}",
                            e[l],
                            got[l]
                        );
                    } else {
                        assert_eq!(
                            got[l].to_bits(),
                            want.to_bits(),
                            "{b}^{}: {} vs {want}",
                            e[l],
                            got[l]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn other_patterns_take_powf_lane_by_lane() {
        let mut p = LanePowers::default();
        // Bases that differ between lanes; exponents that are not consecutive; a chain
        // broken by a jump.
        let bases: [f64; LANES] = lanes_from(|l| 1.0 + l as f64 * 0.25);
        let odd: [f64; LANES] = lanes_from(|l| (3 * l) as f64);
        for (b, e) in [
            (bases, group(0)),
            ([2.0; LANES], odd),
            ([2.0; LANES], group(0)),
            ([2.0; LANES], group(100)),
            ([3.0; LANES], group(108)),
        ] {
            let got = p.pow(b, e);
            for l in 0..LANES {
                let want = b[l].powf(e[l]);
                assert!(
                    relative(got[l], want) < 1e-15,
                    "{}^{}: {} vs {want}",
                    b[l],
                    e[l],
                    got[l]
                );
            }
        }
    }

    /// Runs chains from `anchor_index` over `steps` steps as the emitted loop does, and
    /// checks every power against `powf`: within `tol` (relative) where `powf` gives a
    /// normal float, the same bits where it does not.
    fn chains_follow_powf<T>(x: T, steps: usize, tol: f64)
    where
        T: Float + Cast<f64> + std::fmt::Display,
        f64: Cast<T>,
        i64: Cast<T>,
    {
        let mut powers = LanePowers::default();
        let mut t = 0;
        while t + LANES <= steps {
            let mut chain = powers.anchor_index(x, t as i64);
            assert!(chain.groups() >= 1);
            for _ in 0..chain.groups().min((steps - t) / LANES) {
                for l in 0..LANES {
                    let got: f64 = chain.take::<T>(l).cast();
                    let want: f64 = x.powf(Cast::<T>::cast((t + l) as i64)).cast();
                    if want.is_normal() && Cast::<T>::cast(want).cast() == want {
                        assert!(relative(got, want) <= tol, "{x}^{}: {got} vs {want}", t + l);
                    } else if want.is_nan() {
                        assert!(got.is_nan(), "{x}^{}: {got}", t + l);
                    } else {
                        assert_eq!(got.to_bits(), want.to_bits(), "{x}^{}", t + l);
                    }
                }
                t += LANES;
            }
        }
    }

    #[test]
    fn chains_of_the_loop_index_follow_powf() {
        for &x in &[0.999_999f64, 1.000_001, 0.5, -0.97, 1.1, 1.0, -1.0, 2.0] {
            chains_follow_powf(x, 100_000, 3e-14);
        }
        for &x in &[
            0.0f64,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e-310,
        ] {
            chains_follow_powf(x, 200, 0.0);
        }
        for &x in &[0.999_999f32, 1.5, -0.75, 0.5] {
            chains_follow_powf(x, 2000, f64::from(f32::EPSILON));
        }
    }

    #[test]
    fn a_chain_starts_from_the_powers_pow_anchors() {
        for &x in &[0.999_999f64, 1.000_001, 0.5, -0.97, 1.1] {
            for first in [0i64, 16, 1000, 123_456] {
                let mut chain = LanePowers::default().anchor_index(x, first);
                let exponents: [f64; LANES] = lanes_from(|l| (first + l as i64) as f64);
                let want = LanePowers::default().pow([x; LANES], exponents);
                for (l, w) in want.iter().enumerate() {
                    assert_eq!(
                        chain.take::<f64>(l).to_bits(),
                        w.to_bits(),
                        "{x}^{first}+{l}"
                    );
                }
            }
        }
    }

    #[test]
    fn total_adds_the_lanes_in_order() {
        let mut acc = [0.0f64; LANES];
        acc[..8].copy_from_slice(&[1e16, 1.0, -1e16, 1.0, 0.5, 0.25, 0.125, 0.0625]);
        acc[LANES - 1] = 3.0;
        let want: f64 = 1e16 + 1.0 + -1e16 + 1.0 + 0.5 + 0.25 + 0.125 + 0.0625 + 3.0;
        assert_eq!(total(acc).to_bits(), want.to_bits());
        let mut ints = [0i64; LANES];
        ints[0] = i64::MAX;
        ints[LANES - 1] = 1;
        assert_eq!(total(ints), i64::MIN);
    }

    #[test]
    fn load_and_indices_read_forwards_and_backwards() {
        let a: Vec<i64> = (0..40).collect();
        let from =
            |first: i64, step: i64| -> [i64; LANES] { lanes_from(|l| first + step * l as i64) };
        assert_eq!(load(&a, 3, false), from(3, 1));
        assert_eq!(load(&a, 40 - LANES, false), from(40 - LANES as i64, 1));
        assert_eq!(load(&a, 30, true), from(30, -1));
        assert_eq!(load(&a, LANES - 1, true), from(LANES as i64 - 1, -1));
        assert_eq!(indices(5, false), from(5, 1));
        assert_eq!(indices(25, true), from(25, -1));
    }
}
