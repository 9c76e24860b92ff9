//! lstm: the standard LSTM, gates i, f, g, o from one merged W_x [I, 4H], W_h [H, 4H] and
//! b \[4H\] (in that order along the 4H axis); i, f, o = sigmoid, g = tanh; c_t = f c_{t-1} +
//! i g; h_t = o tanh(c_t); x = gen([T, B, I], 8, 1.0), W_x = gen([I, 4H], 9, 0.1), W_h =
//! gen([H, 4H], 10, 0.1), b = gen(\[4H\], 11, 0.1); h, c start at 0; f32, every h kept;
//! T = 128, B = 32, I = 256, H = 512.
//!
//! The program is SPEC's: the zero initial states are made inside it (`zeros` of the batch
//! and hidden sizes, read off the inputs' shapes), and the gates are cut out of the merged
//! [B, 4H] pre-activation by column slices `z[(.., a..b)]` (numpy's `z[:, a:b]`). The
//! hand-written loop starts from zeros it makes itself.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::ArrayViewMut2;
use scan_runtime::prelude::*;
use scan_runtime::threads::spin;

use crate::inputs::{aligned_zeros, flat, gen_f32};
use crate::kernels::{sigmoid_f32, tanh_f32, with_best_isa};
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn lstm(
        x: ArrayView3<f32>,
        w_x: ArrayView2<f32>,
        w_h: ArrayView2<f32>,
        b: ArrayView1<f32>,
    ) -> Result<Array3<f32>> {
        let zero = zeros((x.shape[1], w_h.shape[0])) as f32;
        let (h, c) = scan(
            |x_t, h_tm1, c_tm1, w_x, w_h, b| {
                let z = x_t.dot(w_x) + h_tm1.dot(w_h) + b;
                let n = h_tm1.shape[1];
                let i = sigmoid(z[(.., ..n)]);
                let f = sigmoid(z[(.., n..2 * n)]);
                let g = tanh(z[(.., 2 * n..3 * n)]);
                let o = sigmoid(z[(.., 3 * n..)]);
                let c_t = f * c_tm1 + i * g;
                (o * tanh(c_t), c_t)
            },
            sequences = x,
            outputs_info = [zero, zero],
            non_sequences = [w_x, w_h, b],
        );
        Ok(h)
    }
}

/// The inputs of one run.
pub struct Inputs {
    pub x: Array3<f32>,
    pub w_x: Array2<f32>,
    pub w_h: Array2<f32>,
    pub b: Array1<f32>,
}

/// Steps per input-projection GEMM: 8 steps of 32 x 2048 f32 is a 2 MB scratch that stays
/// in cache and is reused, instead of a 33.5 MB one mapped afresh at each call (glibc
/// unmaps buffers above 32 MB). Measured on a 2-core Intel Xeon (AVX-512), same run: 8
/// steps 114.5 ms at 1 thread, 67.4 at 2; the whole projection at once 135.2 and 78.4; 4
/// steps 115.4; 16 115.2; 32 (2 threads) 66.1.
const CHUNK_STEPS: usize = 8;

