//! Timing as SPEC.md says: one warm-up call, then at least 5 timed calls (for a call under
//! 10 ms, more until 1 s of timed calls), median and min of one call's wall time. The
//! implementations of a case are called in turn (round-robin), so a slow phase of the
//! machine hits all of them alike. Only the call is timed: the checksum is taken from the
//! warm-up call's output, and outputs are dropped after the clock stops.

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
        let mut t = self.times_ms.clone();
        t.sort_by(f64::total_cmp);
        match t.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => t[n / 2],
            n => 0.5 * (t[n / 2 - 1] + t[n / 2]),
        }
    }

    pub fn min_ms(&self) -> f64 {
        self.times_ms.iter().copied().fold(f64::NAN, f64::min)
    }
}

/// SPEC's minimum number of timed calls.
const MIN_CALLS: usize = 5;
/// Calls faster than this get more timed calls...
const FAST_MS: f64 = 10.0;
/// ...until their timed calls add up to this.
const BUDGET_MS: f64 = 1000.0;

/// Times every implementation. `quick`: one call each, timed and checksummed.
pub fn measure(impls: &mut [Impl<'_>], quick: bool) -> Vec<Measurement> {
    let mut results: Vec<Measurement> = impls.iter_mut().map(first_call).collect();
    if quick {
        return results;
    }
    for m in &mut results {
        m.times_ms.clear(); // the warm-up call is not one of the timed calls
    }
    let mut total_ms = vec![0.0f64; impls.len()];
    loop {
        let mut any = false;
        for ((imp, m), total) in impls.iter_mut().zip(&mut results).zip(&mut total_ms) {
            if m.error.is_some() || !needs_more(&m.times_ms, *total) {
                continue;
            }
            any = true;
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
        if !any {
            return results;
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
    fn fast_calls_continue_until_the_budget() {
        assert!(needs_more(&[20.0; 4], 80.0));
        assert!(!needs_more(&[20.0; 5], 100.0));
        assert!(needs_more(&[2.0; 5], 10.0));
        assert!(!needs_more(&[2.0; 500], 1000.0));
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        let m = |t: Vec<f64>| Measurement {
            name: "x",
            times_ms: t,
            checksum: 0.0,
            peak_bytes: 0,
            error: None,
        };
        assert_eq!(m(vec![3.0, 1.0, 2.0]).median_ms(), 2.0);
        assert_eq!(m(vec![4.0, 1.0, 2.0, 3.0]).median_ms(), 2.5);
        assert_eq!(m(vec![4.0, 1.0]).min_ms(), 1.0);
    }
}
