//! lstm_grad (issue 10's benchmark): the forward pass of `lstm` and its backward pass,
//! the gradients of `loss = sum of every h_t` with respect to W_x, W_h and b: the program
//! with `grad` through its scan against backpropagation through time written by hand.
//! Same inputs and sizes as `lstm`; the outputs are the three gradients.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::ArrayViewMut2;
use scan_runtime::prelude::*;
use scan_runtime::threads::spin;

use super::lstm::Inputs;
use crate::inputs::flat;
use crate::kernels::{gemm, gemm_tn, keep, scratch, sigmoid_f32, tanh_f32, with_best_isa};
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn lstm_grad(
        x: ArrayView3<f32>,
        w_x: ArrayView2<f32>,
        w_h: ArrayView2<f32>,
        b: ArrayView1<f32>,
    ) -> Result<(Array2<f32>, Array2<f32>, Array1<f32>)> {
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
        let (g_w_x, g_w_h, g_b) = grad(sum(h), [w_x, w_h, b]);
        Ok((g_w_x, g_w_h, g_b))
    }
}

/// The gradients of the loss with respect to W_x, W_h and b.
pub struct Gradients {
    pub w_x: Array2<f32>,
    pub w_h: Array2<f32>,
    pub b: Array1<f32>,
}

/// The hand-written BPTT, as a performance engineer would write it. One buffer of
/// `T x B x 4H` holds, in turn, the gates' pre-activations, the gates after activation
/// and the gradients of the pre-activations (`dG`); besides it only h and c of every step
/// are kept.
/// 1. Forward: the input projection of every step, `X [T*B, I] @ W_x`, one GEMM into that
///    buffer; per step `z_t += h_{t-1} @ W_h` through W_h packed once (skipped at t = 0,
///    h_{-1} = 0), then one fused pass over [B, H] adding the bias, activating the four
///    gates in place, writing c_t and h_t.
/// 2. Backward, over the steps in reverse: one fused pass per step reads the gates, c_t,
///    c_{t-1}, `dh_t = 1 + dG_{t+1} W_h^T` (the loss's gradient 1 at every h_t plus what
///    flows back from step t + 1) and the cell state's gradient carried from step t + 1;
///    it writes dG_t over the gates, the carried `dc * f` and adds dG_t into db (while the
///    row is in cache; tanh(c_t) is recomputed, not stored); then `dG_t W_h^T` through W_h^T
///    packed once (in the memory of the forward's packing). At 2 threads both fused
///    passes run half the batch rows on the runtime's spinning helper, as `lstm_hand`.
/// 3. The weight gradients as two large products after the loop instead of two small ones
///    per step: dW_x = `X^T dG` over all steps, dW_h = `H[0..T-1]^T dG[1..T]` (h_{-1} = 0
///    adds nothing).
pub fn lstm_grad_hand(inp: &Inputs) -> Gradients {
    bptt(inp, scan_runtime::num_threads() >= 2)
}

