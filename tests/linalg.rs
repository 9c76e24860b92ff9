//! Dense linear algebra in the step language: `cholesky`, `cho_solve`, `solve` (LU,
//! `assume_a = "pos"`, `"sym"`), `solve_triangular`, `inv`, `det`, `slogdet`, `eigh`,
//! `qr`, `svd(.., compute_uv = false)`/`svdvals`, in f64 and f32, with vector and matrix
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
