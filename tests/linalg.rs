//! Dense linear algebra in the step language: `cholesky`, `cho_solve`, `solve` (LU,
//! `assume_a = "pos"`, `"sym"`), `solve_triangular`, `inv`, `det`, `slogdet`, `eigh`,
//! `qr` (modes "reduced", "complete", "r"), `svd` with its vectors (`full_matrices` either
//! way) and without (`compute_uv = false`, `svdvals`), in f64 and f32, with vector and matrix
//! right-hand sides. Values against numpy's and scipy's
//! (`tools/linalg_values.py` printed them), each program also through the reference
//! evaluator (its own textbook algorithms); failures as exact `Err` texts.

// The reference numbers are numpy's printed to 17 digits, kept as printed.
#![allow(clippy::excessive_precision)]

mod common;

use common::{assert_floats, assert_floats32, evaluate_err, second_opinion};
use scan_runtime::ndarray::{array, Array2, Array3};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// Factors of an SPD matrix `a`, solves from them, and `inv`, `det`, `slogdet` of a
        /// general matrix `g`.
        pub fn factors(a: ArrayView2<f64>, g: ArrayView2<f64>, b: ArrayView1<f64>, bm: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, f64, f64, f64)>
        {
            let l = cholesky(a);
            let u = cholesky(a, lower = false);
            let (sign, logdet) = slogdet(g);
            Ok((l, u, cho_solve((l, true), b), cho_solve((u, false), bm), inv(g), det(g), sign, logdet))
        }

        /// The solves: LU (vector and matrix right-hand sides), Cholesky, Bunch-Kaufman of
        /// one triangle, triangular.
        pub fn solves(a: ArrayView2<f64>, g: ArrayView2<f64>, s: ArrayView2<f64>, m: ArrayView2<f64>, b: ArrayView1<f64>, bm: ArrayView2<f64>)
            -> Result<(Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>)>
        {
            Ok((
                solve(g, b),
                solve(g, bm),
                solve(a, bm, assume_a = "pos"),
                solve(s, b, assume_a = "sym"),
                solve(s.t(), bm, assume_a = "sym", lower = true),
                solve_triangular(m, b, lower = true),
                solve_triangular(m, bm, trans = "T", lower = true),
                solve_triangular(m, b, 0, true, true),
            ))
        }

        /// f32 throughout; an f32 matrix with an f64 right-hand side computes in f64.
        pub fn single(a: ArrayView2<f32>, g: ArrayView2<f32>, b: ArrayView1<f32>, b64: ArrayView1<f64>)
            -> Result<(Array2<f32>, Array1<f32>, f32, Array1<f64>)>
        {
            Ok((cholesky(a), solve(g, b), det(g), solve(g, b64)))
        }

        /// A Cholesky factor per step of a stack of matrices.
        pub fn factor_each(ps: ArrayView3<f64>) -> Result<Array3<f64>> {
            Ok(scan(|p| cholesky(p), sequences = ps))
        }

        /// The same, NaNs for a matrix that is not positive definite (PyTensor's option).
        pub fn factor_each_or_nan(ps: ArrayView3<f64>) -> Result<Array3<f64>> {
            Ok(scan(|p| cholesky(p, on_error = "nan"), sequences = ps))
        }

        /// Solves per step of a stack of matrices.
        pub fn solve_each(gs: ArrayView3<f64>, b: ArrayView1<f64>) -> Result<Array2<f64>> {
            Ok(scan(|g_t| solve(g_t, b), sequences = gs))
        }

        pub fn solve_once(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(solve(a, b))
        }

        pub fn inverse(a: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(inv(a))
        }

        pub fn determinant(a: ArrayView2<f64>) -> Result<(f64, f64, f64)> {
            let (sign, logdet) = slogdet(a);
            Ok((det(a), sign, logdet))
        }

        pub fn triangular(m: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(solve_triangular(m, b, lower = true))
        }

        pub fn symmetric(s: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(solve(s, b, assume_a = "sym"))
        }

        pub fn positive(s: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(solve(s, b, assume_a = "pos"))
        }

        /// Eigendecompositions of symmetric matrices read from their lower triangle (the
        /// default) and from the upper one.
        pub fn spectral(a: ArrayView2<f64>, e: ArrayView2<f64>, s: ArrayView2<f64>)
            -> Result<(Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>, Array2<f64>)>
        {
            let (wa, va) = eigh(a);
            let (we, ve) = eigh(e);
            let (ws, vs) = eigh(s, UPLO = "U");
            Ok((wa, va, we, ve, ws, vs))
        }

        /// QR of a square, a tall and a wide matrix, and their singular values.
        pub fn orthogonal(g: ArrayView2<f64>, t: ArrayView2<f64>, w: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array1<f64>, Array1<f64>)>
        {
            let (qg, rg) = qr(g);
            let (qt, rt) = qr(t, mode = "reduced");
            let (qw, rw) = qr(w);
            Ok((qg, rg, qt, rt, qw, rw, svd(g, compute_uv = false), svdvals(t), svd(w, true, false)))
        }

        pub fn spectral32(e: ArrayView2<f32>, t: ArrayView2<f32>)
            -> Result<(Array1<f32>, Array2<f32>, Array2<f32>, Array2<f32>, Array1<f32>)>
        {
            let (w, v) = eigh(e);
            let (q, r) = qr(t);
            Ok((w, v, q, r, svdvals(t)))
        }

        /// Per step of a stack: eigenvalues, eigenvectors, QR factors and singular values.
        pub fn spectral_each(ms: ArrayView3<f64>)
            -> Result<(Array2<f64>, Array3<f64>, Array3<f64>, Array3<f64>, Array2<f64>)>
        {
            Ok(scan(
                |m| {
                    let (w, v) = eigh(m);
                    let (q, r) = qr(m);
                    (w, v, q, r, svdvals(m))
                },
                sequences = ms,
                outputs_info = [None, None, None, None, None],
            ))
        }

        /// A factorisation of a non-sequence in a step (computed once before the loop), one
        /// of a step value, and the same call twice (computed once).
        pub fn invariant_eigh(xs: ArrayView2<f64>, a: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>)> {
            let ys = scan(
                |x_t, a| {
                    let (w, v) = eigh(a);
                    let (w2, _) = eigh(a);
                    let (_, r) = qr(a + x_t.sum());
                    v.dot(x_t) * w + w2 + r.sum()
                },
                sequences = xs,
                non_sequences = a,
            );
            let (sign, logdet) = slogdet(a);
            Ok((ys, ys[-1] * sign + logdet))
        }

        /// The unshifted QR algorithm: `a_k+1 = r_k q_k` (similar to a), whose diagonal
        /// tends to the eigenvalues, largest first: both parts of qr in a recurrence.
        pub fn qr_algorithm(a: ArrayView2<f64>, n: usize) -> Result<Array1<f64>> {
            let a_s = scan(
                |a_k| {
                    let (q, r) = qr(a_k);
                    dot(r, q)
                },
                outputs_info = a,
                n_steps = n,
            );
            Ok(diag(a_s[-1]))
        }

        /// The SVD with its vectors (numpy's `full_matrices=False`) of a square, a tall and
        /// a wide matrix.
        pub fn singular(g: ArrayView2<f64>, t: ArrayView2<f64>, w: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>)>
        {
            let (ug, sg, vhg) = svd(g, full_matrices = false);
            let (ut, st, vht) = svd(t, false);
            let (uw, sw, vhw) = svd(w, full_matrices = false, compute_uv = true);
            Ok((ug, sg, vhg, ut, st, vht, uw, sw, vhw))
        }

        /// numpy's defaults (`full_matrices=True`) on a tall and a wide matrix, and qr's
        /// modes "complete" and "r".
        pub fn complete(t: ArrayView2<f64>, w: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array1<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>)>
        {
            let (ut, st, vht) = svd(t);
            let (uw, sw, vhw) = svd(w, full_matrices = true);
            let (q, r) = qr(t, mode = "complete");
            Ok((ut, st, vht, uw, sw, vhw, q, r, qr(t, mode = "r"), qr(w, "r")))
        }

        pub fn singular32(t: ArrayView2<f32>)
            -> Result<(Array2<f32>, Array1<f32>, Array2<f32>, Array2<f32>, Array2<f32>, Array2<f32>)>
        {
            let (u, s, vh) = svd(t, full_matrices = false);
            let (q, r) = qr(t, mode = "complete");
            Ok((u, s, vh, q, r, qr(t, mode = "r")))
        }

        /// Per step of a stack: the SVD (thin and full) and the complete QR.
        pub fn singular_each(ms: ArrayView3<f64>)
            -> Result<(Array3<f64>, Array2<f64>, Array3<f64>, Array3<f64>, Array3<f64>, Array3<f64>)>
        {
            Ok(scan(
                |m| {
                    let (u, s, vh) = svd(m, full_matrices = false);
                    let (uf, _, vhf) = svd(m);
                    let (q, r) = qr(m, mode = "complete");
                    (u, s, vh, uf, vhf, q.dot(r))
                },
                sequences = ms,
                outputs_info = [None, None, None, None, None, None],
            ))
        }

        pub fn svd_once(a: ArrayView2<f64>) -> Result<(Array2<f64>, Array1<f64>, Array2<f64>)> {
            Ok(svd(a))
        }

        pub fn eigh_once(a: ArrayView2<f64>) -> Result<Array1<f64>> {
            let (w, _) = eigh(a);
            Ok(w)
        }
    }
}

