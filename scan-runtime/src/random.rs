//! Reproducible random numbers: a counter-based generator whose whole state is a key, an
//! ordinary `i64` value of the program (docs/SEMANTICS.md, "Random numbers").
//!
//! **The generator is Philox 4x32-10** (Salmon, Moraes, Dror, Shaw: "Parallel random
//! numbers: as easy as 1, 2, 3", SC 2011), written here from the paper and checked against
//! Random123's published known-answer vectors (`kat_vectors`, the `philox4x32 7` and
//! `philox4x32 10` lines; `tests::known_answers` and `tests/random.rs`). Why Philox and
//! not a crate such as rand_chacha: it is what numpy's `Philox` bit generator and JAX's
//! counter-based generators are built on, it is a pure function of (counter, key), so any
//! element of any draw is computed from its index alone (a draw split over threads gives
//! the same numbers as on one thread, and a key is split or advanced by hashing it), and it
//! is 30 lines with no dependency, against known answers that pin it bit for bit.
//!
//! **Keys.** A key is 64 bits held in an `i64`: Philox's key words are its low and high
//! 32 bits. [`key_from_seed`] is the identity (a seed is a key). A key names two disjoint
//! families of Philox blocks, told apart by the counter's last word:
//! - the **draws** of the key: block `b` is `philox(ctr = [b_lo, b_hi, 0, 0], key)`, and the
//!   64-bit word `j` of the key's stream is `w0 | w1 << 32` of block `j / 2` for even `j`,
//!   `w2 | w3 << 32` for odd `j` ([`word`]);
//! - the **derived keys**: key `i` derived from `key` is `w0 | w1 << 32` of
//!   `philox(ctr = [i_lo, i_hi, 0, 1], key)` ([`derive_key`]). `split(key)` gives derived
//!   keys 0 and 1, `split(key, n)` keys `0..n`, and the next key of an advancing draw
//!   (`let (key, u) = uniform(key, shape)`) is derived key 0 ([`next_key`]).
//!
//! **Draws.** Element `j` (row-major) of a draw reads the key's words by its index only:
//! - uniform in [0, 1): f64 `(word(j) >> 11) * 2^-53` (53 bits), f32 `(word(j) >> 40) *
//!   2^-24` (24 bits), exact, never 1;
//! - normal: Box-Muller on the pair of words `2m`, `2m + 1`, `m = j / 2`: `u1 = 1 -
//!   uniform_f64(word(2m))` in (0, 1], `u2 = uniform_f64(word(2m + 1))`, `r = sqrt(-2 ln u1)`,
//!   element `2m` is `r cos(2 pi u2)`, element `2m + 1` is `r sin(2 pi u2)`; in f64 (the
//!   `libm` crate's `log`, `cos`, `sin`: the same bits on every platform), an f32 draw is
//!   the f64 value rounded once;
//! - bernoulli(p): `uniform(j) < p[j]` in p's float dtype (so `bernoulli(key, p)` is
//!   `uniform(key, p.shape) < p` exactly);
//! - categorical(logits): the Gumbel-max trick over the last axis: the index of the
//!   largest `logits[.., c] + g` with `g = -ln(-ln(u))`, `u = ((word(j) >> 11) + 1/2) *
//!   2^-53` in (0, 1), `j` the flat index of `logits[.., c]`; in f64; the first of equal
//!   values, the first NaN if any (numpy's argmax).

use ndarray::{Array, Array1, ArrayView, Axis, Dimension, RemoveAxis};

use crate::error::{Error, Result};
use crate::kernels::buffer::try_ensure_shape;

/// Philox 4x32's multipliers and Weyl key increments (Random123's `PHILOX_M4x32_0`, ...).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox 4x32 with `rounds` rounds: the 4 output words of counter `ctr` under `key`.
pub fn philox4x32(ctr: [u32; 4], key: [u32; 2], rounds: usize) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for round in 0..rounds {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// Philox 4x32-10, the generator of every draw.
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32(ctr, key, 10)
}

/// The counter's last word: a key's draws, its derived keys and its gamma variates (two
/// families: beta takes one variate from each) are disjoint blocks.
const DRAWS: u32 = 0;
const KEYS: u32 = 1;
const GAMMA: u32 = 2;

fn key_words(key: i64) -> [u32; 2] {
    let k = key as u64;
    [k as u32, (k >> 32) as u32]
}

fn block(key: i64, index: u64, family: u32) -> [u32; 4] {
    philox4x32_10(
        [index as u32, (index >> 32) as u32, 0, family],
        key_words(key),
    )
}

fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

/// The key of a seed: the seed itself (every 64-bit value is a key).
pub fn key_from_seed(seed: i64) -> i64 {
    seed
}

/// Key `i` derived from `key` (`split(key, n)[i]`).
pub fn derive_key(key: i64, i: i64) -> i64 {
    let w = block(key, i as u64, KEYS);
    join(w[0], w[1]) as i64
}

/// The key after an advancing draw, `let (key, u) = uniform(key, shape)`: derived key 0,
/// also the first of `split(key)`.
pub fn next_key(key: i64) -> i64 {
    derive_key(key, 0)
}

/// Word `j` of `key`'s stream of draws.
pub fn word(key: i64, j: u64) -> u64 {
    let w = block(key, j / 2, DRAWS);
    if j.is_multiple_of(2) {
        join(w[0], w[1])
    } else {
        join(w[2], w[3])
    }
}

/// A float dtype that draws are made in.
pub trait Draw: crate::element::Float {
    /// A uniform value in [0, 1) from the word's top bits (as many as the mantissa holds).
    fn uniform_of(word: u64) -> Self;
    /// An f64 rounded to this dtype.
    fn of_f64(x: f64) -> Self;
    /// This value in f64 (exact).
    fn to_f64(self) -> f64;
}

impl Draw for f64 {
    fn uniform_of(word: u64) -> f64 {
        (word >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn of_f64(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl Draw for f32 {
    fn uniform_of(word: u64) -> f32 {
        (word >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
    }
    fn of_f64(x: f64) -> f32 {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

/// Element `j` of `uniform(key, shape)`.
pub fn uniform_at<T: Draw>(key: i64, j: u64) -> T {
    T::uniform_of(word(key, j))
}

/// Element `j` of `normal(key, shape)` (Box-Muller, see the module's documentation).
pub fn normal_at<T: Draw>(key: i64, j: u64) -> T {
    let w = block(key, j / 2, DRAWS);
    let u1 = 1.0 - f64::uniform_of(join(w[0], w[1]));
    let u2 = f64::uniform_of(join(w[2], w[3]));
    let r = (-2.0 * libm::log(u1)).sqrt();
    let theta = 2.0 * std::f64::consts::PI * u2;
    let z = if j.is_multiple_of(2) {
        r * libm::cos(theta)
    } else {
        r * libm::sin(theta)
    };
    T::of_f64(z)
}

/// The Gumbel noise of element `j` for `categorical`: `-ln(-ln(u))`, u in (0, 1).
pub fn gumbel_at(key: i64, j: u64) -> f64 {
    let u = ((word(key, j) >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
    -libm::log(-libm::log(u))
}

/// The natural log of a Gamma(a, 1) variate for element `j`, from the gamma family `fam`
/// (`GAMMA` or `GAMMA + 1`) of `key`'s blocks: Marsaglia and Tsang's method (ACM TOMS 26,
/// 2000), as numpy and JAX draw gamma. Attempt `k` reads block `[j_lo, j_hi, 2k, fam]` for
/// its normal `x` (Box-Muller, the cosine of the pair) and block `[j_lo, j_hi, 2k + 1,
/// fam]` for its uniform `u`; the first accepted attempt gives `d v`. For `a < 1`,
/// Gamma(a + 1) times `w^(1/a)`, `w` from the accepted attempt's second block (its other
/// two words), done in logs so that a tiny `a` gives a tiny variate, not 0. `a <= 0` or
/// NaN gives NaN, `a = inf` gives inf. In f64 with the `libm` crate's functions (the
/// same bits everywhere).
fn log_gamma_variate(key: i64, fam: u32, j: u64, a: f64) -> f64 {
    if a.is_nan() || a <= 0.0 {
        return f64::NAN;
    }
    if a.is_infinite() {
        return f64::INFINITY;
    }
    let boost = a < 1.0;
    let d = if boost { a + 1.0 } else { a } - 1.0 / 3.0;
    let c = 1.0 / libm::sqrt(9.0 * d);
    let (lo, hi) = (j as u32, (j >> 32) as u32);
    let words = |ctr: u32| philox4x32_10([lo, hi, ctr, fam], key_words(key));
    // Each attempt is accepted with probability above 0.95: 2^31 attempts never all fail.
    for k in 0..(1u32 << 31) {
        let n = words(2 * k);
        let u1 = 1.0 - f64::uniform_of(join(n[0], n[1]));
        let u2 = f64::uniform_of(join(n[2], n[3]));
        let x = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let w = words(2 * k + 1);
        let u = 1.0 - f64::uniform_of(join(w[0], w[1]));
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v)) {
            let log_g = libm::log(d * v);
            if !boost {
                return log_g;
            }
            let b = 1.0 - f64::uniform_of(join(w[2], w[3]));
            return log_g + libm::log(b) / a;
        }
    }
    f64::NAN
}

/// Element `j` of `gamma(key, a)`: a Gamma(a, 1) variate (`log_gamma_variate`).
pub fn gamma_at<T: Draw>(key: i64, j: u64, a: T) -> T {
    T::of_f64(libm::exp(log_gamma_variate(key, GAMMA, j, a.to_f64())))
}

/// Element `j` of `beta(key, a, b)`: `X / (X + Y)` for X ~ Gamma(a) and Y ~ Gamma(b) from
/// the two gamma families, as `1 / (1 + exp(ln Y - ln X))` (a ratio of two variates that
/// both underflow stays a number).
pub fn beta_at<T: Draw>(key: i64, j: u64, a: T, b: T) -> T {
    let lx = log_gamma_variate(key, GAMMA, j, a.to_f64());
    let ly = log_gamma_variate(key, GAMMA + 1, j, b.to_f64());
    T::of_f64(1.0 / (1.0 + libm::exp(ly - lx)))
}

/// Below this many elements a draw runs on the calling thread; from it on, with more than
/// one thread allowed ([`crate::threads`]), it is cut into one part per thread. Not
/// measured closely: Philox costs some nanoseconds per element, so 64 Ki elements are
/// about a millisecond, well above the ~100 µs of waking rayon's threads (threads.rs).
pub const PAR_MIN_DRAWS: usize = 1 << 16;

fn invalid(what: &str, detail: String) -> Error {
    Error::InvalidArgument {
        what: what.to_string(),
        detail,
    }
}

/// `out` sized to `dims` (i64 lengths, as `zeros(shape)` takes them).
fn shaped<T: crate::element::Element, D: Dimension>(
    out: &mut Array<T, D>,
    dims: &[i64],
    what: &str,
) -> Result<()> {
    let mut dim = D::zeros(D::NDIM.unwrap_or(dims.len()));
    if dim.ndim() != dims.len() {
        return Err(invalid(
            what,
            format!(
                "a shape of {} axes for an array of rank {}",
                dims.len(),
                dim.ndim()
            ),
        ));
    }
    for (k, &n) in dims.iter().enumerate() {
        dim[k] = usize::try_from(n)
            .map_err(|_| invalid(what, format!("negative length {n} in the shape {dims:?}")))?;
    }
    try_ensure_shape(what, out, dim)
}

/// Writes `f(j)` into element `j` of `out` (contiguous), split over threads from
/// [`PAR_MIN_DRAWS`] elements on: each element is computed from its index alone, so the
/// numbers do not depend on the split.
fn fill<T: Send>(out: &mut [T], f: &(impl Fn(u64) -> T + Sync)) {
    #[cfg(feature = "faer")]
    {
        let threads = if out.len() >= PAR_MIN_DRAWS {
            crate::threads::num_threads()
        } else {
            1
        };
        fill_split(out, 0, threads, f);
    }
    #[cfg(not(feature = "faer"))]
    fill_from(out, 0, f);
}

fn fill_from<T>(out: &mut [T], start: u64, f: &impl Fn(u64) -> T) {
    for (k, o) in out.iter_mut().enumerate() {
        *o = f(start + k as u64);
    }
}

/// `out` (elements `start..`) in `threads` parts, by `rayon::join` as the products split
/// (`kernels::dot`): no allocation but rayon's queue block once per 63 splits.
#[cfg(feature = "faer")]
fn fill_split<T: Send>(out: &mut [T], start: u64, threads: usize, f: &(impl Fn(u64) -> T + Sync)) {
    let first = threads / 2;
    let at = out.len() / threads.max(1) * first;
    if threads <= 1 || at == 0 || at >= out.len() {
        fill_from(out, start, f);
        return;
    }
    let (a, b) = out.split_at_mut(at);
    rayon::join(
        || fill_split(a, start, first, f),
        || fill_split(b, start + at as u64, threads - first, f),
    );
}

/// Writes `f(j)` into every element of `out` in row-major order.
fn fill_array<T: Send + Copy, D: Dimension>(out: &mut Array<T, D>, f: impl Fn(u64) -> T + Sync) {
    match out.as_slice_mut() {
        Some(s) => fill(s, &f),
        // Never for a buffer the kernels shaped (standard layout), kept for safety.
        None => out
            .iter_mut()
            .enumerate()
            .for_each(|(k, o)| *o = f(k as u64)),
    }
}

/// `uniform(key, shape)`: `out` of shape `dims` holding uniform values in [0, 1).
/// `Err(InvalidArgument)` naming `what` for a negative length or a size that cannot be
/// allocated.
pub fn uniform<T: Draw, D: Dimension>(
    out: &mut Array<T, D>,
    key: i64,
    dims: &[i64],
    what: &str,
) -> Result<()> {
    shaped(out, dims, what)?;
    fill_array(out, |j| uniform_at::<T>(key, j));
    Ok(())
}

/// `normal(key, shape)`: `out` of shape `dims` holding standard normal values (Box-Muller).
/// Errors as [`uniform`].
pub fn normal<T: Draw, D: Dimension>(
    out: &mut Array<T, D>,
    key: i64,
    dims: &[i64],
    what: &str,
) -> Result<()> {
    shaped(out, dims, what)?;
    fill_array(out, |j| normal_at::<T>(key, j));
    Ok(())
}

/// `bernoulli(key, p)`: `out` of p's shape, element `j` true when `uniform_at(key, j) <
/// p[j]` (in p's dtype). `Err` only when the result cannot be allocated.
pub fn bernoulli<T: Draw, D: Dimension>(
    out: &mut Array<bool, D>,
    key: i64,
    p: ArrayView<'_, T, D>,
    what: &str,
) -> Result<()> {
    per_element(out, p, what, |j, p| uniform_at::<T>(key, j) < p)
}

/// `out` of `p`'s shape, element `j` (row-major) `f(j, p[j])`: a draw with one parameter
/// per element. `Err` only when the result cannot be allocated.
fn per_element<T: Copy + Sync, U: crate::element::Element + Send, D: Dimension>(
    out: &mut Array<U, D>,
    p: ArrayView<'_, T, D>,
    what: &str,
    f: impl Fn(u64, T) -> U + Sync,
) -> Result<()> {
    try_ensure_shape(what, out, p.raw_dim())?;
    match (out.as_slice_mut(), p.as_slice()) {
        (Some(o), Some(p)) => fill(o, &|j| f(j, p[j as usize])),
        _ => {
            for (j, (o, &x)) in out.iter_mut().zip(p.iter()).enumerate() {
                *o = f(j as u64, x);
            }
        }
    }
    Ok(())
}

/// `gamma(key, a)`: `out` of a's shape, element `j` a `Gamma(a[j], 1)` variate
/// ([`gamma_at`]). `Err` only when the result cannot be allocated.
pub fn gamma<T: Draw, D: Dimension>(
    out: &mut Array<T, D>,
    key: i64,
    a: ArrayView<'_, T, D>,
    what: &str,
) -> Result<()> {
    per_element(out, a, what, |j, a| gamma_at(key, j, a))
}

/// `beta(key, a, b)`: `out` of the broadcast shape of `a` and `b`, element `j` (row-major)
/// a Beta(a, b) variate ([`beta_at`]). `Err(Broadcast)` naming `what` when the shapes do
/// not broadcast, or when the result cannot be allocated.
pub fn beta<T: Draw, D: Dimension, Da: Dimension, Db: Dimension>(
    out: &mut Array<T, D>,
    key: i64,
    a: ArrayView<'_, T, Da>,
    b: ArrayView<'_, T, Db>,
    what: &str,
) -> Result<()> {
    let shape: D = crate::kernels::broadcast_shape(what, &[a.shape(), b.shape()])?;
    let (Some(a), Some(b)) = (a.broadcast(shape.clone()), b.broadcast(shape.clone())) else {
        return Err(invalid(
            what,
            format!(
                "shapes {:?} and {:?} do not broadcast",
                a.shape(),
                b.shape()
            ),
        ));
    };
    try_ensure_shape(what, out, shape)?;
    for (j, ((o, &a), &b)) in out.iter_mut().zip(a.iter()).zip(b.iter()).enumerate() {
        *o = beta_at(key, j as u64, a, b);
    }
    Ok(())
}

/// `categorical(key, logits)`: for each row of `logits`' last axis, the index drawn with
/// probabilities `softmax(row)` (Gumbel-max, see the module's documentation); `out` has
/// logits' shape without its last axis. `Err(InvalidArgument)` naming `what` when the last
/// axis is empty (nothing to draw from) or the result cannot be allocated.
pub fn categorical<T: Draw, D: RemoveAxis>(
    out: &mut Array<i64, D::Smaller>,
    key: i64,
    logits: ArrayView<'_, T, D>,
    what: &str,
) -> Result<()> {
    let Some(last) = logits.ndim().checked_sub(1).map(Axis) else {
        return Err(invalid(what, "categorical of a scalar".to_string()));
    };
    let n = logits.len_of(last);
    if n == 0 {
        return Err(invalid(
            what,
            format!(
                "categorical over an empty last axis (logits of shape {:?})",
                logits.shape()
            ),
        ));
    }
    try_ensure_shape(what, out, logits.raw_dim().remove_axis(last))?;
    for (r, (o, row)) in out.iter_mut().zip(logits.lanes(last)).enumerate() {
        let base = r as u64 * n as u64;
        let (mut best_c, mut best) = (0usize, f64::NAN);
        for (c, &x) in row.iter().enumerate() {
            let v = x.to_f64() + gumbel_at(key, base + c as u64);
            // The first of equal values; the first NaN, once seen, stays.
            if c == 0 || (!best.is_nan() && (v.is_nan() || v > best)) {
                (best_c, best) = (c, v);
            }
        }
        *o = best_c as i64;
    }
    Ok(())
}

/// `split(key, n)`: `out` holding the keys derived from `key`, `0..n`. `Err` naming `what`
/// for a negative `n` or a length that cannot be allocated.
pub fn split(out: &mut Array1<i64>, key: i64, n: i64, what: &str) -> Result<()> {
    let len = usize::try_from(n).map_err(|_| invalid(what, format!("split into {n} keys")))?;
    try_ensure_shape(what, out, ndarray::Ix1(len))?;
    fill_array(out, |i| derive_key(key, i as i64));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's kat_vectors, `philox4x32 R ctr[4] key[2] -> out[4]`.
    #[test]
    fn known_answers() {
        // Rounds, counter, key, output.
        type Kat = (usize, [u32; 4], [u32; 2], [u32; 4]);
        let cases: [Kat; 6] = [
            (
                7,
                [0; 4],
                [0; 2],
                [0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48],
            ),
            (
                7,
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662],
            ),
            (
                7,
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a],
            ),
            (
                10,
                [0; 4],
                [0; 2],
                [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
            ),
            (
                10,
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
            ),
            (
                10,
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ];
        for (rounds, ctr, key, out) in cases {
            assert_eq!(
                philox4x32(ctr, key, rounds),
                out,
                "{rounds} rounds, {ctr:x?}"
            );
        }
    }

    #[test]
    fn words_come_from_the_blocks_of_the_key() {
        // Key 0's block 0 is the first known answer: word 0 is w0 | w1 << 32.
        assert_eq!(word(0, 0), 0xe169c58d_6627e8d5);
        assert_eq!(word(0, 1), 0x9b00dbd8_bc57ac4c);
        let key = 0x299f31d0_a4093822_u64 as i64;
        let w = philox4x32_10([5, 0, 0, 1], [0xa4093822, 0x299f31d0]);
        assert_eq!(
            derive_key(key, 5) as u64,
            u64::from(w[0]) | u64::from(w[1]) << 32
        );
    }

    #[test]
    fn uniform_bits_and_range() {
        assert_eq!(f64::uniform_of(0), 0.0);
        assert_eq!(f64::uniform_of(u64::MAX), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(f32::uniform_of(u64::MAX), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(f32::uniform_of(1 << 40), 1.0 / (1 << 24) as f32);
    }

    #[test]
    fn a_split_over_threads_gives_the_same_numbers() {
        let n = PAR_MIN_DRAWS + 7;
        let mut one = vec![0.0f64; n];
        fill_from(&mut one, 0, &|j| normal_at::<f64>(3, j));
        #[cfg(feature = "faer")]
        for threads in [2, 3, 5] {
            let mut split = vec![0.0f64; n];
            fill_split(&mut split, 0, threads, &|j| normal_at::<f64>(3, j));
            assert!(one
                .iter()
                .zip(&split)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn errors_name_the_expression_and_the_sizes() {
        let mut out = Array1::<f64>::zeros(0);
        let err = uniform(&mut out, 1, &[-3], "uniform(key, n)").unwrap_err();
        assert_eq!(
            err.to_string(),
            Error::InvalidArgument {
                what: "uniform(key, n)".into(),
                detail: "negative length -3 in the shape [-3]".into()
            }
            .to_string()
        );
        let mut idx = Array::<i64, ndarray::Ix1>::zeros(0);
        let logits = ndarray::Array2::<f64>::zeros((3, 0));
        assert!(categorical(&mut idx, 1, logits.view(), "c").is_err());
        let mut keys = Array1::<i64>::zeros(0);
        assert!(split(&mut keys, 1, -1, "split(key, n)").is_err());
    }

    /// Mean and variance of `n` values.
    fn moments(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        (
            mean,
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0),
        )
    }

    #[test]
    fn gamma_and_beta_have_their_moments() {
        // Gamma(a, 1): mean a, variance a; Beta(a, b): mean a / (a + b), variance
        // ab / ((a + b)^2 (a + b + 1)). 10^5 draws: the sample mean is within 5 standard
        // errors, the variance within 5% (fixed key: the test is deterministic).
        let n = 100_000u64;
        for a in [0.05, 0.3, 1.0, 2.5, 10.0, 300.0] {
            let v: Vec<f64> = (0..n).map(|j| gamma_at(7, j, a)).collect();
            assert!(v.iter().all(|&x| x > 0.0 && x.is_finite()), "a = {a}");
            let (mean, var) = moments(&v);
            assert!(
                (mean - a).abs() < 5.0 * (a / n as f64).sqrt(),
                "a = {a}: mean {mean}"
            );
            assert!((var / a - 1.0).abs() < 0.05, "a = {a}: variance {var}");
        }
        for (a, b) in [(0.5, 0.5), (2.0, 5.0), (0.1, 3.0), (40.0, 10.0)] {
            let v: Vec<f64> = (0..n).map(|j| beta_at(11, j, a, b)).collect();
            assert!(v.iter().all(|&x| (0.0..=1.0).contains(&x)), "({a}, {b})");
            let (mean, var) = moments(&v);
            let s = a + b;
            let (m, w) = (a / s, a * b / (s * s * (s + 1.0)));
            assert!(
                (mean - m).abs() < 5.0 * (w / n as f64).sqrt(),
                "({a}, {b}): mean {mean}"
            );
            assert!((var / w - 1.0).abs() < 0.05, "({a}, {b}): variance {var}");
        }
    }

    #[test]
    fn gamma_edges_and_streams() {
        assert!(gamma_at(1, 0, 0.0f64).is_nan() && gamma_at(1, 0, -1.0f64).is_nan());
        assert!(gamma_at(1, 0, f64::NAN).is_nan());
        assert_eq!(gamma_at(1, 0, f64::INFINITY), f64::INFINITY);
        // A tiny shape: a tiny variate, not 0 (the boost is taken in logs).
        let tiny = beta_at(3, 0, 1e-3f64, 1e-3);
        assert!((0.0..=1.0).contains(&tiny));
        assert!(gamma_at(3, 1, 1e-3f64) >= 0.0);
        // The same element twice: the same value; f32 is the f64 value rounded once.
        assert_eq!(
            gamma_at(5, 9, 2.5f64).to_bits(),
            gamma_at(5, 9, 2.5f64).to_bits()
        );
        assert_eq!(gamma_at(5, 9, 2.5f32), gamma_at(5, 9, 2.5f64) as f32);
        // Gamma's blocks are not the uniform draws' nor another element's.
        assert_ne!(gamma_at(5, 0, 1.0f64), gamma_at(5, 1, 1.0f64));
        let mut out = Array1::<f64>::zeros(0);
        let a = Array1::from(vec![1.0, 2.0, 3.0]);
        gamma(&mut out, 5, a.view(), "g").unwrap();
        for j in 0..3 {
            assert_eq!(out[j], gamma_at(5, j as u64, a[j]));
        }
        let mut out2 = ndarray::Array2::<f64>::zeros((0, 0));
        let b = ndarray::Array2::from_elem((2, 1), 4.0);
        beta(&mut out2, 5, a.view(), b.view(), "b").unwrap();
        assert_eq!(out2.dim(), (2, 3));
        assert_eq!(out2[[1, 2]], beta_at(5, 5, 3.0, 4.0));
        let e = beta(
            &mut out2,
            5,
            a.view(),
            ndarray::Array1::from(vec![1.0, 2.0]).view(),
            "beta(k, a, b)",
        );
        assert!(e.unwrap_err().to_string().contains("beta(k, a, b)"));
    }
}