/// [`lstm_grad_hand`], with the fused passes split over two threads or not.
fn bptt(inp: &Inputs, two_threads: bool) -> Gradients {
    let (t_len, batch, i_len) = inp.x.dim();
    let h = inp.b.len() / 4;
    let (zrow, hrow) = (batch * 4 * h, batch * h);
    let two_threads = two_threads && batch >= 2;
    let half = batch / 2;
    let xs = flat(&inp.x);

    // 1. Forward.
    // Workspace kept from the last call (every element written before it is read).
    let mut gates_buf = scratch(t_len * zrow);
    let gates = gates_buf.as_slice_mut().expect("contiguous");
    gemm(
        gates,
        xs,
        flat(&inp.w_x),
        t_len * batch,
        i_len,
        4 * h,
        false,
    );
    let mut packed = PackedMatrix::<f32>::new(inp.w_h.view());
    let mut hs_buf = scratch(t_len * hrow);
    let hs = hs_buf.as_slice_mut().expect("contiguous");
    let mut cs_buf = scratch(t_len * hrow);
    let cs = cs_buf.as_slice_mut().expect("contiguous");
    let zero = vec![0.0f32; hrow];
    let b = flat(&inp.b);
    for t in 0..t_len {
        let z_t = &mut gates[t * zrow..(t + 1) * zrow];
        let (h_done, h_rest) = hs.split_at_mut(t * hrow);
        let h_t = &mut h_rest[..hrow];
        if t > 0 {
            let h_prev = &h_done[(t - 1) * hrow..];
            let z_view = ArrayViewMut2::from_shape((batch, 4 * h), &mut *z_t).expect("B x 4H");
            let h_view = ArrayView2::from_shape((batch, h), h_prev).expect("B x H");
            packed
                .dot_mm_add(z_view, h_view, inp.w_h.view(), "h @ W_h")
                .expect("B x H times H x 4H");
        }
        let (c_done, c_rest) = cs.split_at_mut(t * hrow);
        let c_prev = if t == 0 {
            &zero[..]
        } else {
            &c_done[(t - 1) * hrow..]
        };
        let c_t = &mut c_rest[..hrow];
        let forward = |z: &mut [f32], c_prev: &[f32], c: &mut [f32], h_out: &mut [f32]| {
            let rows = z
                .chunks_exact_mut(4 * h)
                .zip(c_prev.chunks_exact(h))
                .zip(c.chunks_exact_mut(h))
                .zip(h_out.chunks_exact_mut(h));
            for (((z_r, cp_r), c_r), h_r) in rows {
                with_best_isa(
                    #[inline(always)]
                    || forward_row(z_r, b, cp_r, c_r, h_r),
                );
            }
        };
        if two_threads {
            let (z1, z2) = z_t.split_at_mut(half * 4 * h);
            let (p1, p2) = c_prev.split_at(half * h);
            let (c1, c2) = c_t.split_at_mut(half * h);
            let (h1, h2) = h_t.split_at_mut(half * h);
            spin::join(|| forward(z1, p1, c1, h1), || forward(z2, p2, c2, h2));
        } else {
            forward(z_t, c_prev, c_t, h_t);
        }
    }

    // 2. Backward.
    let w_h_t = inp.w_h.t().as_standard_layout().into_owned();
    packed.pack(w_h_t.view());
    // dG_{t+1} W_h^T, the gradient flowing into h_t from the next step; and the cell
    // state's, dc_{t+1} * f_{t+1}.
    let mut back = vec![0.0f32; hrow];
    let mut dc = vec![0.0f32; hrow];
    // db, one partial sum per half of the batch at 2 threads.
    let mut db = vec![0.0f32; 4 * h];
    let mut db2 = vec![0.0f32; if two_threads { 4 * h } else { 0 }];
    for t in (0..t_len).rev() {
        let g_t = &mut gates[t * zrow..(t + 1) * zrow];
        let c_t = &cs[t * hrow..(t + 1) * hrow];
        let c_prev = if t == 0 {
            &zero[..]
        } else {
            &cs[(t - 1) * hrow..t * hrow]
        };
        let backward = |g: &mut [f32],
                        c: &[f32],
                        c_prev: &[f32],
                        back: &[f32],
                        dc: &mut [f32],
                        db: &mut [f32]| {
            let rows = g
                .chunks_exact_mut(4 * h)
                .zip(c.chunks_exact(h))
                .zip(c_prev.chunks_exact(h))
                .zip(back.chunks_exact(h))
                .zip(dc.chunks_exact_mut(h));
            for ((((g_r, c_r), cp_r), back_r), dc_r) in rows {
                with_best_isa(
                    #[inline(always)]
                    || backward_row(g_r, c_r, cp_r, back_r, dc_r, db),
                );
            }
        };
        if two_threads {
            let (g1, g2) = g_t.split_at_mut(half * 4 * h);
            let (c1, c2) = c_t.split_at(half * h);
            let (p1, p2) = c_prev.split_at(half * h);
            let (k1, k2) = back.split_at(half * h);
            let (d1, d2) = dc.split_at_mut(half * h);
            let db1 = &mut db[..];
            let db2 = &mut db2[..];
            spin::join(
                || backward(g1, c1, p1, k1, d1, db1),
                || backward(g2, c2, p2, k2, d2, db2),
            );
        } else {
            backward(g_t, c_t, c_prev, &back, &mut dc, &mut db);
        }
        if t > 0 {
            let g_view = ArrayView2::from_shape((batch, 4 * h), &*g_t).expect("B x 4H");
            let back_view = ArrayViewMut2::from_shape((batch, h), &mut back[..]).expect("B x H");
            packed
                .dot_mm(back_view, g_view, w_h_t.view(), "dG @ W_h^T")
                .expect("B x 4H times 4H x H");
        }
    }
    for (s, &d) in db.iter_mut().zip(&db2) {
        *s += d;
    }

    // 3. The weight gradients.
    let mut g_w_h = Array2::<f32>::zeros((h, 4 * h));
    if t_len > 1 {
        let rows = (t_len - 1) * batch;
        let dst = g_w_h.as_slice_mut().expect("new");
        gemm_tn(dst, &hs[..rows * h], &gates[zrow..], rows, h, 4 * h);
    }
    let mut g_w_x = Array2::<f32>::zeros((i_len, 4 * h));
    let rows = t_len * batch;
    let dst = g_w_x.as_slice_mut().expect("new");
    gemm_tn(dst, xs, &gates[..], rows, i_len, 4 * h);
    keep(gates_buf);
    keep(hs_buf);
    keep(cs_buf);
    Gradients {
        w_x: g_w_x,
        w_h: g_w_h,
        b: Array1::from_vec(db),
    }
}

