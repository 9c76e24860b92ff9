//! Kalman filtering written the natural way in the step language, each against a
//! hand-written f64 reference loop (closed-form 2x2 algebra on the observed entries only,
//! a different method from the programs' masking and Cholesky factors) and the reference
//! evaluator:
//! - a local-level-plus-trend model (2 states: level and slope) seen by two sensors of
//!   the level, some readings missing (NaN: masked out of the update and of the
//!   log-likelihood), the update through a Cholesky factor of the innovation covariance,
//!   the log-likelihood of each step; then the Rauch-Tung-Striebel smoother, a second
//!   scan going backwards over the filter's outputs;
//! - a filter that stops with `until` once its covariance changes by less than a
//!   tolerance, and a second scan that filters the remaining observations with the
//!   converged (steady-state) gain.

mod common;

use common::{assert_floats, matrix, second_opinion};
use scan_runtime::ndarray::{array, s, Array1, Array2};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// The filter: predicted and filtered means and covariances, and each step's
        /// log-likelihood. A missing reading's row of `h` is zeroed, its innovation set to
        /// 0 and its variance to 1, so it changes neither the update nor the likelihood.
        pub fn filter(
            y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
            f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>,
        ) -> Result<(Array2<f64>, Array3<f64>, Array2<f64>, Array3<f64>, Array1<f64>)> {
            let (xs, ps, x_preds, p_preds, lls) = scan(
                |y_t, x, p, f, h, q, r| {
                    let seen = !isnan(y_t);
                    let m = where_(seen, 1.0, 0.0);
                    let x_pred = dot(f, x);
                    let p_pred = dot(dot(f, p), f.t()) + q;
                    let hm = h * expand_dims(m, 1);
                    let rm = r * outer(m, m) + diag(1.0 - m);
                    let v = where_(seen, y_t - dot(hm, x_pred), 0.0);
                    let s = dot(dot(hm, p_pred), hm.t()) + rm;
                    let l = cholesky(s);
                    let pht = dot(p_pred, hm.t());
                    // K = P H^T S^-1, from S K^T = H P.
                    let k = cho_solve((l, true), pht.t()).t();
                    let z = solve_triangular(l, v, lower = true);
                    let ll = -0.5 * (sum(m) * log(2.0 * pi) + 2.0 * sum(log(diag(l))) + dot(z, z));
                    (x_pred + dot(k, v), p_pred - dot(k, pht.t()), x_pred, p_pred, ll)
                },
                sequences = y,
                outputs_info = [x0, p0, None, None, None],
                non_sequences = [f, h, q, r],
            );
            Ok((xs, ps, x_preds, p_preds, lls))
        }

        /// The Rauch-Tung-Striebel smoother over the filter's outputs, backwards from the
        /// last filtered state: `C = P_t F^T P_pred(t+1)^-1` (from `P_pred C^T = F P_t`),
        /// `x_s = x_t + C (x_s(t+1) - x_pred(t+1))`, `P_s = P_t + C (P_s(t+1) - P_pred(t+1)) C^T`.
        pub fn smooth(
            y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
            f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>,
        ) -> Result<(Array2<f64>, Array3<f64>, Array1<f64>)> {
            let (xs, ps, x_preds, p_preds, lls) = filter(y, x0, p0, f, h, q, r);
            let (xss, pss) = scan(
                |x_t, p_t, x_pred_next, p_pred_next, x_s, p_s, f| {
                    let c = solve(p_pred_next, dot(f, p_t), assume_a = "pos").t();
                    (
                        x_t + dot(c, x_s - x_pred_next),
                        p_t + dot(dot(c, p_s - p_pred_next), c.t()),
                    )
                },
                sequences = [xs[..-1], ps[..-1], x_preds[1..], p_preds[1..]],
                outputs_info = [xs[-1], ps[-1]],
                non_sequences = f,
                go_backwards = true,
            );
            Ok((
                concatenate([flip(xss, 0), xs[-1..]]),
                concatenate([flip(pss, 0), ps[-1..]]),
                lls,
            ))
        }

        /// Filters until the covariance settles (`max |P_t - P_t-1| < tol`), then the rest
        /// of the observations with the last gain, a steady-state filter.
        pub fn steady(
            y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
            f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>, tol: f64,
        ) -> Result<(Array2<f64>, Array3<f64>, Array3<f64>)> {
            let (xs, ps, ks) = scan(
                |y_t, x, p, f, h, q, r, tol| {
                    let x_pred = dot(f, x);
                    let p_pred = dot(dot(f, p), f.t()) + q;
                    let l = cholesky(dot(dot(h, p_pred), h.t()) + r);
                    let pht = dot(p_pred, h.t());
                    let k = cho_solve((l, true), pht.t()).t();
                    let p_new = p_pred - dot(k, pht.t());
                    (x_pred + dot(k, y_t - dot(h, x_pred)), p_new, k, until(max(abs(p_new - p)) < tol))
                },
                sequences = y,
                outputs_info = [x0, p0, None],
                non_sequences = [f, h, q, r, tol],
            );
            let k = ks[-1];
            let rest = scan(
                |y_t, x, f, h, k| {
                    let x_pred = dot(f, x);
                    x_pred + dot(k, y_t - dot(h, x_pred))
                },
                sequences = y[xs.shape[0]..],
                outputs_info = xs[-1],
                non_sequences = [f, h, k],
            );
            Ok((concatenate([xs, rest]), ps, ks))
        }
    }
}

