//! linrec2: x_t = 0.6 x_{t-1} + 0.4 x_{t-2} + u_t (output taps -2, -1), x_{-2} = 0,
//! x_{-1} = 1, u = gen(\[T\], 2, 1.0), f64, every step kept; T = 1000000 (a MITSOT
//! recurrence on scalars).

use scan_runtime::prelude::*;

use crate::inputs::gen;
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn linrec2(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array1<f64>> {
        let x = scan(
            |u_t, x_tm2, x_tm1| x_tm1 * 0.6 + x_tm2 * 0.4 + u_t,
            sequences = u,
            outputs_info = taps(x0, [-2, -1]),
        );
        Ok(x)
    }
}

/// The hand-written loop: both taps live in registers and are shifted each step; each
/// x_t is written once, into an output allocated at its final size. Same operations in the
/// same order as the scan, so bit-identical results. The loop makes no call (the output is
/// allocated before it): a `push`, or a closure given to `from_iter`, kept the taps in
/// memory (a store and a reload on the dependency chain every step: twice the time).
pub fn linrec2_hand(u: &[f64], x0: [f64; 2]) -> Array1<f64> {
    let [mut x_tm2, mut x_tm1] = x0;
    let mut out = vec![0.0; u.len()];
    for (o, &u_t) in out.iter_mut().zip(u) {
        let x = x_tm1 * 0.6 + x_tm2 * 0.4 + u_t;
        (x_tm2, x_tm1) = (x_tm1, x);
        *o = x;
    }
    Array1::from_vec(out)
}

pub fn run(bench: &mut Bench) {
    let t = bench.size(1_000_000, 100, 10);
    let u = gen([t], 2, 1.0);
    let x0 = array![0.0, 1.0];
    let u_slice = u.as_slice().expect("contiguous");
    bench.run(
        "linrec2",
        DType::F64,
        Impl::fallible("scan", || rw::linrec2(u.view(), x0.view())),
        Impl::fallible("scan_norewrite", || norw::linrec2(u.view(), x0.view())),
        Impl::infallible("handwritten", || linrec2_hand(u_slice, [0.0, 1.0])),
    );
}
