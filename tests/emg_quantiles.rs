//! Issue 8's inverse-CDF program: quantiles of the exponentially modified Gaussian (a
//! normal N(mu, sigma^2) plus an exponential of rate lam) by Newton's method on the log of
//! the CDF, written with `erfc`, `erfcx` and `log1mexp` in the numerically careful form,
//! stopping with `until` once every element has converged; f64 and f32. Checked against
//! quantiles computed with mpmath at 60 digits (tools/emg_quantiles.py) and run through the
//! reference evaluator.
//!
//! With z = (x - mu) / sigma and u = lam sigma: F(x) = Phi(z) - S, S = exp(u^2/2 - u z)
//! Phi(z - u), the density f(x) = lam S. In logs: log F = log Phi(z) + log1mexp(log S -
//! log Phi(z)) (S < Phi(z)), with log Phi(w) = log(erfcx(t) / 2) - t^2 for positive
//! t = -w / sqrt 2 (no underflow in the lower tail), log(erfc(t) / 2) otherwise. Newton on
//! g(x) = log F(x) - log p, whose derivative is f / F, steps x to x - g / exp(log f - log F).
//! log F is concave (the EMG is log-concave), so the iteration converges from the mean.

mod common;

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        fn log_ndtr(w: ArrayView1<f64>) -> Result<Array1<f64>> {
            let t = -w / sqrt(2.0);
            Ok(where_(t > 0.0, log(0.5 * erfcx(t)) - t * t, log(0.5 * erfc(t))))
        }

        pub fn emg_quantiles(p: ArrayView1<f64>, mu: f64, sigma: f64, lam: f64, tol: f64) -> Result<(Array1<f64>, i64)> {
            let u = lam * sigma;
            let x0 = zeros_like(p) + (mu + 1.0 / lam);
            let xs = scan(
                |x, log_p| {
                    let z = (x - mu) / sigma;
                    let log_phi = log_ndtr(z);
                    let log_s = 0.5 * u * u - u * z + log_ndtr(z - u);
                    let log_cdf = log_phi + log1mexp(log_s - log_phi);
                    let log_pdf = log(lam) + log_s;
                    let x_new = x - (log_cdf - log_p) / exp(log_pdf - log_cdf);
                    (x_new, until(max(abs(x_new - x)) <= tol * (1.0 + max(abs(x_new)))))
                },
                outputs_info = x0,
                non_sequences = log(p),
                n_steps = 100,
            );
            Ok((xs[-1], xs.shape[0]))
        }

        fn log_ndtr32(w: ArrayView1<f32>) -> Result<Array1<f32>> {
            let t = -w / sqrt(2.0);
            Ok(where_(t > 0.0, log(0.5 * erfcx(t)) - t * t, log(0.5 * erfc(t))))
        }

        pub fn emg_quantiles32(p: ArrayView1<f32>, mu: f32, sigma: f32, lam: f32, tol: f32) -> Result<(Array1<f32>, i64)> {
            let u = lam * sigma;
            let x0 = zeros_like(p) + (mu + 1.0 / lam);
            let xs = scan(
                |x, log_p| {
                    let z = (x - mu) / sigma;
                    let log_phi = log_ndtr32(z);
                    let log_s = 0.5 * u * u - u * z + log_ndtr32(z - u);
                    let log_cdf = log_phi + log1mexp(log_s - log_phi);
                    let log_pdf = log(lam) + log_s;
                    let x_new = x - (log_cdf - log_p) / exp(log_pdf - log_cdf);
                    (x_new, until(max(abs(x_new - x)) <= tol * (1.0 + max(abs(x_new)))))
                },
                outputs_info = x0,
                non_sequences = log(p),
                n_steps = 100,
            );
            Ok((xs[-1], xs.shape[0]))
        }
    }
}

const PS: [f64; 7] = [1e-10, 1e-4, 0.05, 0.5, 0.9, 0.999, 0.9999999];

/// (mu, sigma, lam) and the quantiles at `PS` (each p as its f64), from
/// tools/emg_quantiles.py (mpmath, 60 digits).
const CASES: [(f64, f64, f64, [f64; 7]); 2] = [
    (
        0.0,
        1.0,
        0.5,
        [
            -5.9488606604863925,
            -3.146145063473553,
            -0.7785165414235159,
            1.576799827273778,
            4.855168917962162,
            14.065510557964272,
            32.48619130296935,
        ],
    ),
    (
        2.0,
        0.5,
        3.0,
        [
            -1.0507602703518264,
            0.306936381343467,
            1.3975905216314788,
            2.3068801674466464,
            3.1000873191524647,
            4.677580063870787,
            7.747698550494892,
        ],
    ),
];

#[test]
fn newton_finds_the_quantiles_of_an_exponentially_modified_gaussian_in_f64() {
    let p = Array1::from(PS.to_vec());
    for (mu, sigma, lam, want) in CASES {
        let (x, steps) = programs::emg_quantiles(p.view(), mu, sigma, lam, 1e-14).unwrap();
        assert!(steps < 100, "converged before the bound: {steps} steps");
        for (k, (&got, &want)) in x.iter().zip(&want).enumerate() {
            // Newton stops within 1e-14 (1 + |x|) of its fixed point; log F is accurate to
            // a few ulps, so the quantile is within 1e-12 relative of mpmath's.
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "mu {mu}, sigma {sigma}, lam {lam}, p = {}: {got} against {want}",
                PS[k]
            );
        }
        second_opinion(
            programs::SOURCE,
            "emg_quantiles",
            vec![
                Value::from(p.clone()),
                Value::from(mu),
                Value::from(sigma),
                Value::from(lam),
                Value::from(1e-14),
            ],
            vec![Value::from(x), Value::from(steps)],
        );
    }
}

#[test]
fn newton_finds_the_quantiles_in_f32() {
    // Up to p = 0.999: nearer 1, log p (about 1 - p) is below f32's resolution of log F
    // near 0 (6e-8), the formulation's limit in f32, not the iteration's.
    let p = Array1::from(PS[..6].iter().map(|&p| p as f32).collect::<Vec<_>>());
    for (mu, sigma, lam, want) in CASES {
        let (x, steps) =
            programs::emg_quantiles32(p.view(), mu as f32, sigma as f32, lam as f32, 1e-6).unwrap();
        assert!(steps < 100, "converged before the bound: {steps} steps");
        for (k, (&got, &want)) in x.iter().zip(&want[..6]).enumerate() {
            // Against the quantiles of the f64 p: 0.999 rounded to f32 is 1.3e-8 larger,
            // which moves the quantile by 2.6e-5 where the density is 5e-4 (1.7e-6 of
            // 1 + |x|), and f32's log F carries about 1e-7 relative error on top.
            assert!(
                (f64::from(got) - want).abs() <= 5e-6 * (1.0 + want.abs()),
                "f32: mu {mu}, sigma {sigma}, lam {lam}, p = {}: {got} against {want}",
                PS[k]
            );
        }
        second_opinion(
            programs::SOURCE,
            "emg_quantiles32",
            vec![
                Value::from(p.clone()),
                Value::from(mu as f32),
                Value::from(sigma as f32),
                Value::from(lam as f32),
                Value::from(1e-6f32),
            ],
            vec![Value::from(x), Value::from(steps)],
        );
    }
}
