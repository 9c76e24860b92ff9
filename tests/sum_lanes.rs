//! The lane loop in generated code: a scan whose outputs are all running totals standing in
//! for `sum` runs 8 steps at once, one per lane (rewrite/sum_lanes.rs, emit/lanes.rs), and
//! the steps left over one by one. Checked against hand-written loops (integer totals
//! exactly; float totals within the error bound of a sum of n terms each within 3e-14 of
//! its value, `(3e-14 + n eps) sum|terms|`, since lanes add in another order), against the
//! same program without the rewrite, and against the evaluator; at
//! step counts around multiples of 8, forwards and backwards, with sequence taps, strided
//! views, a given `n_steps`, and `pow` of the loop index (carried per lane) and of data.

mod common;

use common::{second_opinion, Value};
use scan_runtime::ndarray::{s, Array1};

macro_rules! programs {
    ($($module:ident: [$($setting:tt)*];)*) => {$(
        // Not every setting's module runs every program.
        #[allow(dead_code)]
        mod $module {
            scan_tests::program! {
                #![rewrites($($setting)*)]

                /// The scan tutorial's polynomial.
                pub fn polynomial(c: ArrayView1<f64>, x: f64, n: usize) -> Result<f64> {
                    let terms = scan(|c_t, p, x| c_t * pow(x, p), sequences = [c, arange(n)], non_sequences = x);
                    Ok(terms.sum())
                }

                /// SPEC's polynomial: f32 coefficients and base, the powers in f64.
                pub fn polynomial_f32(c: ArrayView1<f32>, x: f32, n: usize) -> Result<f64> {
                    let terms = scan(|c_t, p, x| c_t * pow(x, p), sequences = [c, arange(n)], non_sequences = x);
                    Ok(terms.sum())
                }

                /// Two totals, backwards, with sequence taps: integers and f32.
                pub fn two_totals(u: ArrayView1<i64>, v: ArrayView1<f32>) -> Result<(i64, f32)> {
                    let (a, b) = scan(
                        |u0, u2, v_t| (u0 * u2 - 3, v_t * v_t + 0.5),
                        sequences = [taps(u, [0, 2]), v],
                        go_backwards = true,
                    );
                    Ok((a.sum(), b.sum()))
                }

                /// A `pow` of constants left in the step (push_out_nonseq off): computed once.
                pub fn invariant_power(c: ArrayView1<f64>, x: f64) -> Result<f64> {
                    let terms = scan(|c_t, x| c_t * pow(x, 2.0) + c_t, sequences = c, non_sequences = x);
                    Ok(terms.sum())
                }

                /// A `pow` whose exponent is data, not the loop index; fewer steps than rows.
                pub fn data_powers(x: ArrayView1<f64>, e: ArrayView1<f64>, k: usize) -> Result<f64> {
                    let terms = scan(|x_t, e_t| pow(x_t, e_t), sequences = [x, e], n_steps = k);
                    Ok(terms.sum())
                }
            }
        }
    )*};
}

programs! {
    on: [all];
    off: [all_except(sum_lanes)];
    only: [running_sum, sum_lanes];
}

const COUNTS: [usize; 12] = [0, 1, 2, 7, 8, 9, 15, 16, 17, 64, 1000, 100_003];

/// `got` is within the error bound of summing `terms` in any order, each term within
/// 3e-14 (relative) of its value, from `want`, their sum in step order.
fn close(got: f64, want: f64, terms: &[f64], what: &str) {
    let n = terms.len() as f64;
    let magnitude: f64 = terms.iter().map(|t| t.abs()).sum();
    let tol = (3e-14 + 2.0 * n * f64::EPSILON) * magnitude + f64::MIN_POSITIVE;
    assert!(
        (got - want).abs() <= tol,
        "{what}: {got} vs {want} (tolerance {tol:e})"
    );
}

/// The terms' sum in step order.
fn in_order(terms: &[f64]) -> f64 {
    terms.iter().fold(0.0, |a, b| a + b)
}

fn coefficients(n: usize) -> Array1<f64> {
    Array1::from_shape_fn(n, |i| ((i as f64) * 0.37).sin())
}

/// The polynomial's terms, powers by `powf`.
fn polynomial_terms(c: &[f64], x: f64) -> Vec<f64> {
    c.iter()
        .enumerate()
        .map(|(t, &c)| c * x.powf(t as f64))
        .collect()
}

