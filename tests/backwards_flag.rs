//! `go_backwards = flag` with a run-time bool: one compiled function serves both
//! directions, and each direction gives what the literal `go_backwards = true` / `false`
//! gives (taps, several sequences, recurrent outputs, n_steps, nested scans). Every call is
//! also run through the reference evaluator and the rewrites (`common::second_opinion`).

mod common;

use common::{second_opinion, Value};
use scan_runtime::prelude::*;

mod programs {
    scan_tests::program! {
        /// taps [-1, 0] and [-2, 1] of one sequence, a map output.
        pub fn pairs_t(seq: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y| x * 10 + y, sequences = taps(seq, [-1, 0]), go_backwards = true);
            let b = scan(|x, y| x * 100 + y, sequences = taps(seq, [-2, 1]), go_backwards = true);
            Ok((a, b))
        }
        pub fn pairs_f(seq: ArrayView1<i64>) -> Result<(Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y| x * 10 + y, sequences = taps(seq, [-1, 0]), go_backwards = false);
            let b = scan(|x, y| x * 100 + y, sequences = taps(seq, [-2, 1]), go_backwards = false);
            Ok((a, b))
        }
        pub fn pairs(seq: ArrayView1<i64>, back: bool) -> Result<(Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y| x * 10 + y, sequences = taps(seq, [-1, 0]), go_backwards = back);
            let b = scan(|x, y| x * 100 + y, sequences = taps(seq, [-2, 1]), go_backwards = back);
            Ok((a, b))
        }

        /// Future taps with a SITSOT output; a MITSOT output; two sequences of different
        /// lengths (each reversed from its own end).
        pub fn recurrences_t(u: ArrayView1<i64>, init: ArrayView1<i64>, v: ArrayView1<i64>)
            -> Result<(Array1<i64>, Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y, acc| acc * 1000 + x * 10 + y, sequences = taps(u, [1, 3]), outputs_info = 0i64, go_backwards = true);
            let b = scan(|u_t, u_tp1, x_tm2, x_tm1| x_tm2 + x_tm1 * 10 + u_t * 1000 + u_tp1 * 100000,
                sequences = taps(u, [0, 1]), outputs_info = taps(init, [-2, -1]), go_backwards = true);
            let c = map(|x, y| x * 100 + y, sequences = [u, v], go_backwards = true);
            Ok((a, b, c))
        }
        pub fn recurrences_f(u: ArrayView1<i64>, init: ArrayView1<i64>, v: ArrayView1<i64>)
            -> Result<(Array1<i64>, Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y, acc| acc * 1000 + x * 10 + y, sequences = taps(u, [1, 3]), outputs_info = 0i64, go_backwards = false);
            let b = scan(|u_t, u_tp1, x_tm2, x_tm1| x_tm2 + x_tm1 * 10 + u_t * 1000 + u_tp1 * 100000,
                sequences = taps(u, [0, 1]), outputs_info = taps(init, [-2, -1]), go_backwards = false);
            let c = map(|x, y| x * 100 + y, sequences = [u, v], go_backwards = false);
            Ok((a, b, c))
        }
        pub fn recurrences(u: ArrayView1<i64>, init: ArrayView1<i64>, v: ArrayView1<i64>, back: bool)
            -> Result<(Array1<i64>, Array1<i64>, Array1<i64>)> {
            let a = scan(|x, y, acc| acc * 1000 + x * 10 + y, sequences = taps(u, [1, 3]), outputs_info = 0i64, go_backwards = back);
            let b = scan(|u_t, u_tp1, x_tm2, x_tm1| x_tm2 + x_tm1 * 10 + u_t * 1000 + u_tp1 * 100000,
                sequences = taps(u, [0, 1]), outputs_info = taps(init, [-2, -1]), go_backwards = back);
            let c = map(|x, y| x * 100 + y, sequences = [u, v], go_backwards = back);
            Ok((a, b, c))
        }

        /// n_steps below the sequence's length (backwards: the last rows, reversed), the
        /// sums of rows of a matrix, and `reduce`.
        pub fn counted_t(v: ArrayView1<f64>, m: ArrayView2<f64>, n: usize) -> Result<(Array1<f64>, Array2<f64>, f64)> {
            let a = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_steps = n, go_backwards = true);
            let b = scan(|row, acc| acc * 2.0 + row, sequences = m, outputs_info = zeros_like(m[0]), go_backwards = true);
            let c = reduce(|x, acc| acc * 10.0 + x, sequences = v, outputs_info = 0.0, go_backwards = true);
            Ok((a, b, c))
        }
        pub fn counted_f(v: ArrayView1<f64>, m: ArrayView2<f64>, n: usize) -> Result<(Array1<f64>, Array2<f64>, f64)> {
            let a = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_steps = n, go_backwards = false);
            let b = scan(|row, acc| acc * 2.0 + row, sequences = m, outputs_info = zeros_like(m[0]), go_backwards = false);
            let c = reduce(|x, acc| acc * 10.0 + x, sequences = v, outputs_info = 0.0, go_backwards = false);
            Ok((a, b, c))
        }
        pub fn counted(v: ArrayView1<f64>, m: ArrayView2<f64>, n: usize, back: bool) -> Result<(Array1<f64>, Array2<f64>, f64)> {
            let a = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_steps = n, go_backwards = back);
            let b = scan(|row, acc| acc * 2.0 + row, sequences = m, outputs_info = zeros_like(m[0]), go_backwards = back);
            let c = reduce(|x, acc| acc * 10.0 + x, sequences = v, outputs_info = 0.0, go_backwards = back);
            Ok((a, b, c))
        }

        /// The flag computed (`n > 2`, `!back`), and read by an inner scan inside a step
        /// (captured like any outer value).
        pub fn computed(m: ArrayView2<i64>, n: usize, back: bool) -> Result<(Array1<i64>, Array2<i64>)> {
            let a = scan(|x, acc| acc * 10 + x, sequences = m[0], outputs_info = 0i64, go_backwards = n > 2);
            let b = map(|row| scan(|x, acc| acc * 10 + x, sequences = row, outputs_info = 0i64, go_backwards = !back), sequences = m);
            Ok((a, b))
        }
    }
}

