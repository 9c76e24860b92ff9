//! power_small and power_large: result_t = result_{t-1} * A from ones, A = 1 + gen(\[n\], 1,
//! 1e-4), only the last step kept. power_small: n = 16, k = 200000 (per-step overhead);
//! power_large: n = 1000000, k = 64 (memory traffic per step).

use scan_runtime::prelude::*;

use crate::inputs::gen;
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    /// The scan tutorial's power: A**k elementwise, keeping only the last step.
    pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
        let result = scan(
            |prior_result, a| prior_result * a,
            outputs_info = ones_like(a),
            non_sequences = a,
            n_steps = k,
        );
        Ok(result[-1])
    }
}

/// Elements whose powers are carried at once: 16 f64 are 8 SSE2 registers, enough
/// independent multiply chains to cover the multiply's latency, and their 16 factors fit in
/// the other 8 registers.
const LANES: usize = 16;

/// The hand-written loop, interchanged: for each chunk of 16 elements, all k multiplies run
/// in registers and only the final power is stored, so memory is touched once (read A,
/// write the result) instead of once per step. Same multiplies in the same order as the
/// scan, so the results are bit-identical.
pub fn power_hand(a: &[f64], k: usize) -> Array1<f64> {
    let mut out = Vec::with_capacity(a.len());
    let mut chunks = a.chunks_exact(LANES);
    for chunk in &mut chunks {
        let f: [f64; LANES] = chunk.try_into().expect("chunks_exact gives LANES elements");
        let mut p = [1.0f64; LANES];
        for _ in 0..k {
            for (p, f) in p.iter_mut().zip(&f) {
                *p *= f;
            }
        }
        out.extend_from_slice(&p);
    }
    for &f in chunks.remainder() {
        let mut p = 1.0;
        for _ in 0..k {
            p *= f;
        }
        out.push(p);
    }
    Array1::from_vec(out)
}

fn run(bench: &mut Bench, case: &'static str, n: usize, k: usize) {
    let a = gen([n], 1, 1e-4).mapv(|v| v + 1.0);
    let a_slice = a.as_slice().expect("contiguous");
    bench.run(
        case,
        DType::F64,
        Impl::fallible("scan", || rw::power(a.view(), k)),
        Impl::fallible("scan_norewrite", || norw::power(a.view(), k)),
        Impl::infallible("handwritten", || power_hand(a_slice, k)),
    );
}

pub fn power_small(bench: &mut Bench) {
    let k = bench.size(200_000, 100, 10);
    run(bench, "power_small", 16, k);
}

pub fn power_large(bench: &mut Bench) {
    let n = bench.size(1_000_000, 100, 10);
    run(bench, "power_large", n, 64);
}