/// The hand-written loop:
/// 1. the input projection of [`CHUNK_STEPS`] steps at once, X [8*B, I] @ W_x, one product
///    through W_x packed once (`PackedMatrix`; faer's GEMM, which packs W_x at every call,
///    made the whole loop 5% slower on a 2-core Intel Xeon) into a [8*B, 4H] scratch buffer
///    reused for every chunk (the only buffer besides the output and c);
/// 2. per step, `d = h_{t-1} @ W_h` (W_h packed once before the loop:
///    `scan_runtime::kernels::PackedMatrix`; h_{t-1} is the previous output row), then one
///    fused pass over [B, H] adding that step's projection, `d` and the bias, doing the four
///    activations, c (updated in place) and h (written straight into the output): no gate
///    array is ever stored; at 2 threads half the batch rows on the runtime's spinning
///    helper thread.
pub fn lstm_hand(inp: &Inputs) -> Array3<f32> {
    let (t_len, batch, i_len) = inp.x.dim();
    let h = inp.b.len() / 4;
    let (zrow, hrow) = (batch * 4 * h, batch * h);
    let chunk = CHUNK_STEPS.min(t_len).max(1);
    // Buffers on cache lines, as the runtime's.
    let mut z_buf = aligned_zeros::<f32>(chunk * zrow);
    let z = z_buf.as_slice_mut().expect("contiguous");
    // The recurrent product of a step, apart from the projection (accumulated onto it, which
    // comes from memory, the loop was slower).
    let mut d_buf = aligned_zeros::<f32>(zrow);
    let d = d_buf.as_slice_mut().expect("contiguous");
    let xs = flat(&inp.x);
    let mut packed = PackedMatrix::<f32>::new(inp.w_h.view());
    let mut packed_x = PackedMatrix::<f32>::new(inp.w_x.view());
    let two_threads = scan_runtime::num_threads() >= 2 && batch >= 2;
    let mut c_buf = aligned_zeros::<f32>(hrow);
    let c = c_buf.as_slice_mut().expect("contiguous");
    let h0 = vec![0.0f32; hrow];
    let mut out_buf = aligned_zeros::<f32>(t_len * hrow);
    let out = out_buf.as_slice_mut().expect("contiguous");
    let (b_i, rest) = flat(&inp.b).split_at(h);
    let (b_f, rest) = rest.split_at(h);
    let (b_g, b_o) = rest.split_at(h);
    for t in 0..t_len {
        let (done, rest) = out.split_at_mut(t * hrow);
        let h_prev = if t == 0 { &h0 } else { &done[(t - 1) * hrow..] };
        let h_out = &mut rest[..hrow];
        if t % chunk == 0 {
            // The input projection of the next `chunk` steps, one product through W_x
            // packed once (faster than faer's GEMM, which packs W_x at every call).
            let steps = chunk.min(t_len - t);
            let rows = t * batch * i_len..(t + steps) * batch * i_len;
            let x_rows =
                ArrayView2::from_shape((steps * batch, i_len), &xs[rows]).expect("rows of x");
            let z_rows = ArrayViewMut2::from_shape((steps * batch, 4 * h), &mut z[..steps * zrow])
                .expect("rows of z");
            packed_x
                .dot_mm(z_rows, x_rows, inp.w_x.view(), "x @ W_x")
                .expect("steps*B x I times I x 4H");
        }
        let k = t % chunk;
        let z_t = &z[k * zrow..(k + 1) * zrow];
        let d_view = ArrayViewMut2::from_shape((batch, 4 * h), &mut *d).expect("B x 4H");
        let h_view = ArrayView2::from_shape((batch, h), &h_prev[..hrow]).expect("B x H");
        packed
            .dot_mm(d_view, h_view, inp.w_h.view(), "h @ W_h")
            .expect("B x H times H x 4H");
        let activate = |z: &[f32], d: &[f32], c: &mut [f32], h_out: &mut [f32]| {
            let rows = z
                .chunks_exact(4 * h)
                .zip(d.chunks_exact(4 * h))
                .zip(c.chunks_exact_mut(h))
                .zip(h_out.chunks_exact_mut(h));
            for (((z_r, d_r), c_r), h_r) in rows {
                let (z_i, rest) = z_r.split_at(h);
                let (z_f, rest) = rest.split_at(h);
                let (z_g, z_o) = rest.split_at(h);
                let (d_i, rest) = d_r.split_at(h);
                let (d_f, rest) = rest.split_at(h);
                let (d_g, d_o) = rest.split_at(h);
                let mut row = GateRow {
                    z_i,
                    z_f,
                    z_g,
                    z_o,
                    d_i,
                    d_f,
                    d_g,
                    d_o,
                    b_i,
                    b_f,
                    b_g,
                    b_o,
                    c: c_r,
                    h: h_r,
                };
                with_best_isa(
                    #[inline(always)]
                    || gates(&mut row),
                );
            }
        };
        if two_threads {
            // Half the batch rows on the runtime's spinning helper, as its maps do.
            let half = batch / 2;
            let (z1, z2) = z_t.split_at(half * 4 * h);
            let (d1, d2) = d.split_at(half * 4 * h);
            let (c1, c2) = c.split_at_mut(half * h);
            let (h1, h2) = h_out.split_at_mut(half * h);
            spin::join(|| activate(z1, d1, c1, h1), || activate(z2, d2, c2, h2));
        } else {
            activate(z_t, d, c, h_out);
        }
    }
    out_buf
        .into_shape_with_order((t_len, batch, h))
        .expect("T*B*H values")
}