type M2 = [[f64; 2]; 2];

fn mm(a: M2, b: M2) -> M2 {
    let mut c = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    c
}

fn tr(a: M2) -> M2 {
    [[a[0][0], a[1][0]], [a[0][1], a[1][1]]]
}

fn add(a: M2, b: M2, s: f64) -> M2 {
    [
        [a[0][0] + s * b[0][0], a[0][1] + s * b[0][1]],
        [a[1][0] + s * b[1][0], a[1][1] + s * b[1][1]],
    ]
}

fn mv(a: M2, x: [f64; 2]) -> [f64; 2] {
    [
        a[0][0] * x[0] + a[0][1] * x[1],
        a[1][0] * x[0] + a[1][1] * x[1],
    ]
}

fn inv2(a: M2) -> M2 {
    let d = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    [[a[1][1] / d, -a[0][1] / d], [-a[1][0] / d, a[0][0] / d]]
}

struct Model {
    f: M2,
    h: M2,
    q: M2,
    r: M2,
    x0: [f64; 2],
    p0: M2,
}

fn model() -> Model {
    Model {
        f: [[1.0, 1.0], [0.0, 1.0]],
        h: [[1.0, 0.0], [1.0, 0.0]],
        q: [[0.05, 0.0], [0.0, 0.002]],
        r: [[0.4, 0.0], [0.0, 0.9]],
        x0: [0.0, 0.0],
        p0: [[10.0, 0.0], [0.0, 1.0]],
    }
}

fn arr(a: M2) -> Array2<f64> {
    array![[a[0][0], a[0][1]], [a[1][0], a[1][1]]]
}

/// Two noisy readings of a level that rises by 0.3 a step, some missing: single readings
/// at steps 3, 7 and 20, both at steps 11 and 12.
fn observations(n: usize, missing: bool) -> Array2<f64> {
    let noise = matrix(n, 2, 17);
    let mut y = Array2::from_shape_fn((n, 2), |(t, k)| {
        1.0 + 0.3 * t as f64 + noise[[t, k]] * if k == 0 { 1.2 } else { 1.8 }
    });
    if missing {
        for (t, k) in [(3, 0), (7, 1), (11, 0), (11, 1), (12, 0), (12, 1), (20, 1)] {
            if t < n {
                y[[t, k]] = f64::NAN;
            }
        }
    }
    y
}

/// The filter on the observed entries only (0, 1 or 2 of them), by hand.
struct Filtered {
    xs: Vec<[f64; 2]>,
    ps: Vec<M2>,
    x_preds: Vec<[f64; 2]>,
    p_preds: Vec<M2>,
    lls: Vec<f64>,
}

