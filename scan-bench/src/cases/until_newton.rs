//! until_newton: y_t = 0.5 (y_{t-1} + a / y_{t-1}), y_{-1} = a, stopping after the step
//! where max |y_t - y_{t-1}| < 1e-12 (until), at most 200 steps; a = 1.5 + gen([4096], 20,
//! 1.0), f64, every step done kept.

use scan_runtime::kernels::isa::with_best_isa;
use scan_runtime::prelude::*;

use crate::inputs::gen;
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn newton(a: ArrayView1<f64>) -> Result<Array2<f64>> {
        let ys = scan(
            |y_tm1, a| {
                let y_t = 0.5 * (y_tm1 + a / y_tm1);
                (y_t, until(max(abs(y_t - y_tm1)) < 1e-12))
            },
            outputs_info = a,
            non_sequences = a,
            n_steps = 200,
        );
        Ok(ys)
    }
}

/// The hand-written loop: one tight vectorized pass per step makes the new row from the
/// previous one where it was stored, and a second pass over the two rows (still in L1)
/// takes the largest change in 8 lanes (the scan's step makes a difference array, its abs,
/// then its max). Rows are appended to the output as they are made, and the loop stops
/// after the step that converged, as `until` does. Both passes run with AVX2 where the CPU
/// has it, chosen at run time as the runtime does (`with_best_isa`).
pub fn newton_hand(a: &[f64], max_steps: usize, tol: f64) -> Array2<f64> {
    let n = a.len();
    let mut out: Vec<f64> = Vec::with_capacity(16 * n);
    let mut steps = 0;
    while steps < max_steps {
        let start = out.len();
        out.resize(start + n, 0.0);
        let (done, row) = out.split_at_mut(start);
        let prev = if start == 0 { a } else { &done[start - n..] };
        let change = with_best_isa(
            #[inline(always)]
            || {
                for ((y, &p), &a) in row.iter_mut().zip(prev).zip(a) {
                    *y = 0.5 * (p + a / p);
                }
                max_change(row, prev)
            },
        );
        steps += 1;
        if change < tol {
            break;
        }
    }
    Array2::from_shape_vec((steps, n), out).expect("steps rows of n")
}

/// Lanes of the running maximum, so the reduction vectorizes.
const LANES: usize = 8;

/// max |y - p| over two rows of the same length (NaN-free rows: a compare and a select per
/// element).
#[inline(always)]
fn max_change(y: &[f64], p: &[f64]) -> f64 {
    let mut m = [0.0f64; LANES];
    let (ys, ps) = (y.chunks_exact(LANES), p.chunks_exact(LANES));
    let tail = ys
        .remainder()
        .iter()
        .zip(ps.remainder())
        .map(|(y, p)| (y - p).abs());
    let tail = tail.fold(0.0, f64::max);
    for (y, p) in ys.zip(ps) {
        for ((m, y), p) in m.iter_mut().zip(y).zip(p) {
            let d = (y - p).abs();
            *m = if d > *m { d } else { *m };
        }
    }
    m.iter().copied().fold(tail, f64::max)
}

pub fn run(bench: &mut Bench) {
    let n = bench.size(4096, 64, 16);
    let a = gen([n], 20, 1.0).mapv(|v| v + 1.5);
    let a_slice = a.as_slice().expect("contiguous");
    bench.run(
        "until_newton",
        DType::F64,
        Impl::fallible("scan", || rw::newton(a.view())),
        Impl::fallible("scan_norewrite", || norw::newton(a.view())),
        Impl::infallible("handwritten", || newton_hand(a_slice, 200, 1e-12)),
    );
}