/// One batch row of one forward step: `z` (the row's four gate pre-activations without
/// the bias) becomes the activated gates i, f, g, o in place; c and h are written. Every
/// slice is cut to the same length first so the bounds checks go away and the loop
/// vectorizes (inlined into `with_best_isa`'s AVX-512 or AVX2 function).
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn forward_row(z: &mut [f32], b: &[f32], c_prev: &[f32], c: &mut [f32], h: &mut [f32]) {
    let n = h.len();
    let (z_i, rest) = z.split_at_mut(n);
    let (z_f, rest) = rest.split_at_mut(n);
    let (z_g, z_o) = rest.split_at_mut(n);
    let (z_o, b_i, b_f) = (&mut z_o[..n], &b[..n], &b[n..2 * n]);
    let (b_g, b_o) = (&b[2 * n..3 * n], &b[3 * n..4 * n]);
    let (c_prev, c) = (&c_prev[..n], &mut c[..n]);
    for j in 0..n {
        let i = sigmoid_f32(z_i[j] + b_i[j]);
        let f = sigmoid_f32(z_f[j] + b_f[j]);
        let g = tanh_f32(z_g[j] + b_g[j]);
        let o = sigmoid_f32(z_o[j] + b_o[j]);
        let c_t = f * c_prev[j] + i * g;
        (z_i[j], z_f[j], z_g[j], z_o[j]) = (i, f, g, o);
        c[j] = c_t;
        h[j] = o * tanh_f32(c_t);
    }
}

/// One batch row of one backward step: `g` holds the activated gates i, f, g, o and
/// becomes the gradients of their pre-activations; `back` is dG_{t+1} W_h^T's row, `dc`
/// the cell state's gradient from step t + 1 (replaced by what flows on to step t - 1);
/// the row of dG is added into `db`.
///
/// With `dh = 1 + back` and `tc = tanh(c_t)`: `dc_t = dc + dh o (1 - tc^2)`, then
/// `dz_i = dc_t g i (1 - i)`, `dz_f = dc_t c_{t-1} f (1 - f)`, `dz_g = dc_t i (1 - g^2)`,
/// `dz_o = dh tc o (1 - o)`, and `dc_t f` flows on.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn backward_row(
    g: &mut [f32],
    c: &[f32],
    c_prev: &[f32],
    back: &[f32],
    dc: &mut [f32],
    db: &mut [f32],
) {
    let n = c.len();
    let (g_i, rest) = g.split_at_mut(n);
    let (g_f, rest) = rest.split_at_mut(n);
    let (g_g, g_o) = rest.split_at_mut(n);
    let g_o = &mut g_o[..n];
    let (db_i, rest) = db.split_at_mut(n);
    let (db_f, rest) = rest.split_at_mut(n);
    let (db_g, db_o) = rest.split_at_mut(n);
    let db_o = &mut db_o[..n];
    let (c_prev, back, dc) = (&c_prev[..n], &back[..n], &mut dc[..n]);
    for j in 0..n {
        let (i, f, gg, o) = (g_i[j], g_f[j], g_g[j], g_o[j]);
        let tc = tanh_f32(c[j]);
        let dh = 1.0 + back[j];
        let d_c = dc[j] + dh * o * (1.0 - tc * tc);
        let dz_i = d_c * gg * i * (1.0 - i);
        let dz_f = d_c * c_prev[j] * f * (1.0 - f);
        let dz_g = d_c * i * (1.0 - gg * gg);
        let dz_o = dh * tc * o * (1.0 - o);
        (g_i[j], g_f[j], g_g[j], g_o[j]) = (dz_i, dz_f, dz_g, dz_o);
        dc[j] = d_c * f;
        db_i[j] += dz_i;
        db_f[j] += dz_f;
        db_g[j] += dz_g;
        db_o[j] += dz_o;
    }
}

