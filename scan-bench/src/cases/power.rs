//! power_small and power_large: result_t = result_{t-1} * A from ones, A = 1 + gen(\[n\], 1,
//! 1e-4), only the last step kept. power_small: n = 16, k = 200000 (per-step overhead);
//! power_large: n = 1000000, k = 64 (memory traffic per step).

use scan_runtime::kernels::isa::with_best_isa;
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

/// The hand-written loop, interchanged: for each chunk of 16 elements, all k multiplies run
/// in registers and only the final power is stored, so memory is touched once (read A,
/// write the result) instead of once per step. Compiled for the widest instruction set the
/// CPU has, chosen at run time as the runtime's loops are (`with_best_isa`); 16 elements
/// are the runtime's interchanged chunk too. Measured on a Zen 1 EPYC (one 256-bit multiply
/// per cycle): 16 elements with AVX2 6.2-6.6 ms, as with SSE2 (6.0-6.7); 32 with AVX2
/// 6.5-7.2. On a CPU with two 256-bit multiply ports, 32 (AVX2) or 64 (AVX-512) may pay:
/// not measured. The elements left over go one by one. Same multiplies in the same order
/// as the scan, so the results are bit-identical.
pub fn power_hand(a: &[f64], k: usize) -> Array1<f64> {
    let mut out = Vec::with_capacity(a.len());
    let rest = with_best_isa(
        #[inline(always)]
        || chunks(a, k, &mut out),
    );
    for &f in rest {
        let mut p = 1.0;
        for _ in 0..k {
            p *= f;
        }
        out.push(p);
    }
    Array1::from_vec(out)
}

/// Elements whose powers are carried at once.
const LANES: usize = 16;

/// `f^k` for each whole chunk of [`LANES`] elements of `a`, appended to `out`; returns the
/// elements left over.
#[inline(always)]
fn chunks<'a>(a: &'a [f64], k: usize, out: &mut Vec<f64>) -> &'a [f64] {
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
    chunks.remainder()
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
