//! Reverse-mode gradients through the linear algebra (issue 10): `cholesky` (both
//! triangles), `cho_solve`, `solve` (every `assume_a`), `solve_triangular` (every
//! `lower`/`trans`/`unit_diagonal`), `inv`, `det`, `slogdet`, `eigh`, `svdvals`, `svd`,
//! `qr`, a matrix's `diag`, and the log-likelihood of a Kalman filter, the program users differentiate.
//! Each gradient is checked against central finite differences (`common::grad_check`),
//! against the evaluator's forward mode (`forward_mode_agrees`, an independent
//! derivation) and run through the evaluator with each rewrite (`second_opinion`).
//!
//! A function that reads one triangle of a matrix (`cholesky`, `eigh`, the symmetric
//! solves, `cho_solve` and `solve_triangular` of their factor) does not depend on the
//! other: its gradient there is 0 and the finite difference of any one element agrees
//! with it (PyTensor's convention, docs/SEMANTICS.md "Gradients"). The programs
//! `chol_symmetric` and `filter_ll_factor` differentiate through a symmetric
//! parametrisation (`m mᵀ + 3 I`, `rc rcᵀ`) instead, which changes both triangles.

mod common;

use common::grad_check::{check_gradient, forward_mode_agrees};
use common::{assert_floats, matrix, second_opinion, Value};
use scan_runtime::ndarray::{arr2, Array2, ArrayD, Ix1, Ix2};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        pub fn chol_lower(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(sin(cholesky(a) * 1.3 + 0.5));
            Ok((c, grad(c, a)))
        }

        pub fn chol_upper(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(sin(cholesky(a, lower = false) * 1.3 + 0.5));
            Ok((c, grad(c, a)))
        }

        /// Both factors of the symmetric `a = m mᵀ + 3 I`, and a solve through one.
        pub fn chol_symmetric(m: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let a = dot(m, m.t()) + 3.0 * identity_like(m);
            let l = cholesky(a);
            let u = cholesky(a, lower = false);
            let c = sum(sin(l * 1.3 + 0.5)) + sum(cos(u * 0.7 - 0.2)) + sum(tanh(cho_solve((l, true), b)));
            let (gm, gb) = grad(c, [m, b]);
            Ok((c, gm, gb))
        }

        pub fn cho_solve_lower(c: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(cho_solve((c, true), b) + 0.3));
            let (gc, gb) = grad(cost, [c, b]);
            Ok((cost, gc, gb))
        }

        pub fn cho_solve_upper(c: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(cho_solve((c, false), b) + 0.3));
            let (gc, gb) = grad(cost, [c, b]);
            Ok((cost, gc, gb))
        }

        pub fn solve_general(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve(a, b) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn solve_general_matrix(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve(a, b, assume_a = "gen") + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn solve_pos_lower(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve(a, b, assume_a = "pos", lower = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn solve_pos_upper(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve(a, b, assume_a = "pos") + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn solve_sym_lower(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve(a, b, assume_a = "sym", lower = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn solve_sym_upper(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve(a, b, assume_a = "sym") + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_lower(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, lower = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_upper(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve_triangular(a, b) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_lower_trans(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, trans = "T", lower = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_upper_trans(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, trans = 1) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_lower_unit(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, 0, true, true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_upper_unit(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, lower = false, unit_diagonal = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_lower_trans_unit(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, "T", true, true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn tri_upper_trans_unit(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<(f64, Array2<f64>, Array1<f64>)> {
            let cost = sum(sin(solve_triangular(a, b, trans = "T", unit_diagonal = true) + 0.3));
            let (ga, gb) = grad(cost, [a, b]);
            Ok((cost, ga, gb))
        }

        pub fn inverse(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(sin(inv(a) * 2.0 + 0.3));
            Ok((c, grad(c, a)))
        }

        pub fn determinant(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let d = det(a);
            let c = d * d * 0.01 + sin(d);
            Ok((c, grad(c, a)))
        }

        /// The sign is piecewise constant: no gradient through it.
        pub fn log_determinant(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (sign, logdet) = slogdet(a);
            let c = sign * sin(logdet) + logdet * logdet;
            Ok((c, grad(c, a)))
        }

        /// d log|det a| / da = a⁻ᵀ, beside `inv`'s own.
        pub fn log_determinant_exact(a: ArrayView2<f64>) -> Result<(Array2<f64>, Array2<f64>)> {
            let (sign, logdet) = slogdet(a);
            Ok((grad(logdet, a), inv(a).t()))
        }

        pub fn eigh_lower(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (w, v) = eigh(a);
            let c = sum(w * w * 0.1) + sum(sin(v * 1.5 + 0.2));
            Ok((c, grad(c, a)))
        }

        pub fn eigh_upper(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (w, v) = eigh(a, UPLO = "U");
            let c = sum(w * w * 0.1) + sum(sin(v * 1.5 + 0.2));
            Ok((c, grad(c, a)))
        }

        pub fn eigh_values(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (w, v) = eigh(a);
            let c = sum(sin(w));
            Ok((c, grad(c, a)))
        }

        pub fn eigh_vectors(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (w, v) = eigh(a, UPLO = "U");
            let c = sum(sin(v * 1.5 + 0.2));
            Ok((c, grad(c, a)))
        }

        pub fn singular_values(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(sin(svdvals(a))) + sum(svd(a, compute_uv = false) * 0.5);
            Ok((c, grad(c, a)))
        }

        pub fn qr_reduced(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (q, r) = qr(a);
            let c = sum(sin(q * 1.5 + 0.2)) + sum(cos(r * 0.7));
            Ok((c, grad(c, a)))
        }

        pub fn qr_r(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(cos(qr(a, mode = "r") * 0.7));
            Ok((c, grad(c, a)))
        }

        /// Mode "complete" with only `r` read (its rows past n are zeros).
        pub fn qr_complete_r(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (q, r) = qr(a, mode = "complete");
            let c = sum(cos(r * 0.7));
            Ok((c, grad(c, a)))
        }

        pub fn svd_thin(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (u, s, vh) = svd(a, full_matrices = false);
            let c = sum(sin(u * 1.5 + 0.2)) + sum(s * s * 0.1) + sum(cos(vh * 0.8 - 0.1));
            Ok((c, grad(c, a)))
        }

        pub fn svd_thin_vectors(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (u, s, vh) = svd(a, false);
            let c = sum(sin(u * 1.5 + 0.2)) + sum(cos(vh * 0.8 - 0.1));
            Ok((c, grad(c, a)))
        }

        /// `full_matrices = true` (numpy's default) with only the singular values read.
        pub fn svd_full_values(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (u, s, vh) = svd(a);
            let c = sum(sin(s));
            Ok((c, grad(c, a)))
        }

        /// f32 throughout.
        pub fn chol_single(a: ArrayView2<f32>) -> Result<(f32, Array2<f32>)> {
            let (sign, logdet) = slogdet(a);
            let c = sum(sin(cholesky(a) * 1.3 + 0.5)) + logdet;
            Ok((c, grad(c, a)))
        }

        pub fn chol_double(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let (sign, logdet) = slogdet(a);
            let c = sum(sin(cholesky(a) * 1.3 + 0.5)) + logdet;
            Ok((c, grad(c, a)))
        }

        /// A matrix that is not positive definite with `on_error = "nan"`: NaN gradients (on
        /// the triangle read).
        pub fn chol_nan(a: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(cholesky(a, on_error = "nan"));
            Ok((c, grad(c, a)))
        }

        /// Diagonals of a non-square matrix, one of them empty.
        pub fn diagonals(m: ArrayView2<f64>) -> Result<(f64, Array2<f64>)> {
            let c = sum(sin(diag(m))) + sum(diag(m, 1) * diag(m, 1)) + sum(cos(diag(m, -2))) + sum(diag(m, 7));
            Ok((c, grad(c, m)))
        }

        /// A Kalman filter's log-likelihood (the step of tests/kalman.rs, the log
        /// determinant by `slogdet`) and its gradient with respect to the transition
        /// matrix and both noise covariances.
        pub fn filter_ll(
            y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
            f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, r: ArrayView2<f64>,
        ) -> Result<(f64, Array2<f64>, Array2<f64>, Array2<f64>)> {
            let (xs, ps, lls) = scan(
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
                    let k = cho_solve((l, true), pht.t()).t();
                    let z = solve_triangular(l, v, lower = true);
                    let (sign, logdet) = slogdet(s);
                    let ll = -0.5 * (sum(m) * log(2.0 * pi) + logdet + dot(z, z));
                    (x_pred + dot(k, v), p_pred - dot(k, pht.t()), ll)
                },
                sequences = y,
                outputs_info = [x0, p0, None],
                non_sequences = [f, h, q, r],
            );
            let total = sum(lls);
            let (gf, gq, gr) = grad(total, [f, q, r]);
            Ok((total, gf, gq, gr))
        }

        /// The same with the log determinant from the factor's diagonal (as tests/kalman.rs
        /// writes it) and the observation noise `r = rc rcᵀ`, changed symmetrically.
        pub fn filter_ll_factor(
            y: ArrayView2<f64>, x0: ArrayView1<f64>, p0: ArrayView2<f64>,
            f: ArrayView2<f64>, h: ArrayView2<f64>, q: ArrayView2<f64>, rc: ArrayView2<f64>,
        ) -> Result<(f64, Array2<f64>, Array2<f64>)> {
            let r = dot(rc, rc.t());
            let (xs, ps, lls) = scan(
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
                    let k = cho_solve((l, true), pht.t()).t();
                    let z = solve_triangular(l, v, lower = true);
                    let ll = -0.5 * (sum(m) * log(2.0 * pi) + 2.0 * sum(log(diag(l))) + dot(z, z));
                    (x_pred + dot(k, v), p_pred - dot(k, pht.t()), ll)
                },
                sequences = y,
                outputs_info = [x0, p0, None],
                non_sequences = [f, h, q, r],
            );
            let total = sum(lls);
            let (gf, grc) = grad(total, [f, rc]);
            Ok((total, gf, grc))
        }
    }
}

fn v1(a: &ArrayD<f64>) -> ArrayView1<'_, f64> {
    a.view().into_dimensionality::<Ix1>().unwrap()
}

fn v2(a: &ArrayD<f64>) -> ArrayView2<'_, f64> {
    a.view().into_dimensionality::<Ix2>().unwrap()
}

/// What a program returned: its cost and the gradients, one per differentiated argument.
type Run<'a> = &'a dyn Fn(&[ArrayD<f64>]) -> (f64, Vec<ArrayD<f64>>);

/// Runs `function` on `args`, checks the gradients it returns (of the arguments `wrt`,
/// in order) against finite differences and the evaluator's forward mode, and the whole
/// program against the evaluator with each rewrite. Returns the gradients.
fn check(function: &str, args: &[ArrayD<f64>], wrt: &[usize], run: Run) -> Vec<ArrayD<f64>> {
    let (cost, grads) = run(args);
    assert_eq!(
        grads.len(),
        wrt.len(),
        "one gradient per differentiated argument"
    );
    let at: Vec<ArrayD<f64>> = wrt.iter().map(|&k| args[k].clone()).collect();
    check_gradient(
        &|p| {
            let mut full = args.to_vec();
            for (x, &k) in p.iter().zip(wrt) {
                full[k] = x.clone();
            }
            run(&full).0
        },
        &at,
        &grads,
    );
    let values: Vec<Value> = args.iter().map(Value::from).collect();
    let mut out = vec![Value::from(cost)];
    out.extend(grads.iter().map(Value::from));
    let pairs: Vec<(usize, usize)> = wrt.iter().enumerate().map(|(i, &k)| (k, i + 1)).collect();
    forward_mode_agrees(programs::SOURCE, function, &values, &out, &pairs);
    second_opinion(programs::SOURCE, function, values, out);
    grads
}

/// A symmetric positive definite `n x n` matrix, `m mᵀ + 2 I`.
fn spd(n: usize, seed: u64) -> Array2<f64> {
    let m = matrix(n, n, seed);
    m.dot(&m.t()) + Array2::<f64>::eye(n) * 2.0
}

/// `2 I` plus a small general matrix: well conditioned, not symmetric.
fn general(n: usize, seed: u64) -> Array2<f64> {
    matrix(n, n, seed) + Array2::<f64>::eye(n) * 2.0
}

/// `spd` with noise added to the triangle above the diagonal (`upper`) or below it: the
/// functions reading the other triangle must not see it.
fn spd_noisy(n: usize, seed: u64, upper: bool) -> Array2<f64> {
    let noise = matrix(n, n, seed + 100);
    let mut a = spd(n, seed);
    for i in 0..n {
        for j in 0..n {
            if (j > i) == upper && i != j {
                a[[i, j]] += noise[[i, j]];
            }
        }
    }
    a
}

fn d(a: Array2<f64>) -> ArrayD<f64> {
    a.into_dyn()
}

fn vector(n: usize, seed: u64) -> ArrayD<f64> {
    matrix(1, n, seed).row(0).to_owned().into_dyn() * 2.0
}

/// A gradient whose triangle above (`upper`) or below the diagonal `k` is exactly zero.
fn zero_outside(g: &ArrayD<f64>, lower: bool, k: i64) {
    let g = v2(g);
    for ((i, j), &x) in g.indexed_iter() {
        let diff = j as i64 - i as i64;
        let outside = if lower { diff > k } else { diff < k };
        if outside {
            assert_eq!(x, 0.0, "element ({i}, {j}) of {g}");
        }
    }
}

/// The matrix from the `lower` (else upper) triangle, mirrored.
fn mirrored(a: &Array2<f64>, lower: bool) -> Array2<f64> {
    Array2::from_shape_fn(a.raw_dim(), |(i, j)| {
        if (i >= j) == lower || i == j {
            a[[i, j]]
        } else {
            a[[j, i]]
        }
    })
}

macro_rules! run {
    ($f:ident, 2 -> $($k:tt),*) => {
        &|p: &[ArrayD<f64>]| {
            let r = programs::$f(v2(&p[0])).unwrap();
            (r.0, vec![$(r.$k.into_dyn()),*])
        }
    };
    ($f:ident, 2, 1 -> $($k:tt),*) => {
        &|p: &[ArrayD<f64>]| {
            let r = programs::$f(v2(&p[0]), v1(&p[1])).unwrap();
            (r.0, vec![$(r.$k.into_dyn()),*])
        }
    };
    ($f:ident, 2, 2 -> $($k:tt),*) => {
        &|p: &[ArrayD<f64>]| {
            let r = programs::$f(v2(&p[0]), v2(&p[1])).unwrap();
            (r.0, vec![$(r.$k.into_dyn()),*])
        }
    };
}

#[test]
fn cholesky_lower_reads_the_lower_triangle() {
    let a = d(spd_noisy(4, 1, true));
    let g = check("chol_lower", &[a], &[0], run!(chol_lower, 2 -> 1));
    zero_outside(&g[0], true, 0);
}

#[test]
fn cholesky_upper_reads_the_upper_triangle() {
    let a = d(spd_noisy(4, 2, false));
    let g = check("chol_upper", &[a], &[0], run!(chol_upper, 2 -> 1));
    zero_outside(&g[0], false, 0);
}

#[test]
fn cholesky_of_a_symmetric_parametrisation() {
    let (m, b) = (d(matrix(3, 3, 3)), vector(3, 4));
    check(
        "chol_symmetric",
        &[m, b],
        &[0, 1],
        run!(chol_symmetric, 2, 1 -> 1, 2),
    );
}

/// A Cholesky factor: a dominant diagonal, both triangles filled (only one is read).
fn factor(n: usize, seed: u64) -> ArrayD<f64> {
    let diagonal = Array2::from_diag(&scan_runtime::ndarray::Array1::from_shape_fn(n, |i| {
        1.5 + 0.1 * i as f64
    }));
    d(diagonal + matrix(n, n, seed) * 0.6)
}

#[test]
fn cho_solve_lower_with_a_vector() {
    let (c, b) = (factor(3, 5), vector(3, 6));
    let g = check(
        "cho_solve_lower",
        &[c, b],
        &[0, 1],
        run!(cho_solve_lower, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], true, 0);
}

#[test]
fn cho_solve_upper_with_a_matrix() {
    let (c, b) = (factor(3, 7), d(matrix(3, 2, 8)));
    let g = check(
        "cho_solve_upper",
        &[c, b],
        &[0, 1],
        run!(cho_solve_upper, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], false, 0);
}

#[test]
fn solve_general_with_a_vector() {
    let (a, b) = (d(general(3, 9)), vector(3, 10));
    check(
        "solve_general",
        &[a, b],
        &[0, 1],
        run!(solve_general, 2, 1 -> 1, 2),
    );
}

#[test]
fn solve_general_with_a_matrix() {
    let (a, b) = (d(general(4, 11)), d(matrix(4, 2, 12)));
    check(
        "solve_general_matrix",
        &[a, b],
        &[0, 1],
        run!(solve_general_matrix, 2, 2 -> 1, 2),
    );
}

#[test]
fn solve_positive_lower() {
    let (a, b) = (d(spd_noisy(3, 13, true)), vector(3, 14));
    let g = check(
        "solve_pos_lower",
        &[a, b],
        &[0, 1],
        run!(solve_pos_lower, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], true, 0);
}

#[test]
fn solve_positive_upper() {
    let (a, b) = (d(spd_noisy(3, 15, false)), d(matrix(3, 2, 16)));
    let g = check(
        "solve_pos_upper",
        &[a, b],
        &[0, 1],
        run!(solve_pos_upper, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], false, 0);
}

/// A symmetric indefinite matrix (Bunch-Kaufman), noise in the triangle not read.
fn indefinite(n: usize, seed: u64, noise_upper: bool) -> ArrayD<f64> {
    let mut a = spd_noisy(n, seed, noise_upper);
    a[[0, 0]] = -2.5;
    d(a)
}

#[test]
fn solve_symmetric_lower() {
    let (a, b) = (indefinite(3, 17, true), d(matrix(3, 2, 18)));
    let g = check(
        "solve_sym_lower",
        &[a, b],
        &[0, 1],
        run!(solve_sym_lower, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], true, 0);
}

#[test]
fn solve_symmetric_upper() {
    let (a, b) = (indefinite(3, 19, false), vector(3, 20));
    let g = check(
        "solve_sym_upper",
        &[a, b],
        &[0, 1],
        run!(solve_sym_upper, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], false, 0);
}

/// A triangular system's matrix: a dominant diagonal, both triangles filled (only one
/// is read).
fn triangular(n: usize, seed: u64) -> ArrayD<f64> {
    d(general(n, seed))
}

#[test]
fn solve_triangular_lower() {
    let (a, b) = (triangular(3, 21), vector(3, 22));
    let g = check("tri_lower", &[a, b], &[0, 1], run!(tri_lower, 2, 1 -> 1, 2));
    zero_outside(&g[0], true, 0);
}

#[test]
fn solve_triangular_upper() {
    let (a, b) = (triangular(3, 23), d(matrix(3, 2, 24)));
    let g = check("tri_upper", &[a, b], &[0, 1], run!(tri_upper, 2, 2 -> 1, 2));
    zero_outside(&g[0], false, 0);
}

#[test]
fn solve_triangular_lower_transposed() {
    let (a, b) = (triangular(3, 25), d(matrix(3, 2, 26)));
    let g = check(
        "tri_lower_trans",
        &[a, b],
        &[0, 1],
        run!(tri_lower_trans, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], true, 0);
}

#[test]
fn solve_triangular_upper_transposed() {
    let (a, b) = (triangular(3, 27), vector(3, 28));
    let g = check(
        "tri_upper_trans",
        &[a, b],
        &[0, 1],
        run!(tri_upper_trans, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], false, 0);
}

#[test]
fn solve_triangular_lower_unit_diagonal() {
    let (a, b) = (triangular(3, 29), vector(3, 30));
    let g = check(
        "tri_lower_unit",
        &[a, b],
        &[0, 1],
        run!(tri_lower_unit, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], true, -1);
}

#[test]
fn solve_triangular_upper_unit_diagonal() {
    let (a, b) = (triangular(3, 31), d(matrix(3, 2, 32)));
    let g = check(
        "tri_upper_unit",
        &[a, b],
        &[0, 1],
        run!(tri_upper_unit, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], false, 1);
}

#[test]
fn solve_triangular_lower_transposed_unit_diagonal() {
    let (a, b) = (triangular(3, 33), d(matrix(3, 2, 34)));
    let g = check(
        "tri_lower_trans_unit",
        &[a, b],
        &[0, 1],
        run!(tri_lower_trans_unit, 2, 2 -> 1, 2),
    );
    zero_outside(&g[0], true, -1);
}

#[test]
fn solve_triangular_upper_transposed_unit_diagonal() {
    let (a, b) = (triangular(3, 35), vector(3, 36));
    let g = check(
        "tri_upper_trans_unit",
        &[a, b],
        &[0, 1],
        run!(tri_upper_trans_unit, 2, 1 -> 1, 2),
    );
    zero_outside(&g[0], false, 1);
}

#[test]
fn inverse() {
    let a = d(general(3, 37));
    check("inverse", &[a], &[0], run!(inverse, 2 -> 1));
}

#[test]
fn determinant() {
    let a = d(general(3, 38));
    check("determinant", &[a], &[0], run!(determinant, 2 -> 1));
}

#[test]
fn log_determinant_of_a_matrix_with_a_negative_determinant() {
    // Rows 0 and 1 of a matrix with a positive determinant swapped: the sign is -1.
    let a = general(3, 39);
    let mut swapped = a.clone();
    swapped.row_mut(0).assign(&a.row(1));
    swapped.row_mut(1).assign(&a.row(0));
    check(
        "log_determinant",
        &[d(swapped)],
        &[0],
        run!(log_determinant, 2 -> 1),
    );
}

#[test]
fn log_determinant_gradient_is_the_inverse_transposed() {
    // det = 1; its inverse has integer entries.
    let a = arr2(&[[1.0, 2.0, 3.0], [0.0, 1.0, 4.0], [5.0, 6.0, 0.0]]);
    let inverse = arr2(&[[-24.0, 18.0, 5.0], [20.0, -15.0, -4.0], [-5.0, 4.0, 1.0]]);
    let (g, inv_t) = programs::log_determinant_exact(a.view()).unwrap();
    assert_eq!(g, inv_t, "the gradient is inv(a)ᵀ exactly");
    assert_floats(
        g.as_standard_layout().as_slice().unwrap(),
        inverse.t().as_standard_layout().as_slice().unwrap(),
        1e-12,
    );
    let args = vec![Value::from(a.clone())];
    let out = vec![Value::from(g), Value::from(inv_t)];
    second_opinion(programs::SOURCE, "log_determinant_exact", args, out);
}

#[test]
fn f32_gradients_stay_f32() {
    let a = spd_noisy(3, 56, true);
    let a32 = a.mapv(|x| x as f32);
    let (c, g) = programs::chol_single(a32.view()).unwrap();
    let (c64, g64) = programs::chol_double(a.view()).unwrap();
    assert!((f64::from(c) - c64).abs() < 1e-5 * c64.abs().max(1.0));
    for (x, y) in g.iter().zip(&g64) {
        assert!(
            (f64::from(*x) - y).abs() < 1e-4 * y.abs().max(1.0),
            "{g} vs {g64}"
        );
    }
    check("chol_double", &[d(a)], &[0], run!(chol_double, 2 -> 1));
    second_opinion(
        programs::SOURCE,
        "chol_single",
        vec![Value::from(a32)],
        vec![Value::from(c), Value::from(g)],
    );
}

#[test]
fn cholesky_that_fails_with_nan_on_error_gives_nan_gradients() {
    let a = arr2(&[[1.0, 2.0], [2.0, 1.0]]);
    let (c, g) = programs::chol_nan(a.view()).unwrap();
    assert!(c.is_nan());
    // NaN on the triangle read, 0 on the other.
    assert!(
        g[[0, 0]].is_nan() && g[[1, 0]].is_nan() && g[[1, 1]].is_nan(),
        "{g}"
    );
    assert_eq!(g[[0, 1]], 0.0);
    second_opinion(
        programs::SOURCE,
        "chol_nan",
        vec![Value::from(a)],
        vec![Value::from(c), Value::from(g)],
    );
}

/// A symmetric matrix with well separated eigenvalues, noise in the triangle not read.
fn separated(n: usize, seed: u64, noise_upper: bool) -> ArrayD<f64> {
    let mut a = spd_noisy(n, seed, noise_upper) * 0.3;
    for i in 0..n {
        a[[i, i]] += i as f64 * 1.5;
    }
    d(a)
}

#[test]
fn eigh_lower_values_and_vectors() {
    let a = separated(3, 40, true);
    let g = check("eigh_lower", &[a], &[0], run!(eigh_lower, 2 -> 1));
    zero_outside(&g[0], true, 0);
}

#[test]
fn eigh_upper_values_and_vectors() {
    let a = separated(4, 41, false);
    let g = check("eigh_upper", &[a], &[0], run!(eigh_upper, 2 -> 1));
    zero_outside(&g[0], false, 0);
}

#[test]
fn eigh_values_alone() {
    let a = separated(3, 42, true);
    let g = check(
        "eigh_values",
        std::slice::from_ref(&a),
        &[0],
        run!(eigh_values, 2 -> 1),
    );
    // Of a symmetric matrix: V diag(cos w) Vᵀ on the lower triangle, doubled off the
    // diagonal; the same for the matrix mirrored from its lower triangle.
    let sym = mirrored(&v2(&a).to_owned(), true);
    let g2 = programs::eigh_values(sym.view()).unwrap().1;
    assert_floats(
        g[0].as_slice().unwrap(),
        g2.as_standard_layout().as_slice().unwrap(),
        1e-14,
    );
}

#[test]
fn eigh_vectors_alone() {
    let a = separated(3, 43, false);
    check("eigh_vectors", &[a], &[0], run!(eigh_vectors, 2 -> 1));
}

#[test]
fn eigh_with_a_repeated_eigenvalue_is_not_finite() {
    // eigh(I): every eigenvalue 1; the eigenvectors' gradient divides by w_j - w_i = 0.
    let a = Array2::<f64>::eye(3);
    let (_, g) = programs::eigh_vectors(a.view()).unwrap();
    assert!(g.iter().any(|x| !x.is_finite()), "{g}");
    // The eigenvalues alone have no such term.
    let (_, g) = programs::eigh_values(a.view()).unwrap();
    assert!(g.iter().all(|x| x.is_finite()), "{g}");
}

#[test]
fn singular_values() {
    let a = d(matrix(3, 4, 44)
        + arr2(&[
            [2.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.5, 0.0],
        ]));
    check("singular_values", &[a], &[0], run!(singular_values, 2 -> 1));
}

/// A matrix with well separated singular values (and a well conditioned leading block).
fn separated_rectangle(m: usize, n: usize, seed: u64) -> ArrayD<f64> {
    let mut a = matrix(m, n, seed);
    for i in 0..m.min(n) {
        a[[i, i]] += 3.0 - i as f64;
    }
    d(a)
}

#[test]
fn qr_reduced_of_a_tall_matrix() {
    let a = separated_rectangle(4, 3, 46);
    check("qr_reduced", &[a], &[0], run!(qr_reduced, 2 -> 1));
}

#[test]
fn qr_reduced_of_a_wide_matrix() {
    let a = separated_rectangle(3, 5, 47);
    check("qr_reduced", &[a], &[0], run!(qr_reduced, 2 -> 1));
}

#[test]
fn qr_reduced_of_a_square_matrix() {
    let a = separated_rectangle(3, 3, 48);
    check("qr_reduced", &[a], &[0], run!(qr_reduced, 2 -> 1));
}

#[test]
fn qr_r_alone() {
    let a = separated_rectangle(4, 3, 49);
    check("qr_r", &[a], &[0], run!(qr_r, 2 -> 1));
    let a = separated_rectangle(2, 4, 50);
    check("qr_r", &[a], &[0], run!(qr_r, 2 -> 1));
}

#[test]
fn qr_complete_with_r_alone() {
    let a = separated_rectangle(5, 3, 51);
    check("qr_complete_r", &[a], &[0], run!(qr_complete_r, 2 -> 1));
}

#[test]
fn svd_thin_of_a_tall_matrix() {
    let a = separated_rectangle(4, 3, 52);
    check("svd_thin", &[a], &[0], run!(svd_thin, 2 -> 1));
}

#[test]
fn svd_thin_of_a_wide_matrix() {
    let a = separated_rectangle(3, 4, 53);
    check("svd_thin", &[a], &[0], run!(svd_thin, 2 -> 1));
}

#[test]
fn svd_vectors_alone() {
    let a = separated_rectangle(3, 3, 54);
    check(
        "svd_thin_vectors",
        &[a],
        &[0],
        run!(svd_thin_vectors, 2 -> 1),
    );
}

#[test]
fn svd_full_with_the_values_alone() {
    let a = separated_rectangle(3, 5, 55);
    check("svd_full_values", &[a], &[0], run!(svd_full_values, 2 -> 1));
}

#[test]
fn diagonals_of_a_matrix() {
    let m = d(matrix(3, 4, 45));
    check("diagonals", &[m], &[0], run!(diagonals, 2 -> 1));
}

/// A 2-state local-level-plus-trend model seen by two sensors (tests/kalman.rs), 12 steps,
/// one reading missing at step 3 and both at step 7.
fn kalman_args(r: Array2<f64>) -> Vec<ArrayD<f64>> {
    let n = 12;
    let noise = matrix(n, 2, 17);
    let mut y = Array2::from_shape_fn((n, 2), |(t, k)| {
        1.0 + 0.3 * t as f64 + noise[[t, k]] * if k == 0 { 1.2 } else { 1.8 }
    });
    for (t, k) in [(3, 0), (7, 0), (7, 1)] {
        y[[t, k]] = f64::NAN;
    }
    vec![
        d(y),
        scan_runtime::ndarray::arr1(&[0.1, 0.2]).into_dyn(),
        d(arr2(&[[2.0, 0.1], [0.1, 1.0]])),
        d(arr2(&[[0.95, 0.9], [0.05, 0.9]])),
        d(arr2(&[[1.0, 0.0], [1.0, 0.2]])),
        d(arr2(&[[0.05, 0.01], [0.01, 0.02]])),
        d(r),
    ]
}

fn kalman_run(p: &[ArrayD<f64>]) -> (f64, Vec<ArrayD<f64>>) {
    let (ll, gf, gq, gr) = programs::filter_ll(
        p[0].view().into_dimensionality::<Ix2>().unwrap(),
        v1(&p[1]),
        v2(&p[2]),
        v2(&p[3]),
        v2(&p[4]),
        v2(&p[5]),
        v2(&p[6]),
    )
    .unwrap();
    (ll, vec![gf.into_dyn(), gq.into_dyn(), gr.into_dyn()])
}

#[test]
fn kalman_log_likelihood_gradient() {
    let args = kalman_args(arr2(&[[0.4, 0.1], [0.1, 0.9]]));
    let g = check("filter_ll", &args, &[3, 5, 6], &kalman_run);
    // r is read through the lower triangle of s by the factor and whole by slogdet:
    // both parts of its gradient are there, nothing is NaN.
    assert!(g.iter().all(|g| g.iter().all(|x| x.is_finite())));
}

#[test]
fn kalman_log_likelihood_gradient_through_a_factor_of_r() {
    let args = kalman_args(arr2(&[[0.6, 0.0], [0.2, 0.9]]));
    check("filter_ll_factor", &args, &[3, 6], &|p| {
        let (ll, gf, grc) = programs::filter_ll_factor(
            v2(&p[0]),
            v1(&p[1]),
            v2(&p[2]),
            v2(&p[3]),
            v2(&p[4]),
            v2(&p[5]),
            v2(&p[6]),
        )
        .unwrap();
        (ll, vec![gf.into_dyn(), grc.into_dyn()])
    });
}
