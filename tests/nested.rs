//! Scans inside steps, scans chained one after another, and values a step uses without
//! listing them in `non_sequences` (implicit non-sequences, captured through every level
//! they cross); checked against hand-written loops and against the reference evaluator.

mod common;

use common::{assert_allclose, second_opinion, Value};
use scan_runtime::prelude::*;

// ---------------------------------------------------------------------------------------
// A scan inside a step.
// ---------------------------------------------------------------------------------------

mod nested {
    scan_tests::program! {
        /// For each row, the inner scan's cumulative sum of that row; its last value.
        pub fn row_totals(m: ArrayView2<f64>) -> Result<Array1<f64>> {
            let totals = scan(
                |row| {
                    let sums = scan(|x, acc| acc + x, sequences = row, outputs_info = 0.0);
                    sums[-1]
                },
                sequences = m,
                outputs_info = None,
            );
            Ok(totals)
        }

        /// For each row, the whole inner cumulative sum: a matrix.
        pub fn row_cumsums(m: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(scan(
                |row| scan(|x, acc| acc + x, sequences = row, outputs_info = 0.0),
                sequences = m,
            ))
        }

        /// The inner step uses `offset`, computed in the outer step (captured one level),
        /// and `scale`, a parameter of the function (captured through two levels).
        pub fn captures(m: ArrayView2<f64>, ks: ArrayView1<f64>, scale: f64) -> Result<Array2<f64>> {
            let out = scan(
                |row, k| {
                    let offset = k * 100.0;
                    scan(|x, acc| acc + x * scale + offset, sequences = row, outputs_info = 0.0)
                },
                sequences = [m, ks],
                outputs_info = None,
            );
            Ok(out)
        }

        /// A view inside a step: each row's digits read left to right.
        pub fn row_numbers(digits: ArrayView2<i64>) -> Result<Array1<i64>> {
            Ok(map(
                |row| foldl(|d, acc| acc * 10 + d, sequences = row, outputs_info = 0i64),
                sequences = digits,
            ))
        }

        /// The inner scan's n_steps comes from the outer sequence, 0 included:
        /// sum(2, 4, .., 2^k) = 2^(k+1) - 2.
        pub fn inner_n_steps(ks: ArrayView1<i64>) -> Result<Array1<i64>> {
            Ok(map(
                |k| scan(|p| p * 2, outputs_info = 1i64, n_steps = k).sum(),
                sequences = ks,
            ))
        }

        /// An inner scan going backwards with taps, inside an outer map over rows.
        pub fn inner_backwards(m: ArrayView2<i64>) -> Result<Array2<i64>> {
            Ok(map(
                |row| scan(|a, b| a * 10 + b, sequences = taps(row, [-1, 0]), go_backwards = true),
                sequences = m,
            ))
        }

        /// An outer recurrence whose step runs an inner scan over its previous state:
        /// h[t] = cumsum(h[t-1]) * decay, with decay a function parameter.
        pub fn repeated_cumsum(h0: ArrayView1<f64>, decay: f64, n: usize) -> Result<Array2<f64>> {
            Ok(scan(
                |h_tm1| scan(|x, acc| acc + x * decay, sequences = h_tm1, outputs_info = 0.0),
                outputs_info = h0,
                n_steps = n,
            ))
        }
    }
}

#[test]
fn inner_scan_totals_each_row() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [-1.0, 0.5, 0.25]];
    let got = nested::row_totals(m.view()).unwrap();
    assert_eq!(got.to_vec(), vec![6.0, 15.0, -0.25]);
    let expected: Vec<f64> = m.outer_iter().map(|r| r.iter().sum()).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        nested::SOURCE,
        "row_totals",
        vec![Value::from(m.clone())],
        vec![Value::from(got)],
    );

    let sums = nested::row_cumsums(m.view()).unwrap();
    assert_eq!(
        sums,
        array![[1.0, 3.0, 6.0], [4.0, 9.0, 15.0], [-1.0, -0.5, -0.25]]
    );
    second_opinion(
        nested::SOURCE,
        "row_cumsums",
        vec![Value::from(m)],
        vec![Value::from(sums)],
    );
}