#[test]
fn the_polynomial_in_lanes_matches_the_step_order_sum() {
    for &n in &COUNTS {
        let c = coefficients(n);
        for &x in &[0.999_999f64, -0.9, 1.0001, 0.0, 1.0] {
            let what = format!("n = {n}, x = {x}");
            let got = on::polynomial(c.view(), x, n).unwrap();
            let terms = polynomial_terms(c.as_slice().unwrap(), x);
            close(got, in_order(&terms), &terms, &what);
            let without = off::polynomial(c.view(), x, n).unwrap();
            close(got, without, &terms, &what);
        }
    }
    let c = coefficients(40);
    let got = on::polynomial(c.view(), 0.9, 40).unwrap();
    second_opinion(
        on::SOURCE,
        "polynomial",
        vec![Value::from(c), Value::from(0.9), Value::from(40i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn strided_and_too_short_sequences() {
    let c = coefficients(2001);
    let every_other = c.slice(s![..;2]);
    let terms = polynomial_terms(&every_other.to_vec(), 0.99);
    let got = on::polynomial(every_other, 0.99, 1001).unwrap();
    close(got, in_order(&terms), &terms, "strided");
    // Fewer coefficients than `arange(n)`: the shorter sequence sets the steps.
    let short = coefficients(13);
    let terms = polynomial_terms(short.as_slice().unwrap(), 0.5);
    let got = on::polynomial(short.view(), 0.5, 100).unwrap();
    close(got, in_order(&terms), &terms, "short");
}

#[test]
fn spec_polynomial_f32() {
    for &n in &COUNTS {
        let c = Array1::from_shape_fn(n, |i| ((i as f32) * 0.11).cos());
        let x = 0.999_999f32;
        let terms: Vec<f64> = c
            .iter()
            .enumerate()
            .map(|(t, &c)| f64::from(c) * f64::from(x).powf(t as f64))
            .collect();
        let what = format!("n = {n}");
        let got = on::polynomial_f32(c.view(), x, n).unwrap();
        close(got, in_order(&terms), &terms, &what);
        close(
            got,
            off::polynomial_f32(c.view(), x, n).unwrap(),
            &terms,
            &what,
        );
    }
}

#[test]
fn two_totals_backwards_with_taps() {
    for &n in &COUNTS {
        let u = Array1::from_shape_fn(n + 2, |i| (i as i64 * 7919) % 1001 - 500);
        let v = Array1::from_shape_fn(n, |i| ((i as f32) * 0.3).sin());
        let (a, b) = on::two_totals(u.view(), v.view()).unwrap();
        let (mut a_want, mut b_want) = (0i64, 0f64);
        for t in (0..n).rev() {
            a_want = a_want.wrapping_add(u[t].wrapping_mul(u[t + 2]).wrapping_sub(3));
            b_want += f64::from(v[t] * v[t] + 0.5);
        }
        assert_eq!(a, a_want, "n = {n}");
        let tol = 1e-5 * b_want.abs().max(1.0);
        assert!(
            (f64::from(b) - b_want).abs() <= tol,
            "n = {n}: {b} vs {b_want}"
        );
        assert_eq!(off::two_totals(u.view(), v.view()).unwrap().0, a);
        if n == 17 {
            second_opinion(
                on::SOURCE,
                "two_totals",
                vec![Value::from(u), Value::from(v)],
                vec![Value::from(a), Value::from(b)],
            );
        }
    }
}

#[test]
fn powers_of_data_take_powf() {
    let n = 1003;
    let x = Array1::from_shape_fn(n, |i| 0.5 + (i % 13) as f64 * 0.1);
    let e = Array1::from_shape_fn(n, |i| ((i * 31) % 17) as f64 - 4.5);
    for k in [0, 5, 8, 200, 1003] {
        let terms: Vec<f64> = (0..k).map(|t| x[t].powf(e[t])).collect();
        let got = on::data_powers(x.view(), e.view(), k).unwrap();
        close(got, in_order(&terms), &terms, &format!("k = {k}"));
    }
    // More steps than rows: the error the ordinary loop gives.
    let err = on::data_powers(x.view(), e.view(), n + 1).unwrap_err();
    assert_eq!(
        err,
        off::data_powers(x.view(), e.view(), n + 1).unwrap_err()
    );
}

#[test]
fn an_invariant_power_left_in_the_step() {
    for &n in &COUNTS[..10] {
        let c = coefficients(n);
        let terms: Vec<f64> = c.iter().map(|&c| c * 1.3f64.powf(2.0) + c).collect();
        let what = format!("n = {n}");
        close(
            only::invariant_power(c.view(), 1.3).unwrap(),
            in_order(&terms),
            &terms,
            &what,
        );
        close(
            on::invariant_power(c.view(), 1.3).unwrap(),
            in_order(&terms),
            &terms,
            &what,
        );
    }
}
