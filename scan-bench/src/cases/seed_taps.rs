//! seed_taps: the RNN of the scan tutorial. x_t = tanh(x_{t-1} @ W + u_t @ W_in_1 +
//! u_{t-4} @ W_in_2 + y_{t-1} @ W_feedback); y_t = x_{t-3} @ W_out; sequence u with taps
//! [-4, 0], outputs x with taps [-3, -1] (x0 has 3 rows) and y with tap [-1]; f64, every x
//! and y kept; T = 10000 (u has T + 4 rows), n_u = 64, n_x = 128, n_y = 32.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::ArrayViewMut1;
use scan_runtime::prelude::*;

use crate::inputs::{aligned_zeros, flat, gen};
use crate::kernels::{gemm, tanh_in_place_f64};
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    /// The scan tutorial's program, word for word.
    #[allow(clippy::too_many_arguments)]
    pub fn rnn(
        u: ArrayView2<f64>,
        x0: ArrayView2<f64>,
        y0: ArrayView1<f64>,
        w: ArrayView2<f64>,
        w_in_1: ArrayView2<f64>,
        w_in_2: ArrayView2<f64>,
        w_feedback: ArrayView2<f64>,
        w_out: ArrayView2<f64>,
    ) -> Result<(Array2<f64>, Array2<f64>)> {
        let (x_vals, y_vals) = scan(
            |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                let x_t = tanh(
                    x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback),
                );
                let y_t = x_tm3.dot(w_out);
                (x_t, y_t)
            },
            sequences = [taps(u, [-4, 0])],
            outputs_info = [taps(x0, [-3, -1]), y0],
            non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
            strict = true,
        );
        Ok((x_vals, y_vals))
    }
}

/// The inputs of one run.
pub struct Inputs {
    pub u: Array2<f64>,
    pub x0: Array2<f64>,
    pub y0: Array1<f64>,
    pub w: Array2<f64>,
    pub w_in_1: Array2<f64>,
    pub w_in_2: Array2<f64>,
    pub w_feedback: Array2<f64>,
    pub w_out: Array2<f64>,
}