fn reference_filter(m: &Model, y: &Array2<f64>) -> Filtered {
    let (mut x, mut p) = (m.x0, m.p0);
    let mut out = Filtered {
        xs: vec![],
        ps: vec![],
        x_preds: vec![],
        p_preds: vec![],
        lls: vec![],
    };
    for t in 0..y.nrows() {
        let x_pred = mv(m.f, x);
        let p_pred = add(mm(mm(m.f, p), tr(m.f)), m.q, 1.0);
        let seen: Vec<usize> = (0..2).filter(|&k| !y[[t, k]].is_nan()).collect();
        let (x_new, p_new, ll) = match seen.as_slice() {
            [] => (x_pred, p_pred, 0.0),
            [k] => {
                // One reading: scalar innovation.
                let hk = m.h[*k];
                let ph = [
                    p_pred[0][0] * hk[0] + p_pred[0][1] * hk[1],
                    p_pred[1][0] * hk[0] + p_pred[1][1] * hk[1],
                ];
                let s = hk[0] * ph[0] + hk[1] * ph[1] + m.r[*k][*k];
                let v = y[[t, *k]] - (hk[0] * x_pred[0] + hk[1] * x_pred[1]);
                let gain = [ph[0] / s, ph[1] / s];
                let x_new = [x_pred[0] + gain[0] * v, x_pred[1] + gain[1] * v];
                let mut p_new = p_pred;
                for i in 0..2 {
                    for j in 0..2 {
                        p_new[i][j] -= gain[i] * ph[j];
                    }
                }
                let ll = -0.5 * ((2.0 * std::f64::consts::PI).ln() + s.ln() + v * v / s);
                (x_new, p_new, ll)
            }
            _ => {
                let s = add(mm(mm(m.h, p_pred), tr(m.h)), m.r, 1.0);
                let si = inv2(s);
                let hx = mv(m.h, x_pred);
                let v = [y[[t, 0]] - hx[0], y[[t, 1]] - hx[1]];
                let gain = mm(mm(p_pred, tr(m.h)), si);
                let gv = mv(gain, v);
                let x_new = [x_pred[0] + gv[0], x_pred[1] + gv[1]];
                let p_new = add(p_pred, mm(mm(gain, m.h), p_pred), -1.0);
                let det = s[0][0] * s[1][1] - s[0][1] * s[1][0];
                let siv = mv(si, v);
                let quad = v[0] * siv[0] + v[1] * siv[1];
                let ll = -0.5 * (2.0 * (2.0 * std::f64::consts::PI).ln() + det.ln() + quad);
                (x_new, p_new, ll)
            }
        };
        out.x_preds.push(x_pred);
        out.p_preds.push(p_pred);
        out.xs.push(x_new);
        out.ps.push(p_new);
        out.lls.push(ll);
        x = x_new;
        p = p_new;
    }
    out
}

/// The RTS smoother by hand, with the 2x2 inverse of each predicted covariance.
fn reference_smoother(m: &Model, fl: &Filtered) -> (Vec<[f64; 2]>, Vec<M2>) {
    let n = fl.xs.len();
    let mut xs = vec![[0.0; 2]; n];
    let mut ps = vec![[[0.0; 2]; 2]; n];
    xs[n - 1] = fl.xs[n - 1];
    ps[n - 1] = fl.ps[n - 1];
    for t in (0..n - 1).rev() {
        let c = mm(mm(fl.ps[t], tr(m.f)), inv2(fl.p_preds[t + 1]));
        let dx = [
            xs[t + 1][0] - fl.x_preds[t + 1][0],
            xs[t + 1][1] - fl.x_preds[t + 1][1],
        ];
        let cdx = mv(c, dx);
        xs[t] = [fl.xs[t][0] + cdx[0], fl.xs[t][1] + cdx[1]];
        ps[t] = add(
            fl.ps[t],
            mm(mm(c, add(ps[t + 1], fl.p_preds[t + 1], -1.0)), tr(c)),
            1.0,
        );
    }
    (xs, ps)
}

fn flat_v(v: &[[f64; 2]]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
}

fn flat_m(v: &[M2]) -> Vec<f64> {
    v.iter().flatten().flatten().copied().collect()
}

fn flat<D: scan_runtime::ndarray::Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

/// The programs' arguments for `y`.
fn args(m: &Model, y: &Array2<f64>) -> Vec<common::Value> {
    vec![
        y.clone().into(),
        Array1::from(m.x0.to_vec()).into(),
        arr(m.p0).into(),
        arr(m.f).into(),
        arr(m.h).into(),
        arr(m.q).into(),
        arr(m.r).into(),
    ]
}

/// Rounding differs between the hand-written closed forms and the factorisations: a few
/// ulps of the values carried through 40 steps.
const TOL: f64 = 1e-11;

#[test]
fn filter_with_missing_readings_matches_a_hand_written_loop() {
    let m = model();
    let y = observations(40, true);
    let (x0, p0) = (Array1::from(m.x0.to_vec()), arr(m.p0));
    let (f, h, q, r) = (arr(m.f), arr(m.h), arr(m.q), arr(m.r));
    let got = programs::filter(
        y.view(),
        x0.view(),
        p0.view(),
        f.view(),
        h.view(),
        q.view(),
        r.view(),
    )
    .unwrap();
    let want = reference_filter(&m, &y);
    assert_floats(&flat(&got.0), &flat_v(&want.xs), TOL);
    assert_floats(&flat(&got.1), &flat_m(&want.ps), TOL);
    assert_floats(&flat(&got.2), &flat_v(&want.x_preds), TOL);
    assert_floats(&flat(&got.3), &flat_m(&want.p_preds), TOL);
    assert_floats(&flat(&got.4), &want.lls, TOL);
    // Steps 11 and 12 saw nothing: no update, no likelihood.
    assert_eq!(got.4[11], 0.0);
    assert_eq!(got.0.row(12), got.2.row(12));
    // The level follows the data: 1 + 0.3 t within the noise at the end.
    assert!(
        (got.0[[39, 0]] - (1.0 + 0.3 * 39.0)).abs() < 1.0,
        "{}",
        got.0[[39, 0]]
    );
    let (xs, ps, x_preds, p_preds, lls) = got;
    second_opinion(
        programs::SOURCE,
        "filter",
        args(&m, &y),
        vec![
            xs.into(),
            ps.into(),
            x_preds.into(),
            p_preds.into(),
            lls.into(),
        ],
    );
}

