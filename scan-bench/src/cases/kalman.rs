//! kalman and kalman16: a Kalman filter over T = 10000 steps, state dimension n = 4
//! (kalman) and 16 (kalman16), m = n / 2 observations; f64. The model: F = 0.8 I +
//! gen([n, n], 11, 0.1) (stable: its eigenvalues are within about 0.12 of 0.8), H =
//! gen([m, n], 12, 1.0), Q = diag(0.1 + gen(\[n\], 13, 0.1)), R = diag(0.5 + gen(\[m\], 14,
//! 0.2)), y = gen([T, m], 15, 2.0), x_0 = 0, P_0 = I. Outputs: the filtered means [T, n]
//! and the total log-likelihood.
//!
//! Per step (both implementations): x_pred = F x, P_pred = F P F^T + Q, S = H P_pred
//! H^T + R = L L^T (Cholesky), v = y_t - H x_pred, K = P_pred H^T S^-1 (from L), x =
//! x_pred + K v, P = P_pred - K (P_pred H^T)^T, and the log-likelihood
//! -(m log 2pi + log det S + |L^-1 v|^2) / 2. The program takes log det S from `slogdet(s)`, as one would write it; the
//! hand-written loop from L's diagonal (the same number to rounding).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, MatMut, MatRef, Par};
use scan_runtime::kernels::tiny::{Into, Tiny};
use scan_runtime::ndarray::{ArrayView2, ArrayViewMut2, Axis};
use scan_runtime::prelude::*;

use crate::inputs::gen;
use crate::timing::Impl;
use crate::{Bench, DType};

scan_twice! {
    pub fn kalman(
        y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
        f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>,
    ) -> Result<(Array2<f64>, f64)> {
        let (xs, _, lls) = scan(
            |y_t, x, p, f, h, q, r| {
                let x_pred = dot(f, x);
                let p_pred = dot(dot(f, p), f.t()) + q;
                let pht = dot(p_pred, h.t());
                let s = dot(h, pht) + r;
                let l = cholesky(s);
                let v = y_t - dot(h, x_pred);
                // K = P H^T S^-1, from S K^T = H P.
                let k = cho_solve((l, true), pht.t()).t();
                let z = solve_triangular(l, v, lower = true);
                let (_, logdet) = slogdet(s);
                let ll = -0.5 * (y_t.shape[0] as f64 * log(2.0 * pi) + logdet + dot(z, z));
                (x_pred + dot(k, v), p_pred - dot(k, pht.t()), ll)
            },
            sequences = y,
            outputs_info = [x0, p0, None],
            non_sequences = [f, h, q, r],
        );
        Ok((xs, sum(lls)))
    }
}

/// The inputs of one run.
pub struct Inputs {
    pub y: Array2<f64>,
    pub x0: Array1<f64>,
    pub p0: Array2<f64>,
    pub f: Array2<f64>,
    pub h: Array2<f64>,
    pub q: Array2<f64>,
    pub r: Array2<f64>,
}

impl Inputs {
    pub fn new(t: usize, n: usize) -> Inputs {
        let m = n / 2;
        let diag = |d: Array1<f64>| Array2::from_diag(&d);
        Inputs {
            y: gen((t, m), 15, 2.0),
            x0: Array1::zeros(n),
            p0: Array2::eye(n),
            f: Array2::eye(n) * 0.8 + gen((n, n), 11, 0.1),
            h: gen((m, n), 12, 1.0),
            q: diag(gen([n], 13, 0.1) + 0.1),
            r: diag(gen([m], 14, 0.2) + 0.5),
        }
    }
}

/// `out = a · b`, or `out += alpha · a · b`: the runtime's kernel for tiny products (every
/// dimension at most 16; faer's planning and layout changes cost more than the arithmetic
/// there: a 4 x 4 product 24 ns through faer, about 9 ns by it), faer's `matmul` for the
/// rest or on CPUs without AVX2.
fn mul(
    mut out: ArrayViewMut2<'_, f64>,
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    alpha: Option<f64>,
) {
    let into = match alpha {
        None => Into::Replace,
        Some(alpha) => Into::Add(alpha),
    };
    if f64::tiny_product(&mut out, a, b, into) {
        return;
    }
    let (accum, alpha) = match alpha {
        None => (Accum::Replace, 1.0),
        Some(alpha) => (Accum::Add, alpha),
    };
    matmul(
        faer_mut(out),
        accum,
        faer_ref(a),
        faer_ref(b),
        alpha,
        Par::Seq,
    );
    scan_runtime::kernels::dot::clear_upper_state();
}

