//! elman_grad (issue 10's benchmark): the forward pass of `elman` and its backward pass,
//! the gradients of `loss = sum of every h_t` with respect to W_in, W and b: the program
//! with `grad` through its scan against backpropagation through time written by hand.
//! Same inputs and sizes as `elman`; the outputs are the three gradients.

use scan_runtime::kernels::PackedMatrix;
use scan_runtime::ndarray::{ArrayView2, ArrayViewMut2};
use scan_runtime::prelude::*;

use super::elman::{elman_hand_into, Inputs};
use crate::inputs::flat;
use crate::kernels::{gemm_tn, keep, scratch, with_best_isa};
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn elman_grad(
        x: ArrayView3<f32>,
        w_in: ArrayView2<f32>,
        w: ArrayView2<f32>,
        b: ArrayView1<f32>,
    ) -> Result<(Array2<f32>, Array2<f32>, Array1<f32>)> {
        let h0 = zeros((x.shape[1], w.shape[0])) as f32;
        let h = scan(
            |x_t, h_tm1, w_in, w, b| tanh(x_t.dot(w_in) + h_tm1.dot(w) + b),
            sequences = x,
            outputs_info = h0,
            non_sequences = [w_in, w, b],
        );
        let (g_w_in, g_w, g_b) = grad(sum(h), [w_in, w, b]);
        Ok((g_w_in, g_w, g_b))
    }
}

/// The gradients of the loss with respect to W_in, W and b.
pub struct Gradients {
    pub w_in: Array2<f32>,
    pub w: Array2<f32>,
    pub b: Array1<f32>,
}

/// The hand-written BPTT, as a performance engineer would write it:
/// 1. the forward pass of `elman_hand` (its input projection one GEMM, the recurrent
///    product through W packed once), every h kept: the backward pass reads them;
/// 2. backwards over the steps, `dz_t = (1 + dz_{t+1} W^T) * (1 - h_t^2)` (the loss's
///    gradient 1 at every h_t, plus what flows back from step t + 1), the product through
///    W^T packed once, each dz_t stored (nothing else is);
/// 3. the weight gradients as three large products after the loop instead of one small
///    one per step: dW = Σ_t h_{t-1}^T dz_t is `H[0..T-1]^T DZ[1..T]` (h_{-1} = 0 adds
///    nothing), dW_in = `X^T DZ`, db the column sums of DZ.
pub fn elman_grad_hand(inp: &Inputs) -> Gradients {
    let (t_len, batch, i) = inp.x.dim();
    let h = inp.b.len();
    let row = batch * h;
    // The states and the dz_t: workspace kept from the last call (every element written).
    let mut hs_buf = scratch(t_len * row);
    let hs = hs_buf.as_slice_mut().expect("contiguous");
    elman_hand_into(inp, hs);
    let hs = &*hs;
    let wt = inp.w.t().as_standard_layout().into_owned();
    let mut packed = PackedMatrix::<f32>::new(wt.view());
    let mut dz_buf = scratch(t_len * row);
    let dz = dz_buf.as_slice_mut().expect("contiguous");
    // dz_{t+1} W^T, the gradient flowing into h_t from the next step.
    let mut back = vec![0.0f32; row];
    for t in (0..t_len).rev() {
        let (h_t, dz_t) = (&hs[t * row..(t + 1) * row], &mut dz[t * row..(t + 1) * row]);
        with_best_isa(
            #[inline(always)]
            || {
                for ((d, &g), &y) in dz_t.iter_mut().zip(&back).zip(h_t) {
                    *d = (1.0 + g) * (1.0 - y * y);
                }
            },
        );
        if t > 0 {
            let dz_view = ArrayView2::from_shape((batch, h), &*dz_t).expect("B x H");
            let back_view = ArrayViewMut2::from_shape((batch, h), &mut back[..]).expect("B x H");
            packed
                .dot_mm(back_view, dz_view, wt.view(), "dz @ W^T")
                .expect("B x H times H x H");
        }
    }
    let mut g_w = Array2::<f32>::zeros((h, h));
    if t_len > 1 {
        let rows = (t_len - 1) * batch;
        let dst = g_w.as_slice_mut().expect("new");
        gemm_tn(dst, &hs[..rows * h], &dz[row..], rows, h, h);
    }
    let mut g_w_in = Array2::<f32>::zeros((i, h));
    let rows = t_len * batch;
    let dst = g_w_in.as_slice_mut().expect("new");
    gemm_tn(dst, flat(&inp.x), &dz[..], rows, i, h);
    let mut g_b = Array1::<f32>::zeros(h);
    for r in dz.chunks_exact(h) {
        for (s, &d) in g_b.iter_mut().zip(r) {
            *s += d;
        }
    }
    keep(hs_buf);
    keep(dz_buf);
    Gradients {
        w_in: g_w_in,
        w: g_w,
        b: g_b,
    }
}

pub fn run(bench: &mut Bench) {
    let inp = Inputs::spec(bench);
    let v = &inp;
    bench.run(
        "elman_grad",
        DType::F32,
        Impl::fallible("scan", || {
            rw::elman_grad(v.x.view(), v.w_in.view(), v.w.view(), v.b.view())
        }),
        Impl::fallible("scan_norewrite", || {
            norw::elman_grad(v.x.view(), v.w_in.view(), v.w.view(), v.b.view())
        }),
        Impl::infallible("handwritten", || {
            let g = elman_grad_hand(v);
            (g.w_in, g.w, g.b)
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::gen_f32;

    /// The loss in f64, by plain loops: the reference's forward pass.
    fn loss(
        x: &[f64],
        w_in: &[f64],
        w: &[f64],
        b: &[f64],
        dims: (usize, usize, usize, usize),
    ) -> f64 {
        let (t_len, batch, i_len, h) = dims;
        let mut prev = vec![0.0; batch * h];
        let mut total = 0.0;
        for t in 0..t_len {
            let mut cur = vec![0.0; batch * h];
            for r in 0..batch {
                for j in 0..h {
                    let mut z = b[j];
                    for k in 0..i_len {
                        z += x[(t * batch + r) * i_len + k] * w_in[k * h + j];
                    }
                    for k in 0..h {
                        z += prev[r * h + k] * w[k * h + j];
                    }
                    cur[r * h + j] = z.tanh();
                }
            }
            total += cur.iter().sum::<f64>();
            prev = cur;
        }
        total
    }

    /// The hand-written BPTT (f32) against central differences of the f64 loss, element
    /// by element, at a small size: f32's rounding bounds the agreement.
    #[test]
    fn gradients_agree_with_finite_differences() {
        let dims = (5, 3, 4, 6);
        let (t_len, batch, i_len, h) = dims;
        let inp = Inputs {
            x: gen_f32((t_len, batch, i_len), 4, 1.0),
            w_in: gen_f32((i_len, h), 5, 0.5),
            w: gen_f32((h, h), 6, 0.5),
            b: gen_f32([h], 7, 0.5),
        };
        let g = elman_grad_hand(&inp);
        let f64s = |a: &[f32]| a.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
        let x = f64s(flat(&inp.x));
        let mut params = [
            f64s(flat(&inp.w_in)),
            f64s(flat(&inp.w)),
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
        check(0, g.w_in.as_slice().unwrap());
        check(1, g.w.as_slice().unwrap());
        check(2, g.b.as_slice().unwrap());
    }
}
