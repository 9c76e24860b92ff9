//! The machine's f32 multiply-add peak: the rate no matrix product can beat, against which a
//! GEMM-bound case's time is read (`--peak`). Each thread runs [`SUMS`] independent vector
//! sums `s = s * a + b` in the widest registers the runtime's maps use (AVX-512, else AVX2
//! with FMA, chosen at run time by `with_best_isa`; else SSE2 with a separate multiply and
//! add), enough independent sums to cover the multiply-add latency on every port of the
//! x86 cores seen (latency 4 to 5, two ports), and nothing else: no load, no store.

use std::hint::black_box;
use std::time::Instant;

use scan_runtime::kernels::isa::{has_avx2_fma, has_avx512, with_best_isa};

/// Independent sums per thread, each one vector register wide.
const SUMS: usize = 12;

/// Multiply-adds per timed run and sum lane: about 0.1 s at 40 GFLOP/s.
const ITERATIONS: usize = 20_000_000;

/// Timed runs per thread; the fastest counts (a peak, not a typical time).
const RUNS: usize = 5;

/// The instruction set [`peak_gflops`] measures, its f32 lanes per register and the sums
/// run in them: one choice, for the name printed and the rate measured.
fn widest() -> (&'static str, usize, fn() -> f32) {
    if has_avx512() {
        ("avx512", 16, sums::<16, true>)
    } else if has_avx2_fma() {
        ("avx2+fma", 8, sums::<8, true>)
    } else {
        ("sse2", 4, sums::<4, false>)
    }
}

/// The name of the instruction set [`peak_gflops`] measures.
pub fn isa() -> &'static str {
    widest().0
}

/// f32 GFLOP/s (a multiply-add counts 2) of `threads` threads running at once, each the
/// fastest of [`RUNS`] runs.
pub fn peak_gflops(threads: usize) -> f64 {
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..threads.max(1))
            .map(|_| scope.spawn(one_thread))
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("the peak's thread does not panic"))
            .sum()
    })
}

/// One thread's fastest run, GFLOP/s.
fn one_thread() -> f64 {
    let (_, lanes, run) = widest();
    (2 * SUMS * lanes * ITERATIONS) as f64 / fastest(run) / 1e9
}

/// The fastest of [`RUNS`] timed runs of `run`, seconds.
fn fastest(run: fn() -> f32) -> f64 {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(run());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// [`SUMS`] sums of `L` lanes, [`ITERATIONS`] multiply-adds each (fused when `FUSED`,
/// which needs the FMA instructions: without them `mul_add` is a library call).
fn sums<const L: usize, const FUSED: bool>() -> f32 {
    let (a, b) = (black_box(0.999_999_9f32), black_box(1e-7f32));
    with_best_isa(
        #[inline(always)]
        || {
            let mut s = [[0.0f32; L]; SUMS];
            for _ in 0..ITERATIONS {
                for sum in &mut s {
                    for x in sum.iter_mut() {
                        *x = if FUSED { x.mul_add(a, b) } else { *x * a + b };
                    }
                }
            }
            s.iter().flatten().sum()
        },
    )
}
