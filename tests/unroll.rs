//! `unroll = k`: the loop runs k copies of the step per trip and the remaining steps one
//! by one; the numbers are those of the plain loop (and the evaluator) at every number of
//! steps, including an `until` that stops in the middle of a trip.

mod common;

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        pub fn linrec(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array1<f64>> {
            let x = scan(|u_t, x_tm2, x_tm1| x_tm1 * 0.6 + x_tm2 * 0.4 + u_t, sequences = u, outputs_info = taps(x0, [-2, -1]), unroll = 4);
            Ok(x)
        }

        pub fn linrec_plain(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array1<f64>> {
            let x = scan(|u_t, x_tm2, x_tm1| x_tm1 * 0.6 + x_tm2 * 0.4 + u_t, sequences = u, outputs_info = taps(x0, [-2, -1]));
            Ok(x)
        }

        /// Vector state, a sequence read backwards, unrolled by 3.
        pub fn backwards(m: ArrayView2<f64>, h0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let h = scan(|row, h| tanh(h * 0.5 + row), sequences = m, outputs_info = h0, go_backwards = true, unroll = 3);
            Ok(h)
        }

        /// Stops when the running sum passes `limit`, unrolled by 4.
        pub fn until_sum(u: ArrayView1<i64>, limit: i64) -> Result<Array1<i64>> {
            let s = scan(|u_t, s, limit| (s + u_t, until(s + u_t > limit)), sequences = u, outputs_info = 0i64, non_sequences = limit, unroll = 4);
            Ok(s)
        }
    }
}

#[test]
fn an_unrolled_recurrence_gives_the_plain_loops_numbers() {
    let x0 = Array1::from(vec![0.0, 1.0]);
    for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 13] {
        let u = Array1::from_shape_fn(n, |i| (i as f64 * 0.7).sin());
        let got = programs::linrec(u.view(), x0.view()).unwrap();
        assert_eq!(
            got,
            programs::linrec_plain(u.view(), x0.view()).unwrap(),
            "n = {n}"
        );
        // By hand.
        let mut h = vec![0.0, 1.0];
        for t in 0..n {
            h.push(h[t + 1] * 0.6 + h[t] * 0.4 + u[t]);
        }
        assert_eq!(got.to_vec(), h[2..].to_vec());
        second_opinion(
            programs::SOURCE,
            "linrec",
            vec![Value::from(u), Value::from(x0.clone())],
            vec![Value::from(got)],
        );
    }
}

#[test]
fn an_unrolled_backwards_scan_reads_the_same_rows() {
    let h0 = Array1::from(vec![0.1, -0.2]);
    for n in [0usize, 1, 2, 3, 4, 7] {
        let m = Array2::from_shape_fn((n, 2), |(i, j)| (i * 2 + j) as f64 * 0.1);
        let got = programs::backwards(m.view(), h0.view()).unwrap();
        let mut h = h0.clone();
        for t in 0..n {
            // The runtime's tanh (correctly rounded here, where glibc's is not), so that
            // rows read in the wrong order cannot hide behind a rounding difference.
            h = (&h * 0.5 + m.row(n - 1 - t)).mapv(scan_runtime::approx::tanh_f64);
            assert_eq!(got.row(t), h, "n = {n}, t = {t}");
        }
        second_opinion(
            programs::SOURCE,
            "backwards",
            vec![Value::from(m), Value::from(h0.clone())],
            vec![Value::from(got)],
        );
    }
}

#[test]
fn until_stops_inside_an_unrolled_trip() {
    let u = Array1::from(vec![1i64, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Sums 1, 3, 6, 10, 15, 21, ...: each limit stops at another position in a trip.
    for (limit, steps) in [(0i64, 1usize), (2, 2), (5, 3), (9, 4), (14, 5), (100, 10)] {
        let got = programs::until_sum(u.view(), limit).unwrap();
        let expected: Vec<i64> = (1..=steps as i64).map(|k| k * (k + 1) / 2).collect();
        assert_eq!(got.to_vec(), expected, "limit {limit}");
        second_opinion(
            programs::SOURCE,
            "until_sum",
            vec![Value::from(u.clone()), Value::from(limit)],
            vec![Value::from(got)],
        );
    }
}
