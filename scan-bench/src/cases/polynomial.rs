//! polynomial: components_t = c_t * x ** p_t over the sequences (c, arange(len)), result =
//! sum(components); len = 1000000, x = 0.999999, c = gen(\[len\], 3, 1.0) in f32.
//!
//! Differences from SPEC's wording, both following its note ("sum it in f64, carry the
//! powers in f64"): x is an f32 scalar (0.999999f32, as with PyTensor's floatX = float32),
//! and `pow(x, p)` of an f32 and an i64 is computed in f64 (numpy's promotion of f32 with
//! int64), so the components and their sum are f64. The function returns that f64 sum.

use scan_runtime::kernels::isa::with_best_isa;

use crate::inputs::gen_f32;
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    /// The scan tutorial's polynomial, with the length as a parameter.
    pub fn polynomial(coefficients: ArrayView1<f32>, x: f32, len: usize) -> Result<f64> {
        let components = scan(
            |coefficient, power, free_variable| coefficient * pow(free_variable, power),
            outputs_info = None,
            sequences = [coefficients, arange(len)],
            non_sequences = x,
        );
        Ok(components.sum())
    }
}

/// Powers carried at once, each multiplied by x^LANES per group (four AVX2 registers:
/// four independent chains of adds; with two, the loop waits on their latency and runs
/// 10% slower).
const LANES: usize = 16;
/// Every BLOCK terms the powers are recomputed with `powf`, so rounding errors of the
/// carried products never build up over more than BLOCK / LANES = 64 multiplies (< 3e-14).
const BLOCK: usize = 1024;

/// The hand-written loop: no component is stored, and no `pow` per term: each of 16 lanes
/// carries x^t in f64 and steps it by x^16 with one multiply, and the terms are summed in
/// 16 f64 accumulators. One `powf` per block (x^t0), the other lanes from it times x^l
/// (x^1..x^16 computed once). The whole loop vectorizes, with AVX2 chosen at run time.
/// Assumes, as a performance engineer knowing the input would, that the powers stay
/// normal floats (x = 0.999999 over 10^6 terms).
pub fn polynomial_hand(c: &[f32], x: f32) -> f64 {
    let x = f64::from(x);
    let x_to: [f64; LANES + 1] = std::array::from_fn(|l| x.powf(l as f64));
    let step = x_to[LANES];
    with_best_isa(
        #[inline(always)]
        || {
            let mut acc = [0.0f64; LANES];
            for (b, block) in c.chunks(BLOCK).enumerate() {
                let p0 = x.powf((b * BLOCK) as f64);
                let mut p: [f64; LANES] = std::array::from_fn(|l| p0 * x_to[l]);
                let mut groups = block.chunks_exact(LANES);
                for g in &mut groups {
                    for ((acc, p), &c) in acc.iter_mut().zip(&mut p).zip(g) {
                        *acc += f64::from(c) * *p;
                        *p *= step;
                    }
                }
                for ((acc, p), &c) in acc.iter_mut().zip(&p).zip(groups.remainder()) {
                    *acc += f64::from(c) * *p;
                }
            }
            acc.iter().sum()
        },
    )
}

pub fn run(bench: &mut Bench) {
    let len = bench.size(1_000_000, 100, 10);
    let c = gen_f32([len], 3, 1.0);
    let x = 0.999_999f32;
    let c_slice = c.as_slice().expect("contiguous");
    bench.run(
        "polynomial",
        DType::F32,
        Impl::fallible("scan", || rw::polynomial(c.view(), x, len)),
        Impl::fallible("scan_norewrite", || norw::polynomial(c.view(), x, len)),
        Impl::infallible("handwritten", || polynomial_hand(c_slice, x)),
    );
}