#[test]
fn rts_smoother_runs_backwards_over_the_filter() {
    let m = model();
    let y = observations(40, true);
    let (x0, p0) = (Array1::from(m.x0.to_vec()), arr(m.p0));
    let (f, h, q, r) = (arr(m.f), arr(m.h), arr(m.q), arr(m.r));
    let (xs, ps, lls) = programs::smooth(
        y.view(),
        x0.view(),
        p0.view(),
        f.view(),
        h.view(),
        q.view(),
        r.view(),
    )
    .unwrap();
    let fl = reference_filter(&m, &y);
    let (want_x, want_p) = reference_smoother(&m, &fl);
    assert_eq!(xs.dim(), (40, 2));
    assert_floats(&flat(&xs), &flat_v(&want_x), TOL);
    assert_floats(&flat(&ps), &flat_m(&want_p), TOL);
    assert_floats(&flat(&lls), &fl.lls, TOL);
    // Smoothing uses the later readings too: the smoothed variance of the level is below
    // the filtered one everywhere but at the end, where they are equal.
    for t in 0..39 {
        assert!(ps[[t, 0, 0]] < fl.ps[t][0][0], "step {t}");
    }
    assert_floats(&[ps[[39, 0, 0]]], &[fl.ps[39][0][0]], TOL);
    second_opinion(
        programs::SOURCE,
        "smooth",
        args(&m, &y),
        vec![xs.into(), ps.into(), lls.into()],
    );
}

#[test]
fn until_the_covariance_settles_then_the_steady_gain() {
    let m = model();
    let y = observations(200, false);
    let tol = 1e-9;
    let (x0, p0) = (Array1::from(m.x0.to_vec()), arr(m.p0));
    let (f, h, q, r) = (arr(m.f), arr(m.h), arr(m.q), arr(m.r));
    let (xs, ps, ks) = programs::steady(
        y.view(),
        x0.view(),
        p0.view(),
        f.view(),
        h.view(),
        q.view(),
        r.view(),
        tol,
    )
    .unwrap();
    // By hand: the full filter until max |P_t - P_t-1| < tol (that step kept), then
    // x_t = x_pred + K (y_t - H x_pred) with the last K.
    let (mut x, mut p) = (m.x0, m.p0);
    let (mut want_x, mut want_p, mut gain) = (vec![], vec![], [[0.0; 2]; 2]);
    let mut settled = None;
    for t in 0..y.nrows() {
        let x_pred = mv(m.f, x);
        let yt = [y[[t, 0]], y[[t, 1]]];
        if settled.is_none() {
            let p_pred = add(mm(mm(m.f, p), tr(m.f)), m.q, 1.0);
            let s = add(mm(mm(m.h, p_pred), tr(m.h)), m.r, 1.0);
            gain = mm(mm(p_pred, tr(m.h)), inv2(s));
            let p_new = add(p_pred, mm(mm(gain, m.h), p_pred), -1.0);
            let change = flat_m(&[add(p_new, p, -1.0)])
                .iter()
                .fold(0.0f64, |a, v| a.max(v.abs()));
            p = p_new;
            want_p.push(p);
            if change < tol {
                settled = Some(t + 1);
            }
        }
        let hx = mv(m.h, x_pred);
        let gv = mv(gain, [yt[0] - hx[0], yt[1] - hx[1]]);
        x = [x_pred[0] + gv[0], x_pred[1] + gv[1]];
        want_x.push(x);
    }
    let settled = settled.expect("the covariance settles within 200 steps");
    assert!(
        (10..150).contains(&settled),
        "settled after {settled} steps"
    );
    assert_eq!(ps.dim(), (settled, 2, 2));
    assert_eq!(ks.dim(), (settled, 2, 2));
    assert_eq!(xs.dim(), (200, 2));
    assert_floats(&flat(&ps), &flat_m(&want_p), TOL);
    assert_floats(
        &flat(&ks.slice(s![-1, .., ..]).to_owned()),
        &flat_m(&[gain]),
        TOL,
    );
    assert_floats(&flat(&xs), &flat_v(&want_x), TOL);
    let mut a = args(&m, &y);
    a.push(tol.into());
    second_opinion(
        programs::SOURCE,
        "steady",
        a,
        vec![xs.into(), ps.into(), ks.into()],
    );
}
