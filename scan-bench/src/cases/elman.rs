//! elman: h_t = tanh(x_t @ W_in + h_{t-1} @ W + b); x = gen([T, B, I], 4, 1.0), W_in =
//! gen([I, H], 5, 0.1), W = gen([H, H], 6, 0.1), b = gen(\[H\], 7, 0.1), h_{-1} = 0; f32,
//! every h kept; T = 256, B = 32, I = 256, H = 512.
//!
//! The program is SPEC's: h_{-1} = 0 is made inside it (`zeros` of the batch and hidden
//! sizes, read off the inputs' shapes); the hand-written loop starts from zeros it makes
//! itself.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::ArrayViewMut2;
use scan_runtime::prelude::*;
use scan_runtime::threads::spin;

use crate::inputs::{aligned_zeros, flat, gen_f32};
use crate::kernels::{gemm, tanh_f32, with_best_isa};
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn elman(
        x: ArrayView3<f32>,
        w_in: ArrayView2<f32>,
        w: ArrayView2<f32>,
        b: ArrayView1<f32>,
    ) -> Result<Array3<f32>> {
        let h0 = zeros((x.shape[1], w.shape[0])) as f32;
        let h = scan(
            |x_t, h_tm1, w_in, w, b| tanh(x_t.dot(w_in) + h_tm1.dot(w) + b),
            sequences = x,
            outputs_info = h0,
            non_sequences = [w_in, w, b],
        );
        Ok(h)
    }
}

/// The inputs of one run.
pub struct Inputs {
    pub x: Array3<f32>,
    pub w_in: Array2<f32>,
    pub w: Array2<f32>,
    pub b: Array1<f32>,
}

/// The hand-written loop, as cuDNN-style RNNs do it:
/// 1. the input projection of every step at once, X [T*B, I] @ W_in, one large GEMM
///    written straight into the output buffer (no other buffer of that size);
/// 2. per step, `d = h_{t-1} @ W` (h_{t-1} being `out[t-1]`, with W packed once before the
///    loop: `scan_runtime::kernels::PackedMatrix`, the fastest product of a small block by
///    a fixed matrix at hand; faer's repacks W on every call and took 186 µs a step against
///    141), then one fused pass `out[t] = tanh(out[t] + d + b)` with a vectorized tanh (at
///    2 threads half the rows on the runtime's spinning helper thread, as the product's
///    second half).
///
/// Nothing is stored besides the output and `d` (one step's product).
pub fn elman_hand(inp: &Inputs) -> Array3<f32> {
    let (t_len, batch, _) = inp.x.dim();
    let h = inp.b.len();
    // On a cache line, as the runtime's buffers.
    let mut out = aligned_zeros::<f32>(t_len * batch * h);
    elman_hand_into(inp, out.as_slice_mut().expect("contiguous"));
    out.into_shape_with_order((t_len, batch, h))
        .expect("T*B*H values")
}

/// [`elman_hand`] into `out` (`T*B*H` values, every one written).
pub fn elman_hand_into(inp: &Inputs, out: &mut [f32]) {
    let (t_len, batch, i) = inp.x.dim();
    let h = inp.b.len();
    let b = flat(&inp.b);
    let row = batch * h;
    let mut packed = PackedMatrix::<f32>::new(inp.w.view());
    let two_threads = scan_runtime::num_threads() >= 2 && batch >= 2;
    let h0 = vec![0.0f32; row];
    // The recurrent product of a step, apart from its output row: accumulated onto the row
    // (which holds the step's input projection, from memory) the loop was 7% slower.
    let mut d = aligned_zeros::<f32>(row);
    let d = d.as_slice_mut().expect("contiguous");
    gemm(
        out,
        flat(&inp.x),
        flat(&inp.w_in),
        t_len * batch,
        i,
        h,
        false,
    );
    for t in 0..t_len {
        let (done, rest) = out.split_at_mut(t * row);
        let h_prev = if t == 0 {
            &h0[..]
        } else {
            &done[(t - 1) * row..]
        };
        let cur = &mut rest[..row];
        let d_view = ArrayViewMut2::from_shape((batch, h), &mut d[..]).expect("B x H");
        let h_view = ArrayView2::from_shape((batch, h), &h_prev[..row]).expect("B x H");
        packed
            .dot_mm(d_view, h_view, inp.w.view(), "h @ W")
            .expect("B x H times H x H");
        let activate = |rows: &mut [f32], d: &[f32]| {
            with_best_isa(
                #[inline(always)]
                || {
                    for (r, d_r) in rows.chunks_exact_mut(h).zip(d.chunks_exact(h)) {
                        for ((v, &bias), &p) in r.iter_mut().zip(b).zip(d_r) {
                            *v = tanh_f32(*v + p + bias);
                        }
                    }
                },
            )
        };
        if two_threads {
            // Half the rows on the runtime's spinning helper, as its maps do.
            let (first, second) = cur.split_at_mut(batch / 2 * h);
            let (d1, d2) = d.split_at(batch / 2 * h);
            spin::join(|| activate(first, d1), || activate(second, d2));
        } else {
            activate(cur, d);
        }
    }
}

impl Inputs {
    /// SPEC's inputs of the elman case (also elman_grad's), at the bench's size.
    pub fn spec(bench: &Bench) -> Inputs {
        let (t, b, i, h) = (
            bench.size(256, 32, 4),
            bench.size(32, 8, 4),
            bench.size(256, 8, 8),
            bench.size(512, 8, 8),
        );
        Inputs {
            x: gen_f32((t, b, i), 4, 1.0),
            w_in: gen_f32((i, h), 5, 0.1),
            w: gen_f32((h, h), 6, 0.1),
            b: gen_f32([h], 7, 0.1),
        }
    }
}

pub fn run(bench: &mut Bench) {
    let inp = Inputs::spec(bench);
    let v = &inp;
    bench.run(
        "elman",
        DType::F32,
        Impl::fallible("scan", || {
            rw::elman(v.x.view(), v.w_in.view(), v.w.view(), v.b.view())
        }),
        Impl::fallible("scan_norewrite", || {
            norw::elman(v.x.view(), v.w_in.view(), v.w.view(), v.b.view())
        }),
        Impl::infallible("handwritten", || elman_hand(v)),
    );
}