#[test]
fn inner_scan_captures_from_the_outer_step_and_the_function() {
    let m = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let ks = array![1.0, 2.0, 99.0];
    let scale = 0.5;
    let got = nested::captures(m.view(), ks.view(), scale).unwrap();
    // 2 steps (m has 2 rows). Row 0, offset 100: 100.5, 201.5, 303.0.
    // Row 1, offset 200: 202, 404.5, 607.5.
    assert_eq!(got, array![[100.5, 201.5, 303.0], [202.0, 404.5, 607.5]]);
    let mut expected = Array2::<f64>::zeros((2, 3));
    for (i, row) in m.outer_iter().enumerate() {
        let offset = ks[i] * 100.0;
        let mut acc = 0.0;
        for (j, x) in row.iter().enumerate() {
            acc = acc + x * scale + offset;
            expected[[i, j]] = acc;
        }
    }
    assert_eq!(got, expected);
    second_opinion(
        nested::SOURCE,
        "captures",
        vec![Value::from(m), Value::from(ks), Value::from(scale)],
        vec![Value::from(got)],
    );
}

#[test]
fn a_fold_inside_a_map() {
    let digits = array![[1i64, 2, 3], [9, 0, 7], [0, 0, 4]];
    let got = nested::row_numbers(digits.view()).unwrap();
    assert_eq!(got.to_vec(), vec![123, 907, 4]);
    second_opinion(
        nested::SOURCE,
        "row_numbers",
        vec![Value::from(digits)],
        vec![Value::from(got)],
    );
}