fn spd() -> Array2<f64> {
    array![[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]]
}

fn general() -> Array2<f64> {
    array![[0.5, 2.0, -1.0], [3.0, 1.0, 2.0], [1.0, -2.0, 4.0]]
}

/// Symmetric indefinite; its lower triangle is garbage (scipy reads the upper one).
fn sym_upper() -> Array2<f64> {
    array![[1.0, 2.0, 0.0], [99.0, -1.0, 3.0], [99.0, 99.0, 2.0]]
}

/// Lower triangular; its upper triangle is garbage.
fn lower_tri() -> Array2<f64> {
    array![[2.0, 9.0, 9.0], [1.0, 3.0, 9.0], [-1.0, 0.5, 4.0]]
}

fn rhs() -> (Array1<f64>, Array2<f64>) {
    (
        array![1.0, 2.0, 3.0],
        array![[1.0, -1.0], [2.0, 0.5], [3.0, 2.0]],
    )
}

fn flat<D: scan_runtime::ndarray::Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

const TOL: f64 = 1e-13;

#[test]
fn cholesky_cho_solve_inv_det_slogdet_match_numpy() {
    let (a, g) = (spd(), general());
    let (b, bm) = rhs();
    let got = programs::factors(a.view(), g.view(), b.view(), bm.view()).unwrap();
    let (l, u, x, xm, gi, d, sign, logdet) = got.clone();
    // numpy/scipy (tools/linalg_values.py)
    let l_ref = [
        2.0,
        0.0,
        0.0,
        1.0,
        2.0,
        0.0,
        0.20000000000000001,
        0.40000000000000002,
        1.6733200530681511,
    ];
    assert_floats(&flat(&l), &l_ref, TOL);
    let u_ref = [
        2.0,
        1.0,
        0.20000000000000001,
        0.0,
        2.0,
        0.40000000000000002,
        0.0,
        0.0,
        1.6733200530681511,
    ];
    assert_floats(&flat(&u), &u_ref, TOL);
    assert_floats(
        &flat(&x),
        &[0.0625, 0.18928571428571428, 0.9285714285714286],
        TOL,
    );
    let xm_ref = [
        0.0625,
        -0.375,
        0.18928571428571428,
        0.11428571428571432,
        0.9285714285714286,
        0.67857142857142838,
    ];
    assert_floats(&flat(&xm), &xm_ref, TOL);
    let gi_ref = [
        -0.88888888888888895,
        0.66666666666666663,
        -0.55555555555555558,
        1.1111111111111112,
        -0.33333333333333337,
        0.44444444444444448,
        0.7777777777777779,
        -0.33333333333333331,
        0.61111111111111116,
    ];
    assert_floats(&flat(&gi), &gi_ref, TOL);
    assert_floats(
        &[d, sign, logdet],
        &[-9.0000000000000018, -1.0, 2.1972245773362196],
        TOL,
    );
    let (l, u, x, xm, gi, d, sign, logdet) = got;
    second_opinion(
        programs::SOURCE,
        "factors",
        vec![a.into(), g.into(), b.into(), bm.into()],
        vec![
            l.into(),
            u.into(),
            x.into(),
            xm.into(),
            gi.into(),
            d.into(),
            sign.into(),
            logdet.into(),
        ],
    );
}