pub fn run(bench: &mut Bench) {
    let inp = Inputs::spec(bench);
    let v = &inp;
    bench.run(
        "lstm_grad",
        DType::F32,
        Impl::fallible("scan", || {
            rw::lstm_grad(v.x.view(), v.w_x.view(), v.w_h.view(), v.b.view())
        }),
        Impl::fallible("scan_norewrite", || {
            norw::lstm_grad(v.x.view(), v.w_x.view(), v.w_h.view(), v.b.view())
        }),
        Impl::infallible("handwritten", || {
            let g = lstm_grad_hand(v);
            (g.w_x, g.w_h, g.b)
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::gen_f32;

    fn sigmoid(v: f64) -> f64 {
        1.0 / (1.0 + (-v).exp())
    }

    /// The loss in f64, by plain loops: the reference's forward pass.
    fn loss(
        x: &[f64],
        w_x: &[f64],
        w_h: &[f64],
        b: &[f64],
        dims: (usize, usize, usize, usize),
    ) -> f64 {
        let (t_len, batch, i_len, h) = dims;
        let n = 4 * h;
        let mut h_prev = vec![0.0; batch * h];
        let mut c = vec![0.0; batch * h];
        let mut total = 0.0;
        for t in 0..t_len {
            let mut cur = vec![0.0; batch * h];
            for r in 0..batch {
                let mut z = b.to_vec();
                for (col, z) in z.iter_mut().enumerate() {
                    for k in 0..i_len {
                        *z += x[(t * batch + r) * i_len + k] * w_x[k * n + col];
                    }
                    for k in 0..h {
                        *z += h_prev[r * h + k] * w_h[k * n + col];
                    }
                }
                for j in 0..h {
                    let i = sigmoid(z[j]);
                    let f = sigmoid(z[h + j]);
                    let g = z[2 * h + j].tanh();
                    let o = sigmoid(z[3 * h + j]);
                    let c_t = f * c[r * h + j] + i * g;
                    c[r * h + j] = c_t;
                    cur[r * h + j] = o * c_t.tanh();
                }
            }
            total += cur.iter().sum::<f64>();
            h_prev = cur;
        }
        total
    }

    /// The hand-written BPTT (f32), its fused passes on one thread and split over two,
    /// against central differences of the f64 loss, element by element, at a small size:
    /// f32's rounding bounds the agreement.
    #[test]
    fn gradients_agree_with_finite_differences() {
        let dims = (5, 3, 4, 6);
        let (t_len, batch, i_len, h) = dims;
        let inp = Inputs {
            x: gen_f32((t_len, batch, i_len), 8, 1.0),
            w_x: gen_f32((i_len, 4 * h), 9, 0.5),
            w_h: gen_f32((h, 4 * h), 10, 0.5),
            b: gen_f32([4 * h], 11, 0.5),
        };
        let one = bptt(&inp, false);
        let two = bptt(&inp, true);
        let f64s = |a: &[f32]| a.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
        let x = f64s(flat(&inp.x));
        let mut params = [
            f64s(flat(&inp.w_x)),
            f64s(flat(&inp.w_h)),
            f64s(flat(&inp.b)),
        ];
        let at = |p: &[Vec<f64>; 3]| loss(&x, &p[0], &p[1], &p[2], dims);
        let eps = 1e-5;
        let mut check = |which: usize, got: &[f32]| {
            for (e, &got) in got.iter().enumerate() {
                let keep = params[which][e];
                params[which][e] = keep + eps;
                let up = at(&params);
                params[which][e] = keep - eps;
                let down = at(&params);
                params[which][e] = keep;
                let fd = (up - down) / (2.0 * eps);
                let diff = (f64::from(got) - fd).abs();
                assert!(
                    diff <= 1e-4 * fd.abs().max(1.0),
                    "param {which}, element {e}: {got} vs {fd}"
                );
            }
        };
        for g in [one, two] {
            check(0, g.w_x.as_slice().unwrap());
            check(1, g.w_h.as_slice().unwrap());
            check(2, g.b.as_slice().unwrap());
        }
    }
}