fn i64s(a: &Array1<i64>) -> Vec<i64> {
    a.to_vec()
}

#[test]
fn taps_agree_with_the_literal_directions() {
    let seq = Array1::from_iter(1i64..=6);
    let (t, f) = (
        programs::pairs_t(seq.view()).unwrap(),
        programs::pairs_f(seq.view()).unwrap(),
    );
    // Backwards, the windows are reversed: 56, 45, 34, 23, 12 (PyTensor's rule).
    assert_eq!(i64s(&t.0), [56, 45, 34, 23, 12]);
    assert_eq!(i64s(&f.0), [12, 23, 34, 45, 56]);
    assert_eq!(i64s(&t.1), [306, 205, 104]);
    assert_eq!(i64s(&f.1), [104, 205, 306]);
    for (back, expected) in [(true, &t), (false, &f)] {
        let got = programs::pairs(seq.view(), back).unwrap();
        assert_eq!(&got, expected, "go_backwards = {back}");
        second_opinion(
            programs::SOURCE,
            "pairs",
            vec![Value::from(seq.clone()), Value::from(back)],
            vec![Value::from(got.0), Value::from(got.1)],
        );
    }
}

#[test]
fn recurrent_outputs_and_unequal_sequences_agree_with_the_literal_directions() {
    let u = Array1::from_iter(1i64..=6);
    let init = array![7i64, 8];
    let v = array![4i64, 5, 6];
    let t = programs::recurrences_t(u.view(), init.view(), v.view()).unwrap();
    let f = programs::recurrences_f(u.view(), init.view(), v.view()).unwrap();
    assert_eq!(i64s(&t.2), [606, 505, 404]);
    assert_eq!(i64s(&f.2), [104, 205, 306]);
    assert_ne!(t.0, f.0);
    assert_ne!(t.1, f.1);
    for (back, expected) in [(true, &t), (false, &f)] {
        let got = programs::recurrences(u.view(), init.view(), v.view(), back).unwrap();
        assert_eq!(&got, expected, "go_backwards = {back}");
        second_opinion(
            programs::SOURCE,
            "recurrences",
            vec![
                Value::from(u.clone()),
                Value::from(init.clone()),
                Value::from(v.clone()),
                Value::from(back),
            ],
            vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
        );
    }
}

#[test]
fn n_steps_matrix_rows_and_reduce_agree_with_the_literal_directions() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let m = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let t = programs::counted_t(v.view(), m.view(), 3).unwrap();
    let f = programs::counted_f(v.view(), m.view(), 3).unwrap();
    assert_eq!(t.0.to_vec(), [6.0, 11.0, 15.0]);
    assert_eq!(f.0.to_vec(), [1.0, 3.0, 6.0]);
    assert_eq!(t.2, 654321.0);
    assert_eq!(f.2, 123456.0);
    for (back, expected) in [(true, &t), (false, &f)] {
        let got = programs::counted(v.view(), m.view(), 3, back).unwrap();
        assert_eq!(&got, expected, "go_backwards = {back}");
        second_opinion(
            programs::SOURCE,
            "counted",
            vec![
                Value::from(v.clone()),
                Value::from(m.clone()),
                Value::from(3i64),
                Value::from(back),
            ],
            vec![Value::from(got.0), Value::from(got.1), Value::from(got.2)],
        );
    }
    // n_steps beyond the sequence: the same `Err` either way.
    for back in [true, false] {
        let e = programs::counted(v.view(), m.view(), 7, back).unwrap_err();
        assert_eq!(
            e.to_string(),
            programs::counted_t(v.view(), m.view(), 7)
                .unwrap_err()
                .to_string()
        );
    }
}

#[test]
fn a_computed_flag_and_a_flag_read_by_an_inner_scan() {
    let m = array![[1i64, 2, 3], [4, 5, 6]];
    for (n, back) in [(2usize, true), (3, false), (3, true), (1, false)] {
        let got = programs::computed(m.view(), n, back).unwrap();
        let outer = if n > 2 { [3, 32, 321] } else { [1, 12, 123] };
        assert_eq!(i64s(&got.0), outer, "n = {n}");
        let inner = if back {
            array![[1, 12, 123], [4, 45, 456]]
        } else {
            array![[3, 32, 321], [6, 65, 654]]
        };
        assert_eq!(got.1, inner, "back = {back}");
        second_opinion(
            programs::SOURCE,
            "computed",
            vec![
                Value::from(m.clone()),
                Value::from(n as i64),
                Value::from(back),
            ],
            vec![Value::from(got.0), Value::from(got.1)],
        );
    }
}
