//! Dense linear algebra in the step language: `cholesky`, `cho_solve`, `solve` (LU,
//! `assume_a = "pos"`, `"sym"`), `solve_triangular`, `inv`, `det`, `slogdet`, in f64 and
//! f32, with vector and matrix right-hand sides. Values against numpy's and scipy's
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
