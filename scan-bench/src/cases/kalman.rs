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
use faer::{Accum, Mat, MatRef, Par};
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

fn to_faer(a: &Array2<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[[i, j]])
}

/// `dst = beta dst + alpha lhs rhs`, sequential: the matrices are at most 16 x 16.
fn mul(dst: &mut Mat<f64>, accum: Accum, lhs: MatRef<'_, f64>, rhs: MatRef<'_, f64>, alpha: f64) {
    matmul(dst.as_mut(), accum, lhs, rhs, alpha, Par::Seq);
}

/// The hand-written filter: every matrix a faer `Mat` made before the loop and overwritten
/// in place each step (products by faer's `matmul` with `Accum::Add` to fold in Q, R, the
/// innovation and the updates; S factored in place by faer's Cholesky, its scratch memory
/// made once; K^T solved in place from L), the filtered mean written into its row of the
/// output. Nothing is allocated in the loop.
pub fn kalman_hand(inp: &Inputs) -> std::result::Result<(Array2<f64>, f64), String> {
    let (t_len, m) = inp.y.dim();
    let n = inp.x0.len();
    let (f, h, q, r) = (
        to_faer(&inp.f),
        to_faer(&inp.h),
        to_faer(&inp.q),
        to_faer(&inp.r),
    );
    let mut x = Mat::<f64>::from_fn(n, 1, |i, _| inp.x0[i]);
    let mut p = to_faer(&inp.p0);
    let mut x_pred = Mat::<f64>::zeros(n, 1);
    let mut fp = Mat::<f64>::zeros(n, n);
    let mut p_pred = Mat::<f64>::zeros(n, n);
    let mut pht = Mat::<f64>::zeros(n, m);
    let mut s = Mat::<f64>::zeros(m, m);
    let mut kt = Mat::<f64>::zeros(m, n);
    let mut v = Mat::<f64>::zeros(m, 1);
    let mut z = Mat::<f64>::zeros(m, 1);
    let mut mem = MemBuffer::new(
        llt::factor::cholesky_in_place_scratch::<f64>(m, Par::Seq, Default::default())
            .or(llt::solve::solve_in_place_scratch::<f64>(m, n, Par::Seq)),
    );
    let stack = MemStack::new(&mut mem);
    let mut xs = Array2::<f64>::zeros((t_len, n));
    let mut total = 0.0;
    let log_2pi = (2.0 * std::f64::consts::PI).ln();
    for t in 0..t_len {
        mul(&mut x_pred, Accum::Replace, f.as_ref(), x.as_ref(), 1.0);
        mul(&mut fp, Accum::Replace, f.as_ref(), p.as_ref(), 1.0);
        p_pred.copy_from(&q);
        mul(&mut p_pred, Accum::Add, fp.as_ref(), f.transpose(), 1.0);
        mul(
            &mut pht,
            Accum::Replace,
            p_pred.as_ref(),
            h.transpose(),
            1.0,
        );
        s.copy_from(&r);
        mul(&mut s, Accum::Add, h.as_ref(), pht.as_ref(), 1.0);
        for i in 0..m {
            v[(i, 0)] = inp.y[[t, i]];
        }
        mul(&mut v, Accum::Add, h.as_ref(), x_pred.as_ref(), -1.0);
        llt::factor::cholesky_in_place(
            s.as_mut(),
            Default::default(),
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(|_| format!("S is not positive definite at step {t}"))?;
        kt.copy_from(pht.transpose());
        llt::solve::solve_in_place(s.as_ref(), kt.as_mut(), Par::Seq, stack);
        z.copy_from(&v);
        solve_lower_triangular_in_place(s.as_ref(), z.as_mut(), Par::Seq);
        let mut logdet = 0.0;
        let mut zz = 0.0;
        for i in 0..m {
            logdet += 2.0 * s[(i, i)].ln();
            zz += z[(i, 0)] * z[(i, 0)];
        }
        total += -0.5 * (m as f64 * log_2pi + logdet + zz);
        x.copy_from(&x_pred);
        mul(&mut x, Accum::Add, kt.transpose(), v.as_ref(), 1.0);
        p.copy_from(&p_pred);
        mul(&mut p, Accum::Add, kt.transpose(), pht.transpose(), -1.0);
        for i in 0..n {
            xs[[t, i]] = x[(i, 0)];
        }
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