fn faer_ref(a: ArrayView2<'_, f64>) -> MatRef<'_, f64> {
    let (m, n) = a.dim();
    // SAFETY: the view's own first element, dimensions and strides.
    unsafe { MatRef::from_raw_parts(a.as_ptr(), m, n, a.strides()[0], a.strides()[1]) }
}

fn faer_mut(mut a: ArrayViewMut2<'_, f64>) -> MatMut<'_, f64> {
    let (m, n) = a.dim();
    let (rs, cs) = (a.strides()[0], a.strides()[1]);
    // SAFETY: the view's own first element, dimensions and strides, borrowed uniquely.
    unsafe { MatMut::from_raw_parts_mut(a.as_mut_ptr(), m, n, rs, cs) }
}

/// A vector as a one-column matrix.
fn col(v: &Array1<f64>) -> ArrayView2<'_, f64> {
    v.view().insert_axis(Axis(1))
}

fn col_mut(v: &mut Array1<f64>) -> ArrayViewMut2<'_, f64> {
    v.view_mut().insert_axis(Axis(1))
}

/// The hand-written filter: every matrix made before the loop and overwritten in place each
/// step, row-major; products by [`mul`] (Q, R, the innovation and the updates copied into
/// the output first and the product added onto them); S factored in place by faer's
/// Cholesky, its scratch memory made once; K^T solved in place from L; log det S from L's
/// diagonal; the filtered mean written into its row of the output. Nothing is allocated in
/// the loop.
pub fn kalman_hand(inp: &Inputs) -> std::result::Result<(Array2<f64>, f64), String> {
    let (t_len, m) = inp.y.dim();
    let n = inp.x0.len();
    let (f, h, q, r) = (&inp.f, &inp.h, &inp.q, &inp.r);
    let mut x = inp.x0.clone();
    let mut p = inp.p0.clone();
    let mut x_pred = Array1::<f64>::zeros(n);
    let mut fp = Array2::<f64>::zeros((n, n));
    let mut p_pred = Array2::<f64>::zeros((n, n));
    let mut pht = Array2::<f64>::zeros((n, m));
    let mut s = Array2::<f64>::zeros((m, m));
    let mut kt = Array2::<f64>::zeros((m, n));
    let mut v = Array1::<f64>::zeros(m);
    let mut z = Array1::<f64>::zeros(m);
    let mut mem = MemBuffer::new(
        llt::factor::cholesky_in_place_scratch::<f64>(m, Par::Seq, Default::default())
            .or(llt::solve::solve_in_place_scratch::<f64>(m, n, Par::Seq)),
    );
    let stack = MemStack::new(&mut mem);
    let mut xs = Array2::<f64>::zeros((t_len, n));
    let mut total = 0.0;
    let log_2pi = (2.0 * std::f64::consts::PI).ln();
    for (t, (y_t, mut x_row)) in inp.y.rows().into_iter().zip(xs.rows_mut()).enumerate() {
        mul(col_mut(&mut x_pred), f.view(), col(&x), None);
        mul(fp.view_mut(), f.view(), p.view(), None);
        p_pred.assign(q);
        mul(p_pred.view_mut(), fp.view(), f.t(), Some(1.0));
        mul(pht.view_mut(), p_pred.view(), h.t(), None);
        s.assign(r);
        mul(s.view_mut(), h.view(), pht.view(), Some(1.0));
        v.assign(&y_t);
        mul(col_mut(&mut v), h.view(), col(&x_pred), Some(-1.0));
        llt::factor::cholesky_in_place(
            faer_mut(s.view_mut()),
            Default::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(|_| format!("S is not positive definite at step {t}"))?;
        kt.assign(&pht.t());
        llt::solve::solve_in_place(faer_ref(s.view()), faer_mut(kt.view_mut()), Par::Seq, stack);
        z.assign(&v);
        solve_lower_triangular_in_place(faer_ref(s.view()), faer_mut(col_mut(&mut z)), Par::Seq);
        let mut logdet = 0.0;
        let mut zz = 0.0;
        for i in 0..m {
            logdet += 2.0 * s[(i, i)].ln();
            zz += z[i] * z[i];
        }
        total += -0.5 * (m as f64 * log_2pi + logdet + zz);
        x.assign(&x_pred);
        mul(col_mut(&mut x), kt.t(), col(&v), Some(1.0));
        p.assign(&p_pred);
        mul(p.view_mut(), kt.t(), pht.t(), Some(-1.0));
        x_row.assign(&x);
    }
    scan_runtime::kernels::dot::clear_upper_state();
    Ok((xs, total))
}

fn case(bench: &mut Bench, name: &'static str, n: usize) {
    let t = bench.size(10_000, 100, 50);
    let inp = Inputs::new(t, n);
    let v = &inp;
    bench.run(
        name,
        DType::F64,
        Impl::fallible("scan", || {
            rw::kalman(
                v.y.view(),
                v.x0.view(),
                v.p0.view(),
                v.f.view(),
                v.h.view(),
                v.q.view(),
                v.r.view(),
            )
        }),
        Impl::fallible("scan_norewrite", || {
            norw::kalman(
                v.y.view(),
                v.x0.view(),
                v.p0.view(),
                v.f.view(),
                v.h.view(),
                v.q.view(),
                v.r.view(),
            )
        }),
        Impl::fallible("handwritten", || kalman_hand(v)),
    );
}

/// State dimension 4.
pub fn kalman4(bench: &mut Bench) {
    case(bench, "kalman", 4);
}

/// State dimension 16.
pub fn kalman16(bench: &mut Bench) {
    case(bench, "kalman16", 16);
}
