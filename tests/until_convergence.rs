//! A loop run until it converges, as people write it: the new state, and `until` on the
//! largest change from the previous one. The emitter computes the state's row and that
//! largest change in one pass (`kernels::map2_max`), writing the row into the trace's
//! uninitialised memory; these tests hold it to a plain loop (same formula, so the same
//! bits) and to the reference evaluator: contiguous rows, a broadcast operand (the two-pass
//! path), lengths around the lanes, a NaN that keeps the loop from converging, `min`.

mod common;

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// Newton's square root until the largest change is below `tol`, at most 50 steps.
        pub fn newton(a: ArrayView1<f64>, tol: f64) -> Result<Array2<f64>> {
            let ys = scan(
                |y_tm1, a, tol| {
                    let y_t = 0.5 * (y_tm1 + a / y_tm1);
                    (y_t, until(max(abs(y_t - y_tm1)) < tol))
                },
                outputs_info = a,
                non_sequences = [a, tol],
                n_steps = 50,
            );
            Ok(ys)
        }

        /// Rows of square roots of one vector at once: `a` broadcasts over the rows.
        pub fn newton_rows(y0: ArrayView2<f64>, a: ArrayView1<f64>) -> Result<Array3<f64>> {
            let ys = scan(
                |y_tm1, a| {
                    let y_t = 0.5 * (y_tm1 + a / y_tm1);
                    (y_t, until(max(abs(y_t - y_tm1)) < 1e-12))
                },
                outputs_info = y0,
                non_sequences = a,
                n_steps = 50,
            );
            Ok(ys)
        }

        /// Halving towards zero until the smallest value is below 1: `min` of the new row.
        pub fn halve(x0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let xs = scan(
                |x_tm1| {
                    let x_t = x_tm1 * 0.5;
                    (x_t, until(min(x_t + 0.0) < 1.0))
                },
                outputs_info = x0,
                n_steps = 100,
            );
            Ok(xs)
        }
    }
}

/// The plain loop: rows y_1, y_2, .. of y = 0.5 (p + a / p) from p = y0, until the largest
/// |y - p| (NaN if any is NaN, as numpy's `max`) is below `tol`, at most `bound` rows.
fn newton_by_hand(y0: &[f64], a: &[f64], tol: f64, bound: usize) -> Vec<Vec<f64>> {
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut p = y0.to_vec();
    for _ in 0..bound {
        let y: Vec<f64> = p.iter().zip(a).map(|(&p, &a)| 0.5 * (p + a / p)).collect();
        let change = y
            .iter()
            .zip(&p)
            .map(|(y, p)| (y - p).abs())
            .fold(0.0f64, |m, d| {
                if m.is_nan() || d.is_nan() {
                    f64::NAN
                } else {
                    m.max(d)
                }
            });
        rows.push(y.clone());
        p = y;
        if change < tol {
            break;
        }
    }
    rows
}

fn flat(rows: &[Vec<f64>]) -> Vec<f64> {
    rows.iter().flatten().copied().collect()
}

#[test]
fn newton_stops_where_a_plain_loop_stops_with_the_same_rows() {
    for n in [1usize, 7, 8, 9, 13, 16, 17, 100] {
        let a = Array1::from_shape_fn(n, |i| 1.5 + (i as f64 * 0.61).sin());
        let ys = programs::newton(a.view(), 1e-12).unwrap();
        let want = newton_by_hand(a.as_slice().unwrap(), a.as_slice().unwrap(), 1e-12, 50);
        assert_eq!(ys.nrows(), want.len(), "n = {n}: steps taken");
        assert!(ys.nrows() < 10, "n = {n}: Newton converges in a few steps");
        assert_eq!(
            ys.iter().copied().collect::<Vec<_>>(),
            flat(&want),
            "n = {n}"
        );
        let last = ys.row(ys.nrows() - 1);
        for (y, a) in last.iter().zip(&a) {
            assert!(
                (y - a.sqrt()).abs() < 1e-15 * a.sqrt() * 4.0,
                "sqrt({a}) = {y}"
            );
        }
        second_opinion(
            programs::SOURCE,
            "newton",
            vec![Value::from(a.clone()), Value::from(1e-12)],
            vec![Value::from(ys)],
        );
    }
}

#[test]
fn a_nan_keeps_the_loop_from_converging() {
    // One element NaN: its change is NaN, so the largest change is NaN, never below the
    // tolerance, and the loop runs to its bound while the other elements settle.
    let mut a = Array1::from_shape_fn(20, |i| 2.0 + i as f64);
    a[11] = f64::NAN;
    let ys = programs::newton(a.view(), 1e-12).unwrap();
    assert_eq!(ys.nrows(), 50, "runs all of n_steps");
    let want = newton_by_hand(a.as_slice().unwrap(), a.as_slice().unwrap(), 1e-12, 50);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&ys.iter().copied().collect::<Vec<_>>()),
        bits(&flat(&want))
    );
    assert!(ys[[49, 11]].is_nan());
    assert_eq!(ys[[49, 3]], 5.0f64.sqrt());
    second_opinion(
        programs::SOURCE,
        "newton",
        vec![Value::from(a.clone()), Value::from(1e-12)],
        vec![Value::from(ys)],
    );
    // A tolerance that no change is below (a negative one) also runs to the bound.
    let b = Array1::from_elem(9, 4.0);
    assert_eq!(programs::newton(b.view(), -1.0).unwrap().nrows(), 50);
}

#[test]
fn a_broadcast_operand_takes_the_two_pass_path_with_the_same_results() {
    let a = Array1::from_shape_fn(11, |i| 3.0 + i as f64 * 0.25);
    let y0 = Array2::from_shape_fn((3, 11), |(r, j)| 1.0 + r as f64 + j as f64 * 0.1);
    let ys = programs::newton_rows(y0.view(), a.view()).unwrap();
    // Each row of y0 is its own Newton iteration on `a`; the loop stops when all have
    // converged, so each row's sequence is the plain loop's, run as long as the slowest.
    let steps = ys.shape()[0];
    for r in 0..3 {
        let want = newton_by_hand(
            y0.row(r).as_slice().unwrap(),
            a.as_slice().unwrap(),
            -1.0,
            steps,
        );
        let got: Vec<f64> = (0..steps)
            .flat_map(|t| ys.slice(s![t, r, ..]).to_vec())
            .collect();
        assert_eq!(got, flat(&want), "row {r}");
    }
    let last = ys.slice(s![steps - 1, .., ..]);
    let prev = ys.slice(s![steps - 2, .., ..]);
    let change = (&last - &prev)
        .mapv(f64::abs)
        .fold(0.0f64, |m, &d| m.max(d));
    assert!(
        change < 1e-12,
        "stopped after the step that converged ({change})"
    );
    second_opinion(
        programs::SOURCE,
        "newton_rows",
        vec![Value::from(y0.clone()), Value::from(a.clone())],
        vec![Value::from(ys)],
    );
}

#[test]
fn min_of_the_new_row_stops_a_halving_loop() {
    let x0 = Array1::from_vec(vec![40.0, 9.0, 300.0, 17.0, 64.0, 5.0, 70.0, 33.0, 12.0]);
    let xs = programs::halve(x0.view()).unwrap();
    // 5 halves to 0.625 < 1 after 3 steps.
    assert_eq!(xs.nrows(), 3);
    assert_eq!(xs.row(2).to_vec(), x0.mapv(|x| x / 8.0).to_vec());
    second_opinion(
        programs::SOURCE,
        "halve",
        vec![Value::from(x0.clone())],
        vec![Value::from(xs)],
    );
}
