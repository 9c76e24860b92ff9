//! until_newton: y_t = 0.5 (y_{t-1} + a / y_{t-1}), y_{-1} = a, stopping after the step
//! where max |y_t - y_{t-1}| < 1e-12 (until), at most 200 steps; a = 1.5 + gen(\[4096\], 20,
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
/// previous one where it was stored and, in the same pass, takes the largest change in 8
/// lanes (the two rows are read once; a second pass over them, even in cache, took 15%
/// longer). Rows are appended to the output as they are made (`resize` zeroes the new row:
/// safe Rust has no cheaper way to hand memory to a loop), and the loop stops after the
/// step that converged, as `until` does. The pass runs with AVX2 where the CPU has it,
/// chosen at run time as the runtime does (`with_best_isa`).
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
            || newton_row(row, prev, a),
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

/// Writes y = 0.5 (p + a / p) into `y` and returns max |y - p| (NaN-free rows: a compare
/// and a select per element), in one pass over rows of the same length.
#[inline(always)]
fn newton_row(y: &mut [f64], p: &[f64], a: &[f64]) -> f64 {
    let step = |p: f64, a: f64| 0.5 * (p + a / p);
    let mut m = [0.0f64; LANES];
    let (ys, ps, as_) = (
        y.chunks_exact_mut(LANES),
        p.chunks_exact(LANES),
        a.chunks_exact(LANES),
    );
    let (pt, at) = (ps.remainder(), as_.remainder());
    for ((y, p), a) in ys.zip(ps).zip(as_) {
        // A plain loop, not `core::array::from_fn`: that is not always inlined into the
        // `with_best_isa` function (then it runs as SSE2 code, 2.5x slower; seen).
        let mut new = [0.0f64; LANES];
        for (l, v) in new.iter_mut().enumerate() {
            *v = step(p[l], a[l]);
        }
        y.copy_from_slice(&new);
        for ((m, y), p) in m.iter_mut().zip(new).zip(p) {
            let d = (y - p).abs();
            *m = if d > *m { d } else { *m };
        }
    }
    let full = y.len() - pt.len();
    let mut tail = 0.0f64;
    for ((y, &p), &a) in y[full..].iter_mut().zip(pt).zip(at) {
        *y = step(p, a);
        tail = tail.max((*y - p).abs());
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
