//! Timing as SPEC.md says: one warm-up call, then at least 5 timed calls (for a call under
//! 10 ms, more until 1 s of timed calls), median and min of one call's wall time. The
//! implementations of a case are called in turn (round-robin), all of them in every round
//! that any of them needs (one that has had its own calls up to 4 s of them), so a slow
//! phase of the machine hits all of them alike; [`Measurement::paired_ratio`] compares two
//! round by round. Only the call is timed: the checksum is taken from the warm-up call's
//! output, and outputs are dropped after the clock stops.

use std::fmt::Display;
use std::time::Instant;

use scan_runtime::ndarray::{Array, Dimension};

use crate::alloc::ALLOC;

/// A call's output, reduced to SPEC's checksum: the sum of all its elements as f64.
pub trait Checksum {
    fn checksum(&self) -> f64;
}

/// Element types that outputs hold.
pub trait ToF64: Copy {
    fn to_f64(self) -> f64;
}

impl ToF64 for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl ToF64 for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

impl ToF64 for i64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl<T: ToF64, D: Dimension> Checksum for Array<T, D> {
    fn checksum(&self) -> f64 {
        self.iter().map(|&v| v.to_f64()).sum()
    }
}

impl Checksum for f64 {
    fn checksum(&self) -> f64 {
        *self
    }
}

impl<A: Checksum, B: Checksum> Checksum for (A, B) {
    fn checksum(&self) -> f64 {
        self.0.checksum() + self.1.checksum()
    }
}

impl<A: Checksum, B: Checksum, C: Checksum> Checksum for (A, B, C) {
    fn checksum(&self) -> f64 {
        self.0.checksum() + self.1.checksum() + self.2.checksum()
    }
}

type Call<'a> = Box<dyn FnMut() -> Result<Box<dyn Checksum>, String> + 'a>;

/// One implementation of a case: a name (`impl=`) and a call computing the case's outputs.
pub struct Impl<'a> {
    pub name: &'static str,
    call: Call<'a>,
}

impl<'a> Impl<'a> {
    /// A call that may fail (a `scan!` program returns `scan_runtime::Result`).
    pub fn fallible<O, E>(name: &'static str, mut f: impl FnMut() -> Result<O, E> + 'a) -> Self
    where
        O: Checksum + 'static,
        E: Display,
    {
        let call = move || match f() {
            Ok(out) => Ok(Box::new(out) as Box<dyn Checksum>),
            Err(e) => Err(e.to_string()),
        };
        Impl {
            name,
            call: Box::new(call),
        }
    }

    /// A call that cannot fail (the hand-written loops).
    pub fn infallible<O: Checksum + 'static>(
        name: &'static str,
        mut f: impl FnMut() -> O + 'a,
    ) -> Self {
        Impl::fallible(name, move || Ok::<O, std::convert::Infallible>(f()))
    }
}

/// What was measured for one implementation.
pub struct Measurement {
    pub name: &'static str,
    /// Wall time of each timed call, in ms.
    pub times_ms: Vec<f64>,
    pub checksum: f64,
    /// Peak bytes allocated during the first call, above what was held before it.
    pub peak_bytes: usize,
    /// A run-time `Err`, after which the implementation was not called again.
    pub error: Option<String>,
}

impl Measurement {
    pub fn median_ms(&self) -> f64 {
        if self.times_ms.is_empty() {
            return f64::NAN;
        }
        median(self.times_ms.clone())
    }

    pub fn min_ms(&self) -> f64 {
        self.times_ms.iter().copied().fold(f64::NAN, f64::min)
    }

    /// The median over rounds of this implementation's call / `base`'s call in the same
    /// round (calls alternate, so the two of a round run a few milliseconds apart): a host
    /// whose speed changes for seconds at a time (seen: 2x for whole seconds, either vCPU
    /// of a Zen 3 VM, whichever implementation runs) slows both calls of a round alike,
    /// where it can fall on more of one implementation's calls than the other's and move
    /// the ratio of their medians. `None` without a round of both.
    pub fn paired_ratio(&self, base: &Measurement) -> Option<f64> {
        let ratios: Vec<f64> = self
            .times_ms
            .iter()
            .zip(&base.times_ms)
            .map(|(a, b)| a / b)
            .collect();
        (!ratios.is_empty()).then(|| median(ratios))
    }
}