#[test]
fn an_inner_scan_over_the_outer_state() {
    let h0 = array![1.0, 1.0, 1.0, 1.0];
    let got = nested::repeated_cumsum(h0.view(), 0.5, 3).unwrap();
    assert_eq!(got.dim(), (3, 4));
    // Step 0: cumsum([1,1,1,1]) * 0.5 = [0.5, 1, 1.5, 2].
    assert_eq!(got.row(0).to_vec(), vec![0.5, 1.0, 1.5, 2.0]);
    let mut h = h0.to_vec();
    for t in 0..3 {
        let mut acc = 0.0;
        h = h
            .iter()
            .map(|x| {
                acc += x * 0.5;
                acc
            })
            .collect();
        assert_allclose(got.row(t).as_slice().unwrap(), &h, 1e-15);
    }
    second_opinion(
        nested::SOURCE,
        "repeated_cumsum",
        vec![Value::from(h0), Value::from(0.5f64), Value::from(3i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn inner_n_steps_from_the_outer_sequence() {
    let ks = array![0i64, 1, 2, 5, 10];
    let got = nested::inner_n_steps(ks.view()).unwrap();
    assert_eq!(got.to_vec(), vec![0, 2, 6, 62, 2046]);
    let expected: Vec<i64> = ks.iter().map(|&k| (1i64 << (k + 1)) - 2).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        nested::SOURCE,
        "inner_n_steps",
        vec![Value::from(ks)],
        vec![Value::from(got)],
    );
}

#[test]
fn an_inner_scan_going_backwards_with_taps() {
    let m = array![[1i64, 2, 3, 4], [5, 6, 7, 8]];
    let got = nested::inner_backwards(m.view()).unwrap();
    // Each row [a, b, c, d] with taps [-1, 0] backwards gives cd, bc, ab.
    assert_eq!(got, array![[34, 23, 12], [78, 67, 56]]);
    second_opinion(
        nested::SOURCE,
        "inner_backwards",
        vec![Value::from(m)],
        vec![Value::from(got)],
    );
}

// ---------------------------------------------------------------------------------------
// Two scans in a row.
// ---------------------------------------------------------------------------------------

mod chained {
    scan_tests::program! {
        /// Cumulative sums, then the cumulative product of those sums.
        pub fn sums_then_products(v: ArrayView1<f64>) -> Result<(Array1<f64>, Array1<f64>)> {
            let sums = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0);
            let products = scan(|s, acc| acc * s, sequences = sums, outputs_info = 1.0);
            Ok((sums, products))
        }

        /// The second scan reads the first's result with taps, and its last value seeds a
        /// third.
        pub fn differences_then_total(v: ArrayView1<i64>) -> Result<(Array1<i64>, i64)> {
            let squares = map(|x| x * x, sequences = v);
            let diffs = scan(|a, b| b - a, sequences = taps(squares, [-1, 0]));
            let total = reduce(|d, acc| acc + d, sequences = diffs, outputs_info = squares[0]);
            Ok((diffs, total))
        }
    }
}

#[test]
fn a_scan_over_the_result_of_another() {
    let v = array![1.0, 2.0, 3.0, 4.0];
    let (sums, products) = chained::sums_then_products(v.view()).unwrap();
    assert_eq!(sums.to_vec(), vec![1.0, 3.0, 6.0, 10.0]);
    assert_eq!(products.to_vec(), vec![1.0, 3.0, 18.0, 180.0]);
    second_opinion(
        chained::SOURCE,
        "sums_then_products",
        vec![Value::from(v)],
        vec![Value::from(sums), Value::from(products)],
    );
}

#[test]
fn a_tapped_scan_over_a_map_then_a_reduce() {
    let v = array![1i64, 3, 4, 7];
    let (diffs, total) = chained::differences_then_total(v.view()).unwrap();
    // squares 1, 9, 16, 49; differences 8, 7, 33; 1 + 8 + 7 + 33 = 49 (the last square).
    assert_eq!(diffs.to_vec(), vec![8, 7, 33]);
    assert_eq!(total, 49);
    second_opinion(
        chained::SOURCE,
        "differences_then_total",
        vec![Value::from(v)],
        vec![Value::from(diffs), Value::from(total)],
    );
}

// ---------------------------------------------------------------------------------------
// Implicit non-sequences.
// ---------------------------------------------------------------------------------------

mod implicit {
    scan_tests::program! {
        /// `w` and `b` are used by the step but not listed in non_sequences.
        pub fn affine_recurrence(u: ArrayView1<f64>, w: f64, b: f64) -> Result<Array1<f64>> {
            Ok(scan(|u_t, h_tm1| w * h_tm1 + u_t + b, sequences = u, outputs_info = 0.0))
        }

        /// An implicit vector next to an explicit scalar, and a value computed before the
        /// scan from the parameters.
        pub fn mixed(m: ArrayView2<f64>, v: ArrayView1<f64>, c: f64) -> Result<Array1<f64>> {
            let shift = c * 2.0;
            Ok(scan(
                |row, c| row.dot(v) * c + shift,
                sequences = m,
                non_sequences = c,
                outputs_info = None,
            ))
        }
    }
}

#[test]
fn a_step_uses_parameters_it_was_not_given() {
    let u = array![1.0, 2.0, 3.0];
    let got = implicit::affine_recurrence(u.view(), 2.0, 0.5).unwrap();
    // h = 2 * 0 + 1 + 0.5 = 1.5; 2 * 1.5 + 2.5 = 5.5; 2 * 5.5 + 3.5 = 14.5.
    assert_eq!(got.to_vec(), vec![1.5, 5.5, 14.5]);
    second_opinion(
        implicit::SOURCE,
        "affine_recurrence",
        vec![Value::from(u), Value::from(2.0f64), Value::from(0.5f64)],
        vec![Value::from(got)],
    );

    let m = array![[1.0, 2.0], [3.0, 4.0], [-1.0, 1.0]];
    let v = array![10.0, 1.0];
    let got = implicit::mixed(m.view(), v.view(), 3.0).unwrap();
    // row . v = 12, 34, -9; * 3 + 6.
    assert_eq!(got.to_vec(), vec![42.0, 108.0, -21.0]);
    second_opinion(
        implicit::SOURCE,
        "mixed",
        vec![Value::from(m), Value::from(v), Value::from(3.0f64)],
        vec![Value::from(got)],
    );
}