/// The hand-written loop:
/// 1. both input projections of every step at once, `u[4..] @ W_in_1 + u[..T] @ W_in_2`,
///    two large GEMMs written straight into the x output;
/// 2. W and W_feedback stacked into one [n_x + n_y, n_x] matrix, and x_{t-1}, y_{t-1}
///    kept side by side in one small vector z, so the recurrent part of a step is one
///    vector-matrix product (through the stacked matrix packed once:
///    `PackedMatrix::pack_vectors`; faer's vector-matrix product made the loop 9% slower
///    on a 2-core Intel Xeon, AVX-512), added to the projection already in `x[t]`, then a
///    vectorized tanh in place;
/// 3. y_t = x_{t-3} @ W_out (packed once too) straight into the y output, x_{t-3} read
///    where it was stored.
pub fn rnn_hand(inp: &Inputs) -> (Array2<f64>, Array2<f64>) {
    let (rows, n_u) = inp.u.dim();
    let t_len = rows - 4;
    let (n_x, n_y) = (inp.w.ncols(), inp.w_out.ncols());
    let u = flat(&inp.u);
    // Buffers on cache lines, as the runtime's (a vector-matrix product over misaligned
    // rows is slower).
    let mut xs_buf = aligned_zeros::<f64>(t_len * n_x);
    let xs = xs_buf.as_slice_mut().expect("contiguous");
    gemm(xs, &u[4 * n_u..], flat(&inp.w_in_1), t_len, n_u, n_x, false);
    gemm(
        xs,
        &u[..t_len * n_u],
        flat(&inp.w_in_2),
        t_len,
        n_u,
        n_x,
        true,
    );
    let mut stacked_buf = aligned_zeros::<f64>((n_x + n_y) * n_x);
    let stacked = stacked_buf.as_slice_mut().expect("contiguous");
    for (d, &v) in stacked
        .iter_mut()
        .zip(flat(&inp.w).iter().chain(flat(&inp.w_feedback)))
    {
        *d = v;
    }
    let stacked = ArrayView2::from_shape((n_x + n_y, n_x), &*stacked).expect("stacked");
    let mut packed = PackedMatrix::<f64>::default();
    packed.pack_vectors(stacked);
    let mut packed_out = PackedMatrix::<f64>::default();
    packed_out.pack_vectors(inp.w_out.view());
    let x0 = flat(&inp.x0);
    let mut d_buf = aligned_zeros::<f64>(n_x);
    let d = d_buf.as_slice_mut().expect("contiguous");
    let mut z_buf = aligned_zeros::<f64>(n_x + n_y);
    let z = z_buf.as_slice_mut().expect("contiguous");
    for (d, &v) in z.iter_mut().zip(x0[2 * n_x..].iter().chain(flat(&inp.y0))) {
        *d = v;
    }
    let mut ys_buf = aligned_zeros::<f64>(t_len * n_y);
    let ys = ys_buf.as_slice_mut().expect("contiguous");
    for t in 0..t_len {
        let (done, rest) = xs.split_at_mut(t * n_x);
        let x_t = &mut rest[..n_x];
        packed
            .dot_vm(
                ArrayViewMut1::from(&mut *d),
                ArrayView1::from(&*z),
                stacked,
                "z @ S",
            )
            .expect("n_x + n_y times (n_x + n_y) x n_x");
        for (x, &p) in x_t.iter_mut().zip(&*d) {
            *x += p;
        }
        tanh_in_place_f64(x_t);
        let x_tm3 = if t < 3 {
            &x0[t * n_x..(t + 1) * n_x]
        } else {
            &done[(t - 3) * n_x..(t - 2) * n_x]
        };
        let y_t = &mut ys[t * n_y..(t + 1) * n_y];
        packed_out
            .dot_vm(
                ArrayViewMut1::from(&mut *y_t),
                ArrayView1::from(x_tm3),
                inp.w_out.view(),
                "x @ W_out",
            )
            .expect("n_x times n_x x n_y");
        z[..n_x].copy_from_slice(x_t);
        z[n_x..].copy_from_slice(y_t);
    }
    (
        xs_buf
            .into_shape_with_order((t_len, n_x))
            .expect("T*n_x values"),
        ys_buf
            .into_shape_with_order((t_len, n_y))
            .expect("T*n_y values"),
    )
}

pub fn run(bench: &mut Bench) {
    let t = bench.size(10_000, 100, 10);
    let (n_u, n_x, n_y) = (64, 128, 32);
    let inp = Inputs {
        u: gen((t + 4, n_u), 12, 1.0),
        x0: gen((3, n_x), 13, 0.1),
        y0: gen([n_y], 14, 0.1),
        w: gen((n_x, n_x), 15, 0.1),
        w_in_1: gen((n_u, n_x), 16, 0.1),
        w_in_2: gen((n_u, n_x), 17, 0.1),
        w_feedback: gen((n_y, n_x), 18, 0.1),
        w_out: gen((n_x, n_y), 19, 0.1),
    };
    let v = &inp;
    let args = || {
        (
            v.u.view(),
            v.x0.view(),
            v.y0.view(),
            v.w.view(),
            v.w_in_1.view(),
            v.w_in_2.view(),
            v.w_feedback.view(),
            v.w_out.view(),
        )
    };
    bench.run(
        "seed_taps",
        DType::F64,
        Impl::fallible("scan", || {
            let (u, x0, y0, w, w1, w2, wf, wo) = args();
            rw::rnn(u, x0, y0, w, w1, w2, wf, wo)
        }),
        Impl::fallible("scan_norewrite", || {
            let (u, x0, y0, w, w1, w2, wf, wo) = args();
            norw::rnn(u, x0, y0, w, w1, w2, wf, wo)
        }),
        Impl::infallible("handwritten", || rnn_hand(v)),
    );
}