/// The median of `values` (not empty), the mean of the middle two for an even count.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// SPEC's minimum number of timed calls.
const MIN_CALLS: usize = 5;
/// Calls faster than this get more timed calls...
const FAST_MS: f64 = 10.0;
/// ...until their timed calls add up to this.
const BUDGET_MS: f64 = 1000.0;
/// An implementation that has had its own calls is still called in the rounds that
/// another one needs, until its timed calls add up to this (then the other goes on alone).
const PAIRED_MAX_MS: f64 = 4.0 * BUDGET_MS;

/// Times every implementation. `quick`: one call each, timed and checksummed.
pub fn measure(impls: &mut [Impl<'_>], quick: bool) -> Vec<Measurement> {
    measure_for(impls, quick, PAIRED_MAX_MS)
}

/// [`measure`], calling an implementation that needs no more calls of its own alongside
/// the others until its calls add up to `paired_max_ms`.
fn measure_for(impls: &mut [Impl<'_>], quick: bool, paired_max_ms: f64) -> Vec<Measurement> {
    let mut results: Vec<Measurement> = impls.iter_mut().map(first_call).collect();
    if quick {
        return results;
    }
    for m in &mut results {
        m.times_ms.clear(); // the warm-up call is not one of the timed calls
    }
    let mut total_ms = vec![0.0f64; impls.len()];
    loop {
        // Rounds go on while any implementation needs more calls, and the others are
        // called in them too (up to `paired_max_ms`): when each stopped on its own, a slow
        // spell of the host at the start (2x for seconds) once put a 5 ms call over
        // `FAST_MS`, so that its five calls were all slow while the other's hundred mostly
        // came after the spell.
        let wanted: Vec<bool> = results
            .iter()
            .zip(&total_ms)
            .map(|(m, &total)| m.error.is_none() && needs_more(&m.times_ms, total))
            .collect();
        if !wanted.contains(&true) {
            return results;
        }
        let calls = impls.iter_mut().zip(&mut results).zip(&mut total_ms);
        for (((imp, m), total), wanted) in calls.zip(wanted) {
            if m.error.is_some() || !(wanted || *total < paired_max_ms) {
                continue;
            }
            let start = Instant::now();
            let out = (imp.call)();
            let ms = start.elapsed().as_secs_f64() * 1e3;
            match out {
                Ok(out) => {
                    m.times_ms.push(ms);
                    *total += ms;
                    drop(out);
                }
                Err(e) => m.error = Some(e),
            }
        }
    }
}

/// SPEC's rule: at least MIN_CALLS timed calls; if the median of the first MIN_CALLS is
/// under FAST_MS, more until they add up to BUDGET_MS.
fn needs_more(times_ms: &[f64], total_ms: f64) -> bool {
    if times_ms.len() < MIN_CALLS {
        return true;
    }
    let mut first = times_ms[..MIN_CALLS].to_vec();
    first.sort_by(f64::total_cmp);
    first[MIN_CALLS / 2] < FAST_MS && total_ms < BUDGET_MS
}

/// The warm-up call: its output gives the checksum, its allocations the peak.
fn first_call(imp: &mut Impl<'_>) -> Measurement {
    ALLOC.reset_peak();
    let before = ALLOC.live();
    let start = Instant::now();
    let out = (imp.call)();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let peak_bytes = ALLOC.peak().saturating_sub(before);
    let mut m = Measurement {
        name: imp.name,
        times_ms: Vec::new(),
        checksum: f64::NAN,
        peak_bytes,
        error: None,
    };
    match out {
        Ok(out) => {
            m.checksum = out.checksum();
            m.times_ms.push(ms);
        }
        Err(e) => m.error = Some(e),
    }
    m
}

/// C's `%.10e` (`1.2345678901e+05`), as SPEC prints checksums.
pub fn sci(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let s = format!("{x:.10e}");
    let (mantissa, exp) = s.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` has an integer exponent");
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_runtime::ndarray::array;

    #[test]
    fn sci_prints_like_c() {
        assert_eq!(sci(123456.789), "1.2345678900e+05");
        assert_eq!(sci(-0.000123), "-1.2300000000e-04");
        assert_eq!(sci(0.0), "0.0000000000e+00");
        assert_eq!(sci(1e200), "1.0000000000e+200");
    }

    #[test]
    fn warm_up_then_five_timed_calls_and_errors_stop_an_implementation() {
        let (mut slow_calls, mut failing_calls) = (0, 0);
        let mut impls = vec![
            Impl::infallible("slow", || {
                slow_calls += 1;
                std::thread::sleep(std::time::Duration::from_millis(11));
                array![1.0f64, 2.5]
            }),
            Impl::fallible("failing", || {
                failing_calls += 1;
                if failing_calls > 2 {
                    Err("no more")
                } else {
                    Ok(7.0)
                }
            }),
        ];
        let results = measure(&mut impls, false);
        drop(impls);
        assert_eq!(slow_calls, 1 + MIN_CALLS);
        assert_eq!(results[0].times_ms.len(), MIN_CALLS);
        assert!(results[0].min_ms() >= 11.0);
        assert_eq!(results[0].checksum, 3.5);
        assert_eq!(failing_calls, 3);
        assert_eq!(results[1].checksum, 7.0);
        assert_eq!(results[1].error.as_deref(), Some("no more"));
    }

    #[test]
    fn every_implementation_is_called_in_the_rounds_another_needs() {
        let (mut slow_calls, mut fast_calls) = (0, 0);
        let mut impls = vec![
            Impl::infallible("slow", || {
                slow_calls += 1;
                std::thread::sleep(std::time::Duration::from_millis(12));
                1.0
            }),
            Impl::infallible("fast", || {
                fast_calls += 1;
                std::thread::sleep(std::time::Duration::from_millis(4));
                2.0
            }),
        ];
        // "fast" needs calls until 1 s (about 250); "slow" is called beside it until its
        // own calls add up to 120 ms, about 10, where alone it would stop at 5.
        let results = measure_for(&mut impls, false, 120.0);
        drop(impls);
        let (slow, fast) = (&results[0], &results[1]);
        assert!(fast.times_ms.iter().sum::<f64>() >= BUDGET_MS);
        assert!(fast_calls > 50, "{fast_calls}");
        assert!(
            (slow.times_ms.len() > MIN_CALLS) && (slow.times_ms.len() <= 11),
            "{}",
            slow.times_ms.len()
        );
        assert_eq!(slow_calls, 1 + slow.times_ms.len());
        // The first calls of both came in the same rounds.
        assert!(slow.paired_ratio(fast).is_some_and(|r| r > 2.0));
    }

    #[test]
    fn fast_calls_continue_until_the_budget() {
        assert!(needs_more(&[20.0; 4], 80.0));
        assert!(!needs_more(&[20.0; 5], 100.0));
        assert!(needs_more(&[2.0; 5], 10.0));
        assert!(!needs_more(&[2.0; 500], 1000.0));
    }

    /// A measurement of these call times.
    fn m(times_ms: Vec<f64>) -> Measurement {
        Measurement {
            name: "x",
            times_ms,
            checksum: 0.0,
            peak_bytes: 0,
            error: None,
        }
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(m(vec![3.0, 1.0, 2.0]).median_ms(), 2.0);
        assert_eq!(m(vec![4.0, 1.0, 2.0, 3.0]).median_ms(), 2.5);
        assert_eq!(m(vec![4.0, 1.0]).min_ms(), 1.0);
        assert!(m(vec![]).median_ms().is_nan());
    }

    #[test]
    fn paired_ratio_takes_each_round_s_two_calls_together() {
        // A slow host in rounds 2 and 3 (both calls twice as long): every round's ratio is
        // 1.1, where the ratio of the medians is 2.2 / 1.5.
        let scan = m(vec![1.1, 2.2, 2.2, 1.1, 2.2]);
        let hand = m(vec![1.0, 2.0, 2.0, 1.0, 2.0, 1.0]);
        let paired = scan.paired_ratio(&hand).expect("five rounds of both");
        assert!((paired - 1.1).abs() < 1e-12, "{paired}");
        assert!((scan.median_ms() / hand.median_ms() - 1.1).abs() > 0.05);
        assert_eq!(scan.paired_ratio(&m(vec![])), None);
    }
}