#[test]
fn solves_match_scipy() {
    let (a, g, s, m) = (spd(), general(), sym_upper(), lower_tri());
    let (b, bm) = rhs();
    let got =
        programs::solves(a.view(), g.view(), s.view(), m.view(), b.view(), bm.view()).unwrap();
    let (x1, x2, x3, x4, x5, x6, x7, x8) = got.clone();
    assert_floats(
        &flat(&x1),
        &[-1.2222222222222223, 1.7777777777777779, 1.9444444444444446],
        TOL,
    );
    let x2_ref = [
        -1.2222222222222223,
        0.1111111111111114,
        1.7777777777777779,
        -0.38888888888888923,
        1.9444444444444446,
        0.27777777777777751,
    ];
    assert_floats(&flat(&x2), &x2_ref, TOL);
    let x3_ref = [
        0.0625,
        -0.375,
        0.18928571428571428,
        0.11428571428571432,
        0.9285714285714286,
        0.67857142857142838,
    ];
    assert_floats(&flat(&x3), &x3_ref, TOL);
    assert_floats(
        &flat(&x4),
        &[
            0.052631578947368411,
            0.47368421052631582,
            0.78947368421052633,
        ],
        TOL,
    );
    let x5_ref = [
        0.052631578947368252,
        -1.1052631578947369,
        0.47368421052631587,
        0.052631578947368488,
        0.78947368421052633,
        0.92105263157894735,
    ];
    assert_floats(&flat(&x5), &x5_ref, TOL);
    assert_floats(&flat(&x6), &[0.5, 0.5, 0.8125], TOL);
    let x7_ref = [
        0.60416666666666674,
        -0.29166666666666669,
        0.54166666666666663,
        0.083333333333333329,
        0.75,
        0.5,
    ];
    assert_floats(&flat(&x7), &x7_ref, TOL);
    assert_floats(&flat(&x8), &[1.0, 1.0, 3.5], TOL);
    let (x1, x2, x3, x4, x5, x6, x7, x8) = got;
    second_opinion(
        programs::SOURCE,
        "solves",
        vec![a.into(), g.into(), s.into(), m.into(), b.into(), bm.into()],
        vec![
            x1.into(),
            x2.into(),
            x3.into(),
            x4.into(),
            x5.into(),
            x6.into(),
            x7.into(),
            x8.into(),
        ],
    );
}

#[test]
fn f32_computes_in_f32_and_promotes_like_numpy() {
    let a = spd().mapv(|v| v as f32);
    let g = general().mapv(|v| v as f32);
    let b = array![1.0f32, 2.0, 3.0];
    let b64 = rhs().0;
    let (l, x, d, x64) = programs::single(a.view(), g.view(), b.view(), b64.view()).unwrap();
    // LAPACK's spotrf, sgesv and numpy's det in float32.
    let l_ref = [
        2.0f32,
        0.0,
        0.0,
        1.0,
        2.0,
        0.0,
        0.20000000298023224,
        0.40000000596046448,
        1.6733200550079346,
    ];
    assert_floats32(l.as_slice().unwrap(), &l_ref, 2e-7);
    assert_floats32(
        x.as_slice().unwrap(),
        &[-1.2222219705581665, 1.7777775526046753, 1.9444442987442017],
        1e-6,
    );
    assert_floats32(&[d], &[-9.0], 1e-6);
    // An f32 matrix and an f64 right-hand side: numpy promotes to f64. g's elements are
    // exact in f32, so the f64 solution is scipy's.
    assert_floats(
        x64.as_slice().unwrap(),
        &[-1.2222222222222223, 1.7777777777777779, 1.9444444444444446],
        TOL,
    );
    second_opinion(
        programs::SOURCE,
        "single",
        vec![a.into(), g.into(), b.into(), b64.into()],
        vec![l.into(), x.into(), d.into(), x64.into()],
    );
}

/// Three 2x2 matrices, the one of step 2 not positive definite (eigenvalues 3 and -1).
fn stack_with_a_bad_one() -> Array3<f64> {
    array![
        [[4.0, 2.0], [2.0, 5.0]],
        [[1.0, 0.0], [0.0, 9.0]],
        [[1.0, 2.0], [2.0, 1.0]],
    ]
}

#[test]
fn a_matrix_not_positive_definite_is_an_err_naming_the_step() {
    let ps = stack_with_a_bad_one();
    let e = programs::factor_each(ps.view()).unwrap_err();
    assert_eq!(
        e,
        scan_runtime::Error::NotPositiveDefinite {
            what: "cholesky(p)".into(),
            step: Some(2),
            order: 2,
        }
    );
    assert_eq!(
        e.to_string(),
        "`cholesky(p)` at step 2: the matrix is not positive definite (its leading minor of order 2 is not positive)"
    );
    let msg = evaluate_err(programs::SOURCE, "factor_each", vec![ps.clone().into()]);
    assert!(
        msg.contains("step 2")
            && msg.contains("`cholesky(p)`: the matrix is not positive definite (its leading minor of order 2 is not positive)"),
        "{msg}"
    );
    // The first two steps alone factor: [[2, 0], [1, 2]] and [[1, 0], [0, 3]].
    let good = ps.slice(scan_runtime::ndarray::s![..2, .., ..]).to_owned();
    let ls = programs::factor_each(good.view()).unwrap();
    assert_floats(&flat(&ls), &[2.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, 3.0], 0.0);
    second_opinion(
        programs::SOURCE,
        "factor_each",
        vec![good.into()],
        vec![ls.into()],
    );
}

#[test]
fn on_error_nan_gives_nans_for_that_step_only() {
    let ps = stack_with_a_bad_one();
    let ls = programs::factor_each_or_nan(ps.view()).unwrap();
    let expected = [
        2.0,
        0.0,
        1.0,
        2.0,
        1.0,
        0.0,
        0.0,
        3.0,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::NAN,
    ];
    assert_floats(&flat(&ls), &expected, 0.0);
    second_opinion(
        programs::SOURCE,
        "factor_each_or_nan",
        vec![ps.into()],
        vec![ls.into()],
    );
}