/// One batch row of one step: the four gates' input projections and recurrent products,
/// the four bias slices, the cell state (updated in place) and the output row.
struct GateRow<'a> {
    z_i: &'a [f32],
    z_f: &'a [f32],
    z_g: &'a [f32],
    z_o: &'a [f32],
    d_i: &'a [f32],
    d_f: &'a [f32],
    d_g: &'a [f32],
    d_o: &'a [f32],
    b_i: &'a [f32],
    b_f: &'a [f32],
    b_g: &'a [f32],
    b_o: &'a [f32],
    c: &'a mut [f32],
    h: &'a mut [f32],
}

/// The fused elementwise pass; every slice is cut to the same length first so the bounds
/// checks go away and the loop vectorizes (inlined into `with_best_isa`'s AVX-512 or AVX2
/// function).
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn gates(r: &mut GateRow<'_>) {
    let n = r.h.len();
    let (z_i, z_f, z_g, z_o) = (&r.z_i[..n], &r.z_f[..n], &r.z_g[..n], &r.z_o[..n]);
    let (d_i, d_f, d_g, d_o) = (&r.d_i[..n], &r.d_f[..n], &r.d_g[..n], &r.d_o[..n]);
    let (b_i, b_f, b_g, b_o) = (&r.b_i[..n], &r.b_f[..n], &r.b_g[..n], &r.b_o[..n]);
    let (c, h) = (&mut r.c[..n], &mut r.h[..n]);
    for j in 0..n {
        let i = sigmoid_f32(z_i[j] + d_i[j] + b_i[j]);
        let f = sigmoid_f32(z_f[j] + d_f[j] + b_f[j]);
        let g = tanh_f32(z_g[j] + d_g[j] + b_g[j]);
        let o = sigmoid_f32(z_o[j] + d_o[j] + b_o[j]);
        let c_t = f * c[j] + i * g;
        c[j] = c_t;
        h[j] = o * tanh_f32(c_t);
    }
}

impl Inputs {
    /// SPEC's inputs of the lstm case (also lstm_grad's), at the bench's size.
    pub fn spec(bench: &Bench) -> Inputs {
        let (t, b, i, h) = (
            bench.size(128, 32, 4),
            bench.size(32, 8, 4),
            bench.size(256, 8, 8),
            bench.size(512, 8, 8),
        );
        Inputs {
            x: gen_f32((t, b, i), 8, 1.0),
            w_x: gen_f32((i, 4 * h), 9, 0.1),
            w_h: gen_f32((h, 4 * h), 10, 0.1),
            b: gen_f32([4 * h], 11, 0.1),
        }
    }
}

pub fn run(bench: &mut Bench) {
    let inp = Inputs::spec(bench);
    let v = &inp;
    bench.run(
        "lstm",
        DType::F32,
        Impl::fallible("scan", || {
            rw::lstm(v.x.view(), v.w_x.view(), v.w_h.view(), v.b.view())
        }),
        Impl::fallible("scan_norewrite", || {
            norw::lstm(v.x.view(), v.w_x.view(), v.w_h.view(), v.b.view())
        }),
        Impl::infallible("handwritten", || lstm_hand(v)),
    );
}