#[test]
fn a_singular_matrix_is_an_err_never_garbage() {
    let singular = array![[1.0, 2.0], [2.0, 4.0]];
    let b = array![1.0, 1.0];
    let e = programs::solve_once(singular.view(), b.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`solve(a, b)`: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    let msg = evaluate_err(
        programs::SOURCE,
        "solve_once",
        vec![singular.clone().into(), b.clone().into()],
    );
    assert_eq!(msg, e.to_string());
    let e = programs::inverse(singular.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`inv(a)`: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    assert_eq!(
        evaluate_err(programs::SOURCE, "inverse", vec![singular.clone().into()]),
        e.to_string()
    );
    // Inside a loop: the step.
    let gs = array![[[2.0, 0.0], [0.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]];
    let e = programs::solve_each(gs.view(), b.view()).unwrap_err();
    assert_eq!(
        e,
        scan_runtime::Error::Singular {
            what: "solve(g_t, b)".into(),
            step: Some(1),
            pivot: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "`solve(g_t, b)` at step 1: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    // A zero on a triangular matrix's diagonal (scipy: "singular matrix"), and a zero
    // symmetric matrix.
    let m = array![[2.0, 0.0], [1.0, 0.0]];
    let e = programs::triangular(m.view(), array![[1.0], [1.0]].view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`solve_triangular(m, b, lower = true)`: the matrix is singular (its factorisation has a zero pivot at index 1)"
    );
    let zero = Array2::<f64>::zeros((2, 2));
    let e = programs::symmetric(zero.view(), b.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`solve(s, b, assume_a = \"sym\")`: the matrix is singular (its factorisation has a zero pivot at index 0)"
    );
    let e = programs::positive(singular.view(), b.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`solve(s, b, assume_a = \"pos\")`: the matrix is not positive definite (its leading minor of order 2 is not positive)"
    );
    // det and slogdet of a singular matrix are numbers, as numpy's: 0 and (0, -inf).
    let (d, sign, logdet) = programs::determinant(singular.view()).unwrap();
    assert_eq!((d, sign, logdet), (0.0, 0.0, f64::NEG_INFINITY));
    second_opinion(
        programs::SOURCE,
        "determinant",
        vec![singular.into()],
        vec![d.into(), sign.into(), logdet.into()],
    );
}

#[test]
fn shapes_that_cannot_work_are_errs_with_both_shapes() {
    let wide = Array2::<f64>::zeros((2, 3));
    let e = programs::determinant(wide.view()).unwrap_err();
    // `slogdet` comes first in the program, and fails first.
    assert_eq!(
        e.to_string(),
        "`slogdet(a)` needs a square matrix, got shape [2, 3]"
    );
    let e = programs::solve_once(wide.view(), array![1.0, 2.0].view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`solve(a, b)` needs a square matrix, got shape [2, 3]"
    );
    assert_eq!(
        evaluate_err(
            programs::SOURCE,
            "solve_once",
            vec![wide.into(), array![1.0, 2.0].into()]
        ),
        e.to_string()
    );
    let e = programs::solve_once(spd().view(), array![1.0, 2.0].view()).unwrap_err();
    assert_eq!(
        e,
        scan_runtime::Error::RightHandSide {
            what: "solve(a, b)".into(),
            matrix: vec![3, 3],
            rhs: vec![2],
        }
    );
    assert_eq!(
        e.to_string(),
        "cannot solve `solve(a, b)`: the matrix has shape [3, 3] but the right-hand side has shape [2] (it needs 3 rows)"
    );
    assert_eq!(
        evaluate_err(
            programs::SOURCE,
            "solve_once",
            vec![spd().into(), array![1.0, 2.0].into()]
        ),
        e.to_string()
    );
    let e = programs::triangular(lower_tri().view(), Array2::zeros((4, 2)).view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot solve `solve_triangular(m, b, lower = true)`: the matrix has shape [3, 3] but the right-hand side has shape [4, 2] (it needs 3 rows)"
    );
}

/// Symmetric indefinite; its upper triangle garbage (eigh reads the lower one).
fn sym_lower() -> Array2<f64> {
    array![[2.0, 99.0, 99.0], [-1.0, 3.0, 99.0], [0.5, 1.5, -1.0]]
}

fn tall() -> Array2<f64> {
    array![
        [1.0, 2.0, 0.0],
        [-1.0, 0.5, 3.0],
        [2.0, 1.0, 1.0],
        [0.0, -2.0, 4.0]
    ]
}

fn wide() -> Array2<f64> {
    array![[1.0, -2.0, 3.0, 0.5], [2.0, 0.0, -1.0, 1.0]]
}

#[test]
fn eigh_matches_numpy_with_its_sign_convention() {
    let (a, e, s) = (spd(), sym_lower(), sym_upper());
    let got = programs::spectral(a.view(), e.view(), s.view()).unwrap();
    let (wa, va, we, ve, ws, vs) = got.clone();
    // numpy's eigh (tools/linalg_values.py); the vectors with each column's largest
    // component made positive (numpy's own signs are LAPACK's: the script prints both).
    assert_floats(
        &flat(&wa),
        &[2.2564722211479875, 2.9019712193009179, 6.8415565595510976],
        TOL,
    );
    let va_ref = [
        -0.59275068662500674,
        -0.55889240066603652,
        0.57990163647237403,
        0.61963618865177461,
        0.14349385997064401,
        0.77166087490803104,
        -0.51448772309811741,
        0.81673055326005739,
        0.26125387299107178,
    ];
    assert_floats(&flat(&va), &va_ref, TOL);
    assert_floats(
        &flat(&we),
        &[-1.6758061479591533, 1.817049010007441, 3.858757137951712],
        TOL,
    );
    let ve_ref = [
        -0.21695719783570094,
        0.88475812877430293,
        -0.41247136612748581,
        -0.33995582385504575,
        0.32760609883846853,
        0.88153518468117698,
        0.91507355558682701,
        0.33147744655049094,
        0.22970217738203705,
    ];
    assert_floats(&flat(&ve), &ve_ref, TOL);
    assert_floats(
        &flat(&ws),
        &[-3.5169094166120018, 1.2729912453095646, 4.2439181713024379],
        TOL,
    );
    let vs_ref = [
        -0.36252666903642217,
        0.86519941659975952,
        0.34641648885812582,
        0.81875006257179905,
        0.11809593308933863,
        0.56187337152283157,
        -0.44522213475526107,
        -0.4873226037269297,
        0.75119500172776332,
    ];
    assert_floats(&flat(&vs), &vs_ref, TOL);
    let (wa, va, we, ve, ws, vs) = got;
    second_opinion(
        programs::SOURCE,
        "spectral",
        vec![a.into(), e.into(), s.into()],
        vec![
            wa.into(),
            va.into(),
            we.into(),
            ve.into(),
            ws.into(),
            vs.into(),
        ],
    );
}

#[test]
fn qr_and_singular_values_match_numpy() {
    let (g, t, w) = (general(), tall(), wide());
    let got = programs::orthogonal(g.view(), t.view(), w.view()).unwrap();
    let (qg, rg, qt, rt, qw, rw, sg, st, sw) = got.clone();
    // numpy's qr (LAPACK's Householder signs, matched) and svd(.., compute_uv=False).
    let qg_ref = [
        -0.1561737618886061,
        0.64835866840540324,
        0.74514481357728934,
        -0.93704257133163649,
        0.14130894054989571,
        -0.31934777724740954,
        -0.31234752377721214,
        -0.74810615585238849,
        0.58547092495358444,
    ];
    assert_floats(&flat(&qg), &qg_ref, TOL);
    let rg_ref = [
        -3.2015621187164243,
        -0.62469504755442395,
        -2.9673014758835157,
        0.0,
        2.9342385890654796,
        -3.3581654107151655,
        0.0,
        0.0,
        0.95804333174222944,
    ];
    assert_floats(&flat(&rg), &rg_ref, TOL);
    assert_eq!((qt.dim(), rt.dim()), ((4, 3), (3, 3)));
    let qt_ref = [
        -0.40824829046386313,
        -0.52765522695757094,
        -0.23895385880166661,
        0.40824829046386307,
        -0.40350105590873053,
        -0.75343614662974445,
        -0.81649658092772615,
        0.062077085524420074,
        -0.25724114391403896,
        0.0,
        0.74492502629304103,
        -0.55593346741612193,
    ];
    assert_floats(&flat(&qt), &qt_ref, TOL);
    let rt_ref = [
        -2.4494897427831779,
        -1.4288690166235209,
        0.40824829046386307,
        0.0,
        -2.6848339489311686,
        1.831274022970393,
        0.0,
        0.0,
        -4.7412834534677595,
    ];
    assert_floats(&flat(&rt), &rt_ref, TOL);
    assert_eq!((qw.dim(), rw.dim()), ((2, 2), (2, 4)));
    let qw_ref = [
        -0.44721359549995787,
        -0.89442719099991574,
        -0.89442719099991574,
        0.44721359549995809,
    ];
    assert_floats(&flat(&qw), &qw_ref, TOL);
    let rw_ref = [
        -2.2360679774997898,
        0.89442719099991574,
        -0.44721359549995787,
        -1.1180339887498949,
        0.0,
        1.7888543819998315,
        -3.1304951684997055,
        5.8172070323179489e-17,
    ];
    assert_floats(&flat(&rw), &rw_ref, TOL);
    assert_floats(
        &flat(&sg),
        &[5.3355706633713318, 3.3963248121156266, 0.49665225941190333],
        TOL,
    );
    assert_floats(
        &flat(&st),
        &[5.2748936782461344, 3.1454330910270074, 1.8792943763740819],
        TOL,
    );
    assert_floats(&flat(&sw), &[3.7789142004878418, 2.4433189446634542], TOL);
    let (qg, rg, qt, rt, qw, rw, sg, st, sw) = got;
    second_opinion(
        programs::SOURCE,
        "orthogonal",
        vec![g.into(), t.into(), w.into()],
        vec![
            qg.into(),
            rg.into(),
            qt.into(),
            rt.into(),
            qw.into(),
            rw.into(),
            sg.into(),
            st.into(),
            sw.into(),
        ],
    );
}

#[test]
fn eigh_qr_svd_in_f32_match_numpy_in_float32() {
    let e = sym_lower().mapv(|v| v as f32);
    let t = tall().mapv(|v| v as f32);
    let (w, v, q, r, s) = programs::spectral32(e.view(), t.view()).unwrap();
    // LAPACK's ssyevd, sgeqrf and sgesdd (numpy in float32).
    assert_floats32(
        w.as_slice().unwrap(),
        &[-1.6758061647415161, 1.8170490264892578, 3.8587570190429688],
        1e-6,
    );
    let v_ref = [
        -0.21695719659328461f32,
        0.8847581148147583,
        -0.41247135400772095,
        -0.33995583653450012,
        0.32760611176490784,
        0.88153517246246338,
        0.91507357358932495,
        0.33147743344306946,
        0.2297021746635437,
    ];
    assert_floats32(v.as_slice().unwrap(), &v_ref, 1e-6);
    let q_ref = [
        -0.40824830532073975f32,
        -0.52765524387359619,
        -0.2389538586139679,
        0.40824830532073975,
        -0.40350106358528137,
        -0.75343614816665649,
        -0.81649661064147949,
        0.062077086418867111,
        -0.25724112987518311,
        0.0,
        0.74492502212524414,
        -0.55593347549438477,
    ];
    assert_floats32(q.as_slice().unwrap(), &q_ref, 1e-6);
    let r_ref = [
        -2.4494898319244385f32,
        -1.4288690090179443,
        0.40824830532073975,
        0.0,
        -2.6848340034484863,
        1.8312740325927734,
        0.0,
        0.0,
        -4.7412834167480469,
    ];
    assert_floats32(r.as_slice().unwrap(), &r_ref, 1e-6);
    assert_floats32(
        s.as_slice().unwrap(),
        &[5.2748937606811523, 3.1454331874847412, 1.8792943954467773],
        1e-6,
    );
    second_opinion(
        programs::SOURCE,
        "spectral32",
        vec![e.into(), t.into()],
        vec![w.into(), v.into(), q.into(), r.into(), s.into()],
    );
}

/// `m^T m` close to the identity (orthonormal columns).
fn assert_orthonormal(m: &Array2<f64>) {
    let id = Array2::<f64>::eye(m.ncols());
    assert_floats(&flat(&m.t().dot(m)), &flat(&id), 1e-14);
}

#[test]
fn factors_of_each_step_satisfy_their_definitions() {
    // Sign-free checks on matrices numpy never saw: a v = v diag(w), v^T v = I, w
    // ascending; q r = m, q^T q = I, r upper triangular; the singular values are the
    // square roots of the eigenvalues of m^T m, descending.
    let n = 5;
    let ms = Array3::from_shape_fn((4, n, n), |(t, i, j)| {
        let (i, j) = (i.min(j) as f64, i.max(j) as f64);
        ((t as f64 + 1.0) * (i + 2.0 * j)).sin() + if i == j { t as f64 } else { 0.0 }
    });
    let got = programs::spectral_each(ms.view()).unwrap();
    let (ws, vs, qs, rs, ss) = got.clone();
    for t in 0..4 {
        let m = ms.index_axis(scan_runtime::ndarray::Axis(0), t).to_owned();
        let (w, v) = (
            ws.row(t).to_owned(),
            vs.index_axis(scan_runtime::ndarray::Axis(0), t).to_owned(),
        );
        assert!(w.windows(2).into_iter().all(|p| p[0] <= p[1]), "{w}");
        assert_floats(&flat(&m.dot(&v)), &flat(&(&v * &w)), 1e-13);
        assert_orthonormal(&v);
        for j in 0..n {
            let col = v.column(j);
            let big = col.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let first = col
                .iter()
                .find(|x| x.abs() >= big * (1.0 - 1.5e-8))
                .unwrap();
            assert!(*first > 0.0, "{col}");
        }
        let (q, r) = (
            qs.index_axis(scan_runtime::ndarray::Axis(0), t).to_owned(),
            rs.index_axis(scan_runtime::ndarray::Axis(0), t).to_owned(),
        );
        assert_floats(&flat(&q.dot(&r)), &flat(&m), 1e-13);
        assert_orthonormal(&q);
        assert!(r.indexed_iter().all(|((i, j), x)| i <= j || *x == 0.0));
        let s = ss.row(t).to_owned();
        assert!(s.windows(2).into_iter().all(|p| p[0] >= p[1]), "{s}");
        let (mut e, _) = {
            let mtm = m.t().dot(&m);
            let got = programs::spectral(mtm.view(), mtm.view(), mtm.view()).unwrap();
            (got.0, got.1)
        };
        e.as_slice_mut().unwrap().reverse();
        assert_floats(&flat(&s), &flat(&e.mapv(f64::sqrt)), 1e-12);
    }
    let (ws, vs, qs, rs, ss) = got;
    second_opinion(
        programs::SOURCE,
        "spectral_each",
        vec![ms.into()],
        vec![ws.into(), vs.into(), qs.into(), rs.into(), ss.into()],
    );
}

#[test]
fn a_factorisation_with_several_results_is_one_node_through_the_rewrites() {
    let xs = Array2::from_shape_fn((5, 3), |(t, i)| (t as f64 - 2.0) * 0.5 + i as f64);
    let a = sym_lower();
    let got = programs::invariant_eigh(xs.view(), a.view()).unwrap();
    // The same from the functions checked above: per step v x_t * w + w + sum(r) with
    // (w, v) = eigh(a) and r of qr(a + sum(x_t)); then ys[-1] * sign + logdet.
    let (w, v) = {
        let got = programs::spectral(a.view(), a.view(), a.view()).unwrap();
        (got.0, got.1)
    };
    for t in 0..5 {
        let x = xs.row(t);
        let shifted = a.mapv(|v| v + x.sum());
        let r = programs::orthogonal(shifted.view(), shifted.view(), shifted.view())
            .unwrap()
            .1;
        let expected = v.dot(&x) * &w + &w + r.sum();
        assert_floats(&flat(&got.0.row(t).to_owned()), &flat(&expected), 1e-12);
    }
    let (_, sign, logdet) = programs::determinant(a.view()).unwrap();
    let last = got.0.row(4).to_owned();
    assert_floats(&flat(&got.1), &flat(&(last * sign + logdet)), 1e-12);
    let (ys, y) = got;
    second_opinion(
        programs::SOURCE,
        "invariant_eigh",
        vec![xs.into(), a.into()],
        vec![ys.into(), y.into()],
    );
}

#[test]
fn eigh_of_a_matrix_that_is_not_square_is_an_err() {
    let wide = Array2::<f64>::zeros((2, 3));
    let e = programs::eigh_once(wide.view()).unwrap_err();
    assert_eq!(
        e,
        scan_runtime::Error::NotSquare {
            what: "eigh(a)".into(),
            shape: vec![2, 3],
        }
    );
    assert_eq!(
        e.to_string(),
        "`eigh(a)` needs a square matrix, got shape [2, 3]"
    );
    assert_eq!(
        evaluate_err(programs::SOURCE, "eigh_once", vec![wide.into()]),
        e.to_string()
    );
    // An empty matrix has no eigenvalues.
    let w = programs::eigh_once(Array2::<f64>::zeros((0, 0)).view()).unwrap();
    assert_eq!(w.len(), 0);
    // A NaN in the triangle read gives NaNs (LAPACK gives NaNs or garbage); one in the
    // other triangle is never read: [[2, 1], [1, 2]] has eigenvalues 1 and 3.
    for (a, expected) in [
        (array![[f64::NAN, 0.5], [0.5, 1.0]], [f64::NAN, f64::NAN]),
        (array![[2.0, f64::NAN], [1.0, 2.0]], [1.0, 3.0]),
    ] {
        let w = programs::eigh_once(a.view()).unwrap();
        assert_floats(&flat(&w), &expected, TOL);
        second_opinion(
            programs::SOURCE,
            "eigh_once",
            vec![a.into()],
            vec![w.into()],
        );
    }
}

#[test]
fn the_qr_algorithm_converges_to_numpys_eigenvalues() {
    // spd's eigenvalues 6.84, 2.90, 2.26: the error shrinks by 2.26 / 2.90 a step, so 200
    // steps leave rounding only (each step an orthogonal similarity: about 1e-14 at most).
    let a = spd();
    let d = programs::qr_algorithm(a.view(), 200).unwrap();
    assert_floats(
        &flat(&d),
        &[6.8415565595510976, 2.9019712193009179, 2.2564722211479875],
        1e-12,
    );
    second_opinion(
        programs::SOURCE,
        "qr_algorithm",
        vec![a.into(), 200i64.into()],
        vec![d.into()],
    );
}

/// `u diag(s) vh`.
fn usv(u: &Array2<f64>, s: &Array1<f64>, vh: &Array2<f64>) -> Array2<f64> {
    let k = s.len();
    let u = u.slice(scan_runtime::ndarray::s![.., ..k]);
    let vh = vh.slice(scan_runtime::ndarray::s![..k, ..]);
    (&u * s).dot(&vh)
}

#[test]
fn svd_with_its_vectors_matches_numpy_with_the_sign_convention() {
    let (g, t, w) = (general(), tall(), wide());
    let got = programs::singular(g.view(), t.view(), w.view()).unwrap();
    let (ug, sg, vhg, ut, st, vht, uw, sw, vhw) = got.clone();
    // numpy's svd(.., full_matrices=False) (tools/linalg_values.py): u's columns signed
    // so that the component of largest magnitude is positive, vh's rows with them
    // (numpy's own signs are LAPACK's).
    let ug_ref = [
        -0.23793217967365793,
        0.5492692168973824,
        0.80105655558435951,
        0.49512212413165974,
        0.77812814952283738,
        -0.38648501279547526,
        0.83560897558074099,
        -0.30466360184488961,
        0.4570970680717642,
    ];
    let vhg_ref = [
        0.41270360699290798,
        -0.30961265262923754,
        0.8566304559767477,
        0.67848500442361737,
        0.73196585265907288,
        -0.062322462349947011,
        -0.60772841923619747,
        0.60693162372129206,
        0.51215248957679504,
    ];
    assert_floats(&flat(&ug), &ug_ref, TOL);
    assert_floats(
        &flat(&sg),
        &[5.3355706633713318, 3.3963248121156298, 0.49665225941190361],
        TOL,
    );
    assert_floats(&flat(&vhg), &vhg_ref, TOL);
    assert_eq!((ut.dim(), st.dim(), vht.dim()), ((4, 3), 3, (3, 3)));
    let ut_ref = [
        -0.1305161552609313,
        0.66490032707882807,
        0.20750600016599841,
        0.52933450361355361,
        0.20783099465257052,
        0.75746752853196342,
        0.08885066705345622,
        0.70992502216840347,
        -0.47413632976120273,
        0.83359227171576722,
        -0.10353886039252622,
        -0.39796852126187554,
    ];
    let vht_ref = [
        -0.091404557926157787,
        -0.29852714218435988,
        0.95001407998490361,
        0.59671254242137961,
        0.7473434743035241,
        0.29225309773029196,
        -0.79723230523313426,
        0.59359858220448714,
        0.10982429010690548,
    ];
    assert_floats(&flat(&ut), &ut_ref, TOL);
    assert_floats(
        &flat(&st),
        &[5.2748936782461353, 3.1454330910270087, 1.8792943763740821],
        TOL,
    );
    assert_floats(&flat(&vht), &vht_ref, TOL);
    assert_eq!((uw.dim(), sw.dim(), vhw.dim()), ((2, 2), 2, (2, 4)));
    let uw_ref = [
        0.99818179256929673,
        0.060275276715630779,
        -0.060275276715630779,
        0.99818179256929662,
    ];
    let vhw_ref = [
        0.23224428832619076,
        -0.52829026519863076,
        0.8083858199345082,
        0.11612214416309541,
        0.84173982539046222,
        -0.049338852667827331,
        -0.33452692052653316,
        0.42086991269523111,
    ];
    assert_floats(&flat(&uw), &uw_ref, TOL);
    assert_floats(&flat(&sw), &[3.7789142004878418, 2.4433189446634542], TOL);
    assert_floats(&flat(&vhw), &vhw_ref, TOL);
    // Sign-free: a = u diag(s) vh, orthonormal columns of u and rows of vh.
    for (a, u, s, vh) in [
        (&g, &ug, &sg, &vhg),
        (&t, &ut, &st, &vht),
        (&w, &uw, &sw, &vhw),
    ] {
        assert_floats(&flat(&usv(u, s, vh)), &flat(a), 1e-14);
        assert_orthonormal(u);
        assert_orthonormal(&vh.t().to_owned());
    }
    let (ug, sg, vhg, ut, st, vht, uw, sw, vhw) = got;
    second_opinion(
        programs::SOURCE,
        "singular",
        vec![g.into(), t.into(), w.into()],
        vec![
            ug.into(),
            sg.into(),
            vhg.into(),
            ut.into(),
            st.into(),
            vht.into(),
            uw.into(),
            sw.into(),
            vhw.into(),
        ],
    );
}

#[test]
fn full_matrices_and_qr_modes_complete_and_r_match_numpy() {
    let (t, w) = (tall(), wide());
    let got = programs::complete(t.view(), w.view()).unwrap();
    let (ut, st, vht, uw, sw, vhw, q, r, rt, rw) = got.clone();
    assert_eq!((ut.dim(), vht.dim()), ((4, 4), (3, 3)));
    assert_eq!((uw.dim(), vhw.dim()), ((2, 2), (4, 4)));
    // The tall matrix's u: its 4th column spans what the first three do not, unique up to
    // its sign (numpy's, signed as the others).
    let ut_ref = [
        -0.1305161552609313,
        0.66490032707882807,
        0.20750600016599841,
        0.70555959929794798,
        0.52933450361355361,
        0.20783099465257052,
        0.75746752853196342,
        -0.32070890877179498,
        0.08885066705345622,
        0.70992502216840347,
        -0.47413632976120273,
        -0.51313425403487134,
        0.83359227171576722,
        -0.10353886039252622,
        -0.39796852126187554,
        0.36881524508756391,
    ];
    assert_floats(&flat(&ut), &ut_ref, TOL);
    // The wide matrix's vh: its last two rows are a basis of a plane, not numpy's: the
    // first two rows are the thin SVD's, and all four are orthonormal.
    let (_, _, _, _, _, _, _, _, vhw_thin) =
        programs::singular(t.view(), t.view(), w.view()).unwrap();
    let top = vhw.slice(scan_runtime::ndarray::s![..2, ..]).to_owned();
    assert_floats(&flat(&top), &flat(&vhw_thin), TOL);
    for (a, u, s, vh) in [(&t, &ut, &st, &vht), (&w, &uw, &sw, &vhw)] {
        assert_floats(&flat(&usv(u, s, vh)), &flat(a), 1e-14);
        assert_orthonormal(u);
        assert_orthonormal(&vh.t().to_owned());
    }
    // numpy's qr(t, mode="complete"): the reduced q and r, one more column of q and a row
    // of zeros in r.
    let q_ref = [
        -0.40824829046386313,
        -0.52765522695757094,
        -0.23895385880166661,
        0.7055595992979482,
        0.40824829046386307,
        -0.40350105590873053,
        -0.75343614662974445,
        -0.32070890877179487,
        -0.81649658092772615,
        0.062077085524420074,
        -0.25724114391403896,
        -0.51313425403487123,
        0.0,
        0.74492502629304103,
        -0.55593346741612193,
        0.3688152450875638,
    ];
    assert_eq!((q.dim(), r.dim()), ((4, 4), (4, 3)));
    assert_floats(&flat(&q), &q_ref, TOL);
    let r_ref = [
        -2.4494897427831779,
        -1.4288690166235209,
        0.40824829046386307,
        0.0,
        -2.6848339489311686,
        1.831274022970393,
        0.0,
        0.0,
        -4.7412834534677595,
        0.0,
        0.0,
        0.0,
    ];
    assert_floats(&flat(&r), &r_ref, TOL);
    // mode "r": the reduced r alone.
    assert_eq!((rt.dim(), rw.dim()), ((3, 3), (2, 4)));
    assert_floats(&flat(&rt), &r_ref[..9], TOL);
    let rw_ref = [
        -2.2360679774997898,
        0.89442719099991574,
        -0.44721359549995787,
        -1.1180339887498949,
        0.0,
        1.7888543819998315,
        -3.1304951684997055,
        5.8172070323179489e-17,
    ];
    assert_floats(&flat(&rw), &rw_ref, TOL);
    let (ut, st, vht, uw, sw, vhw, q, r, rt, rw) = got;
    second_opinion(
        programs::SOURCE,
        "complete",
        vec![t.into(), w.into()],
        vec![
            ut.into(),
            st.into(),
            vht.into(),
            uw.into(),
            sw.into(),
            vhw.into(),
            q.into(),
            r.into(),
            rt.into(),
            rw.into(),
        ],
    );
}

#[test]
fn svd_and_complete_qr_in_f32_match_numpy_in_float32() {
    let t = tall().mapv(|v| v as f32);
    let (u, s, vh, q, r, r_only) = programs::singular32(t.view()).unwrap();
    // numpy in float32 (LAPACK's sgesdd, sgeqrf), u and vh signed as in f64.
    let u_ref = [
        -0.13051615655422211f32,
        0.66490030288696289,
        0.20750600099563599,
        0.52933448553085327,
        0.2078309953212738,
        0.75746750831604004,
        0.08885066956281662,
        0.70992499589920044,
        -0.47413632273674011,
        0.83359229564666748,
        -0.10353886336088181,
        -0.39796853065490723,
    ];
    assert_floats32(u.as_slice().unwrap(), &u_ref, 1e-6);
    assert_floats32(
        s.as_slice().unwrap(),
        &[5.2748937606811523, 3.1454331874847412, 1.8792943954467773],
        1e-6,
    );
    let vh_ref = [
        -0.091404557228088379f32,
        -0.29852715134620667,
        0.95001405477523804,
        0.59671252965927124,
        0.74734348058700562,
        0.29225310683250427,
        -0.79723232984542847,
        0.59359860420227051,
        0.1098242923617363,
    ];
    assert_floats32(vh.as_slice().unwrap(), &vh_ref, 1e-6);
    let q_ref = [
        -0.40824830532073975f32,
        -0.52765524387359619,
        -0.2389538586139679,
        0.70555961132049561,
        0.40824830532073975,
        -0.40350106358528137,
        -0.75343614816665649,
        -0.32070890069007874,
        -0.81649661064147949,
        0.062077086418867111,
        -0.25724112987518311,
        -0.51313424110412598,
        0.0,
        0.74492502212524414,
        -0.55593347549438477,
        0.36881524324417114,
    ];
    assert_floats32(q.as_slice().unwrap(), &q_ref, 1e-6);
    let r_ref = [
        -2.4494898319244385f32,
        -1.4288690090179443,
        0.40824830532073975,
        0.0,
        -2.6848340034484863,
        1.8312740325927734,
        0.0,
        0.0,
        -4.7412834167480469,
        0.0,
        0.0,
        0.0,
    ];
    assert_floats32(r.as_slice().unwrap(), &r_ref, 1e-6);
    assert_floats32(r_only.as_slice().unwrap(), &r_ref[..9], 1e-6);
    second_opinion(
        programs::SOURCE,
        "singular32",
        vec![t.into()],
        vec![
            u.into(),
            s.into(),
            vh.into(),
            q.into(),
            r.into(),
            r_only.into(),
        ],
    );
}

#[test]
fn svd_and_complete_qr_of_each_step_satisfy_their_definitions() {
    // Tall 5 x 3 matrices numpy never saw: a = u diag(s) vh (thin and full), orthonormal
    // u and vh, s descending and equal to svdvals', the full u's first columns the thin
    // u's, u's sign rule; q r = a for the complete QR.
    let ms = Array3::from_shape_fn((4, 5, 3), |(t, i, j)| {
        ((t as f64 + 1.0) * (i as f64 + 2.0 * j as f64 + 0.5)).sin()
            + if i == j { 1.0 } else { 0.0 }
    });
    let got = programs::singular_each(ms.view()).unwrap();
    let (us, ss, vhs, ufs, vhfs, qrs) = got.clone();
    let (_, _, _, _, svals) = programs::spectral_each(
        Array3::from_shape_fn((4, 3, 3), |(t, i, j)| {
            let m = ms.index_axis(scan_runtime::ndarray::Axis(0), t);
            m.column(i).dot(&m.column(j))
        })
        .view(),
    )
    .unwrap();
    let at = |x: &Array3<f64>, t: usize| x.index_axis(scan_runtime::ndarray::Axis(0), t).to_owned();
    for t in 0..4 {
        let m = at(&ms, t);
        let (u, s, vh, uf, vhf) = (
            at(&us, t),
            ss.row(t).to_owned(),
            at(&vhs, t),
            at(&ufs, t),
            at(&vhfs, t),
        );
        assert_eq!(
            (u.dim(), vh.dim(), uf.dim(), vhf.dim()),
            ((5, 3), (3, 3), (5, 5), (3, 3))
        );
        assert!(s.windows(2).into_iter().all(|p| p[0] >= p[1]), "{s}");
        // The singular values of m are the square roots of those of m^T m.
        let expected = svals.row(t).mapv(f64::sqrt);
        assert_floats(&flat(&s), &flat(&expected), 1e-12);
        assert_floats(&flat(&usv(&u, &s, &vh)), &flat(&m), 1e-13);
        assert_floats(&flat(&usv(&uf, &s, &vhf)), &flat(&m), 1e-13);
        assert_orthonormal(&u);
        assert_orthonormal(&uf);
        assert_orthonormal(&vh.t().to_owned());
        let left = uf.slice(scan_runtime::ndarray::s![.., ..3]).to_owned();
        assert_floats(&flat(&left), &flat(&u), 1e-14);
        for col in uf.columns() {
            let big = col.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            let first = col
                .iter()
                .find(|x| x.abs() >= big * (1.0 - 1.5e-8))
                .unwrap();
            assert!(*first > 0.0, "{col}");
        }
        assert_floats(&flat(&at(&qrs, t)), &flat(&m), 1e-13);
    }
    let (us, ss, vhs, ufs, vhfs, qrs) = got;
    second_opinion(
        programs::SOURCE,
        "singular_each",
        vec![ms.into()],
        vec![
            us.into(),
            ss.into(),
            vhs.into(),
            ufs.into(),
            vhfs.into(),
            qrs.into(),
        ],
    );
}

#[test]
fn svd_of_empty_nan_and_rank_deficient_matrices() {
    // No singular value: the full matrices are identities (numpy's), s is empty.
    let (u, s, vh) = programs::svd_once(Array2::<f64>::zeros((2, 0)).view()).unwrap();
    assert_eq!((u, s.len(), vh.dim()), (Array2::eye(2), 0, (0, 0)));
    // A NaN: NaNs everywhere (numpy raises "SVD did not converge").
    let a = array![[1.0, f64::NAN], [0.0, 1.0], [2.0, 2.0]];
    let (u, s, vh) = programs::svd_once(a.view()).unwrap();
    assert_eq!((u.dim(), s.len(), vh.dim()), ((3, 3), 2, (2, 2)));
    assert!(u.iter().chain(&s).chain(&vh).all(|x| x.is_nan()));
    second_opinion(
        programs::SOURCE,
        "svd_once",
        vec![a.into()],
        vec![u.into(), s.into(), vh.into()],
    );
    // Rank 1: one singular value sqrt(14 * 2) (numpy's), the other 0; u and vh still
    // orthonormal and a = u diag(s) vh (the vectors of 0 are any that complete them).
    let a = array![[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]];
    let (u, s, vh) = programs::svd_once(a.view()).unwrap();
    assert_floats(&flat(&s), &[28f64.sqrt(), 0.0], 1e-14);
    assert_floats(&flat(&usv(&u, &s, &vh)), &flat(&a), 1e-14);
    assert_orthonormal(&u);
    assert_orthonormal(&vh.t().to_owned());
    let (ue, se, vhe) = evaluate_svd(&a);
    assert_floats(&flat(&se), &flat(&s), 1e-14);
    assert_floats(&flat(&usv(&ue, &se, &vhe)), &flat(&a), 1e-14);
    assert_orthonormal(&ue);
    assert_orthonormal(&vhe.t().to_owned());
}

/// The evaluator's `svd_once`, for checks that cannot compare its vectors with the
/// runtime's (a zero singular value's vectors are any that complete the others).
fn evaluate_svd(a: &Array2<f64>) -> (Array2<f64>, Array1<f64>, Array2<f64>) {
    let got = common::evaluate(programs::SOURCE, "svd_once", vec![a.clone().into()]);
    let two = |v: &scan_codegen::eval::Value| match v {
        scan_codegen::eval::Value::F64(x) => x.clone().into_dimensionality().unwrap(),
        other => panic!("{other:?}"),
    };
    let one = |v: &scan_codegen::eval::Value| match v {
        scan_codegen::eval::Value::F64(x) => x.clone().into_dimensionality().unwrap(),
        other => panic!("{other:?}"),
    };
    (two(&got[0]), one(&got[1]), two(&got[2]))
}
